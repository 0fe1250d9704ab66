#!/usr/bin/env python3
"""figures_strip.py OUTDIR CHECKOUT — comparable copies of a figures.sh run's JSON outputs.

Every OUTDIR/**/*.json (but figures/ and logs/) is copied to OUTDIR/figures/ with wall-clock
fields dropped (seconds, ms, rates, dates, machine, load) and the OUTDIR and CHECKOUT paths in
strings replaced by $OUT and $CHECKOUT, so that `diff -r BEFORE/figures AFTER/figures` shows
only differences of behaviour. Stdlib only.
"""

import json
import re
import shutil
import sys
from pathlib import Path

TIMING = re.compile(r"(^|_)(seconds|secs?|ms|time|timing|timings|elapsed|wall|chunks_per_s|per_s|"
                    r"per_100_sessions|started|finished|generated|date|when|machine|load)($|_)|_s$|^ms_", re.I)


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    checkout = str(Path(sys.argv[2]).resolve()) if len(sys.argv) > 2 else None

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if not TIMING.search(str(k))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, str):
            x = x.replace(str(out), "$OUT")
            return x.replace(checkout, "$CHECKOUT") if checkout else x
        return x

    dest_root = out / "figures"
    shutil.rmtree(dest_root, ignore_errors=True)
    for f in sorted(out.rglob("*.json")):
        rel = f.relative_to(out)
        if rel.parts[0] in ("figures", "logs"):
            continue
        try:
            obj = json.loads(f.read_text())
        except ValueError as e:
            print(f"figures_strip: {f} is not JSON ({e})", file=sys.stderr)
            continue
        dest = dest_root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(strip(obj), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
