"""Times as sources write them: an ISO 8601 string or an epoch number (:func:`parse_time`),
a calendar date written in words or digits ("3 November 2026", "2026-11-03":
:func:`written_date`), and a plain transcript's written turn times ("[10:02]", "10:02 PM":
:func:`turn_clock`) put on the session's day (:func:`clock_times`)."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from brainfs.cache.sessions.conversation import Conversation


def parse_time(value: Any) -> _dt.datetime | None:
    """An ISO 8601 string or an epoch number → an aware UTC datetime (None if neither)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            v = float(value)
            if v > 1e11:  # milliseconds
                v /= 1000.0
            return _dt.datetime.fromtimestamp(v, _dt.timezone.utc)
        s = str(value).strip()
        if re.fullmatch(r"\d+(\.\d+)?", s):
            return parse_time(float(s))
        d = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return d.astimezone(_dt.timezone.utc)


def turn_clock(stamp: str | None) -> tuple[int, int, int] | _dt.datetime | None:
    """A turn's written time: a full time when it has a date, else (hour, minute, second)."""
    if not stamp:
        return None
    if re.match(r"\d{4}-", stamp):
        return parse_time(stamp)
    m = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s?(?:([AaPp])\.?[Mm]\.?)?$", stamp)
    if not m:
        return None
    h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if m.group(4):
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if m.group(4).lower() == "p" else 0)
    return (h, mi, sec) if h < 24 and mi < 60 and sec < 60 else None


#: How far a written time of day may go back and still be the same day: a line written out
#: of order (an edit, two people's clocks). Past midnight the clock goes back by nearly a day
#: (23:58, then 00:03), so a longer step back is the next day.
_CLOCK_BACK = _dt.timedelta(hours=1)


def clock_times(c: Conversation, day: _dt.datetime | None) -> None:
    """Time a plain transcript's turns by their written times: a time of day on ``day``
    (the session's stated day; None: its times of day are not used), a day later each time
    the clock goes back by more than ``_CLOCK_BACK`` (past midnight); a turn without one
    said when the one before was."""
    prev: _dt.datetime | None = None
    for t, clock in zip(c.turns, c.clocks):
        if isinstance(clock, _dt.datetime):
            t.time = clock
        elif clock is not None and day is not None:
            t.time = day.replace(hour=clock[0], minute=clock[1], second=clock[2], microsecond=0)
            while prev is not None and t.time < prev - _CLOCK_BACK:
                t.time += _dt.timedelta(days=1)
        else:
            t.time = prev or (day if day is not None else None)
        prev = t.time or prev
    c.timed = any(isinstance(k, _dt.datetime) or (k is not None and day is not None) for k in c.clocks)


_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], 1)}
_MON = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
       r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WRITTEN_DATES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    # "2026/11/03", "2026.11.03": year first is never ambiguous (03/11/2026 is, and is left);
    # dotted, two digits each, as a version number "2024.1.2" is not a date
    re.compile(r"\b(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})\b"),
    re.compile(r"(?<![\d.])(?P<y>\d{4})\.(?P<m>\d{2})\.(?P<d>\d{2})(?![\d.]*\d)"),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MON + r",?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b" + _MON + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I),
)


def written_date(text: str) -> _dt.datetime | None:
    """The first calendar date written in ``text`` — "2026-11-03", "3 November 2026",
    "Nov 3, 2026" — as midnight UTC, or None."""
    found = written_date_match(text)
    return found[0] if found else None


def written_date_match(text: str) -> tuple[_dt.datetime, str] | None:
    """:func:`written_date` and the words that wrote it ("3 November 2026")."""
    for pat in _WRITTEN_DATES:
        m = pat.search(text or "")
        if not m:
            continue
        g = m.groupdict()
        month = int(g["m"]) if g.get("m") else next(
            v for k, v in _MONTHS.items() if k.startswith(g["mon"].lower().rstrip(".")[:3]))
        try:
            return _dt.datetime(int(g["y"]), month, int(g["d"]), tzinfo=_dt.timezone.utc), m.group(0)
        except ValueError:
            continue
    return None
