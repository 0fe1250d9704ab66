"""The search index: one SQLite file (APSW) with a chunk catalog, FTS5 and sqlite-vec.

:class:`SearchIndex` is one object; its parts live beside this module, by job:
``indexschema`` (the tables, their format version, an older index opened),
``indexwrites`` (a file's chunks written, removed, forgotten), ``indexrefresh`` (the index
brought in line with a corpus, reading, embedding and writing pipelined), ``indexfts``
(keyword search: BM25 over chunks and whole files) and ``indexdense`` (vector search over
an int8 copy of the vectors held in memory). This module opens the file and reads chunks.

Threading: an instance owns one APSW connection; calls are serialised by a lock, so it may
be shared by worker threads, but each call blocks — never call it on the trio thread.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import apsw

from .indexdense import DenseMixin
from .indexfts import FtsMixin
from .indexrefresh import RefreshMixin
from .indexschema import SchemaMixin
from .indexwrites import WritesMixin
from .validity import Validity

if TYPE_CHECKING:
    from .int8vectors import FloatRows, Int8Vectors

_CHUNK_COLS = ("id", "path", "anchor", "kind", "scope", "confidence", "created", "updated",
               "title", "heading", "speaker", "text", "ordinal", "cites")


class SearchIndex(SchemaMixin, FtsMixin, DenseMixin, WritesMixin, RefreshMixin):
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
        self._register_fts_functions()
        self._ensure_schema()

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
