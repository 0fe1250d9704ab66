"""``brainfs index`` as a user runs it: the whole command, from process start to exit, on
the demo sample with an empty vector cache — against the rate of the build inside it.

The build's own rate (``SearchIndex.refresh`` over the parts, what ``embed_bench.py
--index-build`` measures) leaves out what a user also waits for: interpreter start-up and
imports, the model's load, the listing, fetches, uploads and the preload pack. This runs
the command as a subprocess and reports, per run: chunks per second of the command (wall
time from spawn to exit), of the build (the seconds the command prints), the CPU the
process used over that wall time (user + system, all threads, divided by the CPUs of the
machine: 1.0 = every CPU busy from start to end), and the share of the wall time during
which a model call was in progress (the model's passes, tokenization excluded where it
precedes them): on a machine shared with other work the rates follow the load, while that
share says whether the command keeps its model fed.

Two code trees can be compared in the same session: ``--base DIR`` runs the same command
with ``PYTHONPATH=DIR`` (a directory holding a ``brainfs`` checkout or symlink, e.g. a
clean clone of HEAD) alternately with the tree this script belongs to — round 1 base then
this tree, round 2 the other way round, … — so that the load other processes put on a
shared machine falls on both alike; the load average is recorded before and after each
run. The median of the runs is reported per tree.

    git clone -q . /tmp/idx-base && mkdir -p /tmp/idx-parent && ln -s /tmp/idx-base /tmp/idx-parent/brainfs
    python benchmarks/index_command.py --base /tmp/idx-parent --runs 3

Writes benchmarks/results/index-command.json (``--name`` for another name); the Markdown
table is printed, and written by hand into index-command.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "results"
URL = "s3://demo/alice"


def _reset_index(endpoint: str) -> int:
    """Delete the bucket's index (every ``.brainfs/index…`` object): the next run builds it
    from nothing. Returns the objects deleted."""
    from brainfs.backend.config import Config
    from brainfs.backend.keys import CorpusURL
    from brainfs.backend.store import ObjectStore

    store = ObjectStore(CorpusURL.parse(URL), Config().override(endpoint_url=endpoint))
    try:
        gone = [o.path for o in store.list() if o.path.startswith(".brainfs/index")]
        for p in gone:
            store.delete(p)
        return len(gone)
    finally:
        store.close()


#: What the child runs: ``brainfs -v index`` (its ``main``), with the time a model call
#: is in progress recorded — the union of the intervals of ``_embed_one_by_one`` (the passes
#: of one call, after its tokenization in the older code, with it in the newer) — and
#: written to stderr at exit: the same measure in both trees, whatever they log.
CHILD = r"""
import atexit, sys, threading, time
from brainfs.cache.search import onnx_embedder as oe
spans, lock = [], threading.Lock()
orig = oe.OnnxMiniLMEmbedder._embed_one_by_one
def timed(self, *a, **k):
    t = time.perf_counter()
    try:
        return orig(self, *a, **k)
    finally:
        with lock:
            spans.append((t, time.perf_counter()))
oe.OnnxMiniLMEmbedder._embed_one_by_one = timed
def report():
    busy, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b > end:
            busy += b - max(a, end)
            end = b
    print(f"MODEL_BUSY_S {busy:.3f}", file=sys.stderr)
atexit.register(report)
from brainfs.front.cli import main
sys.exit(main(["-v", "index", sys.argv[1]]))
"""


def run_once(tree: str, pythonpath: str | None, endpoint: str, work: Path) -> dict[str, Any]:
    """One ``brainfs -v index`` with a fresh cache directory and an empty vector cache."""
    _reset_index(endpoint)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    vectors = work / "vectors.sqlite"
    for p in work.glob("vectors.sqlite*"):
        p.unlink()
    env = dict(os.environ, BRAINFS_CONFIG="/dev/null", BRAINFS_CACHE_DIR=str(cache),
               BRAINFS_EMBED_CACHE=str(vectors), AWS_ENDPOINT_URL=endpoint)
    env.pop("BRAINFS_EMBEDDER", None)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    # GNU time adds the child's peak RSS to its stderr (the process's CPU comes from
    # os.times() in the caller).
    timer = ["/usr/bin/time", "-f", "MAXRSS_KB %M"] if Path("/usr/bin/time").exists() else []
    proc = subprocess.Popen([*timer, sys.executable, "-c", CHILD, URL],
                            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    # communicate() reaped the child: its rusage is in RUSAGE_CHILDREN, added per run.
    rc = proc.returncode
    if rc != 0:
        raise SystemExit(f"{tree}: brainfs index failed ({rc}):\n{err[-2000:]}")
    m = re.search(r"; (\d+) chunks, [\d.]+ MB, ([\d.]+)s", out)
    if not m:
        raise SystemExit(f"{tree}: no summary line in {out!r}")
    chunks, build = int(m.group(1)), float(m.group(2))
    timing = next((x.split("index timings: ", 1)[1] for x in err.splitlines()
                   if "index timings: " in x), None)
    rss = re.search(r"MAXRSS_KB (\d+)", err)
    busy = re.search(r"MODEL_BUSY_S ([\d.]+)", err)
    return {"tree": tree, "chunks": chunks, "wall_s": round(wall, 2), "build_s": build,
            "peak_rss_mib": round(int(rss.group(1)) / 1024) if rss else None,
            "model_busy_s": float(busy.group(1)) if busy else None,
            "model_busy_share": round(float(busy.group(1)) / wall, 3) if busy else None,
            "command_chunks_per_s": round(chunks / wall, 1),
            "build_chunks_per_s": round(chunks / build, 1) if build else None,
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
            "timings": timing}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", help="PYTHONPATH of the tree to compare with (a dir holding brainfs/)")
    ap.add_argument("--runs", type=int, default=3, help="runs per tree")
    ap.add_argument("--size", default="demo", help="the sample's size (brainfs sample --size)")
    ap.add_argument("--name", default="index-command", help="results file name (without .json)")
    args = ap.parse_args()

    from brainfs.backend.server import LocalS3
    from brainfs.tools.sample import SIZES, generate

    nproc = len(os.sched_getaffinity(0))
    trees = ([("base", args.base)] if args.base else []) + [("this", None)]
    work = Path(tempfile.mkdtemp(prefix="index-command-"))
    results: list[dict[str, Any]] = []
    try:
        generate(work / "sample", files=SIZES.get(args.size, 200), seed=7)
        with LocalS3(work / "s3") as server:
            env = dict(os.environ, BRAINFS_CONFIG="/dev/null", AWS_ENDPOINT_URL=server.url,
                       BRAINFS_CACHE_DIR=str(work / "import-cache"))
            subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import",
                            str(work / "sample"), URL], env=env, cwd=work, check=True,
                           capture_output=True)
            for r in range(args.runs):
                order = trees if r % 2 == 0 else trees[::-1]
                for name, pp in order:
                    before = os.times()
                    res = run_once(name, pp, server.url, work)
                    after = os.times()
                    cpu = (after.children_user - before.children_user
                           + after.children_system - before.children_system)
                    res["cpu_s"] = round(cpu, 2)
                    res["cpu_util"] = round(cpu / res["wall_s"] / nproc, 3)
                    res["round"] = r + 1
                    results.append(res)
                    print(json.dumps(res), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    summary = {}
    for name, _ in trees:
        rs = [x for x in results if x["tree"] == name]
        summary[name] = {k: statistics.median(x[k] for x in rs) for k in
                         ("command_chunks_per_s", "build_chunks_per_s", "cpu_util", "wall_s", "build_s",
                          "peak_rss_mib", "model_busy_share")}
        summary[name]["runs"] = [(x["command_chunks_per_s"], x["build_chunks_per_s"], x["cpu_util"],
                                  x["load_before"], x["model_busy_share"]) for x in rs]
    doc = {"command": " ".join([sys.argv[0], *sys.argv[1:]]), "nproc": nproc,
           "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "summary": summary, "runs": results}
    OUT.mkdir(exist_ok=True)
    (OUT / f"{args.name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print("| tree | command chunks/s (median; runs) | build chunks/s (median; runs) | CPU use "
          "(CPU-s / wall / nproc) | model call in progress (share of wall) | peak RSS "
          "| load average before each run |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, s in summary.items():
        runs = s["runs"]
        print(f"| {name} | {s['command_chunks_per_s']:.1f} ({', '.join(str(r[0]) for r in runs)}) "
              f"| {s['build_chunks_per_s']:.1f} ({', '.join(str(r[1]) for r in runs)}) "
              f"| {s['cpu_util']:.2f} ({', '.join(str(r[2]) for r in runs)}) "
              f"| {s['model_busy_share']:.3f} ({', '.join(str(r[4]) for r in runs)}) "
              f"| {s['peak_rss_mib']} MiB "
              f"| {', '.join(str(r[3]) for r in runs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
