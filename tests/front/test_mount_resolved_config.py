"""A background mount's daemon runs with the config its parent resolved (issue 32, item 3).

``brainfs mount`` resolves defaults < file < environment < flags once, settles the cache
directory, and hands the result to the daemon it spawns; the daemon reads neither the file
nor the environment again. Here the config file changes between the two (the parent's
``subprocess.Popen`` is wrapped to rewrite it just before the daemon starts): the mount must
show what the parent resolved, and the cache directory named in the changed file must never
be made.

Real S3 server on loopback, real FUSE mount; the daemon is unmounted and killed by PID in
teardown (the ``background`` fixture).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, is_mounted, upload_tree, write_tree

pytestmark = pytest.mark.mount

#: The parent ``brainfs mount``, run as a script so that the config file can change after it
#: has resolved its config and before its daemon starts: the one ``subprocess.Popen`` of a
#: background mount is the daemon's spawn.
PARENT = textwrap.dedent("""
    import subprocess
    import sys
    from pathlib import Path

    from brainfs.front.cli import main

    toml, changed = Path(sys.argv[1]), sys.argv[2]
    spawn = subprocess.Popen

    def popen(*args, **kwargs):
        toml.write_text(changed)
        return spawn(*args, **kwargs)

    subprocess.Popen = popen
    sys.exit(main(sys.argv[3:]))
""")


def _toml(cache_dir: Path, budget: str, listing: str) -> str:
    return f'cache_dir = "{cache_dir}"\ncache_budget_bytes = "{budget}"\nlisting = "{listing}"\n'


def test_daemon_uses_the_config_its_parent_resolved(tmp_path: Path, cfg: Config, corpus,
                                                    store: ObjectStore, background) -> None:
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    mp = tmp_path / "mnt"
    mp.mkdir()
    toml = tmp_path / "config.toml"
    resolved_dir, other_dir = tmp_path / "cache-resolved", tmp_path / "cache-changed"
    toml.write_text(_toml(resolved_dir, "100M", "corpus"))
    changed = _toml(other_dir, "300M", "working-set")
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG=str(toml),
               BRAINFS_EMBEDDER="none", BRAINFS_RECALL_WARMUP="0")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET",
              "BRAINFS_CACHE_DIR", "BRAINFS_CACHE_BUDGET_BYTES", "BRAINFS_LISTING"):
        env.pop(k, None)
    background.append(mp)
    r = subprocess.run([sys.executable, "-c", PARENT, str(toml), changed, "mount", str(corpus),
                        str(mp)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert toml.read_text() == changed  # the file did change before the daemon started
    assert is_mounted(mp)
    st = json.loads((mp / ".brainfs" / "status").read_text())
    assert st["cache_dir"] == str(resolved_dir)
    assert st["cache_budget_bytes"] == 100 * 1024**2
    assert st["listing_mode"] == "corpus"
    assert not other_dir.exists()
    # The daemon's log rotation comes from the same config; it logs where its parent said.
    assert (resolved_dir / "mount.log").exists()
    u = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "umount", str(mp)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert u.returncode == 0, u.stderr
