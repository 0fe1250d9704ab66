"""Supersessions that need no second mention: a correction that names the value it replaces
("…, not A") finds the turn that said A; a person said in full with a job, a title, a
manager, a home or as family is worth a page from one turn; a date or quantity in a named
person's possessive is theirs; a title said beside the one kept ("still X") is one more,
not a replacement. Each in wordings of its own, with the near misses that must close
nothing. Real dream runs over small memories (no mount, no model server)."""

from __future__ import annotations

import datetime as _dt

import pytest

from brainfs.dream import relations as R
from brainfs.dream.subjectnames import clean_name

pytestmark = pytest.mark.unit


def _records(sessions: list[tuple[str, list[str]]], corrections: list[tuple[str, str]] = ()) -> list:
    from benchmarks.supersession import tree_of

    from brainfs.cache.facts.records import FACTS_PATH, loads
    from brainfs.dream.core import DictTree, dream

    case = {"sessions": [{"date": _dt.date.fromisoformat(d), "turns": t} for d, t in sessions],
            "corrections": [{"date": d, "text": t} for d, t in corrections]}
    staged = dream(DictTree(tree_of(case))).staged
    return [r for r in loads(staged.get(FACTS_PATH, "")) if r.kind != "procedure"]


def _closed(recs: list) -> list[tuple[str, str, str, str | None]]:
    by_id = {r.id: r for r in recs}
    return sorted((r.subject, r.attribute, r.value, by_id[r.superseded_by].value if r.superseded_by else None)
                  for r in recs if not r.is_open)


@pytest.mark.parametrize("turn, correction, subject, attr, old, new", [
    # a relative clause hides the first statement from every pattern
    ("Quick note: Edgar Pilsudski, the surveyor we hired, works at Granary Partners.",
     "Edgar Pilsudski works at Kestle Surveys, not Granary Partners.",
     "edgar-pilsudski", "employer", "Granary Partners", "Kestle Surveys"),
    # said once, as family, with a name of three words
    ("My aunt Morwenna Ap Rhys lives in Swansea, we visit at Easter.",
     "Morwenna Ap Rhys lives in Cardiff, not Swansea.",
     "morwenna-ap-rhys", "home", "Swansea", "Cardiff"),
    ("My neighbour Dorota Wilk-Haines is a physiotherapist at the clinic.",
     "Dorota Wilk-Haines is an occupational therapist, not a physiotherapist.",
     "dorota-wilk-haines", "role", "physiotherapist", "occupational therapist"),
])
def test_a_correction_closes_the_value_it_names(turn: str, correction: str, subject: str, attr: str,
                                                old: str, new: str) -> None:
    recs = _records([("2026-03-02", ["Ines: Hi, I'm Ines Carvalho.", turn, "Assistant: Noted."])],
                    [("2026-03-09", correction)])
    assert (subject, attr, old, new) in _closed(recs), [(r.subject, r.attribute, r.value) for r in recs]
    new_rec = next(r for r in recs if r.subject == subject and r.attribute == attr and r.is_open)
    assert new_rec.origin == "corrected"
    old_rec = next(r for r in recs if r.subject == subject and r.value == old)
    assert old_rec.sources[0].startswith("sessions/"), "the replaced value cites the turn that said it"


def test_a_correction_names_a_value_no_turn_said_of_that_subject() -> None:
    """"…, not A" where A was said of somebody else: nothing of A is invented for the subject."""
    recs = _records([("2026-03-02", ["Ines: Hi, I'm Ines Carvalho.",
                                     "Ines: My brother Tiago Carvalho-Reis works at Lumenor.",
                                     "Ines: Edgar Pilsudski is a surveyor.", "Assistant: Noted."])],
                    [("2026-03-09", "Edgar Pilsudski works at Kestle Surveys, not Lumenor.")])
    assert not [c for c in _closed(recs) if c[0] == "edgar-pilsudski"], _closed(recs)


def test_a_persons_date_by_possessive_is_theirs() -> None:
    got = [(r.subject, r.attr, r.value) for r in R.extract("Ines Carvalho's tax return deadline is 31 January.")]
    assert ("Ines Carvalho", "deadline", "31 January") in got
    # a first name alone stays someone unknown's, nobody's setting
    assert not R.extract("Tom's budget is 500 euros.")
    assert [(r.subject, r.value) for r in R.extract("Tom Baker's budget is 500 euros.")] == [("Tom Baker", "500 euros")]


def test_a_title_kept_beside_a_new_one_is_no_replacement() -> None:
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho, I'm a pharmacist at Boots Row."]),
                     ("2026-05-01", ["Ines: Big news, I'm now a volunteer firefighter at weekends! "
                                     "Still a pharmacist in the week, of course."])])
    assert not _closed(recs), _closed(recs)
    # and a real change in the same wording without "still" does close it
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho, I'm a pharmacist at Boots Row."]),
                     ("2026-05-01", ["Ines: Big news, I'm now a pharmacy manager at Boots Row!"])])
    assert ("ines-carvalho", "role", "pharmacist", "pharmacy manager") in _closed(recs), _closed(recs)


@pytest.mark.parametrize("sentence, role", [
    ("im teh shift supervisor now", "shift supervisor"),
    ("Staying a nurse, I turned the manager job down.", None),
])
def test_a_title_without_the_words_that_open_it(sentence: str, role: str | None) -> None:
    roles = [r.value for r in R.extract(sentence) if r.attr == "role"]
    assert roles == ([role] if role else []) or all(not v.lower().startswith("staying") for v in roles), roles


def test_a_comma_ends_a_name() -> None:
    assert clean_name("Marisol Ekwueme, Giles") == "Marisol Ekwueme"
    assert clean_name("Dear Amara") == "Amara"


@pytest.mark.parametrize("first, then, subject, attr, old, new", [
    # said in the chat, with the value it replaces after "instead of" / "not"
    ("Ines: I'm Ines Carvalho. My line manager is Gareth Olowe, he signs my timesheets.",
     "Ines: Since the restructure I answer to Priya Natesan instead of Gareth.",
     "ines-carvalho", "manager", "Gareth Olowe", "Priya Natesan"),
    # in lower case, the first name is found in full where a page knows the name
    ("ines: hi im ines carvalho. my line manager is gareth olowe from the audit side. can you help with a rota? "
     "Gareth Olowe wants it by friday.",
     "ines: I report to Priya Natesan now, not Gareth.",
     "ines-carvalho", "manager", "Gareth Olowe", "Priya Natesan"),
])
def test_a_change_said_with_the_value_it_replaces(first: str, then: str, subject: str, attr: str,
                                                  old: str, new: str) -> None:
    recs = _records([("2026-02-01", [first, "Assistant: Noted."]), ("2026-05-01", [then])])
    assert (subject, attr, old, new) in _closed(recs), _closed(recs)


def test_a_value_corrected_in_its_own_turn_was_never_held() -> None:
    """"the limit is 30 kg, not 25" in the turn that first gives it: no 25 was ever held."""
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho.",
                                     "Ines: For the courier form, the parcel weight limit is 30 kg, not 25."])])
    assert not _closed(recs), _closed(recs)


def test_chat_without_capitals_is_read_sentence_by_sentence() -> None:
    from brainfs.dream import text as T

    assert T.sentences("hi, im ines. i report to gareth olowe. can you help?") == [
        "hi, im ines.", "i report to gareth olowe.", "can you help?"]
    assert T.sentences("we use e.g. bullet points. fine") == ["we use e.g. bullet points.", "fine"]
    # an abbreviation or a title is no end, in any case; prose keeps its stops before lower case
    assert T.sentences("i saw dr. kim today. then home") == ["i saw dr. kim today.", "then home"]
    assert T.sentences("The deadline is 5 p.m. on friday.") == ["The deadline is 5 p.m. on friday."]
    assert T.sentences("I am a Ph.D. student at Leeds. It is fine.") == ["I am a Ph.D. student at Leeds.", "It is fine."]
    assert T.sentences("GOT PROMOTED!!! senior analyst as of the 1st") == ["GOT PROMOTED!!!", "senior analyst as of the 1st"]


def test_a_statement_said_with_surprise_is_no_question() -> None:
    from brainfs.dream.extract import _asks

    assert not _asks("so uh im the shift lead now??")
    assert not _asks("I'm a manager?!")
    assert _asks("Am I the shift lead now??")
    assert _asks("im the lead now?")
    assert _asks("im confused, what should i do??")


def test_no_value_is_invented_from_a_turn_that_states_no_such_thing() -> None:
    """The earlier turn must state the attribute ("had lunch with people from Lumenor" is
    no job there), and a first name in lower case is not run on into the next words ("hana
    yesterday" is no name)."""
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho.",
                                     "Ines: Edgar Pilsudski had lunch with people from Lumenor.",
                                     "Ines: Edgar Pilsudski is a surveyor."])],
                    [("2026-03-01", "Edgar Pilsudski works at Kestle Surveys, not Lumenor.")])
    assert not [c for c in _closed(recs) if c[0] == "edgar-pilsudski"], _closed(recs)
    recs = _records([("2026-02-01", ["ines: hi im ines carvalho. i had lunch with hana yesterday and then went home."]),
                     ("2026-05-01", ["ines: I report to Jonas Berg now, not Hana."])])
    assert not [r for r in recs if "yesterday" in r.value.lower()], [(r.attribute, r.value) for r in recs]
    assert not _closed(recs), _closed(recs)


def test_a_word_after_the_old_value_does_not_keep_it() -> None:
    """"friends at Boots Row still message me" keeps no job at Boots Row."""
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho, I work at Boots Row."]),
                     ("2026-05-01", ["Ines: I work at Lumenor now. Funny, my old friends at Boots Row still message me."])])
    assert ("ines-carvalho", "employer", "Boots Row", "Lumenor") in _closed(recs), _closed(recs)


def test_a_preference_carries_what_it_applies_to_and_its_history() -> None:
    recs = _records([("2026-02-01", ["Ines: I'm Ines Carvalho. Please always export my figures as PDF."]),
                     ("2026-04-01", ["Ines: From now on export my figures as SVG, not PDF."])])
    prefs = [r for r in recs if r.kind == "preference"]
    assert {(r.value, r.scope, r.is_open) for r in prefs} == {("PDF", "figure", False), ("SVG", "figure", True)}, \
        [(r.value, r.scope, r.key) for r in prefs]
