"""A mount's watchdog: a small process that aborts the daemon's FUSE connection when the
daemon was killed but cannot finish dying.

A daemon killed (kill -9) while one of its threads sleeps uninterruptibly in the kernel (an
inode invalidation waiting for a page lock that a reader holds while it waits for this very
daemon, see fs/fusectl.py) keeps ``/dev/fuse`` open through that thread: its main thread is
a zombie, the stuck thread never wakes, and every request on the mount waits for ever. The
watchdog, started by the daemon at mount, looks at it through /proc every ``POLL_S``; once
the daemon's main thread has exited while another of its threads stays for ``WAIT_S``, it
writes to the connection's ``abort``, which fails the pending requests, wakes the thread
and lets the process end (the mount is then "not connected" until ``brainfs mount`` or
``brainfs umount`` detaches it). It leaves as soon as the daemon is gone, and does nothing on
a clean exit. Run as a script with only the standard library, so it starts in milliseconds
and holds nothing of the daemon's (least of all ``/dev/fuse``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

#: how often the daemon is looked at
POLL_S = 0.5
#: how long a thread may outlive the daemon's main thread before the connection is aborted
#: (threads of a process that exits go within milliseconds)
WAIT_S = 2.0
CONNECTIONS = "/sys/fs/fuse/connections"


def proc_state(pid: int) -> tuple[str, str] | None:
    """(state letter, start time in clock ticks) of process ``pid``'s main thread, or None
    when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], fields[19]


def lingering_threads(pid: int) -> int:
    """Threads of ``pid`` other than its main thread that have not exited."""
    try:
        tids = [t for t in os.listdir(f"/proc/{pid}/task") if t != str(pid)]
    except OSError:
        return 0
    alive = 0
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                if f.read().rsplit(") ", 1)[1][:1] not in "ZX":
                    alive += 1
        except (OSError, IndexError):
            continue
    return alive


def watch(pid: int, start: str, conn: int, poll_s: float = POLL_S, wait_s: float = WAIT_S) -> bool:
    """Watch process ``pid`` (started at ``start``) until it is gone; abort FUSE connection
    ``conn`` if its main thread exits while another thread stays ``wait_s``. True when it
    aborted."""
    since: float | None = None
    while True:
        time.sleep(poll_s)
        st = proc_state(pid)
        if st is None or st[1] != start:
            return False  # gone (and reaped: the pid may belong to another process now)
        if st[0] not in "ZX" or not lingering_threads(pid):
            since = None  # running, or exited whole and waiting for its parent
            continue
        since = since if since is not None else time.monotonic()
        if time.monotonic() - since >= wait_s:
            try:
                Path(f"{CONNECTIONS}/{conn}/abort").write_text("1")
            except OSError:
                return False  # the connection is gone already, or not ours to abort
            return True


def start(pid: int, conn: int) -> subprocess.Popen | None:
    """Start the watchdog of daemon ``pid`` (this process) and its FUSE connection
    ``conn``; None when it cannot be started."""
    st = proc_state(pid)
    if st is None:
        return None
    try:
        return subprocess.Popen([sys.executable, "-I", "-S", __file__, str(pid), st[1], str(conn)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None


def stop(proc: subprocess.Popen | None) -> None:
    """End the watchdog (at a clean shutdown, once the mount is gone)."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
