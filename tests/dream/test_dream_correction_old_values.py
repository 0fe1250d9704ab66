"""A correction names the value it replaces: read whole (an address, a phone number, a day, an
amount with its unit), in other words than ", not X" ("gave up", "promoted from", "the … number
is no longer hers", "the … is finished"), and closed even when no kept turn said it (a request,
a question) — a record of unknown start, on a page for whom the correction is about. With the
near misses that must close nothing. Dream runs on small trees, no model, no mount."""

from __future__ import annotations

import pytest

from brainfs.benchmarks.supersession import tree_of
from brainfs.cache.facts.records import FACTS_PATH, loads
from brainfs.dream import channels, meaning, reach, relations, rewording
from brainfs.dream.core import DictTree, dream
from brainfs.dream.facts import check_views

pytestmark = pytest.mark.unit


def _dream(turns: list[tuple[str, list[str]]], corrections: list[tuple[str, str]]) -> dict[str, str]:
    case = {"sessions": [{"date": day, "turns": lines} for day, lines in turns],
            "corrections": [{"date": day, "text": text} for day, text in corrections]}
    return dream(DictTree(tree_of(case))).staged


def _closed(staged: dict[str, str], attr: str) -> list[tuple[str, str, str | None, str | None]]:
    """(subject, old value, successor's value, old's valid_from) of each closed record."""
    recs = loads(staged.get(FACTS_PATH, ""))
    by_id = {r.id: r for r in recs}
    return [(r.subject, r.value, by_id[r.superseded_by].value if r.superseded_by else None, r.valid_from)
            for r in recs if r.attribute == attr and not r.is_open]


@pytest.mark.parametrize("text, pair", [
    ("Odile Marchand's visa deadline is 9 March, not 23 February.", ("9 March", "23 February")),
    ("Odile's landline is now 0161 496 0782, not 0161 496 0311.", ("0161 496 0782", "0161 496 0311")),
    ("Her email is now o.marchand@quaynet.example, not odile.m@postbox.example.",
     ("o.marchand@quaynet.example", "odile.m@postbox.example")),
    ("The resting heart rate alarm is now 110 bpm, not 120 bpm.", ("110 bpm", "120 bpm")),
    ("The rent is €980 now, not €920.", ("€980", "€920")),
    ("The hike is 14–16 May now, not 2–4 May.", ("14–16 May", "2–4 May")),
    ("Charts as SVG, not PNG.", ("SVG", "PNG")),
])
def test_a_corrections_pair_is_read_whole(text: str, pair: tuple[str, str]) -> None:
    assert reach.pairs(text) == [pair]


@pytest.mark.parametrize("text, old", [
    ("Tomasz Zielinski drinks green tea now; he gave up energy drinks.", "energy drinks"),
    ("Bisi Adeyemi is a charge nurse now, promoted from staff nurse.", "staff nurse"),
    ("Lars Holm's mobile is 0470 22 81 90 now; the 0470 11 52 63 number is no longer his.", "0470 11 52 63"),
    ("Ines Duarte is painting the harbour mural now; the Alfama Steps mural is finished.", "Alfama Steps mural"),
    # "the 318 one": a number's last digits, not an amount of "one"
    ("new mobile 0470 22 81 90, the 263 one is dead", "263"),
    ("job title changed: lab manager (was lab technician)", "lab technician"),
])
def test_what_stood_before_in_other_words(text: str, old: str) -> None:
    assert reach.was_values(text) == [old]


@pytest.mark.parametrize("text", [
    "The gym membership is closed on Sundays.",           # no value said gone
    "Her old inbox address is closed.",                     # a word, not a value
    "He gave up on the idea of moving, for now",            # a plan, no value of a kind
])
def test_nothing_stood_before_in(text: str) -> None:
    assert all(not v[:1].isupper() and not v[:1].isdigit() for v in reach.was_values(text))


def test_negations_leave_no_half_address_behind() -> None:
    text = "Her email is now o.marchand@quaynet.example, not odile.m@postbox.example."
    assert reach.negated_values(text) == ["odile.m@postbox.example"]
    assert reach.without_negations(text) == "Her email is now o.marchand@quaynet.example."


@pytest.mark.parametrize("turn, since", [
    # a statement the memory kept: the old value begins on its day
    ("Odile Marchand. Please make me an email footer: Odile Marchand, ceramicist, odile.m@postbox.example",
     "2026-02-03"),
    # only a question said it: known from the correction alone, of no day it began
    ("hi, Odile Marchand here, can you make me an email footer with odile.m@postbox.example in it?", None),
])
def test_an_address_said_only_in_passing_is_closed_by_the_correction(turn: str, since: str | None) -> None:
    staged = _dream([("2026-02-03", [f"Odile: {turn}", "Assistant: Here it is."])],
                    [("2026-05-11", "Odile Marchand's email is now o.marchand@quaynet.example, "
                                    "not odile.m@postbox.example.")])
    assert _closed(staged, "contact") == [("odile-marchand", "odile.m@postbox.example",
                                           "o.marchand@quaynet.example", since)]
    page = staged["knowledge/odile-marchand.md"]
    # no "(from )" left empty when the day it began is not known
    assert "odile.m@postbox.example was" in page and "(from )" not in page, page
    assert check_views(staged) == []


def test_a_user_whose_turns_state_nothing_gets_the_corrected_value() -> None:
    staged = _dream([("2026-06-01", ["Bogdan: Bogdan Ilic here. For the fridge logger script, alert when "
                                     "the temperature goes over 6°C.", "Assistant: Done."])],
                    [("2026-06-04", "The fridge alert temperature is 5°C, not 6°C.")])
    got = _closed(staged, "number")
    assert [(s, o, n) for s, o, n, _d in got] == [("bogdan-ilic", "6°C", "5°C")], got


def test_a_phone_said_gone_after_it_is_no_second_phone() -> None:
    text = "my mobile is 0470 22 81 90 now; the 0470 11 52 63 number is no longer mine."
    assert [(k, v) for k, v, _op, _at in channels.channels(text)] == [("contact phone", "0470 22 81 90")]
    staged = _dream([("2026-01-20", ["Lars: Hej, Lars Holm. Put 'call 0470 11 52 63' on my bike repair poster.",
                                     "Assistant: Done."])],
                    [("2026-03-02", "Lars Holm's mobile is 0470 22 81 90 now; the 0470 11 52 63 number "
                                    "is no longer his.")])
    assert [(s, o, n) for s, o, n, _d in _closed(staged, "contact")] == [
        ("lars-holm", "0470 11 52 63", "0470 22 81 90")]


def test_a_trip_sent_elsewhere_by_a_correction() -> None:
    assert ("Priti Shah", "trip", "Porto in June", "set") in [
        (r.subject, r.attr, r.value, r.op)
        for r in relations.extract("Priti Shah's birthday trip is to Porto in June now, not Seville.")]
    staged = _dream([("2026-02-14", ["Priti: Hi, Priti Shah. Going to Seville 3-7 June with my sister. "
                                     "Tapas places?", "Assistant: Try Triana."])],
                    [("2026-04-01", "Priti Shah's June trip is to Porto, not Seville.")])
    assert [(s, o, n) for s, o, n, _d in _closed(staged, "trip")] == [
        ("priti-shah", "Seville on 3-7 June", "Porto")]


def test_a_tool_kept_for_a_use_is_replaced_by_the_tool_used_now() -> None:
    said = [(r.attr, r.key, r.value) for r in relations.extract("I keep all my recipes in Evernote.")]
    now = [(r.attr, r.key, r.value) for r in relations.extract("I use Paprika for my recipes now.")]
    assert said == [("preference", "preference recipes", "Evernote for recipes")]
    assert now == [("preference", "preference recipes", "Paprika for recipes")]
    assert not relations.extract("I used Excel for my budget last year.")


def test_a_format_after_in_is_no_home() -> None:
    assert not [r for r in meaning.extract("Chidi Okeke wants the invoices in XLSX now.") if r.attr == "home"]


@pytest.mark.parametrize("correction", [
    # "not a QA tester": "QA" is half a title, not a value that stood alone
    "Wanjiru Kamau is now QA lead at Bluefin Systems, not a QA tester.",
    # a lower-case word said gone is no address
    "Wanjiru Kamau's email is now w.kamau@bluefin.example, the school address is closed.",
])
def test_a_correction_closes_nothing_it_does_not_name(correction: str) -> None:
    staged = _dream([("2026-01-10", ["Wanjiru: Hi, Wanjiru Kamau, I test software at Bluefin Systems. "
                                     "How do I write a bug report?", "Assistant: Steps, expected, actual."])],
                    [("2026-04-02", correction)])
    assert _closed(staged, "employer") == [] and _closed(staged, "contact") == []


@pytest.mark.parametrize("fix, said", [
    ("Lives in Ghent now, moved from Bruges.", "I live in Ghent now, moved from Bruges."),
    ("Step goal is 9,000 a day now, not 7,000.", "my step goal is 9,000 a day now, not 7,000."),
    ("new number 0470 22 81 90, the 263 one is dead", "my new number is 0470 22 81 90, the 263 one is dead"),
    # a subject of its own, or none the user would be: left as typed
    ("Kestrel is led by Amaru Quispe now, not Lena.", "Kestrel is led by Amaru Quispe now, not Lena."),
    ("Charts as SVG, not PNG.", "Charts as SVG, not PNG."),
    ("Dana Levi email is dana@new.example now", "Dana Levi email is dana@new.example now"),   # someone else's
    ("Priya phone is 07700 900431 now.", "Priya phone is 07700 900431 now."),
    ("Works for me.", "Works for me."),
    ("Reports go out on Fridays", "Reports go out on Fridays"),
])
def test_a_quick_fix_without_a_subject_is_the_users(fix: str, said: str) -> None:
    assert rewording.as_users_fix(fix) == said


def test_a_quick_fix_without_a_subject_closes_the_users_value() -> None:
    staged = _dream([("2026-01-12", ["Wouter: hoi, Wouter Jansen, I live in Bruges. good cycling routes?",
                                     "Assistant: Try the Damme canal."])],
                    [("2026-04-01", "Lives in Ghent now, moved from Bruges.")])
    assert [(s, o, n) for s, o, n, _d in _closed(staged, "home")] == [("wouter-jansen", "Bruges", "Ghent")]
