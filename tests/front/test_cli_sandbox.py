"""The sandbox recipe of docs/SANDBOX.md, run as written with bubblewrap around a real mount
(real S3 server on loopback): the sandboxed process reads, greps, recalls and writes the
memory, cannot write the rest of the machine, and a read-only bind refuses writes while a
read-write sandbox's write is seen by another sandbox, reaches the bucket, and is seen by a
sandbox on a second mount of the same memory after that mount's relist."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from brainfs.backend.errors import NoSuchKey
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, upload_tree, write_tree

pytestmark = [pytest.mark.mount,
              pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) is not installed; .ci/setup installs it")]


def _recipe(repo_root: Path, tmp_path: Path) -> Path:
    """The recipe's shell block from docs/SANDBOX.md, as an executable script."""
    text = (repo_root / "docs" / "SANDBOX.md").read_text()
    block = re.search(r"```sh\n(# recipe: brainfs-sandbox.*?)```", text, re.S)
    assert block, "docs/SANDBOX.md lost its recipe block"
    script = tmp_path / "brainfs-sandbox"
    script.write_text("#!/bin/sh\nset -e\n" + block.group(1))
    script.chmod(0o755)
    return script


def _in(script: Path, mem: Path, mode: str, cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(script), str(mem), mode, "/bin/sh", "-c", cmd], capture_output=True,
                          text=True, timeout=60)


def test_bubblewrap_recipe(tmp_path: Path, repo_root: Path, cfg, corpus, store: ObjectStore,
                           mounter) -> None:
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    build_index(store, tmp_path / "ix.sqlite", None)
    build_pack(store, cfg)
    m = mounter(corpus, env_extra={"BRAINFS_EMBEDDER": "none"})
    deadline = time.monotonic() + 30
    while json.loads((m.mountpoint / ".brainfs/status").read_text())["recall"] != "ready":
        assert time.monotonic() < deadline, "recall never ready"
        time.sleep(0.05)
    sandbox = _recipe(repo_root, tmp_path)

    # Read-write: read, grep, recall, write; the rest of the machine is read-only.
    r = _in(sandbox, m.mountpoint, "rw",
            "cat GUIDE.md && grep -rl Biscuit notes && cat '.recall/Kyoto shelters' | head -3 "
            "&& printf 'from the sandbox\\n' > notes/sandbox.md && echo wrote")
    assert r.returncode == 0, r.stderr
    assert "Answer briefly" in r.stdout and "notes/pets/dog.md" in r.stdout and "wrote" in r.stdout
    assert "Recall" in r.stdout or "Kyoto" in r.stdout
    r = _in(sandbox, m.mountpoint, "rw", f"touch {tmp_path}/escaped; echo x > /usr/escaped")
    assert r.returncode != 0 and "Read-only file system" in r.stderr
    assert not (tmp_path / "escaped").exists()
    r = _in(sandbox, m.mountpoint, "rw", "ping -c1 -W1 127.0.0.1 || cat /proc/net/dev")
    assert "eth" not in r.stdout  # --unshare-all: only the sandbox's own loopback

    # A second, read-only sandbox sees the first one's write, and cannot write.
    r = _in(sandbox, m.mountpoint, "ro", "cat notes/sandbox.md && echo no > notes/ro.md")
    assert "from the sandbox" in r.stdout
    assert r.returncode != 0 and "Read-only file system" in r.stderr
    assert not (m.mountpoint / "notes" / "ro.md").exists()

    def landed() -> bool:
        try:
            return store.get("notes/sandbox.md")[0] == b"from the sandbox\n"
        except NoSuchKey:
            return False

    deadline = time.monotonic() + 30
    while not landed():
        assert time.monotonic() < deadline, "the sandbox's write never reached the bucket"
        time.sleep(0.1)
    with pytest.raises(NoSuchKey):
        store.head("notes/ro.md")

    # A sandbox on a second mount of the same memory (its own cache) sees the write once
    # that mount has relisted (relist_seconds, 1 s here).
    other = mounter(corpus, name="other", cfg=cfg.override(cache_dir=tmp_path / "cache-other"),
                    env_extra={"BRAINFS_EMBEDDER": "none", "BRAINFS_RELIST_SECONDS": "1"})
    store.put("notes/late.md", b"written after the second mount started\n")
    deadline = time.monotonic() + 30
    while True:
        r = _in(sandbox, other.mountpoint, "ro", "cat notes/sandbox.md notes/late.md")
        if r.returncode == 0:
            break
        assert time.monotonic() < deadline, f"the second mount never showed the writes: {r.stderr}"
        time.sleep(0.5)
    assert r.stdout == "from the sandbox\nwritten after the second mount started\n"
