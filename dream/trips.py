"""Trips the speaker is making, moving or calling off ("I'm flying to Lisbon on 3 May",
"move the Lisbon trip to 10 May", "Crete's off, we cancelled it"), keyed by where."""

from __future__ import annotations

import re

from .irrealis import unrealised
from .patternwords import BAD_VALUES, MONTHS, NAME
from .relationrecord import Relation


#: A day of a month, as a trip is dated (a weekday alone names a day of any week).
DAY_MONTH = (rf"(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{{1,2}}(?:st|nd|rd|th)?)?\s+(?:{MONTHS})(?:\s+\d{{4}})?"
             rf"|(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?)")
#: A trip: where to and when, keyed by where ("I'm flying to Lisbon on 3 May" → "now I'm
#: flying to Lisbon on 10 May instead"; "Crete's off, we cancelled it" ends it). A trip
#: there said after the last one's day is another trip, not a change (:mod:`.pages`).
_TRIP = re.compile(
    rf"\b(?:I|we)(?:['’]m|['’]re|\s+am|\s+are|['’]ll\s+be|\s+will\s+be)\s+(?:now\s+|still\s+)?(?:flying|going|travelling|traveling|"
    rf"heading|driving|sailing|off)\s+(?:back\s+)?to\s+(?P<dest>(?-i:{NAME}))\s+(?:for\s+(?:an?\s+|the\s+|my\s+)?[a-z]+(?:\s+[a-z]+)?\s+)?"
    rf"(?:(?:on|from)\s+)?(?:the\s+)?(?P<date>{DAY_MONTH})\b"
    # "Family trip to Accra 12-19 July", "our holiday to Crete from 3 May"
    rf"|(?:^|\b(?:my|our|a|the|family)\s+)(?:family\s+)?(?:trip|holiday|vacation)\s+to\s+(?P<dest4>(?-i:{NAME}))\s+"
    rf"(?:(?:on|from)\s+)?(?:the\s+)?(?P<date4>{DAY_MONTH})\b", re.I)
_TRIP_MOVED = re.compile(
    rf"\b(?:our|my|the)\s+(?:trip|holiday|flight)\s+to\s+(?P<dest>(?-i:{NAME}))\s+is\s+(?:now\s+)?(?:on|from)\s+(?:the\s+)?(?P<date>{DAY_MONTH})\b"
    rf"|\b(?:our|my|the)\s+(?P<dest3>(?-i:{NAME}))\s+(?:trip|holiday|flight|visit)\s+is\s+(?:now\s+)?(?:on\s+|from\s+)?(?:the\s+)?"
    rf"(?P<date3>{DAY_MONTH})\b"
    rf"|\b(?:move|moved|push|pushed|change|changed|rebook|rebooked|shift|shifted|postpone|postponed|put\s+back|"
    rf"brought\s+forward|bring\s+forward)\s+(?:the|our|my)\s+(?P<dest2>(?-i:{NAME}))\s+"
    rf"(?:trip|holiday|flight|visit)\s+(?:back\s+)?to\s+(?:the\s+)?(?P<date2>{DAY_MONTH})\b", re.I)
#: A trip dated by a month or a season only, or opened without a subject: "We're going to
#: Kyoto in April", "Going to Rome 4-11 October with my partner", "planning Lisbon 12-19 June",
#: "We're planning Vancouver for the August long weekend". Its value: where, then when as said.
_WHEN = (rf"(?:(?:on|from)\s+(?:the\s+)?{DAY_MONTH}|{DAY_MONTH}"
         rf"|(?:for\s+(?:a|one|two|three|\d+)\s+(?:weeks?|days?|nights?|fortnight)\s+)?in\s+(?:early\s+|mid-?\s*|late\s+)?(?:{MONTHS})(?:\s+\d{{4}})?"
         rf"|for\s+the\s+(?:{MONTHS})\s+(?:long\s+|bank\s+holiday\s+)?weekend|next\s+(?:month|week|year|summer|spring|winter|autumn))")
_TRIP_PLAN = re.compile(
    rf"(?:\b(?:I|we)(?:['’]m|['’]re|\s+am|\s+are)\s+(?:now\s+|still\s+)?|(?:^|[.;!:,]\s+)(?:so\s+|now\s+)?)"
    rf"(?:(?:flying|going|travelling|traveling|heading|off)\s+(?:back\s+)?to|planning(?:\s+a\s+trip\s+to)?)\s+"
    rf"(?P<dest>(?-i:{NAME}))\s+(?P<when>{_WHEN})\b", re.I)
#: A trip somewhere else instead of the one planned: "we're doing Seoul instead", "going to
#: Nairobi instead", "we're going to Calgary instead for the long weekend".
_TRIP_INSTEAD = re.compile(
    rf"(?:\b(?:I|we)(?:['’]m|['’]re|\s+am|\s+are|['’]ll|\s+will)\s+(?:now\s+)?|(?:^|[.;!:,]\s+)(?:so\s+|now\s+)?)"
    rf"(?:(?:flying|going|travelling|traveling|heading)\s+to|doing|visiting|go\s+to|fly\s+to)\s+"
    rf"(?P<dest>(?-i:{NAME}))\s+instead\b", re.I)
#: The planned trip sent elsewhere: "we switched the October trip to Seoul", "changed our
#: summer trip to Lisbon" (a day after "to" is a move of its dates, read by :data:`_TRIP_MOVED`).
_TRIP_SWITCH = re.compile(
    rf"\b(?:switched|changed|moved|swapped)\s+(?:the|our|my)\s+(?:(?:{MONTHS}|summer|winter|spring|autumn|easter|"
    rf"christmas|holiday|birthday|anniversary|family|work)\s+)?(?:trip|holiday|vacation)\s+to\s+(?P<dest>(?-i:{NAME}))"
    rf"(?!\s+\d)", re.I)
#: The trip said to go elsewhere now: "my October trip is to Naples, not Rome", "our summer
#: holiday is now in Andalusia" (as a correction words it; a day after the place is a plan of
#: its own, read by :data:`_TRIP_PLAN`).
_TRIP_NOW_TO = re.compile(
    rf"\b(?:our|my)\s+(?:(?:{MONTHS}|[a-z]+)\s+)?"
    rf"(?:trip|holiday|vacation)\s+is\s+(?:now\s+)?(?:to|in)\s+(?P<dest>(?-i:{NAME}))(?:\s+(?P<when>{_WHEN}))?"
    rf"(?=\s*(?:now\b|instead\b|[.,;!]|$))", re.I)
#: "we cancelled Iceland": a trip called off by its place alone.
_PLACE_OFF = re.compile(rf"\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:had\s+to\s+)?(?:cancelled|canceled|called\s+off)\s+"
                        rf"(?P<dest>(?-i:{NAME}))(?!\s+(?:trip|holiday|flight)\b)(?=\s*(?:[.,;!]|$)|\s+(?:and|so|because)\b)", re.I)
_TRIP_OFF = re.compile(
    rf"(?:^|[.;!:,]\s+)(?:the\s+|our\s+|my\s+)?(?P<dest>(?-i:{NAME}))(?:\s+trip|\s+holiday)?(?:['’]s|\s+is)\s+(?:now\s+)?(?:off|cancelled|canceled)\b"
    rf"|\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:had\s+to\s+)?(?:cancelled|canceled|cancel|called\s+off|call\s+off)\s+(?:the|our|my)\s+"
    rf"(?:(?P<dest2>(?-i:{NAME}))\s+(?:trip|holiday|flight)|(?:trip|holiday|flight)\s+to\s+(?P<dest3>(?-i:{NAME})))",
    re.I)


def _holds(sentence: str, m: re.Match[str], dest: str) -> bool:
    """A trip the speaker is really making or calling off (not "if we went to …"), to a place
    (not a word such as "there")."""
    return not unrealised(sentence, m.start()) and dest.split()[0].lower() not in BAD_VALUES


def _where_when(dest: str, when: str) -> str:
    """A trip's value: where, then when as said ("Kyoto in April", "Rome on 4-11 October")."""
    if not when:
        return dest
    return f"{dest} {when}" if re.match(r"(?:on|in|for|from|next)\b", when, re.I) else f"{dest} on {when}"


def trips(sentence: str) -> list[Relation]:
    """Trips the speaker is making or called off (see :data:`_TRIP`)."""
    out: list[Relation] = []
    for m in [*_TRIP.finditer(sentence), *_TRIP_MOVED.finditer(sentence)]:
        dest = next(g for g in (m.groupdict().get(k) for k in ("dest", "dest2", "dest3", "dest4")) if g)
        day = next(g for g in (m.groupdict().get(k) for k in ("date", "date2", "date3", "date4")) if g)
        if _holds(sentence, m, dest):
            out.append(Relation("", "trip", f"{dest} on {day}", "set", "trip|" + dest.lower(), event=True))
    dated = {r.key for r in out}
    for m in _TRIP_PLAN.finditer(sentence):
        dest, when = m.group("dest"), " ".join(m.group("when").split())
        key = "trip|" + dest.lower()
        if key not in dated and _holds(sentence, m, dest):
            out.append(Relation("", "trip", _where_when(dest, when), "set", key, event=True))
    # "my trip is to Naples" sends the planned trip elsewhere only when it says so ("now",
    # "instead", ", not Rome"), and a month is no place ("my trip is in June")
    now_to = [m for m in _TRIP_NOW_TO.finditer(sentence)
              if re.search(r"\b(?:now|instead)\b|,?\s+not\s+", sentence[m.start():], re.I)
              and not re.fullmatch(rf"(?:{MONTHS})", m.group("dest"), re.I)]
    for m in [*_TRIP_INSTEAD.finditer(sentence), *_TRIP_SWITCH.finditer(sentence), *now_to]:
        if _holds(sentence, m, dest := m.group("dest")):
            # the trip planned before, wherever it went: its place is what changes
            when = " ".join((m.groupdict().get("when") or "").split())
            out.append(Relation("", "trip", _where_when(dest, when), "set", "trip|" + dest.lower(), event=True,
                                detail="instead"))
    for m in [*_PLACE_OFF.finditer(sentence), *_TRIP_OFF.finditer(sentence)]:
        dest = next(g for g in (m.groupdict().get(k) for k in ("dest", "dest2", "dest3")) if g)
        if _holds(sentence, m, dest):
            out.append(Relation("", "trip", "", "end", "trip|" + dest.lower(), event=True))
    return out
