"""A talk that runs over several days (an import that kept each turn's time in
``turn_times``): dream dates a fact by its turn's own day, and reads "yesterday" from it,
not from the day the session started."""

from __future__ import annotations

import pytest

from brainfs.cache.facts.records import FACTS_PATH, loads
from brainfs.dream.core import DictTree, dream

pytestmark = pytest.mark.unit


def _transcript(times: dict[str, str] | None) -> str:
    tt = "" if times is None else "turn_times:\n" + "".join(f"  '{a}': '{t}'\n" for a, t in times.items())
    return ("---\nsession: s1\ndate: 2026-03-02T09:00:00\nparticipants: [\"Ines\", \"Assistant\"]\n" + tt +
            "---\n\n"
            "[D1:1] Ines: I'm Ines Carvalho, I work at Boots Row as a pharmacist.\n\n"
            "[D1:2] Assistant: Noted.\n\n"
            "[D1:3] Ines: Back again. I started at Lumenor Health yesterday, so I'm a pharmacy manager now.\n\n"
            "[D1:4] Assistant: Congratulations!\n")


def _records(times: dict[str, str] | None) -> list:
    staged = dream(DictTree({"sessions/s1/transcript.md": _transcript(times)})).staged
    return [r for r in loads(staged.get(FACTS_PATH, "")) if r.kind != "procedure"]


def test_a_fact_is_dated_by_its_turns_own_day() -> None:
    recs = _records({"D1:1": "2026-03-02T09:00:00", "D1:3": "2026-03-20T18:30:00"})
    new = next(r for r in recs if r.attribute == "employer" and r.is_open)
    old = next(r for r in recs if r.attribute == "employer" and not r.is_open)
    assert new.value == "Lumenor Health"
    assert new.recorded_at == "2026-03-20"
    assert new.valid_from == "2026-03-19", "'yesterday' is the day before the turn, not the session"
    assert old.valid_until == "2026-03-19"


def test_without_turn_times_the_session_day_stands() -> None:
    recs = _records(None)
    new = next(r for r in recs if r.attribute == "employer" and r.is_open)
    assert new.recorded_at == "2026-03-02"
    assert new.valid_from == "2026-03-01"
