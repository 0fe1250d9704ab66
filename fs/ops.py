"""pyfuse3 operations shared by both ways of running: translate kernel requests into
working-set calls.

Handlers stay thin; the working set decides. Blocking work (S3, fsync, copying a file for
a write) goes to worker threads; the open/lookup/getattr paths of a local file do no I/O at
all, because they are what a warm ``grep -r`` costs. Reads and writes of local files call
``os.pread``/``os.pwrite`` inline: they hit the page cache of a local disk, and a thread hop
would cost more than the call.

The magic entries at the root (``.recall/``, ``.brainfs/``, ``.git``) are served by
:class:`~brainfs.fs.magic.MagicFiles`, the inode numbers by
:class:`~brainfs.fs.inodes.InodeTable`, fetches by :class:`~brainfs.fs.fetcher.Fetcher`;
every refusal is a typed error that :func:`~brainfs.fs.errors.fuse_errors` turns into its
errno (one table, ``fs/errors.py``).

Two ways to run, one subclass each, chosen at mount (:func:`~brainfs.fs.daemon.make_ops`):

- **no-open** (:class:`~brainfs.fs.noopen.NoOpenOps`, the default with pyfuse3 built by
  ``.ci/build-pyfuse3``): ``open`` and ``opendir`` answer ENOSYS once, and from then on the
  kernel opens without asking, keeps pages and listings cached, and sends
  ``read``/``write``/``flush``/``readdir`` with the inode where a file handle would be. The
  daemon pushes every change it makes behind the kernel's back through
  :class:`~brainfs.fs.notify.KernelNotifier`; magic files get their content (and true size)
  at ``lookup``. Even ``create`` returns no handle: the kernel sends no RELEASE in this mode.
- **daemon opens** (:class:`~brainfs.fs.daemonopen.DaemonOpenOps`, stock pyfuse3, or
  ``no_open = false``): every open is a request with its own handle; a changed file or
  listing drops the kernel's cache at its next open.

This module holds what both share: attributes, lookups and the namespace changes (mkdir,
unlink, rename, links). The shadow copies writes go to, and their commit, are
:class:`~brainfs.fs.shadow.Shadows`; which close commits is each mode's to say. What is
kept of a file unlinked or replaced while open is
:class:`~brainfs.fs.unlinkedopen.UnlinkedWhileOpen`'s, a part of :class:`Ops`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections import Counter
from collections.abc import Iterator

import pyfuse3
import trio
from brainfs.backend.config import Config
from brainfs.backend.keys import NAME_MAX, is_link, link_name, link_of
from brainfs.cache.local.catalog import Attrs, FileRow
from brainfs.cache.local.errors import IsADirectory, NameTooLong, NotADirectory, NotEmpty, NotFound
from brainfs.cache.local.paths import other_form
from brainfs.cache.local.workingset import WorkingSet

from .errors import InvalidRequest, NotSupported, fuse_errors
from .fetcher import Fetcher
from .inodes import InodeTable
from .links import LinkPolicy
from .magic import MagicFiles, RecallFn, StatusFn
from .notify import KernelNotifier
from .shadow import Shadow, Shadows
from .unlinkedopen import UnlinkedWhileOpen

log = logging.getLogger("brainfs.fs")

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
#: ... and can answer the FLUSH of an inode with nothing to commit without calling flush()
#: (``pyfuse3.set_flush_filter``): a warm ``grep -r`` closes every file it reads.
FLUSH_FILTER: bool = hasattr(pyfuse3, "set_flush_filter")
#: The pid of a request the kernel makes on its own (page writeback sends ``nocreds``).
KERNEL_PID = 0


class Ops(UnlinkedWhileOpen, pyfuse3.Operations):
    """The mount's filesystem operations over a :class:`WorkingSet`: what both ways of
    running share. A subclass per way says how files and directories are opened, read,
    written and closed (see the module docstring)."""

    supports_dot_lookup = False
    enable_writeback_cache = False
    enable_acl = False
    #: FUSE no-open mode (see the module docstring); each subclass says which it is
    no_open: bool = False

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
        self.links = LinkPolicy(cfg.mount.allow_external_links)
        #: handler name -> requests served (counted by ``fuse_errors``)
        self.requests: Counter[str] = Counter()
        self.limiter = trio.CapacityLimiter(max(4, cfg.s3.max_workers))
        self.fetcher = Fetcher(ws, self.limiter)
        self.fetcher.on_resized = self._sizes_changed
        #: writes are committed at fsync or once quiet, not at close (no-open mode only:
        #: with daemon opens every file costs an OPEN round trip anyway, and close commits)
        self.commit_quiet = self.no_open and cfg.mount.commit == "quiet" and not cfg.mount.read_only
        self.shadows = Shadows(ws, self.fetcher, self.content_changed, self._wake_uploader,
                               record=self.commit_quiet)
        #: path -> shadow of every file being written (the table ``shadows`` keeps)
        self.writing: dict[str, Shadow] = self.shadows.writing
        self.upload_wake = trio.Event()
        self.uid, self.gid = os.getuid(), os.getgid()
        self.mounted_at = time.time()
        self.read_only = cfg.mount.read_only
        #: inodes whose close has something to do (no-open mode with commits at close: a
        #: write, truncation or create since their last close); pyfuse3 answers the FLUSH
        #: of every other inode itself (see NoOpenOps.init)
        self.flush_needed: set[int] = set()
        #: inode -> writes and size changes under way (between their first await and their
        #: reply): a FLUSH that ends meanwhile must leave the inode in ``flush_needed``, or
        #: the writer's close that follows would be answered without its commit
        self.changes_in_flight: dict[int, int] = {}
        #: read by pyfuse3 at each write and flush: pass the request context
        self.request_context_in_io = CTX_IN_IO
        self.notifier = KernelNotifier()
        #: .recall/, .brainfs/ and .git
        self.magic = MagicFiles(recall, status, self.no_open)
        #: dir path -> mtime (ns) of its last listing change; the kernel compares it with
        #: the mtime its cached listing was taken at
        self.dir_mtime: dict[str, int] = {}
        #: no-open: files made by create() whose first close has not come yet (their
        #: upload waits for it, so that a create and its writes are one version); always
        #: empty with daemon opens
        self._created: dict[str, int] = {}
        #: set once the corpus listing is known; a mount that started from the listing
        #: snapshot clears it until its first real LIST is in (see fs/daemon.py)
        self.listing_ready = trio.Event()
        self.listing_ready.set()
        #: path -> inodes of files unlinked or replaced while they may be open whose
        #: content is still only in the bucket: the delete or PUT that would remove that
        #: version waits until it is fetched or the kernel lets go of them
        self._held: dict[str, set[int]] = {}
        #: inode -> fetch in progress of its orphan's content
        self._orphan_fetches: dict[int, trio.Event] = {}
        #: set when an orphan is left to fetch (see :meth:`keep_orphans`)
        self._orphan_wake = trio.Event()
        #: inodes a fetch found grown whose attributes the kernel may not have dropped
        #: yet: a read that fetched waits for that, or the next read stops at the old size
        self.grown: set[int] = set()
        #: inode -> reads of it being answered, and the event set when none is left
        self.reading: Counter[int] = Counter()
        self._read_done: dict[int, trio.Event] = {}

    # ------------------------------------------------------------------ what each mode says
    def content_changed(self, paths: list[str]) -> None:
        """The bytes of ``paths`` changed behind the kernel: readers must not get old pages."""
        raise NotImplementedError

    def _looked_up(self, path: str) -> None:
        """``path`` was looked up (the access an LRU may hear of)."""

    async def _truncated(self, path: str) -> None:
        """``path`` was truncated by setattr (its shadow holds the new size)."""

    async def background(self) -> None:
        """What this mode does in the background while mounted (run in the daemon's
        nursery; nothing unless a subclass says)."""

    async def at_unmount(self) -> None:
        """What must be done once the kernel has let go of the mount."""

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

    def request_counts(self) -> dict[str, int]:
        """Requests served, by handler; ``flush_clean``: FLUSHes pyfuse3 answered itself
        (nothing to commit, see NoOpenOps.init)."""
        counts = dict(self.requests)
        if FLUSH_FILTER and pyfuse3.flush_answered_count():
            counts["flush_clean"] = pyfuse3.flush_answered_count()
        return counts

    # ------------------------------------------------------------------ inodes & attrs
    def _attrs(self, ino: int, path: str) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        a.st_ino = ino
        a.entry_timeout = self.cfg.mount.entry_timeout
        a.attr_timeout = self.cfg.mount.attr_timeout
        a.st_uid, a.st_gid = self.uid, self.gid
        row = self.ws.get(path)
        if row is not None and is_link(path):
            # A symbolic link: its object holds the target, and its size is the target's.
            a.st_mode, a.st_nlink = stat.S_IFLNK | 0o777, 1
            a.st_size, mtime = row.size, int(row.mtime * 1e9)
        elif row is not None:
            a.st_mode = stat.S_IFREG | 0o644
            a.st_nlink = 1
            a.st_size, mtime = self._size_and_mtime(path, row)
        elif self.ws.is_dir(path):
            a.st_mode = stat.S_IFDIR | 0o755
            # "." and the parent's entry, and each subdirectory's "..": tools such as find
            # trust this count to know when a directory has no subdirectories left.
            a.st_nlink = 2 + self.ws.subdir_count(path)
            a.st_size = 0
            mtime = self.dir_mtime.get(path) or int(self.mounted_at * 1e9)
        else:
            raise NotFound(path)
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = mtime
        given = self.ws.attrs_of(path)
        if given is not None:
            a.st_mode = stat.S_IFMT(a.st_mode) | given.mode
            a.st_uid, a.st_gid = given.uid, given.gid
            a.st_ctime_ns = max(mtime, int(given.ctime * 1e9))
        a.st_blksize = 4096
        a.st_blocks = (a.st_size + 511) // 512
        if self.fetcher.unchecked(path):
            # Its size is the listing snapshot's: the kernel must ask again (getattr waits
            # for the first listing), or a read would stop at a size the file lost.
            a.attr_timeout = a.entry_timeout = 0
        return a

    def _size_and_mtime(self, path: str, row: FileRow) -> tuple[int, int]:
        """A file's size and mtime (ns): a write or truncation in progress changes them
        now, as on a local disk, not at its commit."""
        shadow = self.writing.get(path)
        if shadow is None:
            return row.size, int(row.mtime * 1e9)
        st = os.fstat(shadow.fd)
        return st.st_size, st.st_mtime_ns

    def _set_attrs(self, path: str, mode: int | None = None, uid: int | None = None,
                   gid: int | None = None) -> None:
        """Record a mode or owner change of ``path``, keeping what is not changed. The
        kernel (default_permissions) has already checked that the caller may."""
        have = self.ws.attrs_of(path)
        if have is None:
            default = 0o777 if is_link(path) else 0o644 if self.ws.has_file(path) else 0o755
            have = Attrs(default, self.uid, self.gid, 0.0)
        self.ws.set_attrs(path, Attrs(
            have.mode if mode is None else stat.S_IMODE(mode),
            have.uid if uid is None or uid == -1 else uid,
            have.gid if gid is None or gid == -1 else gid,
            time.time()))

    def _file_row(self, path: str) -> FileRow:
        """The catalog row of the file ``path``: IsADirectory or NotFound otherwise."""
        row = self.ws.get(path)
        if row is None:
            raise IsADirectory(path) if self.ws.is_dir(path) else NotFound(path)
        return row

    # ------------------------------------------------------------------ materialization
    async def materialize(self, paths: list[str]) -> dict[str, Exception]:
        """Fetch the non-local ``paths`` in one parallel batch (see
        :meth:`Fetcher.materialize <brainfs.fs.fetcher.Fetcher.materialize>`)."""
        return await self.fetcher.materialize(paths)

    async def _ensure_local(self, path: str) -> None:
        await self.fetcher.ensure_local(path)

    def _sizes_changed(self, sizes: dict[str, tuple[int, int]]) -> None:
        """A fetch found these paths at a new size (old, new): the kernel forgets the size
        it cached (for up to ``attr_timeout``), so that a read goes on to the new end.

        A file that shrank is told only once the request that fetched it has been
        answered: a read sized by the old size then comes back short, and the kernel
        itself cuts its size to what was read — unless its attributes were invalidated
        while that read was out, in which case it keeps the old size and serves the rest
        of the page as zeros."""
        shrunk = []
        for p, (old, new) in sizes.items():
            ino = self.inodes.ino_of.get(p)
            if ino is None:
                continue
            if new < old:
                shrunk.append(ino)
            else:
                self.notifier.push(ino, attr_only=True)
                self.grown.add(ino)
        if shrunk:
            trio.lowlevel.spawn_system_task(self._push_after_reply, shrunk)

    async def _push_after_reply(self, inodes: list[int]) -> None:
        """Invalidate the attributes of ``inodes`` once no read of them is being answered
        (pyfuse3 replies as a handler returns, before its task lets this one run)."""
        for ino in inodes:
            while self.reading[ino] > 0:
                done = self._read_done.setdefault(ino, trio.Event())
                await done.wait()
            await trio.lowlevel.checkpoint()
            self.notifier.push(ino, attr_only=True)

    def read_started(self, ino: int) -> None:
        """A read of ``ino`` is being answered (see :meth:`_push_after_reply`)."""
        self.reading[ino] += 1

    def read_ended(self, ino: int) -> None:
        """... and is answered as the handler returns."""
        self.reading[ino] -= 1
        if self.reading[ino] <= 0:
            del self.reading[ino]
            done = self._read_done.pop(ino, None)
            if done is not None:
                done.set()

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
        self._looked_up(path)
        return self._attrs(self.inodes.ino(path), path)

    @fuse_errors
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        if self.magic.owns(inode):
            return self.magic.getattr(inode)
        if inode in self.inodes.unlinked:
            return self._unlinked_attrs(inode)
        path = self.inodes.path(inode)
        await self.fetcher.wait_checked(path)
        return self._attrs(inode, path)

    @fuse_errors
    async def setattr(self, inode: int, attr: pyfuse3.EntryAttributes, fields: pyfuse3.SetattrFields,
                      fh: int | None, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        if self.magic.owns(inode):
            self.magic.refuse_change(inode)
        if inode in self.inodes.unlinked:
            # ftruncate(2) of a descriptor whose file was unlinked: private to it.
            if fields.update_size:
                (await self._orphan(inode)).truncate(attr.st_size)
            return self._unlinked_attrs(inode)
        path = self.inodes.path(inode)
        row = self.ws.get(path)
        if fields.update_mode or fields.update_uid or fields.update_gid:
            # Kept by this cache (S3 stores no modes or owners); see fs/SEMANTICS.md.
            self._set_attrs(path, attr.st_mode if fields.update_mode else None,
                            attr.st_uid if fields.update_uid else None,
                            attr.st_gid if fields.update_gid else None)
        if row is not None:
            if fields.update_size:
                self.flush_needed.add(inode)  # before any await: its close has work now
                with self.change_in_flight(inode):
                    # A truncation replaces the version the listing names: not the snapshot's.
                    await self.fetcher.wait_checked(path)
                    shadow = await self.shadows.open(path, truncate=attr.st_size == 0)
                    os.ftruncate(shadow.fd, attr.st_size)
                    shadow.dirty = True
                    shadow.writers.add(ctx.pid)
                    shadow.touched = time.monotonic()
                    await self._truncated(path)
            if fields.update_mtime:
                shadow = self.writing.get(path)
                if shadow is not None:
                    # On the work in progress: getattr shows it, and the commit keeps it
                    # unless a later write moves it on (cp -p sets times before close).
                    os.utime(shadow.fd, ns=(attr.st_atime_ns, attr.st_mtime_ns))
                else:
                    self.ws.set_mtime(path, attr.st_mtime_ns / 1e9)
        elif fields.update_mtime and self.ws.is_dir(path):
            # Kept for the life of the mount (S3 stores no directory times).
            self.dir_mtime[path] = attr.st_mtime_ns
        return self._attrs(inode, path)

    @contextlib.contextmanager
    def change_in_flight(self, inode: int) -> Iterator[None]:
        """A write or size change of ``inode`` under way: counted, and the inode marked as
        having work for its next close again when it ends (before the reply, so before the
        kernel can send the writer's FLUSH), whatever a FLUSH did meanwhile."""
        self.changes_in_flight[inode] = self.changes_in_flight.get(inode, 0) + 1
        try:
            yield
        finally:
            left = self.changes_in_flight[inode] - 1
            if left:
                self.changes_in_flight[inode] = left
            else:
                del self.changes_in_flight[inode]
            self.flush_needed.add(inode)

    @fuse_errors
    async def forget(self, inode_list: list[tuple[int, int]]) -> None:
        # Only the kept content of unlinked files is freed (see fs/inodes.py).
        inodes = [ino for ino, _ in inode_list]
        for kept in self.inodes.forget(inodes):
            kept.discard()
        for path, held in list(self._held.items()):
            for ino in held & set(inodes):
                self._release(path, ino)

    # ------------------------------------------------------------------ directories
    def _entries(self, inode: int) -> list[tuple[str, bool]]:
        if self.magic.owns(inode):
            return self.magic.entries(inode)
        entries = self.ws.listdir(self.inodes.path(inode))
        # Links are listed by their objects; one whose name a file or directory holds too
        # (two mounts racing) stays hidden, as lookup shows the plain one.
        names = {n for n, _ in entries}
        return [(n, d) for n, d in entries if not is_link(n) or link_name(n) not in names]

    def _reply_entries(self, dir_ino: int, entries: list[tuple[str, bool]], start_id: int,
                       token: pyfuse3.ReaddirToken) -> bool:
        """Send the entries of a listing snapshot from ``start_id``; True once the last
        one is sent (False when the kernel's buffer filled first)."""
        if self.magic.owns(dir_ino):
            return self.magic.readdir(dir_ino, entries, start_id, token)
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
                return False
        return True

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
        if self.ws.has_children(path):
            # Remote files count too: removing a directory must not orphan them silently.
            raise NotEmpty(path)
        self.ws.rmdir(path)
        self.inodes.drop(path)
        self._wake_uploader()  # its marker

    # ------------------------------------------------------------------ files
    def _create_entry(self, parent_inode: int, name: bytes, mode: int,
                      ctx: pyfuse3.RequestContext, durable: bool) -> tuple[str, int]:
        """The catalog side of ``create``: the new empty file, its mode and owner; returns
        its path and inode."""
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        self.ws.create(path, durable=durable)
        self._created_attrs(path, mode, 0o644, ctx)
        return path, self.inodes.ino(path)

    async def _write_shadow(self, path: str, off: int, buf: bytes,
                            ctx: pyfuse3.RequestContext | None) -> int:
        """Write ``buf`` at ``off`` into the shadow of ``path`` (made if need be)."""
        # (shadows.open waits while a commit of the file is sealing the current shadow.)
        shadow = await self.shadows.open(path, truncate=False)
        shadow.dirty = True
        shadow.touched = time.monotonic()
        shadow.written = True
        if ctx is not None and ctx.pid == KERNEL_PID:
            # Page writeback of a shared mapping (mmap): the kernel's own request, sent at
            # a close of the file (before its FLUSH), at msync, or whenever it writes
            # dirty pages back, with no process named.
            shadow.mapped = True
        elif ctx is not None:
            shadow.writers.add(ctx.pid)
        try:
            return os.pwrite(shadow.fd, buf, off)
        except OSError as e:
            shadow.failed = e
            raise

    def _refuse_flush_if_read_only(self) -> None:
        """close(2) waits for flush, not for release: committing in flush is what makes a
        file durable by the time close returns, even if the daemon is killed right after.
        A read-only mount has nothing to commit, ever: ENOSYS tells the kernel never to
        send FLUSH again."""
        if self.read_only:
            raise NotSupported("flush")

    @fuse_errors
    async def fsync(self, fh: int, datasync: bool) -> None:
        await self.flush(fh)

    @fuse_errors
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._writable_parent(parent_inode)
        path = self.inodes.child(parent_inode, name)
        if not is_link(path):
            path = self.ws.resolve(path) or path
        await self.fetcher.wait_checked(path)  # the delete names the version the listing has
        await self.shadows.wait_commit(path)
        ino = self.inodes.ino_of.get(path)
        self._keep_unlinked(path)
        try:
            self.ws.unlink(path)
        except BaseException:
            # The name stays (a full catalog disk, say): so do its inode and its write in
            # progress, or writes through its descriptors would go to a private copy.
            if ino is not None and (orphan := self.inodes.unlinked.pop(ino, None)):
                orphan.discard()
                self._release(path, ino)
            raise
        if path in self.writing:
            self.shadows.discard(path)
        self._created.pop(path, None)
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
        await self._settle_writes(moves)
        errors = await self.materialize([src for src, _ in moves])
        if errors:
            raise next(iter(errors.values()))
        # A writer of a replaced name may have closed meanwhile: its commit ends before
        # the name is replaced (from here to the rename nothing awaits).
        while busy := [dst for _, dst in moves if dst in self.shadows.committing]:
            await self.shadows.wait_commit(busy[0])
        # Planned again: the awaits above let other requests change the tree.
        moves = self.ws.rename_plan(old, new, noreplace)
        replaced = [dst for _, dst in moves if self.ws.has_file(dst)]
        if moves and self.ws.has_file(other_form(new)):
            replaced.append(other_form(new))  # the same name in the other kind
        kept = {dst: self.inodes.ino_of.get(dst) for dst in replaced}
        for dst in replaced:
            self._keep_unlinked(dst)  # replaced: its open descriptors keep reading it
        try:
            self.ws.rename(old, new, noreplace)
        except BaseException:
            for dst, ino in kept.items():  # the names stay: so do their inodes
                if ino is not None and (orphan := self.inodes.unlinked.pop(ino, None)):
                    orphan.discard()
                    self._release(dst, ino)
            raise
        for dst in replaced:
            if dst in self.writing:
                self.shadows.discard(dst)  # kept for its writers' descriptors, not the file
        for dst in replaced:
            if dst != new:
                self.inodes.drop(dst)
        # The moved files are uploaded under their new names now, closed or not.
        # A created file renamed over is the moved file now: the creator's claim on the
        # name goes with it (left behind, a failed create there would take the moved file).
        self._created = {p: pid for p, pid in self._created.items()
                         if not any(p == x or p.startswith(x + "/") for x in (old, new))}
        self._forget_created(old, new)
        self.inodes.move(old, new)
        self._wake_uploader()

    def _forget_created(self, *roots: str) -> None:
        """What a mode keeps of files created under ``roots`` besides ``_created`` (no-open
        mode: their create times and failures); nothing here."""

    async def _settle_writes(self, moves: list[tuple[str, str]]) -> None:
        """Before a rename: S3 has no rename, the new names are uploaded from local copies.
        Writes in progress are committed first, so the moved file is the one its writers
        closed; a shadow of a replaced name is dropped once kept for its writers'
        descriptors (:meth:`rename`)."""
        for src, dst in moves:
            await self.shadows.commit_pending(src)
            if src in self.writing:
                self.shadows.discard(src)
            await self.shadows.wait_commit(dst)

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
        self.links.check_create(path, target)
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
        target = self.ws.readlink(path)
        self.links.check_follow(path, target)  # a planted link must not reach the host
        return target

    @fuse_errors
    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        s = pyfuse3.StatvfsData()
        s.f_bsize = s.f_frsize = 4096
        # What can really be written: the cache's disk, capped by the cache budget.
        disk = os.statvfs(self.ws.cache_dir)
        disk_total = disk.f_blocks * disk.f_frsize
        disk_avail = disk.f_bavail * disk.f_frsize
        budget = max(self.cfg.cache.cache_budget_bytes, self.ws.local_bytes)
        total = min(budget, disk_total)
        avail = max(0, min(disk_avail, budget - self.ws.local_bytes))
        s.f_blocks = total // 4096
        s.f_bfree = s.f_bavail = avail // 4096
        s.f_files = self.ws.file_count() + 1_000_000
        s.f_ffree = s.f_favail = 1_000_000
        s.f_namemax = 255
        return s

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

    def busy_paths(self) -> set[str]:
        """Paths whose upload must wait: being written, committed, or created and not
        yet closed (the uploader carries out their journal rows after the commit), and
        those whose bucket version an unlinked file's descriptors may still need."""
        return self.shadows.busy() | set(self._created) | set(self._held)

    def _wake_uploader(self) -> None:
        self.upload_wake.set()


__all__ = ["CTX_IN_IO", "FLUSH_FILTER", "KERNEL_CACHE_FLAGS", "KERNEL_PID", "NO_OPEN_SUPPORT", "Ops"]
