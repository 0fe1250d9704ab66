"""Jobs, titles, managers and homes read by meaning (dream/meaning.py), through dream's Python
API: a first statement in words no pattern reads is recorded, so a later value replaces it;
the clauses that name an organisation, a person or a place and state none of these make no
record and replace nothing. The set's floors (tests/data/supersession-meaning.yaml) are in
test_dream_supersession_sets.py."""

from __future__ import annotations

import datetime as _dt

import pytest

pytestmark = pytest.mark.unit


def _records(turns_by_day: list[tuple[str, list[str]]]) -> list:
    from benchmarks.supersession import tree_of

    from brainfs.cache.facts.records import FACTS_PATH, loads
    from brainfs.dream.core import DictTree, dream

    case = {"sessions": [{"date": _dt.date.fromisoformat(d), "turns": t} for d, t in turns_by_day]}
    staged = dream(DictTree(tree_of(case))).staged
    return [r for r in loads(staged.get(FACTS_PATH, "")) if r.kind != "procedure"]


def _needs_model() -> None:
    from brainfs.dream import meaning

    # .ci/setup exports the model; without it dream reads by pattern only and these tests
    # would measure nothing, so its absence is a failure, not a skip.
    assert meaning.available(), ("the sentence model (ONNX export) is missing: run .ci/setup "
                                 "(it exports all-MiniLM-L6-v2 into .venv/share/brainfs/onnx)")


@pytest.mark.parametrize("first, then, attr, old, new", [
    # a job said by what one does there, in a lower-case introduction
    ("hiya, im vida rahimi, i drive for Corbel Hardware.", "Update: I got headhunted by Lumen Grid.",
     "employer", "Corbel Hardware", "Lumen Grid"),
    # a manager said as "X manages me", then "I report to Y"
    ("Morning, Vida Rahimi. Odile Marchand manages me.", "After the reshuffle I report to Tobias Brandt.",
     "manager", "Odile Marchand", "Tobias Brandt"),
])
def test_a_first_statement_in_other_words_is_replaced(first: str, then: str, attr: str, old: str,
                                                     new: str) -> None:
    """The first value is recorded although no pattern reads its sentence, and the newer one
    closes it."""
    _needs_model()
    recs = _records([("2026-01-10", [f"Vida: {first}", "Assistant: Noted."]),
                     ("2026-04-10", [f"Vida: {then}", "Assistant: Noted."])])
    got = [r for r in recs if r.subject == "vida-rahimi" and r.attribute == attr]
    closed = [r for r in got if not r.is_open]
    assert [r.value for r in closed] == [old], got
    nxt = {r.id: r for r in recs}[closed[0].superseded_by]
    assert nxt.value == new and nxt.is_open


@pytest.mark.parametrize("second", [
    "I bought a drill at Kestrel Tools on the way home.",           # a purchase at a firm
    "My sister works at Kestrel Tools now, she loves it.",           # somebody else's job
    "I interviewed at Kestrel Tools yesterday, went okay.",          # not (yet) a job
    "If I joined Kestrel Tools I'd earn more.",                      # a condition
    "We signed a supply agreement with Kestrel Tools today.",        # a deal, not a job
    "I also do weekend shifts at Kestrel Tools now.",                # a second job beside
    "Kestrel Tools goes with Figma over Sketch, because of the licence.",  # an organisation's choice
])
def test_a_named_organisation_that_is_no_job_replaces_nothing(second: str) -> None:
    """A clause that names an organisation without stating the speaker's job leaves the job
    open."""
    _needs_model()
    recs = _records([("2026-01-10", ["Vida: Vida Rahimi. I work at Corbel Hardware.", "Assistant: Hi."]),
                     ("2026-04-10", [f"Vida: {second}", "Assistant: Noted."])])
    assert [r for r in recs if not r.is_open] == []
    assert [r.value for r in recs if r.subject == "vida-rahimi" and r.attribute == "employer"] == \
        ["Corbel Hardware"]


def test_two_people_with_one_first_name_stay_apart() -> None:
    """A job read by meaning for "Mei Lin" does not replace the job of "Mei Tanaka"."""
    _needs_model()
    recs = _records([("2026-01-10", ["Vida: Vida Rahimi. My friend Mei Tanaka is a nurse at Elm Clinic.",
                                     "Assistant: Noted."]),
                     ("2026-04-10", ["Vida: My cousin Mei Lin is a chef at Saltmarsh Dining.",
                                     "Assistant: Noted."])])
    assert [r for r in recs if not r.is_open] == []


def test_a_second_run_with_nothing_new_changes_nothing() -> None:
    """Dream over its own output with no new session stages nothing."""
    _needs_model()
    from benchmarks.supersession import tree_of

    from brainfs.dream.core import DictTree, dream

    case = {"sessions": [
        {"date": _dt.date(2026, 1, 10), "turns": ["Vida: hiya, im vida rahimi, i drive for Corbel Hardware.",
                                                  "Assistant: Hi."]},
        {"date": _dt.date(2026, 4, 10), "turns": ["Vida: Update: I got headhunted by Lumen Grid.",
                                                  "Assistant: Congratulations."]}]}
    tree = dict(tree_of(case))
    first = dream(DictTree(tree))
    tree.update(first.staged)
    second = dream(DictTree(tree))
    assert {p: t for p, t in second.staged.items() if tree.get(p) != t} == {}
