"""How the mount daemon keeps the corpus's listing current: the first real LIST after a
start from the listing snapshot, the periodic relist, a listing reconciled with the working
set (and the kernel's caches dropped), the listing snapshot kept for the next mount, and a
new search index or wiki commit in the bucket followed without a remount.

:class:`Relisting` is a part of :class:`~brainfs.fs.daemon.Daemon`, whose start-up sets the
state it reads."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import trio

from brainfs.backend import listing
from brainfs.backend.keys import INDEX_KEY, INDEX_MANIFEST_KEY, LISTING_KEY, WIKI_BUNDLE_KEY, is_internal

from .daemonparts import DaemonParts
from .wikihistory import fetch_wiki_history

if TYPE_CHECKING:
    from .firstlist import FirstListing

log = logging.getLogger("brainfs.mount")


class Relisting(DaemonParts):
    """The listing's part of :class:`~brainfs.fs.daemon.Daemon` (its other background jobs
    are :class:`~brainfs.fs.backgroundjobs.BackgroundJobs`')."""

    _first_list: FirstListing | None
    _first_list_ok: bool
    _snapshot: tuple[str, str]
    _snapshot_written: float
    _internal: dict[str, str]
    _internal_objs: list
    _listed_once: trio.Event

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
        await self._follow_internal(internal_etags(objs))
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


def _nothing_to_list(objs: list, snapshot: tuple[str, str]) -> bool:
    """A corpus with no file and no snapshot yet gets none: a mount of a mistyped prefix
    must leave nothing there (an existing snapshot is kept current, emptied or not)."""
    return not snapshot[0] and not any(not is_internal(o.path) for o in objs)


def internal_etags(objs: list) -> dict[str, str]:
    """The ETags of the search index and the wiki bundle in a listing."""
    return {o.path: o.etag for o in objs if o.path in (INDEX_MANIFEST_KEY, INDEX_KEY, WIKI_BUNDLE_KEY)}
