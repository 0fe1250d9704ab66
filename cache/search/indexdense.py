"""Dense search over the index: every stored vector's cosine with a query, and files by
the mean of their chunks' vectors.

Dense search. Measured on this machine (2 CPUs) over 100,000 × 384-d unit vectors, top-50:
``vec0`` KNN ≈ 70 ms per query, numpy brute force over a cached float32 matrix ≈ 9 ms idle,
15 ms under load (loading the matrix from vec0 once ≈ 0.8 s, redone lazily after writes;
``benchmarks/locomo_eval.py --dense-bench 100000`` reproduces it). So numpy is the
default and vec0 KNN is kept as the fallback when the codes would exceed
``NUMPY_MAX_BYTES`` (about 1.3M chunks) or numpy is unavailable. The matrix is held as int8
codes, a quarter of float32's memory, and searched with the float32 vectors' exact result
(``int8vectors``: the best candidates are scored again from the file).
"""

from __future__ import annotations

import itertools
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import apsw

from .int8vectors import FloatRows, Int8Vectors, exact_top, quantize_blocks

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

# The index's parts log under the index's name, as one module did before.
log = logging.getLogger("brainfs.cache.search.index")

#: Above this many bytes of int8 codes in memory (a byte per component), dense search uses
#: vec0 KNN instead.
NUMPY_MAX_BYTES = 512 * 1024 * 1024
#: Vectors read from the file at a time when they are loaded (1.5 MB of float32 at 384-d).
VECTOR_BLOCK = 1024
#: SQLite's page cache while the vectors are read (KiB): more than one of vec0's blobs.
VECTOR_SCAN_CACHE_KIB = 4096


class DenseMixin:
    """The vector-search part of :class:`~.index.SearchIndex`: the vectors as int8 codes
    in memory (cached until the next write), scored exactly from the float32 rows."""

    conn: apsw.Connection
    db_path: Path
    dense_backend: str
    vec_error: str | None
    _lock: threading.RLock
    _writes: int
    _cache_kib: int | None
    _matrix: tuple[Any, Int8Vectors] | None
    _floats: FloatRows | None
    _row_of: Any
    _centroids: tuple[Any, list[str], Any] | None

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

    def _vector_matrix(self) -> Int8Vectors | None:
        """Every stored vector as int8 codes (``int8vectors``), cached until the next write
        (ours, seen by a write counter, or another connection's, seen by PRAGMA
        data_version); None when they would pass ``NUMPY_MAX_BYTES``."""
        import numpy as np

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

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored float32 vectors by chunk id (those that have one), read from the file.
        Raises when vectors are unavailable (the caller degrades)."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        with self._lock:
            if self.vec_error:
                raise RuntimeError(self.vec_error)
            return self._stored_vectors(ids)
