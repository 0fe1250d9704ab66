"""The stages of recall added for multi-hop, temporal and session-level questions (issue 16):
question splitting, relative dates resolved into the index, alias expansion, neighbours,
session-first ranking and diversification — each on a small fixture, and the degradation
chain with each stage unavailable."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search import candidates, ordering
from brainfs.cache.search.aliases import expansions
from brainfs.cache.search.dates import date_notes, resolve
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.indexschema import SCHEMA_VERSION
from brainfs.tools.locomo import _content_hash, conversation_tree
from brainfs.cache.search.querysplit import split_question
from brainfs.cache.search.rerank import mmr, propagate_neighbours, session_cap, session_prior
from brainfs.cache.search.retrieval import RecallParams, retrieve
from helpers import LOCOMO_MINI as MINI
from helpers import BowEmbedder

NOW = _dt.datetime(2024, 5, 3, tzinfo=_dt.timezone.utc)



# ---------------------------------------------------------------- question splitting

@pytest.mark.unit
@pytest.mark.parametrize("question,parts", [
    ("What subject have Caroline and Melanie both painted?",
     ["What subject have Caroline painted?", "What subject have Melanie painted?"]),
    ("Which organisations did she meet in Sapporo and in Tallinn",
     ["Which organisations did she meet in Sapporo", "Which organisations did she meet in Tallinn"]),
    ("Who is Tim and John's favorite basketball player?",
     ["Who is Tim's favorite basketball player?", "Who is John's favorite basketball player?"]),
    ("who was her manager before the atlas", ["who was her manager", "the atlas"]),
    ("What schools did John play basketball in and how many years was he with his team?",
     ["What schools did John play basketball in", "how many years was he with his team?"]),
    ("What people has Maria met and helped while volunteering?",
     ["What people has Maria met while volunteering", "What people has Maria helped while volunteering"]),
])
def test_split_question_covers_each_part(question: str, parts: list[str]) -> None:
    assert split_question(question) == parts


@pytest.mark.unit
@pytest.mark.parametrize("question", ["What books has Melanie read?", "When did Ines adopt Canela?",
                                      "", "and", "?", "x" * 5000, "What and or and?"])
def test_split_question_leaves_single_questions_alone(question: str) -> None:
    assert split_question(question) == []


# ---------------------------------------------------------------- dates

@pytest.mark.unit
def test_relative_dates_resolve_against_the_session_day() -> None:
    sunday = _dt.date(2024, 3, 3)
    assert resolve("yesterday", sunday) == "2 March 2024"
    assert resolve("last weekend", _dt.date(2024, 4, 12)) == "6–7 April 2024"  # a Friday
    assert resolve("last weekend", sunday) == "24–25 February 2024"  # said on a Sunday
    assert resolve("last week", _dt.date(2024, 3, 20)) == "week of 11 March 2024"
    assert resolve("two weeks ago", _dt.date(2024, 3, 20)) == "week of 4 March 2024"
    assert resolve("3 days ago", sunday) == "29 February 2024"
    assert resolve("last month", _dt.date(2024, 1, 15)) == "December 2023"
    assert resolve("next month", _dt.date(2024, 12, 2)) == "January 2025"
    assert resolve("on Saturday", _dt.date(2024, 5, 2)) == "27 April 2024"  # a Thursday
    assert resolve("last year", sunday) == "2023"
    assert resolve("someday", sunday) is None
    assert date_notes("No dates here.", "2024-03-03") == ""
    assert date_notes("yesterday", None) == "" and date_notes("yesterday", "garbage") == ""
    assert date_notes("Yesterday and yesterday again, last week", "2024-03-03T14:00:00") == \
        "[yesterday: 2 March 2024; last week: week of 19 February 2024]"


@pytest.mark.unit
def test_dates_are_resolved_into_the_index(mini_index: SearchIndex) -> None:
    rows = mini_index.chunks_by_id(range(1, 100))
    d31 = next(r for r in rows.values() if r["anchor"] == "D3:1")
    assert d31["text"].endswith("[last weekend: 6–7 April 2024]")
    # a question naming the date finds the turn that said "last weekend", keyword search alone
    res = retrieve(mini_index, "What happened on 6 April 2024?", k=3, mode="sparse", now=NOW)
    assert res.cards[0].anchor == "D3:1"
    assert mini_index.meta("schema_version") == str(SCHEMA_VERSION)


@pytest.mark.unit
def test_an_index_of_the_older_format_is_read_then_rebuilt(tmp_path: Path, caplog) -> None:
    tree = conversation_tree(json.loads(MINI.read_text())[0])
    files = [(p, _content_hash(t)) for p, t in tree.items()]
    ix = SearchIndex(tmp_path / "old.db")
    ix.refresh(files, lambda p: tree[p].encode(), None)
    # make it look like format 1: no date notes, version 1
    with ix.conn:
        ix.conn.execute("UPDATE chunks SET text = substr(text, 1, instr(text, ' [') - 1) "
                        "WHERE text LIKE '% [%: %]'")
        ix.conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    ix.close()
    with caplog.at_level("WARNING"):
        ix = SearchIndex(tmp_path / "old.db")
    assert "index format 1 predates resolved dates" in caplog.text
    # readable as it is
    assert retrieve(ix, "pottery workshop", k=2, mode="sparse", now=NOW).cards
    caplog.clear()
    with caplog.at_level("WARNING"):
        st = ix.refresh(files, lambda p: tree[p].encode(), None)
    assert st["files_indexed"] == len(files)  # every file re-read although none changed
    assert f"updating the index from format 1 to {SCHEMA_VERSION}" in caplog.text
    assert ix.meta("schema_version") == str(SCHEMA_VERSION)
    assert retrieve(ix, "What happened on 6 April 2024?", k=1, mode="sparse", now=NOW).cards[0].anchor == "D3:1"
    assert ix.refresh(files, lambda p: tree[p].encode(), None)["files_indexed"] == 0
    ix.close()


# ---------------------------------------------------------------- aliases

@pytest.mark.unit
def test_alias_expansion_names_the_other_names() -> None:
    groups = [["Melanie Ortiz", "Mel", "Melanie"], ["Atlas Mapping Project", "the atlas", "AMP"]]
    assert expansions("what did Mel paint?", groups) == ["Melanie Ortiz", "Melanie"]
    assert expansions("who ran the atlas before May", groups) == ["Atlas Mapping Project", "AMP"]
    assert expansions("nothing to see", groups) == []
    assert expansions("a", [["a", "b"]]) == []  # a one-letter name matches nothing


@pytest.mark.unit
def test_aliases_from_wiki_pages_expand_the_query(tmp_path: Path) -> None:
    files = {
        "knowledge/mel.md": "---\ntitle: Melanie Ortiz\naliases: [Mel]\n---\n# Melanie Ortiz\n\nA friend.\n",
        "notes/a.md": "---\ntitle: Pottery\n---\nMelanie Ortiz made a blue bowl at the pottery class.\n",
        "notes/b.md": "---\ntitle: Other\n---\nSomebody else wants to make a bowl too.\n",
    }
    ix = SearchIndex(tmp_path / "a.db")
    ix.refresh([(p, _content_hash(t)) for p, t in files.items()], lambda p: files[p].encode(), None)
    try:
        assert ix.alias_groups() == [["Melanie Ortiz", "Mel"]]
        with_aliases = retrieve(ix, "what did Mel make", k=3, mode="sparse", now=NOW)
        without = retrieve(ix, "what did Mel make", k=3, mode="sparse", now=NOW,
                           params=RecallParams(aliases=False))
        assert "notes/a.md" in [c.path for c in with_aliases.cards]
        assert without.mode == "sparse" and [c.path for c in without.cards] == ["notes/b.md"]
        assert "aliases: Melanie Ortiz" in with_aliases.why
        assert "aliases" not in without.why
        # a page removed takes its names with it
        del files["knowledge/mel.md"]
        ix.refresh([(p, _content_hash(t)) for p, t in files.items()], lambda p: files[p].encode(), None)
        assert ix.alias_groups() == []
    finally:
        ix.close()


# ---------------------------------------------------------------- rerank stages

@pytest.mark.unit
def test_neighbours_lend_a_share_of_their_score() -> None:
    scores = {1: 1.0, 2: 0.1, 5: 0.5}
    out = propagate_neighbours(scores, {1: [2, 3], 5: [4, 6]}, 0.5)
    assert out == {1: 1.0, 2: 0.6, 3: 0.5, 5: 0.5, 4: 0.25, 6: 0.25}
    assert propagate_neighbours(scores, {1: [2]}, 0.0) == scores


@pytest.mark.unit
def test_session_first_ranks_turns_of_the_best_sessions_up() -> None:
    # session a: three fair matches; session b: one good one and nothing else
    scores = {1: 0.060, 2: 0.055, 3: 0.050, 10: 0.080}
    paths = {1: "a", 2: "a", 3: "a", 10: "b"}
    plain = sorted(scores, key=lambda c: -scores[c])
    assert plain[0] == 10
    out = session_prior(scores, paths, weight=5.0, top=3, k=10)
    assert sorted(out, key=lambda c: -out[c])[:3] == [1, 2, 3]
    gated = session_prior(scores, paths, weight=0.0, top=3, k=10, gate=1)
    assert set(gated) == {1, 2, 3}
    assert session_prior(scores, paths, 0.0, 3, 10) == scores


@pytest.mark.unit
def test_mmr_and_session_cap_spread_the_list() -> None:
    v = {1: np.array([1.0, 0.0]), 2: np.array([1.0, 0.0]), 3: np.array([0.0, 1.0])}
    scores = {1: 1.0, 2: 0.9, 3: 0.8}
    assert mmr([1, 2, 3], scores, v, 1.0, 2) == [1, 2]  # λ = 1: relevance only
    assert mmr([1, 2, 3], scores, v, 0.5, 2) == [1, 3]  # the duplicate of 1 waits
    paths = {1: "a", 2: "a", 3: "b", 4: "a"}
    assert session_cap([1, 2, 4, 3], paths, 2, 3) == [1, 2, 3]
    assert session_cap([1, 2, 4], paths, 1, 3) == [1, 2, 4]  # refilled when nothing else


@pytest.mark.unit
def test_split_question_finds_both_people_through_recall(mini_index: SearchIndex) -> None:
    q = "What have Ines and Tomas both painted?"
    on = retrieve(mini_index, q, k=3, embedder=BowEmbedder(dim=64, name="test-bow"), now=NOW,
                  params=RecallParams(split_weight=1.0))
    assert "split into 2" in on.why
    assert any("sub-query list" in c.reason for c in on.cards)
    off = retrieve(mini_index, q, k=3, embedder=BowEmbedder(dim=64, name="test-bow"), now=NOW)
    assert "split" not in off.why and not any("sub-query" in c.reason for c in off.cards)


# ---------------------------------------------------------------- degradation

# list_spread off: the question below asks for a list, which would be spread over sessions
# instead of MMR (that stage's failure is tested in test_recall_unnamed_spread.py)
ALL_ON = RecallParams(split_weight=0.5, neighbour=0.3, session_weight=0.5, mmr_lambda=0.7,
                      list_spread=0.0)


def _broken(*_a, **_k):
    raise RuntimeError("stage broken for the test")


@pytest.mark.unit
@pytest.mark.parametrize("target,attr,said", [
    (candidates, "split_question", "question splitting failed"),
    (SearchIndex, "alias_groups", "alias expansion failed"),
    (SearchIndex, "neighbour_ids", "neighbours skipped"),
    (ordering, "session_prior", "session-first skipped"),
    (SearchIndex, "vectors", "mmr skipped"),
])
def test_each_stage_can_fail_and_recall_still_answers(mini_index: SearchIndex, monkeypatch,
                                                      target, attr, said) -> None:
    q = "What have Ines and Tomas both painted?"
    good = retrieve(mini_index, q, k=5, embedder=BowEmbedder(dim=64, name="test-bow"), now=NOW, params=ALL_ON)
    assert good.mode == "hybrid" and len(good.cards) == 5
    monkeypatch.setattr(target, attr, _broken)
    res = retrieve(mini_index, q, k=5, embedder=BowEmbedder(dim=64, name="test-bow"), now=NOW, params=ALL_ON)
    assert res.mode == "hybrid" and len(res.cards) == 5
    assert said in res.why, res.why


@pytest.mark.unit
def test_the_chain_still_degrades_with_every_stage_on(mini_index: SearchIndex) -> None:
    q = "What have Ines and Tomas both painted?"
    dense = retrieve(mini_index, q, k=5, embedder=BowEmbedder(dim=64, name="test-bow"), now=NOW, params=ALL_ON, mode="dense")
    sparse = retrieve(mini_index, q, k=5, embedder=None, now=NOW, params=ALL_ON)
    recent = retrieve(mini_index, "", k=5, embedder=None, now=NOW, params=ALL_ON)
    assert (dense.mode, sparse.mode, recent.mode) == ("dense", "sparse", "recent")
    assert all(len(r.cards) == 5 for r in (dense, sparse, recent))
    assert "no embedder" in sparse.why


@pytest.mark.unit
def test_a_session_summary_counts_for_its_transcript() -> None:
    from brainfs.cache.search.rerank import session_key

    assert session_key("sessions/2024-05-01-kyoto/transcript.md") == "sessions/2024-05-01-kyoto"
    assert session_key("sessions/2024-05-01-kyoto/summary.md") == "sessions/2024-05-01-kyoto"
    assert session_key("knowledge/kyoto.md") == "knowledge/kyoto.md"
    # the summary of session a matches best; a's turns then outrank b's stray match
    scores = {1: 0.09, 2: 0.05, 3: 0.06}
    paths = {1: "sessions/a/summary.md", 2: "sessions/a/transcript.md", 3: "sessions/b/transcript.md"}
    out = session_prior(scores, paths, weight=1.0, top=1, k=5)
    assert out[2] > out[3]
    assert session_prior(scores, {**paths, 1: "knowledge/a.md"}, weight=1.0, top=1, k=5)[2] < \
        session_prior(scores, {**paths, 1: "knowledge/a.md"}, weight=1.0, top=1, k=5)[3]
