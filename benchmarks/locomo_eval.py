"""LoCoMo retrieval quality of brainfs recall, on the full development split.

Runs :func:`brainfs.cache.locomo.evaluate` (bm25, dense, hybrid; plus ``hybrid+wiki`` when
dream is importable, and a ``hybrid k=60`` ablation of the fusion constant) and writes
``benchmarks/results/locomo.md`` (tables) and ``locomo.json`` (the full result). It also
measures index build throughput and size on one index over the whole split, and, with
``--dense-bench N``, dense search latency (vec0 KNN vs numpy brute force) over N random
384-d vectors.

    python benchmarks/locomo_eval.py                    # full dev split, ~3–4 min on 2 CPUs
    python benchmarks/locomo_eval.py --conversations 1 --questions 40   # quick look
    python benchmarks/locomo_eval.py --dense-bench 100000

The data is read from ``/work/shared/data/locomo/locomo-dev.json`` (``--data`` or
``$LOCOMO_DATA`` to override); it is never copied into the repository.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from brainfs.cache.embedder import load_embedder
from brainfs.cache.index import SearchIndex
from brainfs.cache.locomo import (CATEGORIES, _content_hash, _QueryCache, conversation_tree,
                                  evaluate, index_retriever, wiki_retriever)

DATA = Path(os.environ.get("LOCOMO_DATA", "/work/shared/data/locomo/locomo-dev.json"))
OUT = Path(__file__).resolve().parent / "results"
#: The conversations the fusion constant was chosen on; the rest are held out.
TUNING = ("conv-26", "conv-30")


def build_benchmark(data: Path, embedder: Any) -> dict[str, Any]:
    """Index the whole split as one memory tree: throughput and size at rest."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    tree: dict[str, str] = {}
    for s in samples:
        tree.update(conversation_tree(s))
    files = [(p, _content_hash(t)) for p, t in tree.items()]
    out: dict[str, Any] = {"files": len(tree), "bytes_of_text": sum(len(t.encode()) for t in tree.values())}
    with tempfile.TemporaryDirectory(prefix="brainfs-ixbench-") as tmp:
        for label, emb in (("fts_only", None), ("hybrid", embedder)):
            db = Path(tmp) / f"{label}.db"
            ix = SearchIndex(db)
            st = ix.refresh(files, lambda p: tree[p].encode(), emb)
            again = ix.refresh(files, lambda p: tree[p].encode(), emb)  # nothing changed
            ix.close()
            size = sum(f.stat().st_size for f in Path(tmp).glob(f"{label}.db*"))
            out[label] = {"chunks": st["chunks"], "seconds": st["seconds"],
                          "embed_seconds": st["embed_seconds"], "chunks_per_s": st["chunks_per_s"],
                          "bytes": size, "bytes_per_chunk": round(size / max(1, st["chunks"])),
                          "mb_per_1000_files": round(size / len(tree) * 1000 / 1e6, 1),
                          "noop_refresh_seconds": again["seconds"]}
    return out


def dense_bench(n: int, dim: int = 384, queries: int = 20) -> dict[str, Any]:
    """vec0 KNN vs numpy brute force over ``n`` random unit vectors (top-50)."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    res: dict[str, Any] = {"vectors": n, "dim": dim}
    with tempfile.TemporaryDirectory(prefix="brainfs-densebench-") as tmp:
        ix = SearchIndex(Path(tmp) / "d.db")
        with ix.conn:
            ix.conn.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dim}] "
                            "distance_metric=cosine)")
            ix.conn.executemany("INSERT INTO chunks(id, path, anchor, kind, confidence, text, "
                                "ordinal, vec) VALUES (?, 'p', '', 'text', 1, '', 0, 1)",
                                ((i + 1,) for i in range(n)))
            ix.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                                ((i + 1, x[i].tobytes()) for i in range(n)))
            ix.conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', 'bench'), ('dim', ?)",
                            (str(dim),))
        qs = x[rng.integers(0, n, queries)] + 0.05 * rng.standard_normal((queries, dim)).astype(np.float32)
        for backend in ("vec0", "numpy"):
            ix.dense_backend = backend
            t = time.perf_counter()
            ix.dense_search(qs[0], 50)  # numpy: loads the matrix once
            first = time.perf_counter() - t
            t = time.perf_counter()
            for q in qs:
                ix.dense_search(q, 50)
            res[backend] = {"ms_per_query": round((time.perf_counter() - t) * 1000 / queries, 2),
                            "first_query_ms": round(first * 1000, 1)}
        ix.close()
    return res


def weighted(entry: dict[str, Any], convs: set[str], level: str) -> dict[str, float]:
    """Question-weighted recall over a subset of conversations."""
    parts = [v for c, v in entry["by_conversation"].items() if c in convs]
    n = sum(p["questions"] for p in parts)
    return {k: round(sum(p[level][k] * p["questions"] for p in parts) / n, 4) if n else 0.0
            for k in (parts[0][level] if parts else {})}


def render(res: dict[str, Any], cmd: str) -> str:
    ks = res["ks"]
    r = res["retrievers"]
    lines = [
        "# LoCoMo evidence recall — brainfs recall",
        "",
        f"Data: `{res['config']['data']}` (LoCoMo development split: {res['conversations']} "
        f"conversations), {res['questions']} questions of categories 1–4 "
        f"({res['skipped_questions']} skipped: no valid evidence id; "
        f"{res['dropped_evidence_ids']} evidence ids dropped as malformed or naming no turn).",
        f"Embedder: {res['config']['embedder']}; fusion {res['config']['fusion']}; "
        f"strict AND first: {res['config']['strict_first']}. One index per conversation.",
        f"Generated {res['generated']} on {res['machine']}.",
        "",
        "Turn recall@k: share of a question's gold evidence turns among the turns of the top-k "
        "passages (LoCoMo's retrieval metric). Session recall@k: share of the gold evidence's "
        "sessions hit. tokens@k: mean passage size in MiniLM word pieces.",
        "",
        "| retriever | " + " | ".join(f"turn R@{k}" for k in ks) + " | "
        + " | ".join(f"session R@{k}" for k in ks) + " | "
        + " | ".join(f"tokens@{k}" for k in ks) + " | ms/query |",
        "|---" * (2 + 3 * len(ks)) + "|",
    ]
    for name, e in r.items():
        lines.append(f"| {name} | " + " | ".join(f"{e['turn'][f'recall@{k}']:.3f}" for k in ks)
                     + " | " + " | ".join(f"{e['session'][f'recall@{k}']:.3f}" for k in ks)
                     + " | " + " | ".join(f"{e[f'tokens@{k}']:.0f}" for k in ks)
                     + f" | {e['ms_per_query']:.1f} |")
    lines += ["", "## By category (turn recall@10)", "",
              "| retriever | " + " | ".join(f"{c} {n} (n)" for c, n in CATEGORIES.items()) + " |",
              "|---" * (1 + len(CATEGORIES)) + "|"]
    for name, e in r.items():
        cells = []
        for c in CATEGORIES:
            b = e["by_category"].get(str(c))
            cells.append(f"{b['turn']['recall@10']:.3f} ({b['questions']})" if b else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    wikis = [n for n in r if n.startswith("hybrid+wiki")]
    if wikis and "hybrid" in r:
        lines += ["", "## The wiki ablation by category (turn recall@5 / @10 / @20)", "",
                  "Same k and the same transcript index in every arm; the wiki arms add dream's "
                  "`knowledge/` pages as a second ranked list (see `cache.locomo.wiki_retriever`). "
                  "tokens@10 is the mean passage size the arm returns.", "",
                  "| retriever | " + " | ".join(f"{c} {n}" for c, n in CATEGORIES.items())
                  + " | all | tokens@10 |",
                  "|---" * (3 + len(CATEGORIES)) + "|"]
        for name in ["hybrid", *wikis]:
            e = r[name]
            cells = []
            for c in CATEGORIES:
                b = e["by_category"].get(str(c))
                cells.append(" / ".join(f"{b['turn'][f'recall@{k}']:.3f}" for k in ks) if b else "–")
            cells.append(" / ".join(f"{e['turn'][f'recall@{k}']:.3f}" for k in ks))
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {e['tokens@10']:.0f} |")
    held = {c for e in r.values() for c in e["by_conversation"]} - set(TUNING)
    if held:
        lines += ["", f"## Held-out conversations ({', '.join(sorted(held))})", "",
                  f"RRF's k was chosen on {', '.join(TUNING)} only; these are the others.", "",
                  "| retriever | " + " | ".join(f"turn R@{k}" for k in ks) + " | "
                  + " | ".join(f"session R@{k}" for k in ks) + " |",
                  "|---" * (1 + 2 * len(ks)) + "|"]
        for name, e in r.items():
            t, s = weighted(e, held, "turn"), weighted(e, held, "session")
            lines.append(f"| {name} | " + " | ".join(f"{t[f'recall@{k}']:.3f}" for k in ks)
                         + " | " + " | ".join(f"{s[f'recall@{k}']:.3f}" for k in ks) + " |")
    ib = res.get("index_build")
    if ib:
        h, f = ib["hybrid"], ib["fts_only"]
        lines += ["", "## Index build (the whole split as one memory tree)", "",
                  f"{ib['files']} transcript files, {h['chunks']} chunks (turns), "
                  f"{ib['bytes_of_text'] / 1e6:.2f} MB of text.", "",
                  "| build | chunks/s | seconds | index size | bytes/chunk | MB per 1,000 files | no-op refresh |",
                  "|---|---|---|---|---|---|---|",
                  f"| FTS5 + MiniLM vectors | {h['chunks_per_s']:.0f} | {h['seconds']:.1f} | "
                  f"{h['bytes'] / 1e6:.1f} MB | {h['bytes_per_chunk']} | {h['mb_per_1000_files']} | "
                  f"{h['noop_refresh_seconds'] * 1000:.0f} ms |",
                  f"| FTS5 only | {f['chunks_per_s']:.0f} | {f['seconds']:.2f} | "
                  f"{f['bytes'] / 1e6:.1f} MB | {f['bytes_per_chunk']} | {f['mb_per_1000_files']} | "
                  f"{f['noop_refresh_seconds'] * 1000:.0f} ms |",
                  "",
                  f"Embedding is {h['embed_seconds'] / max(h['seconds'], 1e-9):.0%} of the hybrid "
                  "build (MiniLM on CPU; each turn is embedded with the turn it replies to). "
                  "A file here is one session transcript of ~22 turns."]
    db = res.get("dense_bench")
    if db:
        lines += ["", f"## Dense search over {db['vectors']:,} × {db['dim']}-d vectors (top-50)", "",
                  "| backend | ms/query | first query |", "|---|---|---|",
                  f"| sqlite-vec vec0 KNN | {db['vec0']['ms_per_query']} | {db['vec0']['first_query_ms']} ms |",
                  f"| numpy brute force (cached matrix, the default) | {db['numpy']['ms_per_query']} | "
                  f"{db['numpy']['first_query_ms']} ms (loads the matrix) |"]
    lines += ["", "Reproduce:", "", "```", cmd, "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="LoCoMo-format JSON file")
    ap.add_argument("--out", type=Path, default=OUT, help="directory for locomo.md / locomo.json")
    ap.add_argument("--conversations", type=int, default=None, help="first N conversations only")
    ap.add_argument("--questions", type=int, default=None, help="first N questions per conversation")
    ap.add_argument("--no-wiki", action="store_true", help="skip hybrid+wiki (dream's wiki)")
    ap.add_argument("--no-ablation", action="store_true", help="skip the hybrid k=60 ablation")
    ap.add_argument("--no-build", action="store_true", help="skip the index build measurement")
    ap.add_argument("--dense-bench", type=int, default=0, metavar="N",
                    help="also time dense search over N random vectors (e.g. 100000)")
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"error: {args.data}: no such file", file=sys.stderr)
        return 2
    tty = sys.stderr.isatty()
    embedder = _QueryCache(load_embedder())
    extra: dict[str, Any] = {}
    if not args.no_ablation:
        extra["hybrid k=60"] = index_retriever("hybrid", rrf_k=60)
    if not args.no_wiki:
        try:
            from brainfs.dream.locomo import build_wiki

            extra["hybrid+wiki"] = wiki_retriever(build_wiki)
            # the same wiki with subjects by capitalisation rules instead of spaCy NER
            extra["hybrid+wiki (rules)"] = wiki_retriever(
                lambda tree: build_wiki(tree, settings={"extractor": "rules"}))
        except Exception as e:  # noqa: BLE001 - dream missing or broken: report without it
            print(f"hybrid+wiki skipped: {e}", file=sys.stderr)
    t = time.perf_counter()
    res = evaluate(args.data, limit_conversations=args.conversations, limit_questions=args.questions,
                   embedder=embedder, progress=tty, extra_retrievers=extra)
    res["eval_seconds"] = round(time.perf_counter() - t, 1)
    res["generated"] = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    res["machine"] = (f"{platform.machine()}, {os.cpu_count()} CPUs, load avg "
                      f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}")
    if not args.no_build:
        res["index_build"] = build_benchmark(args.data, load_embedder())
    if args.dense_bench:
        res["dense_bench"] = dense_bench(args.dense_bench)
    cmd = "python benchmarks/locomo_eval.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])
                                                 if (argv if argv is not None else sys.argv[1:]) else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "locomo.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    (args.out / "locomo.md").write_text(render(res, cmd), encoding="utf-8")
    print(render(res, cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
