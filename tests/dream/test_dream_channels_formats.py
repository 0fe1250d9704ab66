"""The speaker's ways to be reached read by their shape (dream/channels.py), formats read
from their vocabulary (dream/formats.py), a stint with its end in sight, and a weekday before
a date — each in wordings of its own, with the near misses that must state nothing; then one
memory run through dream, where a new address replaces the old on the records and the page.
No model, no mount."""

from __future__ import annotations

import pytest

from brainfs.cache.facts.records import FACTS_PATH, loads
from brainfs.dream import relations as R
from brainfs.dream.core import DictTree, dream
from brainfs.dream.facts import same_phone
from brainfs.dream.formats import same_format
from dream_helpers import transcript

pytestmark = pytest.mark.unit


def _rels(sentence: str, attr: str) -> list[tuple[str, str, str]]:
    return [(r.key, r.value, r.op) for r in R.extract(sentence) if r.attr == attr]


@pytest.mark.parametrize("sentence, key, value", [
    ("Bills go to my home address, priya.k@example.org, thanks.", "contact email", "priya.k@example.org"),
    ("You can reach me at Hugo.Lind@Example.com for the booking.", "contact email", "hugo.lind@example.com"),
    ("Use ops-team@example.net for everything from now on.", "contact email", "ops-team@example.net"),
    ("my mobile is +44 7700 900123 if the courier needs it", "contact phone", "+44 7700 900123"),
    ("new number: 0612 345 678, the old sim died", "contact phone", "0612 345 678"),
    ("people find me on instagram @moss_and_fern", "contact instagram", "@moss_and_fern"),
    ("my github is @ana-builds-things now", "contact github", "@ana-builds-things"),
])
def test_a_way_to_reach_the_speaker(sentence: str, key: str, value: str) -> None:
    assert (key, value, "set") in _rels(sentence, "contact")


@pytest.mark.parametrize("sentence", [
    "Her email is dana@example.org, can you write to her?",
    "Tom's number is 020 7946 0018.",
    "My order number is 4419 2203 118.",
    "I set up a second address for newsletters, news.mo@example.com.",
    "If I get a new phone it'd be +1 415 555 0133.",
    "The office line is 0161 496 0000 and my email is ana@example.com, ana@example.org.",
    'Brigitte wrote back: "reach me at b.hof@example.de any time", so can you draft a reply?',
    "her reply said “call me on 0171 234 5678 before noon” so I will",
    "pasted from the supplier's mail: for orders contact me at sales@kettle.example",
    "my colleague Ilyas got a new phone number, +971 55 555 0420, add him to my poster",
])
def test_no_way_to_reach_the_speaker(sentence: str) -> None:
    assert not [r for r in _rels(sentence, "contact") if r[0] in ("contact email", "contact phone")], sentence


def test_a_closed_address_ends_without_a_successor() -> None:
    assert ("contact email", "", "end") in _rels("Heads up: my uni email got deactivated in June.", "contact")
    assert _rels("I don't have another address yet.", "contact") == []


@pytest.mark.parametrize("sentence, key, value", [
    ("From now on send the invoices as PDF.", "format of invoice", "PDF"),
    ("I'd like my meeting notes in Markdown please.", "format of note", "Markdown"),
    ("spreadsheets in xlsx from now pls, not csv", "format of spreadsheet", "XLSX"),
    ("ugh I typed JPEG earlier but I meant PNG.", "format image", "PNG"),
    ("My references should always be in Harvard style.", "format of reference", "Harvard"),
    ("Citations in APA 7 for everything, please.", "format of citation", "APA 7"),
    ("always PNG for me", "format image", "PNG"),
])
def test_a_standing_format(sentence: str, key: str, value: str) -> None:
    assert (key, value, "set") in _rels(sentence, "format"), _rels(sentence, "format")


@pytest.mark.parametrize("sentence", [
    "The PDFs from the bank never open on my phone.",   # named, not asked for
    "I visited Chicago with my team last spring.",      # a city, not a citation style
    "Could you send this one as a PDF for me.",         # one thing, once
])
def test_no_standing_format(sentence: str) -> None:
    assert _rels(sentence, "format") == [], sentence


def test_a_stint_with_its_end_in_sight_is_no_new_title() -> None:
    said = "I'm running the front desk for the next two weeks while Ada is on leave, then back to nights."
    assert not [r for r in R.extract(said) if r.attr == "role"]


def test_a_weekday_before_a_date_leaves_the_date() -> None:
    got = [(r.value) for r in R.extract("The grant report is due Thursday 9 October.") if r.attr == "deadline"]
    assert got == ["9 October"]


@pytest.mark.parametrize("a, b, same", [
    ("+44 7700 900123", "07700 900123", True),
    ("+1 (415) 555-0133", "415 555 0133", True),
    ("0049 176 1234 5678", "0176 12345678", True),
    ("0612 345 678", "0612 345 679", False),
    ("+44 7700 900123", "+44 7700 900321", False),
    ("12 34", "1234", False),
])
def test_a_phone_number_written_two_ways(a: str, b: str, same: bool) -> None:
    assert same_phone(a, b) is same


@pytest.mark.parametrize("a, b, same", [
    ("Word", "docx", True), ("XLSX", "Excel", True), ("Word", "PDF", False), ("docx", "docx", False),
])
def test_one_file_format_by_two_names(a: str, b: str, same: bool) -> None:
    assert same_format(a, b) is same


def test_a_phone_restated_without_its_country_code_is_no_change() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-02-01", [
            "Mo: Hi, Mo Farouk here. My mobile is +44 7700 900123, put it on the parcel label please.",
            "Assistant: Done."], "Mo"),
        "sessions/s2/transcript.md": transcript(2, "2026-04-01", [
            "Mo: for the courier form, my number is 07700 900123, same as always.",
            "Assistant: Filled in."], "Mo"),
    })
    recs = [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.attribute == "contact"]
    assert recs and all(r.is_open and not r.superseded_by for r in recs), recs


def test_a_new_address_replaces_the_old_through_dream() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-02-01", [
            "Rui: Hi, I'm Rui Tavares. Put my email rui.t@oldmail.example on the club flyer please.",
            "Assistant: Done."], "Rui"),
        "sessions/s2/transcript.md": transcript(2, "2026-05-01", [
            "Rui: My email is rui@tavares.example now, the old one is closing. Update the flyer.",
            "Assistant: Updated."], "Rui"),
    })
    recs = [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.attribute == "contact"]
    old = [r for r in recs if r.value == "rui.t@oldmail.example"]
    new = [r for r in recs if r.value == "rui@tavares.example"]
    assert old and new, recs
    assert not old[0].is_open and old[0].superseded_by == new[0].id and new[0].is_open
