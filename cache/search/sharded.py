"""Several index parts (``shardmap``) searched as one index.

:class:`ShardedIndex` offers the reading methods of :class:`~brainfs.cache.search.index.
SearchIndex` that ``retrieval.retrieve`` calls, over the parts that are present, so recall
runs unchanged. Chunk ids are made global by the part's position: ``(position << 40) |
id`` (position 0 keeps its ids, so one part answers exactly as a plain index).

Scores are merged so that all parts together rank as the whole index would:
- dense: cosine similarity needs no statistics; each part's best ``n`` are merged.
- BM25: a part's own ``bm25()`` uses that part's row count, mean length and document
  frequencies, which differ between parts. Each part's best candidates are therefore scored
  again with the statistics summed over the parts (the same formula as FTS5's ``bm25()``:
  k1 = 1.2, b = 0.75, IDF floored at 1e-6), and the union is ranked by that score.
- a file's chunks all live in one part, so whole-file rankings and neighbours stay within it.

Parts may be added while it is in use (a mount's background download); the set of parts a
query saw is the set when it started; a part replaced meanwhile is closed only with the index,
so a query never reads a closed one. Thread-safety: one lock around the list of parts; each
part serialises its own calls.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .index import SearchIndex
from .int8vectors import exact_top, one_blas_thread
from .shardmap import CORE, DEFAULT_PERIOD, newest_first, shard_of
from .validity import Validity

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

    from .embedder import Embedder

#: Bits of a global chunk id that hold the part's own id.
ID_BITS = 40
_LOCAL = (1 << ID_BITS) - 1
#: BM25 constants of FTS5's bm25().
K1, B = 1.2, 0.75
#: A part is asked for its share of ``n`` BM25 candidates, then 4×, 16×… while its unseen
#: rows could still reach the top ``n`` with every part's statistics (a chunk in the whole
#: index's top ``n`` may stand lower in its own part), up to this many times ``n``.
MAX_CANDIDATES = 16
#: The fewest candidates a part is first asked for.
FIRST_CANDIDATES = 8

_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


class ShardedIndex:
    """The parts of one index searched together (see the module docstring)."""

    def __init__(self, parts: dict[str, SearchIndex] | None = None,
                 expected: Iterable[str] = (), period: str = DEFAULT_PERIOD,
                 local: Path | None = None) -> None:
        self._lock = threading.Lock()
        #: where a part the manifest does not name yet is created by a write (a mount
        #: writing the first session of a new quarter); None: such writes are refused
        self.local = local
        self._names: list[str] = []
        self._parts: list[SearchIndex] = []
        #: every part the manifest names, present or not (for "searched k of n")
        self.expected: list[str] = list(expected)
        self.period = period
        #: (position, table, phrase) → document frequency, dropped on a write to a part
        self._hits: dict[tuple[int, str, str], int] = {}
        #: parts replaced by ``add``, closed by ``close``
        self._retired: list[SearchIndex] = []
        self._validity: tuple[Any, Validity] | None = None
        for name in newest_first(parts or {}):
            self.add(name, (parts or {})[name])

    # ------------------------------------------------------------------ parts

    def add(self, name: str, part: SearchIndex) -> None:
        """Search ``part`` too from now on (it replaces a part of the same name)."""
        with self._lock:
            if name in self._names:
                i = self._names.index(name)
                old, self._parts[i] = self._parts[i], part
                self._hits = {k: v for k, v in self._hits.items() if k[0] != i}
                # A query may hold it in its snapshot: closed with the index, whose
                # holders (LocalIndex.hold) all let go first.
                self._retired.append(old)
            else:
                self._names.append(name)
                self._parts.append(part)
            if name not in self.expected:
                self.expected.append(name)

    def names(self) -> list[str]:
        """The parts present, in the order they were added."""
        with self._lock:
            return list(self._names)

    def missing(self) -> list[str]:
        """Parts the manifest names that are not present (yet)."""
        have = set(self.names())
        return [n for n in newest_first(self.expected) if n not in have]

    def part(self, name: str) -> SearchIndex | None:
        """The part ``name`` if present."""
        with self._lock:
            return self._parts[self._names.index(name)] if name in self._names else None

    def _snapshot(self) -> list[tuple[int, SearchIndex]]:
        with self._lock:
            return list(enumerate(self._parts))

    @staticmethod
    def _gid(pos: int, cid: int) -> int:
        return (pos << ID_BITS) | int(cid)

    def _split(self, ids: Iterable[int]) -> dict[int, list[int]]:
        """Global ids grouped by part position, as local ids."""
        out: dict[int, list[int]] = {}
        for g in ids:
            out.setdefault(int(g) >> ID_BITS, []).append(int(g) & _LOCAL)
        return out

    def _parts_of(self, ids: Iterable[int]) -> list[tuple[int, SearchIndex, list[int]]]:
        parts = dict(self._snapshot())
        return [(pos, parts[pos], local) for pos, local in self._split(ids).items() if pos in parts]

    # ------------------------------------------------------------------ state

    def has_fts(self) -> bool:
        """True when some part answers keyword queries."""
        return any(p.has_fts() for _, p in self._snapshot())

    def has_vectors(self) -> bool:
        """True when some part holds vectors."""
        return any(p.has_vectors() for _, p in self._snapshot())

    def embedder_name(self) -> str | None:
        """The embedder the parts' vectors come from (the first part that has any)."""
        for _, p in self._snapshot():
            name = p.embedder_name()
            if name:
                return name
        return None

    def stats(self) -> dict[str, Any]:
        """Counts and size summed over the parts present."""
        out: dict[str, Any] = {"files": 0, "chunks": 0, "vectors": 0, "embedder": None, "bytes": 0}
        for _, p in self._snapshot():
            st = p.stats()
            for k in ("files", "chunks", "vectors", "bytes"):
                out[k] += st[k]
            out["embedder"] = out["embedder"] or st["embedder"]
        out["parts"] = len(self.names())
        out["parts_expected"] = len(self.expected)
        return out

    def file_hashes(self) -> dict[str, str]:
        """path → hash of every indexed file."""
        out: dict[str, str] = {}
        for _, p in self._snapshot():
            out.update(p.file_hashes())
        return out

    # ------------------------------------------------------------------ keyword search

    def sparse_search(self, fts_query: str, n: int) -> list[tuple[int, float]]:
        """Top ``n`` (global chunk id, BM25 over all parts), best (most negative) first."""
        return [(int(k), s) for k, s in self._bm25(fts_query, n, "chunks_fts")]

    def file_search(self, fts_query: str, n: int) -> list[str]:
        """Top ``n`` file paths by whole-file BM25 over all parts."""
        return [str(k) for k, _ in self._bm25(fts_query, n, "files_fts")]

    def _bm25(self, fts_query: str, n: int, table: str) -> list[tuple[Any, float]]:
        parts = self._snapshot()
        if len(parts) == 1:
            pos, p = parts[0]
            if table == "chunks_fts":
                return [(self._gid(pos, c), s) for c, s in p.sparse_search(fts_query, n)]
            return [(path, 0.0) for path in p.file_search(fts_query, n)]
        phrases = [m.group(0) for m in _PHRASE.finditer(fts_query)]
        totals = {pos: p.fts_totals(table) for pos, p in parts}
        rows = sum(r for r, _ in totals.values())
        avgdl = sum(t for _, t in totals.values()) / max(rows, 1)
        hits = {pos: [self._phrase_hits(pos, p, ph, table) for ph in phrases] for pos, p in parts}
        idf = [_idf(rows, sum(h[i] for h in hits.values())) for i in range(len(phrases))]
        scored: dict[Any, tuple[float, tuple[str, int]]] = {}
        # Each part first gives a share of n (the top n spreads over the parts), more where
        # its unseen rows could still make the top n.
        todo = {pos: max(FIRST_CANDIDATES, -(-2 * n // len(parts))) for pos, _ in parts}
        while todo:
            bounds: dict[int, float] = {}
            for pos, p in parts:
                if pos not in todo:
                    continue
                got = p.bm25_candidates(fts_query, todo[pos], table)
                for key, _rank, order, size, freqs in got:
                    if len(freqs) != len(phrases):
                        raise ValueError(f"cannot read the phrases of {fts_query!r}")
                    k = self._gid(pos, key) if table == "chunks_fts" else key
                    scored[k] = (-sum(w * f * (K1 + 1) / (f + K1 * (1 - B + B * size / avgdl))
                                      for w, f in zip(idf, freqs) if f > 0), order)
                if len(got) == todo[pos] and todo[pos] < MAX_CANDIDATES * n:  # not exhausted
                    bounds[pos] = self._bound(-got[-1][1], idf, hits[pos], totals[pos], avgdl)
            # A part's unseen rows score at most its bound; ask it for more only when that
            # could still reach the top n.
            nth = sorted(v[0] for v in scored.values())[n - 1] if len(scored) >= n else 0.0
            todo = {pos: min(todo[pos] * 4, MAX_CANDIDATES * n) for pos, bound in bounds.items()
                    if -bound <= nth}
        # Ties in the order of the files and of the chunks in them: the order of ids in an
        # index built in one go, which is what FTS5 gives ties.
        out = sorted(scored.items(), key=lambda x: x[1])
        return [(k, v[0]) for k, v in out[:n]]

    @staticmethod
    def _bound(local: float, idf: list[float], hits: list[int], totals: tuple[int, int],
               avgdl: float) -> float:
        """The most a row whose own part scores it ``local`` (BM25, positive) can score with
        the statistics of all parts: each phrase's weight grows at most by the ratio of its
        IDFs, and the length term at most by the ratio of the mean lengths."""
        rows, tokens = totals
        local_idf = [_idf(rows, h) for h in hits]
        ratio = max((g / lo for g, lo in zip(idf, local_idf)), default=1.0)
        local_avgdl = tokens / max(rows, 1)
        return local * ratio * max(1.0, avgdl / local_avgdl if local_avgdl else 1.0)

    def _phrase_hits(self, pos: int, part: SearchIndex, phrase: str, table: str) -> int:
        key = (pos, table, phrase)
        got = self._hits.get(key)
        if got is None:
            got = self._hits[key] = part.phrase_hits(phrase, table)
        return got

    def matched_phrases(self, fts_query: str, ids: Iterable[int]) -> dict[int, list[int]]:
        """For each chunk id matching ``fts_query``, the indexes of the phrases it holds."""
        out: dict[int, list[int]] = {}
        for pos, p, local in self._parts_of(ids):
            for cid, m in p.matched_phrases(fts_query, local).items():
                out[self._gid(pos, cid)] = m
        return out

    # ------------------------------------------------------------------ vectors

    def dense_search(self, qvec: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Top ``n`` (global chunk id, cosine) over the parts, best first, ties by id. Every
        part scores its vectors from their int8 codes; the best over all parts are then
        scored exactly (``int8vectors.exact_top``), so the float32 vectors' ranking comes
        back while only the candidates' float32 vectors are read. Raises when no part can
        search vectors (the caller degrades)."""
        import numpy as np

        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        got: list[tuple[int, float]] = []
        errors = []
        parts = self._snapshot()
        pieces: list[tuple[int, SearchIndex, Any]] = []  # (position, part, its ids)
        approx, slack = [], []
        with _one_blas_thread():
            for pos, p in parts:
                try:
                    scored = p.dense_scores(q)
                    if scored is None:  # a part searched by vec0: its own best n
                        got += [(self._gid(pos, c), s) for c, s in p.dense_search(q, n)]
                        continue
                except Exception as e:  # noqa: BLE001 - a part without vectors (e.g. no files yet)
                    errors.append(e)
                    continue
                pieces.append((pos, p, scored[0]))
                approx.append(scored[1])
                slack.append(scored[2])
        if errors and len(errors) == len(parts):
            raise errors[0]
        if pieces:
            starts = np.cumsum([0] + [len(ids) for _, _, ids in pieces])

            def exact(rows: np.ndarray) -> np.ndarray:
                out = np.full((len(rows), len(q)), np.nan, dtype=np.float32)
                which = np.searchsorted(starts, rows, side="right") - 1
                for k, (_pos, p, ids) in enumerate(pieces):
                    sel = np.flatnonzero(which == k)
                    if len(sel):
                        out[sel] = p.exact_vectors(ids[rows[sel] - starts[k]])
                return out

            rows, scores = exact_top(q, n, np.concatenate(approx), np.concatenate(slack), exact)
            which = np.searchsorted(starts, rows, side="right") - 1
            for row, k, s in zip(rows, which, scores):
                pos, _p, ids = pieces[k]
                got.append((self._gid(pos, ids[row - starts[k]]), float(s)))
        got.sort(key=lambda x: (-x[1], x[0]))
        return got[:n]

    def file_dense_search(self, qvec: np.ndarray, n: int) -> list[str]:
        """Top ``n`` file paths by cosine to the mean of their chunk vectors."""
        got: list[tuple[str, float]] = []
        for _, p in self._snapshot():
            if p.has_vectors():
                got += p.file_dense_scores(qvec, n)
        got.sort(key=lambda x: (-x[1], x[0]))
        return [path for path, _ in got[:n]]

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored vectors by global chunk id."""
        out: dict[int, Any] = {}
        for pos, p, local in self._parts_of(ids):
            if p.has_vectors():
                out.update({self._gid(pos, c): v for c, v in p.vectors(local).items()})
        return out

    # ------------------------------------------------------------------ rows

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Chunk rows by global id (their ``id`` is the global one)."""
        out: dict[int, dict[str, Any]] = {}
        for pos, p, local in self._parts_of(ids):
            for cid, row in p.chunks_by_id(local).items():
                g = self._gid(pos, cid)
                out[g] = dict(row, id=g)
        return out

    def neighbour_ids(self, ids: Iterable[int]) -> dict[int, list[int]]:
        """For each chunk, the chunks just before and after it in its file."""
        out: dict[int, list[int]] = {}
        for pos, p, local in self._parts_of(ids):
            for cid, nbs in p.neighbour_ids(local).items():
                out[self._gid(pos, cid)] = [self._gid(pos, x) for x in nbs]
        return out

    def recent(self, n: int) -> list[int]:
        """Global ids of the ``n`` most recently updated chunks (undated ones last)."""
        rows: list[tuple[bool, str, int]] = []
        for pos, p in self._snapshot():
            got = p.chunks_by_id(p.recent(n))
            rows += [(r["updated"] is None, r["updated"] or "", self._gid(pos, c)) for c, r in got.items()]
        rows.sort(key=lambda r: (r[0], _desc(r[1]), -r[2]))
        return [g for _, _, g in rows[:n]]

    def alias_groups(self) -> list[list[str]]:
        """Every page's names (pages live in the core part; any part may hold some)."""
        out: list[list[str]] = []
        for _, p in self._snapshot():
            out += p.alias_groups()
        return out

    def statements(self) -> list[tuple[str, str, str]]:
        """Every part's statements (the records, cards and pages live in the core part)."""
        out: list[tuple[str, str, str]] = []
        for _, p in self._snapshot():
            out += p.statements()
        return out

    def validity(self) -> Validity:
        """The statements of every part as one :class:`~.validity.Validity`, built again
        when a part arrives or is written."""
        key = tuple((pos, id(p), p.generation) for pos, p in self._snapshot())
        have = self._validity
        if have is not None and have[0] == key:
            return have[1]
        # built outside the lock (the parts list's lock is not re-entrant); two threads
        # building at once make the same thing
        made = (key, Validity(self.statements()))
        self._validity = made
        return made[1]

    def ids_at(self, refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Global ids of the first chunk at each (path, anchor), from the part holding it."""
        out: dict[tuple[str, str], int] = {}
        snap = dict((id(p), pos) for pos, p in self._snapshot())
        for ref in dict.fromkeys(refs):
            part = self.part(self.part_for(ref[0]))
            if part is None or id(part) not in snap:
                continue
            for r, cid in part.ids_at([ref]).items():
                out[r] = self._gid(snap[id(part)], cid)
        return out

    # ------------------------------------------------------------------ writes

    def part_for(self, path: str) -> str:
        """The part that holds ``path``."""
        return shard_of(path, self.period)

    def upsert_file(self, path: str, hash: str, text: str | bytes,
                    embedder: Embedder | None = None) -> int:
        """(Re)index one file in its part; KeyError when that part is not present (the
        caller keeps the file for when it arrives)."""
        name = self.part_for(path)
        part = self.part(name)
        if part is None and name not in self.expected and self.local is not None:
            part = SearchIndex(self.local / f"{name}.sqlite")
            self.add(name, part)
        if part is None:
            raise KeyError(name)
        self._forget_hits(name)
        return part.upsert_file(path, hash, text, embedder)

    def remove_file(self, path: str) -> bool:
        """Drop a file from its part (False when the part is not present)."""
        name = self.part_for(path)
        part = self.part(name)
        if part is None:
            return False
        self._forget_hits(name)
        return part.remove_file(path)

    def _forget_hits(self, name: str) -> None:
        with self._lock:
            i = self._names.index(name)
            self._hits = {k: v for k, v in self._hits.items() if k[0] != i}

    def close(self) -> None:
        """Close every part, and those it replaced."""
        with self._lock:
            retired, self._retired = self._retired, []
        for p in [p for _, p in self._snapshot()] + retired:
            p.close()

    def __enter__(self) -> ShardedIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _idf(rows: int, hits: int) -> float:
    """FTS5 bm25()'s IDF: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    return max(math.log((rows - hits + 0.5) / (hits + 0.5)), 1e-6)


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """BLAS on one thread for the parts' matrix-vector products: a product per part is
    small, and waking BLAS's threads for each costs more than it saves — on 2 busy CPUs,
    14 parts took 37 ms threaded against 13 ms on one thread (the whole index's one
    product: 19 ms). Without threadpoolctl, BLAS keeps its own setting."""
    return one_blas_thread()


class _desc(str):
    """A string that sorts in reverse (for one key of a mixed sort)."""

    def __lt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__gt__(self, other)

    def __gt__(self, other: str) -> bool:  # type: ignore[override]
        return str.__lt__(self, other)


__all__ = ["ShardedIndex", "CORE", "ID_BITS"]
