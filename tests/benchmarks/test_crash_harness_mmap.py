"""The crash harness's write through a shared mapping with no msync (issue 27): how a kill
in flight is judged, and a few real cycles of it against brainfs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.crash_harness import WS, Generator, Op, judge, mapped_mix
from helpers import REPO

P = f"{WS}/m.md"
OLD = b"#1 old\n" + b"o" * 9000  # three pages
NEW = b"#2 new\n" + b"n" * 9000


def _kinds(before: bytes, after: bytes, got: bytes | None, quiet: bool, kind: str = "mmap"):
    op = Op(kind, kind, [], [{P: before}, {P: after}], {P})
    view = {} if got is None else {P: got}
    return [k for k, _, _ in judge(op, op.worlds, view, {P: before}, set(), {P: set()},
                                   True, False, partial_ok=quiet)]


@pytest.mark.parametrize("quiet", [False, True], ids=["close", "quiet"])
def test_a_mapping_killed_in_flight_may_leave_old_and_new_pages(quiet: bool) -> None:
    """Page by page old or new, in either commit mode, is torn_in_flight (fs/SEMANTICS.md:
    a mapping gives no atomic version); bytes that are neither, a page cut mid-way or a
    missing file is a defect; an overwrite by write(2) gets no such allowance."""
    mixed = NEW[:4096] + OLD[4096:]
    assert mapped_mix(mixed, OLD, NEW)
    assert _kinds(OLD, NEW, mixed, quiet) == ["torn_in_flight"]
    assert _kinds(OLD, NEW, OLD, quiet) == [] and _kinds(OLD, NEW, NEW, quiet) == []
    assert _kinds(OLD, NEW, NEW[:100] + OLD[100:], quiet) == ["corrupted"]
    assert _kinds(OLD, NEW, b"x" * len(NEW), quiet) == ["corrupted"]
    assert _kinds(OLD, NEW, None, quiet) == ["lost"]
    assert _kinds(OLD, NEW, mixed, quiet, kind="overwrite") == ["corrupted"]


def test_a_mapping_grown_by_ftruncate_may_show_zeros_or_the_new_pages() -> None:
    """A rewrite to a larger size: ftruncate first (zeros past the old end), then the
    pages: each page of the new size is old-or-zeros or new."""
    small, big = b"#1 small\n", b"#3 big\n" + b"b" * 10000
    zeros = small + b"\0" * (len(big) - len(small))
    assert mapped_mix(zeros, small, big)
    assert mapped_mix(big[:4096] + zeros[4096:], small, big)
    assert not mapped_mix(big[:4096] + b"\1" * (len(big) - 4096), small, big)
    assert not mapped_mix(big[:5000], small, big)  # neither size


def test_the_mmap_operation_is_drawn_and_left_out_with_no_mmap() -> None:
    def kinds(**kw) -> set[str]:
        g, tree, seen = Generator(8, 65536, shared=False, **kw), {}, set()
        for _ in range(300):
            op = g.next(tree)
            seen.add(op.kind)
            tree = op.worlds[-1]
        return seen

    assert "mmap" in kinds()
    assert "mmap" not in kinds(mmap_on=False)


@pytest.mark.mount
@pytest.mark.timeout(300)
def test_crash_harness_runs_mmap_cycles(tmp_path: Path) -> None:
    """A few cycles of writes through a mapping with kills, in quiet mode, through real
    mounts: the harness runs to the end and counts them (no defect count is asserted: the
    harness reports, the long runs in benchmarks/results/ are the measure)."""
    if shutil.which("fusermount3") is None:
        pytest.skip("fusermount3 is not installed")
    out, work = tmp_path / "results", tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.crash_harness", "--cycles", "4", "--seed", "6",
         "--target", "brainfs", "--ops", "mmap", "--commit", "quiet", "--max-size", "65536",
         "--fresh-every", "4", "--out", str(out), "--work", str(work)],
        cwd=REPO, capture_output=True, text=True, timeout=280)
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    assert proc.returncode in (0, 1), log
    [r] = json.loads((out / "crash-4-seed6-brainfs.json").read_text())["results"]
    assert r["error"] is None and r["cycles"] == 4, log
    assert r["ops"].get("mmap", 0) >= 2, r["ops"]  # the first cycles create files to map
    assert not any(work.iterdir())


def test_a_shells_overwrite_killed_in_flight_may_be_empty_only_with_quiet_commits() -> None:
    """`cmd > f` (overwrite_held) killed before its write: with quiet commits the O_TRUNC
    may be kept (fs/SEMANTICS.md: 'for O_TRUNC possibly an empty file'), as for a plain
    overwrite; with commits at close it is a defect."""
    assert _kinds(OLD, NEW, b"", True, kind="overwrite_held") == ["torn_in_flight"]
    assert _kinds(OLD, NEW, b"", False, kind="overwrite_held") == ["corrupted"]
