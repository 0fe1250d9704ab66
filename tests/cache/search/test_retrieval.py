"""Search index + hybrid recall: sanitization, fusion, degradation, cards, synthesis."""

from __future__ import annotations

import datetime as dt
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search import fusion
from brainfs.cache.search.cards import (Card, RecallResult, freshness_label, render_synthesis,
                                        truncate)
from brainfs.cache.search.citations import cited_sources
from brainfs.cache.search.fusion import adjust_factor, rrf
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.queryterms import fts_query, query_terms
from brainfs.cache.search.retrieval import RecallParams, retrieve

NOW = dt.datetime(2024, 6, 1, 12, 0, tzinfo=dt.timezone.utc)


class FakeEmbedder:
    """Tiny deterministic bag-of-words hashing embedder, for plumbing tests only (it knows
    no meaning; quality is tested with the real model below)."""

    name = "test-fake-bow"
    dim = 32

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
            out[i, 0] += 1e-3  # never all-zero
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class BrokenEmbedder(FakeEmbedder):
    name = "test-fake-bow"  # same space as the index, so only the call fails

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1:
            raise RuntimeError("model crashed")
        return super().embed(texts)


TREE: dict[str, str] = {
    "sessions/s1/transcript.md": (
        "---\nsession: s1\ndate: 2024-05-20T09:00:00\nparticipants: [Mara, Bot]\n---\n\n"
        "[D1:1] Mara: I adopted a dog last weekend.\n\n"
        "[D1:2] Bot: What breed is the dog?\n\n"
        "[D1:3] Mara: A border collie named Pixel.\n"),
    "knowledge/kyoto.md": (
        "---\ntitle: Kyoto trip\ntype: project\nupdated: 2024-05-25\nconfidence: 0.9\n"
        "sources:\n  - sessions/s1/transcript.md#D1:1\n  - sessions/s2/transcript.md#D2:4\n---\n"
        "# Kyoto trip\n\nMara met three organisations in Kyoto [cite:2].\n\n"
        "## Orgs\n\nThe Kyoto Design Lab and the city tourism office [cite:1].\n"),
    "notes/pets/dog.md": (
        "---\ntype: preference\nscope: personal\nconfidence: 0.4\ncreated: 2022-01-01\n---\n"
        "Mara prefers dog parks over beaches.\n"),
    "GUIDE.md": "Always answer in English.\n\nKeep replies short.\n",
}


def build(tmp_path: Path, embedder: object | None, tree: dict[str, str] = TREE) -> SearchIndex:
    ix = SearchIndex(tmp_path / "index.db")
    ix.refresh([(p, str(zlib.crc32(t.encode()))) for p, t in tree.items()],
               lambda p: tree[p].encode(), embedder)  # type: ignore[arg-type]
    return ix


# --------------------------------------------------------------------------- sanitization

HOSTILE = [
    "", "   ", '"', '""', "'", "AND", "OR", "NOT", "NEAR", "and or not near",
    'dog AND "cat', "dog OR", "NOT dog", "NEAR(dog cat, 2)", "dog*", "*", "^dog", "^",
    "title:dog", ":", "col:", "(dog", "dog)", "((()))", "-dog", "dog-park", "--", "+dog",
    "dog's", "“smart quotes”", "‘x’", "— – …", "¿qué?", "日本語のテキスト", "emoji 🐶🐕",
    "\x00null", "tab\tand\nnewline", "a" * 5000, "x " * 500, "{}[]<>|\\/;", "%_%", "$$$",
    "@#&", "1e10", "D1:3", "sessions/s1/transcript.md#D1:1", "SELECT * FROM chunks; --",
    "\ufffd\ufffd", "Ǳ ǲ ǳ", "Ω≈ç√∫", "dog\u200bpark",
]


@pytest.mark.unit
@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(tmp_path: Path, query: str) -> None:
    ix = build(tmp_path, None)
    try:
        terms = query_terms(query)
        assert all(re.fullmatch(r"[^\W_]+", t) for t in terms)
        if terms:
            ix.sparse_search(fts_query(terms), 10)
            ix.sparse_search(fts_query(terms, "AND"), 10)
        for mode in ("auto", "sparse"):
            res = retrieve(ix, query, k=3, mode=mode, now=NOW)
            assert res.mode in ("sparse", "recent")
            assert res.cards  # degrades to recent rather than returning nothing
    finally:
        ix.close()


@pytest.mark.unit
def test_query_terms_drop_stopwords_and_keep_content() -> None:
    assert query_terms("Which orgs did I meet in Kyoto?") == ["orgs", "meet", "kyoto"]
    assert query_terms("NOT dog AND cat") == ["dog", "cat"]
    assert query_terms("what is it") == ["what", "is", "it"]  # all stopwords: keep them
    assert query_terms("") == []
    assert fts_query(["dog", "or"]) == '"dog" OR "or"'
    assert fts_query(["dog", "cat"], "AND") == '"dog" AND "cat"'


# --------------------------------------------------------------------------- fusion

@pytest.mark.unit
def test_rrf_prefers_agreement_and_is_versioned() -> None:
    scores, ranks = rrf({"dense": [1, 2, 3], "bm25": [4, 2, 5]}, k=10)
    order = sorted(scores, key=lambda i: -scores[i])
    assert order[0] == 2  # ranked by both beats ranked first by one
    assert scores[2] == pytest.approx(2 / 12)
    assert ranks[2] == {"dense": 2, "bm25": 2}
    assert ranks[4] == {"bm25": 1}
    assert set(order[1:3]) == {1, 4}  # first of each list tie
    assert fusion.FUSION == "rrf-v1" and fusion.ADJUST == "adj-v2"


@pytest.mark.unit
def test_adjustment_is_a_tie_breaker() -> None:
    assert adjust_factor(1.0, 0) == pytest.approx(1.0)
    assert adjust_factor(0.0, 0) == pytest.approx(0.75)
    assert adjust_factor(1.0, 180) == pytest.approx(0.95)
    assert adjust_factor(1.0, 10_000) == pytest.approx(0.9, abs=1e-3)
    assert adjust_factor(1.0, None) == adjust_factor(1.0, 180)
    # at another fusion constant the confidence factor keeps its worth in ranks
    assert adjust_factor(0.0, 0, rrf_k=5) < adjust_factor(0.0, 0) < adjust_factor(1.0, 0, rrf_k=5)
    assert adjust_factor(1.0, 0, rrf_k=5) == pytest.approx(1.0)


@pytest.mark.unit
def test_hybrid_order_is_rrf_times_adjustment(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    ix = build(tmp_path, emb)
    try:
        # the fusion alone: the stages after it (speaker, neighbours, …) are off here and
        # tested on their own in test_recall_stages.py
        plain = RecallParams(neighbour=0.0, speaker=0.0, mmr_lambda=1.0, sentence_weight=0.0)
        res = retrieve(ix, "dog parks Kyoto", k=6, embedder=emb, now=NOW, params=plain)
        assert res.mode == "hybrid"
        assert res.fusion == f"rrf-v1(k={plain.rrf_k})+adj-v2"
        scores = [c.score for c in res.cards]
        assert scores == sorted(scores, reverse=True)
        for c in res.cards:
            base = sum(1 / (plain.rrf_k + r) for r in c.ranks.values())
            row = ix.chunks_by_id([c.chunk_id])[c.chunk_id]
            days = fusion.age_days(row["updated"] or row["created"], NOW)
            assert c.score == pytest.approx(base * adjust_factor(row["confidence"], days, plain.rrf_k),
                                            rel=1e-4)
        top = res.cards[0]
        assert set(top.ranks) == {"dense", "bm25"}
    finally:
        ix.close()


@pytest.mark.unit
def test_confidence_breaks_ties(tmp_path: Path) -> None:
    tree = {
        "notes/a/low.md": "---\nconfidence: 0.2\nupdated: 2024-05-01\n---\nThe wifi password is tulip.\n",
        "notes/a/high.md": "---\nconfidence: 1.0\nupdated: 2024-05-01\n---\nThe wifi password is tulip.\n",
    }
    ix = build(tmp_path, None, tree)
    try:
        res = retrieve(ix, "wifi password", k=2, now=NOW)
        assert [c.path for c in res.cards] == ["notes/a/high.md", "notes/a/low.md"]
        assert [c.confidence_pct for c in res.cards] == [100, 20]
    finally:
        ix.close()


# --------------------------------------------------------------------------- degradation

@pytest.mark.unit
def test_degradation_chain_is_labelled(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    ix = build(tmp_path, emb)
    try:
        assert ix.has_vectors() and ix.has_fts()
        assert retrieve(ix, "dog", embedder=emb, now=NOW).mode == "hybrid"

        # No embedder given → sparse, and it says why.
        res = retrieve(ix, "dog", embedder=None, now=NOW)
        assert res.mode == "sparse" and "no embedder" in res.why

        # The embedder fails at query time → sparse.
        res = retrieve(ix, "dog", embedder=BrokenEmbedder(), now=NOW)
        assert res.mode == "sparse" and "dense search failed" in res.why

        # No keyword matches → dense alone answers.
        res = retrieve(ix, "zzzunknownword", embedder=emb, now=NOW)
        assert res.mode == "dense" and "no keyword match" in res.why

        # The vector table is gone → sparse still answers, labelled.
        ix.conn.execute("DROP TABLE chunks_vec")
        assert not ix.has_vectors()
        res = retrieve(ix, "dog", embedder=emb, now=NOW)
        assert res.mode == "sparse" and "no vectors" in res.why
        # (a turn next to a match may join: the neighbour stage, test_recall_stages.py)
        assert res.cards and all("bm25 #" in c.reason or c.reason == "next to a match"
                                 for c in res.cards)
        assert "bm25 #" in res.cards[0].reason
        assert any(c.anchor == "D1:1" for c in res.cards)

        # FTS gone too → the most recent chunks, labelled.
        ix.conn.execute("DROP TABLE chunks_fts")
        assert not ix.has_fts()
        res = retrieve(ix, "dog", embedder=emb, now=NOW)
        assert res.mode == "recent" and "no FTS" in res.why
        assert res.cards[0].path == "knowledge/kyoto.md"  # updated 2024-05-25, the newest
        assert all(c.reason.startswith("recent #") for c in res.cards)
    finally:
        ix.close()

    # Reopening repairs FTS from the chunk table (vectors need an embedder to come back).
    ix = SearchIndex(tmp_path / "index.db")
    try:
        assert ix.has_fts() and not ix.has_vectors()
        assert retrieve(ix, "dog", now=NOW).mode == "sparse"
        ix.refresh([(p, str(zlib.crc32(t.encode()))) for p, t in TREE.items()],
                   lambda p: TREE[p].encode(), emb)
        assert ix.has_vectors()
        assert retrieve(ix, "dog", embedder=emb, now=NOW).mode == "hybrid"
    finally:
        ix.close()


@pytest.mark.unit
def test_forced_modes(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    ix = build(tmp_path, emb)
    try:
        assert retrieve(ix, "dog", embedder=emb, mode="dense", now=NOW).mode == "dense"
        assert retrieve(ix, "dog", embedder=emb, mode="sparse", now=NOW).mode == "sparse"
        assert retrieve(ix, "dog", embedder=emb, mode="recent", now=NOW).mode == "recent"
        # dense asked, none possible → next in the chain
        assert retrieve(ix, "dog", embedder=None, mode="dense", now=NOW).mode == "sparse"
        res = retrieve(ix, "", embedder=emb, now=NOW)
        assert res.mode == "recent" and "empty query" in res.why
        with pytest.raises(ValueError):
            retrieve(ix, "dog", mode="bogus")
    finally:
        ix.close()


# --------------------------------------------------------------------------- cards

@pytest.mark.unit
def test_cards_carry_every_field(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    ix = build(tmp_path, emb)
    try:
        res = retrieve(ix, "dog parks", k=10, embedder=emb, now=NOW, stale_days=180)
        d = res.to_dict()
        assert set(d) >= {"query", "mode", "why", "cards", "timings", "fusion"}
        assert set(d["timings"]) == {"embed_ms", "search_ms"}
        by_ref = {c.ref: c for c in res.cards}
        note = by_ref["notes/pets/dog.md"]
        assert note.kind == "preference" and note.scope == "personal"
        assert note.confidence_pct == 40
        # two years old, but a preference is no plan, status or role: not stale (staleness.py)
        assert note.stale is False and note.freshness == "2 years ago"
        assert note.updated == "2022-01-01"
        assert "dog" in note.matched_terms and "matched: " in note.reason
        assert note.ranks.get("bm25") and note.truncated is False
        turn = by_ref["sessions/s1/transcript.md#D1:1"]
        assert turn.kind == "turn" and turn.speaker == "Mara" and not turn.stale
        assert turn.freshness == "1 week ago" or turn.freshness.endswith("days ago")
        for c in res.cards:
            cd = c.to_dict()
            for key in ("path", "anchor", "kind", "scope", "title", "text", "truncated",
                        "freshness", "stale", "confidence_pct", "score", "reason", "ranks",
                        "matched_terms", "updated", "ref"):
                assert key in cd
            assert isinstance(c.confidence_pct, int) and 0 <= c.confidence_pct <= 100
            assert re.match(r"^(dense|bm25)(:sentences)? #\d+", c.reason)
    finally:
        ix.close()


@pytest.mark.unit
def test_truncation_flag(tmp_path: Path) -> None:
    long = "---\ntitle: Long\n---\n" + " ".join(f"word{i}" for i in range(200)) + "\n"
    ix = build(tmp_path, None, {"knowledge/long.md": long})
    try:
        res = retrieve(ix, "word5", k=1, max_chars=50, now=NOW)
        c = res.cards[0]
        assert c.truncated and len(c.text) <= 50 and c.text.endswith("…")
        assert not c.text[:-1].endswith("word")  # cut at a word boundary, not mid-word
        full = retrieve(ix, "word5", k=1, max_chars=100_000, now=NOW).cards[0]
        assert not full.truncated
    finally:
        ix.close()
    assert truncate("short", 10) == ("short", False)
    assert truncate("aaaa bbbb cccc", 10) == ("aaaa bbbb…", True)


@pytest.mark.unit
def test_freshness_labels() -> None:
    assert freshness_label(None) == "date unknown"
    assert freshness_label(0.2) == "today"
    assert freshness_label(1.5) == "yesterday"
    assert freshness_label(3) == "3 days ago"
    assert freshness_label(20) == "2 weeks ago"
    assert freshness_label(150) == "4 months ago"
    assert freshness_label(800) == "2 years ago"
    assert freshness_label(-10) == "in 10 days"


# --------------------------------------------------------------------------- index upkeep

@pytest.mark.unit
def test_refresh_is_incremental_and_robust(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    tree = dict(TREE)
    ix = SearchIndex(tmp_path / "index.db")
    hashes = lambda t: [(p, str(zlib.crc32(x.encode()))) for p, x in t.items()]  # noqa: E731
    try:
        st = ix.refresh(hashes(tree), lambda p: tree[p].encode(), emb)
        assert st["files_indexed"] == 4 and st["chunks"] == ix.stats()["chunks"]
        assert st["chunks_per_s"] > 0 and st["embedded"] == st["chunks"]
        calls = emb.calls

        st = ix.refresh(hashes(tree), lambda p: tree[p].encode(), emb)
        assert st["files_indexed"] == 0 and st["skipped"] == 4 and emb.calls == calls

        tree["notes/pets/dog.md"] = "---\ntype: preference\n---\nMara now prefers cats.\n"
        del tree["GUIDE.md"]
        tree["notes/x/bad.md"] = "irrelevant"
        seen: list[tuple[int, int]] = []

        def read(p: str) -> bytes:
            if p == "notes/x/bad.md":
                raise OSError("backend down")
            return tree[p].encode()

        st = ix.refresh(hashes(tree), read, emb, progress=lambda a, b: seen.append((a, b)))
        assert st["files_indexed"] == 1 and st["removed"] == 1 and st["failed"] == 1
        assert seen and seen[-1][1] == 2
        assert "GUIDE.md" not in ix.file_hashes() and "notes/x/bad.md" not in ix.file_hashes()
        assert not retrieve(ix, "English", mode="sparse", now=NOW).cards[0].path == "GUIDE.md"
        assert retrieve(ix, "cats", embedder=emb, now=NOW).cards[0].path == "notes/pets/dog.md"
        # vectors and chunks stay in step
        s = ix.stats()
        assert s["vectors"] == s["chunks"]
        assert ix.conn.execute("SELECT count(*) FROM chunks_vec").fetchall()[0][0] == s["chunks"]
    finally:
        ix.close()


@pytest.mark.unit
def test_fts_only_build_then_vectors_filled_and_embedder_switch(tmp_path: Path) -> None:
    ix = build(tmp_path, None)
    try:
        assert ix.has_fts() and not ix.has_vectors()
        assert retrieve(ix, "dog", embedder=FakeEmbedder(), now=NOW).mode == "sparse"
        emb = FakeEmbedder()
        st = ix.refresh([(p, str(zlib.crc32(t.encode()))) for p, t in TREE.items()],
                        lambda p: TREE[p].encode(), emb)
        assert st["files_indexed"] == 0 and st["embedded"] == ix.stats()["chunks"]
        assert retrieve(ix, "dog", embedder=emb, now=NOW).mode == "hybrid"

        class Other(FakeEmbedder):
            name = "other-model"
            dim = 8

        other = Other()
        # Vectors from another model are never compared with this one's queries.
        res = retrieve(ix, "dog", embedder=other, now=NOW)
        assert res.mode == "sparse" and "not other-model" in res.why
        ix.refresh([(p, str(zlib.crc32(t.encode()))) for p, t in TREE.items()],
                   lambda p: TREE[p].encode(), other)
        assert ix.embedder_name() == "other-model"
        assert retrieve(ix, "dog", embedder=other, now=NOW).mode == "hybrid"
    finally:
        ix.close()


@pytest.mark.unit
def test_non_utf8_and_garbage_files_index(tmp_path: Path) -> None:
    blobs = {"notes/a/latin1.md": b"caf\xe9 cr\xe8me br\xfbl\xe9e\n",
             "notes/a/binary.md": bytes(range(256)) * 4,
             "notes/a/fm.md": b"---\n\xff\xfe: [\n---\nbody words\n"}
    ix = SearchIndex(tmp_path / "index.db")
    try:
        st = ix.refresh([(p, "h") for p in blobs], lambda p: blobs[p], FakeEmbedder())
        assert st["files_indexed"] == 3 and st["failed"] == 0
        assert retrieve(ix, "body words", mode="sparse", now=NOW).cards[0].path == "notes/a/fm.md"
        assert ix.upsert_file("notes/a/new.md", "h2", b"fresh \xff text", None) == 1
        assert ix.remove_file("notes/a/new.md") and not ix.remove_file("notes/a/new.md")
    finally:
        ix.close()


# --------------------------------------------------------------------------- synthesis

@pytest.mark.unit
def test_render_synthesis_is_deterministic_and_grouped(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    ix = build(tmp_path, emb)
    try:
        res = retrieve(ix, "dog Kyoto", k=6, embedder=emb, now=NOW)
        mat = ["sessions/s1/transcript.md", "knowledge/kyoto.md"]
        a = render_synthesis(res, mat)
        assert a == render_synthesis(res, mat)
        assert a.startswith("# Recall: dog Kyoto")
        for c in res.cards:
            assert f"`{c.ref}`" in a
        assert a.count("## sessions/s1/transcript.md") == 1  # grouped by file
        tail = a.split("## Files now materialized", 1)[1]
        assert "- sessions/s1/transcript.md" in tail and "- knowledge/kyoto.md" in tail
        assert "confidence" in a and "score" in a
    finally:
        ix.close()
    empty = RecallResult(query="x", mode="recent", cards=[], timings={}, why="recent: empty")
    assert "Nothing found." in render_synthesis(empty, [])


@pytest.mark.unit
def test_cited_sources() -> None:
    assert cited_sources(TREE["knowledge/kyoto.md"]) == ["sessions/s2/transcript.md",
                                                         "sessions/s1/transcript.md"]
    page = ("---\nsources:\n  1: sessions/a/transcript.md#D1:1\n  2: slack://chan/123\n"
            "  3: ../../etc/passwd\n---\nA [cite:1,2] B [cite:3] C [cite:9] D [cite:1]\n")
    assert cited_sources(page) == ["sessions/a/transcript.md"]
    dicts = ("---\nsources:\n  - {id: 4, path: 'notes/x/y.md#top'}\n---\nfact [cite:4]\n")
    assert cited_sources(dicts) == ["notes/x/y.md"]
    assert cited_sources("no frontmatter [cite:1]") == []
    assert cited_sources(b"---\nsources: [\n---\n[cite:1]") == []


def test_card_dataclass_roundtrip() -> None:
    c = Card(path="p.md", anchor="", kind="note", scope=None, title=None, text="t",
             truncated=False, freshness="today", stale=False, confidence_pct=80, score=0.1,
             reason="bm25 #1")
    assert c.ref == "p.md" and c.to_dict()["ref"] == "p.md"


# --------------------------------------------------------------------------- real model

@pytest.fixture(scope="session")
def minilm():
    """The real embedding model, loaded once per test session (load_embedder caches it
    process-wide, so other modules' fixtures share the instance)."""
    from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

    try:
        return load_embedder()
    except EmbedderUnavailable as e:  # pragma: no cover - environment problem
        pytest.fail(f"real model unavailable: {e}")


@pytest.mark.model
def test_real_model_finds_paraphrase_that_bm25_cannot(tmp_path: Path, minilm) -> None:
    v = minilm.embed(["I adopted a puppy", "We got a new dog", "Quarterly tax filing"])
    assert v.shape == (3, minilm.dim) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2

    ix = build(tmp_path, minilm)
    try:
        sparse = retrieve(ix, "new puppy at home", mode="sparse", embedder=minilm, now=NOW)
        assert sparse.mode == "recent"  # no keyword in common with any chunk
        res = retrieve(ix, "new puppy at home", k=3, embedder=minilm, now=NOW)
        assert res.mode == "dense"
        assert any(c.anchor == "D1:1" or c.path == "notes/pets/dog.md" for c in res.cards[:2])
        res = retrieve(ix, "which organisations did Mara meet in Kyoto", k=3, embedder=minilm, now=NOW)
        assert res.mode == "hybrid"
        assert res.cards[0].path == "knowledge/kyoto.md"
        # both retrievers found it (the question without "Mara" adds its own lists)
        assert {"dense", "bm25"} <= set(res.cards[0].ranks)
    finally:
        ix.close()
