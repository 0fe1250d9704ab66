"""Smoke run of benchmarks/index_shard_bench.py on a small sample: both layouts mount,
answer a first recall in hybrid mode, and the refresh names one part."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

pytestmark = [pytest.mark.mount, pytest.mark.model]


def test_quick_index_shard_bench(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "benchmarks.index_shard_bench", "--files", "300",
                        "--reps", "1", "--rtt-ms", "0", "--work", str(tmp_path / "work"),
                        "--out", str(tmp_path / "out")],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    [res] = json.loads((tmp_path / "out" / "index-shards.json").read_text())
    assert res["files"] == 300 and len(res["parts"]) > 1
    for layout in ("whole", "parts"):
        [run] = res["runs"][layout]
        assert run["first_mode"] == "hybrid", run["first_why"]
        assert len(run["warm"]) == 8 and all(w["mode"] == "hybrid" for w in run["warm"])
    # Small enough for recall_first_index_bytes: every part before the first recall.
    parts = res["runs"]["parts"][0]
    assert parts["first_bytes"] == sum(res["parts"].values()) == parts["index_bytes"]
    assert "still downloading" not in parts["first_why"]
    assert len(res["refresh"]["parts_refreshed"]) == 1
    assert res["refresh"]["uploaded_bytes"] < parts["index_bytes"]
    md = (tmp_path / "out" / "index-shards.md").read_text()
    assert "| 300 | whole |" in md and "| 300 | parts |" in md
