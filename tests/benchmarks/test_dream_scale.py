"""Smoke tests of the scale benchmarks on a tiny memory (no timings asserted).

``benchmarks.dream_scale``: the new sessions it adds are what an importer would add (dated
after every other session, numbered after the last, readable by dream), and its three runs
do what they claim — the first reads every session, the incremental exactly the new ones,
the third nothing. ``benchmarks.scale_plots``: every measured point of every results file
reaches the table and a PNG; a figure nothing measured is not drawn.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks import dream_scale, scale_plots
from brainfs.dream import text as T
from brainfs.tools.sample import generate


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("dreamscale") / "mem"
    return root, generate(root, files=60, seed=7)


def _sessions(root: Path) -> dict[str, T.Transcript]:
    return {p.parent.name: T.parse_transcript(p.relative_to(root).as_posix(), p.read_text())
            for p in (root / "sessions").glob("*/transcript.md")}


def test_first_incremental_and_nothing_new(tiny: tuple[Path, dict]) -> None:
    root, gen = tiny
    settings = {**dream_scale.NO_BUDGET, "extractor": "rules"}
    first = dream_scale.one_run(root, False, settings)
    assert first["stats"]["sessions_read"] == gen["sessions"]
    assert first["pages_written"] > 0 and first["state_bytes"] > 0
    assert {"orient", "reading sessions", "writing the wiki", "verifying claims"} <= set(first["phases"])

    before = _sessions(root)
    newest_before = max(t.date for t in before.values() if t.date)
    top_before = max(int(t.turns[0].anchor[1:].split(":")[0]) for t in before.values())
    made = dream_scale.add_sessions(root, 3, seed=1007)
    after = _sessions(root)
    assert sorted(set(after) - set(before)) == sorted(made) and len(made) == 3
    for i, sid in enumerate(sorted(made)):
        tr = after[sid]
        assert tr.date and tr.date[:10] > newest_before[:10] and sid.startswith(tr.date[:10])
        assert tr.turns and {t.anchor.split(":")[0] for t in tr.turns} == {f"D{top_before + i + 1}"}

    inc = dream_scale.one_run(root, False, settings)
    assert inc["stats"]["sessions_read"] == 3
    assert inc["stats"]["sessions_total"] == gen["sessions"] + 3
    assert inc["summaries_written"] >= 3  # a summary for each new session
    again = dream_scale.one_run(root, False, settings)
    assert again["nothing_new"] and again["files_written"] == 0

    data = {"meta": {"command": "python -m benchmarks.dream_scale --files 60", "date": "d",
                     "embed": False, "extractor": "rules", "git": "g", "nproc": 2, "cpu": "c",
                     "python": "3"},
            "sizes": [{"files": gen["files"], "sessions": gen["sessions"], "first": first,
                       "incremental": inc, "nothing_new": again, "load_start": [1.0, 1.0, 1.0],
                       "load_end": [1.0, 1.0, 1.0]}]}
    md = dream_scale.render(data)
    assert "`python -m benchmarks.dream_scale --files 60`" in md
    row = next(ln for ln in md.splitlines() if "| incremental |" in ln and ln.startswith("| 60"))
    assert f"| {inc['run_s'] / first['run_s']:.3f} |" in row


def test_add_sessions_refuses_a_memory_without_sessions(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    with pytest.raises(ValueError, match="no dated session"):
        dream_scale.add_sessions(tmp_path, 2)


def test_scale_plots_every_point(tmp_path: Path) -> None:
    res = tmp_path / "results"
    res.mkdir()
    run = {"run_s": 10.0, "peak_rss_mib": 300.0}
    (res / "dream-scale.json").write_text(json.dumps({"sizes": [
        {"files": 2000, "first": run, "incremental": {**run, "run_s": 2.0}},
        {"files": 20000, "first": None},   # stopped: no point
    ]}))
    (res / "mount.md").write_text("| files | mode | mount → usable s |\n|---:|---|---:|\n"
                                  "| 2,000 | list | 6.46 | 0.5 |\n| 20,000 | snapshot | 4.76 | 0.6 |\n")
    (res / "mount-5000.md").write_text("| 5,000 | snapshot | 5.22 | 0.21 | 0.62 | 0.69× |\n")
    (res / "index-shards.md").write_text(
        "| 20,000 | parts | 668.2 | 14 | 103.2 | 8.15 | 1.72 | 1.19 | 8.3 | 78 | 662 |\n")
    ops = {"grep": {"status": "ok", "median_s": 0.2}}
    (res / "grep-2000.json").write_text(json.dumps({"meta": {"file_count": 2000}, "modes": {
        "local": {"ops": ops},
        "brainfs-warm": {"ops": {"grep": {"status": "ok", "median_s": 0.6}}},
        "brainfs-cold": {"ops": ops, "mount_s_median": 1.5, "peak_rss_kib": 81920}}}))
    assert scale_plots.main(["--results", str(res)]) == 0
    md = (res / "scale.md").read_text()
    rows = {tuple(c.strip() for c in ln.strip("|").split("|")[1:4])
            for ln in md.splitlines() if ln.startswith("| ") and "[" in ln}
    assert {("first run", "2,000", "10"), ("after 10 new sessions", "2,000", "2"),
            ("brainfs mount (list)", "2,000", "6.46"), ("brainfs mount (snapshot)", "20,000", "4.76"),
            ("brainfs mount (snapshot)", "5,000", "5.22"), ("writable, close commits", "2,000", "3"),
            ("daemon, grep -r (no recall)", "2,000", "80"), ("index parts", "20,000", "1.72"),
            ("downloaded before the first recall (parts)", "20,000", "103"),
            ("daemon, recall warm (index parts)", "20,000", "662")} <= rows
    assert not any(r[1] == "20,000" and "run" in r[0] for r in rows)
    for name in ("dream-time", "dream-rss", "mount", "grep", "rss", "index", "first-recall",
                 "recall-p50"):
        png = res / f"scale-{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    # nothing measured → no plot, and the table says which files exist
    empty = tmp_path / "empty"
    empty.mkdir()
    assert scale_plots.main(["--results", str(empty)]) == 0
    assert not list(empty.glob("*.png"))
    assert re.search(r"Plots: \.", (empty / "scale.md").read_text())
