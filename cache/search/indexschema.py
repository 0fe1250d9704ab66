"""The search index's schema: its tables, their format version, and how an index of an
earlier version is opened.

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
        ``aliases:``), for query expansion (``candidates``: "Mel" also searches "Melanie").
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
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    from .embedder import Embedder

# The index's parts log under the index's name, as one module did before.
log = logging.getLogger("brainfs.cache.search.index")

SCHEMA_VERSION = 5
#: BM25 column weights (text, title, heading): a title word names the subject of the whole
#: page, so it counts, but less than the passage's own words — otherwise every chunk of a
#: page would tie on a title match.
BM25_WEIGHTS = (1.0, 0.5, 0.5)
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

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

#: The FTS5 tables and the column weights their ``rank`` uses (files_fts: bm25()'s default).
FTS_TABLES = {"chunks_fts": BM25_WEIGHTS, "files_fts": ()}


class SchemaMixin:
    """The part of :class:`~.index.SearchIndex` that creates and checks its tables."""

    conn: apsw.Connection
    db_path: Path
    vec_error: str | None
    _lock: threading.RLock
    _writes: int

    def _load_vec(self) -> None:
        """Load sqlite-vec lazily; a failure leaves the index usable for FTS only."""
        try:
            # Imported here: a missing package is one of the failures that leave FTS only.
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
