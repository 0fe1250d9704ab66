"""Relative dates in a sentence, resolved against the day it was said: the one set of rules.

"I went to a support group yesterday", said on 8 May 2023, is about 7 May 2023; a question
"what did Caroline do on 7 May?" or "in May 2023" shares no word with "yesterday". Two users
read the same rules here:

* the search index appends what each relative expression of a dated turn means to the
  turn's indexed text — ``[yesterday: 7 May 2023; last week: week of 1 May 2023]`` — so
  BM25 and the embedding see the date (:func:`date_notes`, :func:`annotate`; only turns,
  chunks with a speaker and a session date, are touched; the transcript is never changed);
* dream dates the wiki's Timeline by the day an event names ("last weekend" → "weekend of
  2023-05-06"), through :func:`mentions` and :meth:`Period.iso`.

An expression resolves to a :class:`Period` — a day, a weekend, a week, a month or a year
and the day it starts — rendered for people (:meth:`Period.human`: "7 May 2023", "6–7 May
2023", "week of 1 May 2023", "May 2023", "2023") or in ISO form (:meth:`Period.iso`:
"2023-05-07", "weekend of 2023-05-06", "week of 2023-05-01", "May 2023", "2023").

The rules (weeks start on Monday; a weekend is Saturday–Sunday; "N" is a digit or a number
word up to ten, "a couple of" = 2, "a few" = 3):

* the day before yesterday, yesterday, last night, today, tonight, this morning / afternoon /
  evening, tomorrow, the day after tomorrow;
* last / this / next week, weekend, month, year — the calendar unit before, of, after the
  day it was said; "past weekend" = last weekend, "past month/year" = last month/year, but
  "the past week" is the seven days before (see :func:`_period`);
* last / this / next / coming / on <weekday> — "on Friday" is the last Friday in a sentence
  about the past and the next one in a sentence about what is ahead (:func:`is_future`);
* "N days / weeks / fortnights / months / years ago", "in N days / weeks / fortnights /
  months" (not after a negation: "haven't talked in a few days" is no date ahead).

Rules, not ``dateparser``: every expression found here is fixed calendar arithmetic, and the
index's text must not depend on whether an optional package is installed (two installs
would index the same turn differently, under the same ``SCHEMA_VERSION``).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Literal

# What :func:`date_notes` writes is part of the index format: changing it bumps
# ``index.SCHEMA_VERSION``, so that every index re-reads its files once.

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2,
            "few": 3, "a few": 3}
#: Beyond this many units an "N … ago" is not a date we annotate ("2000 years ago").
_MAX_N = 100

_WD = "|".join(_DAYS)
_N = r"\d+|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten"
_UNIT = r"day|week|fortnight|month|year"
#: Every relative expression the rules resolve (group ``e``: the whole expression).
RELATIVE_RE = re.compile(
    r"\b(?P<e>(?:the\s+)?day\s+(?P<dd>before\s+yesterday|after\s+tomorrow)|"
    r"yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening)|last\s+night|"
    r"(?P<pq>last|this|next|past)\s+(?P<pu>weekend|week|month|year)|"
    rf"(?P<wq>last|this|next|coming|on)\s+(?P<wd>{_WD})|"
    rf"in\s+(?P<in>{_N})\s+(?P<iu>day|week|fortnight|month)s?|"
    rf"(?P<n>{_N})\s+(?P<u>{_UNIT})s?\s+ago)\b", re.I)

#: Words that put a sentence in the future ("I'll see her on Friday", "we're meeting on
#: Monday"): its "on <weekday>" is the next one, not the last.
_FUTURE_RE = re.compile(r"\b(?:will|won't|shall|going to|gonna|plan(?:s|ning)? to|scheduled|"
                        r"starting|starts|begins|beginning|"
                        r"due|upcoming|hope to|want to|need to|have to|has to|let's|until|by)\b|"
                        r"'ll\b|\b(?:i'm|i am|we're|we are|she's|he's|they're)\s+\w+ing\b", re.I)
#: Before "in N days", a negation makes it a length of time, not a day ahead ("We haven't
#: talked in a few days", "Rome wasn't built in a day").
_NEGATION_RE = re.compile(r"\b(?:\w+n't|not|never)\b", re.I)
#: "twice in a week", "three times in a month": a rate, not a date.
_RATE_RE = re.compile(r"\b(?:once|twice|times)\s*$", re.I)
_SENTENCE_END_RE = re.compile(r"[.!?]\s+")


@dataclass(frozen=True)
class Period:
    """What a relative expression names: a ``kind`` of period and the day it starts."""

    kind: Literal["day", "weekend", "week", "month", "year"]
    start: _dt.date

    def human(self) -> str:
        """The index note's form: "7 May 2023", "6–7 May 2023", "week of 1 May 2023",
        "May 2023", "2023"."""
        d = self.start
        if self.kind == "day":
            return _day(d)
        if self.kind == "weekend":
            sun = d + _dt.timedelta(days=1)
            return f"{d.day}–{_day(sun)}" if d.month == sun.month else f"{_day(d)} – {_day(sun)}"
        if self.kind == "week":
            return f"week of {_day(d)}"
        if self.kind == "month":
            return f"{_MONTHS[d.month - 1]} {d.year}"
        return str(d.year)

    def iso(self) -> str:
        """Dream's form: "2023-05-07", "weekend of 2023-05-06", "week of 2023-05-01",
        "May 2023", "2023"."""
        d = self.start
        if self.kind == "day":
            return d.isoformat()
        if self.kind in ("weekend", "week"):
            return f"{self.kind} of {d.isoformat()}"
        if self.kind == "month":
            return f"{_MONTHS[d.month - 1]} {d.year}"
        return str(d.year)

    def contains(self, day: _dt.date) -> bool:
        """Whether ``day`` falls in this period."""
        d = self.start
        if self.kind == "day":
            return day == d
        if self.kind in ("weekend", "week"):
            return 0 <= (day - d).days < (2 if self.kind == "weekend" else 7)
        if self.kind == "month":
            return (day.year, day.month) == (d.year, d.month)
        return day.year == d.year


@dataclass(frozen=True)
class Mention:
    """A relative expression found in a text: as written, where, and what it names."""

    text: str
    start: int
    end: int
    period: Period


def _day(d: _dt.date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _first_of_month(d: _dt.date, n: int) -> _dt.date:
    m = d.month - 1 + n
    return _dt.date(d.year + m // 12, m % 12 + 1, 1)


def _add_months(d: _dt.date, n: int) -> _dt.date:
    """The same day ``n`` months on, or the month's last day when it has no such day."""
    first = _first_of_month(d, n)
    nxt = _first_of_month(d, n + 1)
    return first.replace(day=min(d.day, (nxt - first).days))


def is_future(sentence: str) -> bool:
    """Whether a sentence speaks of what is ahead (see :data:`_FUTURE_RE`)."""
    return bool(_FUTURE_RE.search(sentence.replace("’", "'")))


def _count(raw: str) -> int | None:
    raw = " ".join(raw.lower().split())
    n = int(raw) if raw.isdigit() else _NUMBERS.get(raw)
    return n if n and n <= _MAX_N else None


def _weekday(q: str, target: int, day: _dt.date, future: bool) -> _dt.date:
    """The day "<q> <weekday>" names. "last": the one before the day it was said; "next" and
    "coming": the one after; "on": the one after in a sentence about the future, else the
    one before. "this": the one of this week (Monday–Sunday) — or, when the sentence is
    about the future and that day is past, the next one ("Let's meet this Monday", said on
    a Wednesday, is 5 days on). The index used to read "on Friday" always as the last one and
    dream read "this Friday" always ahead: a person reads both by the sentence's tense."""
    back = (day.weekday() - target) % 7 or 7
    ahead = (target - day.weekday()) % 7 or 7
    if q == "last" or (q == "on" and not future):
        return day - _dt.timedelta(days=back)
    if q in ("next", "coming", "on"):
        return day + _dt.timedelta(days=ahead)
    this_week = day + _dt.timedelta(days=target - day.weekday())
    if future and this_week < day:
        return this_week + _dt.timedelta(days=7)
    return this_week


def _period(q: str, unit: str, day: _dt.date) -> Period:
    """"last/this/next/past weekend|week|month|year" said on ``day``.

    Calendar units: "last weekend" is the weekend of the week before — also when said on a
    Sunday (dream used to take the weekend in progress, which a person calls "this
    weekend"); "next weekend" is the weekend of next week, as "next week" is the week after
    this one ("this weekend" names the coming one; dream used to take the coming one on
    Monday–Thursday). "Past weekend/month/year" ("this past weekend") is the last one, but
    "the past week" is the seven days before the day it was said, which a "week of" that
    starts on any weekday says exactly.
    """
    monday = day - _dt.timedelta(days=day.weekday())
    shift = {"last": -1, "past": -1, "this": 0, "next": 1}[q]
    if unit == "weekend":
        return Period("weekend", monday + _dt.timedelta(days=5 + 7 * shift))
    if unit == "week":
        if q == "past":
            return Period("week", day - _dt.timedelta(days=7))
        return Period("week", monday + _dt.timedelta(days=7 * shift))
    if unit == "month":
        return Period("month", _first_of_month(day, shift))
    return Period("year", _dt.date(day.year + shift, 1, 1))


def _ago(n: int, unit: str, day: _dt.date) -> Period:
    """"``n`` days/weeks/fortnights/months/years ago" said on ``day``: the day, the week
    (Monday), the month or the year it falls in. A fortnight is two weeks (dream used to
    give "a fortnight ago" as a day and "two weeks ago" as a week)."""
    if unit == "day":
        return Period("day", day - _dt.timedelta(days=n))
    if unit in ("week", "fortnight"):
        weeks = n * (2 if unit == "fortnight" else 1)
        return Period("week", day - _dt.timedelta(days=7 * weeks + day.weekday()))
    if unit == "month":
        return Period("month", _first_of_month(day, -n))
    return Period("year", _dt.date(day.year - n, 1, 1))


def _ahead(n: int, unit: str, day: _dt.date) -> Period:
    """"in ``n`` days/weeks/fortnights/months" said on ``day``: the day it lands on (a plan
    ahead names a day: "the review is in two weeks")."""
    if unit == "month":
        return Period("day", _add_months(day, n))
    days = n * {"day": 1, "week": 7, "fortnight": 14}[unit]
    return Period("day", day + _dt.timedelta(days=days))


def _meaning(m: re.Match[str], day: _dt.date, future: bool) -> Period | None:
    e = " ".join(m.group("e").lower().split())
    if m.group("dd"):
        return Period("day", day + _dt.timedelta(days=-2 if "before" in e else 2))
    if e in ("yesterday", "last night"):
        return Period("day", day - _dt.timedelta(days=1))
    if e in ("today", "tonight", "this morning", "this afternoon", "this evening"):
        return Period("day", day)
    if e == "tomorrow":
        return Period("day", day + _dt.timedelta(days=1))
    if m.group("pu"):
        return _period(m.group("pq").lower(), m.group("pu").lower(), day)
    if m.group("wd"):
        return Period("day", _weekday(m.group("wq").lower(), _DAYS.index(m.group("wd").lower()),
                                      day, future))
    if m.group("iu"):
        n = _count(m.group("in"))
        return _ahead(n, m.group("iu").lower(), day) if n else None
    n = _count(m.group("n"))
    return _ago(n, m.group("u").lower(), day) if n else None


def meaning(expr: str, day: _dt.date, future: bool = False) -> Period | None:
    """What one relative expression means when said on ``day`` ("last weekend" on Monday
    8 May 2023 → ``Period("weekend", 2023-05-06)``), or None when it is not one we resolve.
    ``future``: the sentence speaks of what is ahead (:func:`is_future`)."""
    m = RELATIVE_RE.fullmatch(" ".join(expr.split()))
    return _meaning(m, day, future) if m else None


def resolve(expr: str, day: _dt.date, future: bool = False) -> str | None:
    """:func:`meaning` in the index's words ("last weekend" → "6–7 May 2023")."""
    p = meaning(expr, day, future)
    return p.human() if p else None


def mentions(text: str, day: _dt.date, future: bool | None = None) -> list[Mention]:
    """Each relative expression of ``text`` said on ``day``, resolved. ``future``: whether
    the text speaks of what is ahead; None = judged per sentence (:func:`is_future`)."""
    out: list[Mention] = []
    starts = [0] + [m.end() for m in _SENTENCE_END_RE.finditer(text)]
    for m in RELATIVE_RE.finditer(text):
        s0 = max(s for s in starts if s <= m.start())
        if m.group("iu"):
            before = text[s0:m.start()].replace("’", "'")
            rest = text[m.end():m.end() + 2]
            if _NEGATION_RE.search(before) or _RATE_RE.search(before) or \
                    rest[:1] in ("'", "’"):  # "all in a day's work"
                continue
        if future is None:
            s1 = next((s for s in starts if s > m.start()), len(text))
            fut = is_future(text[s0:s1])
        else:
            fut = future
        p = _meaning(m, day, fut)
        if p is not None:
            out.append(Mention(m.group("e"), m.start("e"), m.end("e"), p))
    return out


def date_notes(text: str, when: str | None) -> str:
    """The note appended to a turn's indexed text: ``[yesterday: 7 May 2023; last week:
    week of 1 May 2023]``, or "" when the turn has no date or no relative expression."""
    if not when or not text:
        return ""
    try:
        day = _dt.date.fromisoformat(str(when)[:10])
    except ValueError:
        return ""
    notes: list[str] = []
    for m in mentions(text, day):
        note = f"{m.text.lower()}: {m.period.human()}"
        if note not in notes:
            notes.append(note)
    return f"[{'; '.join(notes)}]" if notes else ""


def annotate(chunks: list) -> list:
    """Append :func:`date_notes` to each dated turn chunk's text (in place; returns the
    list). Chunks of other kinds are left alone."""
    for c in chunks:
        if getattr(c, "kind", None) == "turn" and getattr(c, "created", None):
            note = date_notes(c.text, c.created)
            if note:
                c.text = f"{c.text} {note}"
    return chunks


# --------------------------------------------------------------------------- dates a question names

_MONTH_RE = "|".join(_MONTHS)
#: "7 July, 2023", "7th of July 2023", "July 7, 2023", "July 2023": a calendar day or month
#: written out with its year. (A month alone — "in July" — names no year: not resolved.)
_DAY_MONTH_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE}),?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_RE = re.compile(rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR_RE = re.compile(rf"\b({_MONTH_RE}),?\s+(\d{{4}})\b", re.I)


def _month(name: str) -> int:
    return [m.lower() for m in _MONTHS].index(name.lower()) + 1


def named_period(question: str) -> Period | None:
    """The first calendar day or month a question names with its year ("What did Maria
    do on 7 July, 2023?" → the day; "… in December 2023?" → the month), or None. Recall
    lifts the turns said in it (``rerank.date_prior``). Never raises."""
    try:
        q = str(question or "")
        for rx, order in ((_DAY_MONTH_RE, "dmy"), (_MONTH_DAY_RE, "mdy")):
            m = rx.search(q)
            if m:
                day, month = (m.group(1), m.group(2)) if order == "dmy" else (m.group(2), m.group(1))
                try:
                    return Period("day", _dt.date(int(m.group(3)), _month(month), int(day)))
                except ValueError:  # "31 February 2023"
                    return None
        m = _MONTH_YEAR_RE.search(q)
        if m:
            return Period("month", _dt.date(int(m.group(2)), _month(m.group(1)), 1))
        return None
    except Exception:  # noqa: BLE001 - a stage, never a failure of recall
        return None
