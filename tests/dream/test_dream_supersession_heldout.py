"""The held-out supersession set (tests/data/supersession-heldout.yaml). It was written
without reading dream's rules, and its first measurement (34 of 49, 5 false, at 3d4b74f) was
a measure; the rules have since been generalised against its misses (roles, "she's with X
now", redundancy, lower-case self-introductions, thresholds keyed by what they set, names in
front of a quantity, hypotheticals), so it is now a *seen* set and its figure no measure of
generalisation. The floors are the figures after that change
(benchmarks/results/supersession.md): a change that loses a supersession dream makes today,
or invents one, fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

HELDOUT = Path(__file__).resolve().parent.parent / "data" / "supersession-heldout.yaml"

#: measured on the (now seen) held-out set after the rules were generalised against it
#: (benchmarks/results/supersession.md): 47 of 49 changes (recall 0.959), no false
#: supersession in 94 memories; the floor is the recall rounded down to 0.05
RECALL_FLOOR = 0.95
FALSE_CEILING = 0


def test_the_held_out_supersession_set() -> None:
    """Dream over every memory of the held-out set: recall no lower and false supersessions
    no more than measured, and every view of every memory agreeing with its records."""
    from benchmarks.supersession import load, run

    figs = run(load(HELDOUT))
    assert figs["changes"] >= 40 and figs["no_change_cases"] >= 40
    assert figs["false"] <= FALSE_CEILING, figs["false_supersessions"]
    assert figs["recall"] >= RECALL_FLOOR, figs["missed"]
    assert figs["view_errors"] == {}, figs["view_errors"]
