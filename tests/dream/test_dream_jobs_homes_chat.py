"""Jobs, managers and homes in chat's wordings: a first fortnight somewhere, a new manager met
"today" (read with the day dream writes after it), "I'm under X now", a move to a place typed in
lower case, being let go with the rest of a team. Each with near misses that must state nothing.
No model, no mount."""

from __future__ import annotations

import pytest

from dream_helpers import records_of
from dream_helpers import relations_of as _rels

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence, want", [
    ("first fortnight at Harrowgate Logistics done, my feet hurt", ("", "employer", "Harrowgate Logistics", "set")),
    ("met my new manager today (2026-05-04), Ines Kowal.", ("", "manager", "Ines Kowal", "set")),
    ("met my new boss yesterday, Sam Achebe, seems fine", ("", "manager", "Sam Achebe", "set")),
    ("since the restructure I'm under Harriet Olsen now.", ("", "manager", "Harriet Olsen", "set")),
    ("since we moved up to aberdeen last month the commute is short", ("", "home", "aberdeen", "set")),
    ("we just moved to tromso, it's dark all day", ("", "home", "tromso", "set")),
    ("I moved over to Ghent in March.", ("", "home", "Ghent", "set")),
    ("so brightwater let go of the entire design team on monday (2026-03-02), me included",
     ("", "employer", "", "end")),
    ("I got laid off last week.", ("", "employer", "", "end")),
    ("my mgr is priya now (priya natarajan), big on metrics", ("", "manager", "Priya Natarajan", "set")),
])
def test_read_in_chats_wording(sentence: str, want: tuple[str, str, str, str]) -> None:
    assert want in _rels(sentence), _rels(sentence)


@pytest.mark.parametrize("sentence, attr", [
    ("I moved to sales last year.", "home"),             # a department, not a place
    ("we moved to part-time in May.", "home"),
    ("I moved to the suburbs.", "home"),                  # no place named
    ("I'm under a lot of pressure now.", "manager"),
    ("my mgr is off sick (again)", "manager"),
    ("I'm under NDA now.", "manager"),
    ("I moved to python last year.", "home"),         # a language, by a writer who capitalises
    ("we moved to zoom for the call.", "home"),
    ("I was laid off in 2009 and it taught me a lot.", "employer"),   # history
    ("they laid off half the office, me included, back in 2012.", "employer"),
    ("They laid off half the team but not me.", "employer"),
    ("If I get laid off I'll go travelling.", "employer"),
])
def test_nothing_read_in(sentence: str, attr: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == attr], _rels(sentence)


def test_a_move_to_a_place_in_lower_case_replaces_the_home() -> None:
    recs = records_of([
        ("2026-01-10", ["Eilidh: hi, Eilidh Ross, I live in Glasgow. best running routes?",
                        "Assistant: Try the Kelvin walkway."]),
        ("2026-04-22", ["Eilidh: since we moved up to inverness last month I need new routes. "
                        "any by the river?", "Assistant: The Ness Islands loop."]),
    ], "Eilidh", "home")
    old = [r for r in recs if r.value == "Glasgow"]
    new = [r for r in recs if r.value.casefold() == "inverness"]
    assert old and new and old[0].superseded_by == new[0].id and new[0].is_open, recs
