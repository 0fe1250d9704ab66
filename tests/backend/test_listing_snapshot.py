"""The listing snapshot (backend/listing.py): a mount with an empty cache starts from one
GET, resolves names the snapshot lacks against the real LIST, and keeps the snapshot in
agreement with the real LIST after uploads, deletes and another writer's changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from brainfs.backend import listing
from brainfs.backend.keys import LISTING_KEY
from brainfs.backend.store import ObjectInfo, ObjectStore
from helpers import upload_tree, wait_for, write_tree

TREE = {
    "GUIDE.md": "rules\n",
    "notes/a.md": "a\n",
    "notes/b.md": "b\n",
    "sessions/2026-01-02-kyoto/summary.md": "kyoto\n",
}
# Relist every second and rewrite the snapshot whenever it differs.
FAST = {"BRAINFS_RELIST_SECONDS": "1", "BRAINFS_LISTING_SNAPSHOT_SECONDS": "0"}


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", TREE)
    upload_tree(store, src)
    return src


def status(mp: Path) -> dict:
    return json.loads((mp / ".brainfs/status").read_text())


def agrees(store: ObjectStore) -> bool:
    """The snapshot in the bucket lists exactly what the real LIST does."""
    snap = listing.read(store)
    return snap is not None and listing.signature(snap[0]) == listing.signature(store.list())


@pytest.mark.unit
def test_snapshot_round_trip_and_damage() -> None:
    objs = [ObjectInfo("b.md", 2, "e2", 2.0), ObjectInfo("a.md", 1, "e1", 1.0),
            ObjectInfo(LISTING_KEY, 9, "e9", 9.0)]
    back = listing.decode(listing.encode(objs))
    assert [o.path for o in back] == ["a.md", "b.md"], "sorted, without the snapshot itself"
    assert listing.signature(back) == listing.signature(objs)
    assert listing.signature(objs[:1]) != listing.signature(objs)
    for bad in (b"", b"not gzip", listing.encode([])[:-4]):
        with pytest.raises(ValueError):
            listing.decode(bad)


def test_snapshot_agrees_with_the_list_after_uploads_deletes_and_another_writer(
        seeded, corpus, store, mounter) -> None:
    m = mounter(corpus, env_extra=FAST)
    mp = m.mountpoint
    assert status(mp)["startup"]["listing_from"] == "list", "no snapshot yet: a LIST"
    wait_for(lambda: agrees(store), what="first snapshot")
    (mp / "notes/c.md").write_text("c\n")   # an upload
    (mp / "notes/a.md").unlink()             # a delete
    os.mkdir(mp / "empty")                   # a directory marker
    store.put("notes/other.md", b"another writer\n")
    store.delete("notes/b.md")
    wait_for(lambda: agrees(store) and "notes/other.md" in
             {o.path for o in listing.read(store)[0]}, what="snapshot after the changes")
    assert m.stop() == 0
    assert agrees(store), "the unmount leaves it in agreement"


def test_an_empty_cache_starts_from_the_snapshot_and_resolves_what_it_lacks(
        seeded, corpus, store, mounter, cfg, tmp_path) -> None:
    m = mounter(corpus)
    assert m.stop() == 0
    assert agrees(store)
    # Changes nobody put in the snapshot.
    store.put("notes/new.md", b"new since the snapshot\n")
    store.delete("notes/b.md")
    fresh = cfg.override(cache_dir=tmp_path / "fresh-cache")
    m = mounter(corpus, name="fresh", cfg=fresh)
    mp = m.mountpoint
    assert status(mp)["startup"]["listing_from"] == "snapshot"
    # A name the snapshot lacks is resolved by the real LIST, not called absent.
    assert (mp / "notes/new.md").read_text() == "new since the snapshot\n"
    wait_for(lambda: not (mp / "notes/b.md").exists(), what="the deleted file to go")
    m.wait_listed()
    assert status(mp)["listing"] == "snapshot, listed"
    assert (mp / "GUIDE.md").read_text() == "rules\n"


def test_a_directory_removed_after_the_snapshot_does_not_stick(
        seeded, corpus, store, mounter, cfg, tmp_path) -> None:
    """A directory the snapshot still has but the bucket no longer does goes with the real
    LIST: a stale snapshot never brings an empty directory back for good."""
    m = mounter(corpus)
    os.makedirs(m.mountpoint / "gone/deeper")
    assert m.stop() == 0
    assert {"gone/.brainfs-dir", "gone/deeper/.brainfs-dir"} <= {o.path for o in listing.read(store)[0]}
    store.delete("gone/deeper/.brainfs-dir")  # another mount's rmdir, after the snapshot
    store.delete("gone/.brainfs-dir")
    m = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert status(m.mountpoint)["startup"]["listing_from"] == "snapshot"
    wait_for(lambda: not (m.mountpoint / "gone").exists(), what="the removed directory to go")
    assert m.stop() == 0
    m = mounter(corpus, name="again", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert not (m.mountpoint / "gone").exists()


def test_a_damaged_snapshot_costs_only_a_list(seeded, corpus, store, mounter, cfg, tmp_path) -> None:
    store.put(LISTING_KEY, b"garbage")
    m = mounter(corpus, env_extra=FAST)
    mp = m.mountpoint
    assert status(mp)["startup"]["listing_from"] == "list"
    assert status(mp)["listing"] == "list"
    assert (mp / "notes/a.md").read_text() == "a\n"
    assert "not a listing snapshot" in m.log.read_text()
    wait_for(lambda: agrees(store), what="the snapshot rewritten")
