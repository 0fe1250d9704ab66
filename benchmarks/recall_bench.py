"""Time from a recall to its files being readable in the mount.

    python -m benchmarks.recall_bench [--files 2000] [--rtt-ms 20] [--queries 8]

Builds the sample memory, imports and indexes it (with the real model), mounts it with a
small working set (so recall has something to fetch) behind a delay proxy, warms the model
with one query, then for each question: ``cat .recall/<q>.json`` (embedding, search and the
batched fetch, as the daemon reports them) and reads every materialized file; prints the
medians and writes ``benchmarks/results/recall-<files>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brainfs.backend.server import LocalS3
from brainfs.tools.sample import generate

from benchmarks.s3proxy import S3Proxy

QUESTIONS = [
    "which organizations did I meet in Kyoto",
    "what is the codename of the braille label printer",
    "who leads Quiet Routes",
    "what format do I prefer for figures",
    "where does Nadia live now",
    "what is the threshold for caption latency",
    "budget for sign language interpretation",
    "consent form gift card amount",
    "which screen readers did we test with",
    "when is the ethics amendment due",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="brainfs-recallbench-"))
    brainfs = [sys.executable, "-m", "brainfs.front.cli"]
    mp = tmp / "mnt"
    mp.mkdir()
    try:
        src = tmp / "src"
        generate(src, files=args.files)
        with LocalS3(tmp / "s3") as s3, S3Proxy(("127.0.0.1", s3.port), delay=args.rtt_ms / 1000) as px:
            env = dict(os.environ, BRAINFS_CONFIG="/dev/null", AWS_ENDPOINT_URL=s3.url,
                       BRAINFS_CACHE_DIR=str(tmp / "cache-index"))
            url = "s3://recall/mem"
            subprocess.run([*brainfs, "import", str(src), url], env=env, check=True, capture_output=True)
            t = time.monotonic()
            r = subprocess.run([*brainfs, "index", url], env=env, check=True, capture_output=True, text=True)
            index_s = time.monotonic() - t
            print(r.stdout.strip(), f"({index_s:.0f} s)", flush=True)
            menv = dict(env, AWS_ENDPOINT_URL=px.url, BRAINFS_CACHE_DIR=str(tmp / "cache-mount"),
                        BRAINFS_PRELOAD_GLOBS="GUIDE.md,sessions/index.md",
                        BRAINFS_PRELOAD_RECENT_TRANSCRIPTS="0")
            subprocess.run([*brainfs, "mount", url, str(mp)], env=menv, check=True, capture_output=True)
            (mp / ".recall" / "warm up the model.json").read_text()
            rows = []
            for q in QUESTIONS[: args.queries]:
                t0 = time.perf_counter()
                out = json.loads((mp / ".recall" / f"{q}.json").read_text())
                for p in out["materialized"]:
                    (mp / p).read_bytes()
                wall = (time.perf_counter() - t0) * 1000
                tm = out["timings"]
                rows.append({"q": q, "files": len(out["materialized"]), "wall_ms": wall,
                             "embed_ms": tm["embed_ms"], "search_ms": tm["search_ms"],
                             "materialize_ms": tm["materialize_ms"], "mode": out["mode"]})
                print(f"{wall:7.1f} ms  {len(out['materialized']):2d} files  embed {tm['embed_ms']:.1f}"
                      f"  search {tm['search_ms']:.1f}  fetch {tm['materialize_ms']:.1f}  {q}", flush=True)
            # The daemon's peak memory with the model loaded and every query answered.
            pid = json.loads((mp / ".brainfs" / "status").read_text())["pid"]
            hwm = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                       if line.startswith("VmHWM:"))
            subprocess.run([*brainfs, "umount", str(mp)], env=menv, check=False, capture_output=True)
        med = {k: statistics.median(r[k] for r in rows) for k in ("wall_ms", "embed_ms", "search_ms",
                                                                   "materialize_ms", "files")}
        lines = [f"# Recall to readable files: {args.files} files, {args.rtt_ms:.0f} ms RTT", "",
                 f"Index build: {r.stdout.strip()} ({index_s:.0f} s wall).", "",
                 "| question | mode | files | embed ms | search ms | fetch ms | recall → all files read, ms |",
                 "|---|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {x['q']} | {x['mode']} | {x['files']} | {x['embed_ms']:.1f} | {x['search_ms']:.1f} | "
                  f"{x['materialize_ms']:.1f} | {x['wall_ms']:.1f} |" for x in rows]
        lines += [f"| **median** | | {med['files']:.0f} | {med['embed_ms']:.1f} | {med['search_ms']:.1f} | "
                  f"{med['materialize_ms']:.1f} | {med['wall_ms']:.1f} |", "",
                  f"Daemon peak RSS (VmHWM, model loaded, after the queries): {hwm / 1024:.0f} MiB.", "",
                  f"`python -m benchmarks.recall_bench --files {args.files} --rtt-ms {args.rtt_ms:g} "
                  f"--queries {args.queries}`", ""]
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"recall-{args.files}.md").write_text("\n".join(lines))
        print("\n".join(lines))
        return 0
    finally:
        if mp.exists() and os.path.ismount(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
