"""Writes through a shared mmap (issue 27 item 2): the kernel writes the mapping's dirty
pages back as WRITE requests of its own (pid 0), at a close of the file (before its FLUSH),
at msync, or in its periodic writeback. They are committed like any write: at the close
that wrote them back, at msync, or once idle when no close follows; and counted as not
committed until then. Real mounts, a real S3 server; see fs/SEMANTICS.md."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest
from brainfs.backend.store import ObjectStore

from tests.helpers import s3get, settle, upload_tree, wait_for, write_tree

OLD = b"0123456789abcdef" * 512  # 8 KiB: two pages
NEW_HEAD = b"MAPPED"
#: Nothing is committed by a quiet period behind a test's back unless the test wants it.
ENV = {"BRAINFS_COMMIT_IDLE_SECONDS": "30", "BRAINFS_RELIST_SECONDS": "3600"}


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", {"notes/m.bin": OLD, "notes/other.md": "other\n"})
    upload_tree(store, src)
    return src


def _expected() -> bytes:
    new = bytearray(OLD)
    new[:len(NEW_HEAD)] = NEW_HEAD
    new[4096:4096 + len(NEW_HEAD)] = NEW_HEAD
    return bytes(new)


def _write_through_mmap(path: Path, msync: bool) -> None:
    """Write two pages through a shared mapping, unmap, close (Python's mmap closes its own
    descriptor, a dup, and then unmaps)."""
    with open(path, "r+b") as f:
        mm = mmap.mmap(f.fileno(), 0)
        mm[:len(NEW_HEAD)] = NEW_HEAD
        mm[4096:4096 + len(NEW_HEAD)] = NEW_HEAD
        if msync:
            mm.flush()
        mm.close()


@pytest.mark.parametrize("msync", [False, True], ids=["no-msync", "msync"])
@pytest.mark.parametrize("commit", ["close", "quiet"])
def test_mmap_write_survives_kill9_right_after_close(seeded, corpus, mounter, store: ObjectStore,
                                                     commit: str, msync: bool) -> None:
    m = mounter(corpus, env_extra={**ENV, "BRAINFS_COMMIT": commit})
    path = m.mountpoint / "notes/m.bin"
    assert path.read_bytes() == OLD
    _write_through_mmap(path, msync)
    assert path.read_bytes() == _expected()
    m.kill9()
    m2 = mounter(corpus, name="mnt2", env_extra={**ENV, "BRAINFS_COMMIT": commit})
    assert (m2.mountpoint / "notes/m.bin").read_bytes() == _expected()
    settle(m2.mountpoint)
    assert s3get(store, "notes/m.bin") == _expected()


HOLDER = r"""
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
mm = mmap.mmap(fd, 0)
mm[:6] = b"MAPPED"
mm[4096:4102] = b"MAPPED"
# The kernel writes the pages back on its own (its periodic writeback would, within 30 s):
# asked for here with fadvise, which writes dirty pages back and sends no FLUSH.
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
print("written", flush=True)
sys.stdin.read()      # hold the descriptor and the mapping: no close follows the writes
"""


def test_mmap_write_with_no_close_after_it_is_committed_once_idle(seeded, corpus, mounter,
                                                                 store: ObjectStore) -> None:
    # A program writes through a mapping and holds it: no close follows the writes. The
    # pages the kernel writes back are committed once idle, and a kill -9 after that
    # keeps them. (This test holds no descriptor of the file: any close commits them.)
    m = mounter(corpus, env_extra={**ENV, "BRAINFS_COMMIT_IDLE_SECONDS": "1"})
    path = m.mountpoint / "notes/m.bin"
    assert path.read_bytes() == OLD
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"written\n"
        wait_for(lambda: s3get(store, "notes/m.bin") == _expected(),
                 what="the mapped write committed and uploaded")
        m.kill9()
    finally:
        holder.kill()
        holder.wait()
    m2 = mounter(corpus, name="mnt2", env_extra=ENV)
    assert (m2.mountpoint / "notes/m.bin").read_bytes() == _expected()


def test_mmap_write_counts_as_not_committed_until_it_is(seeded, corpus, mounter) -> None:
    # Written back by the kernel but not committed yet (no close, idle period not over):
    # `brainfs status` says so instead of "0 dirty".
    m = mounter(corpus, env_extra=ENV)
    path = m.mountpoint / "notes/m.bin"
    path.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"written\n"
        wait_for(lambda: m.status()["uncommitted"] == 1, what="the mapped write counted")
        shown = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "status", str(m.mountpoint)],
                               env=m.env, capture_output=True, text=True, check=True).stdout
        assert "1 not committed yet" in shown, shown
    finally:
        holder.kill()
        holder.wait()
    # The holder's exit closed its descriptor: that close commits the pages.
    wait_for(lambda: m.status()["uncommitted"] == 0, what="the commit at the holder's close")
