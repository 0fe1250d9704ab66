"""Keyword search over the index: FTS5 BM25 on chunks and on whole files, and what the
parts of an index in parts (``sharded``) need to score BM25 as one index would."""

from __future__ import annotations

import threading
from typing import Any, Iterable

import apsw

from .indexschema import FTS_TABLES


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


class FtsMixin:
    """The keyword-search part of :class:`~.index.SearchIndex` (its tables checked with
    :class:`~.indexschema.SchemaMixin`'s ``_table_exists``)."""

    conn: apsw.Connection
    _lock: threading.RLock

    def _register_fts_functions(self) -> None:
        """Make the auxiliary functions the queries below call known to the connection."""
        self.conn.register_fts5_function("bfs_matched", _fts_matched)
        self.conn.register_fts5_function("bfs_bm25_parts", _fts_bm25_parts)

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
