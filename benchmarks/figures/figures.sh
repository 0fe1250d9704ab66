#!/usr/bin/env bash
# figures.sh CHECKOUT OUTDIR — the deterministic quality figures of one brainfs checkout, for a
# before/after comparison of a behaviour-preserving refactor (issue 18).
#
# CHECKOUT must hold its own .venv (built by its .ci/setup). Everything runs through
# CHECKOUT/.venv/bin/brainfs and CHECKOUT/benchmarks/*.py, never through a module path, so the
# same script works after modules move. The one exception is the embedder canary (step 0),
# which *finds* the module defining `load_embedder` by reading the installed package's
# sources instead of naming it.
#
# Writes into OUTDIR:
#   <step>.json / <step>.txt   raw outputs of each benchmark
#   logs/<step>.log            its stderr (and stdout when that is not the result)
#   figures/<step>.json        the same JSON with wall-clock fields removed and OUTDIR/CHECKOUT
#                              paths neutralised (figures_strip.py); compare these:
#                              `diff -r BEFORE/figures AFTER/figures`
#   runs.tsv                   step, exit code, wall seconds, load average at start, command
#   table.md                   the key figures as Markdown tables (figures_table.py)
#
# Environment (all optional):
#   BRAINFS_LOCOMO_DIR   required: the directory holding locomo-dev.json (docs/ARCHITECTURE.md)
#   FIGURES_EMBED_CACHE  BRAINFS_EMBED_CACHE for every step; default
#                        /tmp/brainfs-figures-embed.sqlite, kept apart from the per-user cache.
#                        At ab92f3f no step here actually reaches that vector cache: the
#                        benchmarks hand the index an embedder wrapper without a model_id
#                        (_QueryCache), which embedcache.with_cache leaves uncached, so every
#                        run embeds fresh (the file is never created). The persistent caches
#                        are locomo_cv's and dream_answers' --embed-cache npz files under /tmp,
#                        keyed by model_id (weights sha +
#                        backend/quantization + truncation), which does NOT change when the
#                        embedding *code* changes (tokenizer call, pooling, normalisation):
#                        step 0 (canary) embeds fixed texts with no cache at all; its
#                        fingerprint must match before/after for cached figures to be trusted.
#                        FIGURES_EMBED_CACHE=off turns the vector cache off outright.
#   FIGURES_STEPS        space-separated subset of: canary locomo personas personas_tune
#                        personas_user context dream_stats dream_stats_embed locomo_cv
#                        dream_answers  (default: all but locomo_cv and dream_answers, which
#                        take 15+ and ~11 min on 2 shared CPUs)
#
# Skipped on purpose: grep_bench, mount_bench, recall_bench, embed_bench, mcp_bench,
# import_bench, soak, crash_harness, pjdfstest_run (wall-clock / throughput figures, not
# comparable on a shared, loaded machine, or randomized harnesses needing root/long runs).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

if [ $# -ne 2 ]; then
  echo "usage: $0 CHECKOUT OUTDIR" >&2
  exit 2
fi
CHECKOUT=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && OUT=$(cd "$2" && pwd) || exit 2
PY="$CHECKOUT/.venv/bin/python"
BFS="$CHECKOUT/.venv/bin/brainfs"
for x in "$PY" "$BFS"; do
  [ -x "$x" ] || { echo "error: $x missing (run $CHECKOUT/.ci/setup first)" >&2; exit 2; }
done
export BRAINFS_LOCOMO_DIR=${BRAINFS_LOCOMO_DIR:?set BRAINFS_LOCOMO_DIR to the directory holding locomo-dev.json}
DATA="$BRAINFS_LOCOMO_DIR/locomo-dev.json"
[ -f "$DATA" ] || { echo "error: $DATA missing (set BRAINFS_LOCOMO_DIR)" >&2; exit 2; }
export BRAINFS_EMBED_CACHE=${FIGURES_EMBED_CACHE:-/tmp/brainfs-figures-embed.sqlite}
# Tempfile names: see detshim below. Fixed string hashing: set iteration order is then the same in both runs, so a figure that
# depends on it cannot differ between before and after by chance.
export PYTHONHASHSEED=0
# No user config file may change defaults (the eval reads config for the embedder choice).
export BRAINFS_CONFIG=/dev/null
export TQDM_DISABLE=1
# One run at a time on this machine: the steps share FIGURES_TMP (see detshim below).
exec 9> /tmp/brainfs-figures.lock
flock -n 9 || { echo "another figures.sh run holds /tmp/brainfs-figures.lock; waiting" >&2; flock 9; }
export FIGURES_TMP=/tmp/brainfs-figures-tmp
STEPS=${FIGURES_STEPS:-"canary locomo personas personas_tune personas_user context dream_stats dream_stats_embed"}
mkdir -p "$OUT/logs" "$OUT/figures"
cd "$CHECKOUT" || exit 2
{
  echo "== run started $(date -u +%FT%TZ), steps: $STEPS"
  echo "checkout: $CHECKOUT"
  echo "commit: $(git -C "$CHECKOUT" rev-parse HEAD 2>/dev/null) $(git -C "$CHECKOUT" status --porcelain 2>/dev/null | grep -qv '^??' && echo '(dirty)')"
  echo "started: $(date -u +%FT%TZ)"
  echo "host: $(nproc) CPUs, $(uname -r), $("$PY" -V 2>&1)"
  echo "data: $DATA sha256 $(sha256sum "$DATA" | cut -c1-16)"
  echo "BRAINFS_EMBED_CACHE=$BRAINFS_EMBED_CACHE PYTHONHASHSEED=$PYTHONHASHSEED BRAINFS_CONFIG=$BRAINFS_CONFIG"
  echo "other BRAINFS_* in the environment: $(env | grep '^BRAINFS_' | grep -v -e '^BRAINFS_EMBED_CACHE=' -e '^BRAINFS_CONFIG=' -e '^BRAINFS_LOCOMO_DIR=' | tr '\n' ' ')"
  echo "embed cache file at start: $( [ -f "$BRAINFS_EMBED_CACHE" ] && stat -c '%s bytes' "$BRAINFS_EMBED_CACHE" || echo absent)"
} >> "$OUT/env.txt"
[ -f "$OUT/runs.tsv" ] || printf 'step\trc\twall_s\tload_at_start\tcommand\n' > "$OUT/runs.tsv"

# Benchmarks under detshim.py: temporary files under the fixed directory $FIGURES_TMP (emptied
# before each step), directories with a prefix named prefix + count, other names drawn from
# random.Random(0). Without it context_eval is not repeatable: the
# context's scope item says "Memory root: /tmp/brainfs-ctx-eval-<random>/memory", and the
# tokens of that random name change the budget left for evidence (two runs of ab92f3f
# differed by up to 0.007 in multi-hop all-evidence).
cat > "$OUT/logs/detshim.py" <<'EOF'
import os, random, runpy, sys, tempfile
base = os.environ["FIGURES_TMP"]
os.makedirs(base, exist_ok=True)
tempfile.tempdir = base
seq = tempfile._RandomNameSequence()
seq._rng = random.Random(0)
seq._rng_pid = os.getpid()
tempfile._name_sequence = seq
# Directories made with a prefix are named prefix + their count (brainfs-ctx-eval-0001, …),
# so their paths do not depend on how many other temporary names the process drew before.
_mkdtemp, _counts = tempfile.mkdtemp, {}
def _named_mkdtemp(suffix=None, prefix=None, dir=None):
    if prefix and dir is None:
        n = _counts[prefix] = _counts.get(prefix, 0) + 1
        path = os.path.join(base, f"{prefix}{n:04d}{suffix or ''}")
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            pass
    return _mkdtemp(suffix, prefix, dir)
tempfile.mkdtemp = _named_mkdtemp
if sys.argv[1] == "-m":
    mod, sys.argv = sys.argv[2], [sys.argv[2]] + sys.argv[3:]
    sys.path[0] = os.getcwd()
    runpy.run_module(mod, run_name="__main__", alter_sys=True)
else:
    script, sys.argv = sys.argv[1], sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
EOF
SHIM="$OUT/logs/detshim.py"

# run STEP STDOUT_FILE CMD... : stdout to STDOUT_FILE, stderr to logs/STEP.log, time in runs.tsv
run() {
  local step=$1 dest=$2; shift 2
  local load t0 t1 rc
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "[$(date -u +%T)] $step: $*" >&2
  rm -rf "$FIGURES_TMP"; mkdir -p "$FIGURES_TMP"
  t0=$(date +%s.%N)
  "$@" > "$dest" 2> "$OUT/logs/$step.log"
  rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%.1f\t%s\t%s\n' "$step" "$rc" "$(echo "$t1 - $t0" | bc)" "$load" "$*" >> "$OUT/runs.tsv"
  echo "[$(date -u +%T)] $step: rc=$rc" >&2
  return $rc
}
want() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }

# 0. Embedder canary: fixed texts (the first 300 turns of the dev split), embedded in one call
# with no vector cache, hashed raw and rounded to 4 decimals.
if want canary; then
  cat > "$OUT/logs/canary.py" <<'EOF'
import hashlib, importlib, json, os, pkgutil, sys
import numpy as np
import brainfs
os.environ["BRAINFS_EMBED_CACHE"] = "off"
mod = None
for info in pkgutil.walk_packages(brainfs.__path__, "brainfs."):
    spec = info.module_finder.find_spec(info.name)
    origin = getattr(spec, "origin", None) if spec else None
    if origin and origin.endswith(".py") and "def load_embedder(" in open(origin, encoding="utf-8").read():
        mod = importlib.import_module(info.name)
        break
if mod is None:
    sys.exit("no module defines load_embedder")
data = json.load(open(sys.argv[1], encoding="utf-8"))
texts = []
for s in data:
    conv = s["conversation"]
    for k in sorted((k for k in conv if k.startswith("session_") and k.split("_")[1].isdigit()
                     and not k.endswith("date_time")), key=lambda k: int(k.split("_")[1])):
        texts += [t["text"] for t in conv[k] if t.get("text")]
texts = texts[:300]
emb = mod.load_embedder()
v = np.asarray(emb.embed(texts), dtype=np.float32)
print(json.dumps({"module": mod.__name__, "embedder": type(emb).__name__,
                  "model_id": getattr(emb, "model_id", None), "name": getattr(emb, "name", None),
                  "texts": len(texts), "shape": list(v.shape),
                  "sha256_raw": hashlib.sha256(v.tobytes()).hexdigest(),
                  "sha256_round4": hashlib.sha256(np.round(v, 4).astype(np.float32).tobytes()).hexdigest(),
                  "norm_mean": round(float(np.linalg.norm(v, axis=1).mean()), 6),
                  "sum": round(float(v.astype(np.float64).sum()), 4)}, indent=1))
EOF
  run canary "$OUT/canary.json" "$PY" "$OUT/logs/canary.py" "$DATA"
fi

# 1. brainfs eval locomo --json on the dev split: recall@k per retriever (bm25, dense, hybrid,
# hybrid+wiki) and category, and the answers-in-1000-tokens block; --per-question so a
# difference can be traced to the questions it comes from.
want locomo && run locomo "$OUT/locomo.json" "$BFS" -q eval locomo "$DATA" --json --per-question

# 2. Dream's page precision / recall on the labelled personas (tests/personas): plain, the
# leave-one-persona-out tuned figure, and with the user speaking as "User".
want personas && run personas "$OUT/personas.json" "$PY" "$SHIM" benchmarks/dream_personas.py --json
want personas_tune && run personas_tune "$OUT/personas_tune.json" "$PY" "$SHIM" benchmarks/dream_personas.py --json --tune
want personas_user && run personas_user "$OUT/personas_user.json" "$PY" "$SHIM" benchmarks/dream_personas.py --json --user-role

# 3. Context assembly on LoCoMo: gold evidence inside the assembled context, all 5 conversations.
want context && run context "$OUT/logs/context.stdout" "$PY" "$SHIM" benchmarks/context_eval.py \
  --data "$DATA" --conversations 5 --json "$OUT/context.json"

# 4. Dream's own figures on LoCoMo (pages, claims, citations, rejected), lexical and --embed.
want dream_stats && run dream_stats "$OUT/logs/dream_stats.stdout" "$PY" "$SHIM" -m benchmarks.dream_stats \
  "$DATA" --extractor spacy --out "$OUT/dream_stats"
want dream_stats_embed && run dream_stats_embed "$OUT/logs/dream_stats_embed.stdout" "$PY" "$SHIM" -m benchmarks.dream_stats \
  "$DATA" --extractor spacy --embed --out "$OUT/dream_stats_embed"

# Optional, long: the cross-validated LoCoMo grid (README's headline CV figures) and dream_answers.
want locomo_cv && run locomo_cv "$OUT/logs/locomo_cv.stdout" "$PY" "$SHIM" benchmarks/locomo_eval.py \
  --data "$DATA" --no-build --embed-cache /tmp/brainfs-figures-locomo-emb.npz --out "$OUT/locomo_cv"
want dream_answers && run dream_answers "$OUT/logs/dream_answers.stdout" "$PY" "$SHIM" benchmarks/dream_answers.py \
  --data "$DATA" --out "$OUT/dream_answers" --embed-cache /tmp/brainfs-figures-answers-emb.npz

# Comparable copies: every JSON output with wall-clock fields dropped, paths neutralised.
python3 "$HERE/figures_strip.py" "$OUT" "$CHECKOUT" || echo "figures_strip.py failed" >&2
# The key figures as Markdown (figures_table.py lies beside this script).
python3 "$HERE/figures_table.py" "$OUT" > "$OUT/table.md" \
  || echo "figures_table.py failed" >&2
echo "finished: $(date -u +%FT%TZ)" >> "$OUT/env.txt"
rm -rf "$FIGURES_TMP"
echo "done: $OUT (compare figures/ with diff -r)" >&2
