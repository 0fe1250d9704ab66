"""The preload pack against what changes while its files are unpacked: a fetch from the
pack that is still in flight when the file is written, uploaded or changed in the bucket
must never install the pack's copy over the newer truth; a pack taken on a listing
snapshot's word serves nothing until a real listing has checked it; a damaged pack body is
never served. (The mount-level races are in tests/fs/test_preload_unpack.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.errors import Corrupt
from brainfs.backend.store import ObjectInfo, ObjectStore
from brainfs.cache.local.pack import PackView, build_pack, encode
from brainfs.cache.local.workingset import WorkingSet

s3 = pytest.mark.s3


@pytest.fixture
def ws(store: ObjectStore, cfg: Config, tmp_path: Path) -> Iterator[WorkingSet]:
    w = WorkingSet(tmp_path / "ws", store, cfg)
    yield w
    w.close()


def _packed(ws: WorkingSet, store: ObjectStore, cfg: Config, files: dict[str, bytes],
            objs: list[ObjectInfo] | None = None, verified: bool = True) -> list[str]:
    for p, data in files.items():
        store.put(p, data)
    build_pack(store, cfg)
    ws.sync_listing(objs if objs is not None else store.list())
    pack = ws.load_pack()
    assert pack is not None
    served, rest = (ws.use_pack(pack, ws.preload_plan()) if verified
                    else ws.use_pack(pack, ws.preload_plan(), verified=False))
    assert sorted(served) == sorted(files) and rest == []
    return served


def _write(ws: WorkingSet, path: str, data: bytes) -> None:
    """A committed write of ``path``, as the mount's close makes it."""
    tmp = ws.blobs.new_shadow(path, copy_current=False)
    with open(tmp, "wb") as f:
        f.write(data)
    size, digest = ws.blobs.seal_shadow(tmp)
    ws.apply_commit(path, size, digest, tmp)


def content(ws: WorkingSet, path: str) -> bytes:
    return ws.blobs.location(path).read_bytes()


@s3
def test_a_fetch_from_the_pack_in_flight_never_replaces_a_write_uploaded_meanwhile(
        ws: WorkingSet, store: ObjectStore, cfg: Config) -> None:
    _packed(ws, store, cfg, {"notes/a.md": b"the packed version\n"})
    in_flight = ws.fetch(["notes/a.md"])  # the unpacking's batch, staged, not applied yet
    _write(ws, "notes/a.md", b"written in the mount meanwhile\n")
    assert ws.flush() == 0  # uploaded: the file is clean ("local") again
    assert ws.apply_fetched(in_flight) == {}
    assert content(ws, "notes/a.md") == b"written in the mount meanwhile\n"
    assert ws.get("notes/a.md").etag == store.head("notes/a.md").etag
    assert ws.check().refetch == []  # the catalog's hash is the content's
    assert store.get("notes/a.md")[0] == b"written in the mount meanwhile\n"


@s3
def test_a_pack_entry_a_listing_found_changed_is_not_installed(
        ws: WorkingSet, store: ObjectStore, cfg: Config) -> None:
    _packed(ws, store, cfg, {"notes/a.md": b"the packed version\n", "notes/b.md": b"b\n"})
    in_flight = ws.fetch(["notes/a.md"])
    store.put("notes/a.md", b"another writer's version\n")
    ws.sync_listing(store.list())
    # No longer listed on the pack's behalf; what the pack gave is not installed.
    assert ws.listdir("notes") == [("b.md", False)]
    assert ws.apply_fetched(in_flight) == {}
    assert not ws.get("notes/a.md").is_local
    assert ws.materialize(["notes/a.md"]) == {}
    assert content(ws, "notes/a.md") == b"another writer's version\n"
    assert ws.get("notes/a.md").etag == store.head("notes/a.md").etag


@s3
def test_a_pack_taken_on_a_snapshots_word_serves_nothing_before_a_listing(
        ws: WorkingSet, store: ObjectStore, cfg: Config) -> None:
    files = {"notes/a.md": b"the packed version\n", "notes/b.md": b"b\n"}
    for p, data in files.items():
        store.put(p, data)
    snapshot = list(store.list())  # as a mount left it: both at the ETags the pack has
    build_pack(store, cfg)
    store.put("notes/a.md", b"another writer's version\n")  # after both
    ws.sync_listing(snapshot)
    pack = ws.load_pack()
    served, _ = ws.use_pack(pack, ws.preload_plan(), verified=False)
    assert sorted(served) == sorted(files)
    assert ws.apply_fetched(ws.fetch(["notes/a.md"])) == {}  # a GET, not the pack
    assert content(ws, "notes/a.md") == b"another writer's version\n"
    # A real listing vouches for the rest: served from the pack, no GET (the object is gone).
    ws.sync_listing(store.list())
    assert ws.pack_verified
    store.delete("notes/b.md")
    assert ws.apply_fetched(ws.fetch(["notes/b.md"])) == {}
    assert content(ws, "notes/b.md") == b"b\n"


def test_a_damaged_pack_body_is_never_served() -> None:
    import hashlib

    data = b"the true bytes\n"
    etag = hashlib.md5(data).hexdigest()
    blob = encode([("a.md", etag, data), ("b.md", "0123-2", b"multipart etags are not checked")])
    assert PackView(blob).get("a.md", etag) == data
    flipped = blob.replace(b"true", b"tRue")
    assert PackView(flipped).get("a.md", etag) is None
    assert PackView(flipped).get("b.md", "0123-2") == b"multipart etags are not checked"
    with pytest.raises(Corrupt):
        PackView(blob[:-1])
    # Sizes that add up only with a negative one: not a pack.
    import json
    import struct

    manifest = json.dumps([["a.md", etag, -5], ["b.md", etag, 10]]).encode()
    with pytest.raises(Corrupt):
        PackView(b"BFSPACK1" + struct.pack(">Q", len(manifest)) + manifest + b"12345")
