"""Smoke test of the grep benchmark: every mode runs and answers correctly (no timings).

Runs ``python -m benchmarks.grep_bench --quick`` in a subprocess (100 files, one
repetition, 2 ms RTT) and reads its JSON. brainfs modes and local must be correct; a peer
(rclone, s3fs) may be slower than the limit only if the report says so in its table.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.grep_bench import ALL_MODES, OPS
from helpers import REPO

pytestmark = pytest.mark.mount

OURS = ("local", "brainfs-cold", "brainfs-warm", "brainfs-ro-cold", "brainfs-ro-warm",
        "brainfs-opens-cold", "brainfs-opens-warm", "brainfs-naive")


def _table_rows(md: str) -> dict[str, list[str]]:
    """{mode: cells} of the main Markdown table."""
    rows: dict[str, list[str]] = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] in ALL_MODES:
            rows.setdefault(cells[0], cells)
    return rows


@pytest.mark.timeout(330)
def test_quick_benchmark_every_mode_correct(tmp_path: Path) -> None:
    for tool in ("fusermount3", "s3fs", "grep", "find"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.grep_bench", "--quick", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    assert proc.returncode == 0, log

    data = json.loads((out / "grep-100.json").read_text())
    md = (out / "grep-100.md").read_text()
    assert (out / "grep-100.png").stat().st_size > 0
    assert data["meta"]["file_count"] == 100
    assert data["meta"]["grep_matches"] >= 1
    assert "python -m benchmarks.grep_bench --quick" in md
    rows = _table_rows(md)

    assert set(data["modes"]) == set(ALL_MODES), log
    for mode in ALL_MODES:
        res = data["modes"][mode]
        assert res["error"] is None, f"{mode}: {res['error']}\n{log}"
        assert mode in rows, f"{mode} missing from the table\n{md}"
        for op, cell in zip(OPS, rows[mode][1:2] + rows[mode][4:6]):
            j = res["ops"][op]
            assert j["n"] >= 1, f"{mode} {op} never ran\n{log}"
            assert j["status"] not in ("wrong", "error", "skipped"), \
                f"{mode} {op}: {j['status']} {j['detail'] or j['error']}\n{log}"
            if j["status"] == "timeout":
                # Only a peer may be slower than the limit, and the table must say so.
                assert mode not in OURS, f"{mode} {op} hit the limit\n{log}"
                assert cell.startswith(">"), f"{mode} {op}: timeout shown as {cell!r}"
            else:
                assert j["status"] == "ok" and j["median_s"] > 0, f"{mode} {op}: {j}"
                assert cell not in ("WRONG", "ERROR", "—") and not cell.startswith(">"), \
                    f"{mode} {op}: ok but shown as {cell!r}"
        if mode.startswith("brainfs") and mode != "brainfs-naive":
            # Everything was preloaded: a grep over the mount fetches no file (the daemon's
            # own background requests after mount -- index, wiki history -- may overlap).
            assert res["ops"]["grep"]["requests_median"] < data["meta"]["file_count"] / 10, \
                res["ops"]["grep"]
            assert res["mount_s_median"] and res["peak_rss_kib"], res
