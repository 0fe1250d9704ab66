"""The bucket's search index on this machine: which files it indexes, building it and
uploading what changed (:func:`build_index`), the local copy queried and kept in step with
writes (:class:`LocalIndex`), and the files a mount should materialize for an answer.

The index is stored in the bucket in parts under ``.brainfs/index/`` with a manifest
(``shardmap``: the wiki, cards and summaries in one part, transcripts by quarter).
``brainfs index`` refreshes it (only the parts whose files changed, and in them only files
whose ETag changed, are read and embedded) and uploads what changed (``shardsync``); a
mount fetches the core part and the newest quarter first and the rest in the background
(``fs/recall.py``), then indexes files written through it as they are uploaded (locally:
the bucket copy is refreshed by the next ``brainfs index`` or dream run). An index of
earlier versions (one file, ``.brainfs/index.sqlite``) is still read, and split into parts
by the next refresh.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.keys import CONFLICT_MARK, INDEX_KEY, INDEX_MANIFEST_KEY, is_internal
from brainfs.backend.store import ObjectStore
from brainfs.cache.facts.records import FACTS_PATH
from brainfs.cache.layout import in_knowledge

from .embedder import Embedder, EmbedderUnavailable, PendingEmbedder, load_embedder
from .forget import FORGET_DIR, request_phrases
from .forget import is_request as is_forget_request
from .cards import RecallResult
from .citations import cited_sources
from .index import SearchIndex
from .retrieval import retrieve
from .sharded import ShardedIndex
from .shardsync import download_all, open_local, refresh_parts

log = logging.getLogger(__name__)

#: Folder of the local copy of the bucket's index in a cache (or dream work) directory.
LOCAL_INDEX_NAME = "index"

__all__ = ["INDEX_KEY", "INDEX_MANIFEST_KEY", "LocalIndex", "LocalIndexClosed", "build_index", "download_all",
           "files_for", "is_indexable", "local_index_path", "open_local"]


def local_index_path(cache_dir: Path) -> Path:
    """The folder where a cache directory (a mount's, a command's, dream's work directory)
    keeps its copy of the bucket's search index (``shardsync`` describes it)."""
    return cache_dir / LOCAL_INDEX_NAME


def is_indexable(path: str) -> bool:
    """Whether recall indexes ``path``."""
    # Text memory only: the index chunks Markdown and transcripts; binary blobs and conflict
    # copies would only add noise.
    # The deletion log is not indexed either: its lines are what must not be found.
    # The fact records are: each is a passage, and they say what is still true.
    return (path.endswith((".md", ".txt", ".markdown")) and CONFLICT_MARK not in path
            and not path.startswith(FORGET_DIR)) or path == FACTS_PATH


def build_index(store: ObjectStore, local: Path, embedder: Embedder | PendingEmbedder | None,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """Refresh the index of the whole corpus and upload the parts that changed (``brainfs
    index``, dream); ``local`` is the folder of the local copy. ``embedder`` may still be
    loading (:class:`~.embedder.PendingEmbedder`): the listing and the first fetches go on
    meanwhile. The caller rebuilds the preload pack if it wants it in step: that is the
    working set's, not the index's. The stats include where the time went
    (``list_seconds``, ``fetch_wait_seconds``, ``*_seconds`` of ``SearchIndex.refresh``,
    ``upload_seconds``)."""
    t = time.perf_counter()
    objects = list(store.list())
    listing = [(o.path, o.etag) for o in objects
               if not is_internal(o.path) and is_indexable(o.path)]
    requests = [o.path for o in objects if is_forget_request(o.path)]
    phrases: list[str] = []
    for path in requests:
        phrases += request_phrases(store.get(path)[0].decode("utf-8", "replace"))
    listed = time.perf_counter() - t
    stats = refresh_parts(store, local, listing, phrases, embedder, progress)
    stats["list_seconds"] = round(listed, 3)
    return stats


class LocalIndexClosed(RuntimeError):
    """A local index was held after it was closed (a caller kept it past a swap)."""


class LocalIndex:
    """Queries against a local copy of the index (``index``, or what ``index_path`` holds:
    a folder of parts or one index file); the embedder loads on first use.

    A mount replaces its local index when a new index arrives (``RecallService.reload``) while
    queries may still be reading the old one: a caller holds (:meth:`hold`) the one it
    took for as long as it uses it, and :meth:`close` leaves the index's connections open
    until the last holder lets go (closed at once, they failed a first recall with
    ``apsw.ConnectionClosedError``: issue 27)."""

    def __init__(self, index_path: Path, cfg: Config,
                 index: SearchIndex | ShardedIndex | None = None) -> None:
        self.index_path = index_path
        self.cfg = cfg
        self._index: SearchIndex | ShardedIndex | None = index
        self._embedder: Embedder | None = None
        self._embedder_error: str | None = None
        self._lock = threading.Lock()
        #: writes to parts that have not arrived yet, by part: (path, etag, data or None
        #: for a removal), applied by :meth:`part_arrived`
        self.pending: dict[str, list[tuple[str, str, bytes | None]]] = {}
        self._holds = threading.Lock()
        self._holders = 0
        #: close() was called: the index closes when the last holder lets go
        self._closing = False
        self._closed = False

    def acquire(self) -> None:
        """Hold the index open (see :meth:`hold`); LocalIndexClosed when it is closed already.
        Take it where the local index is taken, with no wait in between."""
        with self._holds:
            if self._closed:
                raise LocalIndexClosed("the search index was replaced and closed")
            self._holders += 1

    def release(self) -> bool:
        """Let go of a hold. True when it was the last hold of a local index asked to close
        meanwhile: the caller then calls :meth:`close` (in a worker thread, from an event
        loop), which closes it now."""
        with self._holds:
            self._holders -= 1
            return self._closing and self._holders == 0 and not self._closed

    @contextlib.contextmanager
    def hold(self) -> Iterator[LocalIndex]:
        """Keep the index open for the block, whatever :meth:`close` is called meanwhile
        (blocking at its end when it closes the index then)."""
        self.acquire()
        try:
            yield self
        finally:
            if self.release():
                self.close()

    @property
    def index(self) -> SearchIndex | ShardedIndex:
        """The open index (opened lazily)."""
        if self._index is None:
            self._index = open_local(self.index_path)
            if self._index is None:
                raise FileNotFoundError(f"no search index in {self.index_path}")
        return self._index

    @property
    def loaded_embedder(self) -> Embedder | None:
        """The model if it is loaded already (never loads it)."""
        return self._embedder

    def embedder(self) -> Embedder | None:
        """The embedding model, or None when it cannot load (recall degrades to sparse)."""
        with self._lock:
            if self._embedder is None and self._embedder_error is None:
                t0 = time.monotonic()
                try:
                    self._embedder = load_embedder(self.cfg.recall.embedder)
                    log.info("embedding model loaded in %.1fs", time.monotonic() - t0)
                except EmbedderUnavailable as e:
                    self._embedder_error = str(e)
                    log.warning("recall without embeddings: %s", e)
            return self._embedder

    def search(self, query: str, k: int | None = None, as_of: str | None = None,
               history: bool = False, exclude: Collection[str] = ()) -> RecallResult:
        """Hybrid recall (blocking: run it in a worker thread from an event loop); what is
        true now first, or as of a day, or everything in rank (``history``). A wiki line
        whose cited turns the answer returns too is left to them (``retrieval.retrieve``'s
        ``leave_to_turns``): a reader does not pay twice for one statement. ``exclude``:
        paths the caller knows are deleted since the index was built."""
        with self._lock:
            idx = self.index
        missing = idx.missing() if isinstance(idx, ShardedIndex) else []
        result = retrieve(idx, query, k=k or self.cfg.recall.recall_k, embedder=self.embedder(),
                          stale_days=self.cfg.recall.stale_days, as_of=as_of, history=history,
                          leave_to_turns=True, exclude=exclude)
        if missing:
            have = idx.names()
            # Said in the answer: older sessions may hold a better passage.
            result.why += (f"; searched {len(have)} of {len(have) + len(missing)} index parts "
                           f"({', '.join(have)}); still downloading: {', '.join(missing)}")
        return result

    def upsert(self, path: str, etag: str, data: bytes) -> None:
        """Index one file written through the mount (kept for later when its part of the
        index has not arrived yet)."""
        if not is_indexable(path):
            return
        idx = self.index
        if isinstance(idx, ShardedIndex) and idx.part(idx.part_for(path)) is None \
                and idx.part_for(path) in idx.expected:
            self.pending.setdefault(idx.part_for(path), []).append((path, etag, data))
            return
        idx.upsert_file(path, etag, data, self.embedder())

    def remove(self, path: str) -> None:
        """Drop a deleted file from the index (later, when its part has not arrived yet)."""
        idx = self.index
        if isinstance(idx, ShardedIndex) and idx.part(idx.part_for(path)) is None:
            self.pending.setdefault(idx.part_for(path), []).append((path, "", None))
            return
        idx.remove_file(path)

    def part_arrived(self, name: str, part: SearchIndex) -> None:
        """Search part ``name`` from now on, with the writes made before it arrived."""
        idx = self.index
        assert isinstance(idx, ShardedIndex)
        part.warm()
        idx.add(name, part)
        for path, etag, data in self.pending.pop(name, []):
            if data is None:
                idx.remove_file(path)
            else:
                idx.upsert_file(path, etag, data, self.embedder())

    def close(self) -> None:
        """Close the index, now or, while callers hold it, when the last lets go."""
        with self._holds:
            self._closing = True
            if self._holders or self._closed:
                return
            self._closed = True
        self._close_index()

    def _close_index(self) -> None:
        if self._index is not None:
            self._index.close()


def files_for(result: RecallResult, read_local: Callable[[str], bytes | None],
              follow_citations: bool = True) -> list[str]:
    """The corpus paths a recall should materialize: the files behind the hits and, for
    wiki pages that are local, the transcripts their ``[cite:N]`` point to."""
    paths = list(dict.fromkeys(c.path for c in result.cards))
    if follow_citations:
        for p in list(paths):
            if in_knowledge(p):
                text = read_local(p)
                if text:
                    paths.extend(s for s in cited_sources(text) if s not in paths)
    return paths
