"""The sixth supersession set (tests/data/supersession-blind6.yaml), written by someone who
read neither dream's code nor the other sets' cases. Scored blind before and after the
changes made against the fifth set's misses: 14 of 64 both times, 4 false. Its false
supersessions were then read and fixed by class (16 of 64, 0 false), so it is no longer
blind: the floors keep what it measures now — none false — and a seventh set is what would
say how supersession generalises."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

BLIND6 = Path(__file__).resolve().parent.parent / "data" / "supersession-blind6.yaml"

#: 16 of 64 (recall 0.25) and no false supersession after its false ones were fixed; 17 after
#: chat without capitals was read sentence by sentence; 19 with amounts and doses; 18 once
#: a first name in lower case was no longer run on into the words after it
RECALL_FLOOR = 0.28
FALSE_CEILING = 0


def test_the_sixth_supersession_set() -> None:
    """Dream over every memory of the sixth set: recall no lower and false supersessions no
    more than measured, every view of every memory agreeing with its records."""
    from benchmarks.supersession import load, run

    figs = run(load(BLIND6))
    assert figs["changes"] >= 60 and figs["no_change_cases"] >= 60
    assert figs["false"] <= FALSE_CEILING, figs["false_supersessions"]
    assert figs["recall"] >= RECALL_FLOOR, figs["missed"]
    assert figs["view_errors"] == {}, figs["view_errors"]
