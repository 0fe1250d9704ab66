"""The cache layer: ``cache/local/catalog.py``, ``cache/local/blobs.py`` and ``cache/local/workingset.py``.

Pure tests (``store=None``) are marked ``unit``; tests that fetch or upload use the real
rclone S3 server from ``conftest.py`` and are marked ``s3``. Every S3 working set is
checked S3QL-style at teardown: a consistency check on a healthy cache must find nothing
to repair, and a fresh WorkingSet opened on the same directory must see the same rows.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import STAMP_META, ObjectInfo, ObjectStore
from brainfs.cache.local.blobs import Blobs, content_hash
from brainfs.cache.local.catalog import Catalog, FileRow
from brainfs.cache.local.workingset import (
    CacheError,
    Exists,
    FetchResult,
    IsADirectory,
    NotADirectory,
    NotEmpty,
    NotFound,
    WorkingSet,
    commit_shadow,
    conflict_name,
    is_marker,
)

unit = pytest.mark.unit
s3 = pytest.mark.s3

CONFLICT_RE = r"\.conflict-\d{8}T\d{9}-[A-Za-z0-9_-]+"


# ----------------------------------------------------------------------------- helpers



def _files_pending(ws) -> list:
    """The journal's file rows (directory markers, journaled by mkdir and friends, are
    checked by tests of their own)."""
    return [j for j in ws.pending() if not is_marker(j.path)]

def obj(path: str, etag: str = "e1", size: int = 10, mtime: float = 1_700_000_000.0) -> ObjectInfo:
    return ObjectInfo(path, size, etag, mtime)


def listing(*objs: ObjectInfo) -> list[ObjectInfo]:
    """What S3 returns: keys in lexicographic (byte) order."""
    return sorted(objs, key=lambda o: o.path.encode())


def make_local(ws: WorkingSet, path: str, data: bytes, etag: str = "e1") -> FileRow:
    """Give a listed file a clean local copy as a fetch would (no backend needed)."""
    h = ws.blobs.write(path, data)
    errors = ws.apply_fetched([FetchResult(path, len(data), etag, h)])
    assert errors == {}
    row = ws.get(path)
    assert row is not None and row.state == "local"
    return row


def write(ws: WorkingSet, path: str, data: bytes, append: bool = False) -> FileRow:
    """A write as the mount does it: (create), shadow, write, commit (fsync+rename), record."""
    if ws.get(path) is None:
        ws.create(path)
    shadow = ws.blobs.new_shadow(path, copy_current=append)
    with open(shadow, "ab" if append else "wb") as f:
        f.write(data)
    size, digest = commit_shadow(ws.blobs, path, shadow)
    assert not os.path.exists(shadow)
    return ws.apply_commit(path, size, digest)


def content(ws: WorkingSet, path: str) -> bytes:
    return ws.blobs.location(path).read_bytes()


def rows_of(ws: WorkingSet) -> dict[str, tuple]:
    return {p: (r.size, r.etag, r.hash, r.state, r.pinned) for p, r in ws.files.items()}


def assert_healthy(ws: WorkingSet, cache_dir: Path, cfg: Config) -> None:
    """The in-memory view equals the catalog, and a consistency check repairs nothing."""
    mem = rows_of(ws)
    journal = [(j.path, j.op, j.hash, j.base) for j in _files_pending(ws)]
    again = WorkingSet(cache_dir, None, cfg)
    try:
        assert rows_of(again) == mem
        rep = again.check()
        assert (rep.temp_files_removed, rep.refetch, rep.journal_added, rep.journal_dropped,
                rep.orphans_removed, rep.corrupt_dirty) == (0, [], [], [], 0, []), rep.summary()
        assert [(j.path, j.op, j.hash, j.base) for j in _files_pending(again)] == journal
    finally:
        again.catalog.close()


@pytest.fixture
def ucfg() -> Config:
    return Config().override(cache_budget_bytes=10**9)


@pytest.fixture
def uws(tmp_path: Path, ucfg: Config) -> Iterator[WorkingSet]:
    """A working set with no backend."""
    ws = WorkingSet(tmp_path / "uws", None, ucfg)
    yield ws
    ws.catalog.close()


@pytest.fixture
def open_ws(store: ObjectStore, cfg: Config, tmp_path: Path) -> Iterator[Callable[..., WorkingSet]]:
    """Factory of working sets on the test corpus; each is checked and closed at teardown."""
    made: list[tuple[WorkingSet, Path]] = []

    def make(name: str = "ws", store_: ObjectStore | None = store) -> WorkingSet:
        d = tmp_path / name
        ws = WorkingSet(d, store_, cfg)
        made.append((ws, d))
        return ws

    yield make
    for ws, d in made:
        try:
            assert_healthy(ws, d, cfg)
        finally:
            ws.close()


@pytest.fixture
def ws(open_ws: Callable[..., WorkingSet]) -> WorkingSet:
    return open_ws()


def seed(store: ObjectStore, files: dict[str, bytes]) -> None:
    for p, data in files.items():
        store.put(p, data)


# ============================================================================ catalog / blobs


@unit
def test_blobs_write_is_atomic_and_hashed(tmp_path: Path) -> None:
    b = Blobs(tmp_path)
    h = b.write("knowledge/kyoto.md", b"hello")
    assert h == content_hash(b"hello")
    assert b.location("knowledge/kyoto.md").read_bytes() == b"hello"
    assert list(b.tmp.iterdir()) == []  # no temp file left behind
    assert b.verify("knowledge/kyoto.md", h, 5)
    assert not b.verify("knowledge/kyoto.md", h, 6)
    assert not b.verify("knowledge/kyoto.md", content_hash(b"other"))
    assert not b.verify("missing.md", h)
    # Flat names: a hostile corpus path never reaches the local filesystem.
    assert b.location("../../etc/passwd").parent == b.data
    assert len(b.name("x" * 900)) == 32
    b.remove("knowledge/kyoto.md")
    b.remove("knowledge/kyoto.md")  # idempotent
    assert b.names() == set()


@unit
def test_blobs_shadow_keeps_readers_on_the_committed_version(tmp_path: Path) -> None:
    b = Blobs(tmp_path)
    b.write("a.md", b"v1")
    shadow = b.new_shadow("a.md", copy_current=True)
    assert Path(shadow).read_bytes() == b"v1"
    with open(shadow, "ab") as f:
        f.write(b"+v2")
    assert b.location("a.md").read_bytes() == b"v1"  # not yet committed
    size, digest = b.commit_shadow("a.md", shadow)
    assert (size, digest) == (5, content_hash(b"v1+v2"))
    assert b.location("a.md").read_bytes() == b"v1+v2"
    assert Path(b.new_shadow("a.md", copy_current=False)).read_bytes() == b""
    assert b.sweep() == 1 and list(b.tmp.iterdir()) == []
    # A copy that is gone (evicted) fails the write instead of starting it empty, which
    # would commit the file without its old bytes; no temp file is left behind.
    with pytest.raises(FileNotFoundError):
        b.new_shadow("gone.md", copy_current=True)
    assert list(b.tmp.iterdir()) == []


@unit
def test_catalog_rows_and_journal_persist(tmp_path: Path) -> None:
    c = Catalog(tmp_path / "c.db")
    with c.transaction() as db:
        c.put_files([FileRow("a.md", 3, 1.0, "e", "h", "dirty", True, 5.0)], db)
        c.journal_put(db, "a.md", "put", "h", "e")
        c.journal_put(db, "b.md", "delete", "", "e2")
    c.set_dir("d", True)
    c.close()
    c = Catalog(tmp_path / "c.db")
    assert c.all_files() == [FileRow("a.md", 3, 1.0, "e", "h", "dirty", True, 5.0)]
    assert [(j.path, j.op, j.hash, j.base) for j in c.journal()] == [
        ("a.md", "put", "h", "e"), ("b.md", "delete", "", "e2")]
    assert c.all_dirs() == ["d"]
    with c.transaction() as db:
        # journal_done only removes the row that was carried out.
        assert not c.journal_done(db, "a.md", "put", "older-hash")
        assert c.journal_done(db, "a.md", "put", "h")
    assert [j.path for j in c.journal()] == ["b.md"]
    # A failed transaction leaves nothing behind.
    with pytest.raises(RuntimeError):
        with c.transaction() as db:
            c.delete_files(["a.md"], db)
            raise RuntimeError("boom")
    assert [r.path for r in c.all_files()] == ["a.md"]
    c.close()


# ============================================================================ listing


@unit
def test_sync_listing_new_changed_removed_dirty(uws: WorkingSet, tmp_path: Path, ucfg: Config) -> None:
    ws = uws
    st = ws.sync_listing(listing(obj("GUIDE.md"), obj("knowledge/a.md"), obj("knowledge/b.md"),
                                 obj("notes/t/c.md"), obj("gone.md")))
    assert st == {"added": 5, "changed": 0, "removed": 0, "total": 5}
    assert ws.get("knowledge/a.md").state == "remote"
    assert ws.is_dir("knowledge") and ws.is_dir("notes/t") and not ws.is_dir("GUIDE.md")

    make_local(ws, "knowledge/a.md", b"old a", etag="e1")
    make_local(ws, "knowledge/b.md", b"same b", etag="e1")
    write(ws, "GUIDE.md", b"my edit", append=False)  # dirty, based on e1

    st = ws.sync_listing(listing(
        obj("GUIDE.md", etag="e2"),  # changed remotely, but dirty here: kept as is
        obj("knowledge/a.md", etag="e2", size=20),  # changed: the clean copy is dropped
        obj("knowledge/b.md", etag="e1"),  # unchanged: the local copy stays
        obj("notes/t/c.md"),
        # gone.md removed remotely
    ))
    assert st == {"added": 0, "changed": 1, "removed": 1, "total": 4}
    a = ws.get("knowledge/a.md")
    assert (a.state, a.etag, a.size, a.hash) == ("remote", "e2", 20, "")
    assert not ws.blobs.location("knowledge/a.md").exists()
    assert ws.get("knowledge/b.md").state == "local" and content(ws, "knowledge/b.md") == b"same b"
    g = ws.get("GUIDE.md")
    assert g.state == "dirty" and g.etag == "e1" and content(ws, "GUIDE.md") == b"my edit"
    assert ws.get("gone.md") is None and "gone.md" not in ws.children[""]

    # Removed remotely while dirty here: kept (the local write will recreate it).
    st = ws.sync_listing(listing(obj("knowledge/a.md", etag="e2"), obj("knowledge/b.md")))
    assert ws.get("GUIDE.md").state == "dirty"
    assert ws.get("notes/t/c.md") is None and not ws.is_dir("notes")  # empty dirs vanish
    assert st["removed"] == 1

    # All of it is in the catalog.
    assert_healthy(ws, tmp_path / "uws", ucfg)


@unit
def test_key_that_is_file_and_prefix_dir_wins(uws: WorkingSet) -> None:
    """``a`` and ``a/b`` both exist as keys (S3 allows it, a filesystem cannot): the
    directory wins and the file is reported in ``skipped`` -- whatever order S3 lists
    them in (S3 lists ``a`` before ``a/b``)."""
    uws.sync_listing(listing(obj("a"), obj("a/b"), obj("k.md"), obj("k.md/x.md")))
    assert uws.is_dir("a") and uws.get("a/b") is not None
    assert uws.is_dir("k.md") and uws.get("k.md/x.md") is not None
    assert uws.get("a") is None and uws.get("k.md") is None
    assert sorted(p for p, _ in uws.skipped) == ["a", "k.md"]


@unit
def test_key_that_is_file_and_prefix_reverse_order(uws: WorkingSet) -> None:
    uws.sync_listing([obj("a/b"), obj("a")])
    assert uws.is_dir("a") and uws.get("a/b") is not None and uws.get("a") is None
    assert [p for p, _ in uws.skipped] == ["a"]


@unit
def test_internal_prefix_never_enters_the_tree(uws: WorkingSet) -> None:
    uws.sync_listing(listing(obj(".brainfs/index.sqlite"), obj(".brainfs/probe/x"),
                             obj(".brainfs"), obj(".brainfsx.md"), obj("GUIDE.md")))
    assert ".brainfs" not in uws.children[""]
    assert uws.get(".brainfs/index.sqlite") is None and not uws.is_dir(".brainfs")
    assert uws.get(".brainfsx.md") is not None  # only the exact prefix is internal
    for make in (uws.create, uws.mkdir):
        with pytest.raises(CacheError):
            make(".brainfs")
    uws.sync_listing([])  # nothing of it ever appears, nothing breaks
    assert uws.files == {}


@unit
def test_listdir_shows_only_the_working_set(uws: WorkingSet) -> None:
    ws = uws
    ws.sync_listing(listing(obj("GUIDE.md"), obj("knowledge/a.md"), obj("knowledge/b.md"),
                            obj("notes/t/c.md"), obj("sessions/s1/transcript.md"),
                            obj("sessions/s2/transcript.md")))
    assert ws.listdir("") == []  # nothing local yet
    make_local(ws, "knowledge/a.md", b"a")
    make_local(ws, "sessions/s1/transcript.md", b"t")
    assert ws.listdir("") == [("knowledge", True), ("sessions", True)]
    assert ws.listdir("knowledge") == [("a.md", False)]
    assert ws.listdir("sessions") == [("s1", True)]
    assert ws.listdir("notes") == []  # a directory of the corpus, nothing local in it
    with pytest.raises(NotFound):
        ws.listdir("nope")
    # A locally created directory shows even when empty, and shows its parent.
    ws.mkdir("notes/new")
    assert ws.listdir("") == [("knowledge", True), ("notes", True), ("sessions", True)]
    assert ws.listdir("notes") == [("new", True)]
    # A new local file shows; GUIDE.md (remote) still does not.
    write(ws, "notes/new/card.md", b"fact")
    assert ws.listdir("notes/new") == [("card.md", False)]
    assert ("GUIDE.md", False) not in ws.listdir("")
    # An unlinked file leaves the listing.
    ws.unlink("knowledge/a.md")
    assert ("a.md", False) not in (ws.listdir("knowledge") if ws.is_dir("knowledge") else [])


# ============================================================================ preload


@unit
def test_preload_plan_globs_transcripts_budget_and_size(tmp_path: Path) -> None:
    cfg = Config().override(
        preload_globs=["GUIDE.md", "knowledge/*"], preload_recent_transcripts=2,
        preload_budget_bytes=10_000, preload_max_file_bytes=1_000)
    ws = WorkingSet(tmp_path / "p", None, cfg)
    try:
        ws.sync_listing(listing(
            obj("GUIDE.md", size=100), obj("knowledge/a.md", size=100),
            obj("knowledge/big.md", size=5_000),  # over preload_max_file_bytes
            obj("notes/x.md", size=10),  # no glob
            *[obj(f"sessions/2024-01-0{d}/transcript.md", size=100) for d in range(1, 5)],
            obj("sessions/2024-01-04/summary.md", size=10),
        ))
        assert ws.preload_plan() == [
            "GUIDE.md", "knowledge/a.md",
            "sessions/2024-01-04/transcript.md", "sessions/2024-01-03/transcript.md",
        ]
        # A local file is not fetched again but still counts against the budget.
        make_local(ws, "GUIDE.md", b"g" * 100)
        assert "GUIDE.md" not in ws.preload_plan()
        ws.cfg = cfg.override(preload_budget_bytes=250)
        assert ws.preload_plan() == ["knowledge/a.md"]  # 100 + 100 used, 50 left
        ws.cfg = cfg.override(preload_budget_bytes=0)
        assert ws.preload_plan() == []
    finally:
        ws.catalog.close()


# ============================================================================ eviction


@unit
def test_evict_lru_over_budget_never_dirty_pinned_or_open(tmp_path: Path) -> None:
    cfg = Config().override(cache_budget_bytes=1_500)
    ws = WorkingSet(tmp_path / "e", None, cfg)
    try:
        names = ["a", "b", "c", "d", "e", "f"]
        ws.sync_listing(listing(*[obj(f"{n}.md", size=300) for n in names]))
        for i, n in enumerate(names):
            make_local(ws, f"{n}.md", bytes([65 + i]) * 300)
            ws.files[f"{n}.md"].atime = 1000.0 + i  # a is the least recently used
        ws.files["c.md"].pinned = True
        write(ws, "d.md", b"D" * 300)  # dirty
        ws.files["d.md"].atime = 1003.0
        ws.open_count["e.md"] += 1  # open
        assert ws.local_bytes == 1_800
        assert ws.evict() == ["a.md", "b.md"]  # down to 90% of the budget, oldest first
        assert ws.local_bytes == 1_200
        for n in ("a", "b"):
            assert ws.get(f"{n}.md").state == "remote"
            assert not ws.blobs.location(f"{n}.md").exists()
        assert ws.evict() == []  # under budget: nothing to do

        ws.cfg = cfg.override(cache_budget_bytes=10)
        assert ws.evict() == ["f.md"]  # the only clean, unpinned, closed file left
        assert {p for p, r in ws.files.items() if r.is_local} == {"c.md", "d.md", "e.md"}
        assert content(ws, "d.md") == b"D" * 300 and ws.get("d.md").state == "dirty"
        # Eviction is persisted.
        assert {r.path for r in ws.catalog.all_files() if r.state == "remote"} == {
            "a.md", "b.md", "f.md"}
    finally:
        ws.catalog.close()


# ============================================================================ directories


@unit
def test_mkdir_rmdir_not_empty(uws: WorkingSet, tmp_path: Path, ucfg: Config) -> None:
    ws = uws
    ws.mkdir("x")
    ws.mkdir("x/y")
    with pytest.raises(Exists):
        ws.mkdir("x")
    with pytest.raises(NotFound):
        ws.mkdir("nope/z")
    with pytest.raises(NotEmpty):
        ws.rmdir("x")
    write(ws, "x/y/f.md", b"1")
    with pytest.raises(NotADirectory):
        ws.rmdir("x/y/f.md")
    with pytest.raises(IsADirectory):
        ws.unlink("x/y")
    with pytest.raises(NotEmpty):
        ws.rmdir("x/y")
    with pytest.raises(NotFound):
        ws.rmdir("missing")
    with pytest.raises(NotFound):
        ws.rmdir("")
    # Local directories survive a restart.
    ws.catalog.close()
    ws2 = WorkingSet(tmp_path / "uws", None, ucfg)
    try:
        assert ws2.listdir("") == [("x", True)] and ws2.listdir("x") == [("y", True)]
        ws2.unlink("x/y/f.md")
        ws2.rmdir("x/y")
        ws2.rmdir("x")
        assert ws2.listdir("") == [] and not ws2.is_dir("x")
        assert ws2.catalog.all_dirs() == []
        assert _files_pending(ws2) == []  # a never-uploaded file leaves no journal row
    finally:
        ws2.catalog.close()


@unit
def test_directory_survives_unlink_of_its_last_file(uws: WorkingSet) -> None:
    """POSIX: removing the last file of a directory leaves the (empty) directory. ``rm -r d``
    unlinks d/f and then calls rmdir(d); ``rm d/f; echo x > d/g`` creates in d. Both fail
    with ENOENT if d vanished with its last file."""
    ws = uws
    ws.sync_listing(listing(obj("d/f.md"), obj("e/f.md")))
    make_local(ws, "d/f.md", b"x")
    make_local(ws, "e/f.md", b"y")
    ws.unlink("d/f.md")
    assert ws.is_dir("d"), "directory vanished with its last file"
    assert ws.listdir("d") == []
    ws.rmdir("d")  # rm -r
    assert not ws.is_dir("d")
    ws.unlink("e/f.md")
    write(ws, "e/g.md", b"z")  # rm e/f.md; echo z > e/g.md
    assert ws.listdir("e") == [("g.md", False)]


@unit
def test_nested_mkdir_rmdir_leaves_no_ghost_directory(uws: WorkingSet) -> None:
    """``x`` holds only a remote file. mkdir x/a, mkdir x/a/b, rmdir x/a/b, rmdir x/a:
    nothing local is left under x, so readdir of the root must not show it."""
    ws = uws
    ws.sync_listing(listing(obj("x/r.md")))
    assert ws.listdir("") == []
    ws.mkdir("x/a")
    ws.mkdir("x/a/b")
    assert ws.listdir("") == [("x", True)]
    ws.rmdir("x/a/b")
    ws.rmdir("x/a")
    assert ws.listdir("") == [], "x shown although it holds nothing local"


@unit
def test_nested_local_dirs_after_restart(tmp_path: Path, ucfg: Config) -> None:
    ws = WorkingSet(tmp_path / "n", None, ucfg)
    ws.sync_listing(listing(obj("x/r.md")))
    ws.mkdir("x/a")
    ws.mkdir("x/a/b")
    ws.catalog.close()
    ws = WorkingSet(tmp_path / "n", None, ucfg)
    try:
        assert ws.listdir("") == [("x", True)] and ws.listdir("x") == [("a", True)]
        ws.rmdir("x/a/b")
        ws.rmdir("x/a")
        assert ws.listdir("") == [], "x shown although it holds nothing local"
    finally:
        ws.catalog.close()


# ============================================================================ consistency check


@unit
def test_check_repairs_a_damaged_cache(tmp_path: Path, ucfg: Config) -> None:
    d = tmp_path / "chk"
    ws = WorkingSet(d, None, ucfg)
    ws.sync_listing(listing(obj("clean.md", etag="e1", size=5), obj("kept.md", etag="e1", size=4)))
    make_local(ws, "clean.md", b"hello", etag="e1")
    make_local(ws, "kept.md", b"good", etag="e1")
    write(ws, "dirty.md", b"unsaved work")
    write(ws, "lost-row.md", b"journal row deleted")
    ws.persist_atimes()
    with ws.catalog.transaction() as db:
        ws.catalog.journal_drop(db, "lost-row.md")
        ws.catalog.journal_put(db, "no-such-file.md", "put", "abc", "")
    ws.catalog.close()

    # Damage: a temp file from a crashed write, altered bytes of a clean copy (same size),
    # an orphan blob.
    (d / "tmp" / "write-crashed").write_bytes(b"half a write")
    clean = ws.blobs.location("clean.md")
    clean.write_bytes(b"hellO")
    orphan = ws.blobs.data / ("0" * 32)
    orphan.write_bytes(b"nobody's")

    ws = WorkingSet(d, None, ucfg)
    try:
        rep = ws.check()
        assert rep.temp_files_removed == 1 and list((d / "tmp").iterdir()) == []
        assert rep.refetch == ["clean.md"]
        c = ws.get("clean.md")
        assert (c.state, c.hash, c.etag) == ("remote", "", "e1")  # served again after a fetch
        assert not clean.exists()
        assert rep.journal_added == ["lost-row.md"]
        assert rep.journal_dropped == ["no-such-file.md"]
        assert rep.orphans_removed == 1 and not orphan.exists()
        assert rep.corrupt_dirty == []
        pend = {j.path: (j.op, j.hash) for j in _files_pending(ws)}
        assert pend == {"dirty.md": ("put", content_hash(b"unsaved work")),
                        "lost-row.md": ("put", content_hash(b"journal row deleted"))}
        # Untouched files are untouched.
        assert content(ws, "kept.md") == b"good" and ws.get("kept.md").state == "local"
        assert content(ws, "dirty.md") == b"unsaved work"
        assert "1 temp files removed" in rep.summary()
        assert "1 damaged copies dropped" in rep.summary()
        # A second check finds nothing more to do.
        rep2 = ws.check()
        assert (rep2.refetch, rep2.journal_added, rep2.journal_dropped, rep2.orphans_removed) == (
            [], [], [], 0)
    finally:
        ws.catalog.close()


@unit
def test_check_reports_a_damaged_dirty_file(tmp_path: Path, ucfg: Config) -> None:
    d = tmp_path / "chk2"
    ws = WorkingSet(d, None, ucfg)
    write(ws, "new.md", b"never uploaded")
    ws.catalog.close()
    ws.blobs.location("new.md").write_bytes(b"garbage!!!!!!!")
    ws = WorkingSet(d, None, ucfg)
    try:
        rep = ws.check()
        assert rep.corrupt_dirty == ["new.md"]
        # Nothing is left to upload wrong bytes from.
        assert ws.get("new.md") is None and _files_pending(ws) == []
    finally:
        ws.catalog.close()


@s3
def test_check_refetches_an_altered_clean_blob(ws: WorkingSet, store: ObjectStore,
                                               tmp_path: Path, cfg: Config) -> None:
    seed(store, {"knowledge/kyoto.md": b"# Kyoto\nmet three orgs\n"})
    ws.sync_listing(store.list())
    assert ws.materialize(["knowledge/kyoto.md"]) == {}
    loc = ws.blobs.location("knowledge/kyoto.md")
    loc.write_bytes(b"# Kyoto\nmet THREE orgs\n")  # bit rot, same size
    rep = ws.check()
    assert rep.refetch == ["knowledge/kyoto.md"]
    assert ws.get("knowledge/kyoto.md").state == "remote"
    assert ws.materialize(["knowledge/kyoto.md"]) == {}
    assert content(ws, "knowledge/kyoto.md") == b"# Kyoto\nmet three orgs\n"
    assert ws.get("knowledge/kyoto.md").hash == content_hash(b"# Kyoto\nmet three orgs\n")


# ============================================================================ fetching (S3)


@s3
def test_fetch_and_apply_fetched(ws: WorkingSet, store: ObjectStore) -> None:
    files = {"GUIDE.md": b"be brief\n", "knowledge/a.md": b"A" * 5000,
             "sessions/s1/transcript.md": b"[D1:1] Mara: hi\n"}
    seed(store, files)
    ws.sync_listing(store.list())
    store.delete("sessions/s1/transcript.md")  # listed, then gone: the fetch fails
    progress: list[int] = []
    results = ws.fetch(list(files), on_progress=progress.append)
    assert sorted(r.path for r in results) == sorted(files)
    assert progress == [1, 2, 3]
    errors = ws.apply_fetched(results)
    assert list(errors) == ["sessions/s1/transcript.md"]
    assert isinstance(errors["sessions/s1/transcript.md"], NoSuchKey)
    assert ws.get("sessions/s1/transcript.md").state == "remote"
    assert ws.health["last_error"] and "transcript" in str(ws.health["last_error"])
    for p in ("GUIDE.md", "knowledge/a.md"):
        row = ws.get(p)
        assert row.state == "local"
        assert row.hash == content_hash(files[p])
        assert row.etag == hashlib.md5(files[p]).hexdigest()
        assert row.size == len(files[p])
        assert content(ws, p) == files[p]
    assert ws.local_bytes == len(files["GUIDE.md"]) + 5000
    assert ws.listdir("") == [("GUIDE.md", False), ("knowledge", True)]
    st = ws.status()
    assert (st["local_files"], st["remote_files"], st["dirty_files"]) == (2, 1, 0)
    # Already local: materialize does nothing.
    assert ws.materialize(["GUIDE.md"]) == {}
    # Forget the failed row so the teardown check sees a consistent corpus.
    ws.sync_listing(store.list())


@s3
def test_fetch_never_clobbers_a_newer_local_write(ws: WorkingSet, store: ObjectStore) -> None:
    """A fetch that completes after the file was rewritten locally (here: removed and
    created again while the GET was in flight) must leave the local write alone, as
    apply_fetched's comment promises: the bytes on disk stay the user's."""
    seed(store, {"GUIDE.md": b"remote version\n"})
    ws.sync_listing(store.list())
    # The in-flight fetch began while GUIDE.md was remote ...
    ws.unlink("GUIDE.md")
    write(ws, "GUIDE.md", b"my newer local version\n")
    # ... and completes now.
    ws.apply_fetched(ws.fetch(["GUIDE.md"]))
    row = ws.get("GUIDE.md")
    assert row.state == "dirty"
    assert content(ws, "GUIDE.md") == b"my newer local version\n"
    assert ws.blobs.verify("GUIDE.md", row.hash, row.size)


# ============================================================================ writes and uploads (S3)


@s3
def test_create_write_flush_uploads(ws: WorkingSet, store: ObjectStore, tmp_path: Path) -> None:
    ws.mkdir("notes")
    ws.mkdir("notes/kyoto")
    row = ws.create("notes/kyoto/orgs.md")
    assert (row.state, row.etag, row.size) == ("dirty", "", 0)
    data = b"---\ntype: fact\n---\nMet Org A and Org B in Kyoto.\n"
    row = write(ws, "notes/kyoto/orgs.md", data)
    assert row.state == "dirty" and row.hash == content_hash(data) and row.size == len(data)
    pend = _files_pending(ws)
    assert [(j.path, j.op, j.hash, j.base) for j in pend] == [
        ("notes/kyoto/orgs.md", "put", content_hash(data), "")]
    with pytest.raises(NoSuchKey):
        store.head("notes/kyoto/orgs.md")  # nothing uploaded before flush

    assert ws.flush() == 0
    assert _files_pending(ws) == []
    assert store.get("notes/kyoto/orgs.md")[0] == data
    row = ws.get("notes/kyoto/orgs.md")
    assert row.state == "local" and row.etag == hashlib.md5(data).hexdigest()
    # The listing agrees with what we have: nothing changes.
    assert ws.sync_listing(store.list())["changed"] == 0

    # Modifying an existing file: the journal row is based on the ETag it was read at.
    etag0 = store.put("GUIDE.md", b"rule 1\n")
    ws.sync_listing(store.list())
    assert ws.materialize(["GUIDE.md"]) == {}
    write(ws, "GUIDE.md", b"rule 2\n", append=True)
    assert [(j.path, j.op, j.base) for j in _files_pending(ws)] == [("GUIDE.md", "put", etag0)]
    assert ws.flush() == 0
    assert store.get("GUIDE.md")[0] == b"rule 1\nrule 2\n"
    assert ws.get("GUIDE.md").etag == hashlib.md5(b"rule 1\nrule 2\n").hexdigest()


@s3
def test_unlink_journals_a_delete(ws: WorkingSet, store: ObjectStore) -> None:
    etag = store.put("notes/old.md", b"obsolete")
    ws.sync_listing(store.list())
    ws.materialize(["notes/old.md"])
    ws.unlink("notes/old.md")
    assert ws.get("notes/old.md") is None
    assert not ws.blobs.location("notes/old.md").exists()
    assert [(j.path, j.op, j.base) for j in _files_pending(ws)] == [("notes/old.md", "delete", etag)]
    store.head("notes/old.md")  # still there until flush
    assert ws.flush() == 0
    with pytest.raises(NoSuchKey):
        store.head("notes/old.md")
    with pytest.raises(NotFound):
        ws.unlink("notes/old.md")


@s3
def test_pending_delete_is_not_resurrected_by_a_listing(ws: WorkingSet, store: ObjectStore) -> None:
    """After a restart the daemon runs sync_listing *before* the journal is flushed. A file
    deleted locally (delete journaled, not yet uploaded) is still in that listing, but must
    not come back into the tree."""
    store.put("notes/old.md", b"obsolete")
    ws.sync_listing(store.list())
    ws.materialize(["notes/old.md"])
    ws.unlink("notes/old.md")
    ws.sync_listing(store.list())
    assert ws.get("notes/old.md") is None, "a deleted file came back"
    assert ws.flush() == 0
    with pytest.raises(NoSuchKey):
        store.head("notes/old.md")


@s3
def test_a_write_in_progress_outlives_another_writers_delete(ws: WorkingSet, store: ObjectStore) -> None:
    """Another writer deletes a file this cache is writing: a listing that knows of the
    write keeps the file, and one that does not (a race) cannot make the commit fail.
    Either way the write recreates the path in the bucket (fs/SEMANTICS.md)."""
    for path in ("notes/kept.md", "notes/raced.md"):
        store.put(path, b"the old card\n")
    ws.sync_listing(store.list())
    assert ws.materialize(["notes/kept.md", "notes/raced.md"]) == {}
    base = {p: ws.get(p).etag for p in ("notes/kept.md", "notes/raced.md")}
    shadows = {p: ws.blobs.new_shadow(p, copy_current=True) for p in base}
    for p in base:
        store.delete(p)
    ws.sync_listing(store.list(), writing={"notes/kept.md"})
    assert ws.get("notes/kept.md") is not None
    assert ws.get("notes/raced.md") is None  # listed away: its writer's shadow is all there is
    for p, tmp in shadows.items():
        with open(tmp, "ab") as f:
            f.write(b"edited after the delete\n")
        size, digest = ws.blobs.seal_shadow(tmp)
        ws.apply_commit(p, size, digest, tmp, base=base[p])  # KeyError for raced.md before
    assert ws.flush() == 0
    for p in base:
        assert store.get(p)[0] == b"the old card\nedited after the delete\n"
        assert ws.get(p).state == "local"
    assert "raced.md" in dict(ws.listdir("notes"))


@unit
def test_a_listed_object_with_no_etag_changes_nothing(uws: WorkingSet) -> None:
    """An object listed with an empty ETag (a PUT cut off on the embedded server, whose GET
    fails) is no version yet: the local copy stays, and no new path appears for it."""
    uws.sync_listing(listing(obj("notes/a.md")))
    make_local(uws, "notes/a.md", b"card a\n")
    st = uws.sync_listing(listing(obj("notes/a.md", etag=""), obj("notes/new.md", etag="")))
    assert (st["changed"], st["removed"], st["added"]) == (0, 0, 0)
    row = uws.get("notes/a.md")
    assert (row.state, row.etag) == ("local", "e1")  # refetched (a GET that fails) before
    assert uws.get("notes/new.md") is None
    assert uws.sync_listing(listing(obj("notes/a.md", etag="e2")))["changed"] == 1


@s3
def test_rename_file(ws: WorkingSet, store: ObjectStore) -> None:
    etag = store.put("notes/draft.md", b"a fact\n")
    ws.sync_listing(store.list())
    ws.materialize(["notes/draft.md"])
    ws.rename_file("notes/draft.md", "notes/final.md")
    assert ws.get("notes/draft.md") is None
    assert ws.get("notes/final.md").state == "dirty"
    assert content(ws, "notes/final.md") == b"a fact\n"
    assert {(j.path, j.op, j.base) for j in _files_pending(ws)} == {
        ("notes/final.md", "put", ""), ("notes/draft.md", "delete", etag)}
    assert ws.flush() == 0
    assert store.get("notes/final.md")[0] == b"a fact\n"
    with pytest.raises(NoSuchKey):
        store.head("notes/draft.md")
    assert [o.path for o in store.list()] == ["notes/final.md"]
    # A file that is not local cannot be renamed here (the mount fetches it first).
    store.put("notes/remote.md", b"r")
    ws.sync_listing(store.list())
    with pytest.raises(CacheError):
        ws.rename_file("notes/remote.md", "notes/r2.md")


@s3
def test_rename_over_an_existing_file_replaces_it(ws: WorkingSet, store: ObjectStore) -> None:
    """What every editor's atomic save does: write a temp file, rename it over the original.
    The original object must get the new bytes; nobody else wrote it, so there is no
    conflict and no conflict copy."""
    store.put("GUIDE.md", b"old guide\n")
    ws.sync_listing(store.list())
    ws.materialize(["GUIDE.md"])
    write(ws, ".GUIDE.md.swp", b"new guide\n")
    ws.rename_file(".GUIDE.md.swp", "GUIDE.md")
    assert content(ws, "GUIDE.md") == b"new guide\n"
    assert ws.flush() == 0
    paths = sorted(o.path for o in store.list())
    assert paths == ["GUIDE.md"], f"unexpected objects {paths}"
    assert store.get("GUIDE.md")[0] == b"new guide\n"
    assert ws.get("GUIDE.md").state == "local" and content(ws, "GUIDE.md") == b"new guide\n"


@s3
def test_delete_then_recreate_replaces_the_object(ws: WorkingSet, store: ObjectStore) -> None:
    """``rm f; echo new > f`` before the uploader ran: f must end with the new bytes, not
    as a conflict with itself (and the user's file must not revert to the old content)."""
    store.put("f.md", b"old\n")
    ws.sync_listing(store.list())
    ws.materialize(["f.md"])
    ws.unlink("f.md")
    write(ws, "f.md", b"new\n")
    assert ws.flush() == 0
    paths = sorted(o.path for o in store.list())
    assert paths == ["f.md"], f"unexpected objects {paths}"
    assert store.get("f.md")[0] == b"new\n"
    assert ws.get("f.md").state == "local" and content(ws, "f.md") == b"new\n"


@s3
def test_flush_keeps_pending_while_backend_is_down(open_ws: Callable[..., WorkingSet],
                                                   store: ObjectStore, corpus: CorpusURL,
                                                   cfg: Config) -> None:
    dead = ObjectStore(corpus, cfg.override(endpoint_url="http://127.0.0.1:1"))
    try:
        ws = open_ws("down", store_=dead)
        write(ws, "GUIDE.md", b"offline edit\n")
        assert ws.flush() == 1  # nothing lost, nothing done
        assert ws.get("GUIDE.md").state == "dirty"
        assert ws.health["last_error"]
        ws.store = store  # the backend is back
        assert ws.flush() == 0
        assert store.get("GUIDE.md")[0] == b"offline edit\n"
    finally:
        dead.close()


# ============================================================================ crash safety (S3)


CRASH_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from brainfs.backend.config import Config
    from brainfs.cache.local.workingset import WorkingSet, commit_shadow

    ws = WorkingSet(Path(sys.argv[1]), None, Config())

    def write(path, data, append):
        if ws.get(path) is None:
            ws.create(path)
        shadow = ws.blobs.new_shadow(path, copy_current=append)
        with open(shadow, "ab" if append else "wb") as f:
            f.write(data)
        size, digest = commit_shadow(ws.blobs, path, shadow)
        ws.apply_commit(path, size, digest)

    write("GUIDE.md", b"rule 2\\n", True)       # modify a fetched file
    write("crash.md", b"written before the crash\\n", False)
    ws.unlink("old.md")
    # A write in progress: its shadow exists, never committed.
    with open(ws.blobs.new_shadow("GUIDE.md", True), "ab") as f:
        f.write(b"uncommitted\\n")
    sys.stdout.write("committed\\n"); sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)        # no close(), no flush, no atexit
""")


@s3
def test_journal_survives_a_kill(store: ObjectStore, cfg: Config, tmp_path: Path) -> None:
    cache = tmp_path / "crash"
    seed(store, {"GUIDE.md": b"rule 1\n", "old.md": b"to delete\n"})
    ws = WorkingSet(cache, store, cfg)
    ws.sync_listing(store.list())
    assert ws.materialize(["GUIDE.md", "old.md"]) == {}
    ws.close()

    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(cache)],
                          capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert proc.stdout == b"committed\n"
    # Nothing reached S3.
    assert store.get("GUIDE.md")[0] == b"rule 1\n"
    with pytest.raises(NoSuchKey):
        store.head("crash.md")

    ws = WorkingSet(cache, store, cfg)
    try:
        rep = ws.check()
        assert rep.temp_files_removed == 1  # the uncommitted shadow
        assert (rep.refetch, rep.corrupt_dirty, rep.journal_dropped) == ([], [], [])
        assert {(j.path, j.op) for j in _files_pending(ws)} == {
            ("GUIDE.md", "put"), ("crash.md", "put"), ("old.md", "delete")}
        assert ws.flush() == 0
        assert store.get("GUIDE.md")[0] == b"rule 1\nrule 2\n"
        assert store.get("crash.md")[0] == b"written before the crash\n"
        with pytest.raises(NoSuchKey):
            store.head("old.md")
        assert_healthy(ws, cache, cfg)
    finally:
        ws.close()


# ============================================================================ conflicts (S3)


@s3
def test_upload_conflict_keeps_both_versions(open_ws: Callable[..., WorkingSet],
                                             store: ObjectStore, corpus: CorpusURL,
                                             cfg: Config) -> None:
    base_etag = store.put("notes/x.md", b"base\n")
    store_b = ObjectStore(corpus, cfg)
    try:
        a = open_ws("a")
        b = open_ws("b", store_=store_b)
        for w in (a, b):
            w.sync_listing(store.list())
            assert w.materialize(["notes/x.md"]) == {}
            assert w.get("notes/x.md").etag == base_etag
        write(a, "notes/x.md", b"A wrote this\n")
        write(b, "notes/x.md", b"B wrote this\n")
        assert a.flush() == 0
        assert store.get("notes/x.md")[0] == b"A wrote this\n"
        assert b.flush() == 0

        # S3 holds both: the original path is the first writer's, B's is a conflict copy.
        objs = {o.path: o for o in store.list()}
        assert store.get("notes/x.md")[0] == b"A wrote this\n"
        conflicts = [p for p in objs if p != "notes/x.md"]
        assert len(conflicts) == 1, objs
        cpath = conflicts[0]
        assert re.fullmatch(r"notes/x" + CONFLICT_RE + r"\.md", cpath), cpath
        assert store.get(cpath)[0] == b"B wrote this\n"

        # B sees its own bytes under the conflict name, and the original is A's again.
        assert b.get(cpath).state == "local" and content(b, cpath) == b"B wrote this\n"
        assert ("x.md", False) not in b.listdir("notes")  # back to remote
        assert (cpath.rsplit("/", 1)[1], False) in b.listdir("notes")
        assert b.get("notes/x.md").etag == objs["notes/x.md"].etag
        assert b.materialize(["notes/x.md"]) == {}
        assert content(b, "notes/x.md") == b"A wrote this\n"
        assert _files_pending(b) == [] and _files_pending(a) == []
    finally:
        store_b.close()


@s3
def test_another_writers_identical_bytes_are_not_taken_for_ours(ws: WorkingSet,
                                                                store: ObjectStore) -> None:
    """Two writers' identical bytes share an ETag (an empty file, say). After another
    writer re-wrote the same bytes, a delete from here must not take that version for
    the one it last uploaded: the PUT's stamp, not the ETag, says whose it is."""
    ws.mkdir("notes")
    write(ws, "notes/e.md", b"")
    write(ws, "notes/f.md", b"same\n")
    assert ws.flush() == 0
    ours = store.head("notes/e.md")
    assert ours.stamp, "our PUT carries a stamp"
    # Another writer (another mount: its own stamp) writes the same bytes again.
    store.put("notes/e.md", b"", metadata={STAMP_META: "another-mount"})
    store.put("notes/f.md", b"same\n", metadata={STAMP_META: "another-mount"})
    assert store.head("notes/e.md").etag == ours.etag

    ws.unlink("notes/e.md")
    assert ws.flush() == 0
    assert store.head("notes/e.md").stamp == "another-mount", "the other writer's file was deleted"
    ws.sync_listing(store.list())
    assert ws.get("notes/e.md") is not None, "the kept version comes back into the tree"

    # An overwrite based on our last upload goes to a visible conflict copy instead.
    write(ws, "notes/f.md", b"mine, newer\n")
    assert ws.flush() == 0
    assert store.get("notes/f.md")[0] == b"same\n"
    assert store.head("notes/f.md").stamp == "another-mount"
    copies = [o.path for o in store.list("notes") if o.path.startswith("notes/f.conflict-")]
    assert len(copies) == 1 and store.get(copies[0])[0] == b"mine, newer\n"


@s3
def test_two_mounts_making_one_directory_make_no_conflict_copy(
        open_ws: Callable[..., WorkingSet], store: ObjectStore, corpus: CorpusURL,
        cfg: Config) -> None:
    """Directory markers are everyone's: another mount's marker for the same directory
    (same empty bytes, another stamp) is not a conflict."""
    store_b = ObjectStore(corpus, cfg)
    try:
        a, b = open_ws("a"), open_ws("b", store_=store_b)
        b.mkdir("w")
        assert b.flush() == 0
        a.mkdir("w")
        assert a.flush() == 0
        assert [o.path for o in store.list()] == ["w/.brainfs-dir"]
    finally:
        store_b.close()


@s3
def test_a_directory_another_mount_removed_goes_at_the_next_listing(
        open_ws: Callable[..., WorkingSet], store: ObjectStore, corpus: CorpusURL,
        cfg: Config) -> None:
    """An empty directory whose marker is gone from the listing goes (another mount
    removed it); one whose marker upload is still pending stays."""
    store_b = ObjectStore(corpus, cfg)
    try:
        a, b = open_ws("a"), open_ws("b", store_=store_b)
        a.mkdir("e")
        a.mkdir("e/deeper")
        assert a.flush() == 0
        b.sync_listing(store.list())
        assert b.is_dir("e/deeper")
        b.mkdir("mine")  # not uploaded yet: its marker is pending
        a.rmdir("e/deeper")
        a.rmdir("e")
        assert a.flush() == 0
        b.sync_listing(store.list())
        assert not b.is_dir("e/deeper") and not b.is_dir("e")
        assert b.is_dir("mine"), "a pending directory is not taken for a removed one"
        assert b.flush() == 0
        b.sync_listing(store.list())
        assert b.is_dir("mine")
    finally:
        store_b.close()


@s3
def test_our_own_identical_bytes_are_ours(ws: WorkingSet, store: ObjectStore) -> None:
    """The stamp check does not turn our own versions into conflicts: writing the same
    bytes again, and a delete of what we uploaded, go through."""
    ws.mkdir("notes")
    write(ws, "notes/g.md", b"v\n")
    assert ws.flush() == 0
    write(ws, "notes/g.md", b"v\n")
    assert ws.flush() == 0
    write(ws, "notes/g.md", b"w\n")
    assert ws.flush() == 0
    assert store.get("notes/g.md")[0] == b"w\n"
    assert [o.path for o in store.list("notes") if not is_marker(o.path)] == ["notes/g.md"], \
        "no conflict copy of our own versions"
    ws.unlink("notes/g.md")
    assert ws.flush() == 0
    with pytest.raises(NoSuchKey):
        store.head("notes/g.md")


@unit
def test_sent_stamp_is_reused_by_a_retry_and_survives_an_upgrade(tmp_path: Path) -> None:
    """A retry of the same bytes whose first attempt's outcome is unknown sends the same
    stamp (whichever attempt landed is ours); a version-2 cache keeps its sent rows, with
    an unknown stamp (judged by ETag alone, as before)."""
    import sqlite3

    cat = Catalog(tmp_path / "c.db")
    s1 = cat.sent_add("a.md", ["e1", "e1-2"])
    assert cat.sent_add("a.md", ["e1"]) == s1
    assert cat.sent_stamps("a.md", "e1-2") == {s1}
    s2 = cat.sent_add("a.md", ["e2"])
    assert s2 != s1 and cat.sent_etags("a.md") == {"e1", "e1-2", "e2"}
    with cat.transaction() as db:
        cat.sent_landed(db, "a.md", "e2", s2)
    assert cat.sent_etags("a.md") == {"e2"} and cat.sent_stamps("a.md", "e2") == {s2}
    assert cat.sent_add("a.md", ["e2"]) != s2, "a landed stamp is not reused by a new PUT"
    cat.close()

    old = tmp_path / "v2.db"
    db = sqlite3.connect(old)
    db.executescript("""
        CREATE TABLE sent (path TEXT NOT NULL, etag TEXT NOT NULL, created REAL NOT NULL,
                           landed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (path, etag));
        INSERT INTO sent VALUES ('b.md', 'eb', 1.0, 1);
        CREATE TABLE journal (path TEXT PRIMARY KEY, op TEXT NOT NULL, hash TEXT NOT NULL DEFAULT '',
                              base TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
                              wait_for TEXT NOT NULL DEFAULT '');
    """)
    db.close()
    cat = Catalog(old)
    try:
        assert cat.sent_etags("b.md") == {"eb"} and cat.sent_stamps("b.md", "eb") == {""}
    finally:
        cat.close()


@unit
def test_conflict_name_shape() -> None:
    name = conflict_name("notes/kyoto/orgs.md", when=1_700_000_000)
    assert re.fullmatch(r"notes/kyoto/orgs" + CONFLICT_RE + r"\.md", name), name
    assert name.startswith("notes/kyoto/orgs.conflict-20231114T221320000-")
    assert re.fullmatch(r"README" + CONFLICT_RE, conflict_name("README", when=1_700_000_000))


@unit
@pytest.mark.parametrize("path", [
    "notes/" + "n" * 240 + ".md",              # a name of 243 bytes
    "notes/" + "é" * 125 + ".md",              # two-byte characters, cut whole
    "notes/x." + "e" * 200,                    # a dot in the name that is no file type
    "/".join(["d" * 200] * 4) + "/" + "f" * 150 + ".md",   # a path near its 960 bytes
    "/".join(["d" * 235] * 4) + "/" + "f" * 10 + ".md",    # folders alone leave no room
])
def test_conflict_copy_of_a_long_name_is_a_name_the_bucket_accepts(path: str) -> None:
    """Suffixing a long name made one over 255 bytes: its upload failed for ever and the
    loser's edit stayed in one cache (a stranger's trial, a 243-byte name)."""
    from brainfs.backend.keys import path_problem

    assert path_problem(path) is None
    copy = conflict_name(path, when=1_700_000_000)
    assert path_problem(copy) is None, (len(copy.encode()), copy)
    assert re.search(CONFLICT_RE, copy) and copy.endswith(".md") == path.endswith(".md")
    if len(path.encode()) < 900:
        assert copy.rsplit("/", 1)[0] == path.rsplit("/", 1)[0]  # beside the file


@s3
def test_unlink_during_first_upload_still_deletes_the_object(ws: WorkingSet, store: ObjectStore) -> None:
    # The race a mount hits with `echo A > a; mv a b`: the first upload of `a` is in flight
    # when `a` disappears locally. The object it creates must not be left behind.
    ws.mkdir("notes")
    write(ws, "notes/race.md", b"A")
    (row,) = [r for r in _files_pending(ws) if r.path == "notes/race.md"]
    res = ws.upload(row)                    # lands in S3 ...
    ws.unlink("notes/race.md")              # ... while the file is removed locally
    assert ws.apply_upload(res)
    assert ws.flush() == 0
    with pytest.raises(NoSuchKey):
        store.get("notes/race.md")


@s3
def test_unlink_after_the_empty_create_landed_deletes_it(ws: WorkingSet, store: ObjectStore) -> None:
    # A mount's create is durable and uploaded at once (an empty object); the writer's
    # shadow was opened before that upload landed, so its commit is based on "no version"
    # although the bucket now holds our empty object. An unlink then must still delete
    # that object: left there, the next relist brought the file back (found by
    # test_every_way_of_writing_commits[daemon-open], ~1 run in 10 under load).
    ws.mkdir("notes")
    ws.create("notes/gone.md")
    (row,) = [r for r in _files_pending(ws) if r.path == "notes/gone.md"]
    assert ws.apply_upload(ws.upload(row))          # the empty object lands
    assert store.get("notes/gone.md")[0] == b""
    shadow = ws.blobs.new_shadow("notes/gone.md", copy_current=False)
    with open(shadow, "wb") as f:
        f.write(b"x")
    size, digest = commit_shadow(ws.blobs, "notes/gone.md", shadow)
    ws.apply_commit("notes/gone.md", size, digest, base="")  # the shadow's base: none
    ws.unlink("notes/gone.md")
    assert ws.flush() == 0
    with pytest.raises(NoSuchKey):
        store.get("notes/gone.md")


@s3
def test_preload_pack_serves_only_current_entries(ws: WorkingSet, store: ObjectStore, cfg: Config) -> None:
    from brainfs.cache.local.pack import build_pack, read_pack

    seed(store, {"knowledge/a.md": b"A1", "knowledge/b.md": b"B1", "GUIDE.md": b"G"})
    stats = build_pack(store, cfg)
    assert stats["files"] == 3
    assert sorted(p for p, _, _ in read_pack(store)) == ["GUIDE.md", "knowledge/a.md", "knowledge/b.md"]
    store.put("knowledge/b.md", b"B2")          # the pack is now stale for b
    ws.sync_listing(store.list())
    pack = ws.load_pack()
    assert pack is not None
    got, rest = ws.use_pack(pack, ws.preload_plan())
    assert sorted(got) == ["GUIDE.md", "knowledge/a.md"]
    assert rest == ["knowledge/b.md"]
    ws.apply_fetched(ws.fetch(got + rest))
    assert content(ws, "knowledge/a.md") == b"A1" and content(ws, "knowledge/b.md") == b"B2"


@s3
def test_packed_files_are_listed_and_read_before_they_are_unpacked(ws: WorkingSet, store: ObjectStore,
                                                                   cfg: Config) -> None:
    """A mount is usable once the pack is in memory: its files are listed at once and read
    from the pack, with no GET (the objects are gone from the bucket here), until unpacked."""
    from brainfs.cache.local.pack import build_pack

    seed(store, {"knowledge/a.md": b"A1", "knowledge/deep/c.md": b"C1", "GUIDE.md": b"G",
                 "sessions/s1/transcript.md": b"T" * 10})
    build_pack(store, cfg)
    ws.sync_listing(store.list())
    pack = ws.load_pack()
    served, rest = ws.use_pack(pack, ws.preload_plan())
    assert sorted(served) == ["GUIDE.md", "knowledge/a.md", "knowledge/deep/c.md",
                              "sessions/s1/transcript.md"] and rest == []
    assert all(not ws.get(p).is_local for p in served)
    assert ws.listdir("") == [("GUIDE.md", False), ("knowledge", True), ("sessions", True)]
    assert ws.listdir("knowledge") == [("a.md", False), ("deep", True)]
    assert ws.status()["unpacking_files"] == 4
    for p in served:
        store.delete(p)
    errors = ws.apply_fetched(ws.fetch(["knowledge/a.md", "knowledge/deep/c.md"]))
    assert errors == {}
    assert content(ws, "knowledge/a.md") == b"A1" and content(ws, "knowledge/deep/c.md") == b"C1"
    assert ws.status()["unpacking_files"] == 2
    assert ws.listdir("knowledge") == [("a.md", False), ("deep", True)]
    # A packed file removed before it was unpacked is listed no more (its directory stays,
    # emptied by the user, as on a local disk).
    ws.unlink("sessions/s1/transcript.md")
    assert ws.listdir("sessions/s1") == []
    # Dropping the pack lists only what is on disk; what it still held is fetched again
    # (here: the bucket no longer has it, so it fails, as any remote read would).
    ws.drop_pack()
    assert ws.status()["unpacking_files"] == 0
    assert ws.listdir("") == [("knowledge", True), ("sessions", True)]
    assert "GUIDE.md" in ws.apply_fetched(ws.fetch(["GUIDE.md"]))


@s3
def test_a_listing_taken_before_a_delete_does_not_bring_it_back(ws: WorkingSet,
                                                               store: ObjectStore) -> None:
    """A relist whose LIST began before a delete (of a file, or of a directory's marker)
    landed must not put the file or the directory back."""
    seed(store, {"notes/old.md": b"old\n"})
    ws.mkdir("gone")
    assert ws.flush() == 0
    ws.sync_listing(store.list())
    started = time.monotonic()
    before = list(store.list())
    assert {"notes/old.md", "gone/.brainfs-dir"} <= {o.path for o in before}
    ws.unlink("notes/old.md")
    ws.rmdir("gone")
    assert ws.flush() == 0
    ws.sync_listing(before, listed_since=started)
    assert ws.get("notes/old.md") is None, "a deleted file came back from an older listing"
    assert not ws.is_dir("gone"), "a removed directory came back from an older listing"
    ws.sync_listing(store.list(), listed_since=time.monotonic())
    assert ws.get("notes/old.md") is None and not ws.is_dir("gone")


@s3
def test_a_listing_taken_before_an_upload_does_not_undo_it(ws: WorkingSet, store: ObjectStore) -> None:
    # The relister lists in a thread while the uploader runs: a file created, written and
    # uploaded meanwhile is missing from that listing, and a file rewritten meanwhile shows
    # its old ETag there. Neither may be dropped (the mount's commit of the next write of
    # the new file then found no row: EIO at close, the write lost).
    seed(store, {"knowledge/kyoto.md": b"# Kyoto\n"})
    ws.sync_listing(store.list())
    assert ws.materialize(["knowledge/kyoto.md"]) == {}
    started = time.monotonic()
    before = list(store.list())
    write(ws, "knowledge/new.md", b"made while listing\n")
    write(ws, "knowledge/kyoto.md", b"# Kyoto\nrewritten while listing\n")
    for row in _files_pending(ws):
        assert ws.apply_upload(ws.upload(row))
    st = ws.sync_listing(before, listed_since=started)
    assert st["removed"] == 0 and st["changed"] == 0, st
    for path in ("knowledge/new.md", "knowledge/kyoto.md"):
        row = ws.get(path)
        assert row is not None and row.state == "local", (path, row)
    # The next listing, taken after the uploads, agrees and changes nothing.
    st = ws.sync_listing(store.list(), listed_since=time.monotonic())
    assert st["removed"] == 0 and st["changed"] == 0, st
    assert ws.blobs.location("knowledge/kyoto.md").read_bytes() == b"# Kyoto\nrewritten while listing\n"


@s3
def test_big_file_goes_up_in_parts_and_its_etag_is_ours(ws: WorkingSet, store: ObjectStore) -> None:
    """Above multipart_threshold_bytes the upload streams parts from the cache file; both
    ETags the server may give it (multipart-style, or the whole MD5 as rclone lists it)
    are recorded first, so the next version is never taken for another writer's."""
    ws.cfg = ws.cfg.override(multipart_threshold_bytes=6 << 20, multipart_part_bytes=5 << 20)
    calls: list[str] = []
    real = store.put_file

    def spy(path, *a, **kw):
        calls.append(path)
        return real(path, *a, **kw)

    store.put_file = spy  # type: ignore[method-assign]
    big = os.urandom(11 << 20)
    ws.mkdir("notes")
    write(ws, "notes/big.bin", big)
    assert ws.flush() == 0
    assert calls == ["notes/big.bin"]
    assert store.get("notes/big.bin")[0] == big
    assert ws.get("notes/big.bin").etag == store.head("notes/big.bin").etag
    write(ws, "notes/big.bin", big[::-1])
    assert ws.flush() == 0
    assert store.get("notes/big.bin")[0] == big[::-1]
    assert [o.path for o in store.list() if ".conflict-" in o.path] == []


@unit
def test_check_commits_recorded_shadows_and_drops_stale_records(tmp_path: Path, ucfg: Config) -> None:
    # commit = "quiet": a shadow is recorded when it is made, and a start after a kill
    # commits it with the base it was recorded with. A record whose file was unlinked, or
    # whose temp file is gone, is dropped; an unrecorded temp file is swept as before.
    d = tmp_path / "quiet"
    ws = WorkingSet(d, None, ucfg)
    ws.sync_listing(listing(obj("kept.md", etag="e1", size=3), obj("gone.md", etag="e2", size=3)))
    make_local(ws, "kept.md", b"old", etag="e1")
    make_local(ws, "gone.md", b"old", etag="e2")
    shadow = ws.blobs.new_shadow("kept.md", copy_current=True)
    ws.record_shadow("kept.md", shadow, "e1")
    with open(shadow, "ab") as f:
        f.write(b" and new")                       # written, never committed
    stale = ws.blobs.new_shadow("gone.md", copy_current=True)
    ws.record_shadow("gone.md", stale, "e2")
    ws.unlink("gone.md")                           # a crash before the record went
    ws.record_shadow("kept.md", str(d / "tmp" / "write-vanished"), "e1")
    (d / "tmp" / "write-unrecorded").write_bytes(b"swept")
    ws.catalog.close()

    ws = WorkingSet(d, None, ucfg)
    try:
        rep = ws.check()
        assert rep.writes_recovered == ["kept.md"]
        assert content(ws, "kept.md") == b"old and new"
        row = ws.get("kept.md")
        assert row.state == "dirty" and row.etag == "e1"
        assert [(j.path, j.op, j.base) for j in _files_pending(ws)] == [
            ("gone.md", "delete", "e2"), ("kept.md", "put", "e1")]
        assert ws.get("gone.md") is None
        assert ws.catalog.shadows() == []
        assert list((d / "tmp").iterdir()) == []
        assert "1 uncommitted writes recovered" in rep.summary()
        assert ws.check().writes_recovered == []   # nothing twice
    finally:
        ws.catalog.close()


@unit
def test_a_commit_drops_its_shadow_record(uws: WorkingSet) -> None:
    # Once committed, a shadow's writes are the file's: no start-up check may commit the
    # same writes again over a later version.
    uws.create("a.md")
    shadow = uws.blobs.new_shadow("a.md", copy_current=False)
    uws.record_shadow("a.md", shadow, "")
    Path(shadow).write_bytes(b"v1")
    size, digest = uws.blobs.seal_shadow(shadow)
    uws.apply_commit("a.md", size, digest, shadow, base="")
    assert uws.catalog.shadows() == []
    assert content(uws, "a.md") == b"v1"
