"""Writes to the index: one file's chunks (with its page names and statements) replaced
in one transaction, a file removed, chunks the deletion log forgets dropped."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import TYPE_CHECKING

import apsw

from .chunker import Chunk, chunk_file, decode, embed_texts, path_kind, split_frontmatter
from .dates import annotate
from .embedcache import with_cache
from .forget import forgotten_by
from .indexschema import FTS_TABLES
from .validity import statements_of

if TYPE_CHECKING:
    import numpy as np

    from .embedder import Embedder

# The index's parts log under the index's name, as one module did before.
log = logging.getLogger("brainfs.cache.search.index")


def index_chunks(path: str, text: str) -> list[Chunk]:
    """The chunks the index stores for a file: the chunker's, with a dated turn's relative
    dates resolved into its text (``cache.dates``)."""
    return annotate(chunk_file(path, text))


def page_names(path: str, text: str) -> list[str]:
    """The names a knowledge page's subject goes by: frontmatter ``title`` and ``aliases``
    (a list or a comma-separated string); [] for any other file. Never raises."""
    if path_kind(path) != "page":
        return []
    try:
        meta, _body, _bad = split_frontmatter(decode(text))
    except Exception:  # noqa: BLE001
        return []
    meta = meta or {}
    raw = meta.get("aliases") or []
    if isinstance(raw, str):
        raw = raw.split(",")
    names = [meta.get("title"), *(raw if isinstance(raw, list) else [])]
    out: list[str] = []
    for n in names:
        if isinstance(n, (str, int)) and str(n).strip() and len(str(n)) <= 80:
            n = " ".join(str(n).split())
            if n.lower() not in (x.lower() for x in out):
                out.append(n)
    return out if len(out) > 1 else []


def cached_embedder(embedder: Embedder) -> Embedder:
    """``embedder`` behind the per-user cache of vectors by text hash (``cache.embedcache``;
    ``BRAINFS_EMBED_CACHE=off`` disables it): a grown transcript or a rewritten page embeds
    only its new chunks."""
    return with_cache(embedder)


class WritesMixin:
    """The writing part of :class:`~.index.SearchIndex` (its schema checked and its vector
    table prepared by :class:`~.indexschema.SchemaMixin`)."""

    conn: apsw.Connection
    vec_error: str | None
    forget_phrases: list[str]
    _lock: threading.RLock
    _writes: int
    _names: dict[str, list[str]]
    _stmts: dict[str, list[tuple[str, str]]]

    def remove_file(self, path: str) -> bool:
        """Drop a file and its chunks (FTS follows by trigger). True if it was indexed."""
        with self._lock, self.conn:
            existed = self._delete_chunks([path])
            n = self.conn.execute("DELETE FROM files WHERE path = ? RETURNING path", (path,)).fetchall()
        self._writes += 1
        return bool(n) or existed

    def _delete_chunks(self, paths: list[str]) -> bool:
        """Delete chunks (and their vectors) of ``paths``; call inside a transaction."""
        found = False
        vec_ok = self.vec_error is None and self._table_exists("chunks_vec")
        for path in paths:
            ids = [r[0] for r in self.conn.execute(
                "SELECT id FROM chunks WHERE path = ? AND vec = 1", (path,)).fetchall()]
            if ids and vec_ok:
                self.conn.executemany("DELETE FROM chunks_vec WHERE rowid = ?", [(i,) for i in ids])
            cur = self.conn.execute("DELETE FROM chunks WHERE path = ? RETURNING id", (path,)).fetchall()
            found = found or bool(cur)
            self.conn.execute("DELETE FROM aliases WHERE path = ?", (path,))
            if self._table_exists("statements"):
                self.conn.execute("DELETE FROM statements WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM files_fts WHERE path = ?", (path,))
        return found

    def upsert_file(self, path: str, hash: str, text: str | bytes,
                    embedder: Embedder | None = None) -> int:
        """(Re)index one file from its text; returns the number of chunks written."""
        chunks = index_chunks(path, decode(text))
        self._names[path] = page_names(path, text)
        self._stmts[path] = statements_of(path, decode(text))
        use_vec = embedder is not None and self._prepare_vectors(embedder)
        vectors = None
        if use_vec and chunks:
            try:
                vectors = cached_embedder(embedder).embed(embed_texts(chunks))  # type: ignore[arg-type]
            except Exception as e:  # noqa: BLE001 - keep the FTS part; vectors fill later
                log.warning("embedding %s failed: %s", path, e)
        self._write_batch([(path, hash, chunks)], vectors)
        return len(chunks)

    def forget(self, phrases: list[str]) -> int:
        """Drop every chunk that contains one of the deletion log's ``phrases``, and keep
        such chunks out of later writes; returns how many were dropped."""
        self.forget_phrases = list(phrases)
        if not phrases:
            return 0
        with self._lock:
            hit = [(cid, path) for cid, path, text
                   in self.conn.execute("SELECT id, path, text FROM chunks").fetchall()
                   if forgotten_by(text, self.forget_phrases)]
            ids = [cid for cid, _ in hit]
            if ids:
                vec_ok = self.vec_error is None and self._table_exists("chunks_vec")
                with self.conn:
                    if vec_ok:
                        self.conn.executemany("DELETE FROM chunks_vec WHERE rowid = ?", [(i,) for i in ids])
                    self.conn.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in ids])
                    # A file's whole-text row is its kept chunks: written again without them.
                    for path in sorted({p for _, p in hit}):
                        self.conn.execute("DELETE FROM files_fts WHERE path = ?", (path,))
                        kept = [t for (t,) in self.conn.execute(
                            "SELECT text FROM chunks WHERE path = ? ORDER BY ordinal", (path,))]
                        if kept:
                            self.conn.execute("INSERT INTO files_fts(path, body) VALUES (?, ?)",
                                              (path, "\n".join(kept)))
                    # FTS5 keeps deleted terms in its segments until they are merged.
                    for table in FTS_TABLES:
                        if self._table_exists(table):
                            self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
                self._writes += 1
        return len(ids)

    def _write_batch(self, files: list[tuple[str, str, list[Chunk]]], vectors: np.ndarray | None) -> None:
        """Replace the chunks of ``files`` in one transaction; ``vectors`` (if any) are
        aligned with the concatenated chunk lists. Chunks the deletion log forgets are
        not written."""
        now = time.time()
        with self._lock:
            self._ensure_fts_ready()
            with self.conn:
                self._delete_chunks([f[0] for f in files])
                row = 0
                vec_rows: list[tuple[int, bytes]] = []
                for path, hash_, chunks in files:
                    for c in chunks:
                        if self.forget_phrases and forgotten_by(c.text, self.forget_phrases):
                            row += 1
                            continue
                        has_vec = vectors is not None
                        cid = self.conn.execute(
                            "INSERT INTO chunks(path, anchor, kind, scope, confidence, created, "
                            "updated, title, heading, speaker, text, ordinal, vec, cites) "
                            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                            (c.path, c.anchor, c.kind, c.scope, float(c.confidence), c.created,
                             c.updated, c.title, c.heading, c.speaker, c.text, c.ordinal,
                             1 if has_vec else 0,
                             json.dumps(c.cites, sort_keys=True) if c.cites else None)).fetchall()[0][0]
                        if has_vec:
                            vec_rows.append((cid, vectors[row].astype("float32").tobytes()))
                        row += 1
                    self.conn.execute(
                        "INSERT OR REPLACE INTO files(path, hash, indexed_at) VALUES (?,?,?)",
                        (path, hash_, now))
                    kept = [c.text for c in chunks
                            if not (self.forget_phrases and forgotten_by(c.text, self.forget_phrases))]
                    if kept:
                        self.conn.execute("INSERT INTO files_fts(path, body) VALUES (?, ?)",
                                          (path, "\n".join(kept)))
                    names = self._names.pop(path, [])
                    if names:
                        self.conn.executemany("INSERT INTO aliases(path, name) VALUES (?, ?)",
                                              [(path, n) for n in names])
                    stmts = self._stmts.pop(path, [])
                    if stmts:
                        self.conn.executemany(
                            "INSERT INTO statements(path, anchor, data) VALUES (?, ?, ?)",
                            [(path, a, d) for a, d in stmts])
                if vec_rows:
                    self.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", vec_rows)
            self._writes += 1

    def _ensure_fts_ready(self) -> None:
        if not self._table_exists("chunks_fts"):
            self._ensure_schema()
