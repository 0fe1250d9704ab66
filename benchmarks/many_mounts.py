"""Many agents on one memory: N mounts of one bucket on this machine, each writing.

    python -m benchmarks.many_mounts --mounts 1,3,6 --seconds 90 --relist 10 --out DIR

A simulation of what docs/SCALE.md projects to 10 and 100 agents. For each N: the sample
memory (``--files`` files) in an embedded S3 server behind a proxy adding ``--rtt-ms`` per
request and counting requests by kind (``LIST``, ``GET``, ``PUT``, ``HEAD``, ``DELETE``);
the search index built once; N ``brainfs mount`` processes with their own caches and the
relist period ``--relist`` (seconds; the default mount relists every 60 s). Each mount's
writer saves a note every ``--write-every`` seconds: with probability ``--shared`` one of
``--shared-files`` notes every mount writes (the case that makes conflict copies), else a
note of its own. Every 10 s mount 0 writes a probe note carrying a unique word; every other
mount polls for it by path (``stat``) and mount 1 by meaning (``.recall/<word>``), which
gives the time until another agent sees a new file, and finds it by recall.

Reported per N: requests per minute by kind (all mounts together and per mount), conflict
copies in the bucket after every mount is unmounted, probe delays (median, max). Raw numbers
to ``DIR/many-mounts.json``, the table to ``DIR/many-mounts.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.s3proxy import S3Proxy
from brainfs.backend.config import Config
from brainfs.backend.keys import CONFLICT_MARK, CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import build_pack
from brainfs.tools.sample import generate

BUCKET, PREFIX = "bench", "mem"
URL = f"s3://{BUCKET}/{PREFIX}"


def brainfs(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the brainfs command line of this interpreter."""
    return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


class Writer(threading.Thread):
    """One agent's writes through its mount until ``stop`` is set."""

    def __init__(self, i: int, mp: Path, args: argparse.Namespace, stop: threading.Event):
        super().__init__(name=f"writer-{i}", daemon=True)
        self.i, self.mp, self.args, self.stop = i, mp, args, stop
        self.rng = random.Random(1000 + i)
        self.writes = 0
        self.errors: list[str] = []

    def run(self) -> None:
        n = 0
        while not self.stop.wait(self.args.write_every * self.rng.uniform(0.5, 1.5)):
            n += 1
            if self.rng.random() < self.args.shared:
                rel = f"notes/shared/note-{self.rng.randrange(self.args.shared_files)}.md"
            else:
                rel = f"notes/agent-{self.i}/note-{n % 20}.md"
            p = self.mp / rel
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(f"---\ntype: note\n---\nagent {self.i} write {n}\n")
                self.writes += 1
            except OSError as e:
                self.errors.append(f"{rel}: {e}")


def probe_loop(mps: list[Path], stop: threading.Event, out: list[dict]) -> None:
    """Every 10 s mount 0 writes a note with a unique word; the others wait for it by path,
    mount 1 also by recall."""
    k = 0
    while not stop.wait(10.0):
        k += 1
        word = f"zqprobe{k}x{random.randrange(10**6)}"
        rel = f"notes/probe/p{k}.md"
        (mps[0] / rel).parent.mkdir(parents=True, exist_ok=True)
        (mps[0] / rel).write_text(f"---\ntype: note\n---\nprobe word {word}\n")
        t0 = time.monotonic()
        rec: dict = {"probe": k, "path_s": {}, "recall_s": None}
        waiting = set(range(1, len(mps)))
        want_recall = len(mps) > 1
        deadline = t0 + 150
        while (waiting or want_recall) and time.monotonic() < deadline and not stop.is_set():
            for j in list(waiting):
                if (mps[j] / rel).exists():
                    rec["path_s"][j] = time.monotonic() - t0
                    waiting.discard(j)
            if want_recall:
                try:
                    ans = (mps[1] / ".recall" / word).read_text(errors="replace")
                except OSError:
                    ans = ""
                if rel in ans:
                    rec["recall_s"] = time.monotonic() - t0
                    want_recall = False
            time.sleep(0.5)
        out.append(rec)


def run_n(n: int, args: argparse.Namespace, tmp: Path, s3: LocalS3, root: Path) -> dict:
    """N mounts for ``args.seconds``; their requests, conflict copies and probe delays."""
    proxy = S3Proxy(("127.0.0.1", s3.port), delay=args.rtt_ms / 1000.0)
    proxy.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
    env.update({"AWS_ENDPOINT_URL": proxy.url, "BRAINFS_CONFIG": "/dev/null",
                "BRAINFS_RELIST_SECONDS": str(args.relist),
                "BRAINFS_RECALL_WARMUP": "0"})
    mps: list[Path] = []
    writers: list[Writer] = []
    stop = threading.Event()
    probes: list[dict] = []
    try:
        for i in range(n):
            mp = tmp / f"mnt-{n}-{i}"
            mp.mkdir()
            e = dict(env, BRAINFS_CACHE_DIR=str(tmp / f"cache-{n}-{i}"))
            r = brainfs("mount", URL, str(mp), env=e)
            if r.returncode != 0:
                logs = "".join(f.read_text(errors="replace")[-2000:]
                               for f in sorted((tmp / f"cache-{n}-{i}").glob("mount*")))
                raise SystemExit(f"mount {i} failed: {r.stderr.strip()}\n{logs}")
            mps.append(mp)
        proxy.reset_stats()
        t0 = time.monotonic()
        writers = [Writer(i, mp, args, stop) for i, mp in enumerate(mps)]
        for w in writers:
            w.start()
        prober = threading.Thread(target=probe_loop, args=(mps, stop, probes), daemon=True)
        prober.start()
        time.sleep(args.seconds)
        stop.set()
        prober.join(timeout=200)
        for w in writers:
            w.join(timeout=30)
        minutes = (time.monotonic() - t0) / 60.0
        stats = proxy.stats
    finally:
        stop.set()
        for i, mp in enumerate(mps):
            e = dict(env, BRAINFS_CACHE_DIR=str(tmp / f"cache-{n}-{i}"))
            u = brainfs("umount", str(mp), "--timeout", "120", env=e)
            if u.returncode != 0:
                subprocess.run(["fusermount3", "-u", str(mp)], check=False)
        proxy.stop()
    bucket = root / BUCKET / PREFIX
    conflicts = sorted(p.relative_to(bucket).as_posix() for p in bucket.rglob("*")
                       if CONFLICT_MARK in p.name)
    path_delays = [d for p in probes for d in p["path_s"].values()]
    recall_delays = [p["recall_s"] for p in probes if p["recall_s"] is not None]
    by_kind = {k: v / minutes for k, v in sorted(stats["by_kind"].items())}
    return {"mounts": n, "minutes": minutes,
            "writes": sum(w.writes for w in writers),
            "write_errors": [e for w in writers for e in w.errors][:10],
            "requests_per_min": by_kind,
            "list_per_min_per_mount": by_kind.get("LIST", 0.0) / n,
            "conflict_copies": len(conflicts), "conflict_examples": conflicts[:5],
            "probes": len(probes),
            "path_seen_s": _summary(path_delays), "path_missed": sum(
                len(mps) - 1 - len(p["path_s"]) for p in probes),
            "recall_found_s": _summary(recall_delays),
            "recall_missed": sum(1 for p in probes if p["recall_s"] is None) if n > 1 else 0}


def _summary(xs: list[float]) -> dict:
    return {"n": len(xs), "median": statistics.median(xs) if xs else None,
            "max": max(xs) if xs else None}


def render(results: list[dict], args: argparse.Namespace) -> str:
    """The markdown table of a run."""
    lines = [
        "# Many mounts on one bucket",
        "",
        f"`python -m benchmarks.many_mounts --mounts {args.mounts} --seconds {args.seconds} "
        f"--relist {args.relist} --files {args.files} --rtt-ms {args.rtt_ms} "
        f"--write-every {args.write_every} --shared {args.shared}` "
        f"(commit {_commit()}, {os.cpu_count()} CPUs; every mount on this one machine)",
        "",
        "| mounts | writes | requests/min (all mounts) | LIST/min per mount | conflict copies "
        "| new file seen by path, median / max (s) | found by recall, median / max (s) |",
        "|---:|---:|---|---:|---:|---|---|",
    ]
    for r in results:
        req = ", ".join(f"{k} {v:.0f}" for k, v in r["requests_per_min"].items())
        p, c = r["path_seen_s"], r["recall_found_s"]
        lines.append(
            f"| {r['mounts']} | {r['writes']} | {req} | {r['list_per_min_per_mount']:.1f} "
            f"| {r['conflict_copies']} | {_fmt(p)} (missed {r['path_missed']}) "
            f"| {_fmt(c)} (missed {r['recall_missed']}) |")
    return "\n".join(lines) + "\n"


def _fmt(s: dict) -> str:
    if not s["n"]:
        return "—"
    return f"{s['median']:.1f} / {s['max']:.1f}"


def _commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parent.parent)
    return r.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    """Run the simulation for each mount count and write its table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mounts", default="1,3,6", help="mount counts, comma-separated")
    ap.add_argument("--seconds", type=float, default=90.0, help="writing time per count")
    ap.add_argument("--relist", type=float, default=10.0, help="relist period of each mount (s)")
    ap.add_argument("--files", type=int, default=300, help="size of the sample memory")
    ap.add_argument("--rtt-ms", type=float, default=20.0, help="delay per S3 request")
    ap.add_argument("--write-every", type=float, default=2.0, help="seconds between one mount's writes")
    ap.add_argument("--shared", type=float, default=0.2, help="share of writes to shared notes")
    ap.add_argument("--shared-files", type=int, default=5, help="how many shared notes")
    ap.add_argument("--out", type=Path, default=None, help="folder for the .md and .json")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="brainfs-many-"))
    results: list[dict] = []
    try:
        # One memory, indexed once (keywords only: the probe words are found by BM25, and
        # N daemons loading the model would measure the CPU, not the bucket); each count
        # starts from a copy of it.
        base = tmp / "s3root-base"
        generate(base / BUCKET / PREFIX, files=args.files, seed=7)
        s3 = LocalS3(base).start()
        try:
            cfg = Config().override(endpoint_url=s3.url)
            store = ObjectStore(CorpusURL.parse(URL), cfg)
            try:
                build_pack(store, cfg)
            finally:
                store.close()
            env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
            env.update({"AWS_ENDPOINT_URL": s3.url, "BRAINFS_CONFIG": "/dev/null"})
            r = brainfs("index", URL, "--no-embed", env=env, timeout=1800)
            if r.returncode != 0:
                raise SystemExit(f"index failed: {r.stderr.strip()}")
        finally:
            s3.stop()
        for n in (int(x) for x in args.mounts.split(",")):
            root = tmp / f"s3root-{n}"
            shutil.copytree(base, root)
            s3 = LocalS3(root).start()
            try:
                res = run_n(n, args, tmp, s3, root)
            finally:
                s3.stop()
            print(json.dumps(res), flush=True)
            results.append(res)
        text = render(results, args)
        print(text)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "many-mounts.md").write_text(text)
            (args.out / "many-mounts.json").write_text(json.dumps(results, indent=1) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
