"""The working set: which corpus files are local, fetching them, writing them, uploading.

This is the core the mount calls; it never imports ``fs``. Threading discipline (S3QL's):
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
import posixpath
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError
# DIR_MARKER is read from here by benchmarks/crash_harness.py.
from brainfs.backend.keys import (CONFLICT_MARK, DIR_MARKER, INTERNAL_PREFIX, is_link, link_name,
                                  link_of, reserved_name)
from brainfs.backend.store import ObjectInfo, ObjectStore

from . import startcheck
from .blobs import Blobs, content_hash, file_hash
from .catalog import CATALOG_NAME, Attrs, Catalog, FileRow, JournalRow
from .errors import (CacheError, Exists, IsADirectory, NameTooLong, NoSpace, NotADirectory,
                     NotEmpty, NotFound, WrongCorpus)
from .faults import crash_point
from .listing import ListingSync
from .pack import PackView, load_pack, select_preload
from .paths import (EMPTY_HASH, ancestors, check_name, is_marker, marker_of, md5_hex,
                    other_form, parent_of)
from .startcheck import CheckReport
from .tree import Tree
from .upload import UploadResult, Uploader, conflict_name

log = logging.getLogger(__name__)


@dataclass
class FetchResult:
    """The outcome of fetching one file (from a worker thread)."""

    path: str
    size: int = 0
    etag: str = ""
    hash: str = ""
    error: BackendError | OSError | None = None
    tmp: str = ""  # staged content, installed by apply_fetched ('' = already in place)
    #: taken from the preload pack (the version the catalog named when the fetch began)
    from_pack: bool = False


def corpus_identity(bucket: str, prefix: str, cfg: Config) -> str:
    """What a cache directory records as the corpus it holds: bucket and prefix. Not the
    endpoint: one server is often reached by several URLs (a proxy, localhost or
    127.0.0.1), and the default cache directory is already one per endpoint."""
    return f"s3://{bucket}/{prefix}".rstrip("/")


class WorkingSet:
    """The local working set of one corpus."""

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
        self.tree = Tree(cfg.listing == "corpus", self.catalog.all_dirs())
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
        #: modes and owners given in the mount, by path (files and directories)
        self.attrs: dict[str, Attrs] = self.catalog.all_attrs()
        #: the preload pack, held in memory while its files are unpacked to disk (a mount
        #: is usable before they are: see :meth:`use_pack`)
        self._pack: PackView | None = None
        #: whether a real listing has vouched for the pack's entries since it was taken: a
        #: listing snapshot is a hint, and another writer may have changed a file after it
        #: and the pack were written (both then name the old ETag). Until then
        #: :meth:`fetch` GETs instead of serving the pack.
        self.pack_verified = True
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

    # ------------------------------------------------------------------ tree bookkeeping
    def _remove(self, path: str, keep_parent: bool = False) -> FileRow | None:
        """Take ``path`` out of the tree. ``keep_parent``: the user removed it, so an
        emptied directory stays (as on a local disk) instead of vanishing with its last
        file; a file gone remotely lets its empty directories go."""
        row = self.tree.detach(path)
        if row is None:
            return None
        parent = parent_of(path)
        if keep_parent and parent != "" and not self.children[parent] and parent not in self.local_dirs:
            # Emptied by the user: it stays, as on a local disk, and in the corpus too.
            self.local_dirs.add(parent)
            with self.catalog.transaction() as db:
                self.catalog.set_dir(parent, True, db)
                self._journal_marker(db, parent, True)
            self.tree.count_dir(parent, +1)
        self.tree.prune(parent)
        return row

    # ------------------------------------------------------------------ queries
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
            "cache_budget_bytes": self.cfg.cache_budget_bytes,
            "skipped_keys": len(self.skipped) + len(self.store.skipped if self.store else []),
            "backend": dict(self.health),
        }

    # ------------------------------------------------------------------ start
    def check(self) -> CheckReport:
        """Consistency check of the cache directory (blocking; run before serving). See
        startcheck.py: never serves a damaged copy."""
        return startcheck.check(self)

    def record_shadow(self, path: str, tmp: str, base: str) -> None:
        """Record that the temp file ``tmp`` holds uncommitted writes to ``path`` (commit =
        "quiet": the start-up check commits it if the daemon dies first)."""
        self.catalog.shadow_add(os.path.basename(tmp), path, base)

    def drop_shadow(self, tmp: str) -> None:
        """Forget a recorded shadow (discarded, or its commit failed)."""
        self.catalog.shadow_drop(os.path.basename(tmp))

    def sync_listing(self, objects: Iterable[ObjectInfo],
                     listed_since: float | None = None,
                     writing: Iterable[str] = ()) -> dict[str, int]:
        """Reconcile the catalog with a fresh listing of the corpus (see
        :meth:`ListingSync.sync`); returns counts of what it added, changed, removed."""
        return self.listing.sync(objects, listed_since, writing)

    def preload_plan(self) -> list[str]:
        """Paths to fetch at mount: the globs, then the newest transcripts, within budget."""
        return [p for p in select_preload(self.files.values(), self.cfg)
                if not self.files[p].is_local and p not in self.tree.packed]

    # ------------------------------------------------------------------ fetching
    def fetch(self, paths: Iterable[str], on_progress=None) -> list[FetchResult]:
        """Bring ``paths`` into blobs (blocking; no shared state touched): from the
        preload pack when it holds a path at the catalog's ETag, else by parallel GETs.

        Thread-safe with respect to the owner thread: results are applied later by
        :meth:`apply_fetched`.
        """
        results: list[FetchResult] = []
        remote: list[str] = []
        pack = self._pack

        def note(r: FetchResult) -> None:
            results.append(r)
            if on_progress is not None:
                on_progress(len(results))

        for path in paths:
            row = self.files.get(path)
            # Only what a real listing has vouched for, whole or the range holding it.
            data = (pack.get(path, row.etag) if pack is not None and row is not None
                    and (self.pack_verified or path in self.tree.pack_vouched) else None)
            if data is None:
                remote.append(path)
                continue
            try:
                tmp, h = self.blobs.stage(data, durable=False)
            except OSError as e:  # a full disk: the read fails, the mount goes on
                note(FetchResult(path, error=e))
            else:
                note(FetchResult(path, len(data), row.etag, h, tmp=tmp, from_pack=True))
        if not remote:
            return results
        if self.store is None:
            raise CacheError("no backend")

        def stage(path: str, data: bytes) -> tuple[int, str, str]:
            tmp, h = self.blobs.stage(data, durable=False)
            return len(data), h, tmp

        def done(path: str, out, etag: str, err) -> None:
            if err is not None:
                note(FetchResult(path, error=err))
            else:
                size, h, tmp = out
                note(FetchResult(path, size, etag, h, tmp=tmp))

        self.store.get_many(remote, done, work=stage)
        return results

    def load_pack(self) -> PackView | None:
        """Download the preload pack (blocking; no shared state touched). None when the
        bucket has none or it cannot be read (the files are then fetched one by one)."""
        if self.store is None:
            return None
        try:
            return load_pack(self.store)
        except BackendError as e:
            log.warning("preload pack unreadable, fetching files one by one: %s", e)
            return None

    def use_pack(self, pack: PackView, paths: Iterable[str],
                 verified: bool = True) -> tuple[list[str], list[str]]:
        """Serve ``paths`` from ``pack`` from now on: each one it holds at the catalog's
        ETag is listed at once, as if local, and unpacked to disk on first use or by
        :meth:`fetch` in the background. ``verified=False``: the catalog's ETags came from
        a listing snapshot, so :meth:`fetch` serves nothing from the pack until a real
        listing (:meth:`sync_listing`) has checked them. Returns (paths the pack serves,
        the rest)."""
        served: list[str] = []
        rest: list[str] = []
        for p in paths:
            row = self.files.get(p)
            if row is None or row.is_local or not pack.holds(p, row.etag):
                rest.append(p)
                continue
            served.append(p)
            if p not in self.tree.packed:
                self.tree.packed.add(p)
                for a in ancestors(p):
                    self.tree.packed_dirs[a] += 1
                    self.tree.mark_changed(a)
        if served:
            self._pack = pack
            self.pack_verified = verified
        return served, rest

    def is_packed(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf (not written to disk yet)."""
        return path in self.tree.packed

    def pack_unchecked(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf on a listing snapshot's word
        alone: no real listing, whole or the range holding it, has vouched for its ETag."""
        return (path in self.tree.packed and not self.pack_verified
                and path not in self.tree.pack_vouched)

    def vouch_packed(self, objects: Iterable[ObjectInfo]) -> list[str]:
        """Take part of a real listing (one key range of it, in before the rest) as the
        word on the packed files it lists: each one it shows at the ETag the catalog has
        (the pack's) is served from the pack from now on. A packed file listed at another
        ETag, or missing from the part, stays unchecked until :meth:`sync_listing` has
        the whole listing (which replaces or removes it). Returns the paths vouched for."""
        if self.pack_verified or not self.tree.packed:
            return []
        out: list[str] = []
        for o in objects:
            if o.path in self.tree.packed and o.path not in self.tree.pack_vouched and o.etag:
                row = self.files.get(o.path)
                if row is not None and row.etag == o.etag and row.state != "dirty":
                    self.tree.pack_vouched.add(o.path)
                    out.append(o.path)
        return out

    def packed_copy(self, path: str) -> bytes | None:
        """The pack's bytes of ``path`` while it is listed on the pack's behalf and a real
        listing has vouched for the pack (else None: the file is in the bucket only)."""
        row = self.files.get(path)
        if self._pack is None or row is None or path not in self.tree.packed or self.pack_unchecked(path):
            return None
        return self._pack.get(path, row.etag)

    def drop_pack(self) -> None:
        """Free the pack once its files are unpacked; a file it still holds (its unpacking
        failed) is listed again only once fetched."""
        self._pack = None
        for p in list(self.tree.packed):
            self.tree.unpack(p)
            for a in ancestors(p):
                self.tree.mark_changed(a)
        self.tree.packed_dirs.clear()

    def apply_fetched(self, results: Iterable[FetchResult]) -> dict[str, Exception]:
        """Record fetched files as local; returns the errors by path."""
        errors: dict[str, Exception] = {}
        updates: list[FileRow] = []
        now = time.time()
        for r in results:
            row = self.files.get(r.path)
            if r.error is not None:
                errors[r.path] = r.error
                self._note_health(r.error)
                continue
            self._note_health(None)
            if (row is None or row.is_local
                    or (r.from_pack and row.etag != r.etag)):
                # Deleted, rewritten (and maybe uploaded since) or fetched by another in the
                # mount while the fetch ran: keep the local truth. A pack entry that a
                # listing has since found changed is the old version.
                if r.tmp:
                    self.blobs.discard(r.tmp)
                continue
            if r.tmp:
                self.blobs.install(r.path, r.tmp)
            row.size, row.etag, row.hash, row.state, row.atime = r.size, r.etag, r.hash, "local", now
            self.tree.count_local(row, +1)
            updates.append(row)
        with self.catalog.transaction() as db:
            self.catalog.put_files(updates, db)
        return errors

    def materialize(self, paths: Iterable[str]) -> dict[str, Exception]:
        """Fetch and record (for callers without an event loop)."""
        todo = [p for p in paths if (r := self.files.get(p)) is not None and not r.is_local]
        if not todo:
            return {}
        errs = self.apply_fetched(self.fetch(todo))
        self.evict()
        return errs

    def _note_health(self, err: Exception | None) -> None:
        if err is None:
            self.health["last_ok"] = time.time()
        else:
            self.health["last_error"] = f"{time.strftime('%H:%M:%S')} {err}"

    def evict(self) -> list[str]:
        """Drop least recently used clean, unpinned, closed files beyond the budget."""
        budget = self.cfg.cache_budget_bytes
        if self.local_bytes <= budget:
            return []
        target = int(budget * 0.9)
        victims = sorted(
            (r for r in self.files.values()
             if r.state == "local" and not r.pinned and not self.open_count[r.path]),
            key=lambda r: r.atime,
        )
        evicted: list[str] = []
        for row in victims:
            if self.local_bytes <= target:
                break
            self.blobs.remove(row.path)
            self.tree.set_state(row, "remote")
            row.hash = ""
            evicted.append(row.path)
        with self.catalog.transaction() as db:
            self.catalog.put_files([self.files[p] for p in evicted], db)
        return evicted

    def persist_atimes(self) -> None:
        """Write in-memory access times to the catalog (batched, called periodically)."""
        with self.catalog.transaction() as db:
            db.executemany(
                "UPDATE files SET atime = ? WHERE path = ?",
                [(r.atime, r.path) for r in self.files.values() if r.is_local],
            )

    # ------------------------------------------------------------------ writes
    def check_new_path(self, path: str, link: bool = False) -> None:
        """Raise unless ``path`` can be created (valid name, parent dir, not existing in
        either form). ``link``: ``path`` is the object of a new symbolic link."""
        check_name(path)
        if link and not is_link(path):
            raise CacheError(f"not a symbolic link's object: {path!r}")
        reserved = reserved_name(link_name(path) if link else path)
        if reserved:
            raise CacheError(f"refused name {path!r}: {reserved}")
        if not self.is_dir(parent_of(path)):
            raise NotFound(parent_of(path))
        other = other_form(path)
        if path in self.files or path in self.children or other in self.files or self.is_dir(other):
            raise Exists(path)

    def _base_etag(self, path: str) -> str:
        """The remote version a new write of ``path`` replaces: the ETag of the file we
        have, or of the object a still-pending delete was going to remove ('' = none)."""
        row = self.files.get(path)
        if row is not None:
            return row.etag
        for j in self.catalog.journal():
            if j.path == path and j.op == "delete":
                return j.base
        return ""

    def create(self, path: str, durable: bool = True) -> FileRow:
        """A new, empty file (dirty, nothing uploaded yet).

        ``durable=False``: in memory only until :meth:`persist` or a commit records it, so
        a crash before the creator's first close leaves the path as it was before the
        create (absent), never an empty file that was meant to be written."""
        self.check_new_path(path)
        base = self._base_etag(path)
        open(self.blobs.location(path), "wb").close()
        row = FileRow(path, 0, time.time(), base, content_hash(b""), "dirty", atime=time.time())
        self.tree.insert(row)
        if durable:
            self.persist(path)
        return row

    def symlink(self, path: str, target: bytes) -> str:
        """A new symbolic link ``path`` to ``target``, durable and journaled for upload in
        one transaction. Returns the path of its object (``path.brainfs-link``)."""
        lp = link_of(path)
        self.check_new_path(lp, link=True)
        base = self._base_etag(lp)
        digest = self.blobs.write(lp, target)
        now = time.time()
        row = FileRow(lp, len(target), now, base, digest, "dirty", atime=now)
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)
            self.catalog.journal_put(db, lp, "put", digest, base)
        self.tree.insert(row)
        return lp

    def readlink(self, lp: str) -> bytes:
        """The target of the symbolic link kept at ``lp`` (its content must be local)."""
        if not is_link(lp) or lp not in self.files:
            raise NotFound(lp)
        return self.blobs.location(lp).read_bytes()

    def persist(self, path: str) -> None:
        """Record a file made by ``create(durable=False)`` that no commit has recorded yet
        (its creator closed it without writing): the catalog row and its upload."""
        row = self.files.get(path)
        j = self.catalog.journal_row(path)
        # A pending delete is the unlink of the name's earlier file: this file replaces it.
        if row is None or row.state != "dirty" or (j is not None and j.op == "put"):
            return
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)
            self.catalog.journal_put(db, path, "put", row.hash, row.etag)

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

    def set_mtime(self, path: str, mtime: float) -> None:
        """Record the mtime ``utimensat(2)`` gave a file with no write in progress (kept
        by this cache: S3 stores the upload time)."""
        row = self.files.get(path)
        if row is None:
            raise NotFound(path)
        row.mtime = mtime
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)

    def set_attrs(self, path: str, attrs: Attrs) -> None:
        """Record the mode and owner of a file or directory (chmod, chown, or the mode a
        create or mkdir asked for). The mount's kernel checks who may change them."""
        if path not in self.files and not self.is_dir(path):
            raise NotFound(path)
        with self.catalog.transaction() as db:
            self.catalog.put_attrs(db, path, attrs)
        self.attrs[path] = attrs

    def unlink(self, path: str) -> None:
        """Remove a file locally and journal its deletion in the corpus."""
        row = self.files.get(path)
        if row is None:
            raise IsADirectory(path) if self.is_dir(path) else NotFound(path)
        self._remove(path, keep_parent=True)
        self.blobs.remove(path)
        self.attrs.pop(path, None)
        with self.catalog.transaction() as db:
            self._record_removal(db, row)

    def _record_removal(self, db, row: FileRow, wait_for: str = "") -> None:
        """In the catalog transaction ``db``: ``row``'s file is gone, and its delete in the
        bucket is journaled (conditional on the version it was based on). ``wait_for``: a
        path whose PUT must land first (the name's new object, when a rename replaces it)."""
        self.catalog.drop_attrs(db, [row.path])
        self.catalog.delete_files([row.path], db)
        # No base version is not "nothing in the bucket": an upload of ours may have landed
        # since the base was taken (a create's empty object, uploaded while its writer's
        # shadow was open). The delete then removes only a version we sent (Uploader.is_ours).
        if row.etag or self.catalog.sent_etags(row.path):
            self.catalog.journal_put(db, row.path, "delete", "", row.etag, wait_for=wait_for)
        else:
            self.catalog.journal_drop(db, row.path)

    def mkdir(self, path: str) -> None:
        """Create a directory (kept locally until a file lands in it)."""
        self.check_new_path(path)
        with self.catalog.transaction() as db:
            self.catalog.set_dir(path, True, db)
            self._journal_marker(db, path, True)
        self.local_dirs.add(path)
        self.tree.add_dir(path)
        self.tree.count_dir(path, +1)

    def _journal_marker(self, db, d: str, present: bool) -> None:
        """Journal the directory marker of ``d``: an empty directory survives in the
        corpus (a remount, a fresh cache, another machine)."""
        if d == "":
            return
        if present:
            self.catalog.journal_put(db, marker_of(d), "put", EMPTY_HASH, "")
        else:
            self.catalog.journal_put(db, marker_of(d), "delete", "", "")

    def rmdir(self, path: str) -> None:
        """Remove an empty directory."""
        if path in self.files:
            raise NotADirectory(path)
        if not self.is_dir(path) or path == "":
            raise NotFound(path)
        if self.children.get(path):
            raise NotEmpty(path)
        with self.catalog.transaction() as db:
            self.catalog.set_dir(path, False, db)
            self._journal_marker(db, path, False)
            self.catalog.drop_attrs(db, [path])
        self.attrs.pop(path, None)
        if path in self.local_dirs:
            self.local_dirs.discard(path)
            self.tree.count_dir(path, -1)
        self.children.pop(path, None)
        parent = parent_of(path)
        self.children[parent].discard(posixpath.basename(path))
        self.tree.prune(parent)

    def rename_plan(self, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
        """Check that ``old`` can be renamed to ``new`` (POSIX rules) and return the file
        moves it means: one for a file, one per file beneath a directory. Raises the error
        the caller should see; changes nothing."""
        if old == new:
            return []
        # ``new`` is in ``old``'s form (a link object's path for a link): the same name
        # in the other form is replaced too (a file renamed over a link, or the reverse).
        other = other_form(new)
        new_is_dir = self.is_dir(link_name(new) if is_link(new) else new)
        target_exists = new in self.files or other in self.files or new_is_dir
        if target_exists and noreplace:
            raise Exists(new)
        if old in self.files:
            if new_is_dir:
                raise IsADirectory(new)
            if not target_exists:
                self.check_new_path(new, link=is_link(old))
            return [(old, new)]
        if old == "" or not self.is_dir(old):
            raise NotFound(old)
        if new == "" or new.startswith(old + "/"):
            raise CacheError(f"cannot move {old!r} into itself")
        if new in self.files or other in self.files:
            raise NotADirectory(new)
        if target_exists and self.children.get(new):
            raise NotEmpty(new)
        if not target_exists:
            self.check_new_path(new)
        moves = [(p, new + p[len(old):]) for p in self.files_under(old)]
        for _, dst in moves:
            check_name(dst)
        return moves

    def rename(self, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
        """Rename a file or a directory tree, atomically against a crash: one catalog
        transaction records every new row, the uploads of the new names and the deletes of
        the old ones; the local content moves after it (the start-up check finishes the
        moves if a crash falls in between). The content of every file moved must be
        local. Returns the file moves done.

        In the bucket, each old name's delete waits until the new name's PUT has landed,
        so the bucket never holds neither. An editor's atomic save (write ``x.tmp``,
        rename it over ``x``) replaces the target's remote version: not a conflict.
        """
        moves = self.rename_plan(old, new, noreplace)
        if not moves and old == new:
            return []
        for src, _ in moves:
            if not self.files[src].is_local:
                raise CacheError(f"{src} is not local")
        is_tree = old not in self.files
        # A file renamed over a link of the same name, or a link over a file: the name's
        # other form goes in the same transaction.
        dropped = None if is_tree else self.files.get(other_form(new))
        now = time.time()
        moved: list[FileRow] = []
        old_dirs = sorted((d for d in self.children if d == old or d.startswith(old + "/")),
                          reverse=True) if is_tree else []
        new_dirs = [new + d[len(old):] for d in old_dirs
                    if d in self.local_dirs or d == old]
        # Modes and owners go with their names; a replaced target's go with it.
        renamed = list(moves) + [(d, new + d[len(old):]) for d in old_dirs]
        attrs_after = dict(self.attrs)
        for _, dst in renamed:
            attrs_after.pop(dst, None)
        if dropped is not None:
            attrs_after.pop(dropped.path, None)
        for src, dst in renamed:
            a = attrs_after.pop(src, None)
            if a is not None:
                attrs_after[dst] = a
        with self.catalog.transaction() as db:
            self.catalog.drop_attrs(db, [p for p in self.attrs if p not in attrs_after])
            for p, a in attrs_after.items():
                if self.attrs.get(p) != a:
                    self.catalog.put_attrs(db, p, a)
            if dropped is not None:
                # As for the old names: the name's other form goes from the bucket only
                # once its new object is there, so the bucket never holds neither.
                self._record_removal(db, dropped, wait_for=new)
            # A write in progress to a replaced name belongs to its writers' descriptors
            # now, not to the name: a crash after this transaction must not apply its
            # recorded shadow over the file moved there (commit = "quiet").
            self.catalog.shadow_drop_paths([dst for _, dst in moves], db)
            for src, dst in moves:
                row = self.files[src]
                base = self._base_etag(dst)
                # A rename keeps the file's mtime, as on a local disk.
                m = FileRow(dst, row.size, row.mtime, base, row.hash, "dirty", row.pinned, now)
                moved.append(m)
                self.catalog.delete_files([src], db)
                self.catalog.put_files([m], db)
                self.catalog.journal_put(db, dst, "put", m.hash, base)
                pending = self.catalog.journal_row(src)
                src_base = row.etag if row.state != "dirty" or pending is None else pending.base
                if src_base or self.catalog.sent_etags(src):
                    self.catalog.journal_put(db, src, "delete", "", src_base, wait_for=dst)
                else:
                    self.catalog.journal_drop(db, src)
            for d in old_dirs:
                self.catalog.set_dir(d, False, db)
                if d in self.local_dirs:
                    self._journal_marker(db, d, False)
            for d in new_dirs:
                self.catalog.set_dir(d, True, db)
                self._journal_marker(db, d, True)
            if not is_tree:
                parent = parent_of(old)
                if parent and parent != parent_of(new) and parent not in self.local_dirs \
                        and self.children.get(parent) == {
                        posixpath.basename(old)}:
                    # The renamed file was the last in its directory: the directory stays,
                    # as on a local disk.
                    self.catalog.set_dir(parent, True, db)
                    self._journal_marker(db, parent, True)
        crash_point("rename-after-catalog")
        self.attrs = attrs_after
        if dropped is not None:
            self._remove(dropped.path, keep_parent=True)
            self.blobs.remove(dropped.path)
        for src, dst in moves:
            self.blobs.move(src, dst)
        # Memory last: it mirrors what the catalog now says.
        for (src, _), m in zip(moves, moved):
            if m.path in self.files:
                self._remove(m.path)
            self.tree.insert(m)  # first: a rename within one directory never empties it
            self._remove(src, keep_parent=not is_tree)
        if is_tree:
            for d in old_dirs:
                if d in self.local_dirs:
                    self.local_dirs.discard(d)
                    self.tree.count_dir(d, -1)
                if d in self.children and not self.children[d]:
                    self.children.pop(d, None)
                    parent = parent_of(d)
                    self.children.get(parent, set()).discard(posixpath.basename(d))
            self.tree.prune(parent_of(old))
            for d in sorted(new_dirs):
                if d not in self.local_dirs:
                    self.local_dirs.add(d)
                    self.tree.add_dir(d)
                    self.tree.count_dir(d, +1)
        return moves

    def rename_file(self, old: str, new: str) -> None:
        """Rename a file (the content must be local); replaces an existing target file."""
        if old not in self.files:
            raise NotFound(old)
        self.rename(old, new)

    def files_under(self, d: str) -> list[str]:
        """Every file path beneath directory ``d``."""
        return self.tree.files_under(d)

    # ------------------------------------------------------------------ uploads
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
            self._note_health(res.error if isinstance(res.error, BackendError) else None)
            log.warning("upload of %s failed (will retry): %s", row.path, res.error)
            return False
        self._note_health(None)
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
