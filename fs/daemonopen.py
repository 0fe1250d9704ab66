"""Daemon opens: every open of a file or directory is a request with its own handle.

The mode of stock pyfuse3, or of ``no_open = false``. A writer works on a private shadow
with direct I/O, so its uncommitted bytes stay out of the page cache readers share; its
close (FLUSH) commits. A changed file or listing drops the kernel's cache at its next open
(``keep_cache`` off), instead of being pushed to the kernel as in no-open mode.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import pyfuse3
from brainfs.backend.config import Config
from brainfs.cache.local.workingset import WorkingSet

from .errors import BadHandle, fuse_errors
from .magic import RecallFn, StatusFn
from .ops import KERNEL_CACHE_FLAGS, Ops

#: File handles live above every inode, virtual ones too, so that no handle is ever
#: taken for an inode.
_FH_BASE = 1 << 56


@dataclass
class Handle:
    """An open file."""

    ino: int
    writable: bool
    fd: int = -1  # lazily opened fd of the committed content
    virtual: bytes | None = None  # content of a magic file
    pinned: str | None = None  # the path pinned while it is open (it may lose the name)


@dataclass
class DirHandle:
    """An open directory: a snapshot, so offsets stay valid while the directory changes."""

    ino: int
    entries: list[tuple[str, bool]] = field(default_factory=list)


class DaemonOpenOps(Ops):
    """The operations of a mount whose every open comes to the daemon."""

    no_open = False
    #: read by pyfuse3's init: O_TRUNC comes with the open
    enable_atomic_o_trunc = True

    def __init__(self, ws: WorkingSet, cfg: Config, recall: RecallFn | None = None,
                 status: StatusFn | None = None) -> None:
        super().__init__(ws, cfg, recall, status)
        self.handles: dict[int, Handle | DirHandle] = {}
        self._next_fh = _FH_BASE
        #: paths whose content changed since the kernel last cached their pages: their next
        #: read-only open drops the page cache (keep_cache off) instead of serving old bytes
        self.changed: set[str] = set()

    # ------------------------------------------------------------------ the kernel's caches
    def content_changed(self, paths: list[str]) -> None:
        """The bytes of ``paths`` changed behind the kernel: the next read-only open of
        each drops its pages."""
        self.changed.update(paths)

    def _has_writer(self, path: str) -> bool:
        """Whether an open handle writes ``path`` (its release will commit)."""
        ino = self.inodes.ino_of.get(path)
        return any(isinstance(h, Handle) and h.writable and h.ino == ino for h in self.handles.values())

    async def _truncated(self, path: str) -> None:
        # A truncate(2) with no writer open: nothing else will commit it.
        if not self._has_writer(path):
            await self.shadows.commit(path)

    def _new_fh(self, handle: Handle | DirHandle) -> int:
        fh = self._next_fh
        self._next_fh += 1
        self.handles[fh] = handle
        return fh

    def _handle(self, fh: int) -> Handle:
        """The open file ``fh``."""
        h = self.handles.get(fh)
        if not isinstance(h, Handle):
            raise BadHandle(f"handle {fh}")
        return h

    # ------------------------------------------------------------------ directories
    @fuse_errors
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int | pyfuse3.FileInfo:
        virtual = self.magic.owns(inode)
        entries = self._entries(inode)
        path = "" if virtual else self.inodes.path(inode)
        fh = self._new_fh(DirHandle(inode, entries))
        if virtual or not KERNEL_CACHE_FLAGS:
            return fh
        # The kernel may answer later listings of this directory from its cache; the
        # working set marks every directory whose entries change (fetch, evict, relist,
        # writes), and such a directory's next open drops that cache.
        keep = not self.ws.take_listing_change(path)
        if not entries:
            # Never let the kernel cache an empty listing: with no page to invalidate, a
            # later open without keep_cache does not drop it, and `ls` would stay empty.
            return pyfuse3.FileInfo(fh=fh, keep_cache=False)
        return pyfuse3.FileInfo(fh=fh, keep_cache=keep, cache_readdir=True)

    @fuse_errors
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        h = self.handles.get(fh)
        if not isinstance(h, DirHandle):
            raise BadHandle(f"directory handle {fh}")
        self._reply_entries(h.ino, h.entries, start_id, token)

    @fuse_errors
    async def releasedir(self, fh: int) -> None:
        self.handles.pop(fh, None)

    # ------------------------------------------------------------------ files
    @fuse_errors
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        if self.magic.owns(inode):
            data = await self.magic.open(inode, flags)
            fh = self._new_fh(Handle(inode, False, virtual=data))
            # direct_io: the size is unknown until the query ran, and each open runs it anew.
            return _read_only_info(fh, direct_io=True)
        path = self.inodes.path(inode)
        row = self._file_row(path)
        writable = (flags & os.O_ACCMODE) != os.O_RDONLY
        if not row.is_local and not (writable and flags & os.O_TRUNC):
            await self._ensure_local(path)
        if writable or flags & os.O_TRUNC:
            shadow = await self.shadows.open(path, truncate=bool(flags & os.O_TRUNC))
            if flags & os.O_TRUNC:
                shadow.dirty = True
        fh = self._new_fh(Handle(inode, writable, pinned=path))
        self.ws.pin(path)
        row.atime = time.time()
        if writable:
            # A writer works on a private shadow: direct I/O keeps its uncommitted bytes out
            # of the page cache that readers share.
            return pyfuse3.FileInfo(fh=fh, direct_io=True, keep_cache=False)
        # keep_cache: pages stay valid across opens until the content changes; then
        # ``changed`` makes this open drop them.
        keep = path not in self.changed
        if not keep:
            self.changed.discard(path)
        return _read_only_info(fh, keep_cache=keep)

    @fuse_errors
    async def create(self, parent_inode: int, name: bytes, mode: int, flags: int,
                     ctx: pyfuse3.RequestContext) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        path, ino = self._create_entry(parent_inode, name, mode, ctx, durable=True)
        await self.shadows.open(path, truncate=True)
        fh = self._new_fh(Handle(ino, True, pinned=path))
        self.ws.pin(path)
        self._wake_uploader()
        return pyfuse3.FileInfo(fh=fh, direct_io=True, keep_cache=False), self._attrs(ino, path)

    @fuse_errors
    async def read(self, fh: int, off: int, size: int) -> bytes:
        h = self._handle(fh)
        if h.virtual is not None:
            return h.virtual[off : off + size]
        if h.ino in self.inodes.unlinked:
            # Unlinked or replaced since it was opened: what was kept for its descriptors.
            return await self.read_orphan(h.ino, off, size)
        path = self.inodes.path_of[h.ino]
        # Readers see the last committed version, writers their own work in progress.
        shadow = self.writing.get(path) if h.writable else None
        if shadow is not None:
            return os.pread(shadow.fd, size, off)
        if h.fd < 0:
            row = self.ws.get(path)
            if row is None or not row.is_local:
                await self._ensure_local(path)
            h.fd = os.open(self.ws.blobs.location(path), os.O_RDONLY)
        return os.pread(h.fd, size, off)

    @fuse_errors
    async def write(self, fh: int, off: int, buf: bytes,
                    ctx: pyfuse3.RequestContext | None = None) -> int:
        h = self._handle(fh)
        if not h.writable:
            raise BadHandle(f"handle {fh}")
        if h.ino in self.inodes.unlinked:
            return await self.write_orphan(h.ino, buf, off)  # private, never uploaded
        return await self._write_shadow(self.inodes.path(h.ino), off, buf, ctx)

    @fuse_errors
    async def flush(self, fh: int, ctx: pyfuse3.RequestContext | None = None) -> None:
        self._refuse_flush_if_read_only()
        h = self.handles.get(fh)
        path = self.inodes.path_of.get(h.ino) if isinstance(h, Handle) else None
        if isinstance(h, Handle) and h.writable and path is not None:
            # (A file unlinked since it was opened has nothing to commit.)
            await self.shadows.commit_pending(path)

    @fuse_errors
    async def release(self, fh: int) -> None:
        h = self.handles.pop(fh, None)
        if not isinstance(h, Handle) or h.virtual is not None:
            return
        if h.fd >= 0:
            os.close(h.fd)
        if h.pinned is not None:
            self.ws.unpin(h.pinned)
        path = self.inodes.path_of.get(h.ino)
        if path is None:
            return
        if h.writable and not self._has_writer(path):
            await self.shadows.commit_pending(path)
            if path in self.writing and not self.writing[path].dirty:
                self.shadows.discard(path)


def _read_only_info(fh: int, direct_io: bool = False, keep_cache: bool = True) -> pyfuse3.FileInfo:
    """Open reply for a reader: its flush has nothing to commit, so close(2) skips it."""
    if KERNEL_CACHE_FLAGS:
        return pyfuse3.FileInfo(fh=fh, direct_io=direct_io, keep_cache=keep_cache, noflush=True)
    return pyfuse3.FileInfo(fh=fh, direct_io=direct_io, keep_cache=keep_cache)


__all__ = ["DaemonOpenOps"]
