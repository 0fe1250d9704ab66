"""What a mount does before it answers, counted at the S3 proxy: the bucket is checked
once (by the daemon, not again by the command that starts it), the preload pack downloads
while the listing snapshot is read, and a mount's errors still reach the user as one line.

Real S3 server behind the proxy, real FUSE mounts; every daemon is unmounted and killed by
PID in teardown.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.s3proxy import FaultPlan
from brainfs.backend import listing
from brainfs.backend.config import Config
from brainfs.backend.server import free_port
from brainfs.cache.local.pack import build_pack

from helpers import CLI_TREE, NO_RELIST, is_mounted, one_error_line, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

CLI = [sys.executable, "-m", "brainfs.front.cli"]


@pytest.fixture
def env(tmp_path: Path, proxy) -> dict[str, str]:
    """The mount command's environment: through the proxy, a private cache, no relist."""
    e = dict(os.environ, AWS_ENDPOINT_URL=proxy.url, BRAINFS_CONFIG="/dev/null",
             BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
             BRAINFS_RECALL_WARMUP="0", **NO_RELIST)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET"):
        e.pop(k, None)
    return e


def cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_the_bucket_is_checked_once_per_mount(tmp_path: Path, env, corpus, store, proxy,
                                              background) -> None:
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    proxy.reset_stats()
    # Bucket HEADs counted as "faults" that change nothing there (a bucket has no ETag).
    proxy.force("no_etag", count=100, methods={"HEAD"}, key_pattern=rf"^/{corpus.bucket}/?$")
    r = cli("mount", str(corpus), str(mp), env=env)
    assert r.returncode == 0, r.stderr
    seen = proxy.stats
    # One HEAD of the bucket and one LIST (the corpus fits a page), both the daemon's: the
    # command that started it asked for neither.
    assert seen["faults"]["no_etag"] == 1 and seen["by_kind"].get("LIST", 0) == 1, seen
    assert (mp / "GUIDE.md").read_text() == CLI_TREE["GUIDE.md"]
    r = cli("umount", str(mp), env=env)
    assert r.returncode == 0, r.stderr


def test_mount_errors_reach_the_command_as_one_line(tmp_path: Path, env, corpus, store,
                                                    background) -> None:
    """Checked by the daemon alone, a wrong bucket or a dead endpoint is still the mount
    command's one error line, and nothing is left mounted."""
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    line = one_error_line(cli("mount", f"s3://no-such-bucket-{os.getpid()}/p", str(mp), env=env))
    assert f"'no-such-bucket-{os.getpid()}' does not exist" in line, line
    assert not is_mounted(mp)
    assert not (tmp_path / "cache").exists(), "a mount that never started left its cache"
    dead = f"http://127.0.0.1:{free_port()}"
    line = one_error_line(cli("mount", str(corpus), str(mp), env=dict(
        env, AWS_ENDPOINT_URL=dead, BRAINFS_MAX_ATTEMPTS="1")))
    assert "cannot reach" in line and dead in line, line
    assert not is_mounted(mp) and not (tmp_path / "cache").exists()
    # The mountpoint is refused before any daemon starts, as before.
    (mp / "x").write_text("in the way\n")
    line = one_error_line(cli("mount", str(corpus), str(mp), env=env))
    assert "is not empty" in line, line


def test_the_pack_downloads_while_the_snapshot_is_read(tmp_path: Path, corpus, store,
                                                       cfg: Config, proxy, mounter) -> None:
    files = {f"knowledge/p{i:03d}.md": f"fact {i}\n" for i in range(50)}
    files["GUIDE.md"] = "the guide\n"
    upload_tree(store, write_tree(tmp_path / "src", files))
    build_pack(store, cfg)
    listing.write(store, list(store.list()))
    # The snapshot's GET is held 6 s (then cut, and asked again).
    proxy.set_faults(FaultPlan(stall_seconds=6.0))
    proxy.force("stall", count=1, methods={"GET"}, key_pattern=r"listing\.json\.gz")
    proxy.reset_stats()
    started: dict = {}

    def mount() -> None:
        try:
            started["mount"] = mounter(corpus, cfg=cfg.override(
                endpoint_url=proxy.url, read_timeout=30.0, max_attempts=3), env_extra=NO_RELIST)
        except BaseException as e:  # noqa: BLE001 - reported below
            started["error"] = e

    t = threading.Thread(target=mount, daemon=True)
    t.start()
    # Meanwhile the pack's GET has gone out: the two come in one round trip, not two.
    wait_for(lambda: proxy.stats["by_kind"].get("GET", 0) >= 2, timeout=4.0,
             what="the pack's GET while the snapshot's is held")
    assert proxy.stats["faults"]["stall"] == 1
    t.join(timeout=60)
    assert "error" not in started, started.get("error")
    m = started["mount"]
    st = m.status()["startup"]
    assert st["listing_from"] == "snapshot" and st["preload_from_pack"] == len(files), st
    for p in ("GUIDE.md", "knowledge/p000.md", "knowledge/p049.md"):
        assert (m.mountpoint / p).read_text() == files[p]


def test_listed_names_sizes_and_times_are_the_bucket_s(tmp_path: Path, env, corpus, store,
                                                       background) -> None:
    """LIST pages are read by brainfs's own parser (backend/listparse.py), not botocore's:
    names that XML escapes or S3 URL-encodes, sizes and modification times come out as the
    objects have them, in a mount and in ``brainfs ls``."""
    names = ["notes/a & b.md", "notes/less<than>.md", "notes/quote\"'.md", "notes/café ü.md",
             "notes/plus+sign%20.md", "notes/日本語.md", "GUIDE.md"]
    for i, n in enumerate(names):
        store.put(n, b"x" * (i + 1))
    heads = {n: store.head(n) for n in names}
    r = cli("ls", str(corpus), "--long", env=env)
    assert r.returncode == 0, r.stderr
    shown = [re.fullmatch(r"- +\d+  \S+ \S+  (.*)", line) for line in r.stdout.splitlines()]
    assert sorted(m.group(1) for m in shown if m) == sorted(names), r.stdout
    objs = {o.path: o for o in store.list()}
    assert set(objs) == set(names)
    for n, h in heads.items():
        assert (objs[n].size, objs[n].etag) == (h.size, h.etag), n
        assert abs(objs[n].mtime - h.mtime) < 1.0, (n, objs[n].mtime, h.mtime)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    r = cli("mount", str(corpus), str(mp), "--listing", "corpus", env=env)
    assert r.returncode == 0, r.stderr
    for i, n in enumerate(names):
        st = os.stat(mp / n)
        assert st.st_size == i + 1, n
        assert abs(st.st_mtime - heads[n].mtime) < 1.0, n
    r = cli("umount", str(mp), env=env)
    assert r.returncode == 0, r.stderr
