"""A mount answers its first recall from the parts of the index it fetched first (issue 17),
says which parts it searched, and takes in the others as they arrive.

Real FUSE mount, real S3 (``rclone serve s3``) behind the benchmarks' proxy, which holds
back (stalls) every GET of the two older quarters' parts until the test lets them through:
what the first recall searched cannot depend on timing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.cache.search.localindex import build_index
from brainfs.cache.search.shardsync import read_manifest

from helpers import NO_RELIST, upload_tree, wait_for, write_tree

pytestmark = [pytest.mark.mount, pytest.mark.model, pytest.mark.s3]

OLD = "sessions/2024-02-10-kyoto/transcript.md"      # 2024-Q1
MIDDLE = "sessions/2025-05-03-osaka/transcript.md"   # 2025-Q2
NEW = "sessions/2026-01-10-budget/transcript.md"     # 2026-Q1


def _session(sid: str, date: str, n: int, line: str) -> str:
    return (f"---\nsession: {sid}\ndate: {date}T10:00:00\nparticipants: [Nadia, Assistant]\n---\n"
            f"# {sid}\n\n[D{n}:1] Nadia: {line}\n\n[D{n}:2] Assistant: Noted.\n")


TREE = {
    "GUIDE.md": "Keep answers short.\n",
    "knowledge/INDEX.md": "- [[mascots]] — the office mascots\n",
    "knowledge/mascots.md": "---\ntitle: Mascots\ntype: topic\n---\nThe okapi mascot lives in the lab.\n",
    OLD: _session("2024-02-10-kyoto", "2024-02-10", 1, "In Kyoto we named the okapi mascot Ferdinand."),
    MIDDLE: _session("2025-05-03-osaka", "2025-05-03", 2, "In Osaka the okapi mascot got a scarf."),
    NEW: _session("2026-01-10-budget", "2026-01-10", 3, "The okapi mascot budget is due on Friday."),
}


def test_first_recall_searches_the_parts_fetched_first(store: ObjectStore, corpus, mounter, cfg,
                                                        s3_server, tmp_path: Path, embedder) -> None:
    from benchmarks.s3proxy import FaultPlan, S3Proxy

    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build", embedder)
    manifest = read_manifest(store)
    assert manifest is not None and set(manifest.shards) == {"core", "2024-Q1", "2025-Q2", "2026-Q1"}
    host, port = s3_server.url.removeprefix("http://").split(":")
    proxy = S3Proxy((host, int(port)), delay=0.0, faults=FaultPlan(stall_seconds=6.0))
    proxy.start()
    try:
        proxy.force("stall", count=1000, methods={"GET"}, key_pattern=r"index/(2024-Q1|2025-Q2)\.sqlite")
        m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                    env_extra={**NO_RELIST, "BRAINFS_RECALL_FIRST_INDEX_BYTES": "1"})
        mp = m.mountpoint
        first = json.loads((mp / ".recall" / "okapi mascot.json").read_text())
        assert "error" not in first, first
        assert first["why"].endswith("still downloading: 2025-Q2, 2024-Q1"), first["why"]
        assert "searched 2 of 4 index parts (core, 2026-Q1)" in first["why"]
        found = {c["path"] for c in first["cards"]}
        assert NEW in found and "knowledge/mascots.md" in found
        assert OLD not in found and MIDDLE not in found
        # What it downloaded: those two parts and nothing else.
        index = m.status()["index"]
        assert index["first_parts"] == ["core", "2026-Q1"]
        sizes = {n: s.bytes for n, s in manifest.shards.items()}
        assert index["first_bytes"] == sizes["core"] + sizes["2026-Q1"] < sum(sizes.values())
        local = next(cfg.cache_dir.rglob("index/manifest.json")).parent
        assert sorted(p.name for p in local.glob("*.sqlite")) == ["2026-Q1.sqlite", "core.sqlite"]

        # Let the older parts through: the mount tries again, and they join the search.
        proxy.clear_forced()
        wait_for(lambda: m.status()["index"]["parts_local"] == 4, timeout=60, what="all parts local")
        later = json.loads((mp / ".recall" / "okapi mascot [k=10].json").read_text())
        assert "still downloading" not in later["why"], later["why"]
        assert {OLD, MIDDLE, NEW} <= {c["path"] for c in later["cards"]}
        assert m.status()["index"]["downloaded_bytes"] == sum(sizes.values())
    finally:
        proxy.stop()
