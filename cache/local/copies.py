"""The local copies of corpus files: bringing them in (from the preload pack, or by
parallel GETs), recording them, and evicting the least recently used beyond the cache
budget (S3QL's BlockCache, mountpoint-s3's data cache, for whole files).

:meth:`LocalCopies.fetch` is blocking and touches no in-memory state, so the mount runs it
in a worker thread; :meth:`LocalCopies.apply_fetched` records its results on the owning
thread. A fetch never overwrites what the mount changed meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brainfs.backend.errors import BackendError

from .catalog import FileRow
from .errors import CacheError

if TYPE_CHECKING:
    from .workingset import WorkingSet


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



class LocalCopies:
    """Fetching, recording and evicting the local copies of one working set."""

    def __init__(self, ws: WorkingSet) -> None:
        #: the owner (its backend and settings may be replaced: read at each use)
        self.ws = ws
        self.tree = ws.tree
        self.blobs = ws.blobs
        self.catalog = ws.catalog

    def fetch(self, paths: Iterable[str], on_progress=None) -> list[FetchResult]:
        """Bring ``paths`` into blobs (blocking; no shared state touched): from the
        preload pack when it holds a path at the catalog's ETag, else by parallel GETs.

        Thread-safe with respect to the owner thread: results are applied later by
        :meth:`apply_fetched`.
        """
        ws = self.ws
        results: list[FetchResult] = []
        remote: list[str] = []
        pack = ws.preload.pack

        def note(r: FetchResult) -> None:
            results.append(r)
            if on_progress is not None:
                on_progress(len(results))

        for path in paths:
            row = self.tree.files.get(path)
            # Only what a real listing has vouched for, whole or the range holding it.
            data = (pack.get(path, row.etag) if pack is not None and row is not None
                    and (ws.preload.verified or path in self.tree.pack_vouched) else None)
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
        if ws.store is None:
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

        ws.store.get_many(remote, done, work=stage)
        return results

    def apply_fetched(self, results: Iterable[FetchResult]) -> dict[str, Exception]:
        """Record fetched files as local; returns the errors by path."""
        ws = self.ws
        errors: dict[str, Exception] = {}
        updates: list[FileRow] = []
        now = time.time()
        for r in results:
            row = self.tree.files.get(r.path)
            if r.error is not None:
                errors[r.path] = r.error
                ws.note_health(r.error)
                continue
            ws.note_health(None)
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
        todo = [p for p in paths if (r := self.tree.files.get(p)) is not None and not r.is_local]
        if not todo:
            return {}
        errs = self.apply_fetched(self.fetch(todo))
        self.evict()
        return errs

    def evict(self) -> list[str]:
        """Drop least recently used clean, unpinned, closed files beyond the budget."""
        ws = self.ws
        budget = ws.cfg.cache.cache_budget_bytes
        if self.tree.local_bytes <= budget:
            return []
        target = int(budget * 0.9)
        victims = sorted(
            (r for r in self.tree.files.values()
             if r.state == "local" and not r.pinned and not ws.open_count[r.path]),
            key=lambda r: r.atime,
        )
        evicted: list[str] = []
        for row in victims:
            if self.tree.local_bytes <= target:
                break
            self.blobs.remove(row.path)
            self.tree.set_state(row, "remote")
            row.hash = ""
            evicted.append(row.path)
        with self.catalog.transaction() as db:
            self.catalog.put_files([self.tree.files[p] for p in evicted], db)
        return evicted

    def persist_atimes(self) -> None:
        """Write in-memory access times to the catalog (batched, called periodically)."""
        with self.catalog.transaction() as db:
            db.executemany(
                "UPDATE files SET atime = ? WHERE path = ?",
                [(r.atime, r.path) for r in self.tree.files.values() if r.is_local],
            )
