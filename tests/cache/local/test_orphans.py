"""What the cache keeps of a file that loses its name while it may be open
(``cache/local/orphans.py``), for each thing the cache may hold of it. A real working set on
a real cache directory; no bucket (the bucket's side is ``tests/fs/test_open_files.py``)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.store import ObjectInfo
from brainfs.cache.local import orphans
from brainfs.cache.local.pack import PackView, encode
from brainfs.cache.local.workingset import WorkingSet

pytestmark = pytest.mark.unit

DATA = b"the packed page, never written to the cache's disk\n" * 20


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def ws(tmp_path: Path):
    """A working set with a packed file, a file only in the bucket and a local one."""
    w = WorkingSet(tmp_path / "cache", None, Config().override(cache_dir=tmp_path / "cache"))
    w.sync_listing([ObjectInfo("k/packed.md", len(DATA), _md5(DATA), 1.0),
                    ObjectInfo("k/remote.md", 7, _md5(b"remote\n"), 1.0)])
    served, _ = w.use_pack(PackView(encode([("k/packed.md", _md5(DATA), DATA)])), ["k/packed.md"])
    assert served == ["k/packed.md"] and w.is_packed("k/packed.md")
    w.create("k/local.md")
    w.blobs.write("k/local.md", b"on disk\n")
    yield w
    w.close()


def test_a_packed_file_is_kept_from_the_pack(ws: WorkingSet) -> None:
    kept = orphans.keep(ws, "k/packed.md")
    assert kept is not None and not kept.remote and kept.file is not None
    ws.unlink("k/packed.md")
    assert kept.read(len(DATA) + 1, 0) == DATA and kept.st_size() == len(DATA)
    kept.discard()
    assert not os.path.exists(kept.file or "") and kept.lost


def test_with_the_disk_full_a_packed_file_is_kept_in_memory(ws: WorkingSet, monkeypatch) -> None:
    def full(data: bytes, durable: bool = True):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ws.blobs, "stage", full)
    kept = orphans.keep(ws, "k/packed.md")
    assert kept is not None and kept.data is not None and not kept.remote
    assert kept.read(10, 0) == DATA[:10]
    assert kept.write(b"XY", len(DATA) + 2) == 2  # past the end: a gap of zeros, as a file
    assert kept.st_size() == len(DATA) + 4
    assert kept.read(4, len(DATA)) == b"\0\0XY"
    kept.truncate(5)
    assert kept.read(100, 0) == DATA[:5]


def test_a_file_only_in_the_bucket_is_kept_as_its_version(ws: WorkingSet) -> None:
    kept = orphans.keep(ws, "k/remote.md")
    assert kept is not None and kept.remote
    assert (kept.path, kept.etag, kept.st_size()) == ("k/remote.md", _md5(b"remote\n"), 7)
    with pytest.raises(orphans.CacheError):
        kept.read(10, 0)  # fetched first: fs/unlinkedopen.py does that


def test_a_local_file_and_a_write_in_progress_are_kept_as_links(ws: WorkingSet, tmp_path: Path) -> None:
    kept = orphans.keep(ws, "k/local.md")
    assert kept is not None and kept.file is not None
    ws.unlink("k/local.md")
    assert kept.read(100, 0) == b"on disk\n"
    shadow = tmp_path / "shadow"
    shadow.write_bytes(b"written, not committed\n")
    ws.create("k/local.md")
    kept = orphans.keep(ws, "k/local.md", str(shadow))
    assert kept is not None and kept.read(100, 0) == b"written, not committed\n"
    assert orphans.keep(ws, "k/none.md") is None


def test_an_orphan_let_go_of_while_its_fetch_runs_leaves_nothing_in_tmp(ws: WorkingSet) -> None:
    """The kernel forgets the inode (discard) while the GET is out: the bytes that arrive
    are not staged for an inode no one holds (a review: a tmp file leaked till the next
    start, outside the cache budget)."""
    kept = orphans.keep(ws, "k/remote.md")
    assert kept is not None and kept.remote

    class ForgetsDuringGet:
        def get(self, path: str) -> tuple[bytes, str]:
            kept.discard()
            return b"remote\n", _md5(b"remote\n")

    ws.store = ForgetsDuringGet()  # type: ignore[assignment]
    orphans.fetch(ws, kept)
    assert kept.file is None and kept.data is None
    assert not list(ws.blobs.tmp.glob("fetch-*"))
