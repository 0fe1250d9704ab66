"""Recall through a real mount: ``cat memory/.recall/<question>`` materializes by meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.cache.search.localindex import INDEX_MANIFEST_KEY, build_index

from helpers import RECALL_OLD, RECALL_TREE, upload_tree, write_tree

pytestmark = [pytest.mark.mount, pytest.mark.model]

@pytest.fixture
def indexed(store: ObjectStore, tmp_path: Path, embedder) -> Path:
    src = write_tree(tmp_path / "src", RECALL_TREE)
    upload_tree(store, src)
    stats = build_index(store, tmp_path / "build" / "index.sqlite", embedder)
    assert stats["files_listed"] == len(RECALL_TREE)
    assert store.head(INDEX_MANIFEST_KEY).size > 0
    return src


def test_recall_materializes_by_meaning(indexed: Path, corpus, mounter) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1",
                                   "BRAINFS_PRELOAD_GLOBS": "GUIDE.md,sessions/index.md"})
    mp = m.mountpoint
    # Not in the working set: neither listed nor found by grep.
    assert "2025-02-03-sendai" not in os.listdir(mp / "sessions")
    assert subprocess.run(["grep", "-rq", "minibuses", str(mp)]).returncode == 1
    out = (mp / ".recall" / "which cooperative runs wheelchair minibuses").read_text()
    assert RECALL_OLD in out, out
    assert "Sapphir Mobility Coop" in out
    # Materialized at its corpus path: listed, readable, found by grep -r.
    assert "2025-02-03-sendai" in os.listdir(mp / "sessions")
    assert (mp / RECALL_OLD).read_text() == RECALL_TREE[RECALL_OLD]
    grep = subprocess.run(["grep", "-rl", "minibuses", str(mp)], capture_output=True, text=True)
    assert str(mp / RECALL_OLD) in grep.stdout.split()
    # Recent queries are listed in .recall/.
    assert "which cooperative runs wheelchair minibuses" in os.listdir(mp / ".recall")


def test_recall_cli_json_through_mount(indexed: Path, corpus, mounter, cfg) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_GLOBS": "GUIDE.md"})
    env = dict(m.env)
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "recall", "grant budget / deadline",
                        "--mount", str(m.mountpoint), "--json", "-k", "3"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["mode"] in ("hybrid", "dense", "sparse")
    assert 1 <= len(data["cards"]) <= 3
    top = data["cards"][0]
    assert top["path"] == "sessions/2026-01-10-budget/transcript.md"
    for key in ("kind", "scope", "freshness", "stale", "confidence_pct", "truncated", "reason"):
        assert key in top
    assert "sessions/2026-01-10-budget/transcript.md" in data["materialized"]


def test_written_file_is_indexed_after_upload(indexed: Path, corpus, mounter) -> None:
    m = mounter(corpus)
    mp = m.mountpoint
    (mp / "notes").mkdir(exist_ok=True)
    (mp / "notes/okapi.md").write_text("The office mascot is an okapi named Ferdinand.\n")
    assert _recalled(mp, "okapi Ferdinand mascot", "notes/okapi.md"), \
        "a file written through the mount never became recallable"
    # The new directory's marker was uploaded too: it is not text to index, and must not
    # be read as if it were (it has no content in the cache).
    (mp / "notes/empty-dir").mkdir()
    (mp / "notes/later.md").write_text("Written after the empty directory was made.\n")
    _recalled(mp, "written after the empty directory", "notes/later.md")
    assert "could not index" not in m.log.read_text()


def _recalled(mp: Path, query: str, path: str, timeout: float = 60) -> bool:
    """Whether ``path`` comes among the cards of ``.recall/<query>.json`` within ``timeout``
    (the mount indexes what it uploads, in the background)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = (mp / ".recall" / f"{query}.json").read_text()
        if any(c["path"] == path for c in json.loads(out)["cards"]):
            return True
        time.sleep(0.5)
    return False
