"""The daemon's heap: Python's cyclic garbage collector and glibc's allocator.

A mount of 20,000 files holds about 110,000 long-lived objects (catalog rows, inodes,
listings). Each full collection walks all of them: 8 per mount's life in the grep benchmark,
0.1–0.25 s each on a loaded machine, every one landing inside some FUSE request. Those
objects live as long as the mount and hold no reference cycles worth finding, so once the
mount is prepared they are moved out of the collector's reach (``gc.freeze``); objects made
later are collected as usual. ``benchmarks/results/gc-freeze.md`` has the measurement.

glibc keeps freed memory in per-thread arenas; the index download's 8 MB pieces and the
vectors' blocks stayed resident without :func:`map_large_allocations` and
:func:`release_free_memory` (``benchmarks/results/index-shards.md``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import time
from typing import Any


class GcStats:
    """Collections per generation and the time they took, since :meth:`install`."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def install(self) -> None:
        """Start counting (one callback per collection: nanoseconds of overhead)."""
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def uninstall(self) -> None:
        """Stop counting."""
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            g = int(info.get("generation", 2))
            self.collections[g] += 1
            self.seconds[g] += time.perf_counter() - self._started

    def as_dict(self) -> dict[str, Any]:
        """For ``brainfs status``: collections and seconds by generation, objects frozen."""
        return {"collections": list(self.collections),
                "seconds": [round(s, 4) for s in self.seconds],
                "frozen": gc.get_freeze_count()}


def freeze_long_lived() -> int:
    """Move every object alive now out of the collector's reach (no collection first: at
    mount that would cost what it saves); returns how many are frozen in all."""
    gc.freeze()
    return gc.get_freeze_count()


_LIBC: list[Any] = []
#: Allocations from this size up get a mapping of their own (see map_large_allocations).
MMAP_THRESHOLD = 4 * 1024 * 1024
#: The most malloc arenas a mount's threads share (see map_large_allocations).
MALLOC_ARENAS = 2


def _libc() -> Any:
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"))
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def map_large_allocations() -> None:
    """Have glibc give every allocation of ``MMAP_THRESHOLD`` bytes or more a mapping of
    its own, unmapped when freed (``mallopt(M_MMAP_THRESHOLD)``, process-wide; a no-op
    without glibc). By default glibc raises that threshold to the size of the first such
    block freed, after which the 8 MB pieces of a part's download come from per-thread
    arenas, which keep them once freed — ``malloc_trim`` does not give them back. Measured
    at 20,000 files: thirteen 8 MB blocks (105 MB) stayed resident in a mount after its
    index download (``benchmarks/results/index-shards.md``). Below the threshold (numpy's
    3 MB scoring buffers, SQLite's pages) the arenas keep reusing their memory."""
    libc = _libc()
    if libc is not None:
        try:
            libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD
            # And at most MALLOC_ARENAS arenas (glibc's default: 8 per CPU): each thread's
            # arena keeps its own free memory, and a mount's few worker threads gain
            # nothing from more.
            libc.mallopt(-8, MALLOC_ARENAS)  # M_ARENA_MAX
        except AttributeError:
            pass


def release_free_memory() -> None:
    """Give the C allocator's free memory back to the system (glibc's ``malloc_trim``; a
    no-op elsewhere): what a part's download, its vectors' loading or the model's load
    freed in the main heap."""
    libc = _libc()
    if libc is not None:
        try:
            libc.malloc_trim(0)
        except AttributeError:
            pass
