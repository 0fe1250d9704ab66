"""The daemon's Python heap and the cyclic garbage collector.

A mount of 20,000 files holds about 110,000 long-lived objects (catalog rows, inodes,
listings). Each full collection walks all of them: 8 per mount's life in the grep benchmark,
0.1–0.25 s each on a loaded machine, every one landing inside some FUSE request. Those
objects live as long as the mount and hold no reference cycles worth finding, so once the
mount is prepared they are moved out of the collector's reach (``gc.freeze``); objects made
later are collected as usual. ``benchmarks/results/gc-freeze.md`` has the measurement.
"""

from __future__ import annotations

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
