"""Dream's own figures on LoCoMo: pages, citations, verification, run time per 100 sessions.

Each conversation of the file is one memory tree (its sessions as transcripts); dream runs
once over it, as the first run of a fresh corpus would, and its stats are summed.

    python -m benchmarks.dream_stats "$BRAINFS_LOCOMO_DIR"/locomo-dev.json [--embed] [--out DIR]

(The LoCoMo dev split is not in the repository; docs/ARCHITECTURE.md says what it is.)

``--embed`` verifies claims with the real embedding model (as ``brainfs dream`` does by
default); without it verification is lexical only.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from brainfs.tools.locomo import conversation_tree
from brainfs.dream.core import DictTree, dream
from brainfs.tools.locomo_wiki import ABLATION_SETTINGS

SUMMED = ("sessions_read", "pages", "facts", "claims", "rejected", "citations", "contradictions",
          "superseded", "problems")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("--embed", action="store_true", help="semantic verification with the real model")
    ap.add_argument("--extractor", default="auto", choices=("auto", "spacy", "rules"))
    ap.add_argument("--out", type=Path, default=None, help="write dream-stats.md/json here")
    args = ap.parse_args()
    embedder = None
    if args.embed:
        from brainfs.cache.search.embedder import load_embedder
        embedder = load_embedder()
    samples = json.loads(args.data.read_text())
    total = dict.fromkeys(SUMMED, 0)
    valid_weighted = 0.0
    seconds = 0.0
    rows = []
    for sample in samples:
        tree = conversation_tree(sample)
        t0 = time.monotonic()
        res = dream(DictTree(dict(tree)), embedder=embedder,
                    settings={**ABLATION_SETTINGS, "extractor": args.extractor})
        dt = time.monotonic() - t0
        st = res.stats
        seconds += dt
        for k in SUMMED:
            total[k] += int(st.get(k, 0) or 0)
        valid_weighted += float(st["share_valid_citations"]) * int(st["citations"])
        rows.append({"conversation": sample.get("sample_id", "?"), "seconds": round(dt, 2),
                     **{k: st.get(k) for k in SUMMED}, "share_valid_citations": st["share_valid_citations"],
                     "verify_method": st["verify_method"]})
        print(f"{rows[-1]['conversation']}: {st['sessions_read']} sessions, {st['pages']} pages, "
              f"{st['claims']} claims, {st['rejected']} rejected, {dt:.1f} s", flush=True)
    summary = {
        **total, "seconds": round(seconds, 2),
        "seconds_per_100_sessions": round(100 * seconds / max(1, total["sessions_read"]), 2),
        "share_valid_citations": round(valid_weighted / max(1, total["citations"]), 4),
        "share_rejected": round(total["rejected"] / max(1, total["claims"]), 4),
        "extractor": args.extractor, "embed": args.embed,
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dream-stats.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
        lines = [f"# dream on {args.data.name}", "",
                 f"`python -m benchmarks.dream_stats \"$BRAINFS_LOCOMO_DIR\"/{args.data.name} "
                 f"--extractor {args.extractor}{' --embed' if args.embed else ''} --out {args.out}`", "",
                 "| sessions | pages | claims | citations valid | rejected by verification "
                 "| contradictions | run time | per 100 sessions |",
                 "|---:|---:|---:|---:|---:|---:|---:|---:|",
                 f"| {summary['sessions_read']} | {summary['pages']} | {summary['claims']} | "
                 f"{summary['share_valid_citations']:.1%} | {summary['rejected']} "
                 f"({summary['share_rejected']:.2%}) | {summary['contradictions']} | "
                 f"{summary['seconds']:.1f} s | {summary['seconds_per_100_sessions']:.1f} s |", ""]
        (args.out / "dream-stats.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
