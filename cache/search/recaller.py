"""Recall over a corpus: keep the search index in step with the bucket, answer queries, and
name the files a mount should materialize for an answer.

The index is one SQLite file stored in the bucket at ``.brainfs/index.sqlite``. ``brainfs
index`` refreshes it (only files whose ETag changed are read and embedded) and uploads it;
a mount downloads it after it is usable, then indexes files written through it as they are
uploaded (locally: the bucket copy is refreshed by the next ``brainfs index`` or dream run).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError, NoSuchKey
from brainfs.backend.keys import INDEX_KEY, is_internal
from brainfs.backend.store import ObjectStore

from .embedder import Embedder, EmbedderUnavailable, load_embedder
from .forget import FORGET_DIR, request_phrases
from .forget import is_request as is_forget_request
from .index import SearchIndex
from .retrieval import RecallResult, cited_sources, recall

log = logging.getLogger(__name__)

#: File name of the local copy of the bucket's index in a cache (or dream work) directory.
LOCAL_INDEX_NAME = "index.sqlite"


def local_index_path(cache_dir: Path) -> Path:
    """Where a cache directory (a mount's, a command's, dream's work directory) keeps its
    copy of the bucket's search index (``INDEX_KEY``)."""
    return cache_dir / LOCAL_INDEX_NAME


def is_indexable(path: str) -> bool:
    """Whether recall indexes ``path``."""
    # Text memory only: the index chunks Markdown and transcripts; binary blobs and conflict
    # copies would only add noise.
    # The deletion log is not indexed either: its lines are what must not be found.
    return (path.endswith((".md", ".txt", ".markdown")) and ".conflict-" not in path
            and not path.startswith(FORGET_DIR))


def download_index(store: ObjectStore, dest: Path) -> bool:
    """Fetch the bucket's index to ``dest`` when it changed; False when there is none."""
    stamp = dest.with_suffix(".etag")
    try:
        info = store.head(INDEX_KEY)
    except NoSuchKey:
        return False
    if dest.exists() and stamp.exists() and stamp.read_text() == info.etag:
        return True
    data, etag = store.get(INDEX_KEY)
    tmp = dest.with_suffix(".download")
    tmp.write_bytes(data)
    for side in ("-wal", "-shm"):
        Path(str(dest) + side).unlink(missing_ok=True)
    os.replace(tmp, dest)
    stamp.write_text(etag)
    return True


def build_index(store: ObjectStore, local: Path, embedder: Embedder | None,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """Refresh the index of the whole corpus and upload it (``brainfs index``). The caller
    rebuilds the preload pack if it wants it in step: that is the working set's, not the
    index's."""
    download_index(store, local)
    objects = list(store.list())
    listing = [(o.path, o.etag) for o in objects
               if not is_internal(o.path) and is_indexable(o.path)]
    requests = [o.path for o in objects if is_forget_request(o.path)]
    phrases: list[str] = []
    for path in requests:
        phrases += request_phrases(store.get(path)[0].decode("utf-8", "replace"))
    idx = SearchIndex(local)
    try:
        # First, so that no forgotten chunk is written by this refresh either.
        forgotten = idx.forget(phrases)
        known = idx.file_hashes()
        changed = [p for p, h in listing if known.get(p) != h]
        contents: dict[str, bytes] = {}

        def got(path: str, data: bytes | None, etag: str, err: BackendError | None) -> None:
            if data is not None:
                contents[path] = data
            else:
                log.warning("index: cannot read %s: %s", path, err)

        store.get_many(changed, got)

        def read(path: str) -> bytes:
            if path not in contents:
                raise OSError(f"{path} could not be fetched")
            return contents.pop(path)

        stats = idx.refresh(listing, read, embedder, progress)
        stats.update(idx.stats())
        stats["forgotten_chunks"] = forgotten
    finally:
        idx.close()
    data = local.read_bytes()
    store.put(INDEX_KEY, data)
    local.with_suffix(".etag").unlink(missing_ok=True)
    stats["index_bytes"] = len(data)
    stats["files_listed"] = len(listing)
    return stats


class Recaller:
    """Queries against a local copy of the index; the embedder loads on first use."""

    def __init__(self, index_path: Path, cfg: Config) -> None:
        self.index_path = index_path
        self.cfg = cfg
        self._index: SearchIndex | None = None
        self._embedder: Embedder | None = None
        self._embedder_error: str | None = None
        self._lock = threading.Lock()

    @property
    def index(self) -> SearchIndex:
        """The open index (opened lazily)."""
        if self._index is None:
            self._index = SearchIndex(self.index_path)
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
                    self._embedder = load_embedder(self.cfg.embedder)
                    log.info("embedding model loaded in %.1fs", time.monotonic() - t0)
                except EmbedderUnavailable as e:
                    self._embedder_error = str(e)
                    log.warning("recall without embeddings: %s", e)
            return self._embedder

    def search(self, query: str, k: int | None = None) -> RecallResult:
        """Hybrid recall (blocking: run it in a worker thread from an event loop)."""
        with self._lock:
            idx = self.index
        return recall(idx, query, k=k or self.cfg.recall_k, embedder=self.embedder(),
                      stale_days=self.cfg.stale_days)

    def upsert(self, path: str, etag: str, data: bytes) -> None:
        """Index one file written through the mount."""
        if is_indexable(path):
            self.index.upsert_file(path, etag, data, self.embedder())

    def remove(self, path: str) -> None:
        """Drop a deleted file from the index."""
        self.index.remove_file(path)

    def close(self) -> None:
        """Close the index."""
        if self._index is not None:
            self._index.close()


def files_for(result: RecallResult, read_local: Callable[[str], bytes | None],
              follow_citations: bool = True) -> list[str]:
    """The corpus paths a recall should materialize: the files behind the hits and, for
    wiki pages that are local, the transcripts their ``[cite:N]`` point to."""
    paths = list(dict.fromkeys(c.path for c in result.cards))
    if follow_citations:
        for p in list(paths):
            if p.startswith("knowledge/"):
                text = read_local(p)
                if text:
                    paths.extend(s for s in cited_sources(text) if s not in paths)
    return paths
