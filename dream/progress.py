"""Progress of a dream run on a terminal: one line per phase, with counts, redrawn in place.

Written to standard error, and only when it is a terminal (as ``brainfs import`` does):
a run in a script, a pipe or a test prints nothing here. Redrawing is throttled to ten times a
second so that a fast phase costs nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``phase("reading sessions", total=61)``, ``step()`` …, ``done("61 sessions")``."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = bool(self.stream.isatty()) if enabled is None else enabled
        self.name = ""
        self.total: int | None = None
        self.n = 0
        self.t0 = time.monotonic()
        self.phase_t0 = self.t0
        self._last = 0.0

    def phase(self, name: str, total: int | None = None) -> None:
        """Start a phase (the previous one, if open, is closed with its count)."""
        if self.name:
            self.done()
        self.name, self.total, self.n = name, total, 0
        self.phase_t0 = time.monotonic()
        self._draw(force=True)

    def step(self, n: int = 1) -> None:
        self.n += n
        self._draw()

    def count(self, done: int, total: int) -> None:
        """Set the count (a callback for work that reports ``(done, total)``)."""
        self.n, self.total = done, total
        self._draw()

    def done(self, note: str = "") -> None:
        """Close the current phase: its final count, time, and an optional note."""
        if not self.name:
            return
        secs = time.monotonic() - self.phase_t0
        count = (f"{self.n}/{self.total}" if self.total is not None else (str(self.n) if self.n else ""))
        self._write(f"\r\033[K  {self.name}: " + " ".join(x for x in (count, note, f"({secs:.1f} s)") if x) + "\n")
        self.name = ""

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self._last < 0.1):
            return
        self._last = now
        count = f" {self.n}/{self.total}" if self.total is not None else (f" {self.n}" if self.n else "")
        self._write(f"\r\033[K  {self.name}…{count}")

    def _write(self, s: str) -> None:
        if self.enabled:
            self.stream.write(s)
            self.stream.flush()
