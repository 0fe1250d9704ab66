"""Crash points for tests: ``BRAINFS_CRASH_AT=name[,name…]`` makes the process kill itself
(SIGKILL, as a crash would) when it reaches a named point of the write path.

The points sit between two steps whose order is what makes a write survive a crash (a
catalog commit and the file move after it, a PUT and the record of its outcome); a test
that kills the daemon from outside cannot hit such a window reliably. Unset, a point costs
one set lookup.
"""

from __future__ import annotations

import os
import signal

_POINTS: frozenset[str] = frozenset(
    p.strip() for p in os.environ.get("BRAINFS_CRASH_AT", "").split(",") if p.strip()
)


def crash_point(name: str) -> None:
    """Die here, by SIGKILL, if ``name`` is one of the configured crash points."""
    if name in _POINTS:
        os.kill(os.getpid(), signal.SIGKILL)
