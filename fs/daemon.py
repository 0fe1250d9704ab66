"""The mount daemon: prepare the working set, serve FUSE, flush on the way out.

Start-up order matters for "time to a usable mount": one listing, the consistency check,
the preload (parallel GETs), then ``pyfuse3.init``. Nothing slow (torch, the embedding
model) is imported on this path; recall loads its model lazily on first use.

:class:`Daemon` holds start-up, the FUSE loop and shutdown; its background jobs are
:class:`~brainfs.fs.backgroundjobs.BackgroundJobs` (uploads, dream, the preload, the wiki's
history) and :class:`~brainfs.fs.relisting.Relisting` (the listing kept current).
"""

from __future__ import annotations

import fcntl
import json
import logging
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
from brainfs.backend.nearby import empty_hint
from brainfs.backend import listing
from brainfs.backend.keys import CorpusURL, is_internal
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.errors import WrongCorpus
from brainfs.cache.local.workingset import WorkingSet

from .backgroundjobs import BackgroundJobs
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
from .relisting import Relisting, internal_etags

log = logging.getLogger("brainfs.mount")


def make_ops(ws: WorkingSet, cfg: Config, recall: RecallFn | None = None,
             status: StatusFn | None = None) -> Ops:
    """The mount's operations: FUSE no-open mode when asked for (``no_open``, the default)
    and this pyfuse3 build can run it, daemon opens otherwise."""
    cls = NoOpenOps if cfg.mount.no_open and NO_OPEN_SUPPORT else DaemonOpenOps
    return cls(ws, cfg, recall=recall, status=status)


class Daemon(Relisting, BackgroundJobs):
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
        self._internal = internal_etags(objs)
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
