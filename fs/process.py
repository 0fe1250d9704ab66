"""Processes by their id: whether one still runs (the CLI waiting for a daemon to end, the
demo's S3 server, the benchmarks' servers and mounts), stopping a child we started, and
the process a thread belongs to, and the processes using a mount."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def stop_child(proc: subprocess.Popen, timeout: float) -> None:
    """Stop a child by its PID: SIGTERM (its clean exit), then SIGKILL after ``timeout``."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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


def tgid(pid: int) -> int | None:
    """The process (thread group) that thread ``pid`` belongs to, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def processes_using(root: str, exclude: set[int] = frozenset()) -> list[tuple[int, str, str]]:
    """Processes with a file, a mapping, their program or their working or root directory
    under ``root`` (an absolute path): ``(pid, command name, what)``, as ``fuser -m`` finds
    them. Only what ``/proc`` shows this user (another user's processes are not seen). The
    links are read, never followed: nothing here asks the file system under ``root``."""
    base = root.rstrip("/") + "/"
    found: list[tuple[int, str, str]] = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) in exclude:
            continue
        links = [str(d / "cwd"), str(d / "root"), str(d / "exe")]
        try:
            links += [str(f) for f in (d / "fd").iterdir()]
        except OSError:
            continue  # gone, or another user's
        hit = ""
        for link in links:
            try:
                target = os.readlink(link)
            except OSError:
                continue
            if target == root or target.startswith(base):
                hit = target
                break
        if not hit:
            # A file mapped into memory (its descriptor may be closed): a lazy detach would
            # make its next page fault SIGBUS.
            try:
                with open(d / "maps", "rb") as f:
                    for line in f:
                        fields = line.split(maxsplit=5)  # address perms offset dev inode path
                        mapped = fields[5].decode(errors="replace").strip() if len(fields) == 6 else ""
                        if mapped.startswith(base):
                            hit = mapped
                            break
            except OSError:
                pass
        if hit:
            try:
                comm = (d / "comm").read_text().strip()
            except OSError:
                comm = "?"
            found.append((int(d.name), comm, hit))
    return found
