"""The mount daemon's background jobs while it serves (each run in its nursery, see
:meth:`~brainfs.fs.daemon.Daemon.serve`): the uploader carrying out the journal, dream on a
schedule or after enough new sessions, the preload's pack written to disk or the preload
fetched, housekeeping, and the wiki's history fetched.

:class:`BackgroundJobs` is a part of :class:`~brainfs.fs.daemon.Daemon`, whose start-up sets
the state it reads."""

from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path

import trio

from brainfs.cache.local.pack import UnpackRetry

from .daemonparts import DaemonParts
from .heap import freeze_long_lived
from .wikihistory import fetch_wiki_history

log = logging.getLogger("brainfs.mount")


#: Pack files written to disk per step while the mount serves: a read of a file in the
#: step under way waits for the step (about 50 ms for 256 small files).
UNPACK_BATCH = 256
#: How often the unpacking looks whether the cache's disk has gained room for the files it
#: could not write (a full disk): the pack keeps them readable meanwhile, and is freed only
#: once none is left. Also its first pause before trying again regardless, doubled after
#: each failed try up to UNPACK_RETRY_MAX_S (see cache.local.pack.UnpackRetry).
UNPACK_RETRY_S = 5.0
UNPACK_RETRY_MAX_S = 300.0


def _free_bytes(d: Path) -> int:
    """Bytes an unprivileged writer may still use on the disk holding ``d`` (0 when it
    cannot be asked)."""
    try:
        st = os.statvfs(d)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


class BackgroundJobs(DaemonParts):
    """The background jobs of :class:`~brainfs.fs.daemon.Daemon` (its relisting is
    :class:`~brainfs.fs.relisting.Relisting`'s)."""

    timings: dict[str, float]
    _new_sessions: set[str]
    _sessions_wake: trio.Event
    _unpack_later: list[str]
    _listed_once: trio.Event
    _last_evict: tuple[int, int]

    async def _uploader(self) -> None:
        """Carry out the journal: wake on every commit, retry failures after a pause."""
        assert self.ops is not None and self.ws is not None
        ops = self.ops
        limiter = trio.CapacityLimiter(8)
        while True:
            ops.upload_wake = trio.Event()
            try:
                rows, failed = await self._upload_pass(limiter)
                if rows and self._over_budget():
                    # What was written is clean once uploaded: the budget holds for it too,
                    # not only for what reads fetch (a mount that only wrote filled the disk).
                    self._last_evict = (self.ws.local_bytes, len(self.ws.evict()))
            except Exception as e:  # noqa: BLE001 - e.g. the catalog's disk is full: retry
                log.warning("upload pass failed (will retry): %s", e)
                rows, failed = [], True
            if failed:
                with trio.move_on_after(self.cfg.cache.upload_retry_seconds):
                    await ops.upload_wake.wait()
            elif not rows or ops.upload_wake.is_set():
                await ops.upload_wake.wait()

    def _over_budget(self) -> bool:
        """Whether the cache holds more than its budget and an eviction may free some: not
        again while the last one freed nothing and the cache has not grown since (every
        file pinned, open or dirty: sorting them all again after each pass is waste)."""
        assert self.ws is not None
        used = self.ws.local_bytes
        if used <= self.cfg.cache.cache_budget_bytes:
            return False
        before, freed = self._last_evict
        return freed > 0 or used > before

    async def _upload_pass(self, limiter: trio.CapacityLimiter) -> tuple[list, bool]:
        """Upload what the journal holds once; returns (rows tried, whether any failed)."""
        assert self.ops is not None and self.ws is not None
        ops, ws = self.ops, self.ws
        # A file being written uploads once its writer commits: one version in flight.
        rows = ws.ready(busy=ops.busy_paths())
        failed = False
        if rows:
            results = []

            async def one(row, results=results) -> None:
                results.append(await trio.to_thread.run_sync(ws.upload, row, limiter=limiter))

            async with trio.open_nursery() as n:
                for row in rows:
                    n.start_soon(one, row)
            for res in results:
                if not ws.apply_upload(res):
                    failed = True
                    continue
                if res.conflict_path:
                    ops.content_changed([res.row.path])
                    ops.invalidate([res.row.path])
                    # The path holds the other writer's version now: fetched at once, so
                    # that ls keeps showing it (a working-set listing shows local files).
                    self._nursery.start_soon(self._fetch_quietly, res.row.path)
                elif res.refused:
                    # Another writer's version survived our delete: a relist brings it
                    # back into the working set.
                    self._nursery.start_soon(self._relist_quietly)
                elif res.row.op == "put":
                    if self.recall is not None:
                        self._nursery.start_soon(self.recall.indexed_upload, res.row.path, res.etag)
                    self._session_grew([res.row.path])
                elif res.row.op == "delete" and self.recall is not None:
                    self.recall.indexed_remove(res.row.path)
        return rows, failed

    async def _fetch_quietly(self, path: str) -> None:
        assert self.ops is not None
        errors = await self.ops.materialize([path])
        if errors:
            log.warning("could not fetch %s after a conflict (a read fetches it): %s", path,
                        errors.get(path))
            return
        self.ops.content_changed([path])
        self.ops.invalidate([path])

    def _session_grew(self, paths: list[str]) -> None:
        """Count sessions whose transcript is new or changed; wake dream at the threshold."""
        n = self.cfg.dream.dream_after_sessions
        if n <= 0:
            return
        for p in paths:
            parts = p.split("/")
            if len(parts) == 3 and parts[0] == "sessions" and parts[2] == "transcript.md":
                self._new_sessions.add(parts[1])
        if len(self._new_sessions) >= n:
            self._sessions_wake.set()

    async def _dreamer(self) -> None:
        """Dream on a schedule: new sessions become summaries and wiki pages, which the
        next relist brings into the working set; the refreshed index replaces ours."""
        from brainfs.dream.llm import synthesizer_from_config
        from brainfs.dream.sync import LeaseHeld, run_s3

        assert self.recall is not None
        workdir = self.cache_dir / "dream"
        while True:
            # Whichever comes first: the schedule, or enough new sessions.
            with trio.move_on_after(self.cfg.dream.dream_interval_seconds or math.inf):
                await self._sessions_wake.wait()
            self._sessions_wake = trio.Event()
            self._new_sessions.clear()
            try:
                emb = await trio.to_thread.run_sync(self.recall.embedder_if_loaded)
                rep = await trio.to_thread.run_sync(
                    lambda: run_s3(self.store, workdir, embedder=emb, index_embedder=emb,
                                   synthesizer=synthesizer_from_config(self.cfg)))
            except LeaseHeld as e:
                log.info("dream skipped: %s", e)
                continue
            except Exception as e:  # noqa: BLE001 - a failed run is retried next period
                log.warning("dream failed: %s", e)
                continue
            if rep.result.nothing_new:
                continue
            log.info("dream: %d change(s), commit %s", len(rep.result.changes), rep.commit)
            try:
                await self._relist_once()
                await self.recall.reload()
                await trio.to_thread.run_sync(fetch_wiki_history, self.store, self.cache_dir)
            except Exception as e:  # noqa: BLE001
                log.warning("after dream: %s", e)

    async def _unpack_preload(self) -> None:
        """Write the pack's files to disk while the mount serves, a batch at a time, so a
        read of one waits for at most one batch; then free the pack."""
        assert self.ws is not None and self.ops is not None
        ws = self.ws
        todo, self._unpack_later = self._unpack_later, []
        total, t0 = len(todo), time.monotonic()
        errors: dict[str, Exception] = {}
        retried = 0
        retry = UnpackRetry(UNPACK_RETRY_S, UNPACK_RETRY_MAX_S)
        try:
            if not ws.pack_verified:
                # From a listing snapshot: nothing is written before the real listing says
                # which entries are still the files (a changed one is fetched by the relist).
                await self._listed_once.wait()
            while True:
                for i in range(0, len(todo), UNPACK_BATCH):
                    batch = [p for p in todo[i : i + UNPACK_BATCH] if ws.is_packed(p)]
                    try:
                        errors.update(await self.ops.materialize(batch))
                    except Exception as e:  # noqa: BLE001 - e.g. the catalog's disk is full
                        log.warning("unpacking the preload failed (will retry): %s", e)
                        errors.update({p: e for p in batch})
                # Written, removed, renamed, rewritten or changed remotely: none is the
                # pack's any more. What is left could not be written (a full disk): the pack
                # keeps it readable, and it is tried again.
                todo = [p for p in todo if ws.is_packed(p)]
                if not todo:
                    break
                retried += len(todo)
                why = next(iter(errors.values()), "?")
                errors = {}
                # Said once: a disk that stays full must not fill the log (it did, every 5 s).
                if retry.failed(time.monotonic(), _free_bytes(ws.cache_dir)):
                    log.warning("%d preloaded files not written to the cache yet (%s); the pack "
                                "keeps them readable; trying again once the cache's disk has "
                                "room", len(todo), why)
                else:
                    log.debug("%d preloaded files still not written (%s)", len(todo), why)
                smallest = min((r.size for p in todo if (r := ws.get(p)) is not None), default=0)
                while not retry.due(time.monotonic(), _free_bytes(ws.cache_dir), smallest):
                    await trio.sleep(UNPACK_RETRY_S)
            if retry.failures:
                log.info("preload: every file written to the cache after %d tries",
                         retry.failures + 1)
        finally:
            ws.drop_pack()
        self.timings["unpack_s"] = time.monotonic() - t0
        if self.cfg.mount.gc_freeze:
            freeze_long_lived()  # the rows and inodes the unpacking made are the mount's too
        # Files whose writing had to be tried again (each time it failed counts once).
        self.timings["unpack_retries"] = retried
        log.info("preload unpacked: %d files in %.1f s", total, self.timings["unpack_s"])

    async def _background_preload(self) -> None:
        assert self.ws is not None and self.ops is not None
        t0 = time.monotonic()
        plan = self.ws.preload_plan()
        errors = await self.ops.materialize(plan)
        self.timings["preload_s"] = time.monotonic() - t0
        self.timings["preload_files"] = len(plan)
        self.timings["preload_errors"] = len(errors)
        log.info("background preload done: %s", self.timings)

    async def _housekeeping(self) -> None:
        assert self.ws is not None
        while True:
            await trio.sleep(30)
            try:
                self.ws.persist_atimes()
            except Exception as e:  # noqa: BLE001 - a full disk must not end the mount
                log.warning("housekeeping: %s", e)

    async def _wiki_history(self) -> None:
        """Fetch the wiki's git history (dream's bundle) so ``git log`` works in the mount."""
        assert self.ops is not None
        try:
            gitdir = await trio.to_thread.run_sync(fetch_wiki_history, self.store, self.cache_dir)
        except Exception as e:  # noqa: BLE001 - history is a convenience, never fatal
            log.warning("wiki history unavailable: %s", e)
            gitdir = None
        if gitdir:
            self.ops.gitdir = gitdir
            log.info("wiki history at %s", gitdir)
        self.ops.gitdir_ready.set()
