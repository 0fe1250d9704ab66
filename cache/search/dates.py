"""Relative dates in transcript turns, resolved against the session's date for the index.

"I went to a support group yesterday", said on 8 May 2023, is about 7 May 2023; a question
"what did Caroline do on 7 May?" or "in May 2023" shares no word with "yesterday". The index
therefore appends what each relative expression means to the turn's indexed text —
``[yesterday: 7 May 2023]`` — so BM25 and the embedding see the date, and a recalled card
shows it to the reader. Only turns (chunks with a speaker and a session date) are touched;
the transcript file itself is never changed.

Rules, no model (``dateparser`` would be the library for absolute dates, which are already
searchable as written): yesterday / today / tonight / this morning / last night / tomorrow,
last / this / next week(end) / month / year, "N days / weeks / months / years ago", "last
Friday", "on Friday" (the last one before the session), "a few days ago" (about 3 days).
Weeks start on Monday; a weekend is Saturday–Sunday.
"""

from __future__ import annotations

import datetime as _dt
import re

# What :func:`date_notes` writes is part of the index format: changing it bumps
# ``index.SCHEMA_VERSION``, so that every index re-reads its files once.

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2,
            "few": 3, "a few": 3}

_EXPR_RE = re.compile(
    r"\b(?P<e>yesterday|today|tonight|tomorrow|this morning|this afternoon|this evening|"
    r"last night|(?:last|this|next|past) (?:weekend|week|month|year)|"
    r"(?:last|this|next|on) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?P<n>\d+|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|eight|"
    r"nine|ten) (?P<u>day|week|month|year)s? ago)\b", re.I)


def _day(d: _dt.date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _month(d: _dt.date) -> str:
    return f"{_MONTHS[d.month - 1]} {d.year}"


def _add_months(d: _dt.date, n: int) -> _dt.date:
    m = d.month - 1 + n
    return d.replace(year=d.year + m // 12, month=m % 12 + 1, day=1)


def resolve(expr: str, day: _dt.date) -> str | None:
    """What a relative expression means when said on ``day`` ("last weekend" on Monday
    8 May 2023 → "6–7 May 2023"), or None when it is not one we resolve."""
    e = " ".join(expr.lower().split())
    if e in ("yesterday", "last night"):
        return _day(day - _dt.timedelta(days=1))
    if e in ("today", "tonight", "this morning", "this afternoon", "this evening"):
        return _day(day)
    if e == "tomorrow":
        return _day(day + _dt.timedelta(days=1))
    monday = day - _dt.timedelta(days=day.weekday())
    if e.endswith("weekend"):
        shift = {"last": -7, "past": -7, "this": 0, "next": 7}[e.split()[0]]
        sat = monday + _dt.timedelta(days=5 + shift)
        if e.startswith(("last", "past")) and day.weekday() >= 5:
            sat = monday + _dt.timedelta(days=5 - 7)
        sun = sat + _dt.timedelta(days=1)
        return (f"{sat.day}–{_day(sun)}" if sat.month == sun.month
                else f"{_day(sat)} – {_day(sun)}")
    if e.endswith("week"):
        shift = {"last": -7, "past": -7, "this": 0, "next": 7}[e.split()[0]]
        return f"week of {_day(monday + _dt.timedelta(days=shift))}"
    if e.endswith("month"):
        shift = {"last": -1, "past": -1, "this": 0, "next": 1}[e.split()[0]]
        return _month(_add_months(day, shift))
    if e.endswith("year"):
        shift = {"last": -1, "past": -1, "this": 0, "next": 1}[e.split()[0]]
        return str(day.year + shift)
    w = e.split()
    if len(w) == 2 and w[1] in _DAYS:
        target = _DAYS.index(w[1])
        if w[0] == "next":
            delta = (target - day.weekday()) % 7 or 7
            return _day(day + _dt.timedelta(days=delta))
        if w[0] == "this":
            return _day(monday + _dt.timedelta(days=target))
        delta = (day.weekday() - target) % 7 or 7  # "last Friday", "on Friday": the one before
        return _day(day - _dt.timedelta(days=delta))
    m = re.fullmatch(r"(.+?) (day|week|month|year)s? ago", e)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS.get(m.group(1))
        if not n or n > 100:
            return None
        unit = m.group(2)
        if unit == "day":
            return _day(day - _dt.timedelta(days=n))
        if unit == "week":
            return f"week of {_day(monday - _dt.timedelta(days=7 * n))}"
        if unit == "month":
            return _month(_add_months(day, -n))
        return str(day.year - n)
    return None


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
    for m in _EXPR_RE.finditer(text):
        value = resolve(m.group("e"), day)
        if value:
            note = f"{m.group('e').lower()}: {value}"
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
