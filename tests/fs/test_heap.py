"""The daemon's cyclic-GC figures and the freeze of its long-lived objects (fs/heap.py)."""

from __future__ import annotations

import gc

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.fs.heap import GcStats, freeze_long_lived


def test_gc_stats_count_collections_by_generation() -> None:
    st = GcStats()
    st.install()
    try:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    finally:
        st.uninstall()
    d = st.as_dict()
    assert d["collections"][0] >= 1 and d["collections"][2] >= 2
    assert all(s >= 0 for s in d["seconds"])
    gc.collect(2)
    assert st.as_dict()["collections"][2] == d["collections"][2]  # uninstalled: no longer counted


def test_freeze_moves_live_objects_out_of_the_collector() -> None:
    keep = [object() for _ in range(1000)]
    try:
        assert freeze_long_lived() >= len(keep)
        assert gc.get_freeze_count() >= len(keep)
    finally:
        gc.unfreeze()


@pytest.mark.s3
def test_a_mount_freezes_its_heap_unless_told_not_to(corpus: CorpusURL, store: ObjectStore,
                                                     cfg: Config, mounter) -> None:
    store.put("knowledge/a.md", b"a page\n")
    m = mounter(corpus)
    st = m.status()["gc"]
    assert st["frozen"] > 10_000 and len(st["collections"]) == 3
    assert m.stop() == 0
    m2 = mounter(corpus, name="mnt2", env_extra={"BRAINFS_GC_FREEZE": "false"})
    assert m2.status()["gc"]["frozen"] == 0
    assert m2.stop() == 0
