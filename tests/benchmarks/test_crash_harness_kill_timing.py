"""The crash harness judges a step by when it returned against when the kill was sent: a
step that returned after the kill ran on a dying or dead mount, and is in flight whatever
it returned (issue 27: with quiet commits, a write through a mapping whose writer started
after the kill returned 0 from close and was counted as lost)."""

from __future__ import annotations

from benchmarks.crash_harness import WS, Op, Run, judge, worlds_at_kill

P = f"{WS}/m.md"
TMP = f"{WS}/m.md.tmp"
OLD = b"#1 old\n" + b"o" * 9000
NEW = b"#2 new\n" + b"n" * 9000
KILL_AT = 100.0


def _mmap_op() -> Op:
    return Op("mmap", "mmap", [("write", lambda fd: None)], [{P: OLD}, {P: NEW}], {P})


def _judged(op: Op, run: Run, got: bytes, quiet: bool = True) -> list[str]:
    worlds = worlds_at_kill(op, run, KILL_AT)
    completed = run.done_before(KILL_AT) == len(op.steps)
    return [k for k, _, _ in judge(op, worlds, {P: got}, op.worlds[0], set(), {P: set()},
                                   True, completed, partial_ok=quiet and not completed)]


def test_a_close_that_returned_before_the_kill_is_complete() -> None:
    run = Run(done=1, finished=True, t_start=99.0, t_end=99.5, step_ends=[99.5])
    assert run.done_before(KILL_AT) == 1
    assert worlds_at_kill(_mmap_op(), run, KILL_AT) == [{P: NEW}]
    assert _judged(_mmap_op(), run, NEW) == []
    assert _judged(_mmap_op(), run, OLD) == ["corrupted"]


def test_a_close_that_returned_after_the_kill_was_sent_is_in_flight() -> None:
    """The writer process started 15 ms after the kill was sent, wrote its mapping and
    closed with status 0 (no FLUSH with quiet commits): the old version is allowed, and so
    is the new one, as for any step in flight."""
    run = Run(done=1, finished=True, t_start=99.99, t_end=100.02, step_ends=[100.015])
    assert run.done_before(KILL_AT) == 0
    assert worlds_at_kill(_mmap_op(), run, KILL_AT) == [{P: OLD}, {P: NEW}]
    assert _judged(_mmap_op(), run, OLD) == []
    assert _judged(_mmap_op(), run, NEW) == []
    assert _judged(_mmap_op(), run, b"x" * len(NEW)) == ["corrupted"]


def test_of_two_steps_only_those_that_returned_before_the_kill_are_complete() -> None:
    """An atomic save: the write of the temporary file returned before the kill, the
    rename after it: the rename is the step in flight."""
    w0, w1, w2 = {P: OLD}, {P: OLD, TMP: NEW}, {P: NEW}
    op = Op("atomic", "atomic", [("write tmp", lambda fd: None), ("rename", lambda fd: None)],
            [w0, w1, w2], {P, TMP})
    run = Run(done=2, finished=True, t_start=99.0, t_end=100.01, step_ends=[99.5, 100.01])
    assert worlds_at_kill(op, run, KILL_AT) == [w1, w2]
    run = Run(done=2, finished=True, t_start=99.0, t_end=99.9, step_ends=[99.5, 99.9])
    assert worlds_at_kill(op, run, KILL_AT) == [w2]
