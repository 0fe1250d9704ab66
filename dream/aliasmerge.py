"""Aliases merged into one subject (rule 2 of :mod:`.subjects`): a single word that is a
distinctive word of exactly one longer name, an acronym of one longer name's initials, the
start or end of one longer name, the first part of a compound word, the start of a speaker's
name; unless the names' types keep them apart. :func:`merge_map` gives every name its
canonical (most complete) form."""

from __future__ import annotations

from collections import Counter

from .patternwords import PARTICLES
from .subjecttypes import EVENT_HEADS, ORG_HEADS, PLACE_HEADS, PROJECT_HEADS, head_type
from .text import CONNECTORS


def _initials(name: str, connectors: bool = False) -> str:
    return "".join(w[0] for w in name.split()
                   if (connectors or w.lower() not in CONNECTORS) and w[0].isalpha()).upper()


def _kind_allows(n: str, m: str, kinds: dict[str, str | None], placey: set[str]) -> bool:
    """May the one word ``n`` stand for the longer name ``m``, by their types? Not when the
    extractor types them apart ("Kyoto" is a place, not "Kyoto University"), except that the
    small model calls an unknown one-word name a person or a city where the longer name's
    head word says what it is ("Greenfield" → "Greenfield College of Science", "Ridgeline" →
    "Ridgeline Timber Co."), unless the corpus speaks of the word as a place ``placey``."""
    kn, hm = kinds.get(n), head_type(m)
    if kn in (None, kinds.get(m) or kn) or kn == (hm or kn):
        return True
    return hm in ("organization", "project") and n not in placey and (
        kn == "person" or m.split()[-1].lower() in _LEGAL_SUFFIXES)


def _place_in_place(n: str, m: str, kinds: dict[str, str | None], placey: set[str],
                    people: set[str]) -> bool:
    """Is the one word ``n`` a place and ``m`` a longer name that starts or ends with it
    with no head word to say what it is ("Sapporo" and "Sapporo Chikagai", a mall in it)?
    A city and a site in it are two subjects: a statement about the city ("I moved to
    Sapporo") must not land on the site's page. A person's name is the exception ("Paris"
    may stand for "Paris Okafor" when the extractor, a relation or a cue makes the longer
    name a person, ``people``)."""
    # the corpus must speak of it as a place ("moved to X", "the workshop in X"): the small
    # model calls many a first name a city
    if n not in placey:
        return False
    low = [t.lower() for t in m.split()]
    heads = ORG_HEADS | PROJECT_HEADS | PLACE_HEADS | _LEGAL_SUFFIXES | {"operation", "programme", "program"}
    if any(t in heads or t in CONNECTORS for t in low):
        return False  # a head word says what it is ("Ridgeline Timber Co."): see _distinctive
    return kinds.get(m) != "person" and m not in people


def _first_name_of(n: str, m: str, kinds: dict[str, str | None], people: set[str]) -> bool:
    """Is the person ``n`` the first name of ``m``, known as a person's full name whatever its
    head word says ("Zoe" for the speaker's "Zoe Park", "Ana" for "Ana Hill")?"""
    toks = m.split()
    # a surname may hold lower-case particles ("Ilse de Vries")
    return (kinds.get(n) == "person" or n in people) and m in people and toks[0] == n \
        and (len(toks) == 2 or (len(toks) <= 4 and all(t in PARTICLES for t in toks[1:-1])))


def merge_map(counts: Counter, kinds: dict[str, str | None] | None = None,
              speakers: set[str] | frozenset[str] = frozenset(),
              placey: set[str] | frozenset[str] = frozenset(),
              people: set[str] | frozenset[str] = frozenset()) -> dict[str, str]:
    """Alias → canonical name for every name in ``counts`` (name → mentions). ``kinds``: the
    extractor's majority type per name; a word typed as a place is not merged into an
    organisation or a person ("Kyoto" is not "Kyoto University"); ``placey``: names a
    relation or a cue makes a place (see :func:`_kind_allows`); ``people``: names a relation
    or a cue makes a person."""
    kinds = kinds or {}
    placey = set(placey)
    people = set(people) | set(speakers)
    names = sorted(counts, key=lambda n: (-len(n.split()), -counts[n], n))
    canon: dict[str, str] = {}
    multi = [n for n in names if len(n.split()) > 1]
    for n in names:
        if n in canon:
            continue
        toks = n.split()
        targets: list[str] = []
        if len(toks) == 1 and n.isupper() and 2 <= len(n) <= 6:
            # "AORC" (connectors left out) or "FODP" for Friends of Duthie Park (kept in)
            targets = [m for m in multi if n in (_initials(m), _initials(m, True))]
        if not targets:
            low = [t.lower() for t in toks]
            for m in multi:
                if m == n or len(m.split()) <= len(toks):
                    continue
                ml = [t.lower() for t in m.split()]
                if len(toks) > 1 and (ml[:len(low)] == low or ml[-len(low):] == low):
                    targets.append(m)  # "St Aldric" → "St Aldric Hospital"
                elif len(toks) == 1 and ((low[0] in _distinctive(m) and _kind_allows(n, m, kinds, placey))
                                         or _first_name_of(n, m, kinds, people)) \
                        and not _place_in_place(n, m, kinds, placey, people):
                    targets.append(m)
        if not targets and len(toks) == 1:
            # "Atlas" or "ATLAS" for "Atlas.ti", "NASA" for "NASA-TLX": the first part of one compound
            # word, cut off at its full stop or hyphen, is that name, not a second subject
            # (unless it is also mentioned more often than the compound on its own)
            targets = [m for m in names if len(m.split()) == 1 and len(m) > len(n) + 1
                       and m[len(n)] in ".-" and m[:len(n)].lower() == n.lower()
                       and counts[m] >= counts[n]
                       and m[len(n) + 1:].replace("-", "").replace(".", "").isalnum()]
        if not targets and len(toks) == 1 and len(n) >= 2 and not n.isupper():
            # "Mel" for the speaker "Melanie", "Jo" for "Joanna": the start of one speaker's name
            targets = [m for m in speakers if m != n and m.startswith(n) and " " not in m]
        # the most complete form each target itself merges into
        roots = {canon.get(t, t) for t in targets}
        if len(roots) == 1:
            canon[n] = roots.pop()
        else:
            canon[n] = n
    # follow chains
    for n in list(canon):
        seen = {n}
        while canon[canon[n]] != canon[n] and canon[n] not in seen:
            seen.add(canon[n])
            canon[n] = canon[canon[n]]
    return canon


def _distinctive(name: str) -> set[str]:
    """The words of ``name`` that can stand for it alone: a person-like name's first or last
    word ("Leila" for "Leila Haddad"); a project's or organisation's name without its head
    words when one word is left ("Lantern" for "Project Lantern", "Tidewater" for "Tidewater
    Forecast"). Never a word of a longer place or organisation ("Kyoto" is not "Kyoto
    Animal Shelter")."""
    toks = name.split()
    low = [t.lower() for t in toks]
    if "of" in low[1:-1]:
        # "University of Ibadan": what follows "of" is what it is of (a place, a field),
        # never its short name; "Greenfield College of Science" → "Greenfield"
        k = low.index("of")
        toks, low = toks[:k], low[:k]
    if low[-1] in PLACE_HEADS or low[-1] in EVENT_HEADS:
        return set()  # "Kyoto Station" is not "Kyoto", "Okayama Marathon" not "Okayama"
    heads = ORG_HEADS | PROJECT_HEADS | {"operation", "programme", "program"}
    rest = [t for t in low if t not in heads and t not in CONNECTORS]
    if len(rest) < len(low):
        if len(rest) == 1:
            return set(rest)
        if rest and low[-1] in _LEGAL_SUFFIXES and toks[0][:1].isupper():
            return {rest[0]}  # "Ridgeline" for "Ridgeline Timber Co."
        return set()
    if 2 <= len(toks) <= 3 and all(t[:1].isupper() and t.replace("-", "").isalpha() for t in toks):
        return {low[0], low[-1]}
    return set()


#: A company's legal form at the end of its name: its first word can stand for it.
_LEGAL_SUFFIXES = frozenset("co co. inc inc. ltd ltd. llc llp plc gmbh ag sa corp corp.".split())
