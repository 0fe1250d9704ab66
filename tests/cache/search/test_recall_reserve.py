"""Issue 16, session first for the tail of a list: the last places of every ten go to the
best-scored sessions the list does not hold yet (``rerank.session_reserve``,
``RecallParams.session_reserve``), on small fixtures, and recall still answering with the
stage broken."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from brainfs.cache.search import ordering
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.rerank import session_key, session_reserve
from brainfs.cache.search.retrieval import RecallParams, retrieve
from brainfs.tools.locomo import _content_hash, conversation_tree
from helpers import BowEmbedder

NOW = _dt.datetime(2024, 6, 1, tzinfo=_dt.timezone.utc)
BOW = BowEmbedder(dim=64, name="test-bow")
#: only this stage acts: no neighbours, speaker boost, extra query or spread
OFF = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                   session_reserve=0, date_weight=0.0)
ON = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                  session_reserve=2, date_weight=0.0)


def _paths(spec: dict[str, list[int]]) -> dict[int, str]:
    return {c: f"sessions/{s}/transcript.md" for s, ids in spec.items() for c in ids}


@pytest.mark.unit
def test_reserved_places_go_to_the_best_sessions_not_yet_listed() -> None:
    # session a holds the ten best turns; b's two turns sum higher than c's one better turn
    paths = _paths({"a": list(range(1, 13)), "b": [20, 21], "c": [30]})
    scores = {c: 1.0 - c / 100 for c in range(1, 13)} | {20: 0.5, 21: 0.45, 30: 0.6}
    order = sorted(scores, key=lambda c: -scores[c])
    assert session_reserve(order, scores, paths, 0, 3, 10) == order[:10]  # off
    got = session_reserve(order, scores, paths, 2, 3, 10)
    assert got[:8] == order[:8]  # the head is left as ranked
    assert got[8:] == [20, 30]  # b (0.95) before c (0.6); each by its best turn
    # one session's score is its best `top` turns: with top 1, c's 0.6 beats b's 0.5
    assert session_reserve(order, scores, paths, 2, 1, 10)[8:] == [30, 20]
    # the same rule for every prefix: a list of 20 begins with the list of 10
    assert session_reserve(order, scores, paths, 2, 3, 20)[:10] == got
    assert session_reserve(order, scores, paths, 2, 3, 5) == order[:5]  # no reserved place yet


@pytest.mark.unit
def test_reserved_places_fall_back_to_the_order_when_every_session_is_listed() -> None:
    paths = _paths({"a": [1, 2, 3, 4, 5, 6], "b": [7, 8, 9, 10, 11, 12]})
    scores = {c: 1.0 - c / 100 for c in range(1, 13)}
    order = sorted(scores)
    got = session_reserve(order, scores, paths, 3, 3, 12)
    assert got == order[:12] and len(set(got)) == 12  # both sessions held: nothing to reserve
    assert session_reserve([], {}, {}, 2, 3, 10) == []
    # a summary beside a transcript is the same session: it takes no reserved place
    paths[13] = "sessions/a/summary.md"
    assert session_key(paths[13]) == session_key(paths[1])


def _sample() -> dict:
    """Ines's pets: session 1 talks of her cats all along, sessions 2 and 3 each mention a
    pet once among other things."""
    cats = [f"Ines here: my pets Pimenta and Miso {x} today, pets are the best." for x in
            ("slept", "purred", "jumped", "hid", "ate", "played", "meowed", "ran", "sat",
             "climbed", "yawned")]
    s1 = [{"speaker": "Ines", "dia_id": f"D1:{i}", "text": t} for i, t in enumerate(cats, 1)]
    s2 = [{"speaker": "Ines", "dia_id": "D2:1", "text": "We took a long train trip up the coast, stopped at many small "
                                                   "towns along the way, and I got a pet turtle."}]
    s3 = [{"speaker": "Ines", "dia_id": "D3:1", "text": "The garden needs work, the roses are dying, the fence "
                                                   "is broken, and my pet hamster escaped."},
          {"speaker": "Tomas", "dia_id": "D3:2", "text": "I ran ten kilometres."}]
    return {"sample_id": "pets", "conversation": {
        "speaker_a": "Ines", "speaker_b": "Tomas",
        "session_1_date_time": "2:00 pm on 3 March, 2024", "session_1": s1,
        "session_2_date_time": "2:00 pm on 3 April, 2024", "session_2": s2,
        "session_3_date_time": "2:00 pm on 3 May, 2024", "session_3": s3}, "qa": []}


@pytest.fixture()
def pets_index(tmp_path: Path):
    tree = conversation_tree(_sample())
    ix = SearchIndex(tmp_path / "pets.db")
    ix.refresh([(p, _content_hash(t)) for p, t in tree.items()], lambda p: tree[p].encode(), BOW)
    yield ix
    ix.close()


def _sessions(res) -> set[str]:
    return {session_key(c.path) for c in res.cards}


@pytest.mark.unit
def test_recall_reserves_the_tail_of_a_list_question_for_new_sessions(pets_index: SearchIndex) -> None:
    q = "What pets does Ines have?"
    plain = retrieve(pets_index, q, k=10, embedder=BOW, now=NOW, params=OFF)
    on = retrieve(pets_index, q, k=10, embedder=BOW, now=NOW, params=ON)
    assert len(plain.cards) == len(on.cards) == 10
    assert len(_sessions(plain)) < 3  # the cat session fills the list
    assert _sessions(on) == {session_key(c.path) for c in on.cards} and len(_sessions(on)) == 3
    assert [c.ref for c in on.cards[:8]] == [c.ref for c in plain.cards[:8]]
    assert {c.anchor for c in on.cards[8:]} == {"D2:1", "D3:1"}
    assert "new sessions" in on.why and "new sessions" not in plain.why
    # a question for one fact is not a list: nothing reserved
    one = retrieve(pets_index, "Where is Pimenta sleeping?", k=10, embedder=BOW, now=NOW, params=ON)
    assert "new sessions" not in one.why


def _broken(*_a, **_k):
    raise RuntimeError("stage broken for the test")


@pytest.mark.unit
@pytest.mark.parametrize("attr,said", [
    ("session_reserve", "session reserve skipped"),
    ("is_list_question", "session spread skipped"),
])
def test_recall_answers_with_the_stage_broken(pets_index: SearchIndex, monkeypatch,
                                              attr: str, said: str) -> None:
    q = "What pets does Ines have?"
    plain = retrieve(pets_index, q, k=10, embedder=BOW, now=NOW, params=OFF)
    monkeypatch.setattr(ordering, attr, _broken)
    res = retrieve(pets_index, q, k=10, embedder=BOW, now=NOW, params=ON)
    assert res.mode == "hybrid" and said in res.why, res.why
    assert [c.ref for c in res.cards] == [c.ref for c in plain.cards]  # as if off


@pytest.mark.unit
def test_the_chain_still_degrades_with_the_stage_on(pets_index: SearchIndex) -> None:
    q = "What pets does Ines have?"
    dense = retrieve(pets_index, q, k=10, embedder=BOW, now=NOW, params=ON, mode="dense")
    sparse = retrieve(pets_index, q, k=10, embedder=None, now=NOW, params=ON)
    recent = retrieve(pets_index, "", k=10, embedder=None, now=NOW, params=ON)
    assert (dense.mode, sparse.mode, recent.mode) == ("dense", "sparse", "recent")
    assert len(_sessions(dense)) == 3 and "new sessions" in sparse.why
    assert "new sessions" not in recent.why and len(recent.cards) == 10
