"""Compare-and-swap for servers that do not honour conditional writes, on one machine.

``rclone serve s3`` accepts ``If-Match``/``If-None-Match`` and ignores them, so a writer can
only HEAD the object, compare, then PUT — and a second writer between the two is silently
overwritten. Every mount of a corpus on this machine takes a lock on the object's byte in
one shared lock file around that HEAD + PUT (or HEAD + DELETE), which makes the pair atomic
among them. Across machines this does nothing; a server that honours conditions (AWS, MinIO)
needs none of it.

POSIX record locks (``lockf``) belong to the process: threads of one mount do not exclude
each other, which is right (a mount has at most one upload per path in flight), and a
killed process loses its locks at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Locks are striped over this many bytes of the file (two paths may share one: that only
#: serialises them).
STRIPES = 1 << 20


def lock_dir() -> Path:
    """Where the lock files live: shared by every user's mounts on this machine."""
    d = Path(tempfile.gettempdir()) / "brainfs-locks"
    try:
        d.mkdir(mode=0o1777, exist_ok=True)
    except OSError:
        pass
    return d


class CasLock:
    """Per-object locks of one corpus, shared by every process on this machine."""

    def __init__(self, corpus_ident: str) -> None:
        name = hashlib.sha256(corpus_ident.encode()).hexdigest()[:24]
        path = lock_dir() / name
        old = os.umask(0)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        finally:
            os.umask(old)

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold the lock of ``key`` (blocking) for the duration of the block."""
        off = int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"),
                                             digest_size=8).digest(), "big") % STRIPES
        fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, off)
        try:
            yield
        finally:
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, off)

    def close(self) -> None:
        """Close the lock file (releasing every lock this process holds on it)."""
        os.close(self._fd)
