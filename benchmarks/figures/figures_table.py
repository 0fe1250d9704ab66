#!/usr/bin/env python3
"""figures_table.py OUTDIR — the key figures of a figures.sh run as Markdown tables (stdout).

Stdlib only (runs with any python3). Reads OUTDIR/{canary,locomo,personas*,context}.json,
OUTDIR/dream_stats*/dream-stats.json, OUTDIR/locomo_cv/locomo.json and OUTDIR/runs.tsv.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path


def load(p: Path):
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    runs = {}
    if (out / "runs.tsv").is_file():
        with open(out / "runs.tsv") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                runs[r["step"]] = r  # the last run of a step wins

    def how(step: str) -> str:
        r = runs.get(step)
        if not r:
            return "(not run)"
        cmd = r["command"].replace(str(out), "$OUT")
        return f"`{cmd}` — rc {r['rc']}, {float(r['wall_s']):.0f} s wall, load {r['load_at_start']}"

    L: list[str] = []
    c = load(out / "canary.json")
    if c:
        L += ["### Embedder canary (300 LoCoMo turns, no vector cache)", "", how("canary"), "",
              "| module | model_id | sha256 raw | sha256 rounded 1e-4 | sum |", "|---|---|---|---|---:|",
              f"| {c['module']} | {c['model_id']} | {c['sha256_raw'][:16]} | {c['sha256_round4'][:16]} | {c['sum']} |", ""]
    d = load(out / "locomo.json")
    if d:
        L += [f"### `brainfs eval locomo --json` (dev: {d['questions']} questions, {d['conversations']} conversations; "
              f"index {d['index']['files']} files, {d['index']['chunks']} chunks)", "", how("locomo"), "",
              "| retriever | turn R@5 | turn R@10 | turn R@20 | session R@5 | session R@10 | session R@20 "
              "| multi-hop turn R@10 | answers in 1,000 tokens (share, n) | degraded |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, r in d["retrievers"].items():
            t, s = r["turn"], r["session"]
            mh = next((v for k, v in r.get("by_category", {}).items()
                       if "multi" in str(v.get("name", k))), {})
            mh10 = (mh.get("turn") or {}).get("recall@10", "")
            a = r.get("answers") or {}
            L.append(f"| {n} | {t['recall@5']:.4f} | {t['recall@10']:.4f} | {t['recall@20']:.4f} | "
                     f"{s['recall@5']:.4f} | {s['recall@10']:.4f} | {s['recall@20']:.4f} | {mh10} | "
                     f"{a.get('share', '')} ({a.get('questions', '')}) | {r.get('degraded_queries', '')} |")
        L.append("")
    for step, title in (("personas", "dream_personas.py --json"),
                        ("personas_user", "dream_personas.py --json --user-role"),
                        ("personas_tune", "dream_personas.py --json --tune (held out)")):
        p = load(out / f"{step}.json")
        if not p:
            continue
        L += [f"### {title}", "", how(step), "",
              "| persona | pages | key found | recall | precision | type acc. | junk | stale as current | current missing | chosen |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for n, f in p.items():
            chosen = ""
            if "held_out" in f:
                chosen = json.dumps(f["chosen_on_others"]).replace('"', "")
                f = f["held_out"]
            L.append(f"| {n} | {f['pages']} | {f['found']}/{f['key']} | {f['recall']} | {f['precision']} | "
                     f"{f['type_accuracy']} | {len(f['junk_pages'])} | {len(f['stale_as_current'])} | "
                     f"{len(f['current_missing'])} | {chosen} |")
        L.append("")
    cx = load(out / "context.json")
    if cx:
        L += [f"### context_eval.py (hybrid assembly, {cx.get('conversations')} conversations, "
              f"reserve {cx.get('reserve_frac')})", "", how("context"), "",
              "| budget | questions | evidence in context | + truncated | all evidence | mean used tokens | mean items |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
        for b, e in cx["budgets"].items():
            L.append(f"| {b} | {e['questions']} | {e['evidence_in_context']} | {e['with_truncated']} | "
                     f"{e['all_evidence_in_context']} | {e['mean_used_tokens']} | {e.get('mean_items', '')} |")
        L.append("")
    for step in ("dream_stats", "dream_stats_embed"):
        ds = load(out / step / "dream-stats.json")
        if not ds:
            continue
        s = ds["summary"]
        L += [f"### {step} (dream over LoCoMo dev, extractor {s['extractor']}, embed {s['embed']})", "", how(step), "",
              "| sessions | pages | facts | claims | citations | valid citations | rejected | contradictions | superseded | problems |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
              f"| {s['sessions_read']} | {s['pages']} | {s['facts']} | {s['claims']} | {s['citations']} | "
              f"{s['share_valid_citations']} | {s['rejected']} | {s['contradictions']} | {s['superseded']} | {s['problems']} |", ""]
    cv = load(out / "locomo_cv" / "locomo.json")
    if cv:
        L += [f"### locomo_eval.py: leave-one-conversation-out cross-validated ({cv.get('questions')} questions)",
              "", how("locomo_cv"), "",
              "| retriever | turn R@5 | turn R@10 | turn R@20 | session R@5 | session R@10 | session R@20 | multi-hop turn R@10 | tokens@10 |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, arm in cv["arms"].items():
            c = arm["cv"]
            t, ss = c["turn"], c["session"]
            mh = next((v for v in c.get("by_category", {}).values() if v.get("name") == "multi-hop"), {})
            L.append(f"| {n} | {t['recall@5']:.4f} | {t['recall@10']:.4f} | {t['recall@20']:.4f} | "
                     f"{ss['recall@5']:.4f} | {ss['recall@10']:.4f} | {ss['recall@20']:.4f} | "
                     f"{(mh.get('turn') or {}).get('recall@10', '')} | {c.get('tokens@10', '')} |")
        L += ["", "(full tables: `locomo_cv/locomo.md`)", ""]
    da = load(out / "dream_answers" / "dream-answers.json")
    if da:
        sm = da["summary"]
        L += ["### dream_answers.py", "", how("dream_answers"), "",
              "| set | questions | named page | wiki | wiki as read | page, no cap | transcripts |",
              "|---|---:|---:|---:|---:|---:|---:|"]
        for k, v in sm.items():
            if k == "recall":
                continue
            L.append(f"| {k} | {v['questions']} | {v['named_page']} | {v['wiki']} | {v['wiki as read']} | "
                     f"{v['page, no cap']} | {v['transcripts']} |")
        L += ["", "| retriever (through recall, 1,000 tokens) | questions | transcripts | + wiki as written | + wiki, cross-validated | chosen shape |",
              "|---|---:|---:|---:|---:|---|"]
        for n, v in sm.get("recall", {}).items():
            if not isinstance(v, dict) or "questions" not in v:
                continue
            L.append(f"| {n} | {v['questions']} | {v['transcripts']} | {v['wiki_default']} | "
                     f"{v['wiki_cross_validated']} | {v['tuned_shape']} |")
        L += ["", "(full tables: `dream_answers/dream-answers.md`)", ""]
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
