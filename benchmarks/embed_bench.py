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

``--truncation-check N`` asks what a shorter truncation (``--short``, 128 word pieces: the
length the model was trained at) costs where chunks are long: N sentences taken from the
part of a long chunk that the shorter cut drops (and, as a control, N from the part both
keep) are searched as queries among all the sample's chunks, with the index's vectors cut
at 256 and at ``--short``; does the chunk come back in the top 10?

``--index-build`` also times ``SearchIndex.refresh`` of the whole sample with the default
backend, cold and then again into a fresh index with the vector cache warm (what a dream
work directory or a grown transcript costs). Writes benchmarks/results/embed.json
(``--name`` for another name); embed.md's tables are written from it by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
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


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]")


def truncation_check(texts: list[str], short: int, n_queries: int, seed: int) -> dict[str, Any]:
    """Held-out sentences of long chunks against vectors cut at 256 and at ``short`` word
    pieces (see the module docstring). A sentence counts only if it lies wholly in the
    part considered and has six words or more; the sample repeats sentences across
    chunks, so beside "its chunk in the top 10" the table gives "a chunk containing the
    sentence in the top 10" and the figure over the sentences found in one chunk only."""
    import numpy as np
    from tokenizers import Tokenizer

    from brainfs.cache.search.model import minilm_model_dir
    from brainfs.cache.search.onnx_embedder import MAX_TOKENS, OnnxMiniLMEmbedder

    tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS)
    tok.no_padding()
    encs = tok.encode_batch([t if t.strip() else " " for t in texts])
    long = [i for i, e in enumerate(encs) if len(e.ids) > short]
    full, cut = OnnxMiniLMEmbedder("int8"), OnnxMiniLMEmbedder("int8", max_tokens=short)
    t0 = time.perf_counter()
    v_full = full.embed(texts)
    t1 = time.perf_counter()
    v_cut = v_full.copy()  # a text within ``short`` word pieces gets the same vector
    v_cut[long] = cut.embed([texts[i] for i in long])
    t2 = time.perf_counter()

    def sentences(i: int, lo: int, hi: int) -> list[str]:
        return [m.group().strip() for m in _SENTENCE.finditer(texts[i])
                if m.start() >= lo and m.end() <= hi and len(m.group().split()) >= 6]

    rng = random.Random(seed)
    picked = []
    for i in long:
        offs = encs[i].offsets  # [CLS] … [SEP]: word piece k ends at offs[k][1]
        late = sentences(i, offs[short - 2][1], offs[-2][1])
        early = sentences(i, 0, offs[short - 2][1])
        if late and early:
            picked.append((i, rng.choice(late), rng.choice(early)))
    rng.shuffle(picked)
    picked = picked[:n_queries]
    out: dict[str, Any] = {
        "short": short, "chunks": len(texts), "longer_than_short": len(long),
        "word_pieces": {"256": sum(len(e.ids) for e in encs),
                        str(short): sum(min(len(e.ids), short) for e in encs)},
        "embed_seconds": {"256 (all chunks)": round(t1 - t0, 1),
                          f"{short} (the longer chunks)": round(t2 - t1, 1)},
        "cosine_256_vs_short_long_chunks": {
            "mean": round(float((v_full[long] * v_cut[long]).sum(1).mean()), 4),
            "p10": round(float(np.percentile((v_full[long] * v_cut[long]).sum(1), 10)), 4)},
        "queries": len(picked)}
    for part, col in (("late", 1), ("early", 2)):
        sents = [q[col] for q in picked]
        qv = full.embed(sents)
        unique = np.array([sum(1 for t in texts if s in t) == 1 for s in sents])
        src = np.array([q[0] for q in picked])
        for label, v in (("256", v_full), (str(short), v_cut)):
            scores = qv @ v.T
            top = np.argsort(-scores, axis=1)[:, :10]
            own = scores[np.arange(len(src)), src]
            rank = (scores > own[:, None]).sum(1) + 1
            hit = np.array([s in t for s, t in zip(src, top)])
            has = np.array([any(x in texts[j] for j in t) for x, t in zip(sents, top)])
            out[f"{part} sentences, index cut at {label}"] = {
                "its chunk in top 10": round(float(hit.mean()), 4),
                "its chunk in top 10 (sentence in one chunk only)": round(float(hit[unique].mean()), 4),
                "sentences in one chunk only": int(unique.sum()),
                "a chunk containing it in top 10": round(float(has.mean()), 4),
                "median rank of its chunk": float(np.median(rank))}
            print(f"truncation {part} @{label}: {out[f'{part} sentences, index cut at {label}']}",
                  file=sys.stderr, flush=True)
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
    ap.add_argument("--truncation-check", type=int, default=0, metavar="N",
                    help="N held-out sentences per part for the truncation check (0: off)")
    ap.add_argument("--short", type=int, default=128, help="the shorter truncation checked")
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
    backends = [b for b in args.backends.split(",") if b]  # none: only the other measures
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
    for b in backends:
        ref = backends[0]
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
    trunc = (truncation_check(texts, args.short, args.truncation_check, args.seed)
             if args.truncation_check else None)
    load_after = _loadavg()  # after everything measured
    report = {"command": "python " + " ".join([f"benchmarks/{Path(__file__).name}", *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
                         f"{load_before} before, {load_after} after",
              "sample": {"files": args.files, "seed": args.seed, "chunks": len(texts)},
              "chunks": len(picked), "runs": args.runs,
              "tokens": {"median": lengths[len(lengths) // 2], "mean": round(sum(lengths) / len(lengths), 1),
                         "at_256": sum(1 for n in lengths if n >= 256)},
              "backends": res, "index_build": build, "truncation": trunc}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({b: {k: v for k, v in r.items() if k != "runs"} for b, r in res.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
