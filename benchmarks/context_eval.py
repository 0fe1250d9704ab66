"""Does the gold evidence reach the model? Context assembly on LoCoMo.

For each LoCoMo conversation the sessions are written as a memory tree (the transcript form
of docs/ARCHITECTURE.md, via ``tools.locomo.conversation_tree``, plus ``sessions/index.md``), indexed
for real (FTS5 + MiniLM vectors, or FTS only with ``--sparse``), and every question of
categories 1–4 is run through :func:`brainfs.cache.context.assembly.assemble` at each budget. A
question's score is the share of its gold evidence turns that are inside the assembled
context (items admitted whole; ``with_truncated`` also credits turns whose item was cut to
fit). Reported per budget: mean evidence-in-context, share of questions with *all* their
evidence in context, mean tokens used, mean assembly time, and per category.

    python benchmarks/context_eval.py --conversations 2            # hybrid, budgets 2k/4k/8k
    python benchmarks/context_eval.py --conversations 2 --sparse   # FTS only
    python benchmarks/context_eval.py --json out.json

The reserve is ``--reserve-frac`` of the budget (default 0.25): budget 2000 → 1500 tokens
for memory. "now" is the day after the conversation's last session.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainfs.cache.context.assembly import MemorySource, assemble
from brainfs.cache.layout import SESSIONS_INDEX
from brainfs.cache.search.index import SearchIndex
from brainfs.tools.locomo import (CATEGORIES, _QueryCache, _sessions, clean_evidence,
                                  conversation_tree, parse_locomo_date, passage_turns)

#: The LoCoMo dev split is not in the repository: ``$BRAINFS_LOCOMO_DIR`` names the directory
#: holding ``locomo-dev.json`` (what it is: docs/ARCHITECTURE.md), or ``--data`` the file.
DATA = Path(os.environ.get("BRAINFS_LOCOMO_DIR", ".")) / "locomo-dev.json"


def write_conversation(sample: dict, root: Path) -> tuple[dict[str, str], _dt.datetime]:
    tree = conversation_tree(sample)
    conv = sample["conversation"]
    lines = []
    dates = []
    for n in _sessions(conv):
        d = parse_locomo_date(conv.get(f"session_{n}_date_time", ""))
        if d:
            dates.append(d)
        sid = f"{sample.get('sample_id') or 'conv'}-s{n}"
        lines.append(f"- {sid} | {(d or '')[:10] or '0000-00-00'} | session {n}")
    tree = dict(tree)
    tree[SESSIONS_INDEX] = "\n".join(lines) + "\n"
    for rel, text in tree.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    now = (_dt.datetime.fromisoformat(max(dates)) + _dt.timedelta(days=1) if dates
           else _dt.datetime.now()).replace(tzinfo=_dt.timezone.utc)
    return tree, now


def run(path: Path, conversations: int, questions: int | None, budgets: list[int],
        reserve_frac: float, sparse: bool, progress: bool = True) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))[:conversations]
    embedder = None
    if not sparse:
        from brainfs.cache.search.embedder import load_embedder

        embedder = _QueryCache(load_embedder())
    rows: dict[int, list[dict]] = {b: [] for b in budgets}
    index_s = 0.0
    for sample in data:
        conv = sample["conversation"]
        valid = {t["dia_id"] for n in _sessions(conv) for t in conv[f"session_{n}"] if t.get("dia_id")}
        qs = [q for q in sample.get("qa", []) if q.get("category") in CATEGORIES]
        if questions is not None:
            qs = qs[:questions]
        with tempfile.TemporaryDirectory(prefix="brainfs-ctx-eval-") as tmp:
            root = Path(tmp) / "memory"
            tree, now = write_conversation(sample, root)
            ix = SearchIndex(Path(tmp) / "index.sqlite")
            t = time.perf_counter()
            st = ix.refresh([(p, str(hash(x))) for p, x in tree.items()],
                            lambda p: tree[p].encode("utf-8"), embedder)
            index_s += time.perf_counter() - t
            src = MemorySource(root, ix, embedder=embedder, global_guide=Path(tmp) / "no-global.md")
            for q in qs:
                gold, _ = clean_evidence(q.get("evidence", []), valid)
                if not gold:
                    continue
                for b in budgets:
                    t = time.perf_counter()
                    w = assemble(str(q["question"]), src, budget=b, reserve=int(b * reserve_frac), now=now)
                    ms = (time.perf_counter() - t) * 1000
                    whole: set[str] = set()
                    cut: set[str] = set()
                    for it in w.items:
                        if it.status == "skipped":
                            continue
                        turns = passage_turns(it.source, it.text, tree)
                        (whole if it.status == "admitted" else cut).update(turns)
                    g = set(gold)
                    rows[b].append({"cat": int(q["category"]), "mode": w.mode,
                                    "recall": len(g & whole) / len(g),
                                    "recall_trunc": len(g & (whole | cut)) / len(g),
                                    "all": float(g <= whole), "used": w.used, "ms": ms,
                                    "items": len(w.admitted())})
            ix.close()
        if progress:
            print(f"[context-eval] {sample.get('sample_id')}: {st['chunks']} turns, {len(qs)} questions",
                  file=sys.stderr, flush=True)

    def agg(rs: list[dict]) -> dict:
        if not rs:
            return {}
        return {"questions": len(rs),
                "evidence_in_context": round(statistics.mean(r["recall"] for r in rs), 4),
                "with_truncated": round(statistics.mean(r["recall_trunc"] for r in rs), 4),
                "all_evidence_in_context": round(statistics.mean(r["all"] for r in rs), 4),
                "mean_used_tokens": round(statistics.mean(r["used"] for r in rs), 1),
                "mean_items": round(statistics.mean(r["items"] for r in rs), 1),
                "median_ms": round(statistics.median(r["ms"] for r in rs), 1)}

    out = {"data": str(path), "conversations": len(data), "reserve_frac": reserve_frac,
           "embedder": embedder.name if embedder else None, "index_seconds": round(index_s, 1),
           "budgets": {}}
    for b, rs in rows.items():
        entry = agg(rs)
        entry["modes"] = sorted({r["mode"] for r in rs})
        entry["by_category"] = {f"{c} {CATEGORIES[c]}": agg([r for r in rs if r["cat"] == c])
                                for c in sorted(CATEGORIES)}
        out["budgets"][str(b)] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--questions", type=int, default=None, help="first N questions per conversation")
    ap.add_argument("--budgets", default="2000,4000,8000")
    ap.add_argument("--reserve-frac", type=float, default=0.25)
    ap.add_argument("--sparse", action="store_true", help="FTS only, no embedding model")
    ap.add_argument("--json", type=Path, help="also write the result here")
    a = ap.parse_args(argv)
    if not a.data.is_file():
        print(f"error: {a.data}: no such file (set BRAINFS_LOCOMO_DIR to the directory holding "
              "locomo-dev.json, or pass --data FILE)", file=sys.stderr)
        return 2
    res = run(a.data, a.conversations, a.questions, [int(x) for x in a.budgets.split(",")],
              a.reserve_frac, a.sparse)
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))
    print(f"LoCoMo context eval: {res['conversations']} conversations, embedder {res['embedder']}, "
          f"reserve {res['reserve_frac']:.0%} of budget")
    print(f"{'budget':>7} {'questions':>9} {'evidence':>9} {'+trunc':>7} {'all-gold':>9} {'used':>7} {'ms':>7}")
    for b, e in res["budgets"].items():
        print(f"{b:>7} {e['questions']:>9} {e['evidence_in_context']:>9.3f} {e['with_truncated']:>7.3f} "
              f"{e['all_evidence_in_context']:>9.3f} {e['mean_used_tokens']:>7.0f} {e['median_ms']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
