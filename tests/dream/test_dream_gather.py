"""Gathered lines (dream/gather.py): what a person said across sessions about one kind of
thing — activities, places, books, what they play, things bought — on one cited line of
their page, under ``## Across sessions`` (after the timeline: a history, not what is true
now). Each pattern is general first-person speech; each exclusion is a phrasing that would
list a wrong value."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from brainfs.cache.context.claims import page_claims
from brainfs.dream.core import run_local
from brainfs.dream.gather import values

from dream_helpers import write

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence,want", [
    # activities and hobbies
    ("I went camping with the kids last week.", [("activities", "camping")]),
    ("We go hiking in the mountains every May.", [("activities", "hiking")]),
    ("I love painting, it relaxes me.", [("activities", "painting")]),
    ("I just signed up for a pottery class yesterday.", [("activities", "pottery")]),
    ("I'm taking creative writing classes at the library.", [("activities", "creative writing")]),
    ("I'm keeping up with my German lessons.", [("activities", "German")]),
    # places
    ("We went to Paris last spring.", [("places", "Paris")]),
    ("Our trip to Oregon was amazing.", [("places", "Oregon")]),
    ("I've been to Spain twice.", [("places", "Spain")]),
    # books, things played, things bought
    ('I just finished reading "Becoming Nicole" and loved it.', [("books", "Becoming Nicole")]),
    ("I play the violin in a quartet.", [("plays", "violin")]),
    ("I bought a new pair of running shoes.", [("bought", "running shoes")]),
    # exclusions: another's activity, a verb with an object, a filler, a person's place
    ("You should go hiking sometime.", []),
    ("I love finding unique pieces at markets.", []),
    ("I've been thinking about it a lot.", []),
    ("I loved taking classes there.", []),
    ("We went to Caroline's party.", []),
    ("I'm going on Friday.", []),
    ("I got a lot of work done.", []),
    ("I bought it last week.", []),
    ("Mostly lesson plans and letters.", []),
    ("It's why I enjoy playing and pushing myself.", []),  # playing what: no activity named
])
def test_values_of_a_statement(sentence: str, want: list[tuple[str, str]]) -> None:
    assert values(sentence) == want


def _session(n: int, day: str, lines: list[str]) -> str:
    body = "\n\n".join(f"[D{n}:{i + 1}] {ln}" for i, ln in enumerate(lines))
    return f"---\nsession: s{n}\ndate: {day}\nparticipants: [Mara, Ana]\n---\n\n{body}\n"


SESSIONS = {
    "sessions/s1/transcript.md": _session(1, "2023-05-08T10:00:00", [
        "Mara: I went swimming with my kids at the lake on Saturday.",
        "Ana: You should go hiking sometime, the trails are lovely.",
        "Mara: Maybe! I signed up for a pottery class too, it's like therapy."]),
    "sessions/s2/transcript.md": _session(2, "2023-06-27T10:00:00", [
        "Mara: We went camping in the mountains last week, it was great.",
        "Ana: I love painting, I finished a big canvas.",
        "Mara: I bought a new tent for it."]),
    "sessions/s3/transcript.md": _session(3, "2023-07-15T10:00:00", [
        "Mara: I went swimming again at the beach, the kids loved it.",
        "Ana: Sounds lovely, I play the cello these days."]),
}


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> dict[str, str]:
    root = write(tmp_path_factory.mktemp("gather") / "m", SESSIONS)
    res = run_local(root, settings={"extractor": "rules"},
                    now=dt.datetime(2023, 8, 1, tzinfo=dt.timezone.utc))
    return res.staged


def _across(page: str) -> str:
    m = re.search(r"^## Across sessions\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    return m.group(1).strip() if m else ""


def test_a_speaker_s_values_across_sessions_stand_on_one_cited_line(staged: dict[str, str]) -> None:
    page = staged["knowledge/mara.md"]
    line = _across(page)
    assert line.startswith("- Mara's activities and hobbies: "), page
    # each value once (swimming said twice: its first statement), in date order, with its month
    values_said = re.findall(r"([\w ]+) \((\w+ \d{4})\) \[cite:\d+\]", line.split(": ", 1)[1])
    assert [(v.strip(), m) for v, m in values_said] == [
        ("swimming", "May 2023"), ("pottery", "May 2023"), ("camping", "June 2023")], line
    # the line is not part of what is true now (a history of what was said)
    assert page.index("## Timeline") < page.index("## Across sessions")
    # one thing bought is a timeline entry, not a list; Ana's hiking advice and painting
    # are not Mara's
    assert "bought" not in line and "hiking" not in line and "painting" not in line


def test_each_value_cites_the_turn_that_said_it(staged: dict[str, str]) -> None:
    page = staged["knowledge/mara.md"]
    claims = [c for c in page_claims("knowledge/mara.md", page).values() if c.section == "gathered"]
    assert len(claims) == 1
    assert claims[0].sources == ("sessions/s1/transcript.md#D1:1", "sessions/s1/transcript.md#D1:3",
                                 "sessions/s2/transcript.md#D2:1")
    assert claims[0].render() == ("- Mara's activities and hobbies: swimming (May 2023), "
                                  "pottery (May 2023), camping (June 2023)")


def test_a_second_run_with_nothing_new_changes_nothing(tmp_path: Path, staged: dict[str, str]) -> None:
    root = write(tmp_path / "m", SESSIONS)
    now = dt.datetime(2023, 8, 1, tzinfo=dt.timezone.utc)
    first = run_local(root, settings={"extractor": "rules"}, now=now)
    assert first.staged["knowledge/mara.md"] == staged["knowledge/mara.md"]
    write(root, {p: t for p, t in first.staged.items()})
    again = run_local(root, settings={"extractor": "rules"}, now=now)
    assert not {p for p, t in again.staged.items() if first.staged.get(p) != t}
