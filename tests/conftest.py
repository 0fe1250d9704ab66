"""Shared fixtures: a real S3 server on loopback, corpora, and real FUSE mounts.

The mount fixture has S3QL's shape: wait for the mount, fail loudly if the daemon died,
unmount (lazily if needed) and kill by PID in teardown even when the test failed. The plain
functions and data the tests share (trees, mounts, waits, small memories) are in ``helpers.py``.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from helpers import REPO, Mount, is_mounted, start_mount

_counter = itertools.count()


@pytest.fixture(scope="session", autouse=True)
def _private_vector_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests (and the daemons they start) never write the user's own vector cache
    (~/.cache/brainfs/embeddings.sqlite): one of their own, removed with the temp dir."""
    old = os.environ.get("BRAINFS_EMBED_CACHE")
    os.environ["BRAINFS_EMBED_CACHE"] = str(tmp_path_factory.mktemp("vectors") / "embeddings.sqlite")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("BRAINFS_EMBED_CACHE", None)
        else:
            os.environ["BRAINFS_EMBED_CACHE"] = old


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalS3]:
    """One ``rclone serve s3`` for the whole session (stopped by PID at the end)."""
    root = tmp_path_factory.mktemp("s3root")
    server = LocalS3(root).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cfg(s3_server: LocalS3, tmp_path: Path) -> Config:
    """A config pointing at the test server, with a private cache dir, fast timeouts."""
    return Config().override(endpoint_url=s3_server.url, cache_dir=tmp_path / "cache",
                             connect_timeout=1.0, read_timeout=3.0, max_attempts=2)


@pytest.fixture
def corpus(s3_server: LocalS3, cfg: Config) -> CorpusURL:
    """A fresh, empty corpus (own bucket) on the test server."""
    url = CorpusURL.parse(f"s3://t{os.getpid()}-{next(_counter)}/users/a")
    store = ObjectStore(url, cfg)
    store.create_bucket()
    store.close()
    return url


@pytest.fixture
def proxy(s3_server: LocalS3) -> Iterator:
    """The delay/fault-injecting proxy in front of the session's server (no added delay)."""
    from benchmarks.s3proxy import S3Proxy

    with S3Proxy(("127.0.0.1", s3_server.port), delay=0.0) as p:
        yield p


@pytest.fixture
def store(corpus: CorpusURL, cfg: Config) -> Iterator[ObjectStore]:
    s = ObjectStore(corpus, cfg)
    yield s
    s.close()


@pytest.fixture
def mounter(cfg: Config, tmp_path: Path) -> Iterator:
    """Factory of mounts; every mount is stopped and detached at teardown, pass or fail."""
    mounts: list[Mount] = []

    def make(url: CorpusURL, name: str = "mnt", mountpoint: Path | None = None, **kw) -> Mount:
        m = start_mount(url, mountpoint or tmp_path / name, kw.pop("cfg", cfg), **kw)
        mounts.append(m)
        return m

    yield make
    for m in mounts:
        m.cleanup()
        if m.proc.returncode not in (0, None, -9) and m.log.exists():
            sys.stderr.write(f"--- daemon log {m.log} ---\n{m.log.read_text()[-4000:]}\n")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def embedder():
    """The real embedding model (all-MiniLM-L6-v2 from the installed package), loaded once."""
    from brainfs.cache.search.embedder import load_embedder

    return load_embedder("minilm")


@pytest.fixture
def background() -> Iterator[list[Path]]:
    """Mountpoints of daemons started in the background; detached and killed at the end."""
    mps: list[Path] = []
    yield mps
    for mp in mps:
        pid = None
        try:
            pid = json.loads((mp / ".brainfs" / "status").read_text())["pid"]
        except (OSError, ValueError, KeyError):
            pass
        if is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False, stderr=subprocess.DEVNULL)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
