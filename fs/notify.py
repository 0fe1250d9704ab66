"""Tell the kernel that cached pages, attributes or listings of an inode are stale.

In FUSE's no-open mode the kernel keeps a file's pages and a directory's listing cached
across opens and never asks the daemon whether they are still good, so every change the
daemon makes behind the kernel's back (a fetch that changes a listing, a relist that finds a
new version, a commit) must be pushed to it. ``pyfuse3.invalidate_inode`` blocks until the
kernel has dropped the pages, which may wait on a request that the trio loop has yet to
answer; so the calls are made from one worker thread, never from a handler. Pending
invalidations of the same inode collapse into one.

A name the daemon took away itself (a create whose first version failed) is dropped through
the same thread, before any inode invalidation queued after it, and whoever reports the
failure can wait until the kernel has dropped it (:meth:`KernelNotifier.forget_entry`):
until then the kernel's cached entry still leads to the dead inode, and a create of the name
opens that inode instead of asking the daemon (ENOENT).
"""

from __future__ import annotations

import errno
import logging
import threading

import pyfuse3

log = logging.getLogger("brainfs.fs")


class KernelNotifier:
    """A queue of inode and entry invalidations drained by one daemon thread."""

    def __init__(self) -> None:
        #: inode -> attributes only (False: pages and listing too)
        self._pending: dict[int, bool] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        #: inodes of the batch being sent now
        self._sending: set[int] = set()
        #: (directory inode, name) of the entries to drop, in order; each batch sends them
        #: before its inodes
        self._entries: list[tuple[int, bytes]] = []
        #: entries queued so far, and entries sent (or found absent) so far: a ticket of
        #: :meth:`forget_entry` is done once ``_entries_done`` reaches it
        self._entries_queued = 0
        self._entries_done = 0
        #: invalidations sent (for status and tests)
        self.sent = 0

    def start(self) -> None:
        """Start draining; call after ``pyfuse3.init`` (the kernel session must exist)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="brainfs-invalidate",
                                            daemon=True)
            self._thread.start()

    def push(self, ino: int, attr_only: bool = False) -> None:
        """Queue an invalidation of ``ino`` (never blocks)."""
        with self._cv:
            self._pending[ino] = self._pending.get(ino, True) and attr_only
            self._cv.notify()

    def forget_entry(self, parent: int, name: bytes) -> int:
        """Queue the dropping of the kernel's entry ``name`` in directory ``parent`` (never
        blocks): sent before every inode invalidation queued after it (the listing change
        of its directory, say). Returns the ticket :meth:`wait_forgotten` waits for."""
        with self._cv:
            self._entries.append((parent, name))
            self._entries_queued += 1
            self._cv.notify()
            return self._entries_queued

    def wait_forgotten(self, ticket: int, timeout: float) -> bool:
        """Block until the entry of ``ticket`` (and every one queued before it) has been
        sent to the kernel (True), or ``timeout`` passes (False)."""
        with self._cv:
            return self._cv.wait_for(lambda: self._entries_done >= ticket, timeout)

    def stop(self) -> None:
        """Send what is queued, then end the thread (before ``pyfuse3.close``)."""
        with self._cv:
            self._stopping = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._pending and not self._entries and not self._stopping:
                    self._cv.wait()
                if not self._pending and not self._entries:
                    return
                entries, self._entries = self._entries, []
                batch, self._pending = self._pending, {}
                self._sending = set(batch)
            for parent, name in entries:
                try:
                    pyfuse3.invalidate_entry(parent, name)
                except OSError as e:
                    # ENOENT: the kernel has no such entry cached, which is the goal.
                    if e.errno != errno.ENOENT:
                        log.warning("could not invalidate entry %r of inode %d: %s", name, parent, e)
                with self._cv:
                    self._entries_done += 1
                    self._cv.notify_all()
            for ino, attr_only in batch.items():
                try:
                    pyfuse3.invalidate_inode(ino, attr_only)
                    self.sent += 1
                except OSError as e:
                    # ENOENT: the kernel holds nothing for this inode, which is the goal.
                    if e.errno != errno.ENOENT:
                        log.warning("could not invalidate inode %d: %s", ino, e)
                with self._cv:
                    self._sending.discard(ino)
                    self._cv.notify_all()

    def wait_sent(self, inos: set[int], timeout: float) -> bool:
        """Block until no invalidation of ``inos`` is queued or being sent (True), or
        ``timeout`` passes (False). Only for inodes no request in progress holds locked
        (directories whose listing changed): a file whose read is being answered would
        wait for that answer."""
        with self._cv:
            return self._cv.wait_for(
                lambda: not (inos & (self._pending.keys() | self._sending)), timeout)
