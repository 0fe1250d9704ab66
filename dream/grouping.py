"""Statements of one subject's attribute gathered into the groups whose order is its history:
(subject, attribute, key), where the key tells apart the values that stand side by side (two
thresholds, two trips, a format for slides and one for reports) and brings together the ones
said differently (a contact's place named shorter, a trip sent elsewhere "instead", a format
said for its family). :mod:`.pages` replays each group (:func:`.facts.stays`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from . import facts as fact_records
from .formats import format_values
from .quantitykeys import same_key
from .text import words

#: Attributes with one value at a time (a newer value replaces the older one).
SINGLE = {"employer", "role", "manager", "project", "home", "contact", "preference",
          "number", "deadline", "format", "species", "lead", "trip"}


@dataclass
class Stated:
    """One relation statement, resolved to pages."""

    subject: str                 # slug
    attr: str
    key: str
    value: str                   # as written (or the value subject's title)
    value_slug: str | None
    op: str
    fact: dict
    detail: str = ""
    phrase: str = ""             # a quantity's name ("alert threshold")
    negated: tuple[str, ...] = ()
    event: bool = False          # the sentence reports a change: it stays on the timeline


def same_words(a: str, b: str) -> bool:
    """The same words, whatever the case and punctuation."""
    return " ".join(words(a)) == " ".join(words(b))


def _family(value: str) -> str | None:
    """The format family of a value that is one format of the vocabulary ("docx" → document)."""
    got = format_values(value)
    return got[0][0] if len(got) == 1 and got[0][1].casefold() == value.strip().casefold() else None


def group_statements(stated: list[Stated]) -> dict[tuple, list[Stated]]:
    """(subject, attr, key) → statements in date order; quantity keys that name the same
    quantity ("threshold|alert" / "threshold|alert congestion") share a group."""
    groups: dict[tuple, list[Stated]] = defaultdict(list)
    keys: dict[tuple[str, str], list[str]] = defaultdict(list)
    trips: dict[tuple[str, str], tuple[int, str | None]] = {}
    for st in sorted(stated, key=lambda s: (s.fact.get("date") or "", s.fact.get("order", 0))):
        if st.attr not in SINGLE:
            groups[(st.subject, st.attr, st.value.lower())].append(st)
            continue
        key = st.key
        if st.attr == "contact" and st.op == "end" and not key:
            # "X is no longer my contact" ends X wherever X is a contact
            key = next((k for (s2, a2, k) in groups if s2 == st.subject and a2 == "contact"
                        and any(same_words(g.value, st.value) for g in groups[(s2, a2, k)])), key)
        if st.attr == "contact" and key:
            # "my contact at Brookside Lettings" / "Brookside … as my contact": one place
            # named shorter is the same place (the words of one among the other's)
            known = keys[(st.subject, st.attr)]
            words = set(key.split()[1:])
            match = next((k for k in known if words and (set(k.split()[1:]) <= words
                                                         or words <= set(k.split()[1:]))), None)
            if match is None:
                known.append(key)
            key = match or key
        if st.attr == "format" and st.op == "set" and (family := _family(st.value)):
            # "make it docx from now on" after "send me the checklist as a PDF": a format said
            # for the family (keyed "format document") replaces the one standing format of that
            # family, whatever it was said for, and the other way round
            mine = [k for (s2, a2, k), g in groups.items() if s2 == st.subject and a2 == "format" and k != key
                    and g and g[-1].op == "set" and _family(g[-1].value) == family]
            if len(mine) == 1 and (key == f"format {family}" or mine[0] == f"format {family}"):
                groups[(st.subject, st.attr, mine[0])].append(st)
                continue
        if st.attr == "trip" and st.detail == "instead" and st.op == "set":
            # "we're doing Seoul instead": the trip planned last, wherever it was to, goes
            # somewhere else
            planned = [(g[-1].fact.get("date") or "", g[-1].fact.get("order", 0), k)
                       for (s2, a2, k), g in groups.items()
                       if s2 == st.subject and a2 == "trip" and g and g[-1].op == "set" and not k.startswith(key)]
            if planned:
                groups[(st.subject, st.attr, max(planned)[2])].append(st)
                continue
        if st.attr == "trip":
            # a trip to the same place said after the last one's day is another trip
            n, last = trips.get((st.subject, key), (0, None))
            if st.op == "set":
                said = (st.fact.get("date") or "")[:10]
                if last and said > last:
                    n += 1
                trips[(st.subject, key)] = (n, fact_records.day_of_value(st.value, said) or last)
            key = f"{key}#{n}" if n else key
        if st.attr in ("number", "deadline"):
            known = keys[(st.subject, st.attr)]
            hits = [k for k in known if same_key(k, st.key)]
            if len(hits) > 1 and st.key.endswith("|"):
                continue  # "the threshold is 21 percent" with two thresholds known: which one?
            match = hits[0] if hits else None
            if match is None:
                known.append(st.key)
            key = match or st.key
        groups[(st.subject, st.attr, key)].append(st)
    return groups
