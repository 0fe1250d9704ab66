"""A part's vectors held in memory as int8 codes, searched with exact float32 results.

The float32 vectors live in the index file (``chunks_vec``). Held in memory as float32
they were the largest thing in a mount: 180,339 × 384 × 4 B = 277 MB at 20,000 files
(``benchmarks/results/index-shards.md``). Here each vector ``v`` is held as one int8 code
per component and a scale (``v ≈ scale · code``, the scale being ``max|v| / 127``): a
quarter of the bytes.

A search scores every vector from its codes, then scores the best of them exactly, with
their float32 vectors read back from the index file, and takes more of them until no
vector left out can beat the ``n``-th exact score. That test is a bound, not a guess: the
quantization error ``e = v − scale · code`` of each vector is known when it is quantized,
and ``|q·v − q·(scale · code)| ≤ ‖e‖ · ‖q‖`` (Cauchy–Schwarz), plus a margin for float32
rounding. So the result is the float32 search's — the same ids in the same order with the
same scores — and :data:`EXTRA` only decides how many vectors are read back at first (on
LoCoMo's 7,090 real embeddings the exact top 50 needed 58–73 candidates).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

#: Candidates scored exactly at first, beyond the ``n`` asked for: ``max(EXTRA, n // 2)``;
#: doubled while a vector left out could still reach the top ``n``.
EXTRA = 32
#: Rows converted from int8 to float32 at a time while scoring (a 3 MB buffer at 384-d).
BLOCK = 2048
_U32 = 2.0 ** -23  # float32's unit roundoff, doubled


@dataclass
class Int8Vectors:
    """Row ``i``: chunk ``ids[i]`` ≈ ``scales[i] * codes[i]``, its score's error at most
    ``slack[i] * ‖q‖`` (see the module docstring)."""

    ids: np.ndarray     # int64 (n,)
    codes: np.ndarray   # int8 (n, dim)
    scales: np.ndarray  # float32 (n,)
    slack: np.ndarray   # float32 (n,)

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return self.ids.nbytes + self.codes.nbytes + self.scales.nbytes + self.slack.nbytes

    def __len__(self) -> int:
        return len(self.ids)

    def approx(self, q: np.ndarray) -> np.ndarray:
        """Every row's approximate score ``q · (scale · code)`` (float32)."""
        import numpy as np

        out = np.empty(len(self.ids), dtype=np.float32)
        with one_blas_thread():
            for s in range(0, len(self.ids), BLOCK):
                out[s:s + BLOCK] = self.codes[s:s + BLOCK].astype(np.float32) @ q
        out *= self.scales
        return out


_controller: list = []
_controller_lock = threading.Lock()


def one_blas_thread() -> contextlib.AbstractContextManager:
    """BLAS on one thread for a while. The products here are of a few thousand rows each,
    and waking BLAS's threads for each costs more than it saves: on 2 busy CPUs the codes of
    180,339 vectors took 33–214 ms with two threads against 20–41 ms with one. The
    controller is made once (``threadpool_limits`` looks the libraries up every time,
    0.5 ms). Without threadpoolctl, BLAS keeps its own setting."""
    with _controller_lock:
        if not _controller:
            try:
                from threadpoolctl import ThreadpoolController

                _controller.append(ThreadpoolController())
            except ImportError:
                _controller.append(None)
    ctl = _controller[0]
    return ctl.limit(limits=1, user_api="blas") if ctl is not None else contextlib.nullcontext()


class FloatRows:
    """The float32 rows behind a set of codes, in row order, kept in an unnamed temporary
    file in ``directory`` (the index's folder): on disk and in the kernel's page cache, not
    in the process's memory, gone when closed or when the process ends. The candidates of
    a search are read back from it with one ``pread`` each (microseconds); reading them
    from the index file instead costs ~0.1–0.4 ms a vector (a ``vec0`` point lookup), and
    ``rowid IN (…)`` makes ``vec0`` scan every vector."""

    def __init__(self, directory: Path, dim: int) -> None:
        self.dim = dim
        self.rows = 0
        self._file = tempfile.TemporaryFile(dir=directory, prefix=".vectors-")

    def append(self, mat: np.ndarray) -> None:
        """Add rows at the end."""
        import numpy as np

        self._file.write(np.ascontiguousarray(mat, dtype=np.float32).tobytes())
        self.rows += len(mat)

    def read(self, rows: Iterable[int]) -> np.ndarray:
        """The float32 rows ``rows`` (positions), in that order."""
        import numpy as np

        self._file.flush()
        size = self.dim * 4
        rows = [int(r) for r in rows]
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        fd = self._file.fileno()
        for k, r in enumerate(rows):
            out[k] = np.frombuffer(os.pread(fd, size, r * size), dtype=np.float32)
        return out

    def close(self) -> None:
        """Drop the file."""
        self._file.close()


def quantize(ids: np.ndarray, mat: np.ndarray) -> Int8Vectors:
    """Codes, scales and error bounds of float32 rows ``mat`` (one per id)."""
    import numpy as np

    mat = np.asarray(mat, dtype=np.float32)
    if not len(mat):
        return Int8Vectors(np.asarray(ids, dtype=np.int64), np.zeros(mat.shape, np.int8),
                           np.zeros(0, np.float32), np.zeros(0, np.float32))
    peak = np.abs(mat).max(axis=1)
    scales = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    steps = mat / scales[:, None]  # within ±127 (up to rounding) by the choice of scale
    np.rint(steps, out=steps)
    codes = steps.astype(np.int8)
    resid = mat - steps * scales[:, None]
    err = np.sqrt(np.einsum("ij,ij->i", resid, resid))
    norm = np.sqrt(np.einsum("ij,ij->i", mat, mat))
    # Rounding, all of it within dim · u · (‖v‖ + ‖e‖) per dot product or norm (u = 2⁻²⁴):
    # the two float32 dot products compared (the exact one, the one from codes) and the
    # float32 arithmetic of ‖e‖ itself; twice that is the margin.
    rounding = 2 * mat.shape[1] * _U32 * (norm + err)
    slack = np.nextafter((err + rounding).astype(np.float32), np.float32(np.inf))
    return Int8Vectors(np.asarray(ids, dtype=np.int64), codes, scales, slack)


def quantize_blocks(blocks: Iterable[tuple[np.ndarray, np.ndarray]], dim: int,
                    floats: FloatRows | None = None) -> Int8Vectors:
    """:func:`quantize` over (ids, float32 rows) blocks, never holding more than one block
    in float32; each block's rows also go to ``floats`` when given."""
    import numpy as np

    parts = []
    for i, m in blocks:
        parts.append(quantize(i, m))
        if floats is not None:
            floats.append(m)
    if not parts:
        return Int8Vectors(np.zeros(0, np.int64), np.zeros((0, dim), np.int8),
                           np.zeros(0, np.float32), np.zeros(0, np.float32))
    if len(parts) == 1:
        return parts[0]
    return Int8Vectors(np.concatenate([p.ids for p in parts]), np.concatenate([p.codes for p in parts]),
                       np.concatenate([p.scales for p in parts]), np.concatenate([p.slack for p in parts]))


def exact_top(q: np.ndarray, n: int, approx: np.ndarray, slack: np.ndarray,
              exact: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` best rows by exact score ``q · v``, best first, ties in row order:
    (rows, float32 scores). ``approx``/``slack``: every row's approximate score and error
    bound per unit of ‖q‖ (several parts' rows may be concatenated); ``exact(rows)``: the
    float32 vectors of those rows, a row without one any more as NaNs (it is dropped)."""
    import numpy as np

    total = len(approx)
    n = min(int(n), total)
    if n <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    qnorm = float(np.linalg.norm(q.astype(np.float64)))
    upper = approx + slack * np.float32(qnorm * (1 + 1e-6))
    m = min(total, n + max(EXTRA, n // 2))
    scored_rows = np.zeros(0, np.int64)
    scored = np.zeros(0, np.float32)
    while True:
        if m < total:
            rows = np.argpartition(-approx, m - 1)[:m]
        else:
            rows = np.arange(total)
        new = rows[~np.isin(rows, scored_rows)]
        if len(new):
            new = np.sort(new)
            vecs = exact(new)
            sc = _products(vecs, q)
            keep = ~np.isnan(sc)
            scored_rows = np.concatenate([scored_rows, new[keep]])
            scored = np.concatenate([scored, sc[keep]])
            if (~keep).any():  # gone meanwhile: never a candidate again
                approx = approx.copy()
                upper = upper.copy()
                approx[new[~keep]] = -np.inf
                upper[new[~keep]] = -np.inf
        order = np.lexsort((scored_rows, -scored))
        if m >= total:
            break
        if len(order) >= n:
            nth = scored[order[n - 1]]
            outside = np.ones(total, dtype=bool)
            outside[scored_rows] = False
            if not outside.any() or upper[outside].max() < nth:
                break
        m = min(total, m * 2)
    top = order[:n]
    return scored_rows[top], scored[top]


def _products(vecs: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``vecs @ q`` in float32, each row's sum as the product of the whole matrix gives it.

    OpenBLAS's float32 matrix-vector kernel sums each row the same way whatever rows come
    with it, but only in groups of four rows (the last ``len % 4`` rows go through another
    kernel that rounds differently in the last bit): measured on this machine, a
    multiple-of-four set of rows scores bitwise as those rows of the whole matrix. So the
    candidates are padded to a multiple of four — their scores, and the order of near ties,
    are then the float32 matrix's."""
    import numpy as np

    pad = -len(vecs) % 4
    if pad:
        vecs = np.concatenate([vecs, np.zeros((pad, vecs.shape[1]), dtype=vecs.dtype)])
    with one_blas_thread():
        return (vecs @ q)[:len(vecs) - pad].astype(np.float32, copy=False)
