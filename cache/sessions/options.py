"""What the user says about a source that the source does not say: the names to write for
its speakers (``--speaker User=Nadia``, the ``import_speakers`` setting) and the date of a
plain transcript (``--date``), read into :class:`ImportOptions` with one-line errors."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field

from brainfs.cache.sessions.conversation import ImportInputError
from brainfs.cache.sessions.times import parse_time, written_date


@dataclass
class ImportOptions:
    """What the user says about a source that the source does not: ``date`` of a plain
    transcript (``--date``), and ``speakers``, the names to write for the source's roles
    (``--speaker User=Nadia``; the ``[import] speakers`` setting)."""

    date: _dt.datetime | None = None
    speakers: dict[str, str] = field(default_factory=dict)


def parse_speakers(specs: list[str] | dict[str, str] | None) -> dict[str, str]:
    """``["User=Nadia"]`` (or a mapping) → ``{"User": "Nadia"}``; ImportInputError on a
    spec without ``=`` or with an empty side, or a name a transcript cannot hold."""
    if isinstance(specs, dict):
        items = [(str(k), str(v)) for k, v in specs.items()]
    else:
        items = []
        for spec in specs or []:
            if "=" not in spec:
                raise ImportInputError(f"--speaker {spec!r}: expected ROLE=NAME (e.g. User=Nadia)")
            k, v = spec.split("=", 1)
            items.append((k, v))
    out: dict[str, str] = {}
    for k, v in items:
        k, v = k.strip(), " ".join(v.split())
        if not k or not v or re.search(r"[:\[\]\n]", v) or len(v) > 80:
            raise ImportInputError(f"speaker mapping {k}={v}: expected ROLE=NAME, the name "
                                   f"without ':', '[' or ']' and at most 80 characters")
        out[k] = v
    return out


def make_options(setting: str, speakers: list[str] | None, date: str | None) -> ImportOptions:
    """The options of ``--speaker ROLE=NAME`` (over the ``import_speakers`` setting,
    ``"User=Nadia, Human=Nadia"``) and ``--date``; ImportInputError (one line) on a bad one."""
    listed = [x for x in (setting or "").split(",") if x.strip()]
    mapping = {**parse_speakers(listed), **parse_speakers(speakers or [])}
    when = None
    if date:
        when = parse_time(date) or written_date(date)
        if when is None:
            raise ImportInputError(f"--date {date!r}: not a date (give 2026-11-03, "
                                   f"2026-11-03T14:00:00Z or 3 November 2026)")
    return ImportOptions(date=when, speakers=mapping)
