"""The ``brainfs`` command imports, for each command, only what that command needs: the
parser (``--help``), ``mount`` up to its daemon's start, ``status`` and ``umount`` load
neither boto3 nor the search stack nor the Python API, whose imports took 0.28 s of every
command's start (benchmarks/results/mount-first-read.md).

Each command runs in a fresh interpreter through the command line's entry point
(``brainfs.front.cli.main``, what the ``brainfs`` script calls), which then prints the modules
it loaded. The mount is a real one, on the session's S3 server, unmounted and its daemon
killed by PID in teardown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, NO_RELIST, REPO, is_mounted, upload_tree, write_tree

#: What no command below may load: boto3 and botocore (0.13 s), the search stack and the
#: Python API (which imports it), and the package metadata (0.02 s, read for -V only).
HEAVY = ("boto3", "botocore", "brainfs.backend.store", "brainfs.cache.search", "brainfs.front.api",
         "importlib.metadata")

#: Runs ``main(argv)`` and prints, as the last line, the modules of HEAVY it loaded.
RUN = """
import json, sys
from brainfs.front.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as e:
    rc = e.code
heavy = %r
print(json.dumps(sorted(m for m in sys.modules
                        if any(m == h or m.startswith(h + ".") for h in heavy))))
sys.exit(rc)
""" % (HEAVY,)


def run(*argv: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The command's result and the heavy modules it loaded."""
    r = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True,
                       cwd=REPO, env=env, timeout=120)
    lines = r.stdout.strip().splitlines()
    assert lines, (r.returncode, r.stdout, r.stderr)
    return r, json.loads(lines[-1])


def test_the_parser_and_its_help_load_nothing_heavy() -> None:
    for argv in (["--help"], ["mount", "--help"], ["status", "--help"], ["recall", "--help"]):
        r, loaded = run(*argv)
        assert r.returncode == 0, r.stderr
        assert "usage: brainfs" in r.stdout
        assert loaded == [], (argv, loaded)
    r, loaded = run("-V")
    assert r.returncode == 0 and r.stdout.startswith("brainfs "), (r.stdout, r.stderr)


def test_a_wrong_command_line_loads_nothing_heavy(tmp_path: Path) -> None:
    r, loaded = run("mount", "s3://memory/alice", str(tmp_path / "missing"))
    assert r.returncode == 1 and "does not exist" in r.stderr, r.stderr
    assert loaded == []
    r, loaded = run("status", str(tmp_path))
    assert r.returncode == 1 and "is not a running brainfs mount" in r.stderr, r.stderr
    assert not [m for m in loaded if m != "brainfs.front.api"], loaded


@pytest.mark.mount
def test_mount_status_and_umount_load_neither_boto3_nor_search(
        tmp_path: Path, s3_server, corpus: CorpusURL, store: ObjectStore,
        background: list[Path]) -> None:
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    env = dict(os.environ, AWS_ENDPOINT_URL=s3_server.url, BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
               BRAINFS_RECALL_WARMUP="0", **NO_RELIST)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET"):
        env.pop(k, None)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    r, loaded = run("mount", str(corpus), str(mp), env=env)
    assert r.returncode == 0, r.stderr
    assert f"mounted {corpus} at {mp}" in r.stdout
    # The daemon it started loads them; the command that started it did not need to.
    assert loaded == [], loaded
    assert (mp / "GUIDE.md").read_text() == CLI_TREE["GUIDE.md"]
    r, loaded = run("status", str(mp), env=env)
    assert r.returncode == 0 and f"{corpus} at" in r.stdout, r.stderr
    assert loaded == ["brainfs.front.api"], loaded  # the status read is the API's; nothing else
    r, loaded = run("umount", str(mp), env=env)
    assert r.returncode == 0 and f"unmounted {mp}" in r.stdout, r.stderr
    assert not [m for m in loaded if m != "brainfs.front.api"], loaded
    assert not is_mounted(mp)
