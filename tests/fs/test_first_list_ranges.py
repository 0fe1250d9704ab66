"""A mount started from the listing snapshot serves a packed file as soon as the key range
of the real LIST holding it has vouched for its ETag, not once the whole LIST is in; a
packed file another writer changed is never served from the pack (fs/SEMANTICS.md)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.s3proxy import FaultPlan
from brainfs.backend import listing
from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import build_pack

from helpers import NO_RELIST, wait_for

pytestmark = pytest.mark.mount

#: Three key ranges at the snapshot's keys (cut every 900): GUIDE.md and p0000-p0898,
#: p0899-p1798, p1799-p1999.
PAGES = 2000


def _page(i: int, who: str = "first") -> bytes:
    return f"---\ntitle: page {i:04d}\n---\n\nthe {who:>6} writer's fact {i:04d}\n".encode()


def _read_in_thread(path: Path) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["data"] = path.read_bytes()
        except OSError as e:
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_a_packed_file_reads_once_its_range_is_listed_and_a_changed_one_never_stale(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, proxy) -> None:
    files = {f"knowledge/p{i:04d}.md": _page(i) for i in range(PAGES)}
    files["GUIDE.md"] = b"the guide\n"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: store.put(kv[0], kv[1]), files.items()))
    build_pack(store, cfg)
    listing.write(store, list(store.list()))
    # Another writer after the snapshot and the pack: both name the old versions. One in
    # the first range, one in the stalled last range; the same size, so only the bytes
    # tell the pack's copy from the bucket's.
    changed = {p: _page(int(p[-7:-3]), "second") for p in ("knowledge/p0500.md", "knowledge/p1900.md")}
    for p, data in changed.items():
        assert len(data) == len(files[p])
        store.put(p, data)
    files.update(changed)
    # The daemon's LIST of the last range stalls (5 s each attempt, again and again) until
    # released below; the other ranges come back at once.
    proxy.set_faults(FaultPlan(stall_seconds=5.0))
    proxy.force("stall", count=10**6, methods={"GET"}, query_pattern=r"start-after=[^&]*p1798\.md")
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=30.0, max_attempts=10),
                env_extra=NO_RELIST)
    mp = m.mountpoint
    st = m.status()
    assert st["startup"]["listing_from"] == "snapshot"
    assert st["startup"]["preload_from_pack"] == len(files)  # the snapshot vouched for all
    stale = {p: _read_in_thread(mp / p) for p in changed}
    # Packed files of the first two ranges read while the last range's LIST is still out.
    for p in ("GUIDE.md", "knowledge/p0000.md", "knowledge/p0898.md", "knowledge/p0899.md",
              "knowledge/p1500.md"):
        assert (mp / p).read_bytes() == files[p], p
    assert m.status()["listing"] == "snapshot", "read only once the whole LIST was in"
    assert proxy.stats["faults"]["stall"] >= 1
    # The changed ones were not served from the pack meanwhile: they wait for the whole
    # LIST (which replaces them) and then give the bucket's version.
    for p, (t, out) in stale.items():
        assert "data" not in out or out["data"] == changed[p], f"{p}: the pack's stale copy"
    proxy.clear_forced()
    wait_for(lambda: m.status()["listing"] == "snapshot, listed", timeout=60, what="the whole LIST")
    for p, (t, out) in stale.items():
        t.join(timeout=60)
        assert out.get("data") == changed[p], (p, out)
    assert (mp / "knowledge/p1999.md").read_bytes() == files["knowledge/p1999.md"]
    assert m.stop() == 0
