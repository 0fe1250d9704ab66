"""The content of files that lost their name while they may still be open.

POSIX keeps an unlinked file, or one replaced by a rename, readable and writable through the
descriptors opened before, until the last close. The mount keeps such a file's content for
its inode (an :class:`Orphan`) until the kernel lets go of the inode. What it keeps depends
on what the cache held of the file when the name went:

- a copy on disk, or a write in progress: a second name (hard link) in the cache's ``tmp/``;
- an entry of the preload pack not written to disk yet: the pack's bytes, written to
  ``tmp/`` now (or held in memory when the cache's disk is full);
- nothing (a file in the bucket no read has fetched, which a no-open mount may still have
  open): the version the catalog names (path and ETag), fetched on the first read, or by
  the mount once the kernel has not let go of it for a moment. Until it is fetched, that
  version must stay in the bucket: the mount holds back the delete or the replacing PUT of
  its path (see ``fs/unlinkedopen.py``).

Whatever is written through such a descriptor is private to it and never uploaded.
``tmp/`` is swept at the next start, so a crash leaves nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from brainfs.backend.errors import NoSuchKey

from .errors import CacheError
from .workingset import WorkingSet

T = TypeVar("T")


class OrphanLost(CacheError):
    """The kept version of an unlinked file is gone from the bucket (another writer
    replaced or removed it before it was fetched): its descriptors read EIO."""


@dataclass
class Orphan:
    """What is kept of one file that lost its name while it may be open."""

    #: the name it had (where its version is in the bucket, while :attr:`remote`)
    path: str
    #: the remote version to fetch, while nothing local is kept
    etag: str = ""
    #: its size while :attr:`remote` (the catalog's)
    size: int = 0
    #: its content in the cache's ``tmp/``
    file: str | None = None
    #: its content in memory (the cache's disk was full)
    data: bytearray | None = None
    #: why its content could not be kept (its reads fail)
    lost: str = ""
    #: fetches of its remote content that failed so far
    failures: int = 0

    @property
    def remote(self) -> bool:
        """Whether its content is still only in the bucket (not fetched yet)."""
        return self.file is None and self.data is None and not self.lost

    def st_size(self) -> int:
        """Its size now (writes through its descriptors change it)."""
        if self.file is not None:
            return os.stat(self.file).st_size
        if self.data is not None:
            return len(self.data)
        return self.size

    def read(self, size: int, off: int) -> bytes:
        """``size`` bytes at ``off`` (the content must be kept: not :attr:`remote`)."""
        self._check()
        if self.data is not None:
            return bytes(self.data[off : off + size])
        return self._on_file(os.O_RDONLY, lambda fd: os.pread(fd, size, off))

    def write(self, buf: bytes, off: int) -> int:
        """Write ``buf`` at ``off`` (private to its descriptors; never uploaded)."""
        self._check()
        if self.data is not None:
            if off > len(self.data):
                self.data.extend(b"\0" * (off - len(self.data)))
            self.data[off : off + len(buf)] = buf
            return len(buf)
        return self._on_file(os.O_WRONLY, lambda fd: os.pwrite(fd, buf, off))

    def _on_file(self, flags: int, op: Callable[[int], T]) -> T:
        """``op`` on a descriptor of the kept file (its content is on disk, not in memory)."""
        assert self.file is not None
        fd = os.open(self.file, flags)
        try:
            return op(fd)
        finally:
            os.close(fd)

    def truncate(self, size: int) -> None:
        """Cut or extend it to ``size`` bytes (``ftruncate`` of a descriptor)."""
        self._check()
        if self.data is not None:
            del self.data[size:]
            self.data.extend(b"\0" * (size - len(self.data)))
        else:
            assert self.file is not None
            os.truncate(self.file, size)

    def discard(self) -> None:
        """The kernel let go of it: free what is kept."""
        if self.file is not None:
            try:
                os.unlink(self.file)
            except FileNotFoundError:
                pass
        self.file = self.data = None
        self.lost = "released"

    def _check(self) -> None:
        if self.lost:
            raise OrphanLost(f"{self.path} (unlinked while open): {self.lost}")
        if self.remote:
            raise CacheError(f"{self.path} (unlinked while open) is not fetched yet")


def keep(ws: WorkingSet, path: str, shadow: str | None = None) -> Orphan | None:
    """What to keep of ``path`` before its name goes (``shadow``: its write in progress,
    which its writers' descriptors read on). None when the mount knows no such file."""
    row = ws.get(path)
    if row is None:
        return None
    for src in (shadow, str(ws.blobs.location(path)) if row.is_local else None):
        if src is not None and (kept := ws.blobs.keep_file(src)) is not None:
            return Orphan(path, file=kept)
    data = ws.packed_copy(path)
    if data is not None:
        return _hold(ws, Orphan(path), data)
    return Orphan(path, etag=row.etag, size=row.size)


def fetch(ws: WorkingSet, orphan: Orphan) -> None:
    """Fetch the version a :attr:`~Orphan.remote` orphan names (blocking). A version no
    longer in the bucket makes it :attr:`~Orphan.lost`; a failure to reach the bucket
    raises (the caller tries again)."""
    if not orphan.remote:
        return
    if ws.store is None:
        raise CacheError("no backend")
    try:
        data, etag = ws.store.get(orphan.path)
    except NoSuchKey:
        orphan.lost = "removed from the bucket before it was read"
        return
    if not orphan.remote:
        return  # let go of (discarded) or kept meanwhile: staging now would leak a tmp file
    if etag.strip('"').lower() != orphan.etag.strip('"').lower():
        orphan.lost = "replaced in the bucket before it was read"
        return
    _hold(ws, orphan, data)


def _hold(ws: WorkingSet, orphan: Orphan, data: bytes) -> Orphan:
    """Keep ``data`` for ``orphan``: in ``tmp/``, or in memory when the disk refuses it."""
    try:
        orphan.file, _ = ws.blobs.stage(data, durable=False)
    except OSError:
        # A full disk, most likely: small files, and the pack held them in memory anyway.
        orphan.data = bytearray(data)
    return orphan


__all__ = ["Orphan", "OrphanLost", "fetch", "keep"]
