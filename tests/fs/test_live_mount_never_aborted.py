"""`brainfs mount` over a mountpoint that a live daemon serves never aborts it, even when it
cannot tell that daemon by its command line (options between SOURCE and MOUNTPOINT here):
the mount answers a status read, so it is alive, and the second mount is refused as on any
mountpoint in use. Before, the recovery of dead daemons' mounts (front/cli/mounting.py
``_recover_mountpoint``) aborted the live connection: the writer's next write failed with
ENOTCONN (found by a review; the same with a mountpoint given through a symlink)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from helpers import Mount, is_mounted


def test_a_second_mount_never_aborts_a_live_daemon_it_does_not_recognise(corpus, cfg,
                                                                         tmp_path: Path) -> None:
    mp = tmp_path / "mnt"
    mp.mkdir()
    env = dict(os.environ)
    env.update({"AWS_ENDPOINT_URL": cfg.endpoint_url or "", "BRAINFS_CACHE_DIR": str(cfg.cache_dir),
                "BRAINFS_CONFIG": "/dev/null", "BRAINFS_RECALL_WARMUP": "0"})
    env.pop("AWS_ACCESS_KEY_ID", None)
    env.pop("AWS_SECRET_ACCESS_KEY", None)
    log = tmp_path / "daemon.log"
    with open(log, "wb") as lf:
        # --foreground between SOURCE and MOUNTPOINT: not the command line the recovery looks for
        proc = subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "mount", str(corpus),
                                 "--foreground", str(mp)], env=env, stdin=subprocess.DEVNULL,
                                stdout=lf, stderr=subprocess.STDOUT)
    m = Mount(proc, mp, corpus, env, log)
    try:
        deadline = time.monotonic() + 60
        while not is_mounted(mp):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the mount did not come up"
            time.sleep(0.05)
        with open(mp / "work.md", "w") as f:
            f.write("half of an edit\n")
            f.flush()
            r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "mount", str(corpus), str(mp)],
                               env=env, capture_output=True, text=True, timeout=120)
            assert "detached a mount" not in r.stderr, r.stderr
            assert r.returncode != 0, "a second mount over a live one must be refused"
            f.write("rest of the edit\n")
        assert proc.poll() is None, log.read_text()[-2000:]
        assert (mp / "work.md").read_text() == "half of an edit\nrest of the edit\n"
    finally:
        subprocess.run([sys.executable, "-m", "brainfs.front.cli", "umount", str(mp)], env=env,
                       capture_output=True, timeout=120)
        m.cleanup()
