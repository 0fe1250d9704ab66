"""Issue 16's second round of recall stages, each on a small fixture: the question without
the people it names (``querysplit.without_names``, an extra query), list questions
(``querysplit.is_list_question``) spread over sessions (``rerank.session_spread``), and the
degradation chain with each of them unavailable."""

from __future__ import annotations

import datetime as _dt

import pytest

from brainfs.cache.search import candidates, ordering
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.querysplit import is_list_question, without_names
from brainfs.cache.search.rerank import session_key, session_spread
from brainfs.cache.search.retrieval import RecallParams, retrieve
from helpers import BowEmbedder

NOW = _dt.datetime(2024, 5, 3, tzinfo=_dt.timezone.utc)
BOW = BowEmbedder(dim=64, name="test-bow")
#: every stage of this round on, the others off, so that what acts is known
ON = RecallParams(neighbour=0.0, speaker=0.0, mmr_lambda=1.0, unnamed_weight=1.0, list_spread=1.0)
OFF = RecallParams(neighbour=0.0, speaker=0.0, mmr_lambda=1.0, unnamed_weight=0.0, list_spread=0.0)



# ---------------------------------------------------------------- the question without names

@pytest.mark.unit
@pytest.mark.parametrize("question,names,out", [
    ("What states has Maria vacationed at?", {"Maria", "John"}, "What states has vacationed at?"),
    ("What are Maria's dogs' names?", {"Maria"}, "What are dogs' names?"),
    ("Who is Tim and John's favorite player?", {"Tim", "John"}, "Who is and favorite player?"),
    ("what did jean-luc picard say", {"Jean-Luc Picard"}, "what did say"),
    ("Where did Mara Lind move from, Mara?", {"Mara Lind"}, "Where did move from,?"),
])
def test_without_names_drops_only_the_people(question: str, names: set[str], out: str) -> None:
    assert without_names(question, names) == out


@pytest.mark.unit
@pytest.mark.parametrize("question,names", [
    ("Where is the course in Porto?", {"Ines", "Tomas"}),  # names no one: nothing to add
    ("Ines and Tomas?", {"Ines", "Tomas"}),  # nothing but names left
    ("What did Ines do?", set()),
    ("", {"Ines"}),
    ("Marias garden", {"Maria"}),  # a longer word is not the name
])
def test_without_names_gives_nothing_when_nothing_is_removed_or_left(question: str,
                                                                     names: set[str]) -> None:
    assert without_names(question, names) == ""


@pytest.mark.unit
def test_recall_adds_the_unnamed_query_for_a_speaker_only(mini_index: SearchIndex) -> None:
    q = "What did Ines make at the pottery workshop?"
    on = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=ON)
    assert on.mode == "hybrid" and "without Ines" in on.why, on.why
    assert any({"dense:unnamed", "bm25:unnamed"} & set(c.ranks) for c in on.cards)
    assert any("unnamed" in c.reason for c in on.cards)
    off = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=OFF)
    assert "without" not in off.why
    assert not any(n.endswith(":unnamed") for c in off.cards for n in c.ranks)
    # Porto and Lisbon are in capitals but speak no turn: nothing is removed
    place = retrieve(mini_index, "Where is the ceramics course, Porto or Lisbon?", k=5,
                     embedder=BOW, now=NOW, params=ON)
    assert "without" not in place.why


@pytest.mark.unit
def test_the_unnamed_query_uses_the_lists_that_answered(mini_index: SearchIndex) -> None:
    q = "What did Ines make at the pottery workshop?"
    sparse = retrieve(mini_index, q, k=5, embedder=None, now=NOW, params=ON)
    assert sparse.mode == "sparse" and "without Ines" in sparse.why
    assert all("dense:unnamed" not in c.ranks for c in sparse.cards)
    assert any("bm25:unnamed" in c.ranks for c in sparse.cards)
    dense = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=ON, mode="dense")
    assert dense.mode == "dense" and all("bm25:unnamed" not in c.ranks for c in dense.cards)


# ---------------------------------------------------------------- list questions

@pytest.mark.unit
@pytest.mark.parametrize("question", [
    "What states has Maria vacationed at?", "What pets does Ines have?",
    "How many video game tournaments has Nate won?", "What has Melanie painted?",
    "Where has Melanie camped?", "What are Maria's dogs' names?",
    "Which classical musicians does Melanie enjoy?", "What kinds of books does she read?",
    "What animal do both Nate and Joanna like?", "Did Jon and Gina start businesses?",
    "What do they have in common?", "Would Tim enjoy reading fantasy?",
    "What job might Maria pursue in the future?",
])
def test_list_questions_are_recognised(question: str) -> None:
    assert is_list_question(question)


@pytest.mark.unit
@pytest.mark.parametrize("question", [
    "What did Ines make at the pottery workshop?", "When did Ines go to the pottery workshop?",
    "How long did Tomas take for the half marathon?", "What is Caroline's relationship status?",
    "What is the name of her cat?", "What does the class focus on?", "", "x" * 5000,
])
def test_single_fact_questions_are_not_lists(question: str) -> None:
    assert not is_list_question(question)


@pytest.mark.unit
def test_session_spread_gathers_sessions_but_keeps_a_clearly_better_turn() -> None:
    paths = {1: "sessions/a/transcript.md", 2: "sessions/a/transcript.md",
             3: "sessions/a/summary.md", 4: "sessions/b/transcript.md", 5: "sessions/c/transcript.md"}
    scores = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.6, 5: 0.5}
    order = [1, 2, 3, 4, 5]
    assert session_spread(order, scores, paths, 0.0, 3) == [1, 2, 3]  # off: the order itself
    # strength 1: a's second turn is worth 0.45, its third (the summary is session a) 0.27
    assert session_spread(order, scores, paths, 1.0, 3) == [1, 4, 5]
    assert session_spread(order, scores, paths, 1.0, 5) == [1, 4, 5, 2, 3]
    # a weak spread: a's second turn (0.9 / 1.2 = 0.75) still beats b's first (0.6)
    assert session_spread(order, scores, paths, 0.2, 3) == [1, 2, 4]
    assert session_spread([], scores, paths, 1.0, 3) == []
    assert session_key(paths[3]) == session_key(paths[1])


@pytest.mark.unit
def test_recall_spreads_a_list_question_only(mini_index: SearchIndex) -> None:
    def sessions(res) -> int:
        return len({session_key(c.path) for c in res.cards})

    q = "What pets does Ines have?"
    spread = retrieve(mini_index, q, k=4, embedder=BOW, now=NOW, params=ON)
    plain = retrieve(mini_index, q, k=4, embedder=BOW, now=NOW, params=OFF)
    assert "list question" in spread.why and "list question" not in plain.why
    assert sessions(spread) >= sessions(plain)
    assert sessions(spread) == 4  # four sessions, four cards, strength 1: one each
    single = retrieve(mini_index, "How long did Tomas take for the half marathon?", k=4,
                      embedder=BOW, now=NOW, params=ON)
    assert "list question" not in single.why


# ---------------------------------------------------------------- degradation

def _broken(*_a, **_k):
    raise RuntimeError("stage broken for the test")


@pytest.mark.unit
@pytest.mark.parametrize("stage,attr,said", [
    (candidates, "without_names", "unnamed query skipped"),
    (ordering, "is_list_question", "session spread skipped"),
    (ordering, "session_spread", "session spread skipped"),
])
def test_each_new_stage_can_fail_and_recall_still_answers(mini_index: SearchIndex, monkeypatch, stage,
                                                          attr: str, said: str) -> None:
    q = "What pets does Ines have?"
    good = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=ON)
    assert good.mode == "hybrid" and len(good.cards) == 5 and said not in good.why
    monkeypatch.setattr(stage, attr, _broken)
    res = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=ON)
    assert res.mode == "hybrid" and len(res.cards) == 5
    assert said in res.why, res.why
    if attr == "without_names":  # its lists are gone with it
        assert not any(n.endswith(":unnamed") for c in res.cards for n in c.ranks)


@pytest.mark.unit
def test_the_chain_still_degrades_with_the_new_stages_on(mini_index: SearchIndex) -> None:
    q = "What pets does Ines have?"
    dense = retrieve(mini_index, q, k=5, embedder=BOW, now=NOW, params=ON, mode="dense")
    sparse = retrieve(mini_index, q, k=5, embedder=None, now=NOW, params=ON)
    recent = retrieve(mini_index, "", k=5, embedder=None, now=NOW, params=ON)
    assert (dense.mode, sparse.mode, recent.mode) == ("dense", "sparse", "recent")
    assert all(len(r.cards) == 5 for r in (dense, sparse, recent))
    assert "without" not in recent.why and "list question" not in recent.why
