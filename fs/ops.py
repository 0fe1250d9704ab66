"""pyfuse3 operations: translate kernel requests into working-set calls.

Handlers stay thin; the working set decides. Blocking work (S3, fsync, copying a file for
a write) goes to worker threads; the open/lookup/getattr paths of a local file do no I/O at
all, because they are what a warm ``grep -r`` costs. Reads and writes of local files call
``os.pread``/``os.pwrite`` inline: they hit the page cache of a local disk, and a thread hop
would cost more than the call.

The magic entries at the root (``.recall/``, ``.brainfs/``, ``.git``) are served by
:class:`~brainfs.fs.magic.MagicFiles`, the inode numbers by
:class:`~brainfs.fs.inodes.InodeTable`; every refusal is a typed error that
:func:`~brainfs.fs.errors.fuse_errors` turns into its errno (one table, ``fs/errors.py``).

Two ways to run, chosen at mount (``Ops.no_open``):

- **no-open** (the default with pyfuse3 built by ``.ci/build-pyfuse3``): ``open`` and
  ``opendir`` answer ENOSYS once, and from then on the kernel opens without asking, keeps
  pages and listings cached, and sends ``read``/``write``/``flush``/``readdir`` with the
  inode where a file handle would be. The daemon pushes every change it makes behind the
  kernel's back through :class:`~brainfs.fs.notify.KernelNotifier`; magic files get their
  content (and true size) at ``lookup``. Even ``create`` returns no handle: the kernel
  sends no RELEASE in this mode.
- **daemon opens** (stock pyfuse3, or ``no_open = false``): every open is a request with
  its own handle; a changed file or listing drops the kernel's cache at its next open.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from collections import Counter
from dataclasses import dataclass, field

import pyfuse3
import trio
from brainfs.backend.config import Config
from brainfs.backend.keys import NAME_MAX, is_link, link_name, link_of
from brainfs.cache.local.catalog import Attrs, FileRow
from brainfs.cache.local.workingset import (IsADirectory, NameTooLong, NotADirectory, NotEmpty,
                                      NotFound, WorkingSet, other_form)

from .errors import BadHandle, InvalidRequest, NotSupported, fuse_errors
from .inodes import InodeTable
from .magic import MagicFiles, RecallFn, StatusFn
from .notify import KernelNotifier

log = logging.getLogger("brainfs.fs")

#: File handles live above every inode, virtual ones too: in no-open mode a handler's
#: ``fh`` is either an inode (the kernel sent none) or a handle from ``create``.
_FH_BASE = 1 << 56
#: A path whose fetch just failed fails again at once for this long instead of fetching.
FETCH_FAILURE_HOLD_S = 2.0


@dataclass
class Shadow:
    """A file being written: a private copy that becomes the content on commit."""

    tmp: str
    fd: int
    dirty: bool = False
    #: monotonic time of the last change (no-open mode commits idle shadows)
    touched: float = 0.0
    #: a write that failed (ENOSPC): the shadow is incomplete and must never be committed
    failed: OSError | None = None
    #: the remote version (ETag) the write started from: the base of its upload, whatever
    #: a relist learns meanwhile
    base: str = ""
    #: pids that wrote or truncated it (no-open mode: only their close commits it)
    writers: set[int] = field(default_factory=set)
    #: it got a write(), not only truncations: only a close or fsync commits it then
    written: bool = False


@dataclass
class Handle:
    """An open file."""

    ino: int
    writable: bool
    fd: int = -1  # lazily opened fd of the committed content
    virtual: bytes | None = None  # content of a magic file


@dataclass
class DirHandle:
    """An open directory: a snapshot, so offsets stay valid while the directory changes."""

    ino: int
    entries: list[tuple[str, bool]] = field(default_factory=list)


#: pyfuse3 built from ``third_party/pyfuse3`` can set ``noflush`` and ``cache_readdir`` in
#: open replies; stock pyfuse3 3.5 cannot. Without them every close of a read-only file
#: (FLUSH) and every ``ls``/``grep -r`` of a directory (OPENDIR, READDIR, RELEASEDIR) is a
#: round trip to this daemon: on a warm grep that is 40 % of all requests.
KERNEL_CACHE_FLAGS: bool = hasattr(pyfuse3.FileInfo(), "noflush")
#: ... and can run FUSE's no-open mode: handlers get the inode when the kernel sends no
#: handle, and O_TRUNC can be asked for as a separate setattr (``enable_atomic_o_trunc``),
#: since there is no open to carry it.
NO_OPEN_SUPPORT: bool = hasattr(pyfuse3.Operations, "enable_atomic_o_trunc")
#: ... and passes the request context (the pid) to write and flush, so that a reader's
#: close, which in no-open mode is a FLUSH like a writer's, does not commit a write in
#: progress.
CTX_IN_IO: bool = hasattr(pyfuse3.Operations, "request_context_in_io")


class Ops(pyfuse3.Operations):
    """The mount's filesystem operations over a :class:`WorkingSet`."""

    supports_dot_lookup = False
    enable_writeback_cache = False
    enable_acl = False

    def __init__(
        self,
        ws: WorkingSet,
        cfg: Config,
        recall: RecallFn | None = None,
        status: StatusFn | None = None,
    ) -> None:
        super().__init__()
        self.ws = ws
        self.cfg = cfg
        self.inodes = InodeTable()
        self.handles: dict[int, Handle | DirHandle] = {}
        #: handler name -> requests served (counted by ``fuse_errors``)
        self.requests: Counter[str] = Counter()
        self._next_fh = _FH_BASE
        self.writing: dict[str, Shadow] = {}
        #: paths whose content changed since the kernel last cached their pages: their next
        #: read-only open drops the page cache (keep_cache off) instead of serving old bytes
        self.changed: set[str] = set()
        self._inflight: dict[str, trio.Event] = {}
        self._fetch_errors: dict[str, Exception] = {}
        #: path -> monotonic time its last fetch failed: the kernel retries a failed read
        #: (readahead, then the page itself), which must not wait out the timeouts twice
        self._failed_at: dict[str, float] = {}
        self.limiter = trio.CapacityLimiter(max(4, cfg.max_workers))
        self.upload_wake = trio.Event()
        self.uid, self.gid = os.getuid(), os.getgid()
        self.mounted_at = time.time()
        #: FUSE no-open mode (see the module docstring)
        self.no_open = cfg.no_open and NO_OPEN_SUPPORT
        self.read_only = cfg.read_only
        #: read by pyfuse3's init: with no open to carry O_TRUNC, it must come as setattr
        self.enable_atomic_o_trunc = not self.no_open
        #: read by pyfuse3 at each write and flush: pass the request context
        self.request_context_in_io = CTX_IN_IO
        self.notifier = KernelNotifier()
        #: .recall/, .brainfs/ and .git
        self.magic = MagicFiles(recall, status, self.no_open)
        #: dir path -> mtime (ns) of its last listing change; the kernel compares it with
        #: the mtime its cached listing was taken at
        self.dir_mtime: dict[str, int] = {}
        #: no-open: dir inode -> entries, taken at the readdir from offset 0
        self._listings: dict[int, list[tuple[str, bool]]] = {}
        #: paths whose commit is in progress: a new shadow waits for it
        self._committing: dict[str, trio.Event] = {}
        #: paths whose shadow is being made: a concurrent request waits for it
        self._making: dict[str, trio.Event] = {}
        #: no-open: files made by create() whose first close has not come yet (their
        #: upload waits for it, so that a create and its writes are one version)
        self._created: dict[str, int] = {}
        #: no-open: directory inodes invalidated since a fetching read last waited for them
        self._dirs_invalidated: set[int] = set()
        if self.no_open:
            ws.on_listing_change = self._listing_changed
        #: set once the corpus listing is known; a mount that started from the listing
        #: snapshot clears it until its first real LIST is in (see fs/daemon.py)
        self.listing_ready = trio.Event()
        self.listing_ready.set()

    # ------------------------------------------------------------------ what the daemon sets
    @property
    def ino_of(self) -> dict[str, int]:
        """Path -> inode of every path the kernel has been told of."""
        return self.inodes.ino_of

    @property
    def gitdir(self) -> str | None:
        """The clone of the wiki's history that ``.git`` names (set by the daemon)."""
        return self.magic.gitdir

    @gitdir.setter
    def gitdir(self, value: str | None) -> None:
        self.magic.gitdir = value

    @property
    def gitdir_ready(self) -> trio.Event:
        """Set once the wiki's history has been looked for (found or not)."""
        return self.magic.gitdir_ready

    # ------------------------------------------------------------------ inodes & attrs
    def _attrs(self, ino: int, path: str) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        a.st_ino = ino
        a.entry_timeout = self.cfg.entry_timeout
        a.attr_timeout = self.cfg.attr_timeout
        a.st_uid, a.st_gid = self.uid, self.gid
        row = self.ws.files.get(path)
        if row is not None and is_link(path):
            # A symbolic link: its object holds the target, and its size is the target's.
            a.st_mode, a.st_nlink = stat.S_IFLNK | 0o777, 1
            a.st_size, mtime = row.size, int(row.mtime * 1e9)
        elif row is not None:
            a.st_mode = stat.S_IFREG | 0o644
            a.st_nlink = 1
            shadow = self.writing.get(path)
            if shadow is not None:
                # A write or truncation in progress changes size, mtime and ctime now, as on
                # a local disk, not at its commit.
                st = os.fstat(shadow.fd)
                a.st_size, mtime = st.st_size, st.st_mtime_ns
            else:
                a.st_size, mtime = row.size, int(row.mtime * 1e9)
        elif self.ws.is_dir(path):
            a.st_mode = stat.S_IFDIR | 0o755
            # "." and the parent's entry, and each subdirectory's "..": tools such as find
            # trust this count to know when a directory has no subdirectories left.
            prefix = path + "/" if path else ""
            a.st_nlink = 2 + sum(1 for n in self.ws.children.get(path, ())
                                 if self.ws.is_dir(prefix + n))
            a.st_size = 0
            mtime = self.dir_mtime.get(path) or int(self.mounted_at * 1e9)
        else:
            raise NotFound(path)
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = mtime
        given = self.ws.attrs.get(path)
        if given is not None:
            a.st_mode = stat.S_IFMT(a.st_mode) | given.mode
            a.st_uid, a.st_gid = given.uid, given.gid
            a.st_ctime_ns = max(mtime, int(given.ctime * 1e9))
        a.st_blksize = 4096
        a.st_blocks = (a.st_size + 511) // 512
        return a

    def _set_attrs(self, path: str, mode: int | None = None, uid: int | None = None,
                   gid: int | None = None) -> None:
        """Record a mode or owner change of ``path``, keeping what is not changed. The
        kernel (default_permissions) has already checked that the caller may."""
        have = self.ws.attrs.get(path)
        if have is None:
            default = 0o777 if is_link(path) else 0o644 if path in self.ws.files else 0o755
            have = Attrs(default, self.uid, self.gid, 0.0)
        self.ws.set_attrs(path, Attrs(
            have.mode if mode is None else stat.S_IMODE(mode),
            have.uid if uid is None or uid == -1 else uid,
            have.gid if gid is None or gid == -1 else gid,
            time.time()))

    def _file_row(self, path: str) -> FileRow:
        """The catalog row of the file ``path``: IsADirectory or NotFound otherwise."""
        row = self.ws.files.get(path)
        if row is None:
            raise IsADirectory(path) if self.ws.is_dir(path) else NotFound(path)
        return row

    def _pin(self, path: str) -> None:
        """Count ``path`` as in use: no eviction takes its local copy meanwhile."""
        self.ws.open_count[path] += 1

    def _unpin(self, path: str) -> None:
        self.ws.open_count[path] -= 1
        if self.ws.open_count[path] <= 0:
            del self.ws.open_count[path]

    # ------------------------------------------------------------------ materialization
    async def materialize(self, paths: list[str]) -> dict[str, Exception]:
        """Fetch the non-local ``paths`` in one parallel batch; concurrent callers asking
        for the same path wait for the same fetch. Returns errors by path."""
        mine: list[str] = []
        waits: list[trio.Event] = []
        held: set[str] = set()
        now = time.monotonic()
        for p in dict.fromkeys(paths):
            row = self.ws.files.get(p)
            if row is None or row.is_local:
                continue
            if now - self._failed_at.get(p, -FETCH_FAILURE_HOLD_S) < FETCH_FAILURE_HOLD_S:
                held.add(p)  # failed a moment ago: the same error at once (below)
                continue
            ev = self._inflight.get(p)
            if ev is not None:
                waits.append(ev)
            else:
                self._inflight[p] = trio.Event()
                mine.append(p)
        errors: dict[str, Exception] = {}
        if mine:
            try:
                results = await trio.to_thread.run_sync(self.ws.fetch, mine, limiter=self.limiter)
                errors = self.ws.apply_fetched(results)
                for p, e in errors.items():
                    log.error("fetch of %s failed: %s", p, e)
                self.ws.evict()
            finally:
                for p in mine:
                    self._inflight.pop(p).set()
        for ev in waits:
            await ev.wait()
        for p in paths:
            row = self.ws.files.get(p)
            if row is not None and not row.is_local and p not in errors:
                errors[p] = self._fetch_errors.get(p) or OSError(errno.EIO, f"{p}: fetch failed")
        self._fetch_errors.update(errors)
        end = time.monotonic()
        for p in errors:
            if p not in held:
                self._failed_at[p] = end
        for p in paths:
            if p not in errors:
                self._failed_at.pop(p, None)
        return errors

    async def _ensure_local(self, path: str) -> None:
        errors = await self.materialize([path])
        if path in errors:
            raise errors[path]
        self._fetch_errors.pop(path, None)

    def content_changed(self, paths: list[str]) -> None:
        """The bytes of ``paths`` changed behind the kernel: readers must not get old pages."""
        for p in paths:
            if not self.no_open:
                self.changed.add(p)  # the next read-only open drops the pages
                continue
            ino = self.inodes.ino_of.get(p)
            if ino is not None:
                self.notifier.push(ino)

    def _listing_changed(self, d: str) -> None:
        """No-open mode: the working set's listing of ``d`` changed (hook, never blocks)."""
        self.ws.listing_changed.discard(d)
        # A strictly newer mtime, and the kernel's attributes dropped so that it sees it:
        # at the next listing from offset 0 it compares and re-reads. This also covers an
        # empty cached listing, which has no page an invalidation could drop.
        self.dir_mtime[d] = max(time.time_ns(), self.dir_mtime.get(d, 0) + 1)
        ino = self.inodes.ino_of.get(d)
        if ino is not None:
            self.notifier.push(ino)
            self._dirs_invalidated.add(ino)

    def invalidate(self, paths: list[str]) -> None:
        """Tell the kernel that entries for ``paths`` may have changed (never blocks)."""
        for p in paths:
            parent, _, name = p.rpartition("/")
            pino = self.inodes.ino_of.get(parent)
            if pino is not None:
                # A link's object changed: the kernel knows the link by its own name.
                shown = link_name(name) if is_link(name) else name
                pyfuse3.invalidate_entry_async(pino, os.fsencode(shown), ignore_enoent=True)

    # ------------------------------------------------------------------ lookups
    @fuse_errors
    async def lookup(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        if len(name) > NAME_MAX:
            # The kernel does not check: stat, unlink, rename… of such a name would say
            # ENOENT, as if the name were fine.
            raise NameTooLong(os.fsdecode(name))
        magic = await self.magic.lookup(parent_inode, name)
        if magic is not None:
            return magic
        path = self.inodes.child(parent_inode, name)
        if is_link(path):
            raise NotFound(path)  # a link's object is known by the link's name only
        # Any corpus path resolves, local or not: the catalog knows its size. The content
        # comes at open or first read (so `stat` costs nothing, and overwriting needs no
        # download).
        kept = self.ws.resolve(path)
        if kept is None and not self.listing_ready.is_set():
            # Started from the listing snapshot, which may predate this name: the real
            # LIST, moments away, says whether it exists.
            await self.listing_ready.wait()
            kept = self.ws.resolve(path)
        if kept is None:
            raise NotFound(path)
        path = kept
        row = self.ws.files.get(path)
        if row is not None and self.no_open:
            # With no open to see, a lookup is the access the LRU gets to hear about.
            row.atime = time.time()
        return self._attrs(self.inodes.ino(path), path)

    @fuse_errors
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        if self.magic.owns(inode):
            return self.magic.getattr(inode)
        if inode in self.inodes.unlinked:
            return self._unlinked_attrs(inode)
        return self._attrs(inode, self.inodes.path(inode))

    def _unlinked_attrs(self, ino: int) -> pyfuse3.EntryAttributes:
        """An unlinked file still open somewhere: its kept content, no links."""
        st = os.stat(self.inodes.unlinked[ino])
        a = pyfuse3.EntryAttributes()
        a.st_ino, a.st_mode, a.st_nlink = ino, stat.S_IFREG | 0o644, 0
        a.st_uid, a.st_gid, a.st_size = self.uid, self.gid, st.st_size
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = st.st_mtime_ns
        a.st_blksize, a.st_blocks = 4096, (st.st_size + 511) // 512
        a.attr_timeout = a.entry_timeout = 0
        return a

    @fuse_errors
    async def setattr(self, inode: int, attr: pyfuse3.EntryAttributes, fields: pyfuse3.SetattrFields,
                      fh: int | None, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        if self.magic.owns(inode):
            self.magic.refuse_change(inode)
        path = self.inodes.path(inode)
        row = self.ws.files.get(path)
        if fields.update_mode or fields.update_uid or fields.update_gid:
            # Kept by this cache (S3 stores no modes or owners); see fs/SEMANTICS.md.
            self._set_attrs(path, attr.st_mode if fields.update_mode else None,
                            attr.st_uid if fields.update_uid else None,
                            attr.st_gid if fields.update_gid else None)
        if row is not None:
            if fields.update_size:
                shadow = await self._shadow(path, truncate=attr.st_size == 0)
                os.ftruncate(shadow.fd, attr.st_size)
                shadow.dirty = True
                shadow.writers.add(ctx.pid)
                shadow.touched = time.monotonic()
                # No-open mode cannot tell an O_TRUNC open (whose close commits) from a
                # bare truncate(2): both come without a handle. commit_idle() commits the
                # latter once its file has been quiet for commit_idle_seconds.
                if not self.no_open and not self._has_writer(path):
                    await self._commit(path)
            if fields.update_mtime:
                row.mtime = attr.st_mtime_ns / 1e9
        elif fields.update_mtime and self.ws.is_dir(path):
            # Kept for the life of the mount (S3 stores no directory times).
            self.dir_mtime[path] = attr.st_mtime_ns
        return self._attrs(inode, path)

    @fuse_errors
    async def forget(self, inode_list: list[tuple[int, int]]) -> None:
        # Only the kept content of unlinked files is freed (see fs/inodes.py).
        for kept in self.inodes.forget([ino for ino, _ in inode_list]):
            _unlink_quiet(kept)

    # ------------------------------------------------------------------ directories
    @fuse_errors
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int | pyfuse3.FileInfo:
        if self.no_open:
            # From now on the kernel opens directories itself and caches their listings.
            raise NotSupported("opendir")
        virtual = self.magic.owns(inode)
        entries = self._entries(inode)
        path = "" if virtual else self.inodes.path(inode)
        fh = self._next_fh
        self._next_fh += 1
        self.handles[fh] = DirHandle(inode, entries)
        if virtual or not KERNEL_CACHE_FLAGS:
            return fh
        # The kernel may answer later listings of this directory from its cache; the
        # working set marks every directory whose entries change (fetch, evict, relist,
        # writes), and such a directory's next open drops that cache.
        keep = path not in self.ws.listing_changed
        self.ws.listing_changed.discard(path)
        if not entries:
            # Never let the kernel cache an empty listing: with no page to invalidate, a
            # later open without keep_cache does not drop it, and `ls` would stay empty.
            return pyfuse3.FileInfo(fh=fh, keep_cache=False)
        return pyfuse3.FileInfo(fh=fh, keep_cache=keep, cache_readdir=True)

    def _entries(self, inode: int) -> list[tuple[str, bool]]:
        if self.magic.owns(inode):
            return self.magic.entries(inode)
        entries = self.ws.listdir(self.inodes.path(inode))
        # Links are listed by their objects; one whose name a file or directory holds too
        # (two mounts racing) stays hidden, as lookup shows the plain one.
        names = {n for n, _ in entries}
        return [(n, d) for n, d in entries if not is_link(n) or link_name(n) not in names]

    @fuse_errors
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        h = self.handles.get(fh)
        if isinstance(h, DirHandle):
            dir_ino, entries = h.ino, h.entries
        else:
            # No-open: ``fh`` is the directory's inode. One snapshot per pass, taken at
            # offset 0, keeps later offsets valid while the directory changes.
            dir_ino = fh
            entries = self._listings.get(dir_ino) if start_id else None
            if entries is None:
                entries = self._listings[dir_ino] = self._entries(dir_ino)
        if self.magic.owns(dir_ino):
            if self.magic.readdir(dir_ino, entries, start_id, token):
                self._listings.pop(dir_ino, None)
            return
        base = self.inodes.path(dir_ino)  # ENOENT, not EIO, for a directory removed meanwhile
        for i in range(start_id, len(entries)):
            name, _ = entries[i]
            path = f"{base}/{name}" if base else name
            try:
                attrs = self._attrs(self.inodes.ino(path), path)
            except NotFound:
                continue  # removed since opendir
            shown = link_name(name) if is_link(name) else name
            if not pyfuse3.readdir_reply(token, os.fsencode(shown), attrs, i + 1):
                return
        self._listings.pop(dir_ino, None)

    @fuse_errors
    async def releasedir(self, fh: int) -> None:
        self.handles.pop(fh, None)

    @fuse_errors
    async def mkdir(self, parent_inode: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        self.ws.mkdir(path)
        self.dir_mtime[path] = time.time_ns()  # made now, not at mount time
        self._created_attrs(path, mode, 0o755, ctx)
        self._wake_uploader()  # its marker
        return self._attrs(self.inodes.ino(path), path)

    @fuse_errors
    async def rmdir(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        if is_link(self.ws.resolve(path) or ""):
            raise NotADirectory(path)
        if self.ws.children.get(path):
            # Remote files count too: removing a directory must not orphan them silently.
            raise NotEmpty(path)
        self.ws.rmdir(path)
        self.inodes.drop(path)
        self._wake_uploader()  # its marker

    # ------------------------------------------------------------------ files
    @fuse_errors
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        if self.no_open:
            # The kernel asks once: from now on it opens files itself, with their pages
            # kept cached, and sends reads, writes and flushes with the inode. O_TRUNC
            # arrives as a setattr (enable_atomic_o_trunc is off).
            raise NotSupported("open")
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
            shadow = await self._shadow(path, truncate=bool(flags & os.O_TRUNC))
            if flags & os.O_TRUNC:
                shadow.dirty = True
        fh = self._new_fh(Handle(inode, writable))
        self._pin(path)
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
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        # No-open: the file becomes durable at its creator's first close (a crash before it
        # leaves no empty file that was meant to be written).
        self.ws.create(path, durable=not self.no_open)
        self._created_attrs(path, mode, 0o644, ctx)
        ino = self.inodes.ino(path)
        if self.no_open:
            # No handle: the kernel of a no-open mount sends no RELEASE, not even for a
            # created file, so the file is written, flushed and read by inode like any
            # other. It exists now, empty; the first write makes its shadow, and the first
            # close commits and uploads create and writes as one version.
            self._created[path] = ctx.pid
            return pyfuse3.FileInfo(fh=0, keep_cache=True), self._attrs(ino, path)
        await self._shadow(path, truncate=True)
        fh = self._new_fh(Handle(ino, True))
        self._pin(path)
        self._wake_uploader()
        return pyfuse3.FileInfo(fh=fh, direct_io=True, keep_cache=False), self._attrs(ino, path)

    @fuse_errors
    async def read(self, fh: int, off: int, size: int) -> bytes:
        h = self.handles.get(fh)
        if h is None:
            return await self._read_inode(fh, off, size)
        assert isinstance(h, Handle)
        if h.virtual is not None:
            return h.virtual[off : off + size]
        path = self.inodes.path_of[h.ino]
        # Readers see the last committed version, writers their own work in progress.
        shadow = self.writing.get(path) if h.writable else None
        if shadow is not None:
            return os.pread(shadow.fd, size, off)
        if h.fd < 0:
            row = self.ws.files.get(path)
            if row is None or not row.is_local:
                await self._ensure_local(path)
            h.fd = os.open(self.ws.blobs.location(path), os.O_RDONLY)
        return os.pread(h.fd, size, off)

    @fuse_errors
    async def write(self, fh: int, off: int, buf: bytes,
                    ctx: pyfuse3.RequestContext | None = None) -> int:
        h = self.handles.get(fh)
        if h is None:
            # No-open: ``fh`` is the inode; the kernel has checked the open mode.
            if self.magic.owns(fh):
                self.magic.refuse_change(fh)
            if fh in self.inodes.unlinked:
                # Written after its unlink: private to its descriptors, never uploaded.
                fd = os.open(self.inodes.unlinked[fh], os.O_WRONLY)
                try:
                    return os.pwrite(fd, buf, off)
                finally:
                    os.close(fd)
            path = self.inodes.path(fh)
            self._file_row(path)
        else:
            assert isinstance(h, Handle)
            if not h.writable:
                raise BadHandle(f"handle {fh}")
            path = self.inodes.path_of[h.ino]
        # (_shadow waits while a commit of the file is sealing the current shadow.)
        shadow = await self._shadow(path, truncate=False)
        shadow.dirty = True
        shadow.touched = time.monotonic()
        shadow.written = True
        if ctx is not None:
            shadow.writers.add(ctx.pid)
        try:
            return os.pwrite(shadow.fd, buf, off)
        except OSError as e:
            shadow.failed = e
            raise

    @fuse_errors
    async def flush(self, fh: int, ctx: pyfuse3.RequestContext | None = None) -> None:
        # close(2) waits for flush, not for release: committing here is what makes a file
        # durable by the time close returns, even if the daemon is killed right after.
        if self.read_only:
            # Nothing to commit, ever: ENOSYS tells the kernel never to send FLUSH again.
            raise NotSupported("flush")
        h = self.handles.get(fh)
        if h is None:
            # No-open: every close of the file, reader's or writer's, lands here; a writer
            # that made the file with create() holds a handle and commits at its own close.
            path = self.inodes.path_of.get(fh)
            if path is None:
                return
            creator = self._created.get(path)
            if creator is not None and (ctx is None or _writers_close(ctx.pid, {creator}, True)):
                # The creator's first close: the file is durable from here on, written or
                # not (its commit below records it; persist() covers an empty one).
                del self._created[path]
                if (path in self.writing or path in self._committing) and not self._has_writer(path):
                    await self._commit_pending(path)
                self.ws.persist(path)
                self._wake_uploader()
                return
            if (path in self.writing or path in self._committing) and not self._has_writer(path):
                shadow = self.writing.get(path)
                if (ctx is not None and shadow is not None and path not in self._committing
                        and not _writers_close(ctx.pid, shadow.writers, shadow.written)):
                    # A reader's close: the writer's own close (or fsync, or the idle
                    # commit) commits; this one must not publish a half-written file.
                    return
                await self._commit_pending(path)
            return
        if isinstance(h, Handle) and h.writable:
            await self._commit_pending(self.inodes.path_of[h.ino])

    @fuse_errors
    async def fsync(self, fh: int, datasync: bool) -> None:
        await self.flush(fh)

    @fuse_errors
    async def release(self, fh: int) -> None:
        # (Only handles get here: the kernel sends no RELEASE for a no-open file.)
        h = self.handles.pop(fh, None)
        if not isinstance(h, Handle) or h.virtual is not None:
            return
        if h.fd >= 0:
            os.close(h.fd)
        path = self.inodes.path_of.get(h.ino)
        if path is None:
            return
        self._unpin(path)
        if h.writable and not self._has_writer(path):
            await self._commit_pending(path)
            if path in self.writing and not self.writing[path].dirty:
                self._discard_shadow(path)

    @fuse_errors
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        if not is_link(path):
            path = self.ws.resolve(path) or path
        await self._wait_commit(path)
        self._keep_unlinked(path)
        if path in self.writing:
            self._discard_shadow(path)
        self._created.pop(path, None)
        self.ws.unlink(path)
        self.inodes.drop(path)
        self._wake_uploader()

    @fuse_errors
    async def rename(self, parent_inode_old: int, name_old: bytes, parent_inode_new: int,
                     name_new: bytes, flags: int, ctx: pyfuse3.RequestContext) -> None:
        self._writable_parent(parent_inode_old)
        self._writable_parent(parent_inode_new)
        if flags & pyfuse3.RENAME_EXCHANGE:
            raise InvalidRequest("RENAME_EXCHANGE")
        old = self.inodes.child(parent_inode_old, name_old)
        new = self.inodes.child(parent_inode_new, name_new)
        if is_link(old):
            raise NotFound(old)
        # A link moves as its object, to the object of its new name.
        old = self.ws.resolve(old) or old
        if is_link(old):
            new = link_of(new)
        noreplace = bool(flags & pyfuse3.RENAME_NOREPLACE)
        moves = self.ws.rename_plan(old, new, noreplace)
        if old == new:
            return
        # S3 has no rename: the new names are uploaded from local copies. Writes in
        # progress are committed first, so the moved file is the one its writers closed.
        for src, dst in moves:
            await self._commit_pending(src)
            if src in self.writing:
                self._discard_shadow(src)
            await self._wait_commit(dst)
            if dst in self.writing:
                self._discard_shadow(dst)
        errors = await self.materialize([src for src, _ in moves])
        if errors:
            raise next(iter(errors.values()))
        replaced = [dst for _, dst in moves if dst in self.ws.files]
        if moves and other_form(new) in self.ws.files:
            replaced.append(other_form(new))  # the same name in the other kind
        for dst in replaced:
            self._keep_unlinked(dst)  # replaced: its open descriptors keep reading it
        # Planned again: the awaits above let other requests change the tree.
        self.ws.rename(old, new, noreplace)
        for dst in replaced:
            if dst != new:
                self.inodes.drop(dst)
        # The moved files are uploaded under their new names now, closed or not.
        self._created = {p: pid for p, pid in self._created.items()
                         if p != old and not p.startswith(old + "/")}
        self.inodes.move(old, new)
        self._wake_uploader()

    @fuse_errors
    async def mknod(self, parent_inode: int, name: bytes, mode: int, rdev: int,
                    ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        # mknod(2) of a regular file is a create without an open; FIFOs, sockets and
        # devices have no meaning in a bucket another machine mounts.
        if not stat.S_ISREG(mode):
            raise NotSupported("mknod of a FIFO, socket or device")
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        self.ws.create(path, durable=True)
        self._created_attrs(path, mode, 0o644, ctx)
        self._wake_uploader()
        return self._attrs(self.inodes.ino(path), path)

    @fuse_errors
    async def symlink(self, parent_inode: int, name: bytes, target: bytes,
                      ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        lp = self.ws.symlink(path, target)
        self._created_attrs(lp, 0o777, 0o777, ctx)
        self._wake_uploader()
        return self._attrs(self.inodes.ino(lp), lp)

    @fuse_errors
    async def readlink(self, inode: int, ctx: pyfuse3.RequestContext) -> bytes:
        path = self.inodes.path(inode)
        if not is_link(path):
            raise InvalidRequest(f"{path} is not a symbolic link")
        await self._ensure_local(path)
        return self.ws.readlink(path)

    @fuse_errors
    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        s = pyfuse3.StatvfsData()
        s.f_bsize = s.f_frsize = 4096
        # What can really be written: the cache's disk, capped by the cache budget.
        disk = os.statvfs(self.ws.cache_dir)
        disk_total = disk.f_blocks * disk.f_frsize
        disk_avail = disk.f_bavail * disk.f_frsize
        budget = max(self.cfg.cache_budget_bytes, self.ws.local_bytes)
        total = min(budget, disk_total)
        avail = max(0, min(disk_avail, budget - self.ws.local_bytes))
        s.f_blocks = total // 4096
        s.f_bfree = s.f_bavail = avail // 4096
        s.f_files = len(self.ws.files) + 1_000_000
        s.f_ffree = s.f_favail = 1_000_000
        s.f_namemax = 255
        return s

    async def _read_inode(self, ino: int, off: int, size: int) -> bytes:
        """No-open read: by inode, with no handle; the kernel asks only for pages it lacks."""
        if self.magic.owns(ino):
            return self.magic.read(ino, off, size)
        if ino in self.inodes.unlinked:
            return _pread_path(self.inodes.unlinked[ino], size, off)
        path = self.inodes.path(ino)
        # Writes land in the page cache that every reader shares (as on a local disk), so
        # a page read back must come from the work in progress too.
        shadow = self.writing.get(path)
        if shadow is not None:
            return os.pread(shadow.fd, size, off)
        # In use while it is read: no eviction (another reader's fetch makes room) may take
        # the copy between the fetch and the read.
        self._pin(path)
        try:
            for attempt in (1, 2):
                row = self._file_row(path)
                if not row.is_local:
                    await self._ensure_local(path)
                    # The fetch added the file to its directory's listing: let the kernel
                    # hear of it before this read returns, so `ls` right after `cat` lists it.
                    dirs, self._dirs_invalidated = self._dirs_invalidated, set()
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
        finally:
            self._unpin(path)

    async def commit_idle(self, everything: bool = False) -> None:
        """No-open mode: commit shadows that no close will commit (a bare truncate(2)),
        once they have been quiet for ``commit_idle_seconds`` (``everything``: at once,
        at unmount). A shadow that got writes is left to its writer's close or fsync: a
        pause in the middle of a write must not publish half a file."""
        now = time.monotonic()
        idle = 0.0 if everything else self.cfg.commit_idle_seconds
        for path, shadow in list(self.writing.items()):
            if (shadow.dirty and now - shadow.touched >= idle
                    and (everything or not shadow.written)
                    and path not in self._committing and not self._has_writer(path)
                    and self.writing.get(path) is shadow):
                try:
                    await self._commit(path)
                except Exception as e:  # noqa: BLE001 - logged; the old version stays
                    log.error("commit of %s failed: %s", path, e)

    # ------------------------------------------------------------------ write helpers
    def _created_attrs(self, path: str, mode: int, default: int,
                       ctx: pyfuse3.RequestContext) -> None:
        """The mode a create or mkdir asked for (the kernel applied the umask), and its
        caller as owner; nothing is stored when that is the default."""
        if stat.S_IMODE(mode) != default or ctx.uid != self.uid or ctx.gid != self.gid:
            self.ws.set_attrs(path, Attrs(stat.S_IMODE(mode), ctx.uid, ctx.gid, time.time()))

    def _writable_parent(self, parent_inode: int) -> None:
        if self.magic.owns(parent_inode):
            self.magic.refuse_change(parent_inode)

    def _new_fh(self, handle: Handle) -> int:
        fh = self._next_fh
        self._next_fh += 1
        self.handles[fh] = handle
        return fh

    def _has_writer(self, path: str) -> bool:
        ino = self.inodes.ino_of.get(path)
        return any(isinstance(h, Handle) and h.writable and h.ino == ino for h in self.handles.values())

    async def _shadow(self, path: str, truncate: bool) -> Shadow:
        while True:
            # A new shadow copies the committed content: wait while a commit is making a
            # new one, or while another request is already copying it.
            busy = self._committing.get(path)
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
        self._pin(path)
        try:
            row = self.ws.files.get(path)
            if row is not None and not row.is_local and not truncate:
                await self._ensure_local(path)
            # The base is read before the copy: a relist that lands while the copy is made
            # then makes the upload a conflict instead of a silent overwrite.
            base = row.etag if row is not None else ""
            tmp = await trio.to_thread.run_sync(self.ws.blobs.new_shadow, path, not truncate)
            shadow = Shadow(tmp, os.open(tmp, os.O_RDWR), base=base)
            self.writing[path] = shadow
        finally:
            self._unpin(path)
            del self._making[path]
            made.set()
        return shadow

    def _discard_shadow(self, path: str) -> None:
        shadow = self.writing.pop(path)
        os.close(shadow.fd)
        _unlink_quiet(shadow.tmp)

    async def _commit_pending(self, path: str) -> None:
        """Commit the writes made to ``path`` so far: wait for a commit in progress (it
        holds them: later writes wait for it and go to a new shadow), or commit a dirty
        shadow."""
        busy = self._committing.get(path)
        if busy is not None:
            await busy.wait()
            return
        shadow = self.writing.get(path)
        if shadow is not None and shadow.dirty:
            await self._commit(path)

    async def _wait_commit(self, path: str) -> None:
        """Wait until no commit of ``path`` is in progress."""
        while (busy := self._committing.get(path)) is not None:
            await busy.wait()

    def persist_created(self) -> None:
        """Record every created file whose creator has not closed it yet (at unmount)."""
        for path in list(self._created):
            self.ws.persist(path)
        self._created.clear()

    def busy_paths(self) -> set[str]:
        """Paths whose upload must wait: being written, committed, or created and not
        yet closed (the uploader carries out their journal rows after the commit)."""
        return set(self.writing) | set(self._committing) | set(self._created)

    async def _commit(self, path: str) -> None:
        # The shadow stays the file's content for readers and getattr while it is sealed
        # (an O_APPEND writer sizes its write from getattr: the old size would make it
        # overwrite the last record); writes wait on _committing and go to a new shadow.
        shadow = self.writing[path]
        done = self._committing[path] = trio.Event()
        try:
            if shadow.failed is not None:
                # Part of the new content never reached the disk: keep the old version.
                raise shadow.failed
            size, digest = await trio.to_thread.run_sync(self.ws.blobs.seal_shadow, shadow.tmp)
            self.ws.apply_commit(path, size, digest, shadow.tmp, base=shadow.base)
        except BaseException:
            _unlink_quiet(shadow.tmp)
            raise
        finally:
            if self.writing.get(path) is shadow:
                del self.writing[path]
            os.close(shadow.fd)
            del self._committing[path]
            done.set()
            # Daemon opens: writers bypass the page cache, readers' next open drops it.
            # No-open: the page cache holds what was written, unless the commit failed;
            # dropping it either way costs one re-read and is never wrong.
            self.content_changed([path])
        self._wake_uploader()

    def _keep_unlinked(self, path: str) -> None:
        """Keep the content of ``path`` for its inode before the name goes (a hard link in
        the cache's tmp/, swept at the next start if the daemon dies first)."""
        row = self.ws.files.get(path)
        shadow = self.writing.get(path)
        if path not in self.inodes.ino_of or row is None:
            return
        if shadow is not None and shadow.dirty:
            # Written and not committed: its writer's descriptor reads on what it wrote.
            kept = self.ws.blobs.keep_file(shadow.tmp)
        elif row.is_local:
            kept = self.ws.blobs.keep(path)
        else:
            return
        if kept is not None:
            self.inodes.keep_unlinked(path, kept)

    def _wake_uploader(self) -> None:
        self.upload_wake.set()


def _read_only_info(fh: int, direct_io: bool = False, keep_cache: bool = True) -> pyfuse3.FileInfo:
    """Open reply for a reader: its flush has nothing to commit, so close(2) skips it."""
    if KERNEL_CACHE_FLAGS:
        return pyfuse3.FileInfo(fh=fh, direct_io=direct_io, keep_cache=keep_cache, noflush=True)
    return pyfuse3.FileInfo(fh=fh, direct_io=direct_io, keep_cache=keep_cache)


def _writers_close(pid: int, writers: set[int], written: bool) -> bool:
    """Whether a close by ``pid`` (the closing thread, as FUSE reports it) is a writer's:
    a thread that wrote or truncated it, or, once data was written, another thread of the
    same process (a program may close from another thread than it wrote from). A thread
    of the same process that only read does not commit a truncation its writer has not
    filled yet (the idle commit takes a truncation no one fills)."""
    if not writers or pid in writers:
        return True
    if not written:
        return False
    tgid = _tgid(pid)
    return tgid is not None and any(_tgid(w) == tgid for w in writers)


def _tgid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _pread_path(p: str, size: int, off: int) -> bytes:
    fd = os.open(p, os.O_RDONLY)
    try:
        return os.pread(fd, size, off)
    finally:
        os.close(fd)


def _unlink_quiet(p: str) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


__all__ = ["Ops"]
