"""Files unlinked or replaced while a descriptor may still hold them open: their content is
kept for their inode (:mod:`brainfs.cache.local.orphans`), fetched first when it is still
only in the bucket, and read, written and truncated privately through those descriptors;
the delete or PUT of their path waits until that version is fetched or the kernel lets go
of the inode.

:class:`UnlinkedWhileOpen` is a part of :class:`~brainfs.fs.ops.Ops` (the handlers that
unlink, rename, forget and read call it; the state it keeps is set up in ``Ops.__init__``)."""

from __future__ import annotations

import logging
import os
import stat
import time
from typing import TYPE_CHECKING

import pyfuse3
import trio
from brainfs.cache.local import orphans
from brainfs.cache.local.orphans import Orphan

if TYPE_CHECKING:
    from brainfs.backend.config import Config
    from brainfs.cache.local.workingset import WorkingSet

    from .inodes import InodeTable
    from .shadow import Shadow

log = logging.getLogger("brainfs.fs")


#: How long the kernel has to let go of a file unlinked (or replaced) before its content
#: was fetched, before the mount fetches it for the descriptors that may hold it open: the
#: kernel forgets the inode of a file no one has open at once, so an ``rm`` of a file that
#: was never read costs no GET.
ORPHAN_GRACE_S = 0.5
#: Fetches of such a file's content tried (every ``upload_retry_seconds``) before it is
#: given up and its path's delete or PUT goes ahead.
ORPHAN_MAX_TRIES = 10


class UnlinkedWhileOpen:
    """What :class:`~brainfs.fs.ops.Ops` does for files unlinked or replaced while open
    (a released path wakes the uploader through ``Ops._wake_uploader``)."""

    ws: WorkingSet
    cfg: Config
    inodes: InodeTable
    limiter: trio.CapacityLimiter
    writing: dict[str, Shadow]
    uid: int
    gid: int
    _held: dict[str, set[int]]
    _orphan_fetches: dict[int, trio.Event]
    _orphan_wake: trio.Event

    def _unlinked_attrs(self, ino: int) -> pyfuse3.EntryAttributes:
        """An unlinked file still open somewhere: its kept content, no links."""
        kept = self.inodes.unlinked[ino]
        size = kept.st_size()
        mtime = os.stat(kept.file).st_mtime_ns if kept.file is not None else time.time_ns()
        a = pyfuse3.EntryAttributes()
        a.st_ino, a.st_mode, a.st_nlink = ino, stat.S_IFREG | 0o644, 0
        a.st_uid, a.st_gid, a.st_size = self.uid, self.gid, size
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = mtime
        a.st_blksize, a.st_blocks = 4096, (size + 511) // 512
        a.attr_timeout = a.entry_timeout = 0
        return a

    # ------------------------------------------------------------------ unlinked, still open
    async def _orphan(self, ino: int) -> Orphan:
        """The kept content of the unlinked inode ``ino``, fetched first if it is still
        only in the bucket."""
        kept = self.inodes.unlinked[ino]
        if kept.remote:
            await self._fetch_orphan(ino, kept)
        return kept

    async def read_orphan(self, ino: int, off: int, size: int) -> bytes:
        """Read through a descriptor of a file unlinked (or replaced) since it was opened."""
        return (await self._orphan(ino)).read(size, off)

    async def write_orphan(self, ino: int, buf: bytes, off: int) -> int:
        """Write through such a descriptor: private to it, never uploaded."""
        return (await self._orphan(ino)).write(buf, off)

    async def _fetch_orphan(self, ino: int, kept: Orphan) -> None:
        """Fetch the version ``kept`` names (one fetch per inode however many ask), then
        let the delete or PUT its path waits for go."""
        busy = self._orphan_fetches.get(ino)
        if busy is not None:
            await busy.wait()
            return
        done = self._orphan_fetches[ino] = trio.Event()
        try:
            await trio.to_thread.run_sync(orphans.fetch, self.ws, kept, limiter=self.limiter)
        finally:
            del self._orphan_fetches[ino]
            done.set()
            if self.inodes.unlinked.get(ino) is not kept:
                # Let go of while the GET was out (a discard in the worker's middle may
                # have missed the copy it was staging): nothing may stay in tmp/.
                kept.discard()
        if kept.lost:
            log.warning("%s, unlinked while open, could not be kept: %s", kept.path, kept.lost)
        self._release(kept.path, ino)

    def _release(self, path: str, ino: int) -> None:
        """The inode ``ino`` needs the bucket's version of ``path`` no more."""
        held = self._held.get(path)
        if held is not None and ino in held:
            held.discard(ino)
            if not held:
                del self._held[path]
                self._wake_uploader()

    async def keep_orphans(self) -> None:
        """Fetch the content of files unlinked or replaced before anything of them was
        local, that the kernel still has not let go of after ``ORPHAN_GRACE_S`` (a
        descriptor holds them open): their path's delete or PUT waits for it. A fetch
        that fails for want of the bucket is tried again every ``upload_retry_seconds``."""
        while True:
            await self._orphan_wake.wait()
            self._orphan_wake = trio.Event()
            await trio.sleep(ORPHAN_GRACE_S)
            for ino, kept in list(self.inodes.unlinked.items()):
                if kept.remote:
                    try:
                        await self._fetch_orphan(ino, kept)
                    except Exception as e:  # noqa: BLE001 - tried again below
                        kept.failures += 1
                        if kept.failures < ORPHAN_MAX_TRIES:
                            log.warning("fetching %s, unlinked while open: %s (will retry)",
                                        kept.path, e)
                            continue
                        # A GET that keeps failing (refused, corrupt) while PUTs and
                        # deletes may work: the name's own change must not wait for ever.
                        # Its descriptors read EIO from here on.
                        kept.lost = f"could not be fetched: {e}"
                        log.error("%s, unlinked while open, could not be kept after %d tries: %s",
                                  kept.path, kept.failures, e)
                        self._release(kept.path, ino)
            if any(k.remote for k in self.inodes.unlinked.values()):
                await trio.sleep(self.cfg.cache.upload_retry_seconds)
                self._orphan_wake.set()

    def _keep_unlinked(self, path: str) -> None:
        """Keep the content of ``path`` for its inode before the name goes, whatever the
        cache holds of it (see cache/local/orphans.py; what is kept on disk is in the
        cache's tmp/, swept at the next start if the daemon dies first)."""
        if path not in self.inodes.ino_of:
            return  # the kernel never had it: no descriptor can hold it
        shadow = self.writing.get(path)
        # Written and not committed: its writer's descriptor reads on what it wrote.
        kept = orphans.keep(self.ws, path, shadow.tmp if shadow is not None and shadow.dirty
                            else None)
        if kept is None:
            return
        ino = self.inodes.keep_unlinked(path, kept)
        if kept.remote and ino is not None:
            # Only in the bucket: that version stays there until it is fetched or the
            # kernel lets go of the inode (at once if no one has it open).
            self._held.setdefault(path, set()).add(ino)
            self._orphan_wake.set()
