"""Where a mount's memory goes once recall is warm (issue 17): the recall service's parts in
one process, stage by stage, without FUSE or S3.

    python -m benchmarks.recall_memory --index DIR [--trace]

``DIR`` is a local copy of an index in parts with its manifest (``index_shard_bench
--work W`` leaves one in ``W/build-<files>``). The process imports what the mount imports,
opens the parts as a mount does (``shardsync.open_local``), loads every part's vectors,
loads the embedding model, then answers the benchmark's questions; after each stage it
prints VmRSS (anonymous + file-backed), its peak, SQLite's own count of its memory and,
with ``--trace``, the Python heap that tracemalloc sees (numpy arrays included).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc
from pathlib import Path


def _status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) // 1024
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="a local copy of an index in parts")
    ap.add_argument("--trace", action="store_true", help="also trace the Python heap (slower)")
    args = ap.parse_args(argv)
    if args.trace:
        tracemalloc.start()
    rows: list[dict] = []

    def mark(stage: str) -> None:
        import apsw

        gc.collect()
        row = {"stage": stage, **_status(), "sqlite_MiB": apsw.memory_used() // 2**20}
        if args.trace:
            row["python_heap_MiB"] = tracemalloc.get_traced_memory()[0] // 2**20
        rows.append(row)
        print(json.dumps(row), flush=True)

    mark("python")
    import brainfs.fs.daemon  # noqa: F401 - what the mount imports
    import brainfs.fs.recall  # noqa: F401
    mark("the mount's imports")
    from brainfs.backend.config import Config
    from brainfs.cache.search import shardsync
    from brainfs.cache.search.localindex import LocalIndex
    from brainfs.fs import heap

    from benchmarks.index_shard_bench import QUESTIONS

    index = shardsync.open_local(args.index)
    if index is None:
        print(f"error: no index in {args.index}", file=sys.stderr)
        return 2
    mark("parts open")
    for name in index.names():
        index.part(name).warm()
    heap.release_free_memory()
    mark("every part's vectors loaded")
    rec = LocalIndex(args.index, Config(), index=index)
    rec.embedder()
    heap.release_free_memory()
    mark("model loaded")
    for q in QUESTIONS:
        rec.search(q, 10)
    mark(f"{len(QUESTIONS)} recalls answered")
    codes = sum(p._matrix[1].nbytes for _, p in index._snapshot() if p._matrix is not None)
    print(json.dumps({"vector_codes_MiB": round(codes / 2**20, 1), "parts": len(index.names())}))
    rec.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
