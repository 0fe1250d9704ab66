"""What several test files share: paths of the repository, building and uploading small
memory trees, starting and waiting on real mounts, reading the bucket behind brainfs's back,
and the small memories more than one file mounts.

A plain module beside ``conftest.py`` (importable as ``helpers``: pytest's default
``prepend`` import mode puts the folder of the root ``conftest.py`` on ``sys.path``); test
files import from here, never from each other or from ``conftest``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import boto3
from botocore.config import Config as BotoConfig

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

#: The folder of the tests, the repository's root, and the fixtures' data.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
#: A LoCoMo-format fixture: two short conversations with questions (not the real data set).
LOCOMO_MINI = DATA / "locomo-mini.json"

#: Numbers the mount logs of one session apart.
_counter = itertools.count()


# --------------------------------------------------------------------------- trees


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


# --------------------------------------------------------------------------- mounts


def is_mounted(mp: Path) -> bool:
    """Whether ``mp`` is a mount point now (by /proc/mounts)."""
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
            [sys.executable, "-m", "brainfs.front.cli", "mount", str(url), str(mp), "--foreground",
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


def wait_for(pred, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``pred`` every 50 ms until it is true; fail after ``timeout`` seconds (a ceiling
    for a wait that normally ends far sooner, never a measured limit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


#: No relist during a test: the second mount keeps the view it had (as for up to a minute
#: with the default relist period).
NO_RELIST = {"BRAINFS_RELIST_SECONDS": "3600", "BRAINFS_UPLOAD_RETRY_SECONDS": "1"}


def settle(mp: Path, timeout: float = 30) -> None:
    """Wait until the mount has nothing dirty or pending (twice in a row)."""
    deadline = time.monotonic() + timeout
    zero = 0
    while time.monotonic() < deadline:
        st = json.loads((mp / ".brainfs" / "status").read_text())
        idle = (st["pending_uploads"] == 0 and st["dirty_files"] == 0
                and st.get("uncommitted", 0) == 0)
        zero = zero + 1 if idle else 0
        if zero >= 2:
            return
        time.sleep(0.2)
    raise AssertionError(f"uploads of {mp} did not settle in {timeout}s")


# --------------------------------------------------------------------------- the bucket


def s3get(store: ObjectStore, path: str) -> bytes | None:
    """The object's bytes in the bucket, or None if there is none."""
    try:
        return store.get(path)[0]
    except NoSuchKey:
        return None


def raw_client(endpoint: str, secret: str = "brainfs-local-secret", key: str = "brainfs"):
    """A boto3 client that bypasses brainfs's key validation."""
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key,
                        aws_secret_access_key=secret, region_name="us-east-1",
                        config=BotoConfig(s3={"addressing_style": "path"},
                                          request_checksum_calculation="when_required",
                                          response_checksum_validation="when_required",
                                          retries={"total_max_attempts": 1}))


def all_keys(client, bucket: str) -> dict[str, str]:
    """{key: ETag} of every object in ``bucket``, through a raw client."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            out[o["Key"]] = o["ETag"]
    return out


# --------------------------------------------------------------------------- small memories


#: A small memory for the command line's tests (a guide, notes, one session).
CLI_TREE = {
    "GUIDE.md": "---\ntitle: Guide\n---\n\nAnswer briefly. Cite sources.\n",
    "notes/travel/kyoto.md": "---\ntype: fact\nscope: travel\nconfidence: 0.9\n---\n\n"
                             "Mara met Sora City Lab in Kyoto in May 2023.\n",
    "notes/pets/dog.md": "---\ntype: fact\nscope: pets\n---\n\nMara adopted a dog named Biscuit.\n",
    "notes/work/job.md": "---\ntype: fact\nscope: work\n---\n\nAna works at Sora City Lab on maps.\n",
    "sessions/s1/transcript.md": "---\nsession: s1\ndate: 2023-05-08T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
                                 "[D1:1] Mara: I met the Kyoto Animal Shelter team.\n\n"
                                 "[D1:2] Ana: Kyoto has many shelters and labs.\n\n"
                                 "[D1:3] Mara: The Kyoto trip was great, we visited temples.\n",
}


def one_error_line(r: subprocess.CompletedProcess) -> str:
    """The single stderr line of a failed command (and no traceback, no class name)."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert "Traceback" not in r.stderr
    assert not re.search(r"\b[A-Z][a-zA-Z]+(Error|Exception)\b", line), line
    return line


#: A memory for recall through a mount: an old session (RECALL_OLD) a page cites, a new one.
RECALL_OLD = "sessions/2025-02-03-sendai/transcript.md"
RECALL_TREE = {
    "GUIDE.md": "Keep answers short.\n",
    "knowledge/INDEX.md": "- [[sendai-trip]] — visit to Sendai\n",
    "knowledge/sendai-trip.md": (
        "---\ntitle: Sendai trip\ntype: project\nupdated: 2025-02-04\n"
        f"sources:\n  - {RECALL_OLD}#D1:2\n---\n"
        "Nadia met the Sapphir Mobility Coop in Sendai [cite:1].\n"
    ),
    "sessions/2026-01-10-budget/transcript.md": (
        "---\nsession: 2026-01-10-budget\ndate: 2026-01-10T10:00:00\nparticipants: [Nadia, Assistant]\n---\n"
        "# Budget\n\n[D2:1] Nadia: The grant budget is due on Friday.\n\n"
        "[D2:2] Assistant: I will draft the spreadsheet.\n"
    ),
    RECALL_OLD: (
        "---\nsession: 2025-02-03-sendai\ndate: 2025-02-03T09:00:00\nparticipants: [Nadia, Assistant]\n---\n"
        "# Sendai\n\n[D1:1] Nadia: I am travelling north this week.\n\n"
        "[D1:2] Nadia: In Sendai I met the Sapphir Mobility Coop, a cooperative running "
        "accessible minibuses for wheelchair users.\n\n"
        "[D1:3] Assistant: Noted, I will remember the cooperative.\n"
    ),
}


class BowEmbedder:
    """A deterministic hashed bag of words (each word adds 1 to one of ``dim`` buckets, on a
    floor of 1e-3, rows normalised): plumbing only, it knows no meaning (the real model is
    tested in tests/tools/test_locomo.py)."""

    def __init__(self, dim: int = 32, name: str = "test-fake-bow", words: str = r"[a-z]+") -> None:
        self.dim = dim
        self.name = name
        #: what counts as a word (a pattern over the lower-cased text)
        self.words = words

    def embed(self, texts: list[str]):
        import re
        import zlib

        import numpy as np

        out = np.full((len(texts), self.dim), 1e-3, dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(self.words, t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@contextmanager
def mounted_tmpfs(d: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``d`` (a small disk for the cache), unmounted on the way out,
    pass or fail; the test is skipped, saying why, where a tmpfs cannot be mounted."""
    import pytest

    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {r.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def sigint_as_a_terminal() -> None:
    """``preexec_fn`` of a child a test sends Ctrl-C to: SIGINT as a terminal's process has
    it. A child inherits an ignored SIGINT and a blocked signal mask from the test process,
    where a library may have left either (seen only in full-suite runs): Ctrl-C would then
    never arrive."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
