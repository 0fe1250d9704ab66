"""The mount daemon: prepare the working set, serve FUSE, flush on the way out.

Start-up order matters for "time to a usable mount": one listing, the consistency check,
the preload (parallel GETs), then ``pyfuse3.init``. Nothing slow (torch, the embedding
model) is imported on this path; recall loads its model lazily on first use.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyfuse3
import trio

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.nearby import empty_hint
from brainfs.backend import listing
from brainfs.backend.keys import INDEX_KEY, INDEX_MANIFEST_KEY, LISTING_KEY, WIKI_BUNDLE_KEY, CorpusURL, is_internal
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import UnpackRetry
from brainfs.cache.local.errors import WrongCorpus
from brainfs.cache.local.workingset import WorkingSet

from .daemonopen import DaemonOpenOps
from .firstlist import FirstListing
from .fusectl import connection_of
from . import watchdog
from .heap import GcStats, freeze_long_lived
from .magic import RecallFn, StatusFn
from .mountpoint import MountError, check_mountpoint  # noqa: F401 - MountError: callers take it from here
from .noopen import NoOpenOps
from .ops import KERNEL_CACHE_FLAGS, NO_OPEN_SUPPORT, Ops
from .recall import RecallService

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


def make_ops(ws: WorkingSet, cfg: Config, recall: RecallFn | None = None,
             status: StatusFn | None = None) -> Ops:
    """The mount's operations: FUSE no-open mode when asked for (``no_open``, the default)
    and this pyfuse3 build can run it, daemon opens otherwise."""
    cls = NoOpenOps if cfg.mount.no_open and NO_OPEN_SUPPORT else DaemonOpenOps
    return cls(ws, cfg, recall=recall, status=status)


class Daemon:
    """One mount of one corpus."""

    def __init__(self, url: CorpusURL, mountpoint: Path, cfg: Config,
                 progress: Callable[[str, int, int], None] | None = None,
                 notice: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.mountpoint = mountpoint.resolve()
        self.cfg = cfg
        self.progress = progress or (lambda stage, done, total: None)
        #: tells the user who ran the mount command a warning (its stderr, not the log)
        self.notice = notice or (lambda message: None)
        self.store = ObjectStore(url, cfg)
        # Absolute: status and umount name it to a user who may be in another directory.
        self.cache_dir = cfg.cache_dir_for(url.bucket, url.prefix).absolute()
        self.ws: WorkingSet | None = None
        self.ops: Ops | None = None
        #: the process that aborts the FUSE connection if this one cannot finish dying
        self.watchdog: subprocess.Popen | None = None
        self.timings: dict[str, float] = {}
        #: the busy-poll window in effect (µs; 0: off), see Config.busy_poll_us
        self.busy_poll_us = 0.0
        self._lock_fd: int | None = None
        self.recall: RecallService | None = None
        #: sessions new or grown since dream last ran from this mount
        self._new_sessions: set[str] = set()
        self._sessions_wake = trio.Event()
        #: ETags of the index and wiki bundle in the last listing
        self._internal: dict[str, str] = {}
        #: where the starting listing came from: "list" or "snapshot" (backend/listing.py)
        self.listing_source = "list"
        self._first_list_ok = False
        #: the start's LIST, kept until serve() checks the snapshot against it
        self._listed: list | None = None
        #: (ETag, signature) of the listing snapshot as last read or written here
        self._snapshot: tuple[str, str] = ("", "")
        self._snapshot_written = 0.0
        #: brainfs's own objects in the last listing (the final snapshot keeps them)
        self._internal_objs: list = []
        self._nursery: trio.Nursery | None = None
        #: preloaded files listed from the pack, to write to disk once serving
        self._unpack_later: list[str] = []
        #: set by the first real listing in (the pack's entries checked against it)
        self._listed_once = trio.Event()
        #: started from the snapshot: the real LIST, under way since the snapshot was read
        self._first_list: FirstListing | None = None
        self.gc = GcStats()
        #: (cache bytes, files evicted) at the last eviction after an upload pass
        self._last_evict: tuple[int, int] = (0, 1)

    def prepare(self) -> None:
        """Everything before the kernel sees the mount: check, list, preload."""
        t0 = time.monotonic()
        check_mountpoint(self.mountpoint)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(self.cache_dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._lock_fd, 20, 0).decode(errors="replace").strip()
            raise MountError(
                f"the cache {self.cache_dir} is in use by another mount of {self.url}"
                + (f" (daemon pid {holder}: mounted elsewhere, or still uploading after its "
                   f"unmount; it ends by itself, or `kill {holder}` leaves its writes in the "
                   "cache for the next mount)" if holder.isdigit() else "")) from None
        os.ftruncate(self._lock_fd, 0)
        os.write(self._lock_fd, f"{os.getpid()}\n".encode())
        self.store.check()
        try:
            self.ws = ws = WorkingSet(self.cache_dir, self.store, self.cfg)
        except WrongCorpus as e:
            raise MountError(str(e)) from None
        empty_cache = not ws.file_count() and not ws.local_dirs
        # An empty cache preloads, and the pack is most of it: its download starts now, while
        # the listing is read and taken in, rather than after them.
        pack_download = (_Background(ws.load_pack) if empty_cache and self.cfg.cache.preload_pack
                         and not self.cfg.cache.preload_in_background else None)
        report = ws.check()
        log.info("%s", report.summary())
        t1 = time.monotonic()
        snap = listing.read(self.store) if self.cfg.mount.listing_snapshot and empty_cache else None
        if snap is not None and not self.cfg.cache.preload_unpack_background:
            # Everything written and checked before the mount answers: the real LIST, cut
            # into parallel ranges at the snapshot's keys, so that the pack can be trusted.
            self._snapshot = (snap[1], listing.signature(snap[0]))
            objs = list(self.store.list(hints=[o.path for o in snap[0]]))
            self._listed = objs
        elif snap is not None:
            # The real LIST follows at once in the background (serve: _first_listing).
            objs, self._snapshot = snap[0], (snap[1], listing.signature(snap[0]))
            self.listing_source = "snapshot"
        else:
            # The last mount's catalog tells where to cut the listing into parallel ranges.
            objs = list(self.store.list(hints=list(ws.files)))
            self._listed = objs
        self._internal = _internal_etags(objs)
        self._internal_objs = [o for o in objs if is_internal(o.path)]
        if not any(not is_internal(o.path) for o in objs):
            self._say_empty()
        sync = ws.sync_listing(objs)
        t2 = time.monotonic()
        log.info("listing (from the %s): %s", self.listing_source, sync)
        plan = ws.preload_plan()
        if self.listing_source == "snapshot":
            # The real LIST at once, while the pack downloads and the mount starts; the key
            # ranges holding the preload plan's first files first (GUIDE.md, the wiki's
            # index...): a packed file is served once its range has vouched for it.
            self._first_list = FirstListing(self.store, list(ws.files), plan)
        if self.cfg.cache.preload_in_background:
            # Usable at once; _background_preload fills the working set while it serves.
            self.timings = {"check_s": t1 - t0, "list_s": t2 - t1, "preload_s": 0.0,
                            "preload_files": 0, "preload_deferred": len(plan),
                            "listing_from": self.listing_source}
            log.info("ready (preload continues in the background): %s", self.timings)
            return
        self.progress("preload", 0, len(plan))
        packed: list[str] = []
        rest = plan
        # A listing snapshot is a hint: a file another writer changed after it and the
        # pack were written is in both at its old ETag. Written to disk before the mount
        # answers, the pack could not be checked: its files are fetched instead.
        from_snapshot = self.listing_source == "snapshot"
        use = self.cfg.cache.preload_pack and (self.cfg.cache.preload_unpack_background
                                               or not from_snapshot)
        pack = None
        if plan and use:
            pack = pack_download.result() if pack_download is not None else ws.load_pack()
        if pack is not None:
            packed, rest = ws.use_pack(pack, plan, verified=not from_snapshot)
            del pack  # the working set holds it until it is unpacked
        if packed and self.cfg.cache.preload_unpack_background:
            # Listed already and read from memory until unpacked: serve() unpacks them.
            self._unpack_later = packed
            fetch = rest
        else:
            fetch = packed + rest
        results = ws.fetch(fetch, on_progress=lambda n: self.progress("preload", n, len(plan)))
        errors = ws.apply_fetched(results)
        if not self._unpack_later:
            ws.drop_pack()
        ws.evict()
        for p, e in list(errors.items())[:10]:
            log.warning("preload of %s failed: %s", p, e)
        t3 = time.monotonic()
        self.timings = {"check_s": t1 - t0, "list_s": t2 - t1, "preload_s": t3 - t2,
                        "preload_files": len(plan), "preload_from_pack": len(packed),
                        "preload_unpacking": len(self._unpack_later),
                        "preload_errors": len(errors), "listing_from": self.listing_source,
                        "corpus_files": len(ws.files)}
        log.info("ready: %s", self.timings)

    def _say_empty(self) -> None:
        """An empty prefix mounts (a new memory starts empty, as with rclone and
        mount-s3) but is named, since it is more often a typo."""
        message = f"{self.url} holds no files: mounting an empty memory"
        try:
            message += empty_hint(self.url, self.cfg)
        except Exception as e:  # noqa: BLE001 - the hint is a courtesy
            log.debug("no hint for an empty prefix: %s", e)
        self.notice(message)

    def status(self) -> dict:
        """The JSON behind ``brainfs status``."""
        assert self.ws is not None
        st = self.ws.status()
        st.update({
            "pid": os.getpid(),
            "corpus": str(self.url),
            "endpoint": self.cfg.s3.endpoint_url or "aws",
            "mountpoint": str(self.mountpoint),
            "cache_dir": str(self.cache_dir),
            "startup": self.timings,
            # "list"; or "snapshot" until the first real LIST is in ("snapshot, listed"),
            # or has failed ("snapshot, list failed"): until then another mount's newest
            # writes may not be seen here.
            "listing": self._listing_state(),
            # "working-set" (ls shows the local files) or "corpus" (every file)
            "listing_mode": self.cfg.mount.listing,
            "open_files": self.ws.open_files(),
            "writing": len(self.ops.writing) if self.ops else 0,
            # Files written and not committed yet (commit = "quiet": until their quiet
            # period ends or an fsync); not counted in pending_uploads until then.
            "uncommitted": (sum(1 for s in self.ops.writing.values() if s.dirty)
                            if self.ops else 0),
            "commit": "quiet" if self.ops and self.ops.commit_quiet else "close",
            # Python's cyclic collector in this daemon (fs/heap.py): collections and seconds
            # by generation, objects frozen out of its reach.
            "gc": self.gc.as_dict(),
            "recall": self._recall_state(),
            # What the mount fetched of the search index: parts local, bytes downloaded,
            # the parts fetched before the first recall and how long that took.
            "index": dict(self.recall.index_info) if self.recall else {},
            # Whether close/ls skip the daemon (pyfuse3 built from third_party/pyfuse3).
            "kernel_cache_flags": KERNEL_CACHE_FLAGS,
            # Whether the kernel opens files without asking (FUSE no-open mode).
            "no_open": bool(self.ops and self.ops.no_open),
            "read_only": self.cfg.mount.read_only,
            "busy_poll_us": self.busy_poll_us,
            "invalidations": self.ops.notifier.sent if self.ops else 0,
            "requests": self.ops.request_counts() if self.ops else {},
        })
        return st

    def _listing_state(self) -> str:
        if self.listing_source != "snapshot":
            return self.listing_source
        if self.ops is None or not self.ops.listing_ready.is_set():
            return "snapshot"
        return "snapshot, listed" if self._first_list_ok else "snapshot, list failed"

    def _recall_state(self) -> str:
        r = self.recall
        if r is None or not r.ready.is_set():
            return "starting"
        return r.problem or "ready"

    def mount(self) -> None:
        """Hand the mountpoint to the kernel."""
        assert self.ws is not None
        t0 = time.monotonic()
        self.recall = RecallService(self.store, self.cfg, self.cache_dir, self.url)
        self.ops = make_ops(self.ws, self.cfg, recall=self.recall.query, status=self.status)
        self.recall.attach(self.ops)
        options = set(pyfuse3.default_options)
        options |= {"fsname=brainfs", "subtype=brainfs", "noatime"}
        if self.cfg.mount.allow_other:
            options.add("allow_other")
        if self.cfg.mount.read_only:
            options.add("ro")
        if not KERNEL_CACHE_FLAGS:
            log.warning("stock pyfuse3: every open, close and directory listing goes through "
                        "the daemon (a warm grep -r is about 10x slower); .ci/build-pyfuse3 "
                        "builds ours")
        elif self.cfg.mount.no_open and not self.ops.no_open:
            log.warning("this pyfuse3 build predates no-open support: every open goes through "
                        "the daemon; run .ci/build-pyfuse3 again")
        if (self.cfg.mount.commit == "quiet" and not self.ops.commit_quiet
                and not self.cfg.mount.read_only):
            log.warning("commit = quiet needs FUSE no-open mode: writes are committed at close")
        if not self.ws.pack_verified:
            # Served from the pack only once the first real listing has vouched for it.
            self.ops.fetcher.pack_checked = trio.Event()
        # No-open mode asks the kernel which descriptors a writer still holds (fs/procfds.py).
        self.ops.mountpoint = str(self.mountpoint)
        pyfuse3.init(self.ops, str(self.mountpoint), options)
        # Aborts the connection should a kill leave a thread of ours stuck in the kernel.
        conn = connection_of(str(self.mountpoint))
        self.watchdog = watchdog.start(os.getpid(), conn) if conn is not None else None
        self.ops.notifier.start()
        self.busy_poll_us = busy_poll_us(self.cfg.mount.busy_poll_us)
        if self.busy_poll_us:
            pyfuse3.set_busy_poll(self.busy_poll_us)
        self.timings["kernel_mount_s"] = time.monotonic() - t0

    async def serve(self) -> None:
        """Run the FUSE loop with the background tasks until unmounted or signalled."""
        assert self.ops is not None
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._signals, nursery.cancel_scope)
            nursery.start_soon(self._uploader)
            nursery.start_soon(self._housekeeping)
            nursery.start_soon(self._relister)
            if self.listing_source == "snapshot":
                self.ops.listing_ready = trio.Event()
                nursery.start_soon(self._first_listing)
            elif self._listed is not None:
                objs, self._listed = self._listed, None
                nursery.start_soon(self._keep_snapshot, objs)
            if self.cfg.cache.preload_in_background:
                nursery.start_soon(self._background_preload)
            if self._unpack_later:
                nursery.start_soon(self._unpack_preload)
            if self.cfg.dream.dream_interval_seconds > 0 or self.cfg.dream.dream_after_sessions > 0:
                nursery.start_soon(self._dreamer)
            nursery.start_soon(self._wiki_history)
            assert self.recall is not None
            nursery.start_soon(self.recall.run)
            nursery.start_soon(self.ops.background)
            nursery.start_soon(self.ops.keep_orphans)
            await pyfuse3.main()
            nursery.cancel_scope.cancel()
        await self.ops.at_unmount()

    async def _signals(self, scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as sigs:
            async for _ in sigs:
                log.info("signal received: unmounting")
                pyfuse3.terminate()
                return

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

    async def _relister(self) -> None:
        """See what others wrote: list again, reconcile, and drop stale kernel caches."""
        assert self.ws is not None and self.ops is not None
        while True:
            await trio.sleep(self.cfg.mount.relist_seconds)
            try:
                await self._relist_once()
                self._first_list_ok = True
            except Exception as e:  # noqa: BLE001 - a failed relist is retried next period
                log.warning("relist failed: %s", e)

    async def _first_listing(self) -> None:
        """Started from the listing snapshot: take in the real LIST (under way since
        prepare). Until it is in, a name the snapshot lacks waits for it (Ops.lookup) rather
        than being called absent; a packed file waits for the key range holding it."""
        assert self.ops is not None and self.ws is not None
        try:
            first = self._first_list
            if first is None:
                await self._relist_once()
            else:
                while True:
                    kind, objs = await first.next()
                    if kind == "done":
                        break
                    if self.ws.vouch_packed(objs):
                        self.ops.fetcher.vouched()
                await self._apply_listing(objs, first.started)
            self._first_list_ok = True
        except Exception as e:  # noqa: BLE001 - the periodic relist tries again
            log.warning("first listing failed (serving the snapshot's view until a relist "
                        "succeeds): %s", e)
        finally:
            self._first_list = None
            self.ops.listing_ready.set()
            # Listed or not: a packed file's read waits no longer (unchecked, it is fetched).
            self.ops.fetcher.all_checked()

    async def _keep_snapshot(self, objs: list) -> None:
        """Rewrite the listing snapshot when this LIST differs from it (at most once per
        ``listing_snapshot_seconds``): the next mount with an empty cache starts from it."""
        if not self.cfg.mount.listing_snapshot:
            return
        now = time.monotonic()
        if (self._snapshot_written
                and now - self._snapshot_written < self.cfg.mount.listing_snapshot_seconds):
            return
        sig = listing.signature(objs)
        etag = next((o.etag for o in objs if o.path == LISTING_KEY), "")
        if not etag and _nothing_to_list(objs, self._snapshot):
            return
        if etag and etag != self._snapshot[0]:
            snap = await trio.to_thread.run_sync(listing.read, self.store)
            self._snapshot = (snap[1], listing.signature(snap[0])) if snap else ("", "")
        if etag and self._snapshot == (etag, sig):
            return
        try:
            new = await trio.to_thread.run_sync(listing.write, self.store, objs)
        except Exception as e:  # noqa: BLE001 - a hint: the next relist tries again
            log.warning("could not write the listing snapshot: %s", e)
            return
        self._snapshot, self._snapshot_written = (new, sig), now
        log.info("listing snapshot written (%d objects)", len(objs))

    async def _relist_quietly(self) -> None:
        try:
            await self._relist_once()
        except Exception as e:  # noqa: BLE001 - the periodic relist will try again
            log.warning("relist failed: %s", e)

    async def _relist_once(self) -> None:
        assert self.ws is not None
        started = time.monotonic()
        hints = list(self.ws.files)  # the snapshot's or last listing's keys: where to cut ranges
        objs = await trio.to_thread.run_sync(lambda: list(self.store.list(hints=hints)))
        await self._apply_listing(objs, started)

    async def _apply_listing(self, objs: list, started: float) -> None:
        """Reconcile the working set with a whole listing begun at ``started`` (monotonic)."""
        assert self.ws is not None and self.ops is not None
        ws, ops = self.ws, self.ops
        self._internal_objs = [o for o in objs if is_internal(o.path)]
        await self._follow_internal(_internal_etags(objs))
        if self._nursery is not None:
            self._nursery.start_soon(self._keep_snapshot, objs)
        # Uploads applied while the listing was taken are newer than it.
        # A file being written that another mount deleted stays: the write recreates it.
        stats = ws.sync_listing(objs, listed_since=started, writing=ops.shadows.busy())
        changes = ws.last_changes
        self._listed_once.set()
        ops.fetcher.all_checked()
        if stats["added"] or stats["changed"] or stats["removed"]:
            log.info("relist: %s", stats)
        # The kernel keeps pages across opens: it must not serve the old bytes.
        ops.content_changed(changes["updated"])
        self._session_grew(changes["updated"])
        ops.invalidate(changes["removed"] + [p for p in changes["updated"] if p not in ops.ino_of])
        # The working set keeps its shape: what was local comes back in its new version,
        # and new files the preload rules want (dream's pages, summaries) come in.
        wanted = changes["refetch"] + ws.preload_plan()
        if wanted:
            await ops.materialize(wanted)
            ops.invalidate(wanted)

    async def _follow_internal(self, seen: dict[str, str]) -> None:
        """A new search index or wiki commit in the bucket (a dream or an index run
        elsewhere): take it now, without a remount. The listing already carries their
        ETags, so staying current costs no request until one changes."""
        old, self._internal = self._internal, seen
        if self.recall is not None and any(seen.get(k) != old.get(k)
                                           for k in (INDEX_MANIFEST_KEY, INDEX_KEY)):
            try:
                await self.recall.reload()
                log.info("search index changed in the bucket: reloaded")
            except Exception as e:  # noqa: BLE001 - the next relist tries again
                log.warning("could not reload the search index (trying again at the next "
                            "relist): %s", e)
                for k in (INDEX_MANIFEST_KEY, INDEX_KEY):
                    if k in old:
                        self._internal[k] = old[k]
                    else:
                        self._internal.pop(k, None)
        if seen.get(WIKI_BUNDLE_KEY) != old.get(WIKI_BUNDLE_KEY) and self.ops is not None:
            try:
                gitdir = await trio.to_thread.run_sync(fetch_wiki_history, self.store, self.cache_dir)
            except Exception as e:  # noqa: BLE001 - history is a convenience
                log.warning("wiki history unavailable: %s", e)
                return
            if gitdir:
                self.ops.gitdir = gitdir
                self.ops.gitdir_ready.set()
                log.info("wiki history changed in the bucket: %s", gitdir)

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

    def shutdown(self) -> None:
        """Unmount, then upload what is pending (bounded), then close the catalog."""
        if self.ops is not None:
            self.ops.notifier.stop()
        try:
            pyfuse3.close(unmount=True)
        except Exception as e:  # noqa: BLE001 - never lose the flush below to this
            log.warning("unmount: %s", e)
        if self.recall is not None:
            self.recall.close()
        if self.ws is not None:
            left = self.ws.flush(deadline=time.monotonic() + 60)
            if left:
                log.warning("%d uploads still pending; the next mount will finish them", left)
            else:
                self._final_snapshot()
            self.ws.close()
        self.store.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
        watchdog.stop(self.watchdog)


    def _final_snapshot(self) -> None:
        """Leave the listing snapshot as this mount knows the corpus (its own writes all
        landed), so that the next mount with an empty cache starts from it."""
        assert self.ws is not None
        if not self.cfg.mount.listing_snapshot or self.cfg.mount.read_only:
            return
        objs = self.ws.corpus_view() + [o for o in self._internal_objs if o.path != LISTING_KEY]
        if listing.signature(objs) == self._snapshot[1] or _nothing_to_list(objs, self._snapshot):
            return
        try:
            listing.write(self.store, objs)
        except Exception as e:  # noqa: BLE001 - a hint; the next mount lists instead
            log.warning("could not write the listing snapshot: %s", e)


class _Background:
    """A call run in a thread of its own, its result (or exception) taken once needed.
    Daemonic: a mount that fails to start must not wait for it."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self._fn = fn
        self._out: tuple[bool, object] | None = None
        self._thread = threading.Thread(target=self._run, name=f"bg-{fn.__name__}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._out = (True, self._fn())
        except BaseException as e:  # noqa: BLE001 - raised again in result()
            self._out = (False, e)

    def result(self):
        """What the call returned; raises what it raised."""
        self._thread.join()
        assert self._out is not None
        ok, value = self._out
        if not ok:
            raise value  # type: ignore[misc]
        return value


def _nothing_to_list(objs: list, snapshot: tuple[str, str]) -> bool:
    """A corpus with no file and no snapshot yet gets none: a mount of a mistyped prefix
    must leave nothing there (an existing snapshot is kept current, emptied or not)."""
    return not snapshot[0] and not any(not is_internal(o.path) for o in objs)


def _internal_etags(objs: list) -> dict[str, str]:
    """The ETags of the search index and the wiki bundle in a listing."""
    return {o.path: o.etag for o in objs if o.path in (INDEX_MANIFEST_KEY, INDEX_KEY, WIKI_BUNDLE_KEY)}


def fetch_wiki_history(store: ObjectStore, cache_dir: Path) -> str | None:
    """Clone the bucket's wiki bundle into the cache (blocking); returns the git dir.

    The clone has no checkout: the mount itself is the work tree (its ``.git`` gitfile
    points here), and the index is filled from HEAD so ``git diff`` compares against it.
    """
    import shutil

    import git  # GitPython, as dream reaches the wiki's history

    try:
        data, etag = store.get(WIKI_BUNDLE_KEY)
    except NoSuchKey:
        return None
    dest = cache_dir / "wiki-history"
    stamp = cache_dir / "wiki-history.etag"
    if dest.exists() and stamp.exists() and stamp.read_text() == etag:
        _ignore_untracked(dest / ".git")
        return str(dest / ".git")
    tmp = cache_dir / "wiki-history.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    bundle = tmp / "wiki.bundle"
    bundle.write_bytes(data)
    repo = git.Repo.clone_from(str(bundle), str(tmp / "repo"), no_checkout=True, quiet=True)
    try:
        repo.git.read_tree("HEAD")
    finally:
        repo.close()
    shutil.rmtree(dest, ignore_errors=True)
    _ignore_untracked(tmp / "repo" / ".git")
    os.replace(tmp / "repo", dest)
    shutil.rmtree(tmp, ignore_errors=True)
    stamp.write_text(etag)
    return str(dest / ".git")


def _ignore_untracked(gitdir: Path) -> None:
    """Every file the history does not track is ignored (``info/exclude``: ``*``).

    The mount's root is the history's work tree, so without this ``git status`` at the
    root lists every note and transcript as untracked, and ``git clean -fd`` or
    ``git stash -u`` run there would delete the memory the history does not hold (hand
    pages, notes, corrections). Ignored files are left alone by both (only ``-x`` takes
    them); what the wiki tracks is diffed, logged and restored as before."""
    exclude = gitdir / "info" / "exclude"
    want = "# brainfs: the memory is the work tree; git touches only what the wiki tracks\n*\n"
    try:
        if exclude.exists() and exclude.read_text() == want:
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(want)
    except OSError as e:
        log.warning("could not protect untracked memory files from git (%s): %s", exclude, e)


def _free_bytes(d: Path) -> int:
    """Bytes an unprivileged writer may still use on the disk holding ``d`` (0 when it
    cannot be asked)."""
    try:
        st = os.statvfs(d)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def busy_poll_us(wanted: float) -> float:
    """The busy-poll window to use: ``wanted``, unless the binding lacks it or there is no
    second CPU (polling would then take the CPU from the process waiting for the answer)."""
    if wanted <= 0 or not hasattr(pyfuse3, "set_busy_poll"):
        return 0.0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return wanted if cpus >= 2 else 0.0


def run_foreground(url: CorpusURL, mountpoint: Path, cfg: Config,
                   notify: Callable[[str], None] | None = None) -> int:
    """Prepare, mount, serve until unmounted; ``notify`` gets progress/warn/ready/error
    lines."""
    say = notify or (lambda line: None)

    def progress(stage: str, done: int, total: int) -> None:
        say(f"progress {stage} {done} {total}")

    daemon = Daemon(url, mountpoint, cfg, progress, notice=lambda message: say(f"warn {message}"))
    try:
        daemon.prepare()
        daemon.mount()
    except Exception:
        if daemon.ws is not None:
            daemon.ws.close()
        raise
    say("ready " + json.dumps(daemon.timings))
    if cfg.mount.gc_freeze:
        freeze_long_lived()
    daemon.gc.install()
    try:
        trio.run(daemon.serve)
    finally:
        daemon.shutdown()
    return 0
