"""The search index in parts (issue 17): the parts answer as the whole index does, a refresh
touches only the part of the file that changed, and an index of one file is split once.

Against the real S3 server (``rclone serve s3``); vectors from a hashed bag of words and
numbers (the turn numbers keep two turns' vectors apart, so rankings have no ties whose order
would depend on chunk ids): the parts' layout and scoring do not depend on the model.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest

from brainfs.backend.keys import INDEX_KEY, INDEX_MANIFEST_KEY
from brainfs.backend.store import ObjectStore
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.localindex import build_index, download_all, is_indexable
from brainfs.cache.search.queryterms import fts_query, query_terms
from brainfs.cache.search.retrieval import retrieve
from brainfs.cache.search.shardmap import CORE, Manifest, shard_of
from brainfs.cache.search.sharded import ShardedIndex
from brainfs.cache.search.shardsync import read_manifest
from brainfs.tools.sample import generate

from helpers import BowEmbedder, upload_tree


class Bow(BowEmbedder):
    """384 buckets of words and numbers."""

    def __init__(self) -> None:
        super().__init__(dim=384, name="test-bow-384", words=r"[a-z0-9]+")

pytestmark = pytest.mark.s3

QUESTIONS = ["which organizations did I meet in Kyoto", "who leads Quiet Routes",
             "what is the codename of the braille label printer", "where does Nadia live now",
             "budget for sign language interpretation", "consent form gift card amount",
             "what format do I prefer for figures", "when is the ethics amendment due"]
NOW = _dt.datetime(2026, 6, 1, tzinfo=_dt.timezone.utc)


@pytest.fixture(scope="module")
def sample_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample")
    generate(root, files=800, seed=7)
    return root


def whole_index(tree: Path, db: Path, embedder) -> SearchIndex:
    """The same files in one index, as before issue 17."""
    ix = SearchIndex(db)
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    files = [f for f in files if is_indexable(f)]
    ix.refresh([(f, "x") for f in files], lambda f: (tree / f).read_bytes(), embedder)
    return ix


def ranked(ix, hits) -> list[tuple[float, str]]:
    """(score, path#anchor) best first; rows of equal score (ties: their order is the
    order of ids, which differ between indexes) by reference."""
    return sorted((round(s, 6), r) for (_, s), r in zip(hits, refs(ix, hits)))


def refs(ix, hits) -> list[str]:
    rows = ix.chunks_by_id([c for c, _ in hits])
    return [f"{rows[c]['path']}#{rows[c]['anchor']}" for c, _ in hits]


def test_shard_names() -> None:
    assert shard_of("sessions/2025-07-14-kyoto-visit/transcript.md") == "2025-Q3"
    assert shard_of("sessions/2025-07-14-kyoto-visit/transcript.md", "month") == "2025-07"
    assert shard_of("sessions/2025-07-14-kyoto-visit/summary.md") == CORE
    assert shard_of("sessions/undated-chat-ab12/transcript.md") == "undated"
    assert shard_of("sessions/index.md") == CORE
    assert shard_of("knowledge/kyoto.md") == CORE
    assert shard_of("notes/people/ana.md") == CORE


def test_parts_answer_as_the_whole_index(store: ObjectStore, sample_tree: Path, tmp_path: Path) -> None:
    emb = Bow()
    upload_tree(store, sample_tree)
    stats = build_index(store, tmp_path / "build", emb)
    manifest = read_manifest(store)
    assert manifest is not None and len(manifest.shards) > 4, manifest
    assert stats["parts"] == len(manifest.shards) and not stats["failed"]
    whole = whole_index(sample_tree, tmp_path / "whole.sqlite", emb)
    parts = download_all(store, tmp_path / "fresh")
    assert isinstance(parts, ShardedIndex) and not parts.missing()
    try:
        assert parts.stats()["chunks"] == whole.stats()["chunks"]
        naive_differs = False
        for q in QUESTIONS:
            for op in ("AND", "OR"):
                fq = fts_query(query_terms(q), op)
                a, b = whole.sparse_search(fq, 40), parts.sparse_search(fq, 40)
                assert ranked(whole, a) == ranked(parts, b), (q, op)
                # Each part's own bm25() ranks otherwise: the merge is what makes them agree.
                naive = sorted(((s, f"{n}:{c}") for n in parts.names()
                                for c, s in parts.part(n).sparse_search(fq, 40)))[:40]
                naive_differs |= [round(s, 6) for s, _ in naive] != [round(s, 6) for _, s in a]
            qv = emb.embed([q])[0]
            assert ranked(whole, whole.dense_search(qv, 30)) == ranked(parts, parts.dense_search(qv, 30))
            ra = retrieve(whole, q, k=10, embedder=emb, now=NOW)
            rb = retrieve(parts, q, k=10, embedder=emb, now=NOW)
            # The same top k in the same order (scores may differ slightly where a list
            # holds ties: RRF then takes them in the order of ids, which differ).
            assert [c.ref for c in ra.cards] == [c.ref for c in rb.cards], q
            assert ra.mode == rb.mode == "hybrid"
        assert naive_differs, "the fixture does not tell a global BM25 from per-part scores"
    finally:
        whole.close()
        parts.close()


def _md5s(store: ObjectStore) -> dict[str, str]:
    m = read_manifest(store)
    assert m is not None
    return {n: s.md5 for n, s in m.shards.items()}


def test_refresh_touches_only_the_changed_part(store: ObjectStore, sample_tree: Path, tmp_path: Path) -> None:
    emb = Bow()
    upload_tree(store, sample_tree)
    build_index(store, tmp_path / "first", emb)
    before = _md5s(store)
    transcript = sorted(p for p in (sample_tree / "sessions").glob("*/transcript.md"))[3]
    path = transcript.relative_to(sample_tree).as_posix()
    part = shard_of(path)
    store.put(path, transcript.read_bytes() + b"\n[D999:1] Nadia: The okapi mascot is called Ferdinand.\n")

    # A machine that has none of the parts yet fetches only the one it refreshes.
    other = tmp_path / "other"
    stats = build_index(store, other, emb)
    assert stats["parts_refreshed"] == [part]
    in_part = [p for p in sample_tree.rglob("*.md") if shard_of(p.relative_to(sample_tree).as_posix()) == part]
    assert stats["files_indexed"] == 1 and len(in_part) > 1
    # Every other file is unchanged: those of its part looked at, those of the others not.
    assert stats["skipped"] == stats["files_listed"] - 1
    assert sorted(p.name for p in other.glob("*.sqlite")) == [f"{part}.sqlite"]
    after = _md5s(store)
    assert {n for n in after if after[n] != before[n]} == {part}
    assert set(after) == set(before)
    with download_all(store, tmp_path / "fresh") as ix:
        hits = retrieve(ix, "okapi mascot Ferdinand", k=3, embedder=emb, now=NOW)
        assert hits.cards[0].path == path

    # Nothing changed: nothing is refreshed or uploaded.
    again = build_index(store, other, emb)
    assert again["parts_refreshed"] == [] and again["uploaded_bytes"] == 0
    assert again["skipped"] == again["files_listed"] and again.get("files_indexed", 0) == 0
    assert _md5s(store) == after

    # A deleted page touches the core part only; a quarter left empty goes away.
    store.delete("knowledge/INDEX.md")
    quarter = [p.relative_to(sample_tree).as_posix() for p in sample_tree.glob("sessions/*/transcript.md")
               if shard_of(p.relative_to(sample_tree).as_posix()) == shard_of(
                   sorted(sample_tree.glob("sessions/*/transcript.md"))[0].relative_to(sample_tree).as_posix())]
    gone = shard_of(quarter[0])
    for p in quarter:
        store.delete(p)
    stats = build_index(store, other, emb)
    assert stats["parts_refreshed"] == [CORE]
    final = read_manifest(store)
    assert final is not None and gone not in final.shards
    assert gone + ".sqlite" not in {o.path.rsplit("/", 1)[-1] for o in store.list(".brainfs/index/")}


class CountingBow(Bow):
    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def test_one_file_index_is_read_then_split_once(store: ObjectStore, sample_tree: Path, tmp_path: Path) -> None:
    emb = Bow()
    upload_tree(store, sample_tree)
    # An index as earlier versions left it: one file at INDEX_KEY.
    whole = whole_index(sample_tree, tmp_path / "old.sqlite", emb)
    whole.close()
    listing = {o.path: o.etag for o in store.list() if not o.path.startswith(".brainfs")}
    with SearchIndex(tmp_path / "old.sqlite") as ix:  # the old index's hashes are the ETags
        ix.conn.executemany("UPDATE files SET hash = ? WHERE path = ?",
                            [(e, p) for p, e in listing.items()])
    store.put(INDEX_KEY, (tmp_path / "old.sqlite").read_bytes())

    old = download_all(store, tmp_path / "reader")  # read as it is
    assert isinstance(old, SearchIndex)
    expected = [c.ref for c in retrieve(old, QUESTIONS[0], k=10, embedder=emb, now=NOW).cards]
    old.close()

    counting = CountingBow()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "index.sqlite").write_bytes(b"a local copy an earlier version kept")
    stats = build_index(store, tmp_path / "cache" / "index", counting)
    assert stats["migrated"] and stats["files_indexed"] == 0, stats
    assert counting.texts == 0  # the vectors were copied, not embedded again
    assert not (tmp_path / "cache" / "index.sqlite").exists()  # the parts replace it
    keys = {o.path for o in store.list(".brainfs/")}
    assert INDEX_KEY not in keys and INDEX_MANIFEST_KEY in keys
    with download_all(store, tmp_path / "reader2") as parts:
        assert isinstance(parts, ShardedIndex) and len(parts.names()) > 4
        assert [c.ref for c in retrieve(parts, QUESTIONS[0], k=10, embedder=emb, now=NOW).cards] == expected


def test_manifest_rejects_a_newer_format() -> None:
    data = json.loads(Manifest().to_bytes())
    data["format"] = 99
    with pytest.raises(ValueError, match="newer"):
        Manifest.from_bytes(json.dumps(data).encode())
    with pytest.raises(ValueError, match="unreadable"):
        Manifest.from_bytes(b"{not json")


def test_first_parts_are_core_and_the_newest() -> None:
    m = Manifest()
    from brainfs.cache.search.shardmap import ShardInfo

    for name, size in [(CORE, 50), ("2025-Q1", 40), ("2025-Q2", 40), ("2024-Q4", 40), ("undated", 5)]:
        m.shards[name] = ShardInfo(key=name, md5="", bytes=size, files=1, chunks=1, vectors=0,
                                   files_digest="", forget_digest="")
    assert m.first_parts(10_000) == [CORE, "2025-Q2", "2025-Q1", "2024-Q4", "undated"]
    assert m.first_parts(1) == [CORE, "2025-Q2"]
    assert m.first_parts(130) == [CORE, "2025-Q2", "2025-Q1"]
