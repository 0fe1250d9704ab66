"""The FUSE control filesystem: aborting a mount's connection.

A daemon killed while one of its threads sleeps uninterruptibly in the kernel (an inode
invalidation waiting for a page lock that a reader holds while it waits for that very
daemon) can never finish dying, so it never closes ``/dev/fuse`` and every request on the
mount waits forever. Writing to ``/sys/fs/fuse/connections/<N>/abort`` ends the connection
from outside: pending and future requests fail with ENOTCONN, the stuck thread wakes, and
the mount can be detached. ``N`` is the minor device number of the mount, read from
``/proc/self/mountinfo`` because ``stat`` on a hung mount would hang too.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

CONNECTIONS = Path("/sys/fs/fuse/connections")


def _unescape(field: str) -> str:
    """A mount table's path field as a path: the kernel writes space, tab, newline and
    backslash as octal escapes (``\\040``); every other byte, UTF-8 included, is as is."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def proc_mounts() -> Iterator[tuple[str, str]]:
    """(mountpoint, filesystem type) of every mount in /proc/mounts, the mountpoint's octal
    escapes decoded. Reading it touches no mountpoint: a stat there would hang on a hung
    mount."""
    with open("/proc/mounts", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 1:
                yield _unescape(parts[1]), parts[2] if len(parts) > 2 else ""


def mountinfo() -> Iterator[tuple[int, int, str, str]]:
    """(mount id, device minor, mountpoint, filesystem type) of every mount in
    ``/proc/self/mountinfo``, read without touching any mountpoint."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 10 or "-" not in parts:
                continue
            yield (int(parts[0]), int(parts[2].split(":")[1]), _unescape(parts[4]),
                   parts[parts.index("-") + 1])


def in_proc_mounts(target: str) -> bool:
    """True when the absolute path ``target`` is listed in /proc/mounts (read without
    touching the mountpoint: a stat there would hang on a hung mount)."""
    return any(mp == target for mp, _ in proc_mounts())


def brainfs_mount_above(path: Path) -> Path | None:
    """The brainfs mount that holds ``path`` (a directory inside a mount, or the mountpoint
    itself), found in /proc/mounts without touching the mount; None if there is none."""
    # abspath, not realpath: resolving links inside the mount would ask its daemon.
    here = os.path.abspath(path)
    best = ""
    for mp, fstype in proc_mounts():
        if fstype == "fuse.brainfs" and (here == mp or here.startswith(mp.rstrip("/") + "/")):
            best = max(best, mp, key=len)
    return Path(best) if best else None


def is_mountpoint(path: Path) -> bool:
    """True when ``path`` (symbolic links resolved) is listed in /proc/mounts."""
    return in_proc_mounts(os.path.realpath(path))


def connection_of(mountpoint: str) -> int | None:
    """The FUSE connection number of the mount at ``mountpoint``, or None when nothing is
    mounted there. The path is normalised without touching it (no realpath: that would
    stat the hung mount)."""
    target = os.path.abspath(mountpoint)
    found = None
    for _, minor, mp, fstype in mountinfo():
        if mp == target and fstype.startswith("fuse"):
            found = minor  # the last mount there wins
    return found


def abort_connection(mountpoint: str) -> bool:
    """Abort the FUSE connection of the mount at ``mountpoint``; True when it was done."""
    conn = connection_of(mountpoint)
    if conn is None:
        return False
    if not (CONNECTIONS / str(conn)).exists():
        _mount_fusectl()
    try:
        (CONNECTIONS / str(conn) / "abort").write_text("1")
    except OSError:
        return False  # fusectl not mounted, or not ours to abort
    return True


def _mount_fusectl() -> None:
    """Mount the control filesystem where systemd usually does (root only; a machine
    without systemd, like a container, may not have it)."""
    if os.geteuid() != 0 or not CONNECTIONS.is_dir():
        return
    subprocess.run(["mount", "-t", "fusectl", "fusectl", str(CONNECTIONS)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
