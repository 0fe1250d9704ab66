"""Amounts as people write them: a currency sign before the number, thousands grouped or
written "k", and a medicine's dose keyed by the medicine — each with the near misses that set
nothing (someone else's dose, a dose that only might be taken)."""

from __future__ import annotations

import datetime as _dt

import pytest

from brainfs.dream import relations as R

pytestmark = pytest.mark.unit


def _numbers(sentence: str) -> list[tuple[str, str, str]]:
    return [(r.subject, r.value, r.key) for r in R.extract(sentence) if r.attr == "number"]


@pytest.mark.parametrize("sentence, value", [
    ("Our holiday budget is €1,200 this year.", "€1,200"),
    ("the rent cap is $2,500 a month", "$2,500"),
    ("venue budget is 15k", "15k"),
    ("My weekly step goal is 60,000 steps.", "60,000 steps"),
])
def test_an_amount_with_its_sign_grouping_or_k(sentence: str, value: str) -> None:
    assert [v for _s, v, _k in _numbers(sentence)] == [value]


@pytest.mark.parametrize("sentence, subject, value, key", [
    ("I take 50 mcg of thyroxine with breakfast.", "", "50 mcg", "dose|thyroxine"),
    ("I'm on 40 mg omeprazole for now.", "", "40 mg", "dose|omeprazole"),
    ("The consultant lowered my propranolol to 20 mg.", "", "20 mg", "dose|propranolol"),
    ("my amlodipine dose is now 10 mg", "", "10 mg", "dose|amlodipine"),
    ("Ines Carvalho takes 5 mg ramipril every morning.", "Ines Carvalho", "5 mg", "dose|ramipril"),
])
def test_a_dose_is_keyed_by_its_medicine(sentence: str, subject: str, value: str, key: str) -> None:
    assert _numbers(sentence) == [(subject, value, key)]


@pytest.mark.parametrize("sentence", [
    "He takes 500 mg metformin twice a day.",          # whose? nobody named
    "The vet upped Biscuit's gabapentin to 100 mg.",   # someone else's
    "I might take 50 mg of sertraline if it gets worse.",
])
def test_no_dose_of_the_speaker_from_someone_elses_or_a_maybe(sentence: str) -> None:
    assert not [k for _s, _v, k in _numbers(sentence) if k.startswith("dose|")]


def test_a_dose_changed_is_a_supersession() -> None:
    from benchmarks.supersession import tree_of

    from brainfs.cache.facts.records import FACTS_PATH, loads
    from brainfs.dream.core import DictTree, dream

    case = {"sessions": [
        {"date": _dt.date(2026, 1, 10), "turns": ["Ines: I'm Ines Carvalho. I take 50 mcg of thyroxine every morning."]},
        {"date": _dt.date(2026, 3, 2), "turns": ["Ines: Results were low, the GP raised my thyroxine to 75 mcg."]}]}
    recs = loads(dream(DictTree(tree_of(case))).staged.get(FACTS_PATH, ""))
    by_id = {r.id: r for r in recs}
    closed = [(r.value, by_id[r.superseded_by].value) for r in recs if r.superseded_by]
    assert closed == [("50 mcg", "75 mcg")], [(r.subject, r.key, r.value) for r in recs]
