"""Relative dates resolved against the session's date (issue 12): "on Friday" is the last
Friday in a sentence about the past and the next one in a sentence about what is ahead;
"in two weeks", "the day before yesterday" and "next Friday" by the rules dream shares with
the index (cache/search/dates.py, tested in tests/cache/search/test_dates.py); the Timeline
dates an event by the day it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.dream import text as T
from brainfs.dream.core import run_local

pytestmark = pytest.mark.unit

#: 2 June 2026 is a Tuesday.
DAY = "2026-06-02"


@pytest.mark.parametrize("sentence, expr, meaning", [
    ("We went hiking on Friday.", "on Friday", "2026-05-29"),
    ("I met Jonas on Tuesday.", "on Tuesday", "2026-05-26"),
    ("I'm meeting Priya on Friday.", "on Friday", "2026-06-05"),
    ("I'll call the clinic on Monday.", "on Monday", "2026-06-08"),
    ("My new job is at Corvid Analytics, starting on Monday.", "on Monday", "2026-06-08"),
    ("Let's review it this Friday.", "this Friday", "2026-06-05"),
    ("The board meets next Thursday.", "next Thursday", "2026-06-04"),
    ("The review is in two weeks.", "in two weeks", "2026-06-16"),
    ("The parts arrive in 3 days.", "in 3 days", "2026-06-05"),
    ("I saw Amara the day before yesterday.", "the day before yesterday", "2026-05-31"),
    # a fortnight is two weeks: dated as "two weeks ago" is (dateparser gave the day, 05-19)
    ("We moved a fortnight ago.", "a fortnight ago", "week of 2026-05-18"),
    # the rules that were there before, unchanged
    ("I adopted a dog last weekend.", "last weekend", "weekend of 2026-05-30"),
    ("We moved two weeks ago.", "two weeks ago", "week of 2026-05-18"),
    ("I was ill yesterday.", "yesterday", "2026-06-01"),
])
def test_relative_dates(sentence: str, expr: str, meaning: str) -> None:
    assert T.relative_dates(sentence, DAY) == [[expr, meaning]]
    assert T.resolve_relative_dates(sentence, DAY) == sentence.replace(expr, f"{expr} ({meaning})", 1)


def test_no_date_without_a_session_date_or_an_expression() -> None:
    assert T.relative_dates("We went hiking on Friday.", None) == []
    assert T.relative_dates("Friday Harbor is lovely; I count on one to ten.", DAY) == []


SESSION = """---
session: s1
date: 2026-06-02T10:00:00
participants: ["Mara", "Assistant"]
---

[D1:1] Mara: I'm Mara Lind. I went sailing with Jonas Berg on Friday.

[D1:2] Assistant: That sounds lovely, Mara.

[D1:3] Mara: I'm meeting Jonas Berg at Sora City Lab on Monday about the tide atlas.

[D1:4] Mara: Jonas Berg hands in the Sora City Lab report in two weeks.
"""


def test_the_timeline_dates_events_by_the_day_they_name(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / "sessions/s1").mkdir(parents=True)
    (root / "sessions/s1/transcript.md").write_text(SESSION)
    res = run_local(root)
    assert not [p for p in res.problems if p.severity == "error"], res.problems
    page = res.staged["knowledge/jonas-berg.md"]
    timeline = page.split("## Timeline", 1)[1].split("\n## ", 1)[0]
    assert "- 2026-05-29 — " in timeline and "on Friday (2026-05-29)" in timeline, page
    assert "- 2026-06-08 — " in timeline and "on Monday (2026-06-08)" in timeline, page
    assert "- 2026-06-16 — " in timeline and "in two weeks (2026-06-16)" in timeline, page
    assert res.stats["rejected"] == 0  # verification derives the resolved days from the turns
