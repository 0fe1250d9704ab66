"""Smoke test of the crash harness: a few cycles against brainfs and rclone run to the end,
write their report, and leave no mount or process behind (no numbers are asserted: the
harness reports defects, it is not the place to require their absence).

Runs ``python -m benchmarks.crash_harness --cycles 4 --target both`` in a subprocess with
small files and one fresh-cache check, and reads its JSON and Markdown.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mount

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.crash_harness import DEFECTS, LABELS  # noqa: E402


def _mounts_under(root: Path) -> list[str]:
    base = str(root.resolve()) + "/"
    with open("/proc/mounts") as f:
        return [p[1] for p in (line.split() for line in f) if len(p) > 1 and p[1].startswith(base)]


@pytest.mark.timeout(300)
def test_crash_harness_runs_a_few_cycles(tmp_path: Path) -> None:
    if shutil.which("fusermount3") is None:
        pytest.skip("fusermount3 is not installed")
    out, work = tmp_path / "results", tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.crash_harness", "--cycles", "4", "--seed", "3",
         "--target", "both", "--max-size", "65536", "--fresh-every", "4", "--out", str(out),
         "--work", str(work)],
        cwd=REPO, capture_output=True, text=True, timeout=280,
    )
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    # 0: no defect, 1: defects found (a finding, not a harness failure), 2: harness failed
    assert proc.returncode in (0, 1), log
    data = json.loads((out / "crash-4-seed3.json").read_text())
    md = (out / "crash-4-seed3.md").read_text()
    assert [r["target"] for r in data["results"]] == ["brainfs", "rclone"]
    for r in data["results"]:
        assert r["error"] is None, f"{r['target']}: {r['error']}\n{log}"
        assert r["cycles"] == 4, log
        assert set(r["counts"]) == set(DEFECTS)
        assert sum(r["landed"].values()) == 4
        assert r["fresh_checks"] == 1
        assert len(r["cycle_log"]) == 4
        for d in r["defects"]:  # every defect says where and what
            assert d["kind"] in DEFECTS and d["path"] and d["op"] and d["view"]
    assert "python -m benchmarks.crash_harness" in md
    for k in DEFECTS:
        assert LABELS[k] in md
    # Every mount was unmounted and the work directory removed, pass or fail.
    assert not _mounts_under(tmp_path), _mounts_under(tmp_path)
    assert not any(work.iterdir())
