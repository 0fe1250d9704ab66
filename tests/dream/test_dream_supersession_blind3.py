"""The third supersession set (tests/data/supersession-blind3.yaml), written blind after the
rules were generalised against the held-out set, and **now seen**: its first measurement (16
of 56, 3 false, at d78d3b7) was the generalisation figure; the rules were then generalised
against its misses by class (verb classes of change, titles by occupation, dimensions of a
preference, trips, lower-case writers), each rule tested in wordings of its own
(tests/dream/test_dream_supersession_rules.py). It no longer measures generalisation (only a
new blind set does); its floors are today's figures (benchmarks/results/supersession.md), so
a change that loses a supersession dream makes, or invents one, fails."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

BLIND3 = Path(__file__).resolve().parent.parent / "data" / "supersession-blind3.yaml"

#: measured after the rules were generalised against this set: 52 of 56, 0 false
RECALL_FLOOR = 0.92
FALSE_CEILING = 0
#: Pages whose lines verification drops although their records are right: "handed Marlin
#: Dashboard over to Priti Shah on Monday. She's leading it now." — the cited turn's
#: "on Monday" is read in the tense of the whole turn ("she's leading": the next Monday) when
#: the claim is verified, in its sentence's (the last Monday) when the record is dated.
KNOWN_VIEW_GAPS = {"b3-lead-handed-over"}


def test_the_third_supersession_set() -> None:
    """Dream over every memory of the third set: recall no lower and false supersessions no
    more than measured, every view of every other memory agreeing with its records."""
    from benchmarks.supersession import load, run

    figs = run(load(BLIND3))
    assert figs["changes"] >= 45 and figs["no_change_cases"] >= 45
    assert figs["false"] <= FALSE_CEILING, figs["false_supersessions"]
    assert figs["recall"] >= RECALL_FLOOR, figs["missed"]
    assert set(figs["view_errors"]) <= KNOWN_VIEW_GAPS, figs["view_errors"]
