"""`brainfs umount` when the flush at unmount does not end as planned (issue 27): the
daemon killed while it uploads, or umount itself interrupted. What it says names what
happened, what is still pending and that the next mount uploads it; never "S3 unreachable"
of an S3 that answered. Real mounts through the command line, a real S3 server behind a
slowed proxy; every daemon is detached and killed by PID in teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.store import ObjectStore
from brainfs.front.cli.unmounted import FLUSH_ENDED, SIGNALLED, how_it_ended, pending_message

from helpers import CLI_TREE, is_mounted, s3get, sigint_as_a_terminal, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

CLI = [sys.executable, "-m", "brainfs.front.cli"]
FILES = 12


@pytest.fixture
def env(tmp_path: Path, cfg: Config) -> dict[str, str]:
    e = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
             BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
             BRAINFS_RECALL_WARMUP="0")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET"):
        e.pop(k, None)
    return e


@pytest.fixture
def mounted(tmp_path: Path, env, corpus, store: ObjectStore, proxy) -> Iterator[tuple]:
    """A daemon mounted by `brainfs mount` through the proxy, with FILES writes that a
    1 s round trip per request keeps pending at unmount; yields (mountpoint, env, pid)."""
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    penv = dict(env, AWS_ENDPOINT_URL=proxy.url)
    mp = tmp_path / "mnt"
    mp.mkdir()
    r = subprocess.run([*CLI, "mount", str(corpus), str(mp)], env=penv, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pid = json.loads((mp / ".brainfs" / "status").read_text())["pid"]
    proxy.set_delay(1.0)
    try:
        for i in range(FILES):
            (mp / "notes" / f"slow{i}.md").write_text(f"written to a slow S3 {i}\n")
        yield mp, penv, pid
    finally:
        proxy.set_delay(0.0)
        if is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False,
                           stderr=subprocess.DEVNULL)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _umount_in_flush(mp: Path, env: dict[str, str], pid: int) -> subprocess.Popen:
    """Start `brainfs umount` and return once the daemon has unmounted and is uploading."""
    um = subprocess.Popen([*CLI, "umount", str(mp), "--timeout", "120"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=sigint_as_a_terminal)
    wait_for(lambda: not is_mounted(mp), timeout=60, what="the unmount before the flush")
    assert os.path.exists(f"/proc/{pid}"), "the daemon ended before it had uploaded"
    return um


def _all_uploaded(store: ObjectStore) -> bool:
    return all(s3get(store, f"notes/slow{i}.md") == f"written to a slow S3 {i}\n".encode()
               for i in range(FILES))


def test_a_daemon_killed_while_it_uploads_at_unmount_is_said_so(mounted, corpus, store, proxy,
                                                                 env) -> None:
    """kill -9 of the daemon mid-flush (a service manager's stop timeout, the OOM killer):
    umount says the daemon was stopped before its uploads ended, how many wait in which
    cache, that the next mount uploads them, and exits 75; S3 never failed, so it does not
    blame S3. The next mount uploads them all."""
    mp, penv, pid = mounted
    um = _umount_in_flush(mp, penv, pid)
    os.kill(pid, signal.SIGKILL)
    out, err = um.communicate(timeout=60)
    assert um.returncode == 75, (um.returncode, out, err)
    assert "S3 unreachable" not in err and "S3 did not" not in err, err
    assert f"daemon {pid} was stopped before its uploads ended" in err, err
    assert " not uploaded yet" in err and env["BRAINFS_CACHE_DIR"] in err, err
    assert f"uploaded by the next mount of {corpus}" in err, err
    assert not _all_uploaded(store)
    proxy.set_delay(0.0)
    r = subprocess.run([*CLI, "mount", str(corpus), str(mp)], env=penv, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: _all_uploaded(store), timeout=60, what="the uploads after the remount")
    r = subprocess.run([*CLI, "umount", str(mp)], env=penv, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_umount_interrupted_while_the_daemon_uploads_says_where_it_stands(
        mounted, corpus, store, proxy, sig) -> None:
    """Ctrl-C (or a SIGTERM) to `brainfs umount` while the daemon uploads: umount says it
    was interrupted, that the daemon goes on uploading the pending writes by itself, and
    that the next mount uploads what is left; the daemon does, and exits."""
    mp, penv, pid = mounted
    um = _umount_in_flush(mp, penv, pid)
    um.send_signal(sig)
    out, err = um.communicate(timeout=60)
    assert um.returncode == 130, (um.returncode, out, err)
    assert "umount interrupted" in err and f"{mp} is unmounted" in err, err
    assert f"daemon {pid} goes on uploading" in err and "pending write" in err, err
    assert f"the next mount of {corpus} with that cache uploads it" in err, err
    assert "S3 unreachable" not in err, err
    proxy.set_delay(0.0)
    wait_for(lambda: not os.path.exists(f"/proc/{pid}"), timeout=90, what="the daemon's end")
    assert _all_uploaded(store)


def test_the_daemons_last_words_tell_a_kill_from_an_s3_that_refused(tmp_path: Path) -> None:
    """The log after the SIGTERM: the flush's own end (S3 refused: its reason), or only the
    signal (stopped mid-flush); with no log, the catalog's WAL left behind tells a kill."""
    log, catalog = tmp_path / "mount.log", tmp_path / "catalog.db"
    log.write_text("old line: " + FLUSH_ENDED + "\n")
    start = log.stat().st_size
    with open(log, "a") as f:
        f.write(f"2026-12-02T08:00:00.000 INFO brainfs.mount: {SIGNALLED}\n"
                "2026-12-02T08:00:01.000 WARNING brainfs.cache: upload of notes/a.md failed "
                "(will retry): SlowDown: please reduce your request rate\n")
    killed = how_it_ended(log, start, catalog)
    assert killed.flushed is False  # the line before the signal is an older daemon's
    with open(log, "a") as f:
        f.write(f"2026-12-02T08:01:01.000 WARNING brainfs.mount: 1 {FLUSH_ENDED}\n")
    ended = how_it_ended(log, start, catalog)
    assert ended.flushed is True and ended.reason == "SlowDown: please reduce your request rate"
    msg = pending_message(1, ended, 42, "/c", "s3://b/p", None)
    assert msg.startswith("1 write not uploaded yet (S3 did not take them: SlowDown") and "/c" in msg
    assert "was stopped" in pending_message(2, killed, 42, "/c", "s3://b/p", None)
    catalog.write_bytes(b"")
    assert how_it_ended(None, 0, catalog).flushed is True
    Path(f"{catalog}-wal").write_bytes(b"")
    assert how_it_ended(None, 0, catalog).flushed is False
    assert how_it_ended(None, 0, tmp_path / "none.db").flushed is None
