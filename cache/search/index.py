"""The search index: one SQLite file (APSW) with a chunk catalog, FTS5 and sqlite-vec.

Layout (``SCHEMA_VERSION`` 5)::

    meta(key PK, value)            schema_version, embedder (name), dim
    files(path PK, hash, indexed_at)
        one row per indexed corpus file; ``hash`` is the caller's content hash (xxhash,
        ETag, …) and is only written in the same transaction as the file's chunks, so a
        crash never leaves a file marked indexed without its chunks.
    chunks(id INTEGER PK, path, anchor, kind, scope, confidence, created, updated, title,
           heading, speaker, text, ordinal, vec, cites)
        ``vec`` = 1 when chunks_vec holds this chunk's vector for the embedder named in
        meta; 0 = vector missing (indexed without an embedder, or embedding failed) — a
        later refresh with an embedder fills exactly these. ``cites``: the sources the
        chunk's ``[cite:N]`` markers name (``Chunk.cites``, JSON ``{"N": ref}``), NULL when
        it cites nothing.
    chunks_fts   FTS5 over (text, title, heading), external content = chunks, kept in step
                 by triggers; tokenizer ``porter unicode61 remove_diacritics 2``.
    chunks_vec   sqlite-vec ``vec0(embedding float[dim] distance_metric=cosine)``, rowid =
                 chunks.id; created when the first embedder is seen.
    aliases(path, name)
        the names a knowledge page's subject goes by (its title and frontmatter
        ``aliases:``), for query expansion (``retrieval``: "Mel" also searches "Melanie").
    statements(path, anchor, data)
        what a file says was replaced, and by what (``validity.statements_of``: each fact
        record of ``knowledge/.facts.jsonl``, a card's frontmatter, a page's ``##
        Superseded`` lines), JSON; recall reads it once per index state to rank what is
        true now first and mark the rest (``validity.Validity``).

Version 2 (issue 16) adds ``aliases`` and writes a dated turn's relative dates resolved
into its text (``cache.dates``: "… yesterday [yesterday: 7 May 2023]"). Version 3: those
notes follow the one set of date rules dream shares ("on Friday" read in the sentence's
tense, "the day before yesterday", "in two weeks", "the past week" = the seven days before).
An older index stays readable — recall works, with the notes it has — and says so once; the
next refresh (``brainfs index``, a dream run) re-reads every file to bring it to the
current version, and logs that it does. Version 4 adds ``statements`` and indexes the fact
records (one chunk of kind ``fact`` per record). Version 5 adds ``chunks.cites`` (recall
leaves a wiki line to the turns it cites when it returns them too); an index of an earlier
version gets the column, empty, when opened.

Dense search. Measured on this machine (2 CPUs) over 100,000 × 384-d unit vectors, top-50:
``vec0`` KNN ≈ 70 ms per query, numpy brute force over a cached float32 matrix ≈ 9 ms idle,
15 ms under load (loading the matrix from vec0 once ≈ 0.8 s, redone lazily after writes;
``benchmarks/locomo_eval.py --dense-bench 100000`` reproduces it). So numpy is the
default and vec0 KNN is kept as the fallback when the codes would exceed
``NUMPY_MAX_BYTES`` (about 1.3M chunks) or numpy is unavailable. The matrix is held as int8
codes, a quarter of float32's memory, and searched with the float32 vectors' exact result
(``int8vectors``: the best candidates are scored again from the file).

Threading: an instance owns one APSW connection; calls are serialised by a lock, so it may
be shared by worker threads, but each call blocks — never call it on the trio thread.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import apsw

from .chunker import Chunk, chunk_file, decode, embed_text, embed_texts, path_kind, split_frontmatter
from .dates import annotate
from .forget import forgotten_by
from .validity import Validity, statements_of

if TYPE_CHECKING:
    import numpy as np

    from .embedder import Embedder, PendingEmbedder
    from .int8vectors import FloatRows, Int8Vectors

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5
#: Chunks per embedding call and per write transaction: big enough to keep the model busy,
#: small enough that progress is visible and a crash loses little work.
EMBED_BATCH = 256
#: Batches waiting between the stages of a pipelined refresh (read → embed → write): two
#: let the reader and the writer finish a batch while the model embeds the next.
PIPELINE_DEPTH = 2
#: Above this many bytes of int8 codes in memory (a byte per component), dense search uses
#: vec0 KNN instead.
NUMPY_MAX_BYTES = 512 * 1024 * 1024
#: Vectors read from the file at a time when they are loaded (1.5 MB of float32 at 384-d).
VECTOR_BLOCK = 1024
#: SQLite's page cache while the vectors are read (KiB): more than one of vec0's blobs.
VECTOR_SCAN_CACHE_KIB = 4096
#: BM25 column weights (text, title, heading): a title word names the subject of the whole
#: page, so it counts, but less than the passage's own words — otherwise every chunk of a
#: page would tie on a title match.
BM25_WEIGHTS = (1.0, 0.5, 0.5)
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

_CHUNK_COLS = ("id", "path", "anchor", "kind", "scope", "confidence", "created", "updated",
               "title", "heading", "speaker", "text", "ordinal", "cites")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    indexed_at REAL NOT NULL          -- unix time of the transaction that wrote it
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    anchor TEXT NOT NULL,             -- '' = the file's preamble (cite the path alone)
    kind TEXT NOT NULL,
    scope TEXT,                       -- NULL = no scope given
    confidence REAL NOT NULL,
    created TEXT,                     -- ISO 8601 or NULL = unknown
    updated TEXT,                     -- ISO 8601 or NULL = unknown
    title TEXT,
    heading TEXT,
    speaker TEXT,                     -- turns only
    text TEXT NOT NULL,
    ordinal INTEGER NOT NULL,         -- position in the file
    vec INTEGER NOT NULL DEFAULT 0,   -- 1 = vector present in chunks_vec, 0 = missing
    cites TEXT                        -- JSON {"N": ref} of the chunk's [cite:N], NULL = none
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, ordinal);
CREATE INDEX IF NOT EXISTS chunks_updated ON chunks(updated);
CREATE TABLE IF NOT EXISTS aliases(path TEXT NOT NULL, name TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_path ON aliases(path);
CREATE TABLE IF NOT EXISTS statements(path TEXT NOT NULL, anchor TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS statements_path ON statements(path);
"""


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

_FTS = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, title, heading, content='chunks', content_rowid='id', tokenize='{FTS_TOKENIZER}');
"""

#: One document per file (its chunks' texts joined) for file-level BM25: which session
#: talks about the question's subject as a whole, its words spread over several turns.
_FILES_FTS = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS files_fts USING fts5(
    path UNINDEXED, body, tokenize='{FTS_TOKENIZER}');
"""

_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, title, heading)
    VALUES (new.id, new.text, new.title, new.heading);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, heading)
    VALUES ('delete', old.id, old.text, old.title, old.heading);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF text, title, heading ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, heading)
    VALUES ('delete', old.id, old.text, old.title, old.heading);
    INSERT INTO chunks_fts(rowid, text, title, heading)
    VALUES (new.id, new.text, new.title, new.heading);
END;
"""


def _fts_matched(api: apsw.FTS5ExtensionApi) -> str:
    """FTS5 auxiliary function: comma-separated indexes of the query phrases this row
    matches (stemming included, since FTS5 did the matching)."""
    return ",".join(str(i) for i in range(api.phrase_count) if api.phrase_columns(i))


def _fts_bm25_parts(api: apsw.FTS5ExtensionApi, *weights: float) -> str:
    """FTS5 auxiliary function: what BM25 needs to score the current row with statistics
    gathered over several index parts (``sharded``): ``"<row tokens> <weighted occurrences
    of phrase 0> <of phrase 1> …"`` — the row's terms of FTS5's own ``bm25()``, whose
    table-wide figures differ from part to part."""
    out = [str(api.column_size(-1))]
    for i in range(api.phrase_count):
        f = 0.0
        for c, offsets in enumerate(api.phrase_locations(i)):
            if offsets:
                f += (weights[c] if c < len(weights) else 1.0) * len(offsets)
        out.append(repr(f))
    return " ".join(out)


def _varints(data: bytes) -> list[int]:
    """SQLite's big-endian varints (as FTS5 writes its averages record)."""
    out: list[int] = []
    i = 0
    while i < len(data):
        v = 0
        for j in range(9):
            b = data[i]
            i += 1
            if j == 8:
                v = (v << 8) | b
                break
            v = (v << 7) | (b & 0x7F)
            if not b & 0x80:
                break
        out.append(v)
    return out


#: The FTS5 tables and the column weights their ``rank`` uses (files_fts: bm25()'s default).
FTS_TABLES = {"chunks_fts": BM25_WEIGHTS, "files_fts": ()}


class SearchIndex:
    """Chunk catalog + FTS5 + vectors in one SQLite file. See the module docstring."""

    def __init__(self, db_path: Path | str, dense_backend: str = "numpy",
                 cache_kib: int | None = None) -> None:
        """Open (creating if needed) the index at ``db_path``; ``cache_kib``: SQLite's page
        cache for this connection (default: SQLite's, 2 MB)."""
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = apsw.Connection(str(self.db_path))
        self.conn.set_busy_timeout(5000)
        self._lock = threading.RLock()
        self.dense_backend = dense_backend
        self.vec_error: str | None = None
        self._matrix: tuple[Any, Int8Vectors] | None = None  # (version key, codes)
        #: the float32 rows behind the codes (a temporary file), and the codes' rows by id
        self._floats: FloatRows | None = None
        self._row_of: Any = None
        self._centroids: tuple[Any, list[str], Any] | None = None  # (version key, paths, unit means)
        self._writes = 0
        #: the deletion log's phrases: chunks containing one are never indexed (see forget)
        self.forget_phrases: list[str] = []
        #: page names read by refresh/upsert, written with the file's chunks
        self._names: dict[str, list[str]] = {}
        #: statements read by refresh/upsert, written with the file's chunks
        self._stmts: dict[str, list[tuple[str, str]]] = {}
        self._validity: tuple[int, Validity] | None = None
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        # A forgotten chunk's bytes must not stay readable in the file's free pages.
        self.conn.execute("PRAGMA secure_delete=ON")
        self._cache_kib = cache_kib
        if cache_kib is not None:
            self.conn.execute(f"PRAGMA cache_size = {-int(cache_kib)}")
        self._load_vec()
        self.conn.register_fts5_function("bfs_matched", _fts_matched)
        self.conn.register_fts5_function("bfs_bm25_parts", _fts_bm25_parts)
        self._ensure_schema()

    # ------------------------------------------------------------------ schema

    def _load_vec(self) -> None:
        """Load sqlite-vec lazily; a failure leaves the index usable for FTS only."""
        try:
            import sqlite_vec

            self.conn.enable_load_extension(True)
            self.conn.load_extension(sqlite_vec.loadable_path())
            self.conn.enable_load_extension(False)
        except Exception as e:  # noqa: BLE001 - ImportError, apsw.ExtensionLoadingError, …
            self.vec_error = f"sqlite-vec unavailable ({e}); dense search disabled"
            log.warning(self.vec_error)

    def _table_exists(self, name: str) -> bool:
        return bool(self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table','view')",
            (name,)).fetchall())

    def _ensure_schema(self) -> None:
        """Create missing parts; rebuild FTS if its table was lost (self-repair)."""
        with self._lock, self.conn:
            self.conn.execute(_SCHEMA)
            if "cites" not in {r[1] for r in self.conn.execute("PRAGMA table_info(chunks)")}:
                # format < 5: the column, empty until the next refresh re-reads the files
                try:
                    self.conn.execute("ALTER TABLE chunks ADD COLUMN cites TEXT")
                except apsw.SQLError as e:
                    if "duplicate column" not in str(e):  # another process added it first
                        raise
            fts_missing = not self._table_exists("chunks_fts")
            self.conn.execute(_FTS)
            self.conn.execute(_TRIGGERS)
            self.conn.execute(_FILES_FTS)
            if fts_missing:
                self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
            # The column weights live in FTS5's persistent config ('rank'), so ORDER BY rank
            # uses them; written only when different, so a plain open stays read-only.
            rank = f"bm25({', '.join(map(str, BM25_WEIGHTS))})"
            have = self.conn.execute("SELECT v FROM chunks_fts_config WHERE k = 'rank'").fetchall()
            if not have or have[0][0] != rank:
                self.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', ?)", (rank,))
            version = self.meta("schema_version")
            has_files = bool(self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchall())
            if version is None or not has_files:
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            elif int(version) < SCHEMA_VERSION:
                log.warning("%s: index format %s predates resolved dates as now written (format %s); "
                            "recall reads it as it is, and the next refresh (brainfs index) "
                            "re-reads every file to update it", self.db_path, version, SCHEMA_VERSION)
            # A vector table that exists without the extension loaded cannot be read; one
            # that was dropped means no vector is present any more.
            if self.meta("embedder") and not self._table_exists("chunks_vec") and self.vec_error is None:
                self.conn.execute("UPDATE chunks SET vec = 0 WHERE vec = 1")
                self._set_meta("embedder", None)
                self._set_meta("dim", None)

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table, or None."""
        rows = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return rows[0][0] if rows else None

    def _set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def _prepare_vectors(self, embedder: Embedder) -> bool:
        """Make chunks_vec match ``embedder`` (name and dim); False if vectors cannot be used.

        A different embedder invalidates every stored vector: they live in another space.
        """
        if self.vec_error:
            return False
        name, dim = embedder.name, int(embedder.dim)
        with self._lock, self.conn:
            if self._table_exists("chunks_vec") and (self.meta("embedder") != name
                                                     or self.meta("dim") != str(dim)):
                log.info("embedder changed (%s → %s): dropping stored vectors",
                         self.meta("embedder"), name)
                self.conn.execute("DROP TABLE chunks_vec")
                self.conn.execute("UPDATE chunks SET vec = 0 WHERE vec = 1")
            if not self._table_exists("chunks_vec"):
                self.conn.execute("UPDATE chunks SET vec = 0 WHERE vec = 1")
                self.conn.execute(
                    f"CREATE VIRTUAL TABLE chunks_vec USING vec0("
                    f"embedding float[{dim}] distance_metric=cosine)")
            self._set_meta("embedder", name)
            self._set_meta("dim", str(dim))
        self._writes += 1
        return True

    # ------------------------------------------------------------------ state

    def has_fts(self) -> bool:
        """True when the FTS5 table exists and answers queries."""
        with self._lock:
            try:
                if not self._table_exists("chunks_fts"):
                    return False
                self.conn.execute("SELECT rowid FROM chunks_fts LIMIT 0").fetchall()
                return True
            except apsw.Error:
                return False

    def has_vectors(self) -> bool:
        """True when sqlite-vec is loaded, the vector table exists and holds vectors."""
        with self._lock:
            if self.vec_error or not self._table_exists("chunks_vec"):
                return False
            try:
                self.conn.execute("SELECT rowid FROM chunks_vec LIMIT 0").fetchall()
                return bool(self.conn.execute("SELECT 1 FROM chunks WHERE vec = 1 LIMIT 1").fetchall())
            except apsw.Error:
                return False

    def embedder_name(self) -> str | None:
        """Name of the embedder the stored vectors come from (None if no vectors)."""
        return self.meta("embedder")

    def stats(self) -> dict[str, Any]:
        """Counts and size, for ``brainfs status`` and benchmarks."""
        with self._lock:
            q = lambda sql: self.conn.execute(sql).fetchall()[0][0]  # noqa: E731
            size = sum(p.stat().st_size for p in self.db_path.parent.glob(self.db_path.name + "*")
                       if p.is_file())
            return {"files": q("SELECT count(*) FROM files"),
                    "chunks": q("SELECT count(*) FROM chunks"),
                    "vectors": q("SELECT count(*) FROM chunks WHERE vec = 1"),
                    "embedder": self.meta("embedder"), "bytes": size}

    def file_hashes(self) -> dict[str, str]:
        """path → hash of every indexed file."""
        with self._lock:
            return dict(self.conn.execute("SELECT path, hash FROM files").fetchall())

    # ------------------------------------------------------------------ writes

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
                vectors = _cached(embedder).embed(embed_texts(chunks))  # type: ignore[arg-type]
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
        from .embedder import PendingEmbedder

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
        import queue

        to_embed: queue.Queue = queue.Queue(maxsize=PIPELINE_DEPTH)
        to_write: queue.Queue = queue.Queue(maxsize=PIPELINE_DEPTH)
        stop = threading.Event()
        want_vectors = embedder is not None
        made_with: list[Embedder | None] = [None]

        def put(q: queue.Queue, item: object) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.2)
                    return True
                except queue.Full:
                    continue
            return False

        def reader() -> None:
            try:
                pending: list[tuple[str, str, list[Chunk]]] = []
                n = 0
                for i, path in enumerate(todo):
                    if stop.is_set():
                        return
                    chunks = self._read_chunks(path, read, stats)
                    if chunks is not None:
                        pending.append((path, current[path], chunks))
                        n += len(chunks)
                    if pending and (n >= EMBED_BATCH or len(pending) >= EMBED_BATCH
                                    or i == len(todo) - 1):
                        t = time.perf_counter()
                        texts = [x for _, _, cs in pending for x in embed_texts(cs)] if want_vectors else []
                        stats.chunk_seconds += time.perf_counter() - t
                        if not put(to_embed, (pending, texts, i + 1)):
                            return
                        pending, n = [], 0
                put(to_embed, None)
                if on_read:
                    on_read()
            except BaseException as e:  # noqa: BLE001 - raised in the calling thread
                put(to_embed, _Failed(e))

        def get(q: queue.Queue) -> object:
            while not stop.is_set():
                try:
                    return q.get(timeout=0.2)
                except queue.Empty:
                    continue
            return None

        def embedding() -> None:
            emb: Embedder | None = None
            resolved = False
            try:
                while True:
                    t = time.perf_counter()
                    item = get(to_embed)
                    stats.embed_idle_seconds += time.perf_counter() - t
                    if isinstance(item, _Failed) or stop.is_set():
                        put(to_write, item)
                        return
                    if not resolved:  # also with nothing to embed: missing vectors are filled
                        emb = self._vector_embedder(self._resolve(embedder, stats), stats)
                        made_with[0] = emb
                        resolved = True
                    if item is None:
                        put(to_write, None)
                        return
                    pending, texts, upto = item
                    vectors = None
                    if emb is not None and texts:
                        t = time.perf_counter()
                        with _MODEL_TURN:
                            stats.turn_wait_seconds += time.perf_counter() - t
                            t = time.perf_counter()
                            try:
                                vectors = emb.embed(texts)
                                stats.embedded += len(texts)
                            except Exception as e:  # noqa: BLE001 - degrade to FTS-only, say so
                                log.warning("embedding failed, continuing without vectors: %s", e)
                                stats.embed_error = str(e)
                                emb = made_with[0] = None
                            stats.embed_seconds += time.perf_counter() - t
                    if not put(to_write, (pending, vectors, upto)):
                        return
            except BaseException as e:  # noqa: BLE001 - raised in the calling thread
                put(to_write, _Failed(e))

        threads = [threading.Thread(target=reader, name="brainfs-index-read", daemon=True),
                   threading.Thread(target=embedding, name="brainfs-index-embed", daemon=True)]
        for th in threads:
            th.start()
        try:
            while True:
                item = to_write.get()
                if item is None:
                    break
                if isinstance(item, _Failed):
                    raise item.error
                pending, vectors, upto = item
                t = time.perf_counter()
                self._write_batch(pending, vectors)
                stats.write_seconds += time.perf_counter() - t
                stats.files_indexed += len(pending)
                stats.chunks += sum(len(cs) for _, _, cs in pending)
                if progress:
                    progress(upto, len(todo))
        finally:
            stop.set()
        for th in threads:
            th.join()
        if todo and progress:
            progress(len(todo), len(todo))
        return made_with[0]

    def _vector_embedder(self, embedder: Embedder | None, stats: _RefreshStats) -> Embedder | None:
        """The embedder to make vectors with (memoised), or None when there is none or the
        vector table cannot take its vectors (said in ``stats.embed_error``)."""
        if embedder is None:
            return None
        if not self._prepare_vectors(embedder):
            stats.embed_error = self.vec_error
            return None
        return _cached(embedder)  # texts embedded before are not embedded again

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

    # ------------------------------------------------------------------ reads

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Chunk rows (as dicts) for the given ids."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, dict[str, Any]] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                marks = ",".join("?" * len(part))
                for r in self.conn.execute(
                        f"SELECT {', '.join(_CHUNK_COLS)} FROM chunks WHERE id IN ({marks})", part):
                    out[r[0]] = dict(zip(_CHUNK_COLS, r))
        return out

    def sparse_search(self, fts_query: str, n: int) -> list[tuple[int, float]]:
        """Top ``n`` (chunk id, bm25) for an FTS5 MATCH expression, best first (bm25 is
        negative in SQLite: more negative = better). Raises apsw.Error on a bad query."""
        with self._lock:
            return [(r[0], r[1]) for r in self.conn.execute(
                "SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
                (fts_query, int(n)))]

    def file_search(self, fts_query: str, n: int) -> list[str]:
        """Top ``n`` file paths by BM25 over whole files (``files_fts``), best first; []
        for an index without the table (format 1). Raises apsw.Error on a bad query."""
        with self._lock:
            if not self._table_exists("files_fts"):
                return []
            return [r[0] for r in self.conn.execute(
                "SELECT path FROM files_fts WHERE files_fts MATCH ? ORDER BY rank LIMIT ?",
                (fts_query, int(n)))]

    def bm25_candidates(self, fts_query: str, n: int, table: str = "chunks_fts"
                        ) -> list[tuple[Any, float, tuple[str, int], int, list[float]]]:
        """Top ``n`` rows of ``table`` by this part's own BM25, each as (chunk id — a path
        for ``files_fts`` —, rank, (path, ordinal) to order ties by, the row's tokens, its
        weighted occurrences of each query phrase), so that ``sharded`` can score them with
        every part's statistics. [] for a table this index lacks. Raises apsw.Error on a
        bad query."""
        weights = FTS_TABLES[table]
        args = "".join(f", {float(w)}" for w in weights)
        # The auxiliary function runs in the inner query, for the rows FTS5 returns only.
        inner = (f"SELECT {'rowid' if table == 'chunks_fts' else 'path'} AS k, rank AS r, "
                 f"bfs_bm25_parts({table}{args}) AS p FROM {table} "
                 f"WHERE {table} MATCH ? ORDER BY rank LIMIT ?")
        sql = (f"SELECT s.k, s.r, c.path, c.ordinal, s.p FROM ({inner}) s "
               f"JOIN chunks c ON c.id = s.k ORDER BY s.r" if table == "chunks_fts"
               else f"SELECT s.k, s.r, s.k, 0, s.p FROM ({inner}) s ORDER BY s.r")
        with self._lock:
            if not self._table_exists(table):
                return []
            out = []
            for key, rank, path, ordinal, parts in self.conn.execute(sql, (fts_query, int(n))):
                size, *freqs = parts.split(" ")
                out.append((key, rank, (path, ordinal), int(size), [float(f) for f in freqs]))
            return out

    def fts_totals(self, table: str = "chunks_fts") -> tuple[int, int]:
        """(rows, tokens over all columns) of an FTS5 table, from its averages record —
        what FTS5's ``bm25()`` divides by; (0, 0) for an empty or missing table."""
        with self._lock:
            if table not in FTS_TABLES or not self._table_exists(f"{table}_data"):
                return 0, 0
            rows = self.conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchall()
        if not rows or not rows[0][0]:
            return 0, 0
        values = _varints(bytes(rows[0][0]))
        return values[0], sum(values[1:])

    def phrase_hits(self, fts_query: str, table: str = "chunks_fts") -> int:
        """How many rows of ``table`` match ``fts_query`` (one phrase: its document
        frequency); 0 for a missing table."""
        if table not in FTS_TABLES:
            raise ValueError(f"not an FTS table: {table}")
        with self._lock:
            if not self._table_exists(table):
                return 0
            return self.conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",
                                     (fts_query,)).fetchall()[0][0]

    def file_dense_search(self, qvec: np.ndarray, n: int) -> list[str]:
        """Top ``n`` file paths by cosine between the query and the mean of the file's
        chunk vectors, best first. Raises when vectors are unavailable."""
        return [p for p, _ in self.file_dense_scores(qvec, n)]

    def file_dense_scores(self, qvec: np.ndarray, n: int) -> list[tuple[str, float]]:
        """:meth:`file_dense_search` with each file's cosine."""
        import numpy as np

        with self._lock:
            if self.vec_error:
                raise RuntimeError(self.vec_error)
            vecs = self._vector_matrix()
            if vecs is None:
                raise RuntimeError("no vector matrix")
            key = self._matrix[0] if self._matrix is not None else None
            if self._centroids is None or self._centroids[0] != key:
                self._centroids = (key, *self._file_centroids(vecs.ids))
            _k, paths, cent = self._centroids
            if not paths:
                return []
            sims = cent @ np.asarray(qvec, dtype=np.float32).reshape(-1)
            top = np.argsort(-sims, kind="stable")[:n]
            return [(paths[i], float(sims[i])) for i in top]

    def _file_centroids(self, ids: np.ndarray) -> tuple[list[str], np.ndarray]:
        """(paths, unit mean of each file's float32 vectors), the vectors read from the
        file block by block in stored order (the sums as a whole matrix would give)."""
        import numpy as np

        dim = int(self.meta("dim") or 0)
        where = dict(self.conn.execute("SELECT id, path FROM chunks WHERE vec = 1").fetchall())
        paths = sorted({where.get(int(i), "") for i in ids} - {""})
        pos = {p: j for j, p in enumerate(paths)}
        cent = np.zeros((len(paths), dim), dtype=np.float32)
        for bids, mat in self._vector_blocks(dim):
            rows = np.array([pos.get(where.get(int(i), ""), -1) for i in bids], dtype=np.int64)
            ok = rows >= 0
            np.add.at(cent, rows[ok], mat[ok])
        norms = np.linalg.norm(cent, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return paths, cent / norms

    def matched_phrases(self, fts_query: str, ids: Iterable[int]) -> dict[int, list[int]]:
        """For each chunk id that matches ``fts_query``, the indexes of the query's phrases
        it contains (used to say which terms a hit matched)."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        if not ids:
            return {}
        out: dict[int, list[int]] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                marks = ",".join("?" * len(part))
                for rid, m in self.conn.execute(
                        f"SELECT rowid, bfs_matched(chunks_fts) FROM chunks_fts "
                        f"WHERE chunks_fts MATCH ? AND rowid IN ({marks})", [fts_query, *part]):
                    out[rid] = [int(x) for x in m.split(",") if x]
        return out

    def _vector_matrix(self) -> Int8Vectors | None:
        """Every stored vector as int8 codes (``int8vectors``), cached until the next write
        (ours, seen by a write counter, or another connection's, seen by PRAGMA
        data_version); None when they would pass ``NUMPY_MAX_BYTES``."""
        import numpy as np

        from .int8vectors import FloatRows, quantize_blocks

        key = (self._writes, self.conn.execute("PRAGMA data_version").fetchall()[0][0])
        if self._matrix is not None and self._matrix[0] == key:
            return self._matrix[1]
        dim = int(self.meta("dim") or 0)
        count = self.conn.execute("SELECT count(*) FROM chunks WHERE vec = 1").fetchall()[0][0]
        if not dim or count * dim > NUMPY_MAX_BYTES:
            return None
        self._matrix = None  # the old codes go before the new ones are read
        self._drop_floats()
        try:
            floats: FloatRows | None = FloatRows(self.db_path.parent, dim)
        except OSError as e:  # exact scores then come from the index file, slower
            log.warning("%s: no temporary file for the float32 vectors (%s)", self.db_path, e)
            floats = None
        try:
            vecs = quantize_blocks(self._vector_blocks(dim), dim, floats)
        except OSError as e:
            log.warning("%s: could not write the float32 vectors aside (%s)", self.db_path, e)
            if floats is not None:
                floats.close()
            floats = None
            vecs = quantize_blocks(self._vector_blocks(dim), dim)
        self._floats = floats
        # vec0 gives its rows in rowid order: the ids are then their own sorted index.
        if len(vecs.ids) < 2 or bool((vecs.ids[1:] > vecs.ids[:-1]).all()):
            self._row_of = (vecs.ids, None)
        else:
            order = np.argsort(vecs.ids, kind="stable")
            self._row_of = (vecs.ids[order], order)
        self._matrix = (key, vecs)
        # Reading every vector filled SQLite's page cache (2 MB a connection, 14 parts)
        # with pages no query reads again: give them back.
        self.conn.execute("PRAGMA shrink_memory")
        return vecs

    def _vector_blocks(self, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, float32 rows) of every stored vector in stored order, ``VECTOR_BLOCK`` at
        a time (never the whole float32 matrix at once)."""
        import numpy as np

        # vec0 reads a vector at a time out of blobs of 1,024 (1.5 MB at 384-d): a page
        # cache smaller than one blob walks its pages again for every vector (a 13,000-
        # vector part: 2.5 s with 512 KiB against 0.3 s with 2 MB), so the scan gets
        # VECTOR_SCAN_CACHE_KIB and the connection its own size back after.
        small = self._cache_kib is not None and self._cache_kib < VECTOR_SCAN_CACHE_KIB
        if small:
            self.conn.execute(f"PRAGMA cache_size = {-VECTOR_SCAN_CACHE_KIB}")
        try:
            cur = self.conn.execute("SELECT rowid, embedding FROM chunks_vec")
            while rows := list(itertools.islice(cur, VECTOR_BLOCK)):
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        finally:
            if small:
                self.conn.execute(f"PRAGMA cache_size = {-int(self._cache_kib)}")  # type: ignore[arg-type]

    def warm(self) -> None:
        """Load the vectors now (a part that just arrived: its load would otherwise fall on
        the next recall, ~0.1 s per 10,000 vectors)."""
        with self._lock:
            if self.vec_error is None and self.dense_backend == "numpy" and self._table_exists("chunks_vec"):
                self._vector_matrix()

    def dense_scores(self, qvec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Every stored vector's approximate cosine with a unit query: (chunk ids, scores,
        error bounds per unit of ‖q‖) — what ``sharded`` merges over parts before scoring
        the best exactly (:meth:`exact_vectors`). None when this part searches with vec0
        (:meth:`dense_search` then). Raises when vectors are unavailable."""
        import numpy as np

        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        with self._lock:
            if self.vec_error:
                raise RuntimeError(self.vec_error)
            if not self._table_exists("chunks_vec"):
                raise RuntimeError("no vector table")
            vecs = self._vector_matrix() if self.dense_backend == "numpy" else None
            if vecs is None:
                return None
            if len(vecs) and vecs.codes.shape[1] != q.shape[0]:
                raise RuntimeError(f"query dim {q.shape[0]} != index dim {vecs.codes.shape[1]}")
            return vecs.ids, vecs.approx(q), vecs.slack

    def exact_vectors(self, ids: Iterable[int]) -> np.ndarray:
        """The float32 vectors of ``ids`` as rows in that order; a row of NaNs for an id
        without one (removed meanwhile)."""
        import numpy as np

        ids = [int(i) for i in ids]
        with self._lock:
            dim = int(self.meta("dim") or 0)
            out = np.full((len(ids), dim), np.nan, dtype=np.float32)
            got = self._stored_vectors(ids)
        for row, c in enumerate(ids):
            if c in got:
                out[row] = got[c]
        return out

    def _stored_vectors(self, ids: list[int]) -> dict[int, np.ndarray]:
        """float32 vectors by id: from the copy beside the current codes when it holds
        them, else from the index file one by one (``rowid IN (…)`` makes ``vec0`` scan
        every vector; ``rowid = ?`` is a lookup)."""
        import numpy as np

        ids = list(dict.fromkeys(ids))
        out: dict[int, np.ndarray] = {}
        current = (self._matrix is not None and self._floats is not None and self._row_of is not None
                   and self._matrix[0] == (self._writes, self.conn.execute(
                       "PRAGMA data_version").fetchall()[0][0]))
        if current and ids:
            sorted_ids, order = self._row_of
            want = np.asarray(ids, dtype=np.int64)
            at = np.minimum(np.searchsorted(sorted_ids, want), max(len(sorted_ids) - 1, 0))
            found = (sorted_ids[at] == want) if len(sorted_ids) else np.zeros(len(want), bool)
            pos = at[found] if order is None else order[at[found]]
            rows = self._floats.read(pos)  # type: ignore[union-attr]
            out = dict(zip(want[found].tolist(), rows))
            return out
        for c in ids:
            for (blob,) in self.conn.execute("SELECT embedding FROM chunks_vec WHERE rowid = ?", (c,)):
                out[c] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _drop_floats(self) -> None:
        if self._floats is not None:
            self._floats.close()
        self._floats = None
        self._row_of = None

    def dense_search(self, qvec: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Top ``n`` (chunk id, cosine similarity) for a unit query vector, best first (ties
        in stored order): the float32 vectors' ranking and scores, searched through their
        int8 codes (``int8vectors``).

        Raises when vectors are unavailable (the caller degrades)."""
        import numpy as np

        from .int8vectors import exact_top

        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        with self._lock:
            got = self.dense_scores(q)
            if got is not None:
                ids, approx, slack = got
                rows, scores = exact_top(q, n, approx, slack, lambda r: self.exact_vectors(ids[r]))
                return [(int(ids[r]), float(s)) for r, s in zip(rows, scores)]
            rows = self.conn.execute(
                "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? "
                "ORDER BY distance", (q.tobytes(), int(n))).fetchall()
            return [(r[0], 1.0 - float(r[1])) for r in rows]

    def alias_groups(self) -> list[list[str]]:
        """Every page's names (title first), as written by the last refresh; [] for an
        index without aliases (format 1, or no knowledge pages)."""
        with self._lock:
            groups: dict[str, list[str]] = {}
            for path, name in self.conn.execute("SELECT path, name FROM aliases ORDER BY rowid"):
                groups.setdefault(path, []).append(name)
        return list(groups.values())

    def statements(self) -> list[tuple[str, str, str]]:
        """Every (path, anchor, JSON) row of the ``statements`` table; [] for an index of
        an earlier format."""
        with self._lock:
            if not self._table_exists("statements"):
                return []
            return [tuple(r) for r in self.conn.execute(
                "SELECT path, anchor, data FROM statements ORDER BY rowid")]  # type: ignore[misc]

    @property
    def generation(self) -> int:
        """A number that changes with every write (what is cached of the index is keyed on it)."""
        return self._writes

    def validity(self) -> Validity:
        """The statements as a :class:`~.validity.Validity`, built once per index state
        (again after a write)."""
        with self._lock:
            if self._validity is None or self._validity[0] != self._writes:
                self._validity = (self._writes, Validity(self.statements()))
            return self._validity[1]

    def ids_at(self, refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The first chunk at each (path, anchor) (anchor "": the file's first chunk)."""
        out: dict[tuple[str, str], int] = {}
        with self._lock:
            for path, anchor in dict.fromkeys(refs):
                q = ("SELECT id FROM chunks WHERE path = ? ORDER BY ordinal LIMIT 1", (path,)) \
                    if not anchor else \
                    ("SELECT id FROM chunks WHERE path = ? AND anchor = ? ORDER BY ordinal LIMIT 1",
                     (path, anchor))
                got = self.conn.execute(*q).fetchall()
                if got:
                    out[(path, anchor)] = got[0][0]
        return out

    def neighbour_ids(self, ids: Iterable[int]) -> dict[int, list[int]]:
        """For each chunk id, the ids of the chunks just before and after it in its file."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, list[int]] = {i: [] for i in ids}
        with self._lock:
            for start in range(0, len(ids), 300):
                part = ids[start:start + 300]
                marks = ",".join("?" * len(part))
                for cid, nid in self.conn.execute(
                        f"SELECT c.id, n.id FROM chunks c JOIN chunks n ON n.path = c.path "
                        f"AND n.ordinal IN (c.ordinal - 1, c.ordinal + 1) WHERE c.id IN ({marks})",
                        part):
                    out[cid].append(nid)
        return out

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored float32 vectors by chunk id (those that have one), read from the file.
        Raises when vectors are unavailable (the caller degrades)."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        with self._lock:
            if self.vec_error:
                raise RuntimeError(self.vec_error)
            return self._stored_vectors(ids)

    def recent(self, n: int) -> list[int]:
        """Ids of the ``n`` most recently updated chunks (undated ones last)."""
        with self._lock:
            return [r[0] for r in self.conn.execute(
                "SELECT id FROM chunks ORDER BY updated IS NULL, updated DESC, id DESC LIMIT ?",
                (int(n),))]

    def close(self) -> None:
        """Checkpoint the WAL and close the connection."""
        with self._lock:
            self._drop_floats()
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except apsw.Error:
                pass
            self.conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _RefreshStats:
    """What one :meth:`SearchIndex.refresh` did (returned as a dict by :meth:`to_dict`)."""

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

    def __init__(self, index: SearchIndex, embedder: Embedder | None, stats: _RefreshStats) -> None:
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


def _cached(embedder: Embedder) -> Embedder:
    """``embedder`` behind the per-user cache of vectors by text hash (``cache.embedcache``;
    ``BRAINFS_EMBED_CACHE=off`` disables it): a grown transcript or a rewritten page embeds
    only its new chunks."""
    from .embedcache import with_cache

    return with_cache(embedder)
