"""What relations say of the names they hold: each name's type votes ("works at X" → an
organisation), the names a speaker or a correction ties to something lasting (one mention is
enough for a page), and the names that are only ever a preference's value (a line, no page)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from . import meaning
from . import subjectnames
from . import subjecttypes


def strong_types(facts: list[dict], rel_cache: dict[int, list]) -> tuple[dict[str, Counter], set[str]]:
    """Name → type votes from relations ("works at X" → organization, "my dog X" → pet); and
    the names a speaker states a lasting relation to (employer, manager, home, project, pet,
    friend, contact): those are no passing mention, one is enough for a page."""
    out: dict[str, Counter] = defaultdict(Counter)
    anchored: set[str] = set()
    for f in facts:
        # one goes to, visits or travels to a place
        for m in _TRAVEL_RE.finditer(f["text"]):
            out[m.group(1)]["place"] += 1
    for f in facts:
        rels = rel_cache.get(id(f))
        if rels is None:
            rels = rel_cache[id(f)] = meaning.extract(f["text"], f.get("antecedent", ""), f.get("project", ""))
        for r in rels:
            if r.by_meaning:
                # read by meaning only where the patterns read nothing: it votes no type (its
                # subject must be a person by other evidence, pages.py)
                if not r.subject and r.value_type and r.attr in _ANCHORS:
                    anchored.add(subjectnames.clean_name(r.value) or r.value)
                continue
            # "my head of department is Mr Kunle Ajayi": the name without its title
            value = subjectnames.clean_name(r.value) or r.value if r.value_type else r.value
            if r.value_type and r.value:
                # "she moved from A to Sora City Lab": a move to an organisation is a job
                vt = ("organization" if r.attr == "home" and subjecttypes.head_type(value) == "organization"
                      else r.value_type)
                out[value][vt] += 1
            if r.attr == "species" and r.subject:
                out[r.subject]["pet"] += 1
            if r.attr == "lead" and r.subject:
                out[r.subject]["project"] += 1  # "X leads P": P is a project
            if r.subject and (r.attr in ("employer", "manager") or (
                    r.attr == "role" and _JOB_RE.search(r.value))):
                out[r.subject]["person"] += 1
            if not r.subject and r.value_type and r.attr in _ANCHORS:
                anchored.add(value)
            elif r.subject and r.attr in _OWN_ATTRS and len(r.subject.split()) > 1:
                # "Casimir Ondaatje works at Redfern Glassworks": a person said in full with
                # a job, a title, a manager or a home is someone to remember, named once
                anchored.add(subjectnames.clean_name(r.subject) or r.subject)
    return out, anchored


def preference_values(facts: list[dict], rel_cache: dict[int, list]) -> set[str]:
    """Names every mention of which is the whole value of a speaker's preference ("I always
    have Earl Grey when …", "I've gone off Earl Grey"): what someone likes is a line on
    their page, not a subject of its own. A favourite is not counted (a favourite park or
    café is a subject the speaker cares about), nor a speaker's name."""
    said: Counter = Counter()
    as_value: Counter = Counter()
    speakers = {f["speaker"] for f in facts}
    for f in facts:
        values = {r.value.lower() for r in rel_cache.get(id(f), ())
                  if r.attr == "preference" and not r.subject and not r.key.startswith("favorite ")}
        for n in set(f.get("subjects", {})) | set(f.get("names", [])) | set(f.get("lead", [])):
            said[n] += 1
            as_value[n] += n.lower() in values
    return {n for n, k in as_value.items() if k and k == said[n] and n not in speakers}


_TRAVEL_RE = re.compile(r"\b(?:travel(?:l)?ing to|travel(?:l)?ed to|went to|going to|flew to|flying to|"
                        r"trip to|visited|visiting|back from|moved to|arrived in|based in)\s+"
                        r"((?:[A-Z][\w\-]+)(?:\s+[A-Z][\w\-]+)*)")
#: A job title's last word ("grant manager", "hardware engineer", "audiologist").
_JOB_RE = re.compile(r"(?:er|or|ist|ian|ant|ent|eer|officer|manager|lead|head|chair|nurse|"
                     r"doctor|student|intern|advisor|adviser|organizer|organiser|coordinator)$")
_ANCHORS = frozenset("employer manager home project pet friend contact family".split())
#: a named person's own attributes: one statement of them makes the person worth a page
_OWN_ATTRS = frozenset("employer role manager home".split())


def correction_anchors(texts: list[str]) -> set[str]:
    """The names live corrections anchor: what they state a lasting relation to, and whomever
    they state something of (their email, their project's lead), as a person would."""
    facts = [{"text": t} for t in texts]
    read: dict[int, list] = {}          # each correction read once, here and by strong_types
    _votes, anchored = strong_types(facts, read)
    return anchored | {subjectnames.clean_name(r.subject) or r.subject
                       for f in facts for r in read[id(f)] if r.subject}
