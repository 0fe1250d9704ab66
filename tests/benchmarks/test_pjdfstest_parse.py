"""benchmarks/pjdfstest_run.py: how a ``prove -v`` log is counted, and the report built from
the counts (fake logs, no mount); one real ``prove`` on a tiny test file that hangs, to show
a stopped file keeps its plan and its output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.pjdfstest_run import FileResult, Run, parse_prove_log, run_prove

# What `prove -v` prints for a file whose plan is 7: a pass with a description, a failure,
# a TODO failure (passes), a SKIP (passes), a test number reported twice with one failure
# (fails), a stderr line of the test, a bail-out (test 7 never runs), then prove's own
# verdict and summary lines, which carry no test number.
FAKE_LOG = """\
/tmp/pjdfstest/tests/mkdir/00.t .. 
1..7
ok 1 - did 'mkdir pjdfstest_a 0755', got 0
not ok 2 - test_check dir,0151 = dir,0755
not ok 3 # TODO mode not kept on this fs
ok 4 # SKIP no atime
ok 5
not ok 5
lstat returned -1
ok 6 - did 'rmdir pjdfstest_a', got 0
Bail out!  cannot continue
Failed 3/7 subtests
	(1 TODO test unexpectedly succeeded)

Test Summary Report
-------------------
/tmp/pjdfstest/tests/mkdir/00.t (Wstat: 256 (exited 1) Tests: 6 Failed: 2)
  Failed tests:  2, 5
  Parse errors: Bad plan.  You planned 7 tests but ran 6.
Files=1, Tests=6,  0 wallclock secs ( 0.01 usr +  0.00 sys =  0.01 CPU)
Result: FAIL
"""

QUICK_EXIT_LOG = """\
/tmp/pjdfstest/tests/chflags/00.t .. 
1..1
ok 1
ok
All tests successful.
Files=1, Tests=1,  0 wallclock secs ( 0.01 usr +  0.00 sys =  0.01 CPU)
Result: PASS
"""


def test_prove_log_is_counted_as_prove_counts() -> None:
    r = parse_prove_log(FAKE_LOG)
    assert (r.planned, r.total, r.passed) == (7, 7, 4)
    assert r.failed == [2, 5, 7]          # not ok, ok-then-not-ok, never ran
    assert r.bailed_out and r.ran_up_to == 6
    assert "1 planned tests never ran" in r.anomalies()


def test_prove_verdict_line_is_not_a_test() -> None:
    r = parse_prove_log(QUICK_EXIT_LOG)
    assert (r.planned, r.passed, r.total, r.failed, r.anomalies()) == (1, 1, 1, [], [])


def test_a_log_without_a_plan_counts_what_it_saw_and_says_so() -> None:
    r = parse_prove_log("ok 1\nnot ok 2\nok 3\nok 9\n")
    assert r.planned is None and r.total == 9 and r.passed == 3
    assert r.failed == [2, 4, 5, 6, 7, 8]
    assert any("no plan" in a for a in r.anomalies())


def test_tests_beyond_the_plan_are_not_counted_but_reported() -> None:
    r = parse_prove_log("1..2\nok 1\nok 2\nok 3\n")
    assert (r.total, r.passed, r.extra) == (2, 2, 1)
    assert "1 tests beyond the plan" in r.anomalies()


def test_report_sums_groups_per_system() -> None:
    run = Run(command="python benchmarks/pjdfstest_run.py --groups mkdir,chflags", brainfs_commit="abc1234",
              brainfs_dirty=[], rclone_version="rclone v1.75.2", pjdfstest="85a8aea",
              pjdfstest_dir="/tmp/pjdfstest", timeout_per_file=300, systems=["brainfs", "rclone"],
              groups=["mkdir", "chflags"], started="2026-11-30 23:00 UTC", finished="2026-11-30 23:01 UTC")
    run.add("mkdir", "brainfs", "00", parse_prove_log(FAKE_LOG))
    run.add("mkdir", "rclone", "00", parse_prove_log(FAKE_LOG.replace("not ok 2 -", "ok 2 -")))
    for system in ("brainfs", "rclone"):
        run.add("chflags", system, "00", parse_prove_log(QUICK_EXIT_LOG))
    md = run.to_markdown()
    assert "| mkdir | 4 / 7 | 5 / 7 |" in md
    assert "| chflags | 1 / 1 | 1 / 1 |" in md
    assert "| **total** | **5 / 8** | **6 / 8** |" in md
    assert "brainfs mkdir/00: bailed out, 1 planned tests never ran" in md
    assert "abc1234" in md and "rclone v1.75.2" in md and run.command in md
    data = json.loads(json.dumps(run.to_json()))
    assert data["totals"] == {"brainfs": {"passed": 5, "total": 8}, "rclone": {"passed": 6, "total": 8}}
    assert data["groups"]["mkdir"]["brainfs"]["files"]["00"]["failed"] == [2, 5, 7]
    assert data["groups_asked"] == ["mkdir", "chflags"]


def test_a_file_stopped_at_its_timeout_keeps_its_plan_and_output(tmp_path: Path) -> None:
    if shutil.which("prove") is None:
        pytest.skip("prove (perl) is not installed")
    test = tmp_path / "hang.t"
    test.write_text("#!/bin/sh\necho 1..3\necho ok 1\necho 'not ok 2'\necho oops >&2\nsleep 600\necho ok 3\n")
    test.chmod(0o755)
    log = tmp_path / "hang.log"
    r: FileResult = run_prove(test, tmp_path, log, timeout=2)
    # prove buffers its output: stopped by the test's end, not killed, it prints what it held.
    assert r.timed_out and (r.planned, r.passed, r.failed) == (3, 1, [2, 3])
    text = log.read_text()
    assert "oops\n" in text and "not ok 2\n" in text and "stopped after 2 s" in text
