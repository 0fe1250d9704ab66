"""Embedding throughput and memory per backend: the reference (sentence-transformers on
torch) against onnxruntime fp32 and int8, on the same chunks of the 2,000-file sample.

Each backend runs in its own worker process (so its RSS is its own and torch is loaded only
where it is used); the parent interleaves the runs — round 1: torch, fp32, int8; round 2:
… — so that the load other processes put on this shared 2-CPU machine falls on every
backend alike, and reports the median of the runs. Beside wall-clock chunks/s it reports
chunks per CPU-second of the worker (all its threads), which moves less with that load.

    python benchmarks/embed_bench.py                       # 600 chunks × 3 runs, ~10 min
    python benchmarks/embed_bench.py --chunks 300 --runs 5 --index-build
    python benchmarks/embed_bench.py --backends minilm-onnx-int8:workers=1:threads=2,minilm-onnx-int8

A backend may carry options of the ONNX embedder after its name, ``:key=value`` each:
``workers`` (passes at once), ``threads`` (intra-op threads per pass), ``max`` (word pieces
kept per text). ``minilm-onnx-int8:workers=1:threads=2`` is the int8 embedder as it ran
before parallel passes (one pass at a time, two threads each). Word pieces per second are
reported beside chunks per second: a shorter truncation makes more chunks per second out of
less work per chunk.

``--index-build`` also times ``SearchIndex.refresh`` of the whole sample with the default
backend, cold and then again into a fresh index with the vector cache warm (what a dream
work directory or a grown transcript costs). Writes benchmarks/results/embed.md and
embed.json (``--name`` for another name).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "results"
#: Short questions, one per call, as the mount's recall embeds them (its query path).
QUERIES = ["Where does Nadia work?", "what did we decide about the figures", "Kyoto trip",
           "deadline for the grant report", "who is her manager", "accessibility audit results",
           "which conference in Osaka", "the crosswalk sensor prototype", "dog",
           "preferences for meetings", "what was corrected later", "plan for next week's study"]
BACKENDS = ("minilm-torch", "minilm-onnx", "minilm-onnx-int8")


def _status(field: str) -> int:
    """A /proc/self/status field in MiB (VmRSS, VmHWM)."""
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    return -1


def make_embedder(spec: str) -> Any:
    """The embedder a backend spec names: ``load_embedder``'s spec, or an ONNX one with
    ``:key=value`` options (``workers``, ``threads``, ``max``), built directly."""
    from brainfs.cache.search.embedder import BACKEND_SPECS, load_embedder

    name, *opts = spec.split(":")
    if not opts:
        return load_embedder(spec)
    from brainfs.cache.search.onnx_embedder import OnnxMiniLMEmbedder

    backend, variant = BACKEND_SPECS[name]
    if backend != "onnx":
        raise SystemExit(f"options apply to the ONNX backends only: {spec}")
    kw = dict(o.split("=", 1) for o in opts)
    keys = {"workers": "workers", "threads": "threads", "max": "max_tokens"}
    if set(kw) - set(keys):
        raise SystemExit(f"unknown option in {spec} (workers, threads, max)")
    return OnnxMiniLMEmbedder(variant, **{keys[k]: int(v) for k, v in kw.items()})


def word_pieces(emb: Any, texts: list[str]) -> int:
    """Word pieces the model is given for ``texts`` (after its truncation)."""
    if hasattr(emb, "word_pieces"):
        return sum(emb.word_pieces(texts))
    from brainfs.cache.search.model import token_counter

    return sum(min(n + 2, 256) for n in token_counter()(texts))  # the reference keeps 256


def worker(spec: str, chunks_file: str) -> None:
    """Load ``spec``, then embed the chunks once per 'run' line on stdin; one JSON line each."""
    texts = json.loads(Path(chunks_file).read_text())
    rss0 = _status("VmRSS")
    t0 = time.perf_counter()
    emb = make_embedder(spec)
    emb.embed(texts[:4])  # first pass allocates the runtime's buffers
    wp = word_pieces(emb, texts)
    query_ms = []
    for q in QUERIES * 4:
        w = time.perf_counter()
        emb.embed([q])
        query_ms.append(1000 * (time.perf_counter() - w))
    print(json.dumps({"load_s": round(time.perf_counter() - t0, 2), "rss_before_mib": rss0,
                      "rss_loaded_mib": _status("VmRSS"), "torch": "torch" in sys.modules,
                      "class": type(emb).__name__, "word_pieces": wp,
                      "query_ms_median": round(statistics.median(query_ms), 2),
                      "workers": getattr(emb, "workers", None),
                      "threads": getattr(emb, "threads", None)}), flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        load = _loadavg()
        w, c = time.perf_counter(), time.process_time()
        emb.embed(texts)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        print(json.dumps({"wall_s": wall, "cpu_s": cpu, "chunks_per_s": len(texts) / wall,
                          "chunks_per_cpu_s": len(texts) / cpu, "word_pieces_per_s": wp / wall,
                          "cpus_busy": cpu / wall, "load_before": load,
                          "rss_mib": _status("VmRSS"), "hwm_mib": _status("VmHWM")}), flush=True)


def sample_chunks(files: int, seed: int) -> tuple[Path, list[str]]:
    """Write the sample tree (``brainfs sample --size FILES --seed SEED``) to a temporary
    directory; return it and the texts the index gives the model for all its chunks."""
    from brainfs.cache.search.chunker import chunk_file, decode, embed_texts
    from brainfs.tools.sample import generate

    root = Path(tempfile.mkdtemp(prefix="brainfs-embed-bench-")) / "tree"
    generate(root, files=files, seed=seed)
    texts: list[str] = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            texts += embed_texts(chunk_file(str(p.relative_to(root)), decode(p.read_bytes())))
    return root, texts


def index_build(root: Path, spec: str) -> dict[str, Any]:
    """``SearchIndex.refresh`` of the tree with ``spec``: cold (empty vector cache), then a
    fresh index with the cache warm."""
    from brainfs.cache.search.index import SearchIndex

    files = {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}
    listing = [(k, str(p.stat().st_size)) for k, p in files.items()]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="brainfs-embed-ix-") as tmp:
        os.environ["BRAINFS_EMBED_CACHE"] = str(Path(tmp) / "vectors.sqlite")
        emb = make_embedder(spec)
        out["spec"] = spec
        out["load_before"] = _loadavg()
        for label in ("cold", "warm cache"):
            with SearchIndex(Path(tmp) / f"{label.split()[0]}.sqlite") as idx:
                st = idx.refresh(listing, lambda k: files[k].read_bytes(), emb)
            out[label] = {k: st.get(k) for k in ("chunks", "seconds", "chunks_per_s",
                                                  "embed_seconds", "embed_cache_hits")}
            print(f"index build {label}: {out[label]}", file=sys.stderr, flush=True)
    return out


def _loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000, help="sample size (brainfs sample --size)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--chunks", type=int, default=600, help="random chunks embedded per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--index-build", action="store_true",
                    help="also time the index build of the whole sample (default backend)")
    ap.add_argument("--index-build-spec", default="minilm",
                    help="the backend (with options) of the index build")
    ap.add_argument("--name", default="embed", help="results file name (NAME.json)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--worker", nargs=2, metavar=("SPEC", "CHUNKS_FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0

    root, texts = sample_chunks(args.files, args.seed)
    try:
        return _measure(args, root, texts)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def _measure(args: argparse.Namespace, root: Path, texts: list[str]) -> int:
    """The interleaved runs, the optional index build, and the report."""
    random.Random(args.seed).shuffle(picked := list(texts))
    picked = picked[:args.chunks]
    from brainfs.cache.search.model import token_counter

    lengths = sorted(min(n + 2, 256) for n in token_counter()(picked))
    chunks_file = root.parent / "chunks.json"
    chunks_file.write_text(json.dumps(picked))
    env = {**os.environ, "BRAINFS_EMBED_CACHE": "off"}
    backends = args.backends.split(",")
    workers: dict[str, subprocess.Popen] = {}
    res: dict[str, dict[str, Any]] = {}
    load_before = _loadavg()
    try:
        for b in backends:  # loaded one after another: a load's peak is its own
            p = subprocess.Popen([sys.executable, __file__, "--worker", b, str(chunks_file)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            workers[b] = p
            res[b] = {"load": json.loads(p.stdout.readline()), "runs": []}
            print(f"{b}: loaded {res[b]['load']}", file=sys.stderr, flush=True)
        for r in range(args.runs):
            for b in backends:
                p = workers[b]
                p.stdin.write("run\n")
                p.stdin.flush()
                run = json.loads(p.stdout.readline())
                res[b]["runs"].append(run)
                print(f"round {r + 1} {b}: {run['chunks_per_s']:.1f} chunks/s, "
                      f"{run['chunks_per_cpu_s']:.1f} per CPU-s, {run['word_pieces_per_s']:.0f} "
                      f"word pieces/s, {run['cpus_busy']:.2f} CPUs, load {run['load_before']}",
                      file=sys.stderr, flush=True)
    finally:
        for p in workers.values():
            p.stdin.close()
            p.wait(timeout=60)
    load_after = _loadavg()
    ref = backends[0]
    for b in backends:
        runs = res[b]["runs"]
        res[b]["median_chunks_per_s"] = statistics.median(x["chunks_per_s"] for x in runs)
        res[b]["median_chunks_per_cpu_s"] = statistics.median(x["chunks_per_cpu_s"] for x in runs)
        res[b]["median_word_pieces_per_s"] = statistics.median(x["word_pieces_per_s"] for x in runs)
        # Per round, against the reference of the same round, then the median.
        res[b]["median_speedup"] = statistics.median(
            x["chunks_per_s"] / y["chunks_per_s"] for x, y in zip(runs, res[ref]["runs"]))
        res[b]["median_cpu_speedup"] = statistics.median(
            x["chunks_per_cpu_s"] / y["chunks_per_cpu_s"] for x, y in zip(runs, res[ref]["runs"]))
        res[b]["peak_rss_mib"] = max(x["hwm_mib"] for x in runs)
    build = index_build(root, args.index_build_spec) if args.index_build else None
    report = {"command": "python " + " ".join([f"benchmarks/{Path(__file__).name}", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
                         f"{load_before} before, {load_after} after",
              "sample": {"files": args.files, "seed": args.seed, "chunks": len(texts)},
              "chunks": len(picked), "runs": args.runs,
              "tokens": {"median": lengths[len(lengths) // 2], "mean": round(sum(lengths) / len(lengths), 1),
                         "at_256": sum(1 for n in lengths if n >= 256)},
              "backends": res, "index_build": build}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({b: {k: v for k, v in r.items() if k != "runs"} for b, r in res.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
