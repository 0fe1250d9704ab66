"""The magic entries at the mount's root, reachable by lookup but never listed (so
``grep -r`` and ``find`` never wander into them):

- ``.recall/``: a query per file name; its answer is the file's content;
- ``.brainfs/status``: the daemon's JSON status;
- ``.git``: a git "gitfile" naming the clone of the wiki's history, so that
  ``git -C memory/knowledge log`` works inside the mount.

They live on virtual inodes at and above :data:`RECALL_INO`, far above the inodes of corpus
paths: :meth:`MagicFiles.owns` is the one test the operations make to hand a request here.
Every magic entry is read-only (EACCES for any change).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

import pyfuse3
import trio
from brainfs.backend.keys import INTERNAL_PREFIX
from brainfs.cache.local.errors import IsADirectory, NotFound

from .errors import NotSupported, ReadOnlyEntry

#: The magic folders at the root, as the kernel names them in a lookup.
RECALL_DIR = b".recall"
CONTROL_DIR = INTERNAL_PREFIX.encode()
GITFILE = b".git"
#: Virtual inodes live far above the ones given to corpus paths.
RECALL_INO = 1 << 40
CONTROL_INO = RECALL_INO + 1
GITFILE_INO = RECALL_INO + 2
#: ``.brainfs/status``: one inode for the life of the mount
STATUS_INO = RECALL_INO + 3
_VIRTUAL_BASE = RECALL_INO + 16
#: A recall answered at lookup is reused for this long, so that ``ls -l .recall/`` or a
#: ``stat`` right before ``cat`` does not run the same query again.
RECALL_REUSE_S = 2.0
#: How many recent recall queries ``ls .recall/`` shows.
RECENT_QUERIES = 50
#: How long a ``.git`` lookup right after mount waits for the history to arrive.
GITDIR_WAIT_S = 30

RecallFn = Callable[[str], Awaitable[bytes]]
StatusFn = Callable[[], dict]


class MagicFiles:
    """The virtual inodes of ``.recall/``, ``.brainfs/`` and ``.git``."""

    def __init__(self, recall: RecallFn | None, status: StatusFn | None, no_open: bool) -> None:
        self.recall_fn = recall
        self.status_fn = status
        #: FUSE no-open mode: content is made at lookup, since no open will come
        self.no_open = no_open
        self.uid, self.gid = os.getuid(), os.getgid()
        self.recent: OrderedDict[str, int] = OrderedDict()  # query -> virtual inode
        self.virtual_name: dict[int, str] = {}
        self._next_virtual = _VIRTUAL_BASE
        #: no-open: virtual inode -> (content, mtime ns), taken at lookup
        self._snapshots: dict[int, tuple[bytes, int]] = {}
        #: git directory holding the wiki's history (set once it has been fetched)
        self.gitdir: str | None = None
        self.gitdir_ready = trio.Event()

    @staticmethod
    def owns(ino: int) -> bool:
        """Whether ``ino`` is a magic entry's."""
        return ino >= RECALL_INO

    # ------------------------------------------------------------------ attributes
    def attrs(self, ino: int, is_dir: bool, size: int = 0,
              mtime_ns: int | None = None) -> pyfuse3.EntryAttributes:
        """A magic entry's attributes: never cached by the kernel, read-only."""
        a = pyfuse3.EntryAttributes()
        a.st_ino = ino
        # Magic entries change on every read: never let the kernel cache them.
        a.entry_timeout = 0
        a.attr_timeout = 0
        a.st_uid, a.st_gid = self.uid, self.gid
        a.st_mode = (stat.S_IFDIR | 0o555) if is_dir else (stat.S_IFREG | 0o444)
        a.st_nlink = 2 if is_dir else 1
        a.st_size = size
        # A new mtime on every answer: the kernel drops cached pages or a cached listing
        # whose mtime moved (no-open mode relies on it for .recall/ and status).
        now = time.time_ns() if mtime_ns is None else mtime_ns
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = now
        return a

    def getattr(self, ino: int) -> pyfuse3.EntryAttributes:
        """``stat`` of a magic entry."""
        if ino == GITFILE_INO and self.gitdir:
            return self.attrs(ino, False, len(self._gitfile()))
        if ino in (RECALL_INO, CONTROL_INO):
            return self.attrs(ino, True)
        if ino not in self.virtual_name:
            raise NotFound(f"inode {ino}")
        snap = self._snapshots.get(ino)
        if snap is not None:
            return self.attrs(ino, False, len(snap[0]), snap[1])
        return self.attrs(ino, False)

    # ------------------------------------------------------------------ lookups
    async def lookup(self, parent: int, name: bytes) -> pyfuse3.EntryAttributes | None:
        """The entry ``name`` in ``parent`` if it is magic, else None (a corpus path:
        ``.git`` too, while no wiki history is known)."""
        if parent == pyfuse3.ROOT_INODE:
            if name == RECALL_DIR:
                return self.attrs(RECALL_INO, True)
            if name == CONTROL_DIR:
                return self.attrs(CONTROL_INO, True)
            if name == GITFILE:
                # The history arrives in the background after mount: a git command run
                # right away waits for it rather than finding no repository.
                with trio.move_on_after(GITDIR_WAIT_S):
                    await self.gitdir_ready.wait()
                if self.gitdir:
                    return self.attrs(GITFILE_INO, False, len(self._gitfile()))
            return None
        if not self.owns(parent):
            return None
        return await self._lookup_virtual(parent, os.fsdecode(name))

    async def _lookup_virtual(self, parent: int, name: str) -> pyfuse3.EntryAttributes:
        if parent == CONTROL_INO and name != "status":
            raise NotFound(name)
        if parent not in (RECALL_INO, CONTROL_INO):
            raise NotFound(name)
        if parent == RECALL_INO and not name.strip():
            raise NotFound(name)
        ino = self._ino(parent, name)
        if not self.no_open:
            return self.attrs(ino, False)
        # No open will come: the content is made now, so that the size is true and the
        # kernel (which caches the pages) reads exactly it. A new mtime drops old pages.
        snap = self._snapshots.get(ino)
        reuse = (parent == RECALL_INO and snap is not None
                 and time.time_ns() - snap[1] < RECALL_REUSE_S * 1e9)
        if not reuse:
            data = await self._data(parent, name)
            snap = self._snapshots[ino] = (data, time.time_ns())
        assert snap is not None
        return self.attrs(ino, False, len(snap[0]), snap[1])

    def _ino(self, parent: int, name: str) -> int:
        if parent == CONTROL_INO:
            self.virtual_name[STATUS_INO] = f"{CONTROL_INO}:status"
            return STATUS_INO
        if parent == RECALL_INO and name in self.recent:
            return self.recent[name]
        ino = self._next_virtual
        self._next_virtual += 1
        self.virtual_name[ino] = f"{parent}:{name}"
        if parent == RECALL_INO:
            self.recent[name] = ino
            while len(self.recent) > RECENT_QUERIES:
                _, oino = self.recent.popitem(last=False)
                self.virtual_name.pop(oino, None)
                self._snapshots.pop(oino, None)
        return ino

    # ------------------------------------------------------------------ listings
    def entries(self, ino: int) -> list[tuple[str, bool]]:
        """A magic folder's listing: the recent queries, or ``status``."""
        if ino == RECALL_INO:
            return [(q, False) for q in reversed(self.recent)]
        if ino == CONTROL_INO:
            return [("status", False)]
        raise NotFound(f"inode {ino}")

    def readdir(self, dir_ino: int, entries: list[tuple[str, bool]], start_id: int,
                token: pyfuse3.ReaddirToken) -> bool:
        """Reply with ``entries`` from ``start_id``; False if the kernel's buffer filled."""
        for i in range(start_id, len(entries)):
            name = entries[i][0]
            ino = self._ino(dir_ino, name)
            if not pyfuse3.readdir_reply(token, os.fsencode(name), self.attrs(ino, False), i + 1):
                return False
        return True

    # ------------------------------------------------------------------ contents
    async def open(self, ino: int, flags: int) -> bytes:
        """Daemon opens: the content a new handle of ``ino`` reads (a query runs anew at
        each open)."""
        if (flags & os.O_ACCMODE) != os.O_RDONLY:
            raise ReadOnlyEntry(f"inode {ino}")
        if ino == GITFILE_INO and self.gitdir:
            return self._gitfile()
        key = self.virtual_name.get(ino)
        if key is None:
            raise self._not_a_file(ino)
        parent, _, name = key.partition(":")
        return await self._data(int(parent), name)

    def read(self, ino: int, off: int, size: int) -> bytes:
        """No-open read: the content made at lookup."""
        if ino == GITFILE_INO and self.gitdir:
            data = self._gitfile()
        else:
            snap = self._snapshots.get(ino)
            if snap is None:
                raise self._not_a_file(ino)
            data = snap[0]
        return data[off : off + size]

    def refuse_change(self, ino: int) -> None:
        """Any change to a magic entry, or in a magic folder: EACCES."""
        raise ReadOnlyEntry(f"inode {ino}")

    async def _data(self, parent: int, name: str) -> bytes:
        """A magic file's content: the daemon's status, or the answer to a recall query."""
        if parent == CONTROL_INO:
            return (json.dumps(self.status_fn() if self.status_fn else {}, indent=2) + "\n").encode()
        if self.recall_fn is None:
            raise NotSupported("recall is not configured")
        return await self.recall_fn(name)

    def _gitfile(self) -> bytes:
        return f"gitdir: {self.gitdir}\n".encode()

    @staticmethod
    def _not_a_file(ino: int) -> Exception:
        if ino in (RECALL_INO, CONTROL_INO):
            return IsADirectory(f"inode {ino}")
        return NotFound(f"inode {ino}")


__all__ = ["MagicFiles", "RECALL_INO"]
