"""Files being written: each one's private shadow copy, who may commit it, and the commit
that makes a shadow the file's content.

Writes never touch a file's committed copy: the first write or truncation copies it to a
shadow (:meth:`Shadows.open`), and a commit seals the shadow (fsync, hash, in a worker
thread) and records it in the working set's journal (:meth:`Shadows.commit`). While a
commit runs, the shadow stays the file's content for readers and getattr; a new write waits
for the commit and then starts a new shadow. Which close or idle moment commits is the
FUSE mode's decision (fs/noopen.py, fs/daemonopen.py), not this module's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import trio
from brainfs.cache.local.workingset import WorkingSet

from .fetcher import Fetcher
from .process import tgid


@dataclass
class Shadow:
    """A file being written: a private copy that becomes the content on commit."""

    tmp: str
    fd: int
    dirty: bool = False
    #: monotonic time of the last change (no-open mode commits idle shadows)
    touched: float = 0.0
    #: monotonic time the shadow was made (commit = "quiet" commits a shadow this old
    #: even if its writes never pause)
    made: float = field(default_factory=time.monotonic)
    #: a write that failed (ENOSPC): the shadow is incomplete and must never be committed
    failed: OSError | None = None
    #: the remote version (ETag) the write started from: the base of its upload, whatever
    #: a relist learns meanwhile
    base: str = ""
    #: pids that wrote or truncated it (no-open mode: only their close commits it)
    writers: set[int] = field(default_factory=set)
    #: it got a write(), not only truncations: only a close or fsync commits it then
    written: bool = False
    #: it got pages the kernel wrote back from a shared mapping (a WRITE of pid 0): no
    #: writer's close may follow them, so any close commits it, or the idle commit does
    mapped: bool = False


def writers_close(pid: int, writers: set[int], written: bool) -> bool:
    """Whether a close by ``pid`` (the closing thread, as FUSE reports it) is a writer's:
    a thread that wrote or truncated it, or, once data was written, another thread of the
    same process (a program may close from another thread than it wrote from). A thread
    of the same process that only read does not commit a truncation its writer has not
    filled yet (the idle commit takes a truncation no one fills)."""
    if not writers or pid in writers:
        return True
    if not written:
        return False
    group = tgid(pid)
    return group is not None and any(tgid(w) == group for w in writers)


def unlink_quiet(p: str) -> None:
    """Remove the file ``p`` if it is still there."""
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


class Shadows:
    """The shadows of the files being written, by path, and their commits."""

    def __init__(self, ws: WorkingSet, fetcher: Fetcher,
                 content_changed: Callable[[list[str]], None], wake: Callable[[], None],
                 record: bool = False) -> None:
        self.ws = ws
        #: record every shadow in the catalog as it is made (commit = "quiet": writes wait
        #: for a quiet moment, and the start-up check commits what a killed daemon left)
        self.record = record
        self.fetcher = fetcher
        #: called with the path after every commit, failed or not (the kernel's pages of
        #: it must go), and, after a commit that succeeded, ``wake`` (the uploader)
        self._content_changed = content_changed
        self._wake = wake
        #: path -> shadow of every file being written
        self.writing: dict[str, Shadow] = {}
        #: paths whose commit is in progress: a new shadow waits for it
        self.committing: dict[str, trio.Event] = {}
        #: paths whose shadow is being made: a concurrent request waits for it
        self._making: dict[str, trio.Event] = {}

    async def open(self, path: str, truncate: bool) -> Shadow:
        """The shadow of ``path``, made (a copy of the committed content, or empty with
        ``truncate``) if there is none; ``truncate`` empties an existing one."""
        while True:
            # A new shadow copies the committed content: wait while a commit is making a
            # new one, or while another request is already copying it.
            busy = self.committing.get(path)
            if busy is None:
                busy = self._making.get(path)
            if busy is None:
                break
            await busy.wait()
        shadow = self.writing.get(path)
        if shadow is not None:
            if truncate:
                os.ftruncate(shadow.fd, 0)
            return shadow
        made = self._making[path] = trio.Event()
        # Counted as open meanwhile, so that an eviction cannot take the copy between the
        # fetch and the copy (in no-open mode nothing else marks the file as in use).
        self.ws.pin(path)
        try:
            row = self.ws.get(path)
            listed = (row.etag, row.size) if row is not None else ("", 0)
            if row is not None and not row.is_local and not truncate:
                await self.fetcher.ensure_local(path)
            # The base is read before the copy: a relist that lands while the copy is made
            # then makes the upload a conflict instead of a silent overwrite.
            base = row.etag if row is not None else ""
            if row is not None and row.size != listed[1]:
                # The fetch brought another writer's version at another size than the one
                # the kernel placed this write by (an append lands at the listing's end):
                # based on the version the mount knew, the result goes to a conflict copy
                # instead of overwriting their bytes or padding them with zeros.
                base = listed[0]
            tmp = await trio.to_thread.run_sync(self._new_tmp, path, not truncate, base)
            shadow = Shadow(tmp, os.open(tmp, os.O_RDWR), base=base)
            self.writing[path] = shadow
        finally:
            self.ws.unpin(path)
            del self._making[path]
            made.set()
        return shadow

    def _new_tmp(self, path: str, copy_current: bool, base: str) -> str:
        """A new shadow file for ``path``, recorded in the catalog when shadows are
        (blocking: a copy and, with ``record``, a catalog transaction)."""
        tmp = self.ws.blobs.new_shadow(path, copy_current)
        if self.record:
            try:
                self.ws.record_shadow(path, tmp, base)
            except BaseException:
                unlink_quiet(tmp)
                raise
        return tmp

    def discard(self, path: str) -> None:
        """Drop the shadow of ``path`` uncommitted."""
        shadow = self.writing.pop(path)
        os.close(shadow.fd)
        self._forget(shadow)

    def _forget(self, shadow: Shadow) -> None:
        """Remove an uncommitted shadow's file and its record (a record without its file
        is dropped by the next start-up check, should this fail)."""
        unlink_quiet(shadow.tmp)
        if self.record:
            try:
                self.ws.drop_shadow(shadow.tmp)
            except Exception:  # noqa: BLE001 - see the docstring
                pass

    async def commit_pending(self, path: str) -> None:
        """Commit the writes made to ``path`` so far: wait for a commit in progress (it
        holds them: later writes wait for it and go to a new shadow), or commit a dirty
        shadow."""
        busy = self.committing.get(path)
        if busy is not None:
            await busy.wait()
            return
        shadow = self.writing.get(path)
        if shadow is not None and shadow.dirty:
            await self.commit(path)

    async def wait_commit(self, path: str) -> None:
        """Wait until no commit of ``path`` is in progress."""
        while (busy := self.committing.get(path)) is not None:
            await busy.wait()

    async def commit(self, path: str) -> None:
        """Make the shadow of ``path`` its content: sealed, journaled, uploaded later. A
        shadow whose write failed is never committed (the error is raised; the old
        version stays)."""
        # The shadow stays the file's content for readers and getattr while it is sealed
        # (an O_APPEND writer sizes its write from getattr: the old size would make it
        # overwrite the last record); writes wait on committing and go to a new shadow.
        shadow = self.writing[path]
        done = self.committing[path] = trio.Event()
        try:
            if shadow.failed is not None:
                # Part of the new content never reached the disk: keep the old version.
                raise shadow.failed
            mtime = os.fstat(shadow.fd).st_mtime
            size, digest = await trio.to_thread.run_sync(self.ws.blobs.seal_shadow, shadow.tmp)
            self.ws.apply_commit(path, size, digest, shadow.tmp, base=shadow.base, mtime=mtime)
        except BaseException:
            self._forget(shadow)
            raise
        finally:
            if self.writing.get(path) is shadow:
                del self.writing[path]
            os.close(shadow.fd)
            del self.committing[path]
            done.set()
            # Daemon opens: writers bypass the page cache, readers' next open drops it.
            # No-open: the page cache holds what was written, unless the commit failed;
            # dropping it either way costs one re-read and is never wrong.
            self._content_changed([path])
        self._wake()

    def busy(self) -> set[str]:
        """Paths being written or committed, or whose shadow is being made."""
        return set(self.writing) | set(self.committing) | set(self._making)
