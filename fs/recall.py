"""The mount's recall service: ``cat memory/.recall/<question>``.

Runs after the mount is usable (never on the way to it): fetches the parts of the bucket's
index a first recall needs — all if they fit in ``recall_first_index_bytes``, else the core
part (wiki, cards, summaries) and the newest quarter of transcripts
(``Manifest.first_parts``) — and answers from them, saying in the answer's
``why`` which parts it searched; the older parts follow in the background, newest first, and
each joins the search as it arrives. Meanwhile the embedding model warms in a worker thread. A query runs the hybrid search in a thread,
materializes the files behind the hits (and the transcripts cited by wiki pages among them)
in one parallel batch, tells the kernel, and returns the extractive synthesis. A name ending
in ``.json`` returns the cards as JSON instead (what ``brainfs recall --mount --json`` reads).
A question may end in `` [k=N]`` to ask for N passages instead of the mount's ``recall_k``
(``cat "memory/.recall/where did I meet Ana [k=25].json"``; ``brainfs recall -k`` uses it),
in `` [as-of=2026-05-01]`` to answer with what was true on that day, or in `` [history]`` to
rank replaced values where they match (marked, not demoted); the suffixes combine in any
order (``… [as-of=2026-05-01] [k=5]``).

Recall follows the bucket, not only this mount's writes: what a relist learns another writer
changed, added or deleted (text files recall indexes) is re-indexed in the background from
the cache's copy or one GET (``others_wrote``), at most ``recall_follow_max_files`` files
and ``recall_follow_max_bytes`` per listing (the rest is logged, counted in the status and
left to ``brainfs index``; each answer says how many: "N files not yet indexed"). Until a
file is re-indexed, an answer never quotes it as current: a passage whose file is gone is
dropped, and one whose file changed since it was indexed is re-read first (up to :data:`QUERY_REREAD_MAX` files) or else marked stale.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.search import shardsync
from brainfs.cache.search.cards import RecallResult, render_synthesis
from brainfs.cache.search.currency import check_day
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.localindex import LocalIndex, files_for, is_indexable, local_index_path
from brainfs.cache.search.shardmap import Manifest
from brainfs.cache.search.sharded import ShardedIndex

from . import heap

if TYPE_CHECKING:
    from .ops import Ops  # the type only: ops loads pyfuse3 and the working set, which recall does not use

log = logging.getLogger("brainfs.recall")

#: The passage count a question may carry at its end: ``… [k=25]``.
K_SUFFIX = re.compile(r"\s*\[k=(\d+)\]$")
#: Any of the suffixes a question may carry at its end: ``[k=N]``, ``[as-of=DAY]``,
#: ``[history]``.
OPTION_SUFFIX = re.compile(r"\s*\[(k=\d+|as-of=[^\]\s]+|history)\]$")

#: A query whose passages come from files changed since they were indexed re-reads at most
#: this many of them before answering (a note is milliseconds of embedding); the others are
#: marked stale in the answer.
QUERY_REREAD_MAX = 8
#: Said in a passage whose file changed in the bucket after it was indexed.
CHANGED_SINCE_INDEXED = ("changed in the bucket since it was indexed: may be out of date "
                         "(`brainfs index` brings it current)")

#: The most passages one recall returns: past this a "recall" is a dump of the index, and
#: the answer (held in memory as a magic file) grows without bound.
MAX_K = 200


def split_k(question: str) -> tuple[str, int | None]:
    """``"where is Ana [k=25]"`` -> ``("where is Ana", 25)``; no suffix -> ``(question, None)``.
    Raises ValueError for a k outside 1..MAX_K."""
    m = K_SUFFIX.search(question)
    if m is None:
        return question, None
    k = int(m.group(1))
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K} (got {k})")
    return question[: m.start()], k


def with_k(question: str, k: int | None) -> str:
    """The magic file's question for ``k`` passages (the inverse of :func:`split_k`)."""
    return question if k is None else f"{question} [k={k}]"


def split_options(question: str) -> tuple[str, int | None, str | None, bool]:
    """``"where is Ana [as-of=2026-05-01] [k=5]"`` -> ``("where is Ana", 5, "2026-05-01",
    False)``: the question, k, the as-of day and whether ``[history]`` was asked. Raises
    ValueError for a k outside 1..MAX_K, a day that is not one, or as-of with history."""
    k: int | None = None
    as_of: str | None = None
    history = False
    while (m := OPTION_SUFFIX.search(question)) is not None:
        opt = m.group(1)
        question = question[: m.start()]
        if opt == "history":
            history = True
        elif opt.startswith("as-of="):
            as_of = check_day(opt[len("as-of="):])
        else:
            k = int(opt[2:])
            if not 1 <= k <= MAX_K:
                raise ValueError(f"k must be between 1 and {MAX_K} (got {k})")
    if history and as_of:
        raise ValueError("give [as-of=DAY] or [history], not both")
    return question, k, as_of, history


def with_options(question: str, k: int | None = None, as_of: str | None = None,
                 history: bool = False) -> str:
    """The magic file's question with its suffixes (the inverse of :func:`split_options`)."""
    if as_of:
        question += f" [as-of={as_of}]"
    if history:
        question += " [history]"
    return with_k(question, k)


class RecallService:
    """Owns one mount's local index (the bucket's search index, downloaded to the cache:
    :class:`LocalIndex`), which answers its recalls; lives in the mount's nursery."""

    def __init__(self, store: ObjectStore, cfg: Config, cache_dir: Path, url: CorpusURL) -> None:
        self.store, self.cfg, self.cache_dir, self.url = store, cfg, cache_dir, url
        #: the mount's operations, once they exist (attach): recall materializes through them
        self.ops: Ops | None = None
        self.local_index: LocalIndex | None = None
        self.ready = trio.Event()
        self.problem: str | None = None
        self.limiter = trio.CapacityLimiter(1)  # one query at a time: the model is shared
        #: what the mount fetched of the index, for ``.brainfs/status``
        self.index_info: dict[str, Any] = {}
        self._fetching = threading.Lock()  # one download of the parts at a time
        #: what this mount uploaded (path -> ETag) and deleted (path -> ''): an index taken
        #: later (the first, or one a dream or `brainfs index` built elsewhere) may predate
        #: these, and gets them on arrival (:meth:`_catch_up`)
        self._written: dict[str, str] = {}
        #: paths a relist found changed, added or deleted by another writer, not handled yet
        self._news: dict[str, None] = {}
        self._news_wake = trio.Event()
        #: path -> the bucket's ETag of a changed file left over the cap: not re-indexed
        #: until it changes again or `brainfs index` runs (answers mark it stale)
        self.stale: dict[str, str] = {}
        #: whether the whole index is to be compared with the listing (one just taken)
        self._news_all = False
        #: path -> ETag of every indexed file (None: to be read again after a change)
        self._hashes: dict[str, str] | None = None
        # Before the first download: its 8 MB pieces must not stay in glibc's arenas.
        heap.map_large_allocations()

    def attach(self, ops: Ops) -> None:
        """The mount's operations, which answer the magic folder and fetch files; every
        relist's news of other writers' files comes to :meth:`others_wrote`."""
        self.ops = ops
        ops.ws.on_remote_changes = self.others_wrote

    async def run(self) -> None:
        """Fetch the first parts of the index, then the rest and the model (background task)."""
        local = local_index_path(self.cache_dir)
        manifest: Manifest | None = None
        try:
            manifest, index = await trio.to_thread.run_sync(self._open_first, local)
        except Exception as e:  # noqa: BLE001 - recall degrades, the mount keeps serving
            self.problem = f"could not fetch the search index: {e}"
            index = await trio.to_thread.run_sync(shardsync.open_local, local)
        if index is None:
            self.problem = self.problem or f"no search index yet: run `brainfs index {self.url}`"
        else:
            self.local_index = LocalIndex(local, self.cfg, index=index)
            self.problem = None
        self.ready.set()
        await self._catch_up()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._follow_others)
            if self.local_index is not None and self.cfg.recall.recall_warmup:
                # The model first: a first recall needs it, and the older parts' download
                # would compete with its load for the CPUs (measured: index-shards.md).
                await self._warm()
            if manifest is not None and self.local_index is not None:
                await self._fetch_rest(local, manifest)

    @contextlib.asynccontextmanager
    async def _holding(self, local_index: LocalIndex) -> AsyncIterator[LocalIndex]:
        """Hold ``local_index`` for the block (:meth:`LocalIndex.hold`): a reload meanwhile
        closes it after the block, in a worker thread. Enter it where the local index is taken
        (``async with`` enters with no checkpoint)."""
        local_index.acquire()
        try:
            yield local_index
        finally:
            if local_index.release():
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(local_index.close)

    async def _warm(self) -> None:
        assert self.local_index is not None
        await trio.to_thread.run_sync(self.local_index.embedder, limiter=self.limiter)
        await trio.to_thread.run_sync(heap.release_free_memory)  # the model's load

    def _open_first(self, local: Path) -> tuple[Manifest | None, Any]:
        """The manifest and the index of the parts a first recall searches (blocking)."""
        t0 = time.monotonic()
        shardsync.remove_old_copy(local)
        manifest = shardsync.read_manifest(self.store)
        if manifest is None:
            legacy = local / shardsync.LEGACY_NAME
            if not shardsync.download_legacy(self.store, legacy):
                return None, None
            heap.release_free_memory()  # the object's buffer
            size = legacy.stat().st_size
            self.index_info = {"format": "one file", "parts": 1, "parts_local": 1,
                               "bytes": size, "first_bytes": size,
                               "first_seconds": round(time.monotonic() - t0, 3)}
            return None, SearchIndex(legacy)
        first = manifest.first_parts(self.cfg.recall.recall_first_index_bytes)
        with self._fetching:
            got = shardsync.fetch_parts(self.store, local, manifest, first)
        index = shardsync.open_parts(local, manifest)
        heap.release_free_memory()  # the pieces' buffers
        self.index_info = {"format": "parts", "parts": len(manifest.shards),
                           "parts_local": len(index.names()), "first_parts": first,
                           "bytes": manifest.total_bytes(), "downloaded_bytes": got,
                           "first_bytes": got, "first_seconds": round(time.monotonic() - t0, 3)}
        log.info("search index: %d of %d parts local (%s fetched first, %.1f MB) in %.2fs",
                 len(index.names()), len(manifest.shards), ", ".join(first), got / 1e6,
                 time.monotonic() - t0)
        return manifest, index

    async def _fetch_rest(self, local: Path, manifest: Manifest) -> None:
        """Fetch the parts not local yet, newest first, each joining the search on arrival;
        a part that fails is tried again after a pause (2 s, doubling up to a minute)."""
        local_index = self.local_index
        assert local_index is not None
        index = local_index.index
        pause = 2.0
        while (todo := index.missing()) and self.local_index is local_index:  # type: ignore[union-attr]
            failed = False
            for name in todo:
                if self.local_index is not local_index:
                    return  # reloaded meanwhile: the new index has every part
                async with self.limiter:
                    pass  # a recall asked meanwhile goes first
                try:
                    got = await trio.to_thread.run_sync(self._fetch_one, local, name, manifest)
                except Exception as e:  # noqa: BLE001 - tried again below
                    log.warning("search index part %s: %s (trying again in %.0f s)", name, e, pause)
                    failed = True
                    continue

                def arrive(name: str = name) -> None:
                    local_index.part_arrived(name, shardsync.open_part(local, name))
                    heap.release_free_memory()  # the pieces' buffers, the vectors' blocks

                if self.local_index is not local_index:
                    return
                async with self._holding(local_index):
                    await trio.to_thread.run_sync(arrive, limiter=self.limiter)
                self._hashes = None
                self._compare_all()  # the part may predate the listing
                self.index_info["downloaded_bytes"] = self.index_info.get("downloaded_bytes", 0) + got
                self.index_info["parts_local"] = len(index.names())  # type: ignore[union-attr]
            if failed:
                await trio.sleep(pause)
                pause = min(pause * 2, 60.0)
        if self.local_index is local_index:
            log.info("search index: all %d parts local", len(manifest.shards))

    def _fetch_one(self, local: Path, name: str, manifest: Manifest) -> int:
        with self._fetching:
            return shardsync.fetch_part(self.store, local, name, manifest.shards[name])

    def embedder_if_loaded(self):
        """The model if recall already loaded it (dream then verifies with it), else None:
        a background dream must not be what pulls torch into a mount."""
        r = self.local_index
        return r.loaded_embedder if r is not None else None

    async def reload(self) -> None:
        """Take the bucket's index again (after a dream or an index run refreshed it): the
        parts that changed are fetched, then the new set replaces the old one."""
        local = local_index_path(self.cache_dir)

        def fetch() -> Any:
            manifest = shardsync.read_manifest(self.store)
            if manifest is None:
                legacy = local / shardsync.LEGACY_NAME
                return SearchIndex(legacy) if shardsync.download_legacy(self.store, legacy) else None
            with self._fetching:
                got = shardsync.fetch_parts(self.store, local, manifest, list(manifest.shards))
            self.index_info.update(parts=len(manifest.shards), parts_local=len(manifest.shards),
                                   bytes=manifest.total_bytes(),
                                   downloaded_bytes=self.index_info.get("downloaded_bytes", 0) + got)
            return shardsync.open_parts(local, manifest)

        index = await trio.to_thread.run_sync(fetch)
        await trio.to_thread.run_sync(heap.release_free_memory)
        if index is None:
            return

        # On the trio thread, where every user takes the local index and holds it: a query
        # that took the old one reads it to its end (its connections keep reading the
        # replaced files), and it closes when the last holder lets go.
        old, self.local_index = self.local_index, LocalIndex(local, self.cfg, index=index)
        self.problem = None
        self._hashes = None
        if old is not None:
            if old.loaded_embedder is not None:
                self.local_index._embedder = old.loaded_embedder  # no second load of the model
            await trio.to_thread.run_sync(old.close)
        # A new index knows the bucket as it was listed for it: what it left stale is
        # current there or judged again now.
        self.stale.clear()
        await self._catch_up()

    async def _catch_up(self) -> None:
        """Give the index just taken this mount's uploads and deletes it does not have, and
        what other writers changed since it was built."""
        await self._catch_up_own()
        # In the background: a reload is awaited by the relist, which must not wait for
        # fetches and embedding.
        self._compare_all()

    async def _catch_up_own(self) -> None:
        """This mount's uploads and deletes the index just taken does not have."""
        local_index, ops = self.local_index, self.ops
        if local_index is None or ops is None or not self._written:
            return
        async with self._holding(local_index):
            await self._catch_up_held(local_index, ops)

    async def _catch_up_held(self, local_index: LocalIndex, ops: Ops) -> None:
        indexed = await trio.to_thread.run_sync(local_index.index.file_hashes, limiter=self.limiter)
        for path, etag in list(self._written.items()):
            if self.local_index is not local_index:
                return  # replaced meanwhile: that one catches up itself
            if not etag:
                if path in indexed:
                    await trio.to_thread.run_sync(local_index.remove, path, limiter=self.limiter)
                    self._hashes = None
                continue
            row = ops.ws.get(path)
            if indexed.get(path) == etag or row is None or row.etag != etag or not row.is_local:
                continue  # indexed, or changed again since (that upload brings it)
            await self._index_local_copy(local_index, path, etag)

    async def _index_local_copy(self, local_index: LocalIndex, path: str, etag: str) -> None:
        """Index the cache's copy of ``path`` (uploaded as ``etag``)."""
        assert self.ops is not None
        try:
            data = await trio.to_thread.run_sync(self.ops.ws.blobs.location(path).read_bytes)
            await trio.to_thread.run_sync(local_index.upsert, path, etag, data, limiter=self.limiter)
            self.stale.pop(path, None)
        except Exception as e:  # noqa: BLE001 - indexing must never break uploads or the mount
            log.warning("could not index %s: %s", path, e)
        finally:
            self._hashes = None

    def indexed_remove(self, path: str) -> None:
        """Drop a file the mount just deleted from the index (and from any taken later)."""
        self._written[path] = ""
        self.stale.pop(path, None)
        if self.local_index is not None:
            self.local_index.remove(path)
            self._hashes = None

    # ------------------------------------------------------------------ other writers
    def others_wrote(self, changes: dict[str, list[str]]) -> None:
        """A relist's news (``WorkingSet.last_changes``): the files another writer changed,
        added or deleted, re-indexed in the background (called on the trio thread)."""
        for path in changes["updated"] + changes["removed"]:
            if is_indexable(path):
                self._news[path] = None
        if self._news:
            self._news_wake.set()

    def _compare_all(self) -> None:
        """Have the follower compare the whole index with the listing (an index just taken
        may predate what the listing knows)."""
        self._news_all = True
        self._news_wake.set()

    async def _follow_others(self) -> None:
        """Bring the index in step with each relist's news (background task)."""
        while True:
            await self._news_wake.wait()
            self._news_wake = trio.Event()
            paths: list[str] | None = list(self._news)
            if self._news_all:
                paths, self._news_all = None, False
            self._news = {}
            try:
                await self._bring_current(paths)
            except Exception as e:  # noqa: BLE001 - recall degrades, the mount keeps serving
                log.warning("recall could not follow other writers' changes: %s", e)

    async def _indexed(self, local_index: LocalIndex) -> dict[str, str]:
        """path -> ETag of every file ``local_index``'s index holds, which the caller holds
        (the current index's: read again after each change)."""
        if local_index is not self.local_index:
            return await trio.to_thread.run_sync(local_index.index.file_hashes, limiter=self.limiter)
        if self._hashes is None:
            hashes = await trio.to_thread.run_sync(local_index.index.file_hashes, limiter=self.limiter)
            if local_index is not self.local_index:
                return hashes  # replaced meanwhile: not the current index's
            self._hashes = hashes
        return self._hashes

    def _differs(self, path: str, indexed: dict[str, str]) -> str | None:
        """What the index lacks of ``path``: "gone" (indexed, deleted since), "changed"
        (another version, or not indexed at all), or None (current, being written here, or
        this mount's own upload, which :meth:`indexed_upload` indexes)."""
        assert self.ops is not None
        row = self.ops.ws.get(path)
        if row is None:
            return "gone" if path in indexed and not self.ops.ws.is_dir(path) else None
        if row.state == "dirty" or not row.etag or self._written.get(path) == row.etag:
            return None
        return None if indexed.get(path) == row.etag else "changed"

    async def _bring_current(self, paths: list[str] | None) -> None:
        """Drop from the index what another writer deleted and re-index what they changed
        or added, among ``paths`` (None: every file the listing or the index knows), within
        ``recall_follow_max_files`` and ``recall_follow_max_bytes``."""
        local_index, ops = self.local_index, self.ops
        if local_index is None or ops is None:
            return  # the index, once taken, is compared whole (run, reload)
        async with self._holding(local_index):
            await self._bring_current_held(local_index, ops, paths)

    async def _bring_current_held(self, local_index: LocalIndex, ops: Ops, paths: list[str] | None) -> None:
        indexed = await self._indexed(local_index)
        if paths is None:
            paths = [p for p in ops.ws.files if is_indexable(p)]
            paths += [p for p in indexed if p not in ops.ws.files]
        idx = local_index.index
        gone, todo = [], []
        for i, path in enumerate(dict.fromkeys(paths)):
            if i % 2000 == 1999:
                await trio.sleep(0)  # 20,000 files: let the mount's requests through
            if isinstance(idx, ShardedIndex) and idx.part(idx.part_for(path)) is None \
                    and idx.part_for(path) in idx.expected:
                continue  # its part is still downloading: compared when it arrives
            why = self._differs(path, indexed)
            row = ops.ws.get(path)
            if why == "gone":
                gone.append(path)
            elif why == "changed" and row is not None and self.stale.get(path) != row.etag:
                todo.append((path, row.etag, row.size))
        for path in gone:
            if self.local_index is not local_index:
                return
            await trio.to_thread.run_sync(local_index.remove, path, limiter=self.limiter)
            self.stale.pop(path, None)
            self._hashes = None
        taken, budget = 0, self.cfg.recall.recall_follow_max_bytes
        left: list[tuple[str, str, int]] = []
        for path, etag, size in todo:
            if taken >= self.cfg.recall.recall_follow_max_files or size > budget:
                left.append((path, etag, size))
                continue
            if self.local_index is not local_index:
                return
            taken += 1
            budget -= size
            await self._reindex(local_index, path, etag)
        for path, etag, _size in left:
            self.stale[path] = etag
        self.index_info["stale_files"] = len(self.stale)
        if gone or taken:
            log.info("recall follows other writers: %d re-indexed, %d dropped", taken, len(gone))
        if left:
            log.warning("recall: %d files changed in the bucket are over the cap of %d files "
                        "and %d bytes per listing and were not re-indexed (answers mark them "
                        "stale); `brainfs index %s` indexes them", len(left),
                        self.cfg.recall.recall_follow_max_files, self.cfg.recall.recall_follow_max_bytes,
                        self.url)

    async def _reindex(self, local_index: LocalIndex, path: str, etag: str) -> None:
        """Index another writer's version of ``path`` (the listing's ``etag``): the cache's
        copy when it holds that version, else one GET (a text file: small)."""
        assert self.ops is not None
        row = self.ops.ws.get(path)
        if row is not None and row.is_local and row.etag == etag:
            await self._index_local_copy(local_index, path, etag)
            return
        try:
            data, got = await trio.to_thread.run_sync(self.store.get, path)
        except NoSuchKey:
            await trio.to_thread.run_sync(local_index.remove, path, limiter=self.limiter)
            self._hashes = None
            return
        except Exception as e:  # noqa: BLE001 - left stale; the next change tries again
            log.warning("could not fetch %s to index it: %s", path, e)
            self.stale[path] = etag
            return
        try:
            await trio.to_thread.run_sync(local_index.upsert, path, got, data, limiter=self.limiter)
            self.stale.pop(path, None)
        except Exception as e:  # noqa: BLE001 - indexing must never break the mount
            log.warning("could not index %s: %s", path, e)
        finally:
            self._hashes = None

    async def _vet(self, local_index: LocalIndex, result: RecallResult, question: str,
                   k: int | None, reread: bool = True, as_of: str | None = None,
                   history: bool = False) -> RecallResult:
        """Never an answer quoting a file as current that is not: passages of deleted files
        are dropped; files changed since they were indexed are re-read (then the search
        runs again) or their passages marked stale. ``local_index``: the one that answered,
        held by the caller."""
        assert self.ops is not None
        indexed = await self._indexed(local_index)
        state = {p: self._differs(p, indexed) for p in {c.path for c in result.cards}}
        changed = [p for p, why in state.items() if why == "changed"]
        gone = {p for p, why in state.items() if why == "gone"}
        if reread and (changed or gone):
            for path in changed[:QUERY_REREAD_MAX]:
                row = self.ops.ws.get(path)
                if row is not None and row.size <= self.cfg.recall.recall_follow_max_bytes:
                    await self._reindex(local_index, path, row.etag)
            # Searched again without the deleted files (not only their cards dropped after):
            # a wiki line left to a turn of a deleted transcript (retrieval's
            # leave_to_turns) comes back, and the list is filled up to k.
            result = await trio.to_thread.run_sync(
                partial(local_index.search, question, k, as_of, history, exclude=gone),
                limiter=self.limiter)
            result = await self._vet(local_index, result, question, k, False, as_of, history)
            if gone:
                result.why += (f"; {len(gone)} file{'s' if len(gone) > 1 else ''} deleted since "
                               "the index was built left out")
            return result
        if gone:
            result.cards = [c for c in result.cards if c.path not in gone]
            result.why += (f"; {len(gone)} file{'s' if len(gone) > 1 else ''} deleted since "
                           "the index was built left out")
        for c in result.cards:
            if state.get(c.path) == "changed":
                c.stale = True
                c.reason += f"; {CHANGED_SINCE_INDEXED}"
        if self.stale:
            # what the answer cannot hold (a new file over the cap is in no card): said once
            n = len(self.stale)
            result.why += (f"; {n} file{'s' if n > 1 else ''} not yet indexed (changed in the "
                           f"bucket, over the mount's re-index cap): run `brainfs index {self.url}`")
        return result

    async def query(self, name: str) -> bytes:
        """Answer the magic file ``.recall/<name>``."""
        await self.ready.wait()
        as_json = name.endswith(".json")
        question = (name[: -len(".json")] if as_json else name).replace("\u2215", "/")
        try:
            question, k, as_of, history = split_options(question)
        except ValueError as e:
            return (json.dumps({"error": str(e)}) if as_json else f"# Recall refused\n\n{e}\n").encode()
        if self.local_index is None:
            msg = self.problem or "recall is unavailable"
            return (json.dumps({"error": msg}) if as_json else f"# Recall unavailable\n\n{msg}\n").encode()
        ops = self.ops
        assert ops is not None
        t0 = time.perf_counter()
        # The index this recall started on, to its end (a swap meanwhile closes it after).
        async with self._holding(self.local_index) as local_index:
            result = await trio.to_thread.run_sync(local_index.search, question, k, as_of, history,
                                                   limiter=self.limiter)
            result = await self._vet(local_index, result, question, k, True, as_of, history)
        t1 = time.perf_counter()
        paths, errors = await self._materialize_cited(ops, result)
        t2 = time.perf_counter()
        timings = dict(result.timings, materialize_ms=round((t2 - t1) * 1000, 1),
                       total_ms=round((t2 - t0) * 1000, 1))
        log.info("recall %r: mode %s, %d cards, %d files, %s", question, result.mode,
                 len(result.cards), len(paths), timings)
        if as_json:
            out = result.to_dict()
            out["materialized"] = paths
            out["failed"] = {p: str(e) for p, e in errors.items()}
            out["timings"] = timings
            return (json.dumps(out, indent=2) + "\n").encode()
        text = render_synthesis(result, paths)
        if errors:
            text += "\n\nCould not fetch: " + ", ".join(sorted(errors)) + "\n"
        return text.encode()

    @staticmethod
    async def _materialize_cited(ops: Ops, result: RecallResult) -> tuple[list[str], dict[str, Exception]]:
        """Fetch the files a recall answer cites and tell the kernel of them; returns the
        paths now local and the fetch errors by path."""

        def read_local(path: str) -> bytes | None:
            row = ops.ws.get(path)
            if row is None or not row.is_local:
                return None
            try:
                return ops.ws.blobs.location(path).read_bytes()
            except OSError:
                return None

        wanted = [p for p in files_for(result, lambda p: None, False) if ops.ws.has_file(p)]
        errors = await ops.materialize(wanted)
        cited = [p for p in files_for(result, read_local) if p not in wanted and ops.ws.has_file(p)]
        if cited:
            errors.update(await ops.materialize(cited))
        paths = [p for p in wanted + cited if p not in errors]
        ops.invalidate(paths)
        return paths, errors

    async def indexed_upload(self, path: str, etag: str) -> None:
        """Index a file the mount just uploaded."""
        if is_indexable(path):
            self._written[path] = etag
        await self.ready.wait()
        if self.local_index is None or self.ops is None:
            return
        if not is_indexable(path):
            return  # decided before reading: a directory marker has no content, a binary file is big
        async with self._holding(self.local_index) as local_index:
            await self._index_local_copy(local_index, path, etag)

    def close(self) -> None:
        """Close the index."""
        if self.local_index is not None:
            self.local_index.close()
