"""A writer that truncates an existing file and writes later keeps the old version until
its last close: another machine reads the old content meanwhile, and a crash in between
leaves the old content, never an empty file.

No-open mode sees no open and no last close (fs/procfds.py): the O_TRUNC comes as a bare
truncation, and a shell's ``cmd > f`` closes its first descriptor before cmd writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from helpers import NO_RELIST, s3get

pytestmark = pytest.mark.mount

OLD = b"precious old content\n"
IDLE = {**NO_RELIST, "BRAINFS_COMMIT_IDLE_SECONDS": "0.2"}

# Opens with O_TRUNC, says so, computes until told (a line on stdin), then writes once.
PY_WRITER = ("import sys\nf = open(sys.argv[1], 'w')\nprint('open', flush=True)\n"
             "sys.stdin.readline()\nf.write('new content\\n')\nf.close()\n")
# bash opens with O_TRUNC, dup2()s to fd 1, closes the first descriptor, then runs the group.
SH_WRITER = '(echo open >&2; read x; echo "new content") > "$1"'


def _writer(kind: str, path) -> subprocess.Popen:
    cmd = ([sys.executable, "-c", PY_WRITER, str(path)] if kind == "python"
           else ["bash", "-c", SH_WRITER, "_", str(path)])
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    said = (p.stdout if kind == "python" else p.stderr).readline()
    assert said == b"open\n", said
    return p


@pytest.mark.parametrize("kind", ["python", "shell"])
def test_a_truncating_writer_that_computes_first_publishes_nothing_empty(
        kind: str, corpus, store, mounter) -> None:
    store.put("notes/a.md", OLD)
    m = mounter(corpus, env_extra=IDLE)
    f = m.mountpoint / "notes/a.md"
    assert f.read_bytes() == OLD
    w = _writer(kind, f)
    try:
        time.sleep(1.5)  # several idle commits' worth: none may take the empty file
        assert s3get(store, "notes/a.md") == OLD
        w.stdin.write(b"go\n")
        w.stdin.close()
        assert w.wait(timeout=30) == 0, w.stderr.read()
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
    deadline = time.monotonic() + 20
    while s3get(store, "notes/a.md") != b"new content\n":
        assert time.monotonic() < deadline, s3get(store, "notes/a.md")
        time.sleep(0.05)


def test_a_crash_while_a_truncating_writer_computes_keeps_the_old_content(
        corpus, store, mounter) -> None:
    store.put("notes/a.md", OLD)
    m = mounter(corpus, env_extra=IDLE)
    f = m.mountpoint / "notes/a.md"
    assert f.read_bytes() == OLD
    w = _writer("shell", f)
    try:
        time.sleep(1.0)
        m.kill9()
    finally:
        w.kill()
        w.wait()
    m2 = mounter(corpus, name="mnt2", env_extra=IDLE)
    assert (m2.mountpoint / "notes/a.md").read_bytes() == OLD
    assert s3get(store, "notes/a.md") == OLD


def test_a_bare_truncate_is_still_committed_once_idle(corpus, store, mounter) -> None:
    """truncate(2) holds no descriptor: no close follows it, so the idle commit takes it."""
    store.put("notes/a.md", OLD)
    m = mounter(corpus, env_extra=IDLE)
    f = m.mountpoint / "notes/a.md"
    assert f.read_bytes() == OLD
    subprocess.run(["truncate", "-s", "3", str(f)], check=True)
    deadline = time.monotonic() + 20
    while s3get(store, "notes/a.md") != OLD[:3]:
        assert time.monotonic() < deadline, s3get(store, "notes/a.md")
        time.sleep(0.05)


def test_fsync_commits_while_the_descriptor_stays_open_and_survives_a_kill(
        corpus, store, mounter) -> None:
    """fsync(2) commits whoever holds what (a first version of the deferral above made
    the fsyncing process's own descriptor a reason to wait: a review found it)."""
    store.put("notes/a.md", OLD)
    m = mounter(corpus, env_extra=IDLE)
    f = m.mountpoint / "notes/a.md"
    assert f.read_bytes() == OLD
    fd = os.open(f, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, b"fsynced content\n")
        os.fsync(fd)
        m.kill9()
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    m2 = mounter(corpus, name="mnt2", env_extra=IDLE)
    assert (m2.mountpoint / "notes/a.md").read_bytes() == b"fsynced content\n"


def test_a_closed_write_commits_while_the_writer_holds_another_descriptor(
        corpus, store, mounter) -> None:
    """`exec 9>>f` (a lock or log descriptor kept open), then `echo … > f`: once written,
    the writer's close commits, whatever else it holds open."""
    store.put("notes/state.txt", OLD)
    m = mounter(corpus, env_extra=IDLE)
    f = m.mountpoint / "notes/state.txt"
    assert f.read_bytes() == OLD
    p = subprocess.Popen(["bash", "-c", 'exec 9>>"$1"; echo "state 1" > "$1"; echo done; read x',
                          "_", str(f)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"done\n"
        deadline = time.monotonic() + 20
        while s3get(store, "notes/state.txt") != b"state 1\n":
            assert time.monotonic() < deadline, s3get(store, "notes/state.txt")
            time.sleep(0.05)
    finally:
        p.kill()
        p.wait()
