"""``brainfs mount --naive``: every operation is a remote request, nothing is cached.

Exists only as the benchmark baseline (the "remote FUSE path" the seed measured at
400-500x slower than local files). Read-only. The kernel is told to cache nothing (zero
timeouts, direct I/O), so each lookup is a HEAD or a listing, each read a ranged GET.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pyfuse3
import trio

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import INTERNAL_PREFIX, CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.fs.errors import fuse_errors

log = logging.getLogger("brainfs.naive")


class NaiveOps(pyfuse3.Operations):
    """Read-only pass-through to S3 with no cache."""

    def __init__(self, store: ObjectStore, cfg: Config) -> None:
        super().__init__()
        self.store = store
        self.limiter = trio.CapacityLimiter(cfg.s3.max_workers)
        self.ino_of: dict[str, int] = {"": pyfuse3.ROOT_INODE}
        self.path_of: dict[int, str] = {pyfuse3.ROOT_INODE: ""}
        self.dirs: dict[int, list[tuple[str, pyfuse3.EntryAttributes]]] = {}
        self._next = 2

    def _ino(self, path: str) -> int:
        if path not in self.ino_of:
            self.ino_of[path] = self._next
            self.path_of[self._next] = path
            self._next += 1
        return self.ino_of[path]

    def _attrs(self, path: str, size: int | None, mtime: float = 0.0) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        a.st_ino = self._ino(path)
        a.entry_timeout = a.attr_timeout = 0
        a.st_mode = (stat.S_IFDIR | 0o555) if size is None else (stat.S_IFREG | 0o444)
        a.st_nlink = 2 if size is None else 1
        a.st_size = size or 0
        a.st_uid, a.st_gid = os.getuid(), os.getgid()
        a.st_mtime_ns = a.st_ctime_ns = a.st_atime_ns = int((mtime or time.time()) * 1e9)
        return a

    async def _run(self, fn, *args):
        return await trio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    async def _stat(self, path: str) -> pyfuse3.EntryAttributes:
        if path == "":
            return self._attrs("", None)
        try:
            info = await self._run(self.store.head, path)
            return self._attrs(path, info.size, info.mtime)
        except NoSuchKey:
            dirs, files = await self._run(self.store.list_dir, path)
            if dirs or files:
                return self._attrs(path, None)
            raise pyfuse3.FUSEError(errno.ENOENT) from None

    @fuse_errors
    async def lookup(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        parent = self.path_of[parent_inode]
        n = os.fsdecode(name)
        return await self._stat(f"{parent}/{n}" if parent else n)

    @fuse_errors
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        return await self._stat(self.path_of[inode])

    @fuse_errors
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int:
        path = self.path_of[inode]
        dirs, files = await self._run(self.store.list_dir, path)
        entries = [(d, self._attrs(f"{path}/{d}" if path else d, None)) for d in dirs
                   if not (path == "" and d == INTERNAL_PREFIX)]
        entries += [(f.path.rsplit("/", 1)[-1], self._attrs(f.path, f.size, f.mtime)) for f in files]
        self.dirs[inode] = sorted(entries, key=lambda e: e[0])
        return inode

    @fuse_errors
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        entries = self.dirs.get(fh, [])
        for i in range(start_id, len(entries)):
            name, attrs = entries[i]
            if not pyfuse3.readdir_reply(token, os.fsencode(name), attrs, i + 1):
                return

    @fuse_errors
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        if (flags & os.O_ACCMODE) != os.O_RDONLY:
            raise pyfuse3.FUSEError(errno.EROFS)
        return pyfuse3.FileInfo(fh=inode, direct_io=True)

    @fuse_errors
    async def read(self, fh: int, off: int, size: int) -> bytes:
        data, _ = await self._run(self.store.get, self.path_of[fh], (off, off + size))
        return data


def run_naive(url: CorpusURL, mountpoint: Path, cfg: Config,
              notify: Callable[[str], None] | None = None) -> int:
    """Mount in naive mode and serve until unmounted or signalled."""
    store = ObjectStore(url, cfg)
    store.check()
    ops = NaiveOps(store, cfg)
    pyfuse3.init(ops, str(mountpoint), set(pyfuse3.default_options) | {"fsname=brainfs-naive", "ro"})
    (notify or (lambda s: None))('ready {"preload_files": 0, "preload_s": 0}')

    async def main() -> None:
        async with trio.open_nursery() as n:
            async def sigs() -> None:
                with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as rx:
                    async for _ in rx:
                        pyfuse3.terminate()
                        return
            n.start_soon(sigs)
            await pyfuse3.main()
            n.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        pyfuse3.close(unmount=True)
        store.close()
    return 0
