"""FUSE no-open mode: the kernel opens files and directories without asking the daemon.

``open`` and ``opendir`` answer ENOSYS once; from then on the kernel keeps pages and
listings cached and sends ``read``/``write``/``flush``/``readdir`` with the inode where a
file handle would be (pyfuse3 passes the inode when the kernel sends no handle). So the
daemon sees no open and no release: every close is a FLUSH, a reader's too (the pid of each
write and flush tells a writer's close apart), a truncation no close follows is committed
once idle (:meth:`NoOpenOps.commit_idle`), and every change made behind the kernel's back is
pushed to it at once (:class:`~brainfs.fs.notify.KernelNotifier`). With ``commit = "quiet"``
the first FLUSH answers ENOSYS too, so that no close waits for the daemon: every write is
committed once its file is quiet, or at fsync, and each shadow is recorded as it is made so
that a killed daemon's next start commits it. See fs/SEMANTICS.md.
"""

from __future__ import annotations

import logging
import os
import time

import pyfuse3
import trio
from brainfs.backend.config import Config
from brainfs.cache.local.workingset import WorkingSet

from .errors import NotSupported, fuse_errors
from .magic import RecallFn, StatusFn
from .ops import FLUSH_FILTER, Ops
from .procfds import mount_id, open_for_writing
from .shadow import writers_close

log = logging.getLogger("brainfs.fs")

#: How long the close (or fsync) that reports a failed create waits for the kernel to drop
#: the file's name (:meth:`NoOpenOps._drop_failed_create`): milliseconds as a rule; longer
#: only while another request holds the directory (a rename fetching what it moves), and the
#: failure is reported then all the same.
FORGET_WAIT_S = 5.0


class NoOpenOps(Ops):
    """The operations of a mount in FUSE no-open mode."""

    no_open = True
    #: read by pyfuse3's init: with no open to carry O_TRUNC, it must come as setattr
    enable_atomic_o_trunc = False

    def __init__(self, ws: WorkingSet, cfg: Config, recall: RecallFn | None = None,
                 status: StatusFn | None = None) -> None:
        super().__init__(ws, cfg, recall, status)
        #: dir inode -> entries, taken at the readdir from offset 0
        self._listings: dict[int, list[tuple[str, bool]]] = {}
        #: directory inodes invalidated since a fetching read last waited for them
        self._dirs_invalidated: set[int] = set()
        #: path -> monotonic time of its create (commit = "quiet": its upload waits until
        #: it has been quiet, so that a create and its first writes are one version)
        self._created_at: dict[str, float] = {}
        #: path -> the error of a write to a created file before its creator's first close
        #: (a shadow that could not be made leaves no failed shadow to tell it)
        self._create_failed: dict[str, Exception] = {}
        #: where the kernel mounted this file system (set by the daemon at mount), and the
        #: kernel's id of that mount (looked up once, when first needed)
        self.mountpoint: str | None = None
        self._mount_id: int | None = None
        ws.on_listing_change = self._listing_changed
        #: commits at close: only the FLUSH of an inode in ``flush_needed`` reaches flush()
        self.filter_flush = (FLUSH_FILTER and cfg.mount.flush_filter and not self.commit_quiet
                             and not cfg.mount.read_only)

    def init(self) -> None:
        """At the kernel's INIT: with commits at close, a close of a file with nothing to
        commit (a reader's, most of them) is answered by pyfuse3 itself, without a task or
        a trip through the trio loop; an inode joins ``flush_needed`` at its first write,
        truncation or create, before that request is answered (the kernel sends a close's
        FLUSH only after them), and leaves it at a close that finds nothing left to do."""
        if self.filter_flush:
            pyfuse3.set_flush_filter(self.flush_needed)

    # ------------------------------------------------------------------ the kernel's caches
    def content_changed(self, paths: list[str]) -> None:
        """The bytes of ``paths`` changed behind the kernel: its cached pages are dropped
        now (a pushed invalidation)."""
        for p in paths:
            ino = self.inodes.ino_of.get(p)
            if ino is not None:
                self.notifier.push(ino)

    def _listing_changed(self, d: str) -> None:
        """The working set's listing of ``d`` changed (hook, never blocks)."""
        self.ws.take_listing_change(d)
        # A strictly newer mtime, and the kernel's attributes dropped so that it sees it:
        # at the next listing from offset 0 it compares and re-reads. This also covers an
        # empty cached listing, which has no page an invalidation could drop.
        self.dir_mtime[d] = max(time.time_ns(), self.dir_mtime.get(d, 0) + 1)
        ino = self.inodes.ino_of.get(d)
        if ino is not None:
            self.notifier.push(ino)
            self._dirs_invalidated.add(ino)

    def _looked_up(self, path: str) -> None:
        row = self.ws.get(path)
        if row is not None:
            # With no open to see, a lookup is the access the LRU gets to hear about.
            row.atime = time.time()

    async def _truncated(self, path: str) -> None:
        # An O_TRUNC open (whose close commits) and a bare truncate(2) both come without
        # a handle, and cannot be told apart: commit_idle() commits the latter once its
        # file has been quiet for commit_idle_seconds.
        return

    # ------------------------------------------------------------------ directories
    @fuse_errors
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int | pyfuse3.FileInfo:
        # From now on the kernel opens directories itself and caches their listings.
        raise NotSupported("opendir")

    @fuse_errors
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        # ``fh`` is the directory's inode. One snapshot per pass, taken at offset 0, keeps
        # later offsets valid while the directory changes.
        dir_ino = fh
        entries = self._listings.get(dir_ino) if start_id else None
        if entries is None:
            entries = self._listings[dir_ino] = self._entries(dir_ino)
        if self._reply_entries(dir_ino, entries, start_id, token):
            self._listings.pop(dir_ino, None)

    # ------------------------------------------------------------------ files
    @fuse_errors
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        # The kernel asks once: from now on it opens files itself, with their pages kept
        # cached, and sends reads, writes and flushes with the inode. O_TRUNC arrives as a
        # setattr (enable_atomic_o_trunc is off).
        raise NotSupported("open")

    @fuse_errors
    async def create(self, parent_inode: int, name: bytes, mode: int, flags: int,
                     ctx: pyfuse3.RequestContext) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        # The file becomes durable at its creator's first close (a crash before it leaves
        # no empty file that was meant to be written).
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        before = self.ws.get(path)
        try:
            path, ino = self._create_entry(parent_inode, name, mode, ctx, durable=self.commit_quiet)
        except Exception:
            # Refused (it exists: nothing was made), or failed half-way (the catalog's disk
            # full while its row or mode was recorded): a create that failed leaves no file.
            if before is None and self.ws.get(path) is not None:
                self._drop_failed_create(path)
            raise
        # No handle: the kernel of a no-open mount sends no RELEASE, not even for a created
        # file, so the file is written, flushed and read by inode like any other. It exists
        # now, empty; the first write makes its shadow, and the first close commits and
        # uploads create and writes as one version.
        self._created[path] = ctx.pid
        self._created_at[path] = time.monotonic()
        self._create_failed.pop(path, None)  # an earlier file of that name's, unlinked
        self.flush_needed.add(ino)
        return pyfuse3.FileInfo(fh=0, keep_cache=True), self._attrs(ino, path)

    @fuse_errors
    async def read(self, fh: int, off: int, size: int) -> bytes:
        # By inode, with no handle; the kernel asks only for pages it lacks.
        ino = fh
        if self.magic.owns(ino):
            return self.magic.read(ino, off, size)
        if ino in self.inodes.unlinked:
            return await self.read_orphan(ino, off, size)
        path = self.inodes.path(ino)
        # Writes land in the page cache that every reader shares (as on a local disk), so
        # a page read back must come from the work in progress too.
        shadow = self.writing.get(path)
        if shadow is not None:
            return os.pread(shadow.fd, size, off)
        # In use while it is read: no eviction (another reader's fetch makes room) may take
        # the copy between the fetch and the read.
        self.ws.pin(path)
        self.read_started(ino)
        try:
            return await self._read_committed(path, off, size)
        finally:
            self.read_ended(ino)
            self.ws.unpin(path)

    async def _read_committed(self, path: str, off: int, size: int) -> bytes:
        """Read the committed content of ``path``, fetching it first if it is not local."""
        for attempt in (1, 2):
            row = self._file_row(path)
            if not row.is_local:
                await self._ensure_local(path)
                # The fetch added the file to its directory's listing: let the kernel hear
                # of it before this read returns, so `ls` right after `cat` lists it.
                # Likewise a size that grew: the read after this one must go on past the
                # old end (attributes only: no page of this file is locked by that).
                dirs, self._dirs_invalidated = self._dirs_invalidated | self.grown, set()
                self.grown = set()
                if dirs:
                    await trio.to_thread.run_sync(self.notifier.wait_sent, dirs, 0.5)
            row.atime = time.time()
            try:
                fd = os.open(self.ws.blobs.location(path), os.O_RDONLY)
            except FileNotFoundError:
                if attempt == 2:
                    raise
                continue  # replaced by a relist between the fetch and here: again
            try:
                return os.pread(fd, size, off)
            finally:
                os.close(fd)
        raise AssertionError("unreachable")

    @fuse_errors
    async def write(self, fh: int, off: int, buf: bytes,
                    ctx: pyfuse3.RequestContext | None = None) -> int:
        # ``fh`` is the inode; the kernel has checked the open mode.
        if self.magic.owns(fh):
            self.magic.refuse_change(fh)
        if fh in self.inodes.unlinked:
            # Written after its unlink: private to its descriptors, never uploaded.
            return await self.write_orphan(fh, buf, off)
        self.flush_needed.add(fh)  # before any await: its close has work now
        path = self.inodes.path(fh)
        self._file_row(path)
        with self.change_in_flight(fh):
            try:
                return await self._write_shadow(path, off, buf, ctx)
            except Exception as e:
                if path in self._created:
                    self._create_failed[path] = e  # its creator's close fails with it
                raise

    @fuse_errors
    async def flush(self, fh: int, ctx: pyfuse3.RequestContext | None = None) -> None:
        self._refuse_flush_if_read_only()
        if self.commit_quiet:
            # Writes are committed once quiet or at fsync: ENOSYS tells the kernel never to
            # send FLUSH again, so no close(2) waits for the daemon.
            raise NotSupported("flush")
        try:
            await self._flush(fh, ctx)
        finally:
            path = self.inodes.path_of.get(fh)
            if (path is None or path not in self.writing and path not in self.shadows.committing
                    and path not in self._created and fh not in self.changes_in_flight):
                self.flush_needed.discard(fh)  # its next close has nothing to do

    async def _flush(self, fh: int, ctx: pyfuse3.RequestContext | None) -> None:
        # Every close of the file, reader's or writer's, lands here. Pages of a shared
        # mapping were written back right before it (the kernel does so at every close):
        # whoever closes, they are committed now, as no writer's close may follow them.
        path = self.inodes.path_of.get(fh)
        if path is None:
            return
        creator = self._created.get(path)
        if creator is not None and (ctx is None or writers_close(ctx.pid, {creator}, True)):
            await self._creators_close(path)
            return
        if path in self.writing or path in self.shadows.committing:
            shadow = self.writing.get(path)
            if (ctx is not None and shadow is not None and path not in self.shadows.committing
                    and not shadow.mapped
                    and not writers_close(ctx.pid, shadow.writers, shadow.written)):
                # A reader's close: the writer's own close (or fsync, or the idle commit)
                # commits; this one must not publish a half-written file.
                return
            if (shadow is not None and not shadow.written and path not in self.shadows.committing
                    and await self._writer_still_open(shadow.writers, fh)):
                # A truncation whose writer still holds the file for writing (`cmd > f`
                # closes the descriptor it dup2'ed before cmd writes): its last close, or
                # the idle commit once it lets go, commits; the old version stays till then.
                # Once written, every writer's close commits, as it always did: a
                # descriptor held elsewhere must not keep a closed write from S3.
                return
            await self.shadows.commit_pending(path)

    @fuse_errors
    async def fsync(self, fh: int, datasync: bool) -> None:
        if not self.commit_quiet:
            self._refuse_flush_if_read_only()
        # Whoever calls it, and whatever it still holds open: what was written so far
        # becomes a version, now.
        path = self.inodes.path_of.get(fh)
        if path is None:
            return
        if path in self._created:
            await self._creators_close(path)
        else:
            await self.shadows.commit_pending(path)
            self._wake_uploader()

    async def _writer_still_open(self, writers: set[int], ino: int) -> bool:
        """Whether a process among ``writers`` still has inode ``ino`` open for writing
        (False when that cannot be known: then a close commits, as it always did)."""
        if not writers or not self.mountpoint:
            return False
        if self._mount_id is None:
            self._mount_id = await trio.to_thread.run_sync(mount_id, self.mountpoint)
            if self._mount_id is None:
                return False
        held = await trio.to_thread.run_sync(open_for_writing, set(writers), self._mount_id, ino,
                                             self.mountpoint)
        return bool(held)

    async def _creators_close(self, path: str) -> None:
        """The first close of a file by its creator: the file is durable from here on,
        written or not (its commit records it; persist() covers an empty one). A first
        version that cannot be committed (a write failed with ENOSPC, the catalog's disk is
        full) takes the file away: the close fails, and no empty file stays listed."""
        del self._created[path]
        self._created_at.pop(path, None)
        failed = self._create_failed.pop(path, None)
        try:
            if failed is not None:
                # A write that failed without a shadow to hold the failure (the shadow
                # could not be made): later writes would commit around the missing bytes.
                raise failed
            if path in self.writing or path in self.shadows.committing:
                await self.shadows.commit_pending(path)
            self.ws.persist(path)
        except Exception:
            ticket = self._drop_failed_create(path)
            if ticket is not None:
                # The failure is reported once the kernel has let go of the name: a create
                # of it right after the close must reach the daemon, not reopen the removed
                # file through the entry the kernel still had (ENOENT).
                await trio.to_thread.run_sync(self.notifier.wait_forgotten, ticket, FORGET_WAIT_S)
            raise
        self._wake_uploader()

    def _forget_created(self, *roots: str) -> None:
        for table in (self._created_at, self._create_failed):
            for p in [p for p in table if any(p == r or p.startswith(r + "/") for r in roots)]:
                del table[p]

    def _drop_failed_create(self, path: str) -> int | None:
        """A created file whose first version failed: it goes, as if the create had not
        been. Left in place it was listed as an empty file while nothing recorded it (close
        mode: gone at the next mount, so 'visible until unmount'), or uploaded empty (quiet
        mode), though its writer was told that its writes failed. The unlink's catalog
        change may fail too on a full disk: the file is out of memory and of the kernel's
        view all the same, and a row the catalog kept is an empty file again at the next
        start, which is logged. Returns the ticket of the kernel's entry being dropped
        (None if the file stays): whoever reports the failure waits for it
        (:meth:`KernelNotifier.wait_forgotten`)."""
        self._created.pop(path, None)
        self._created_at.pop(path, None)
        self._create_failed.pop(path, None)
        row = self.ws.get(path)
        if row is not None and row.size > 0:
            # Bytes were committed at this name since the create (another process's close
            # of the file, a quiet commit, a file renamed over it): they are somebody's
            # version and stay; only the failed writes are lost, and their close says so.
            log.warning("%s: a write to it failed; its last committed version (%d bytes) stays",
                        path, row.size)
            return None
        if path in self.writing:
            self.shadows.discard(path)
        ino = self.inodes.ino_of.get(path)
        # The kernel's entry is dropped first: queued before the listing change the unlink
        # pushes, so that a name seen gone from the listing is gone by name too. (Nothing
        # awaits from here to the unlink: a lookup that follows the drop is answered after it.)
        parent, _, name = path.rpartition("/")
        pino = self.inodes.ino_of.get(parent)
        ticket = self.notifier.forget_entry(pino, os.fsencode(name)) if pino is not None else None
        if self.ws.get(path) is not None:
            try:
                self.ws.unlink(path)
            except Exception as e:  # noqa: BLE001 - the disk that failed the write is full
                log.warning("%s: a create that failed could not be unrecorded: %s", path, e)
        log.warning("%s: its first version could not be written; the created file is removed",
                    path)
        self.inodes.drop(path)
        if ino is not None:
            self.flush_needed.discard(ino)
        self._wake_uploader()
        return ticket

    # ------------------------------------------------------------------ what no close commits
    async def commit_idle(self, everything: bool = False) -> None:
        """Commit shadows that no close will commit (a bare truncate(2), pages the kernel
        wrote back from a shared mapping), once they have been quiet for
        ``commit_idle_seconds`` (``everything``: at once, at unmount). A shadow that got
        writes is left to its writer's close or fsync: a pause in the middle of a write
        must not publish half a file. With commit = "quiet" no close
        commits: every shadow quiet that long (or older than ``commit_max_seconds``) is
        committed, and a created file's upload waits no longer."""
        now = time.monotonic()
        idle = 0.0 if everything else self.cfg.mount.commit_idle_seconds
        for path, shadow in list(self.writing.items()):
            due = now - shadow.touched >= idle or (
                self.commit_quiet and now - shadow.made >= self.cfg.mount.commit_max_seconds)
            if (shadow.dirty and due
                    and (everything or self.commit_quiet or not shadow.written or shadow.mapped)
                    and path not in self.shadows.committing
                    and self.writing.get(path) is shadow):
                if (not everything and not shadow.written and not shadow.mapped
                        and not (self.commit_quiet
                                 and now - shadow.made >= self.cfg.mount.commit_max_seconds)
                        and await self._writer_still_open(shadow.writers,
                                                          self.inodes.ino_of.get(path, 0))):
                    # An O_TRUNC open whose writer has not written yet (it computes
                    # first): publishing the empty file would lose the old content to a
                    # crash. A bare truncate(2) holds no descriptor and is committed.
                    continue
                if (path in self.shadows.committing or self.writing.get(path) is not shadow
                        or (shadow.written and not (everything or self.commit_quiet
                                                    or shadow.mapped))):
                    continue  # the writer's close or a write came during the scan
                try:
                    await self.shadows.commit(path)
                except Exception as e:  # noqa: BLE001 - logged; the old version stays
                    log.error("commit of %s failed: %s", path, e)
                    if self.commit_quiet and path in self._created:
                        # A created file has no old version to keep (with commits at
                        # close, its creator's close commits and drops it there)
                        self._drop_failed_create(path)
        if self.commit_quiet:
            self._release_created(now, idle)

    def _release_created(self, now: float, idle: float) -> None:
        """commit = "quiet": created files (durable since their create) whose writes are
        committed and that have been quiet for ``idle`` may be uploaded."""
        released = False
        for path, at in list(self._created_at.items()):
            if path not in self._created:
                del self._created_at[path]  # unlinked or renamed meanwhile
            elif (now - at >= idle and path not in self.writing
                    and path not in self.shadows.committing):
                del self._created[path], self._created_at[path]
                self._create_failed.pop(path, None)
                self.ws.persist(path)
                released = True
        if released:
            self._wake_uploader()

    def persist_created(self) -> None:
        """Record every created file whose creator has not closed it yet (at unmount)."""
        for path in list(self._created):
            self.ws.persist(path)
        self._created.clear()
        self._created_at.clear()
        self._create_failed.clear()

    async def background(self) -> None:
        """Commit idle shadows every quarter of ``commit_idle_seconds`` (at least 50 ms)."""
        while True:
            await trio.sleep(max(0.05, self.cfg.mount.commit_idle_seconds / 4))
            await self.commit_idle()

    async def at_unmount(self) -> None:
        # A truncation not yet committed (no close follows one) must not be lost, nor a
        # file created and still open.
        await self.commit_idle(everything=True)
        self.persist_created()


__all__ = ["NoOpenOps"]
