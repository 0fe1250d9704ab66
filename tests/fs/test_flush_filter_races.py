"""The FLUSH filter (pyfuse3 answers the close of an inode with nothing to commit without
entering Python) never answers a writer's close that has bytes to commit: a reader's close
that ends while the writer's first write is still making its shadow used to take the inode
out of the filter's set, so the writer's close was answered in C, nothing was committed,
and a kill -9 lost the append (found by a review, reproduced; fs/ops.py change_in_flight)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from brainfs.backend.store import ObjectStore

from helpers import upload_tree, write_tree

ENV = {"BRAINFS_COMMIT_IDLE_SECONDS": "30", "BRAINFS_RELIST_SECONDS": "3600"}


def test_append_while_a_reader_closes_is_committed_at_the_writers_close(
        store: ObjectStore, corpus, mounter, tmp_path: Path) -> None:
    big = b"r" * (64 * 1024 * 1024)  # the first write copies it into the shadow
    upload_tree(store, write_tree(tmp_path / "src", {"notes/log.md": big}))
    m = mounter(corpus, env_extra=ENV)
    p = m.mountpoint / "notes/log.md"
    with open(p, "rb") as f:          # local, committed
        f.seek(len(big) - 4)
        assert f.read() == b"rrrr"
    stop = threading.Event()

    def reader() -> None:             # cat-like: open, read a page, close, again
        while not stop.is_set():
            fd = os.open(p, os.O_RDONLY)
            os.read(fd, 4096)
            os.close(fd)

    tail = b"APPENDED\n"
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    t = threading.Thread(target=reader)
    t.start()
    time.sleep(0.2)
    os.write(fd, tail)                # its shadow is made (a 64 MiB copy) meanwhile readers close
    stop.set()
    t.join()
    os.close(fd)                      # the writer's close: must commit
    m.kill9()
    m2 = mounter(corpus, name="mnt2", env_extra=ENV)
    with open(m2.mountpoint / "notes/log.md", "rb") as f:
        f.seek(len(big) - 4)
        got = f.read()
    assert got == b"rrrr" + tail, got
