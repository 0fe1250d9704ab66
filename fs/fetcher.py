"""Fetching non-local corpus files for the mount: one parallel batch per request, shared
by concurrent requests for the same path, and a failed fetch held for a moment so that the
kernel's retries (readahead, then the page itself) do not wait out the timeouts twice."""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable

import trio
from brainfs.cache.local.workingset import WorkingSet

log = logging.getLogger("brainfs.fs")

#: A path whose fetch just failed fails again at once for this long instead of fetching.
FETCH_FAILURE_HOLD_S = 2.0


class Fetcher:
    """Brings corpus files into the working set from worker threads (never the trio one)."""

    def __init__(self, ws: WorkingSet, limiter: trio.CapacityLimiter) -> None:
        self.ws = ws
        self.limiter = limiter
        self._inflight: dict[str, trio.Event] = {}
        self._fetch_errors: dict[str, Exception] = {}
        #: path -> monotonic time its last fetch failed: the kernel retries a failed read
        #: (readahead, then the page itself), which must not wait out the timeouts twice
        self._failed_at: dict[str, float] = {}
        #: set once the mount's first real listing has been tried: until then a file listed
        #: from the preload pack on a listing snapshot's word waits for it (the listing says
        #: whether the pack's copy is still the file) instead of being served or fetched
        self.pack_checked = trio.Event()
        self.pack_checked.set()
        #: set (and replaced) each time a part of that listing vouches for packed files
        #: before the whole of it is in: a read waiting for one of them looks again
        self._vouched = trio.Event()
        #: told the paths a fetch found at another size than the catalog had (another
        #: writer's newer version), with (old size, new size): the kernel's cached size
        #: must go, or reads stop at it
        self.on_resized: Callable[[dict[str, tuple[int, int]]], None] | None = None

    async def materialize(self, paths: list[str], sized: bool = False) -> dict[str, Exception]:
        """Fetch the non-local ``paths`` in one parallel batch; concurrent callers asking
        for the same path wait for the same fetch. Returns errors by path. ``sized``: the
        caller reads or writes at offsets the kernel took from the file's size (see
        :meth:`_wait_pack_checked`)."""
        resized = await self._wait_pack_checked(paths)
        mine, waits, held = self._claim(paths)
        errors: dict[str, Exception] = {}
        if mine:
            before = {p: row.size for p in mine if (row := self.ws.get(p)) is not None}
            try:
                results = await trio.to_thread.run_sync(self.ws.fetch, mine, limiter=self.limiter)
                errors = self.ws.apply_fetched(results)
                sizes = {p: (size, row.size) for p, size in before.items() if p not in errors
                         and (row := self.ws.get(p)) is not None and row.size != size}
                if sizes and self.on_resized is not None:
                    self.on_resized(sizes)
                for p, e in errors.items():
                    log.error("fetch of %s failed: %s", p, e)
                self.ws.evict()
            finally:
                for p in mine:
                    self._inflight.pop(p).set()
        for ev in waits:
            await ev.wait()
        self._record_outcome(paths, errors, held)
        for p in resized if sized else ():
            # Its size as the kernel was told it (from the snapshot) is no longer the file's:
            # a read sized by it would come back cut or padded with zeros. This read fails;
            # the next one gets the new size (the listing invalidated it) and whole content.
            errors.setdefault(p, OSError(errno.EIO, f"{p} changed in the bucket since the "
                                                    "listing snapshot the mount started from; "
                                                    "read it again"))
        return errors

    def unchecked(self, path: str) -> bool:
        """Whether ``path`` is served from the pack on a listing snapshot's word, not yet
        checked against the real listing, whole or the key range holding it (its size may
        not be the file's)."""
        return not self.pack_checked.is_set() and self.ws.pack_unchecked(path)

    def vouched(self) -> None:
        """Part of the first real listing has vouched for packed files: reads waiting
        for them go on (the others wait on)."""
        ev, self._vouched = self._vouched, trio.Event()
        ev.set()

    def all_checked(self) -> None:
        """The first real listing is in, or has failed: no packed file waits any more
        (unchecked, it is fetched)."""
        self.pack_checked.set()
        self.vouched()

    async def wait_checked(self, path: str) -> None:
        """Wait until the size of ``path`` is known to be the file's (see :meth:`unchecked`)."""
        while self.unchecked(path):
            await self._vouched.wait()

    async def _wait_pack_checked(self, paths: list[str]) -> list[str]:
        """Wait, if any of ``paths`` is served from the preload pack on a listing
        snapshot's word, until the real listing has checked it (the range holding it, or
        the whole). Returns the paths whose size the listing changed meanwhile."""
        if self.pack_checked.is_set():
            return []
        sizes = {p: row.size for p in paths
                 if self.unchecked(p) and (row := self.ws.get(p)) is not None}
        if not sizes:
            return []
        while any(self.unchecked(p) for p in sizes):
            await self._vouched.wait()
        return [p for p, size in sizes.items()
                if (row := self.ws.get(p)) is not None and row.size != size]

    def _claim(self, paths: list[str]) -> tuple[list[str], list[trio.Event], set[str]]:
        """Sort the non-local ``paths`` into those this call fetches, the fetches of other
        callers to wait for, and those held after a failure a moment ago."""
        mine: list[str] = []
        waits: list[trio.Event] = []
        held: set[str] = set()
        now = time.monotonic()
        for p in dict.fromkeys(paths):
            row = self.ws.get(p)
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
        return mine, waits, held

    def _record_outcome(self, paths: list[str], errors: dict[str, Exception],
                        held: set[str]) -> None:
        """Add to ``errors`` every path still not local (another caller's failed fetch, or
        a held one), and note when each failed."""
        for p in paths:
            row = self.ws.get(p)
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

    async def ensure_local(self, path: str) -> None:
        """Fetch ``path`` if it is not local; raise its fetch error (EIO when a listing
        snapshot gave the kernel a size the file no longer has: see
        :meth:`_wait_pack_checked`)."""
        errors = await self.materialize([path], sized=True)
        if path in errors:
            raise errors[path]
        self._fetch_errors.pop(path, None)
