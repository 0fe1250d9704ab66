"""Cost of recall's currency stage (``cur-v1``: replaced values marked and ranked below
what replaced them) as a ratio: the same queries with the stage and with the index's
statements hidden, alternately, median of 7 rounds. Sparse mode (no model), so the search
is the cheapest it gets and the stage's share the largest.

    python benchmarks/currency_cost.py INDEX_FOLDER

INDEX_FOLDER: a local copy of a memory's index (e.g. ``$BRAINFS_CACHE_DIR/index`` after
``brainfs recall … s3://B/P``), best one with fact records and superseded cards (the demo
sample after ``brainfs correct "figures as SVG, not PDF"`` and a dream).
"""
import statistics, sys, time
from pathlib import Path
from brainfs.cache.search.shardsync import open_local
from brainfs.cache.search import retrieval
from brainfs.cache.search.validity import Validity
idx = open_local(Path(sys.argv[1]))
qs = ["what format should figures be in", "who leads Ramp Ledger", "where does Amara Mensah work",
      "which organizations did I meet in Kyoto", "how many interview recordings from Nagoya",
      "what is the threshold for caption latency", "budget for sign language interpretation",
      "when is the ethics amendment due"]
empty = Validity([])
real = idx.validity
for q in qs:  # warm
    retrieval.retrieve(idx, q, k=10, mode="sparse")
with_t, without_t = [], []
for rnd in range(7):
    for on in ((True, False) if rnd % 2 == 0 else (False, True)):
        idx.validity = real if on else (lambda: empty)
        t = time.perf_counter()
        for q in qs:
            retrieval.retrieve(idx, q, k=10, mode="sparse")
        (with_t if on else without_t).append((time.perf_counter() - t) * 1000 / len(qs))
idx.validity = real
a, b = statistics.median(with_t), statistics.median(without_t)
print(f"ms per query, median of 7 rounds of {len(qs)} queries: with cur-v1 {a:.1f}, without {b:.1f}, ratio {a/b:.3f}")
print(f"statements: {len(idx.statements())}; validity build: ", end="")
t = time.perf_counter(); Validity(idx.statements()); print(f"{(time.perf_counter()-t)*1000:.1f} ms")
