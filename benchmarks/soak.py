"""Soak: readers and a writer on a real mount while the S3 proxy injects faults.

The "backend faults under load" scenario of the reliability suite, as a longer, bounded
run. Several readers (``cat`` of random corpus files, ``grep -r`` over the working set) and
one writer work on a mount whose S3 traffic goes through :class:`benchmarks.s3proxy.S3Proxy`
with a seeded :class:`FaultPlan` (500/503 errors, short stalls longer than the read timeout,
truncated and corrupted bodies). Every byte a reader gets is compared with the source of
truth; every operation is timed; at the end the faults are switched off and the writer's
files must land in S3.

    python -m benchmarks.soak --seconds 120 --seed 1

prints one line per number (requests, faults by kind, wrong bytes served, longest op vs
its bound, files lost) and a JSON object with ``--json``. Exit status 1 when a wrong byte
was served, a file was lost or an operation hung.

The tests (``tests/fs/test_reliability.py``) call :func:`seed_corpus`, :func:`run_load` and
:func:`settle` on their own mount for ~20 s.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from brainfs.cache.layout import page_path, transcript_path

#: A word every few corpus files carry, so ``grep -r`` has something to find.
NEEDLE = "zebrafish-needle"
_WORDS = ("kyoto sora city lab mara nadia shelter volunteer dog map wheelchair sendai "
          "coop memory session transcript summary page cite wiki dream agent note card").split()


# --------------------------------------------------------------------------- corpus


def make_corpus(seed: int, files: int = 80, max_kb: int = 48) -> dict[str, bytes]:
    """A deterministic memory tree: {corpus path: content}."""
    rng = random.Random(seed)
    out: dict[str, bytes] = {}
    for i in range(files):
        kind = i % 4
        if kind == 0:
            path = page_path(f"subject-{i:03d}")
        elif kind == 1:
            path = f"notes/topic-{i % 7}/card-{i:03d}.md"
        else:
            path = transcript_path(f"2025-{1 + i % 12:02d}-{i:03d}")
        n = rng.randint(1, max_kb) * 1024
        words = []
        size = 0
        while size < n:
            w = rng.choice(_WORDS)
            words.append(w)
            size += len(w) + 1
        if i % 5 == 0:
            words.insert(rng.randrange(len(words)), NEEDLE)
        out[path] = (f"# {path}\n\n" + " ".join(words) + "\n").encode()
    return out


def seed_corpus(store, seed: int, files: int = 80, max_kb: int = 48) -> dict[str, bytes]:
    """Put a :func:`make_corpus` tree into ``store`` (an ObjectStore); returns it."""
    tree = make_corpus(seed, files, max_kb)
    for path, data in tree.items():
        store.put(path, data)
    return tree


# --------------------------------------------------------------------------- the load


@dataclass
class LoadResult:
    """What a run measured. ``wrong_bytes`` must be 0, ``hung`` must be 0."""

    seconds: float = 0.0
    requests: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    reads: int = 0
    read_errors: dict[str, int] = field(default_factory=dict)
    wrong_reads: int = 0
    wrong_bytes: int = 0
    wrong_examples: list[str] = field(default_factory=list)
    #: reads of a file the writer was rewriting that matched none of its complete
    #: versions (e.g. the empty file between open(O_TRUNC) and the write)
    torn_reads: int = 0
    torn_examples: list[str] = field(default_factory=list)
    greps: int = 0
    grep_errors: int = 0
    grep_wrong: int = 0
    writes: int = 0
    write_errors: dict[str, int] = field(default_factory=dict)
    longest_op_s: float = 0.0
    longest_op: str = ""
    bound_s: float = 0.0
    hung: int = 0
    files_lost: int = 0
    lost: list[str] = field(default_factory=list)
    unreadable_after: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human-readable summary, one number per line."""
        errs = ", ".join(f"{k} {v}" for k, v in sorted(self.read_errors.items())) or "none"
        return [
            f"duration:                {self.seconds:.1f} s",
            f"requests through proxy:  {self.requests}",
            "faults injected:         " + (", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"),
            f"reads (cat):             {self.reads} (errors: {errs})",
            f"greps:                   {self.greps} ({self.grep_errors} reported errors, {self.grep_wrong} wrong answers)",
            f"writes:                  {self.writes} (errors: {self.write_errors or 'none'})",
            f"wrong bytes served:      {self.wrong_bytes} in {self.wrong_reads} reads of corpus files",
            f"torn reads (mid-write):  {self.torn_reads} reads of a file being rewritten matched no complete version",
            f"longest operation:       {self.longest_op_s:.2f} s ({self.longest_op}); bound {self.bound_s:.1f} s",
            f"hung operations:         {self.hung}",
            f"files lost:              {self.files_lost} {self.lost[:5] if self.lost else ''}",
            f"unreadable after faults: {len(self.unreadable_after)}",
        ]


def op_bound(max_attempts: int, connect_timeout: float, read_timeout: float, slack: float = 3.0) -> float:
    """How long one FUSE operation may take against a stalled backend: every attempt
    waits at most connect + read timeout, plus backoff and scheduling slack."""
    return max_attempts * (connect_timeout + read_timeout) + slack


def _diff_bytes(got: bytes, want: bytes) -> int:
    n = min(len(got), len(want))
    return sum(1 for a, b in zip(got[:n], want[:n]) if a != b) + abs(len(got) - len(want))


class _Load:
    def __init__(self, mp: Path, truth: dict[str, bytes], proxy, seconds: float, seed: int,
                 bound: float, readers: int, writer_files: int) -> None:
        self.mp = mp
        self.truth = truth
        self.proxy = proxy
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.seed = seed
        self.bound = bound
        self.readers = readers
        self.lock = threading.Lock()
        self.res = LoadResult(bound_s=bound)
        #: writer path -> every version ever written (a reader may see any of them)
        self.versions: dict[str, list[bytes]] = {
            f"notes/soak/w{i:02d}.md": [] for i in range(writer_files)}
        self.read_errors: Counter[str] = Counter()
        self.write_errors: Counter[str] = Counter()
        self.running: dict[int, tuple[str, float]] = {}
        #: the writer's paths whose first write has returned: only these must exist (a
        #: version is recorded before its write, so that a reader mid-write can match it)
        self.written: set[str] = set()

    # -- bookkeeping
    def _timed(self, name: str, fn):
        tid = threading.get_ident()
        t0 = time.monotonic()
        with self.lock:
            self.running[tid] = (name, t0)
        try:
            return fn()
        finally:
            dt = time.monotonic() - t0
            with self.lock:
                self.running.pop(tid, None)
                if dt > self.res.longest_op_s:
                    self.res.longest_op_s, self.res.longest_op = dt, name

    def _check(self, path: str, data: bytes) -> None:
        want = self.truth.get(path)
        ok = data == want
        if not ok and path in self.versions:
            with self.lock:
                ok = data in self.versions[path]
        if ok:
            return
        if want is None:
            with self.lock:
                self.res.torn_reads += 1
                if len(self.res.torn_examples) < 5:
                    self.res.torn_examples.append(f"{path}: got {len(data)} bytes")
            return
        ref = want
        with self.lock:
            self.res.wrong_reads += 1
            self.res.wrong_bytes += _diff_bytes(data, ref)
            if len(self.res.wrong_examples) < 5:
                self.res.wrong_examples.append(f"{path}: got {len(data)} bytes, want {len(ref)}")

    # -- workers
    def reader(self, idx: int) -> None:
        rng = random.Random(self.seed * 1000 + idx)
        paths = sorted(self.truth)
        while time.monotonic() < self.deadline:
            roll = rng.random()
            if roll < 0.1:
                self._grep()
                continue
            if roll < 0.25:
                with self.lock:
                    wpaths = sorted(self.written)
                if not wpaths:
                    continue
                path = rng.choice(wpaths)
            else:
                path = rng.choice(paths)

            def cat(path=path) -> bytes:
                with open(self.mp / path, "rb") as f:
                    return f.read()

            try:
                data = self._timed(f"cat {path}", cat)
            except OSError as e:
                with self.lock:
                    self.read_errors[errno.errorcode.get(e.errno or 0, str(e.errno))] += 1
                    if e.errno != errno.EIO and len(self.res.wrong_examples) < 5:
                        self.res.wrong_examples.append(f"cat {path}: {e}")
                continue
            with self.lock:
                self.res.reads += 1
            self._check(path, data)

    def _grep(self) -> None:
        expected = {p for p, d in self.truth.items() if NEEDLE.encode() in d}

        def run() -> subprocess.CompletedProcess:
            return subprocess.run(["grep", "-rl", NEEDLE, "."], cwd=self.mp, capture_output=True,
                                  text=True, timeout=max(60.0, 4 * self.bound))

        try:
            r = run()
        except subprocess.TimeoutExpired:
            with self.lock:
                self.res.hung += 1
            return
        found = {line[2:] if line.startswith("./") else line for line in r.stdout.split()}
        with self.lock:
            self.res.greps += 1
            if r.returncode == 2 or r.stderr:
                self.res.grep_errors += 1
            # grep -r sees the working set: whatever it reports must be a true match.
            if not found <= expected:
                self.res.grep_wrong += 1
                if len(self.res.wrong_examples) < 5:
                    self.res.wrong_examples.append(f"grep found {sorted(found - expected)[:3]}")

    def writer(self) -> None:
        rng = random.Random(self.seed * 7919)
        names = sorted(self.versions)
        n = 0
        try:
            os.makedirs(self.mp / "notes/soak", exist_ok=True)
        except OSError as e:
            self.write_errors[errno.errorcode.get(e.errno or 0, "?")] += 1
        while time.monotonic() < self.deadline:
            path = names[n % len(names)]
            n += 1
            body = (f"{path} version {n}\n".encode()
                    + bytes(rng.choice(b"abcdefghij \n") for _ in range(rng.randint(100, 20_000))))
            with self.lock:
                self.versions[path].append(body)

            def write(path=path, body=body) -> None:
                with open(self.mp / path, "wb") as f:
                    f.write(body)  # one write: a reader sees the old or the new version

            try:
                self._timed(f"write {path}", write)
            except OSError as e:
                with self.lock:
                    self.write_errors[errno.errorcode.get(e.errno or 0, str(e.errno))] += 1
                continue
            with self.lock:
                self.res.writes += 1
                self.written.add(path)
            time.sleep(0.05)

    def run(self) -> LoadResult:
        t0 = time.monotonic()
        self.proxy.reset_stats()
        threads = [threading.Thread(target=self.reader, args=(i,), daemon=True) for i in range(self.readers)]
        threads.append(threading.Thread(target=self.writer, daemon=True))
        for t in threads:
            t.start()
        # A thread still inside one operation long after the deadline is hung.
        for t in threads:
            t.join(timeout=max(0.0, self.deadline - time.monotonic()) + 4 * self.bound + 30)
        with self.lock:
            self.res.hung += sum(1 for t in threads if t.is_alive())
        st = self.proxy.stats
        self.res.requests = st["requests"]
        self.res.faults = dict(st["faults"])
        self.res.read_errors = dict(self.read_errors)
        self.res.write_errors = dict(self.write_errors)
        self.res.seconds = time.monotonic() - t0
        return self.res


def run_load(mp: Path, truth: dict[str, bytes], proxy, seconds: float, seed: int, bound: float,
             readers: int = 4, writer_files: int = 6) -> tuple[LoadResult, dict[str, list[bytes]]]:
    """Readers and a writer on mount ``mp`` for ``seconds``; returns the result and the
    versions the writer wrote (path -> versions, last is the final content)."""
    load = _Load(mp, truth, proxy, seconds, seed, bound, readers, writer_files)
    res = load.run()
    return res, load.versions


def settle(res: LoadResult, mp: Path, store, truth: dict[str, bytes],
           versions: dict[str, list[bytes]], timeout: float = 60.0) -> LoadResult:
    """With faults off: every writer file must reach S3 in its last version, and every
    corpus file must be readable and right through the mount."""
    from brainfs.backend.errors import BackendError

    want = {p: v[-1] for p, v in versions.items() if v}
    deadline = time.monotonic() + timeout
    missing = dict(want)
    while missing and time.monotonic() < deadline:
        for p in list(missing):
            try:
                if store.get(p)[0] == want[p]:
                    del missing[p]
            except BackendError:
                pass
        if missing:
            time.sleep(0.5)
    bad_s3 = []
    for p, data in truth.items():
        try:
            if store.get(p)[0] != data:
                bad_s3.append(p)
        except BackendError:
            bad_s3.append(p)
    res.lost = sorted(missing) + bad_s3
    res.files_lost = len(res.lost)
    for p, data in {**truth, **want}.items():
        try:
            if (mp / p).read_bytes() != data:
                res.unreadable_after.append(p)
        except OSError:
            res.unreadable_after.append(p)
    return res


# --------------------------------------------------------------------------- standalone


def _is_mounted(mp: Path) -> bool:
    target = os.path.realpath(mp)
    with open("/proc/mounts") as f:
        return any(len(line.split()) > 1 and line.split()[1] == target for line in f)


def main(argv: list[str] | None = None) -> int:
    """Run the soak on a private S3 server, proxy and mount; print the numbers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--files", type=int, default=80)
    p.add_argument("--error-rate", type=float, default=0.05)
    p.add_argument("--stall-rate", type=float, default=0.01)
    p.add_argument("--corrupt-rate", type=float, default=0.01)
    p.add_argument("--truncate-rate", type=float, default=0.01)
    p.add_argument("--connect-timeout", type=float, default=1.0)
    p.add_argument("--read-timeout", type=float, default=1.5)
    p.add_argument("--max-attempts", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    from brainfs.backend.config import Config
    from brainfs.backend.keys import CorpusURL
    from brainfs.backend.server import LocalS3
    from brainfs.backend.store import ObjectStore
    from brainfs.fs.process import stop_child

    from benchmarks.s3proxy import FaultPlan, S3Proxy

    work = Path(tempfile.mkdtemp(prefix="brainfs-soak-"))
    server = LocalS3(work / "s3").start()
    proxy = S3Proxy(("127.0.0.1", server.port), delay=0.002)
    proxy.start()
    proc = None
    mp = work / "mnt"
    res: LoadResult | None = None
    try:
        cfg = Config().override(endpoint_url=server.url, cache_dir=work / "cache")
        url = CorpusURL.parse("s3://soak/users/a")
        store = ObjectStore(url, cfg)
        store.create_bucket()
        truth = seed_corpus(store, args.seed, args.files)
        budget = sum(len(d) for d in truth.values()) // 3
        env = dict(os.environ, AWS_ENDPOINT_URL=proxy.url, BRAINFS_CACHE_DIR=str(work / "cache"),
                   BRAINFS_CONFIG="/dev/null", BRAINFS_RECALL_WARMUP="0",
                   BRAINFS_CONNECT_TIMEOUT=str(args.connect_timeout),
                   BRAINFS_READ_TIMEOUT=str(args.read_timeout),
                   BRAINFS_MAX_ATTEMPTS=str(args.max_attempts),
                   BRAINFS_CACHE_BUDGET_BYTES=str(budget),
                   BRAINFS_PRELOAD_GLOBS="knowledge/*", BRAINFS_PRELOAD_RECENT_TRANSCRIPTS="0",
                   BRAINFS_RELIST_SECONDS="3", BRAINFS_UPLOAD_RETRY_SECONDS="1")
        env.pop("AWS_ACCESS_KEY_ID", None)
        env.pop("AWS_SECRET_ACCESS_KEY", None)
        mp.mkdir()
        log_path = work / "mount.log"
        with open(log_path, "wb") as lf:
            proc = subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "mount", str(url), str(mp),
                                     "--foreground"], env=env, stdin=subprocess.DEVNULL, stdout=lf,
                                    stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not _is_mounted(mp):
            if proc.poll() is not None or time.monotonic() > deadline:
                print(log_path.read_text()[-3000:], file=sys.stderr)
                return 2
            time.sleep(0.05)
        bound = op_bound(args.max_attempts, args.connect_timeout, args.read_timeout)
        proxy.set_faults(FaultPlan(seed=args.seed, error_rate=args.error_rate,
                                   stall_rate=args.stall_rate,
                                   stall_seconds=args.read_timeout + 1.0,
                                   corrupt_rate=args.corrupt_rate,
                                   truncate_rate=args.truncate_rate))
        res, versions = run_load(mp, truth, proxy, args.seconds, args.seed, bound, args.readers)
        proxy.set_faults(None)
        proxy.clear_forced()
        res = settle(res, mp, store, truth, versions, timeout=90)
        alive = proc.poll() is None
        if args.json:
            print(json.dumps({**asdict(res), "daemon_alive": alive}, indent=2))
        else:
            for line in res.lines():
                print(line)
            print(f"daemon alive:            {alive}")
        store.close()
        ok = res.wrong_bytes == 0 and res.files_lost == 0 and res.hung == 0 and alive
        return 0 if ok else 1
    finally:
        if proc is not None:
            stop_child(proc, timeout=60)
        if _is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        proxy.stop()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
