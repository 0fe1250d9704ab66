"""The one resolver of relative dates (cache/search/dates.py), read by the search index (its
date notes, human form) and by dream (the Timeline, ISO form): each kind of expression in
both renderings, month and year boundaries, the tense of the sentence, the rules chosen where
the index and dream used to disagree, and no dependence on ``dateparser``."""

from __future__ import annotations

import datetime as _dt
import importlib
import logging
import sys

import pytest

from brainfs.cache.search import dates
from brainfs.cache.search.dates import Period, date_notes, meaning, mentions
from brainfs.dream import text as T

pytestmark = pytest.mark.unit

MON = _dt.date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize("expr, kind, iso, human", [
    ("yesterday", "day", "2023-05-07", "7 May 2023"),
    ("last night", "day", "2023-05-07", "7 May 2023"),
    ("the day before yesterday", "day", "2023-05-06", "6 May 2023"),
    ("day after tomorrow", "day", "2023-05-10", "10 May 2023"),
    ("this evening", "day", "2023-05-08", "8 May 2023"),
    ("tomorrow", "day", "2023-05-09", "9 May 2023"),
    ("last weekend", "weekend", "weekend of 2023-05-06", "6–7 May 2023"),
    ("this weekend", "weekend", "weekend of 2023-05-13", "13–14 May 2023"),
    ("next weekend", "weekend", "weekend of 2023-05-20", "20–21 May 2023"),
    ("past weekend", "weekend", "weekend of 2023-05-06", "6–7 May 2023"),
    ("last week", "week", "week of 2023-05-01", "week of 1 May 2023"),
    ("next week", "week", "week of 2023-05-15", "week of 15 May 2023"),
    ("last month", "month", "April 2023", "April 2023"),
    ("this month", "month", "May 2023", "May 2023"),
    ("last year", "year", "2022", "2022"),
    ("next year", "year", "2024", "2024"),
    ("two weeks ago", "week", "week of 2023-04-24", "week of 24 April 2023"),
    ("a fortnight ago", "week", "week of 2023-04-24", "week of 24 April 2023"),
    ("three months ago", "month", "February 2023", "February 2023"),
    ("a couple of days ago", "day", "2023-05-06", "6 May 2023"),
    ("few days ago", "day", "2023-05-05", "5 May 2023"),
    ("5 years ago", "year", "2018", "2018"),
    ("in 3 days", "day", "2023-05-11", "11 May 2023"),
    ("in two weeks", "day", "2023-05-22", "22 May 2023"),
    ("in a fortnight", "day", "2023-05-22", "22 May 2023"),
    ("in two months", "day", "2023-07-08", "8 July 2023"),
    ("last Friday", "day", "2023-05-05", "5 May 2023"),
    ("next Friday", "day", "2023-05-12", "12 May 2023"),
    ("coming Monday", "day", "2023-05-15", "15 May 2023"),
])
def test_each_kind_in_both_renderings(expr: str, kind: str, iso: str, human: str) -> None:
    p = meaning(expr, MON)
    assert p is not None and p.kind == kind
    assert (p.iso(), p.human()) == (iso, human)
    assert dates.resolve(expr, MON) == human


@pytest.mark.parametrize("expr, day, iso, human", [
    ("yesterday", _dt.date(2024, 1, 1), "2023-12-31", "31 December 2023"),
    ("last week", _dt.date(2024, 1, 3), "week of 2023-12-25", "week of 25 December 2023"),
    ("last month", _dt.date(2024, 1, 15), "December 2023", "December 2023"),
    ("next month", _dt.date(2024, 12, 2), "January 2025", "January 2025"),
    ("last year", _dt.date(2024, 1, 1), "2023", "2023"),
    ("11 months ago", _dt.date(2024, 3, 31), "April 2023", "April 2023"),
    # a weekend across two months says both
    ("last weekend", _dt.date(2023, 10, 2), "weekend of 2023-09-30", "30 September 2023 – 1 October 2023"),
    # a month ahead that has no such day ends on its last one (a leap year)
    ("in a month", _dt.date(2024, 1, 31), "2024-02-29", "29 February 2024"),
    ("tomorrow", _dt.date(2023, 12, 31), "2024-01-01", "1 January 2024"),
])
def test_month_and_year_boundaries(expr: str, day: _dt.date, iso: str, human: str) -> None:
    p = meaning(expr, day)
    assert p is not None and (p.iso(), p.human()) == (iso, human)


@pytest.mark.parametrize("expr", ["someday", "last time", "on time", "2000 years ago",
                                  "0 days ago", "Friday", "in a while", ""])
def test_what_is_not_a_relative_date(expr: str) -> None:
    assert meaning(expr, MON) is None and dates.resolve(expr, MON) is None


# ---------------------------------------------------------------- the sentence's tense

TUE = _dt.date(2026, 6, 2)  # a Tuesday


def test_on_friday_is_the_last_one_in_the_past_and_the_next_one_ahead() -> None:
    past, ahead = "We went hiking on Friday.", "I'll go hiking on Friday."
    assert [m.period.iso() for m in mentions(past, TUE)] == ["2026-05-29"]
    assert [m.period.iso() for m in mentions(ahead, TUE)] == ["2026-06-05"]
    # the index reads the same rule, each sentence of a turn in its own tense (it used to
    # read every "on Friday" as the last one)
    assert date_notes(f"{past} {ahead}", "2026-06-02T10:00:00") == \
        "[on friday: 29 May 2026; on friday: 5 June 2026]"
    # and dream's rendering of the same sentence
    assert T.relative_dates(ahead, "2026-06-02") == [["on Friday", "2026-06-05"]]


def test_this_weekday_is_this_weeks_unless_the_sentence_looks_ahead_past_it() -> None:
    thu, sat = _dt.date(2026, 6, 4), _dt.date(2026, 6, 6)
    # said on Thursday about Monday: the index's rule (this week's Monday) for the past —
    # dream used to take the next Monday whatever the tense
    assert mentions("I started the course this Monday.", thu)[0].period == Period("day", _dt.date(2026, 6, 1))
    assert mentions("I'll start the course this Monday.", thu)[0].period == Period("day", _dt.date(2026, 6, 8))
    # said on Saturday: "let's meet this Friday" is the next one, "this Friday was fun" yesterday
    assert mentions("Let's meet this Friday.", sat)[0].period.iso() == "2026-06-12"
    assert mentions("This Friday was fun.", sat)[0].period.iso() == "2026-06-05"
    # ahead of today both agree
    assert mentions("This Friday was fun.", TUE)[0].period.iso() == "2026-06-05"


# ---------------------------------------------------------------- the rules chosen where the two disagreed

def test_last_weekend_said_on_a_sunday_is_the_weekend_before() -> None:
    # dream used to answer the weekend in progress (6–7 June), which a person calls "this weekend"
    sun = _dt.date(2026, 6, 7)
    assert meaning("last weekend", sun) == Period("weekend", _dt.date(2026, 5, 30))
    assert meaning("this weekend", sun) == Period("weekend", _dt.date(2026, 6, 6))


def test_next_weekend_is_the_weekend_of_next_week() -> None:
    # as "next week" is the week after this one; dream used to take the coming weekend
    # (6–7 June) on Monday–Thursday, which is "this weekend"
    for day in range(1, 5):  # Monday 1 … Thursday 4 June 2026
        assert meaning("next weekend", _dt.date(2026, 6, day)).iso() == "weekend of 2026-06-13"
        assert meaning("this weekend", _dt.date(2026, 6, day)).iso() == "weekend of 2026-06-06"


def test_the_past_week_is_the_seven_days_before() -> None:
    # the index used to give the calendar week before (4–10 April for a Sunday 17 April),
    # which leaves out most of the week just past
    assert dates.resolve("past week", _dt.date(2022, 4, 17)) == "week of 10 April 2022"
    assert meaning("past week", _dt.date(2023, 5, 10)).iso() == "week of 2023-05-03"


def test_the_day_before_yesterday_is_not_also_yesterday() -> None:
    assert date_notes("I saw her the day before yesterday.", "2023-05-08") == \
        "[the day before yesterday: 6 May 2023]"


@pytest.mark.parametrize("text", [
    "Hey Nate! Haven't talked in a few days.",
    "Rome wasn't built in a day so keep pushing on!",
    "I swim twice in a week.",
    "That's all in a day's work.",
])
def test_in_n_days_that_is_a_length_of_time_is_no_date(text: str) -> None:
    assert mentions(text, MON) == [] and date_notes(text, "2023-05-08") == ""


def test_in_n_days_ahead_is_a_date() -> None:
    assert date_notes("The review is in two weeks.", "2023-05-08") == "[in two weeks: 22 May 2023]"


def test_mentions_say_where_the_expression_is() -> None:
    text = "Yesterday was long; last week too."
    got = mentions(text, MON)
    assert [(m.text, text[m.start:m.end]) for m in got] == [("Yesterday", "Yesterday"), ("last week", "last week")]
    assert T.resolve_relative_dates(text, "2023-05-08") == \
        "Yesterday (2023-05-07) was long; last week (week of 2023-05-01) too."


# ---------------------------------------------------------------- no dateparser

def test_dates_resolve_without_dateparser(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    """The expressions dream used to hand to ``dateparser`` resolve by the rules, with the
    package unimportable: the index's notes never depend on an optional install."""
    monkeypatch.setitem(sys.modules, "dateparser", None)  # `import dateparser` raises ImportError
    with pytest.raises(ImportError):
        importlib.import_module("dateparser")
    # a fresh copy of the module, imported without dateparser; the one other modules hold
    # is put back by monkeypatch
    import brainfs.cache.search as package

    monkeypatch.delitem(sys.modules, dates.__name__)
    monkeypatch.setattr(package, "dates", dates)
    fresh = importlib.import_module(dates.__name__)
    assert fresh is not dates
    with caplog.at_level(logging.WARNING):
        got = {e: fresh.meaning(e, TUE, future=True).iso()
               for e in ("on Friday", "this Friday", "next Thursday", "coming Monday",
                         "in two weeks", "in 3 days", "the day before yesterday")}
        notes = fresh.date_notes("I'm meeting Priya on Friday.", "2026-06-02")
    assert got == {"on Friday": "2026-06-05", "this Friday": "2026-06-05", "next Thursday": "2026-06-04",
                   "coming Monday": "2026-06-08", "in two weeks": "2026-06-16", "in 3 days": "2026-06-05",
                   "the day before yesterday": "2026-05-31"}
    assert notes == "[on friday: 5 June 2026]"
    assert not [r for r in caplog.records if "dateparser" in r.getMessage()]
