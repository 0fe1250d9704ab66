"""Issue 16's third round: a candidate scored by its best sentence (``cache.search.sentences``,
``RecallParams.sentence_weight``), on small fixtures: the splitting, the max over sentences,
the memo, the stage inside recall (named in ``why``), and recall when it fails or cannot run."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search import candidates
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.retrieval import RecallParams, retrieve
from brainfs.cache.search.sentences import (MAX_SENTENCES, SentenceMemo, best_sentence_scores,
                                            sentences)
from brainfs.tools.locomo import _content_hash
from helpers import BowEmbedder

NOW = _dt.datetime(2024, 5, 3, tzinfo=_dt.timezone.utc)
BOW = BowEmbedder(dim=256, name="test-bow")
#: only this round's stage differs between ON and OFF
OFF = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                   sentence_weight=0.0)
ON = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                  sentence_weight=1.0, sentence_pool=20)

#: The answer ("joined a nearby church choir") sits in the middle of a long turn about other
#: things, so the turn's vector is far from the question; a short turn of no use (D2:2)
#: shares as many of the question's words and is nearer as a whole.
TREE = {
    "sessions/s1/transcript.md": "---\nsession: s1\ndate: 2024-04-01T10:00:00\n---\n\n"
    "[D1:1] Maria: Hey John, it has been a long week with the kids, the broken car, the "
    "late shifts at the bakery and the rain every single day. Since last time I joined a "
    "nearby church choir. How did the campaign launch go on Friday evening downtown?\n\n"
    "[D1:2] John: The campaign went fine, thanks for asking.\n\n"
    "[D1:3] Maria: My friends say the bakery shifts are too long.\n",
    "sessions/s2/transcript.md": "---\nsession: s2\ndate: 2024-04-08T10:00:00\n---\n\n"
    "[D2:1] John: The stadium was loud before the game.\n\n"
    "[D2:2] Maria: I walked past the church choir rehearsal on my way to the market.\n\n"
    "[D2:3] John: Where did you buy those shoes?\n\n"
    "[D2:4] Maria: At the mall near the station, they were on sale.\n",
}
QUESTION = "Which church choir did Maria join?"


@pytest.fixture()
def index(tmp_path: Path):
    ix = SearchIndex(tmp_path / "s.db")
    ix.refresh([(p, _content_hash(t)) for p, t in TREE.items()], lambda p: TREE[p].encode(), BOW)
    yield ix
    ix.close()


class CountingEmbedder:
    """BOW that counts the texts it is asked to embed."""

    name = BOW.name

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str]):
        self.texts += list(texts)
        return BOW.embed(texts)


# ---------------------------------------------------------------- splitting

@pytest.mark.unit
def test_sentences_of_a_turn_keep_the_speaker_and_drop_fragments() -> None:
    text = ("Maria (8 May 2023): Hey John! I joined a nearby church. It has been great so far. "
            "Wow! [shared image: a photo of a choir singing in a church]")
    assert sentences(text, "Maria") == [
        "Maria: I joined a nearby church.",
        "Maria: It has been great so far.",
        "Maria: [shared image: a photo of a choir singing in a church]"]


@pytest.mark.unit
@pytest.mark.parametrize("text,speaker,out", [
    ("", None, []),
    ("   ", "Maria", []),
    ("Maria (1 May 2023): Thanks!", "Maria", ["Maria: Thanks!"]),  # no sentence long enough: itself
    ("A note about the budget for the spring trip.", None,
     ["A note about the budget for the spring trip."]),
    # a page line that looks like "Name: …" but is not the chunk's speaker stays whole
    ("Budget: the spring trip costs 400 euros in total.", "Maria",
     ["Budget: the spring trip costs 400 euros in total."]),
])
def test_sentences_edge_cases(text: str, speaker: str | None, out: list[str]) -> None:
    assert sentences(text, speaker) == out


@pytest.mark.unit
def test_sentences_are_capped() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(3 * MAX_SENTENCES))
    got = sentences(text)
    assert len(got) == MAX_SENTENCES and got[0] == "Sentence number 0 is here."


# ---------------------------------------------------------------- best sentence and memo

@pytest.mark.unit
def test_the_best_sentence_beats_the_whole_turn() -> None:
    text = TREE["sessions/s1/transcript.md"].split("[D1:1] ")[1].split("\n")[0]
    rows = {1: {"text": text, "speaker": "Maria"}}
    q = BOW.embed([QUESTION])[0]
    best, made = best_sentence_scores(rows, [1, 2], q, BOW, SentenceMemo())
    whole = float(BOW.embed([text])[0] @ q)
    assert set(best) == {1}  # id 2 has no row: skipped
    assert made == len(sentences(text, "Maria")) == 3
    assert best[1] > whole + 0.1


@pytest.mark.unit
def test_the_memo_embeds_each_sentence_once_and_stays_bounded() -> None:
    memo = SentenceMemo(size=3)
    emb = CountingEmbedder()
    vecs, made = memo.vectors(["a b c", "d e f", "a b c"], emb)
    assert made == 2 and emb.texts == ["a b c", "d e f"]
    assert np.allclose(vecs[0], vecs[2])
    _, made = memo.vectors(["d e f", "g h i", "j k l"], emb)
    assert made == 2 and len(memo._vecs) == 3
    assert (emb.name, "a b c") not in memo._vecs  # the least recently used went first
    _, made = memo.vectors(["d e f"], emb)
    assert made == 0


@pytest.mark.unit
def test_the_memo_keeps_models_apart() -> None:
    memo = SentenceMemo()
    other = BowEmbedder(dim=16, name="other-bow")
    a, _ = memo.vectors(["the same sentence here"], BOW)
    b, made = memo.vectors(["the same sentence here"], other)
    assert made == 1 and a[0].shape == (256,) and b[0].shape == (16,)


# ---------------------------------------------------------------- inside recall

def _rank(res, anchor: str) -> int:
    return next(i for i, c in enumerate(res.cards, 1) if c.anchor == anchor)


@pytest.mark.unit
def test_recall_ranks_a_turn_by_its_best_sentence(index: SearchIndex) -> None:
    off = retrieve(index, QUESTION, k=7, embedder=BOW, now=NOW, params=OFF, mode="dense")
    on = retrieve(index, QUESTION, k=7, embedder=BOW, now=NOW, params=ON, mode="dense")
    assert "best sentence of" in on.why and "best sentence" not in off.why
    assert not any("dense:sentences" in c.ranks for c in off.cards)
    assert on.cards[0].anchor == "D1:1" and on.cards[0].ranks["dense:sentences"] == 1
    assert "dense:sentences #1" in on.cards[0].reason
    assert _rank(on, "D1:1") < _rank(off, "D1:1")
    hybrid = retrieve(index, QUESTION, k=7, embedder=BOW, now=NOW, params=ON)
    assert hybrid.mode == "hybrid" and "best sentence of" in hybrid.why


@pytest.mark.unit
def test_the_pool_bounds_what_is_embedded(index: SearchIndex) -> None:
    emb = CountingEmbedder()
    p = RecallParams(**{**ON.__dict__, "sentence_pool": 2})
    # a fresh memo, so that every sentence of the pool is embedded now
    import brainfs.cache.search.sentences as S
    saved, S.MEMO = S.MEMO, SentenceMemo()
    try:
        res = retrieve(index, QUESTION, k=5, embedder=emb, now=NOW, params=p)
    finally:
        S.MEMO = saved
    assert "best sentence of 2" in res.why
    ranked = [c for c in res.cards if "dense:sentences" in c.ranks]
    assert len(ranked) <= 2
    # the question and the pool's sentences, nothing else
    assert len(emb.texts) <= 1 + 2 * 3


# ---------------------------------------------------------------- degradation

def _broken(*_a, **_k):
    raise RuntimeError("stage broken for the test")


@pytest.mark.unit
def test_a_failing_sentence_stage_is_skipped_and_named(index: SearchIndex, monkeypatch) -> None:
    monkeypatch.setattr(candidates, "best_sentence_scores", _broken)
    res = retrieve(index, QUESTION, k=5, embedder=BOW, now=NOW, params=ON)
    assert res.mode == "hybrid" and len(res.cards) == 5
    assert "sentence stage skipped (stage broken for the test)" in res.why
    assert not any("dense:sentences" in c.ranks for c in res.cards)


@pytest.mark.unit
def test_the_chain_still_degrades_with_the_sentence_stage_on(index: SearchIndex) -> None:
    sparse = retrieve(index, QUESTION, k=5, embedder=None, now=NOW, params=ON)
    asked = retrieve(index, QUESTION, k=5, embedder=BOW, now=NOW, params=ON, mode="sparse")
    recent = retrieve(index, "", k=5, embedder=BOW, now=NOW, params=ON)
    assert (sparse.mode, asked.mode, recent.mode) == ("sparse", "sparse", "recent")
    assert len(recent.cards) == 5
    for r in (sparse, asked, recent):
        assert r.cards and "sentence" not in r.why
        assert not any("dense:sentences" in c.ranks for c in r.cards)
