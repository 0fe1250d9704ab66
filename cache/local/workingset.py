"""The working set: which corpus files are local, fetching them, writing them, uploading.

This is the core the mount calls; it never imports ``fs``. :class:`WorkingSet` is the front
the mount and the commands use; its parts, each in its own module, are the tree of names in
memory (``tree.py``), the name operations (``namespace.py``, ``rename.py``), the listing
sync (``listing.py``), the preload pack (``preload.py``), the uploader (``upload.py``) and
the start-up check (``startcheck.py``). Threading discipline (S3QL's):
methods named ``fetch``, ``commit_shadow``, ``upload`` and ``check`` do blocking I/O and
touch no shared in-memory state, so the FUSE loop runs them in a worker thread; every
other method mutates state, is fast, and must be called from the owning thread (the trio
loop in a mount, the main thread in a command).

States of a file (see ``catalog.py``)::

    remote --fetch--> local --write+commit--> dirty --upload--> local
       ^                 |                                        |
       +----evict--------+------------------ ETag changed remotely+
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError
# DIR_MARKER is read from here by benchmarks/crash_harness.py.
from brainfs.backend.keys import CONFLICT_MARK, DIR_MARKER, INTERNAL_PREFIX
from brainfs.backend.store import ObjectInfo, ObjectStore

from . import preload, rename, startcheck
from .blobs import Blobs, file_hash
from .catalog import CATALOG_NAME, Attrs, Catalog, FileRow, JournalRow
from .copies import FetchResult, LocalCopies
# The error classes live in errors.py; they are named here too, where callers found them.
from .errors import (CacheError, Exists, IsADirectory, NameTooLong, NoSpace, NotADirectory,
                     NotEmpty, NotFound, WrongCorpus)
from .listing import ListingSync
from .namespace import Namespace
from .pack import PackView
from .paths import is_marker, marker_of, md5_hex, other_form
from .preload import Preload
from .startcheck import CheckReport
from .tree import Tree
from .upload import UploadResult, Uploader, conflict_name

log = logging.getLogger(__name__)


def corpus_identity(bucket: str, prefix: str, cfg: Config) -> str:
    """What a cache directory records as the corpus it holds: bucket and prefix. Not the
    endpoint: one server is often reached by several URLs (a proxy, localhost or
    127.0.0.1), and the default cache directory is already one per endpoint."""
    return f"s3://{bucket}/{prefix}".rstrip("/")


class WorkingSet:
    """The local working set of one corpus: the one object the mount and the commands
    hold. It owns the catalog, the blobs and the tree, and hands each kind of work to the
    part that does it (see the module's docstring); what callers read from it stays here."""

    def __init__(self, cache_dir: Path, store: ObjectStore | None, cfg: Config) -> None:
        self._cfg = cfg
        self._store = store
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.cache_dir = cache_dir
        self.catalog = Catalog(cache_dir / CATALOG_NAME)
        if store is not None:
            self._claim(corpus_identity(store.url.bucket, store.url.prefix, cfg))
        self.blobs = Blobs(cache_dir)
        #: sends the journal's rows (the blocking half of a write; see upload.py)
        self.uploader = Uploader(store, self.catalog, self.blobs, cfg)
        #: the names in memory and what listings show (see tree.py)
        self.tree = Tree(cfg.mount.listing == "corpus", self.catalog.all_dirs())
        #: paths with open handles: never evicted
        self.open_count: Counter[str] = Counter()
        #: keys skipped from listings: (key, reason)
        self.skipped: list[tuple[str, str]] = []
        self.health: dict[str, object] = {"last_ok": None, "last_error": None}
        self.last_changes: dict[str, list[str]] = {"updated": [], "removed": [], "refetch": []}
        #: told each listing's :attr:`last_changes` (the mount's recall re-indexes what
        #: other writers changed, added or deleted)
        self.on_remote_changes: Callable[[dict[str, list[str]]], None] | None = None
        #: reconciles the tree with listings of the bucket (see listing.py)
        self.listing = ListingSync(self)
        #: creates, removes and renames names (see namespace.py and rename.py)
        self.names = Namespace(self)
        #: modes and owners given in the mount, by path (files and directories)
        self.attrs: dict[str, Attrs] = self.catalog.all_attrs()
        #: the preload pack while a mount starts (see preload.py)
        self.preload = Preload(self.tree)
        #: fetches, records and evicts local copies (see copies.py)
        self.copies = LocalCopies(self)
        for row in self.catalog.all_files():
            self.tree.insert(row)
        for d in self.local_dirs:
            self.tree.add_dir(d)
            self.tree.count_dir(d, +1)

    @property
    def store(self) -> ObjectStore | None:
        """The backend (None: no backend, e.g. a command offline)."""
        return self._store

    @store.setter
    def store(self, store: ObjectStore | None) -> None:
        self._store = store
        self.uploader.store = store

    @property
    def cfg(self) -> Config:
        """The settings (budgets, multipart sizes, preload globs)."""
        return self._cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:
        self._cfg = cfg
        self.uploader.cfg = cfg

    # The tree's state, as callers have always read it from here.
    @property
    def files(self) -> dict[str, FileRow]:
        """path -> row of every corpus file, local or not (see :class:`Tree`)."""
        return self.tree.files

    @property
    def children(self) -> dict[str, set[str]]:
        """dir path -> names of its children (files and dirs, local or remote)."""
        return self.tree.children

    @property
    def local_dirs(self) -> set[str]:
        """Directories created in the mount (or marked in the bucket) that may be empty."""
        return self.tree.local_dirs

    @property
    def listing_all(self) -> bool:
        """Whether listings show every corpus file, not only the local ones."""
        return self.tree.listing_all

    @property
    def local_bytes(self) -> int:
        """Bytes of the local copies (what the cache budget counts)."""
        return self.tree.local_bytes

    @property
    def listing_changed(self) -> set[str]:
        """Directories whose listing may have changed (see :attr:`Tree.listing_changed`)."""
        return self.tree.listing_changed

    @property
    def on_listing_change(self) -> Callable[[str], None] | None:
        """Called with each directory whose listing changes (see :class:`Tree`)."""
        return self.tree.on_listing_change

    @on_listing_change.setter
    def on_listing_change(self, fn: Callable[[str], None] | None) -> None:
        self.tree.on_listing_change = fn

    def _claim(self, ident: str) -> None:
        """Record which corpus this cache holds; refuse a cache of another one (its
        pending writes would be uploaded into the wrong corpus and its files taken for
        deletions there)."""
        have = self.catalog.get_meta("corpus")
        if have is None:
            # A new cache (or one from before the corpus was recorded: adopted).
            self.catalog.set_meta("corpus", ident)
        elif have != ident:
            self.catalog.close()
            raise WrongCorpus(f"the cache {self.cache_dir} belongs to {have}, not {ident}; "
                              f"use another --cache-dir")

    # -------------------------------------------------------------------------------- queries
    def is_dir(self, path: str) -> bool:
        """True for the root and any directory of the corpus or created locally."""
        return self.tree.is_dir(path)

    def get(self, path: str) -> FileRow | None:
        """The file row of ``path``, or None (also for directories)."""
        return self.files.get(path)

    def has_file(self, path: str) -> bool:
        """Whether ``path`` is a file of the corpus (local or not; links too)."""
        return path in self.files

    def file_count(self) -> int:
        """How many files the corpus holds (local or not)."""
        return len(self.files)

    def has_children(self, path: str) -> bool:
        """Whether the directory ``path`` holds anything, remote files included."""
        return self.tree.has_children(path)

    def subdir_count(self, path: str) -> int:
        """How many subdirectories the directory ``path`` holds (its st_nlink is 2 more)."""
        return self.tree.subdir_count(path)

    def attrs_of(self, path: str) -> Attrs | None:
        """The mode and owner given to ``path`` in the mount, or None (the defaults)."""
        return self.attrs.get(path)

    def take_listing_change(self, path: str) -> bool:
        """Whether the listing of ``path`` changed since last asked; the mark is cleared."""
        return self.tree.take_listing_change(path)

    def pin(self, path: str) -> None:
        """Count ``path`` as in use: no eviction takes its local copy meanwhile."""
        self.open_count[path] += 1

    def unpin(self, path: str) -> None:
        """Undo one :meth:`pin`."""
        self.open_count[path] -= 1
        if self.open_count[path] <= 0:
            del self.open_count[path]

    def open_files(self) -> int:
        """How many pins (open files, reads and copies in progress) are held."""
        return sum(self.open_count.values())

    def resolve(self, path: str) -> str | None:
        """Where the name ``path`` is kept (see :meth:`Tree.resolve`), or None."""
        return self.tree.resolve(path)

    def visible_dir(self, path: str) -> bool:
        """Whether readdir shows this directory (it holds part of the working set)."""
        return self.tree.visible_dir(path)

    def listdir(self, path: str) -> list[tuple[str, bool]]:
        """The working-set entries of a directory: sorted (name, is_dir) pairs."""
        return self.tree.listdir(path)

    def files_under(self, d: str) -> list[str]:
        """Every file path beneath directory ``d``."""
        return self.tree.files_under(d)

    def status(self) -> dict[str, object]:
        """Counts for ``brainfs status``."""
        states = Counter(r.state for r in self.files.values())
        # Conflict copies are files like any other; they are counted so that a user hears
        # of them without reading the log (the loser's edit is in each).
        conflicts = sorted(p for p in self.files if CONFLICT_MARK in p)
        return {
            "conflict_copies": len(conflicts),
            "conflict_examples": conflicts[-3:],
            "files": len(self.files),
            "local_files": states["local"] + states["dirty"],
            "remote_files": states["remote"],
            "unpacking_files": len(self.tree.packed),
            "dirty_files": states["dirty"],
            "pending_uploads": len(self.catalog.journal()),
            "local_bytes": self.local_bytes,
            "cache_budget_bytes": self.cfg.cache.cache_budget_bytes,
            "skipped_keys": len(self.skipped) + len(self.store.skipped if self.store else []),
            "backend": dict(self.health),
        }

    # --------------------------------------------------------- start-up check (startcheck.py)
    def check(self) -> CheckReport:
        """Consistency check of the cache directory (blocking; run before serving). See
        startcheck.py: never serves a damaged copy."""
        return startcheck.check(self)

    # ------------------------------------------------------------------ listings (listing.py)
    def sync_listing(self, objects: Iterable[ObjectInfo],
                     listed_since: float | None = None,
                     writing: Iterable[str] = ()) -> dict[str, int]:
        """Reconcile the catalog with a fresh listing of the corpus (see
        :meth:`ListingSync.sync`); returns counts of what it added, changed, removed."""
        return self.listing.sync(objects, listed_since, writing)

    # -------------------------------------------------------------- preload pack (preload.py)
    def preload_plan(self) -> list[str]:
        """Paths to fetch at mount: the globs, then the newest transcripts, within budget."""
        return self.preload.plan(self.cfg)

    def load_pack(self) -> PackView | None:
        """Download the preload pack (blocking; see :func:`preload.load`)."""
        return preload.load(self.store)

    def use_pack(self, pack: PackView, paths: Iterable[str],
                 verified: bool = True) -> tuple[list[str], list[str]]:
        """Serve ``paths`` from ``pack`` (see :meth:`Preload.use`); returns (paths the pack
        serves, the rest)."""
        return self.preload.use(pack, paths, verified)

    @property
    def pack_verified(self) -> bool:
        """Whether a real listing has vouched for the pack's entries (see :class:`Preload`)."""
        return self.preload.verified

    def is_packed(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf (not written to disk yet)."""
        return self.preload.is_packed(path)

    def pack_unchecked(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf on a listing snapshot's word."""
        return self.preload.unchecked(path)

    def vouch_packed(self, objects: Iterable[ObjectInfo]) -> list[str]:
        """Take part of a real listing as the word on the packed files it lists; returns
        the paths vouched for (see :meth:`Preload.vouch`)."""
        return self.preload.vouch(objects)

    def packed_copy(self, path: str) -> bytes | None:
        """The pack's bytes of ``path`` while the pack serves it (else None)."""
        return self.preload.copy(path)

    def drop_pack(self) -> None:
        """Free the pack once its files are unpacked (see :meth:`Preload.drop`)."""
        self.preload.drop()

    # --------------------------------------------------------------- local copies (copies.py)
    def fetch(self, paths: Iterable[str], on_progress=None) -> list[FetchResult]:
        """Bring ``paths`` into blobs (blocking; no shared state touched; see
        :meth:`LocalCopies.fetch`). Results are applied later by :meth:`apply_fetched`."""
        return self.copies.fetch(paths, on_progress)

    def apply_fetched(self, results: Iterable[FetchResult]) -> dict[str, Exception]:
        """Record fetched files as local; returns the errors by path."""
        return self.copies.apply_fetched(results)

    def materialize(self, paths: Iterable[str]) -> dict[str, Exception]:
        """Fetch and record (for callers without an event loop)."""
        return self.copies.materialize(paths)

    def note_health(self, err: Exception | None) -> None:
        """Record the outcome of a request to the backend, for ``brainfs status``."""
        if err is None:
            self.health["last_ok"] = time.time()
        else:
            self.health["last_error"] = f"{time.strftime('%H:%M:%S')} {err}"

    def evict(self) -> list[str]:
        """Drop least recently used clean, unpinned, closed files beyond the budget."""
        return self.copies.evict()

    def persist_atimes(self) -> None:
        """Write in-memory access times to the catalog (batched, called periodically)."""
        self.copies.persist_atimes()

    # ------------------------------------------------------------------- names (namespace.py)
    def check_new_path(self, path: str, link: bool = False) -> None:
        """Raise unless ``path`` can be created (see :meth:`Namespace.check_new_path`)."""
        self.names.check_new_path(path, link)

    def create(self, path: str, durable: bool = True) -> FileRow:
        """A new, empty file (dirty; see :meth:`Namespace.create`)."""
        return self.names.create(path, durable)

    def symlink(self, path: str, target: bytes) -> str:
        """A new symbolic link ``path`` to ``target``; the path of its object."""
        return self.names.symlink(path, target)

    def readlink(self, lp: str) -> bytes:
        """The target of the symbolic link kept at ``lp`` (its content must be local)."""
        return self.names.readlink(lp)

    def persist(self, path: str) -> None:
        """Record a file made by ``create(durable=False)`` (see :meth:`Namespace.persist`)."""
        self.names.persist(path)

    def set_mtime(self, path: str, mtime: float) -> None:
        """Record the mtime ``utimensat(2)`` gave a file with no write in progress."""
        self.names.set_mtime(path, mtime)

    def set_attrs(self, path: str, attrs: Attrs) -> None:
        """Record the mode and owner of a file or directory."""
        self.names.set_attrs(path, attrs)

    def unlink(self, path: str) -> None:
        """Remove a file locally and journal its deletion in the corpus."""
        self.names.unlink(path)

    def mkdir(self, path: str) -> None:
        """Create a directory (kept locally until a file lands in it)."""
        self.names.mkdir(path)

    def rmdir(self, path: str) -> None:
        """Remove an empty directory."""
        self.names.rmdir(path)

    def rename_plan(self, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
        """The file moves renaming ``old`` to ``new`` means, or the error (see rename.py)."""
        return rename.plan(self.names, old, new, noreplace)

    def rename(self, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
        """Rename a file or a directory tree, atomically against a crash (see rename.py).
        The content of every file moved must be local. Returns the file moves done."""
        return rename.rename(self.names, old, new, noreplace)

    def rename_file(self, old: str, new: str) -> None:
        """Rename a file (the content must be local); replaces an existing target file."""
        if old not in self.files:
            raise NotFound(old)
        self.rename(old, new)

    # --------------------------------------------------------------------------------- writes
    def record_shadow(self, path: str, tmp: str, base: str) -> None:
        """Record that the temp file ``tmp`` holds uncommitted writes to ``path`` (commit =
        "quiet": the start-up check commits it if the daemon dies first)."""
        self.catalog.shadow_add(os.path.basename(tmp), path, base)

    def drop_shadow(self, tmp: str) -> None:
        """Forget a recorded shadow (discarded, or its commit failed)."""
        self.catalog.shadow_drop(os.path.basename(tmp))

    def apply_commit(self, path: str, size: int, digest: str, shadow: str | None = None,
                     base: str | None = None, mtime: float | None = None) -> FileRow:
        """Record a committed write: the file is dirty and journaled for upload.

        ``base``: the remote version the write started from (the ETag when its shadow was
        made); a relist that saw another writer's version meanwhile must not become the
        base, or the upload would overwrite that version without a conflict copy.
        With ``shadow`` (sealed by :meth:`Blobs.seal_shadow`), the journal row commits
        *before* the shadow replaces the content, and memory changes last: if the catalog
        cannot be written (disk full), this raises and the old content stays as it was.
        """
        row = self.files.get(path)
        gone = row is None
        if row is None:
            # Gone from the tree while written (another writer's delete, seen by a relist
            # that did not know of the write): the write is newer, so it brings the path
            # back rather than being lost. Its upload finds no object there (or another
            # writer's new one, and goes to a conflict copy as any stale write).
            row = FileRow(path, 0, time.time(), base or "", "", "remote")
        now = time.time()
        if base is None:
            base = row.etag
        j = self.catalog.journal_row(path)
        if j is not None and j.op == "put" and row.state == "dirty":
            # An earlier write not uploaded yet: it replaces the same remote version.
            base = j.base
        # The time of the last write, or the one a utimens during the write set (cp -p,
        # tar x, rsync -a): as a local disk keeps it, not the commit's.
        when = now if mtime is None else mtime
        new = FileRow(path, size, when, base, digest, "dirty", row.pinned, now)
        with self.catalog.transaction() as db:
            self.catalog.put_files([new], db)
            self.catalog.journal_put(db, path, "put", digest, base)
            if shadow is not None:
                # Its writes are the file's now: no start-up check may commit them again.
                self.catalog.shadow_drop(os.path.basename(shadow), db)
        if shadow is not None:
            self.blobs.install_shadow(path, shadow)
        if gone:
            row = new
            self.tree.insert(row)
            return row
        self.tree.set_state(row, "dirty", size)
        row.hash, row.mtime, row.atime, row.etag = digest, when, now, base
        return row

    def corpus_view(self) -> list[ObjectInfo]:
        """The corpus as this cache knows it: every file whose version in the bucket is
        known (nothing pending), and the markers of the directories it knows."""
        view = [ObjectInfo(r.path, r.size, r.etag, r.mtime) for r in self.files.values()
                if r.etag and r.state != "dirty"]
        view += [ObjectInfo(marker_of(d), 0, md5_hex(b""), 0.0) for d in self.local_dirs if d]
        return view

    # -------------------------------------------------------------------------------- uploads
    def pending(self) -> list[JournalRow]:
        """Journal rows waiting for the backend."""
        return self.catalog.journal()

    def ready(self, busy: Iterable[str] = ()) -> list[JournalRow]:
        """The journal rows to carry out now (see :meth:`Uploader.ready`)."""
        return self.uploader.ready(busy)

    def upload(self, row: JournalRow) -> UploadResult:
        """Carry out one journal row against the backend (blocking; see
        :meth:`Uploader.upload`). Its outcome is recorded by :meth:`apply_upload`."""
        return self.uploader.upload(row)

    def apply_upload(self, res: UploadResult) -> bool:
        """Record an upload's outcome; True when the row is done."""
        row = res.row
        if res.error is not None:
            self.note_health(res.error if isinstance(res.error, BackendError) else None)
            log.warning("upload of %s failed (will retry): %s", row.path, res.error)
            return False
        self.note_health(None)
        # Puts and deletes alike: a listing taken before now does not know this outcome.
        self.listing.landed(row.path)
        with self.catalog.transaction() as db:
            # Recorded now: nothing of this path is in flight any more.
            if row.op == "put" and not res.conflict_path:
                self.catalog.sent_landed(db, row.path, res.etag, res.stamp)
            else:
                # A delete, or ours went to a conflict copy: the path holds nothing of ours.
                self.catalog.sent_clear(db, row.path)
            f = self.files.get(row.path)
            if not self.catalog.journal_done(db, row.path, row.op, row.hash):
                if row.op == "put" and res.conflict_path:
                    # An intermediate version of ours (e.g. the empty file of `echo > f`)
                    # lost the race: the newer write keeps its base and will be kept as
                    # its own conflict copy, so this one goes (it would read back empty).
                    self.catalog.journal_put(db, res.conflict_path, "delete", "", res.etag)
                    return True
                # Superseded by a newer write while uploading. The remote now holds what we
                # just sent, so that is what the newer write is based on.
                if row.op == "put" and not res.conflict_path:
                    pending = db.execute("SELECT 1 FROM journal WHERE path = ?", (row.path,)).fetchone()
                    if f is None and pending is None and not is_marker(row.path):
                        # Deleted or renamed away before its first upload landed: the object
                        # we just created must go too.
                        self.catalog.journal_put(db, row.path, "delete", "", res.etag)
                    db.execute("UPDATE journal SET base = ? WHERE path = ? AND base = ?",
                               (res.etag, row.path, row.base))
                    if f is not None and f.etag == row.base:
                        f.etag = res.etag
                        self.catalog.put_files([f], db)
                return True
            if row.op == "put" and f is not None and f.hash == row.hash:
                if res.conflict_path:
                    # Ours lives on as the conflict copy; the original is theirs again.
                    conflict = FileRow(res.conflict_path, f.size, time.time(), res.etag, f.hash,
                                       "local", atime=time.time())
                    if res.conflict_path not in self.files:
                        self.blobs.copy_as(row.path, res.conflict_path)
                        self.tree.insert(conflict)
                        self.catalog.put_files([conflict], db)
                    # The path holds the other version now: its size, not ours (the
                    # kernel reads exactly the size it is told).
                    self.tree.set_state(f, "remote", res.remote_size)
                    f.etag, f.hash = res.remote_etag, ""
                else:
                    self.tree.set_state(f, "local")
                    f.etag = res.etag
                self.catalog.put_files([f], db)
        return True

    def flush(self, deadline: float | None = None) -> int:
        """Upload everything pending (blocking; for commands and unmount). Returns what is
        left pending."""
        while True:
            rows = self.ready()
            if not rows or (deadline is not None and time.monotonic() > deadline):
                return len(self.pending())
            progress = False
            for row in rows:
                if deadline is not None and time.monotonic() > deadline:
                    break  # a slow S3: one row at a time, not the whole pass, past the deadline
                progress |= self.apply_upload(self.upload(row))
            if not progress:
                return len(self.pending())

    def close(self) -> None:
        """Persist access times and close the catalog."""
        try:
            self.persist_atimes()
        finally:
            self.catalog.close()


def commit_shadow(blobs: Blobs, path: str, shadow: str) -> tuple[int, str]:
    """Blocking half of a write commit (fsync, hash, rename); run it in a worker thread."""
    return blobs.commit_shadow(path, shadow)


__all__ = [
    "WorkingSet", "FetchResult", "UploadResult", "CheckReport", "CacheError", "NotFound",
    "IsADirectory", "NotADirectory", "NotEmpty", "Exists", "NoSpace", "NameTooLong",
    "WrongCorpus", "commit_shadow",
    # kept importable from here: they moved to errors.py, paths.py and upload.py
    "conflict_name", "is_marker", "other_form", "file_hash", "INTERNAL_PREFIX",
]
