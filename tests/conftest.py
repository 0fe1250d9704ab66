"""Shared fixtures: a real S3 server on loopback, corpora, and real FUSE mounts.

The mount fixture has S3QL's shape: wait for the mount, fail loudly if the daemon died,
unmount (lazily if needed) and kill by PID in teardown even when the test failed.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore

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


def upload_tree(store: ObjectStore, src: Path) -> int:
    """Put every file of ``src`` into the corpus; returns how many."""
    n = 0
    for p in sorted(src.rglob("*")):
        if p.is_file():
            store.put(p.relative_to(src).as_posix(), p.read_bytes())
            n += 1
    return n


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files under ``root`` from a {relative path: content} dict."""
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def is_mounted(mp: Path) -> bool:
    target = os.path.realpath(mp)
    with open("/proc/mounts") as f:
        return any(line.split()[1] == target for line in f if len(line.split()) > 1)


@dataclass
class Mount:
    """A running ``brainfs mount --foreground`` daemon."""

    proc: subprocess.Popen
    mountpoint: Path
    url: CorpusURL
    env: dict[str, str]
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 30) -> int:
        """Clean stop: SIGTERM (flush + unmount), wait."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        return self.cleanup()

    def status(self) -> dict:
        """The daemon's ``.brainfs/status`` JSON."""
        return json.loads((self.mountpoint / ".brainfs" / "status").read_text())

    def wait_listed(self, timeout: float = 30) -> None:
        """Wait until the mount has its first real LIST (a mount that started from the
        listing snapshot checks it in the background): from then on, another mount's
        write is a change this one sees at its next relist, never a race with the first."""
        deadline = time.monotonic() + timeout
        while self.status()["listing"] not in ("list", "snapshot, listed"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.mountpoint}: first listing not in after {timeout}s")
            time.sleep(0.05)

    def kill9(self) -> None:
        """Simulate a crash: SIGKILL the daemon, then detach the dead mount."""
        self.proc.kill()
        self.proc.wait()
        self.cleanup()

    def cleanup(self) -> int:
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        if is_mounted(self.mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", str(self.mountpoint)], check=False,
                           stderr=subprocess.DEVNULL)
        return self.proc.returncode


def start_mount(url: CorpusURL, mp: Path, cfg: Config, env_extra: dict[str, str] | None = None,
                args: list[str] | None = None, timeout: float = 60) -> Mount:
    """Start a daemon in the foreground (as a child) and wait until the mount answers."""
    mp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update({
        "AWS_ENDPOINT_URL": cfg.endpoint_url or "",
        "BRAINFS_CACHE_DIR": str(cfg.cache_dir),
        "BRAINFS_CONNECT_TIMEOUT": str(cfg.connect_timeout),
        "BRAINFS_READ_TIMEOUT": str(cfg.read_timeout),
        "BRAINFS_MAX_ATTEMPTS": str(cfg.max_attempts),
        "BRAINFS_CONFIG": "/dev/null",
        # Most mount tests never recall: don't spend CPU loading the model in each daemon.
        "BRAINFS_RECALL_WARMUP": "0",
    })
    env.pop("AWS_ACCESS_KEY_ID", None)
    env.pop("AWS_SECRET_ACCESS_KEY", None)
    env.update(env_extra or {})
    log = Path(str(cfg.cache_dir) + f"-mount-{next(_counter)}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as lf:
        proc = subprocess.Popen(
            [sys.executable, "-m", "brainfs.fs.cli", "mount", str(url), str(mp), "--foreground",
             *(args or [])],
            env=env, stdin=subprocess.DEVNULL, stdout=lf, stderr=subprocess.STDOUT,
        )
    m = Mount(proc, mp, url, env, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not m.alive():
            m.cleanup()
            raise AssertionError(f"mount daemon died (rc {proc.returncode}):\n{log.read_text()}")
        if is_mounted(mp):
            return m
        time.sleep(0.05)
    m.cleanup()
    raise AssertionError(f"mount did not come up in {timeout}s:\n{log.read_text()}")


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
    return Path(__file__).resolve().parent.parent


def copytree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.fixture(scope="session")
def embedder():
    """The real embedding model (all-MiniLM-L6-v2 from the installed package), loaded once."""
    from brainfs.cache.search.embedder import load_embedder

    return load_embedder("minilm")
