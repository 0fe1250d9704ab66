"""Refreshing the index from a corpus: only the files whose content hash changed are read,
chunked, embedded and written — serially, or (the default) with reading, embedding and
writing in threads of their own so that the model never waits for a read or a write."""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

import apsw

from .chunker import Chunk, decode, embed_text, embed_texts
from .embedder import PendingEmbedder
from .indexschema import SCHEMA_VERSION
from .indexwrites import cached_embedder, index_chunks, page_names
from .validity import statements_of

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from .embedder import Embedder

# The index's parts log under the index's name, as one module did before.
log = logging.getLogger("brainfs.cache.search.index")

#: Chunks per embedding call and per write transaction: big enough to keep the model busy,
#: small enough that progress is visible and a crash loses little work.
EMBED_BATCH = 256
#: Batches waiting between the stages of a pipelined refresh (read → embed → write): two
#: let the reader and the writer finish a batch while the model embeds the next.
PIPELINE_DEPTH = 2


class RefreshMixin:
    """The refreshing part of :class:`~.index.SearchIndex` (it writes with
    :class:`~.indexwrites.WritesMixin`)."""

    conn: apsw.Connection
    db_path: Path
    vec_error: str | None
    _lock: threading.RLock
    _writes: int
    _names: dict[str, list[str]]
    _stmts: dict[str, list[tuple[str, str]]]

    def refresh(self, files: Iterable[tuple[str, str]], read: Callable[[str], bytes],
                embedder: Embedder | PendingEmbedder | None,
                progress: Callable[[int, int], None] | None = None,
                pipeline: bool = True, on_read: Callable[[], None] | None = None) -> dict[str, Any]:
        """Bring the index in line with the corpus ``files`` = (path, content hash) pairs.

        Only files whose hash changed are read (with ``read(path)``), re-chunked and
        re-embedded; indexed files absent from ``files`` are removed; chunks still missing a
        vector (an earlier build without embedder) are embedded when ``embedder`` is given
        (it may still be loading: :class:`~.embedder.PendingEmbedder`, waited for when the
        first batch is ready). Without an embedder only FTS is built. A file whose read
        fails is skipped and keeps its previous entry (retried next refresh).

        ``pipeline`` (the default) reads and chunks files, embeds, and writes in three
        threads joined by short queues, so that the model is never idle waiting for a read
        or a write; the rows and vectors written are those of the serial build
        (``pipeline=False``), in the same order. ``on_read`` is called once every file
        has been read and chunked (the embedding and writing of the last batches may still
        run): a caller refreshing several indexes starts reading the next one then, so
        that the model goes from one to the next without waiting. Returns stats:
        files_indexed, chunks,
        skipped (unchanged), removed, failed, embedded, seconds, chunks_per_s, and where
        the time went (``*_seconds``).
        """
        t0 = time.perf_counter()
        current = dict(files)
        known, old_format = self._known_hashes(len(current))
        removed = [p for p in known if p not in current]
        todo = sorted(p for p, h in current.items() if known.get(p) != h)
        stats = _RefreshStats(skipped=len(current) - len(todo))
        for p in removed:
            self.remove_file(p)
            stats.removed += 1
        if pipeline:
            emb = self._refresh_pipelined(todo, current, read, embedder, stats, progress, on_read)
        else:
            batches = _Batches(self, self._vector_embedder(self._resolve(embedder, stats), stats), stats)
            for i, path in enumerate(todo):
                chunks = self._read_chunks(path, read, stats)
                if chunks is None:
                    continue
                batches.add(path, current[path], chunks)
                if progress:
                    progress(i + 1, len(todo))
            if on_read:
                on_read()
            batches.flush()
            emb = batches.embedder
        if emb is not None:
            stats.embedded += self._fill_missing_vectors(emb)
            stats.embed_cache_hits = getattr(emb, "hits", 0)
        if old_format and not stats.failed:
            with self._lock, self.conn:
                self._set_meta("schema_version", str(SCHEMA_VERSION))
        return stats.to_dict(time.perf_counter() - t0)

    def _known_hashes(self, n_files: int) -> tuple[dict[str, str], bool]:
        """Indexed path → content hash, and whether the index is of an older format (then
        every hash is blanked: each file is read and embedded again, once)."""
        known = self.file_hashes()
        old_format = int(self.meta("schema_version") or SCHEMA_VERSION) < SCHEMA_VERSION
        if old_format:
            log.warning("%s: updating the index from format %s to %s: re-reading and "
                        "re-embedding all %d files once", self.db_path,
                        self.meta("schema_version"), SCHEMA_VERSION, n_files)
            known = {p: "" for p in known}
        return known, old_format

    @staticmethod
    def _resolve(embedder: Embedder | PendingEmbedder | None, stats: _RefreshStats) -> Embedder | None:
        """The embedder, once loaded (the time waited for it noted in ``stats``)."""
        if not isinstance(embedder, PendingEmbedder):
            return embedder
        t = time.perf_counter()
        try:
            return embedder.result()
        finally:
            stats.model_wait_seconds += time.perf_counter() - t

    def _refresh_pipelined(self, todo: list[str], current: dict[str, str],
                           read: Callable[[str], bytes], embedder: Embedder | PendingEmbedder | None,
                           stats: _RefreshStats, progress: Callable[[int, int], None] | None,
                           on_read: Callable[[], None] | None = None) -> Embedder | None:
        """Write the chunks of ``todo`` (and their vectors), the way the serial loop of
        :meth:`refresh` does, with reading and embedding in threads of their own; returns
        the embedder vectors were made with (None: none, or it failed).

        A reader thread reads and chunks files into batches of ``EMBED_BATCH`` chunks, an
        embedding thread turns each batch into vectors, and the calling thread writes them
        in the order read (so chunk ids are the serial build's). Each queue holds at most
        ``PIPELINE_DEPTH`` batches: memory stays at a few batches whatever the corpus. An
        exception in a thread stops the others and is raised here; so is an interrupt."""
        return _Pipeline(self, todo, current, read, embedder, stats, progress, on_read).run()

    def _vector_embedder(self, embedder: Embedder | None, stats: _RefreshStats) -> Embedder | None:
        """The embedder to make vectors with (memoised), or None when there is none or the
        vector table cannot take its vectors (said in ``stats.embed_error``)."""
        if embedder is None:
            return None
        if not self._prepare_vectors(embedder):
            stats.embed_error = self.vec_error
            return None
        return cached_embedder(embedder)  # texts embedded before are not embedded again

    def _read_chunks(self, path: str, read: Callable[[str], bytes],
                     stats: _RefreshStats) -> list[Chunk] | None:
        """One file's chunks (its page names noted for the alias table); None when it
        cannot be read."""
        t = time.perf_counter()
        try:
            data = read(path)
        except Exception as e:  # noqa: BLE001 - one unreadable file must not stop the rest
            log.warning("cannot read %s for indexing: %s", path, e)
            stats.failed += 1
            return None
        finally:
            stats.read_wait_seconds += time.perf_counter() - t
        t = time.perf_counter()
        text = decode(data if data is not None else b"")
        chunks = index_chunks(path, text)
        self._names[path] = page_names(path, text)
        self._stmts[path] = statements_of(path, text)
        stats.chunk_seconds += time.perf_counter() - t
        return chunks

    def _fill_missing_vectors(self, embedder: Embedder) -> int:
        """Embed chunks whose vector is missing; returns how many were embedded."""
        done = 0
        while True:
            with self._lock:
                # The previous turn of the same file is the context a turn is embedded
                # with (see chunker.embed_text); fetch it alongside.
                rows = self.conn.execute(
                    "SELECT c.id, c.kind, c.title, c.heading, c.speaker, c.text, "
                    "CASE WHEN c.kind = 'turn' AND p.kind = 'turn' THEN p.text END "
                    "FROM chunks c LEFT JOIN chunks p ON p.path = c.path AND p.ordinal = c.ordinal - 1 "
                    "WHERE c.vec = 0 ORDER BY c.id LIMIT ?", (EMBED_BATCH,)).fetchall()
            if not rows:
                return done
            items = [dict(zip(("id", "kind", "title", "heading", "speaker", "text", "previous"), r))
                     for r in rows]
            try:
                vecs = embedder.embed([embed_text(it, it["previous"]) for it in items])
            except Exception as e:  # noqa: BLE001
                log.warning("embedding failed while filling vectors: %s", e)
                return done
            with self._lock, self.conn:
                self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                                      [(it["id"], vecs[j].astype("float32").tobytes())
                                       for j, it in enumerate(items)])
                self.conn.executemany("UPDATE chunks SET vec = 1 WHERE id = ?", [(it["id"],) for it in items])
            self._writes += 1
            done += len(items)


@dataclass
class _RefreshStats:
    """What one :meth:`~.index.SearchIndex.refresh` did (returned as a dict by :meth:`to_dict`)."""

    files_indexed: int = 0
    chunks: int = 0
    skipped: int = 0
    removed: int = 0
    failed: int = 0
    embedded: int = 0
    embed_error: str | None = None
    #: texts the embedding memo answered (reported only when vectors were made)
    embed_cache_hits: int | None = None
    embed_seconds: float = 0.0
    #: where the rest of the time went: waiting for a file's bytes, chunking, writing,
    #: waiting for the model to load, and the model waiting for chunks (pipelined build)
    read_wait_seconds: float = 0.0
    chunk_seconds: float = 0.0
    write_seconds: float = 0.0
    model_wait_seconds: float = 0.0
    embed_idle_seconds: float = 0.0
    #: waiting for another refresh's model call to end (two parts overlap)
    turn_wait_seconds: float = 0.0

    def to_dict(self, secs: float) -> dict[str, Any]:
        """The stats as refresh returns them, with the run's ``secs``."""
        out: dict[str, Any] = {"files_indexed": self.files_indexed, "chunks": self.chunks,
                               "skipped": self.skipped, "removed": self.removed,
                               "failed": self.failed, "embedded": self.embedded,
                               "embed_error": self.embed_error}
        if self.embed_cache_hits is not None:
            out["embed_cache_hits"] = self.embed_cache_hits
        out["seconds"] = round(secs, 3)
        out["embed_seconds"] = round(self.embed_seconds, 3)
        for k in TIMING_KEYS:
            out[k] = round(getattr(self, k), 3)
        out["chunks_per_s"] = round(self.chunks / secs, 1) if secs > 0 and self.chunks else 0.0
        return out


#: The time spent per stage of a refresh, as its stats name them (besides embed_seconds).
TIMING_KEYS = ("read_wait_seconds", "chunk_seconds", "write_seconds", "model_wait_seconds",
               "embed_idle_seconds", "turn_wait_seconds")
#: One model call at a time among the pipelined refreshes of a process (the embedders
#: serialise their calls anyway; this one lets a refresh time its wait apart).
_MODEL_TURN = threading.Lock()


class _Failed:
    """An exception raised in a thread of the pipelined refresh, carried to the caller."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Batches:
    """Files waiting to be embedded and written, in batches of about ``EMBED_BATCH``
    chunks; an embedding failure drops vectors for the rest of the refresh (FTS only)."""

    def __init__(self, index: RefreshMixin, embedder: Embedder | None, stats: _RefreshStats) -> None:
        self.index, self.embedder, self.stats = index, embedder, stats
        self.pending: list[tuple[str, str, list[Chunk]]] = []
        self.pending_n = 0

    def add(self, path: str, hash_: str, chunks: list[Chunk]) -> None:
        """Queue one file's chunks; write the batch when it is full."""
        self.pending.append((path, hash_, chunks))
        self.pending_n += len(chunks)
        if self.pending_n >= EMBED_BATCH or len(self.pending) >= EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        """Embed (when vectors are made) and write the queued files in one transaction."""
        if not self.pending:
            return
        vectors = None
        all_chunks = [c for _, _, cs in self.pending for c in cs]
        if self.embedder is not None and all_chunks:
            te = time.perf_counter()
            try:
                texts = [t for _, _, cs in self.pending for t in embed_texts(cs)]
                vectors = self.embedder.embed(texts)
                self.stats.embedded += len(all_chunks)
            except Exception as e:  # noqa: BLE001 - degrade to FTS-only, say so
                log.warning("embedding failed, continuing without vectors: %s", e)
                self.stats.embed_error = str(e)
                self.embedder = None
            self.stats.embed_seconds += time.perf_counter() - te
        self.index._write_batch(self.pending, vectors)
        self.stats.files_indexed += len(self.pending)
        self.stats.chunks += len(all_chunks)
        self.pending, self.pending_n = [], 0


class _Pipeline:
    """One pipelined build (:meth:`RefreshMixin._refresh_pipelined`): a reader thread and an
    embedding thread joined to the calling thread, which writes, by queues of at most
    ``PIPELINE_DEPTH`` batches; an exception in a thread stops the others."""

    def __init__(self, index: RefreshMixin, todo: list[str], current: dict[str, str],
                 read: Callable[[str], bytes], embedder: Embedder | PendingEmbedder | None,
                 stats: _RefreshStats, progress: Callable[[int, int], None] | None,
                 on_read: Callable[[], None] | None) -> None:
        self.index, self.todo, self.current, self.read = index, todo, current, read
        self.embedder, self.stats, self.progress, self.on_read = embedder, stats, progress, on_read
        self.to_embed: queue.Queue = queue.Queue(maxsize=PIPELINE_DEPTH)
        self.to_write: queue.Queue = queue.Queue(maxsize=PIPELINE_DEPTH)
        self.stop = threading.Event()
        self.want_vectors = embedder is not None
        #: the embedder vectors are made with, once loaded (None: none, or it failed)
        self.made_with: Embedder | None = None

    def run(self) -> Embedder | None:
        """Build, raising here what a thread raised; returns the embedder vectors were made
        with (None: none, or it failed)."""
        threads = [threading.Thread(target=self._reader, name="brainfs-index-read", daemon=True),
                   threading.Thread(target=self._embedding, name="brainfs-index-embed", daemon=True)]
        for th in threads:
            th.start()
        try:
            self._write_all()
        finally:
            self.stop.set()
        for th in threads:
            th.join()
        if self.todo and self.progress:
            self.progress(len(self.todo), len(self.todo))
        return self.made_with

    def _put(self, q: queue.Queue, item: object) -> bool:
        while not self.stop.is_set():
            try:
                q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _get(self, q: queue.Queue) -> object:
        while not self.stop.is_set():
            try:
                return q.get(timeout=0.2)
            except queue.Empty:
                continue
        return None

    def _reader(self) -> None:
        """Read and chunk the files into batches of about ``EMBED_BATCH`` chunks, with the
        texts to embed."""
        stats, todo = self.stats, self.todo
        try:
            pending: list[tuple[str, str, list[Chunk]]] = []
            n = 0
            for i, path in enumerate(todo):
                if self.stop.is_set():
                    return
                chunks = self.index._read_chunks(path, self.read, stats)
                if chunks is not None:
                    pending.append((path, self.current[path], chunks))
                    n += len(chunks)
                if pending and (n >= EMBED_BATCH or len(pending) >= EMBED_BATCH
                                or i == len(todo) - 1):
                    t = time.perf_counter()
                    texts = [x for _, _, cs in pending for x in embed_texts(cs)] if self.want_vectors else []
                    stats.chunk_seconds += time.perf_counter() - t
                    if not self._put(self.to_embed, (pending, texts, i + 1)):
                        return
                    pending, n = [], 0
            self._put(self.to_embed, None)
            if self.on_read:
                self.on_read()
        except BaseException as e:  # noqa: BLE001 - raised in the calling thread
            self._put(self.to_embed, _Failed(e))

    def _embedding(self) -> None:
        """Turn each batch into vectors, in the order read (the model waited for first)."""
        stats = self.stats
        resolved = False
        try:
            while True:
                t = time.perf_counter()
                item = self._get(self.to_embed)
                stats.embed_idle_seconds += time.perf_counter() - t
                if isinstance(item, _Failed) or self.stop.is_set():
                    self._put(self.to_write, item)
                    return
                if not resolved:  # also with nothing to embed: missing vectors are filled
                    self.made_with = self.index._vector_embedder(
                        self.index._resolve(self.embedder, stats), stats)
                    resolved = True
                if item is None:
                    self._put(self.to_write, None)
                    return
                pending, texts, upto = item  # type: ignore[misc]
                vectors = self._embed(texts) if self.made_with is not None and texts else None
                if not self._put(self.to_write, (pending, vectors, upto)):
                    return
        except BaseException as e:  # noqa: BLE001 - raised in the calling thread
            self._put(self.to_write, _Failed(e))

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        """One batch's vectors, one model call at a time in the process; None when the model
        fails (the rest of the build then goes without vectors)."""
        stats = self.stats
        vectors = None
        t = time.perf_counter()
        with _MODEL_TURN:
            stats.turn_wait_seconds += time.perf_counter() - t
            t = time.perf_counter()
            try:
                vectors = self.made_with.embed(texts)  # type: ignore[union-attr]
                stats.embedded += len(texts)
            except Exception as e:  # noqa: BLE001 - degrade to FTS-only, say so
                log.warning("embedding failed, continuing without vectors: %s", e)
                stats.embed_error = str(e)
                self.made_with = None
            stats.embed_seconds += time.perf_counter() - t
        return vectors

    def _write_all(self) -> None:
        """Write the batches in the order read (so chunk ids are the serial build's)."""
        stats = self.stats
        while True:
            item = self.to_write.get()
            if item is None:
                break
            if isinstance(item, _Failed):
                raise item.error
            pending, vectors, upto = item
            t = time.perf_counter()
            self.index._write_batch(pending, vectors)
            stats.write_seconds += time.perf_counter() - t
            stats.files_indexed += len(pending)
            stats.chunks += sum(len(cs) for _, _, cs in pending)
            if self.progress:
                self.progress(upto, len(self.todo))
