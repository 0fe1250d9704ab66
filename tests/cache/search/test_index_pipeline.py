"""The index build runs reading, embedding and writing side by side (and the model loads
while the first files are fetched): it must write exactly what the serial build writes —
the same rows, in the same order, with the same vectors bit for bit — and ``brainfs -v
index`` says where its time went, with the command's rate beside the build's.

The model is the real int8 export, loaded offline; the vector cache is off for the
comparison, so that both builds compute every vector.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.cache.search import indexrefresh
from brainfs.cache.search.embedder import PendingEmbedder
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.localindex import is_indexable

pytestmark = pytest.mark.model

#: Every table a build writes, and its columns in a fixed order (the vectors as bytes).
TABLES = {
    "files": "SELECT path, hash FROM files ORDER BY path",
    "chunks": "SELECT id, path, anchor, kind, scope, confidence, created, updated, title, "
              "heading, speaker, text, ordinal, vec, cites FROM chunks ORDER BY id",
    "chunks_vec": "SELECT rowid, embedding FROM chunks_vec ORDER BY rowid",
    "chunks_fts": "SELECT rowid, text, title, heading FROM chunks_fts ORDER BY rowid",
    "files_fts": "SELECT path, body FROM files_fts ORDER BY path",
    "aliases": "SELECT path, name FROM aliases ORDER BY rowid",
    "statements": "SELECT path, anchor, data FROM statements ORDER BY rowid",
    "meta": "SELECT key, value FROM meta ORDER BY key",
}


def _rows(ix: SearchIndex) -> dict[str, list[tuple]]:
    return {t: [tuple(r) for r in ix.conn.execute(q)] for t, q in TABLES.items()}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from brainfs.tools.sample import generate

    root = tmp_path_factory.mktemp("sample") / "tree"
    generate(root, files=40, seed=7)
    return root


def test_pipelined_build_writes_what_the_serial_build_writes(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brainfs.cache.search.embedder import load_embedder

    monkeypatch.setenv("BRAINFS_EMBED_CACHE", "off")
    # Small batches: many of them queue between the threads, on a corpus that embeds fast.
    monkeypatch.setattr(indexrefresh, "EMBED_BATCH", 16)
    paths = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
    files = [(p, str(os.path.getmtime(tree / p))) for p in paths if is_indexable(p)]
    broken = files[3][0]  # one file fails its read in both builds: skipped, counted

    def read(p: str) -> bytes:
        if p == broken:
            raise OSError("backend down")
        return (tree / p).read_bytes()

    serial = SearchIndex(tmp_path / "serial.sqlite")
    piped = SearchIndex(tmp_path / "piped.sqlite")
    try:
        st_serial = serial.refresh(files, read, load_embedder("minilm"), pipeline=False)
        seen: list[tuple[int, int]] = []
        # The CLI's way: the model still loading when the build starts.
        st_piped = piped.refresh(files, read, PendingEmbedder("minilm"),
                                 progress=lambda a, b: seen.append((a, b)))
        a, b = _rows(serial), _rows(piped)
        assert len(a["chunks"]) > 8 * 16, "too few chunks to fill several batches"
        assert len(a["chunks_vec"]) == len(a["chunks"]), "every chunk has its vector"
        for table in TABLES:
            assert b[table] == a[table], f"{table} differs between the serial and pipelined builds"
        for k in ("files_indexed", "chunks", "embedded", "failed", "skipped"):
            assert st_piped[k] == st_serial[k], k
        assert st_piped["failed"] == 1 and st_piped["embed_error"] is None
        assert seen[-1] == (len(files), len(files))
        assert all(x <= y for (x, _), (y, _) in zip(seen, seen[1:])), "progress never goes back"
        # Where the time went is reported, stage by stage.
        for k in ("embed_seconds", "chunk_seconds", "write_seconds", "read_wait_seconds",
                  "model_wait_seconds", "embed_idle_seconds"):
            assert isinstance(st_piped[k], float) and st_piped[k] >= 0.0, k
        assert st_piped["embed_seconds"] > 0
    finally:
        serial.close()
        piped.close()


def test_a_failing_read_thread_stops_the_build_with_its_error(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the reader thread (not a failed read, which is skipped) surfaces in the
    caller, and no thread of the build is left running."""
    import threading

    from helpers import BowEmbedder

    paths = sorted(str(p.relative_to(tree)) for p in tree.rglob("*.md"))
    ix = SearchIndex(tmp_path / "x.sqlite")
    original = indexrefresh.index_chunks

    def chunks(path: str, text: str):
        if path == paths[5]:
            raise ValueError("chunker bug")
        return original(path, text)

    monkeypatch.setattr(indexrefresh, "index_chunks", chunks)
    try:
        with pytest.raises(ValueError, match="chunker bug"):
            ix.refresh([(p, "h") for p in paths], lambda p: (tree / p).read_bytes(),
                       BowEmbedder(dim=16, name="bow"), pipeline=True)
    finally:
        ix.close()
    for th in threading.enumerate():
        if th.name.startswith("brainfs-index-"):
            th.join(timeout=10)
            assert not th.is_alive(), f"{th.name} left running"


@pytest.mark.s3
def test_index_command_reports_its_timings(tree: Path, tmp_path: Path, cfg, corpus, store) -> None:
    """``brainfs -v index``: the build's stages and both rates, the command's own
    (process start to exit) and the build's; every chunk gets its vector."""
    from helpers import upload_tree

    upload_tree(store, tree)
    env = dict(os.environ, BRAINFS_CONFIG="/dev/null", BRAINFS_CACHE_DIR=str(tmp_path / "cache"),
               BRAINFS_EMBED_CACHE=str(tmp_path / "vectors.sqlite"), BRAINFS_EMBEDDER="minilm",
               AWS_ENDPOINT_URL=cfg.endpoint_url or "")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "-v", "index", str(corpus)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "(no vectors)" not in r.stdout
    line = next((x for x in r.stderr.splitlines() if "index timings:" in x), None)
    assert line is not None, r.stderr
    for part in ("model load", "chunking", "embedding", "SQLite writes", "upload",
                 "chunks/s in the build", "for the whole command", "CPUs busy"):
        assert part in line, (part, line)
    from brainfs.cache.search.shardsync import read_manifest

    manifest = read_manifest(store)
    assert manifest is not None and manifest.shards
    assert all(s.vectors == s.chunks > 0 for s in manifest.shards.values())
