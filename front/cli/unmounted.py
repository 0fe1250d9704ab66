"""Why a daemon that `brainfs umount` stopped left writes pending: S3 did not take them, or
the daemon was stopped (killed) before its uploads ended.

The daemon is not umount's child, so its exit status cannot be read; what it left behind
tells. At unmount the daemon uploads what is pending and then says, in its log, how many
uploads it leaves (``FLUSH_ENDED``) with the failures before that; killed mid-flush it says
nothing more. Its catalog tells too: closing the catalog checkpoints and removes its WAL,
which a killed daemon leaves behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: the daemon's last word when its flush at unmount ended with uploads left (fs/daemon.py)
FLUSH_ENDED = "uploads still pending; the next mount will finish them"
#: the daemon's first word after umount's SIGTERM (fs/daemon.py)
SIGNALLED = "signal received: unmounting"
#: an upload that failed, with S3's reason (cache/local/workingset.py)
UPLOAD_FAILED = re.compile(r"upload of \S+ failed \(will retry\): (?P<why>[^\"\n]*)")


def daemon_log(pid: int) -> Path | None:
    """The log file the daemon ``pid`` writes (its ``--log-file``), or None (a daemon that
    logs to its stderr: the journal under systemd, a terminal)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    for i, a in enumerate(argv):
        if a == "--log-file" and i + 1 < len(argv):
            return Path(cwd, argv[i + 1])
        if a.startswith("--log-file="):
            return Path(cwd, a.split("=", 1)[1])
    return None


def log_size(path: Path | None) -> int:
    """Where the daemon's next log line will start (0 when there is no log yet)."""
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _read_since(path: Path, offset: int) -> str | None:
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size < offset:
                offset = 0  # rotated meanwhile: the new file holds the last lines
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return None


@dataclass
class Ending:
    """How the daemon's flush at unmount ended."""

    #: True: it ended its flush itself (S3 did not take everything); False: it was stopped
    #: before (killed, or interrupted while it uploaded); None: nothing tells
    flushed: bool | None
    #: S3's last refusal, as the daemon logged it
    reason: str | None = None


def how_it_ended(log: Path | None, offset: int, catalog: Path | None) -> Ending:
    """Read the daemon's log from ``offset`` (its size when the SIGTERM was sent) and the
    state of its ``catalog`` once the daemon is gone."""
    text = _read_since(log, offset) if log is not None else None
    reason = None
    if text is not None:
        failures = UPLOAD_FAILED.findall(text)
        reason = failures[-1].strip() if failures else None
        if FLUSH_ENDED in text:
            return Ending(True, reason)
        if SIGNALLED in text:
            return Ending(False, reason)
    if catalog is not None and catalog.exists():
        # A catalog closed by its daemon has no WAL left; a killed daemon leaves it.
        return Ending(not Path(f"{catalog}-wal").exists(), reason)
    return Ending(None, reason)


def pending_message(left: int, ending: Ending, pid: int, cache_dir: str, corpus: str,
                    last_error: str | None) -> str:
    """The warning for ``left`` writes the daemon left in ``cache_dir``."""
    n = f"{left} write{'s' if left != 1 else ''} not uploaded yet"
    keep = (f"kept in {cache_dir}, uploaded by the next mount of {corpus} with that cache; "
            "do not delete it")
    if ending.flushed is False:
        return (f"daemon {pid} was stopped before its uploads ended (killed or interrupted "
                f"while it uploaded at unmount): {n}, {keep}")
    why = ending.reason or last_error
    if ending.flushed:
        return f"{n} (S3 did not take them: {why or 'no answer in time'}): {keep}"
    return (f"daemon {pid} ended with {n}" + (f" (last S3 error: {why})" if why else "")
            + f": {keep}")


__all__ = ["Ending", "daemon_log", "how_it_ended", "log_size", "pending_message"]
