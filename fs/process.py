"""Processes by their id: whether one still runs (the CLI waiting for a daemon to end, the
demo's S3 server, the benchmarks' servers and mounts)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists (another user's counts) and is not a zombie
    (a zombie has exited; only its parent's ``wait`` is missing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, and belongs to someone else
    try:
        # "PID (COMM) STATE …": COMM may itself hold ") ", so split at the last one.
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1]
    except (OSError, IndexError):
        return False  # gone between the two looks
    return state != "Z"
