"""A mount whose daemon is gone while its FUSE connection stays open (issue 27 item 4): a
daemon killed while one of its threads sleeps in the kernel never finishes dying, so its
``/dev/fuse`` stays open, no one answers, and every request there waits for ever, even a
``stat`` of the mountpoint. The next ``brainfs mount`` and ``brainfs umount --force`` must
recover it without a manual abort. The stuck thread is simulated by another process that
holds a copy of the daemon's ``/dev/fuse`` descriptor (``pidfd_getfd``) after the daemon
was killed: the connection is then exactly as such a daemon leaves it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from brainfs.backend.config import Config
from brainfs.backend.store import ObjectStore
from brainfs.fs.fusectl import in_proc_mounts

from tests.helpers import upload_tree, write_tree

CLI = [sys.executable, "-m", "brainfs.front.cli"]
TREE = {"notes/a.md": "kept across the stuck daemon\n"}
#: holds a copy of a daemon's /dev/fuse descriptor (pidfd_getfd(2) is syscall 438 on
#: x86-64 and aarch64)
HOLD = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(int(sys.argv[1]))
fd = libc.syscall(438, pidfd, int(sys.argv[2]), 0)
if fd < 0:
    sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
print("holding", flush=True)
time.sleep(3600)
"""


@pytest.fixture
def env(tmp_path: Path, cfg: Config) -> dict[str, str]:
    e = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
             BRAINFS_CACHE_DIR=str(cfg.cache_dir), BRAINFS_EMBEDDER="none",
             BRAINFS_RECALL_WARMUP="0")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET"):
        e.pop(k, None)
    return e


def _fuse_fd(pid: int) -> int:
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/fuse":
                return int(fd)
        except OSError:
            continue
    raise AssertionError(f"daemon {pid} holds no /dev/fuse")


@pytest.fixture
def stuck(store: ObjectStore, tmp_path: Path, corpus, mounter) -> Iterator[Path]:
    """A mountpoint whose daemon was killed (and reaped) while its connection stays open,
    answered by no one. The test must not touch it before recovering it."""
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    m = mounter(corpus)
    assert (m.mountpoint / "notes/a.md").read_text() == TREE["notes/a.md"]
    (m.mountpoint / "notes/b.md").write_text("written before the kill\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(m.proc.pid),
                               str(_fuse_fd(m.proc.pid))], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"holding\n"
        m.proc.kill()
        m.proc.wait()
        assert in_proc_mounts(str(m.mountpoint))
        yield m.mountpoint
    finally:
        holder.kill()
        holder.wait()
        if in_proc_mounts(str(m.mountpoint)):
            subprocess.run(["fusermount3", "-u", "-z", str(m.mountpoint)], check=False,
                           stderr=subprocess.DEVNULL)


def _cli(*args: str, env: dict[str, str], timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_the_next_mount_recovers_a_mount_whose_daemon_is_gone_and_whose_connection_hangs(
        stuck: Path, corpus, env) -> None:
    r = _cli("mount", str(corpus), str(stuck), env=env)
    try:
        assert r.returncode == 0, r.stderr
        assert "detached a mount whose daemon had died" in r.stderr, r.stderr
        assert (stuck / "notes/a.md").read_text() == TREE["notes/a.md"]
        assert (stuck / "notes/b.md").read_text() == "written before the kill\n"
    finally:
        u = _cli("umount", str(stuck), env=env)
    assert u.returncode == 0, u.stderr


def test_umount_force_recovers_it_and_a_new_mount_follows(stuck: Path, corpus, env) -> None:
    r = _cli("umount", "--force", str(stuck), "--timeout", "2", env=env)
    assert r.returncode == 0, r.stderr
    assert not in_proc_mounts(str(stuck))
    r = _cli("mount", str(corpus), str(stuck), env=env)
    try:
        assert r.returncode == 0, r.stderr
        assert (stuck / "notes/b.md").read_text() == "written before the kill\n"
    finally:
        u = _cli("umount", str(stuck), env=env)
    assert u.returncode == 0, u.stderr


def test_a_stopped_daemon_is_refused_by_mount_and_recovered_by_umount_force(
        store: ObjectStore, tmp_path: Path, corpus, mounter, env) -> None:
    # A daemon that runs but does not answer (stopped) is not killed by a mount: it says
    # so; `umount --force` detaches it and kills it, and the mount after that works.
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    m = mounter(corpus)
    (m.mountpoint / "notes/b.md").write_text("written before the stop\n")
    os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        r = _cli("mount", str(corpus), str(m.mountpoint), env=env)
        assert r.returncode != 0
        assert "does not answer" in r.stderr and "umount --force" in r.stderr, r.stderr
        r = _cli("umount", "--force", str(m.mountpoint), "--timeout", "2", env=env)
        assert r.returncode == 0, r.stderr
        m.proc.wait(timeout=30)
    finally:
        if m.proc.poll() is None:
            os.kill(m.proc.pid, signal.SIGCONT)
    r = _cli("mount", str(corpus), str(m.mountpoint), env=env)
    try:
        assert r.returncode == 0, r.stderr
        assert (m.mountpoint / "notes/b.md").read_text() == "written before the stop\n"
    finally:
        u = _cli("umount", str(m.mountpoint), env=env)
    assert u.returncode == 0, u.stderr


#: a process whose main thread exits (the exit(2) of one thread, not exit_group) while
#: another thread stays, as a killed daemon with a thread stuck in the kernel is left
HALF_DEAD = r"""
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
print("ready", flush=True)
time.sleep(float(__import__("sys").argv[1]))
ctypes.CDLL(None).syscall(60, 0)   # SYS_exit on x86-64: this thread only
"""


def _watchdog(pid: int, conn: int) -> subprocess.Popen:
    from brainfs.fs import watchdog

    start = watchdog.proc_state(pid)
    assert start is not None
    return subprocess.Popen([sys.executable, "-I", "-S", watchdog.__file__, str(pid), start[1],
                             str(conn)])


def test_the_watchdog_aborts_the_connection_of_a_daemon_that_cannot_finish_dying(
        store: ObjectStore, tmp_path: Path, corpus, mounter) -> None:
    from brainfs.fs.fusectl import connection_of

    upload_tree(store, write_tree(tmp_path / "src", TREE))
    m = mounter(corpus)
    conn = connection_of(str(m.mountpoint))
    assert conn is not None
    half = subprocess.Popen([sys.executable, "-c", HALF_DEAD, "1"], stdout=subprocess.PIPE)
    try:
        assert half.stdout.readline() == b"ready\n"
        dog = _watchdog(half.pid, conn)
        assert dog.wait(timeout=60) == 0
        # The connection is aborted: the mount answers "not connected", its daemon ends.
        with pytest.raises(OSError) as e:
            (m.mountpoint / "notes/a.md").read_text()
        assert e.value.errno == 107  # ENOTCONN
        m.proc.wait(timeout=30)
    finally:
        half.kill()
        half.wait()


def test_the_watchdog_leaves_a_daemon_that_exits_whole_alone(
        store: ObjectStore, tmp_path: Path, corpus, mounter) -> None:
    from brainfs.fs.fusectl import connection_of

    upload_tree(store, write_tree(tmp_path / "src", TREE))
    m = mounter(corpus)
    conn = connection_of(str(m.mountpoint))
    whole = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
    dog = _watchdog(whole.pid, conn)
    whole.wait()  # reaped: gone
    assert dog.wait(timeout=60) == 0
    assert (m.mountpoint / "notes/a.md").read_text() == TREE["notes/a.md"]
    assert m.alive()


def test_a_mount_starts_its_watchdog_and_stops_it_at_unmount(store: ObjectStore, tmp_path: Path,
                                                           corpus, mounter) -> None:
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    m = mounter(corpus)

    def dogs() -> list[int]:
        found = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    argv = (d / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if any(a.endswith(b"fs/watchdog.py") for a in argv) and str(m.proc.pid).encode() in argv:
                    found.append(int(d.name))
        return found

    assert len(dogs()) == 1
    assert m.stop() == 0
    assert dogs() == []
