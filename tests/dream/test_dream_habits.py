"""What a held-out persona (tests/personas/morag.yaml) found wrong: a drink the user has
("I always have Earl Grey when I write letters", "I've gone off Earl Grey") got a page typed
person, and the drink that replaced it ("It's rooibos for me these days") was not read.
General rules: habit preferences are relations, and a name that is only ever the whole value
of a speaker's preference is a line on their page, not a subject."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from brainfs.dream import relations as R
from brainfs.dream.core import run_local
from brainfs.dream.nametypes import preference_values

from dream_helpers import write

pytestmark = pytest.mark.unit


def _prefs(sentence: str) -> list[tuple[str, str]]:
    return [(r.value, r.op) for r in R.extract(sentence) if r.attr == "preference"]


@pytest.mark.parametrize("sentence,want", [
    ("I always have Earl Grey when I write letters, it's a habit from teaching.", [("Earl Grey", "set")]),
    ("I usually order Pad Thai.", [("Pad Thai", "set")]),
    ("I've gone off Earl Grey, to be honest.", [("Earl Grey", "end")]),
    ("We have gone off camping lately.", [("camping", "end")]),
    ("It's rooibos for me these days.", [("rooibos", "set")]),
    ("It's Zoom for me now.", [("Zoom", "set")]),
    # a person had over, a pet taken along: no preference
    ("I always have Callum over on Sundays.", []),
    ("I always have Max with me.", []),
    ("I always take Biscuit to the park.", []),
])
def test_habit_preferences(sentence: str, want: list[tuple[str, str]]) -> None:
    assert _prefs(sentence) == want


def _fact(text: str, names: list[str], speaker: str = "Morag") -> dict:
    return {"text": text, "speaker": speaker, "subjects": {n: "person" for n in names},
            "names": [], "lead": []}


def test_a_name_only_ever_a_preferences_value_is_no_subject() -> None:
    facts = [_fact("I always have Earl Grey when I write letters.", ["Earl Grey"]),
             _fact("I've gone off Earl Grey, to be honest.", ["Earl Grey"]),
             # a favourite is a subject the speaker cares about
             _fact("My favourite park is Duthie Park.", ["Duthie Park"]),
             _fact("My favourite park is Duthie Park, still.", ["Duthie Park"]),
             # a value that is also spoken of otherwise stays a subject
             _fact("I usually order Pad Thai.", ["Pad Thai"]),
             _fact("Pad Thai at the market costs less now.", ["Pad Thai"])]
    rels = {id(f): R.extract(f["text"]) for f in facts}
    assert preference_values(facts, rels) == {"Earl Grey"}


def test_a_drink_gone_off_is_superseded_and_gets_no_page(tmp_path: Path) -> None:
    def session(sid: str, day: str, lines: list[str]) -> str:
        body = "\n\n".join(f"[D{sid[1:]}:{i + 1}] {ln}" for i, ln in enumerate(lines))
        return f"---\nsession: {sid}\ndate: {day}\nparticipants: [Morag, ChatGPT]\n---\n\n{body}\n"

    root = write(tmp_path / "m", {
        "sessions/s1/transcript.md": session("s1", "2026-02-09", [
            "Morag: I'm Morag Fraser. My son Callum set this up for me.",
            "Morag: Lovely. I always have Earl Grey when I write letters, it's a habit from teaching."]),
        "sessions/s2/transcript.md": session("s2", "2026-05-11", [
            "Morag: Callum phoned on Sunday about the flat.",
            "Morag: I've gone off Earl Grey, to be honest. It's rooibos for me these days."]),
    })
    res = run_local(root, settings={"extractor": "rules"},
                    now=dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc))
    assert "knowledge/earl-grey.md" not in res.staged
    page = res.staged["knowledge/morag-fraser.md"]
    now, _, rest = page.partition("## Timeline")
    assert "rooibos" in now and "Earl Grey" not in now
    assert "Earl Grey" in page.split("## Superseded")[1]
