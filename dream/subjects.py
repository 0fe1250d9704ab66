"""Which subjects get a page, under which title, type and aliases.

Input: the facts of every session (each with the names found in its sentence and the
extractor's types) and the speakers. Output: :class:`Subjects`, one entry per page-worthy
subject, and a map from every alias to its page.

Rules, in order (general, not fitted to any corpus's names):

1. **Clean** each name: salutations and titles are stripped ("Dear Amara" → "Amara",
   "Dr. Elena Sokolova" → "Elena Sokolova"); a name that is a speaker *role* ("Assistant",
   "User", "AI"), a file format or unit ("PDF", "SVG", "CSV"), a pronoun, a greeting or a
   common word ("That", "Sure", "Thanks") is no subject.
2. **Merge aliases** into one subject: a single word that is a word of exactly one longer
   name ("Leila" → "Leila Haddad", "Lantern" → "Project Lantern"), an acronym of exactly one
   longer name's initials ("AORC" → "Atlantic Ocean Research Council", "RCN" → "Royal College
   of Nursing"), a shorter name that is the start or end of exactly one longer one; the
   longest (most complete) form is the title.
3. **Type** by evidence, strongest first: a relation that names the value's type ("works at
   X" → organization, "my manager is X" → person, "my dog X" → pet, "moved to X" → place,
   "working on X" → project), head words ("… Hospital", "… Labs" → organization, "Project …"
   → project), speakers (person), then the extractor's majority label.
4. **Enough mentions**: a subject needs ``min_mentions`` turns (default 2) in ``min_sessions``
   sessions (default 1); the user (the human speaker who talks most) always has a page.

This module builds the subjects and counts their mentions (rule 4); rule 1 is
:mod:`.subjectnames`', rule 2 :mod:`.aliasmerge`'s, rule 3 :mod:`.subjecttypes`'; who the
user and the assistant are (a role, a named assistant, the user's name) is
:mod:`.speakernames`'.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from .aliasmerge import merge_map
from .settings import Settings
from .subjectnames import after_connectors, clean_name, inside, is_role, joined_names, names_in
from .subjecttypes import ORG_HEADS, PROJECT_HEADS, cue_types, related_names, type_of
from .text import CONNECTORS, slugify


@dataclass
class Subject:
    """One page-worthy subject."""

    slug: str
    title: str
    type: str
    aliases: list[str] = field(default_factory=list)
    turns: set = field(default_factory=set)       # (session, anchor)
    sessions: set = field(default_factory=set)
    is_user: bool = False


@dataclass
class Subjects:
    """The subjects of a wiki and how names map onto them."""

    by_slug: dict[str, Subject]
    alias_of: dict[str, str]            # name as written → slug
    lower_alias: dict[str, str] = field(default_factory=dict)  # "the atlas" → slug

    def slug_for(self, name: str) -> str | None:
        """The page of ``name`` (an alias, a title, or a cleaned form of either)."""
        s = self.alias_of.get(name)
        if s is None:
            c = clean_name(name)
            s = self.alias_of.get(c) if c else None
        return s

    def slugs_for(self, name: str) -> list[str]:
        """The pages a mention names ("Biscuit and Juno" names two)."""
        s = self.slug_for(name)
        if s:
            return [s]
        return [x for n in names_in(name) if (x := self.alias_of.get(n))]

    def user(self) -> Subject | None:
        return next((s for s in self.by_slug.values() if s.is_user), None)


def _majority(c: Counter | None) -> str | None:
    if not c:
        return None
    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


class _Namer:
    """Names as this corpus writes them: which capitalised words are common words (written
    in lower case at least as often), which names occur mid-sentence somewhere, and the
    clean names a raw mention holds."""

    def __init__(self, facts: list[dict], human: list[str], extra_names: Counter | None,
                 case: dict[str, list[int]] | None) -> None:
        # words the corpus writes in lower case are common words, not names ("Add it to the
        # notes", "Decision for Tactile Transit Maps"): measured, not listed
        self.lower: Counter = Counter()
        self.capital: Counter = Counter()
        if case:
            for w, (lo, up) in case.items():
                self.lower[w] += lo
                self.capital[w] += up
        else:  # an older state without per-session counts: the facts' words
            for f in facts:
                for w in re.findall(r"[A-Za-z][\w'’\-]*", f["text"])[1:]:
                    (self.lower if w[0].islower() else self.capital)[w.lower()] += 1
        # names written mid-sentence somewhere, as they are: what "known elsewhere" means below
        self.joined = joined_names(facts, human)
        self.seen: Counter = Counter(set(human) | set(extra_names or {}))
        for f in facts:
            for raw in list(f.get("subjects", {})) + f.get("names", []):
                self.seen.update(names_in(raw, self.joined))

    def within_joined(self, raw: str, text: str) -> bool:
        """Is ``raw`` a piece of a one-name "A and B" run of ``text`` (spaCy's "Kings" and
        "Queens Academy" in "Kings and Queens Academy")?"""
        return any(inside(raw, j) and j in text for j in self.joined)

    def common(self, w: str) -> bool:
        return self.lower[w.lower()] > 0 and self.lower[w.lower()] >= self.capital[w.lower()]

    def norm(self, raw: str) -> list[str]:
        """The clean names in a raw mention."""
        seen, common = self.seen, self.common
        out = []
        for n in names_in(raw, self.joined):
            if raw in self.joined:
                out.append(n)
                continue
            toks = n.split()
            # "North Sea Tide Atlas the QC": a known name, a connector, more capitals — two runs
            for k in range(1, len(toks) - 1):
                if toks[k].lower() in CONNECTORS and seen[" ".join(toks[:k])] and \
                        toks[k - 1].lower() not in ORG_HEADS:
                    out += self.norm(" ".join(toks[:k])) + self.norm(after_connectors(toks[k:]))
                    toks = []
                    break
            if not toks:
                continue
            # a common word in front of a name is not part of it: "Decision for Tactile
            # Transit Maps", "Use Nagoya" (but "Screen Reader Latency Study" stays whole)
            while len(toks) > 1 and toks[0].lower() not in ORG_HEADS and (
                    (toks[1].lower() in CONNECTORS and (common(toks[0]) or seen[after_connectors(toks[1:])]))
                    or (common(toks[0]) and seen[" ".join(toks[1:])] > seen[" ".join(toks)])):
                toks.pop(0)
                while len(toks) > 1 and toks[0].lower() in CONNECTORS:
                    toks.pop(0)
            n = clean_name(" ".join(toks)) if toks else None
            if n and not (len(toks) == 1 and common(n)):
                out.append(n)
        return out


class _Mentions(NamedTuple):
    """The names each fact mentions, with the extractor's type votes and mention counts."""

    per_fact: dict[int, set[str]]       # id(fact) → clean names
    votes: dict[str, Counter]           # name → extractor type votes
    counts: Counter                     # name → facts mentioning it (+ names seen elsewhere)


class _TypeEvidence(NamedTuple):
    """What :func:`type_of` weighs, strongest first."""

    speakers: set[str]
    strong: dict[str, Counter]
    cues: dict[str, Counter]
    votes: dict[str, Counter]


def build(facts: list[dict], speakers: set[str], settings: Settings,
          strong_types: dict[str, Counter] | None = None, extra_names: Counter | None = None,
          anchored: set[str] | None = None, case: dict[str, list[int]] | None = None,
          exclude: set[str] | None = None, cues: dict[str, Counter] | None = None,
          related: set[str] | None = None) -> Subjects:
    """The wiki's subjects from all facts (see the module docstring).

    ``strong_types``: name → type votes from relations ("works at X" → organization);
    ``extra_names``: names seen outside facts (a speaker's full name); ``anchored``: names a
    speaker has a lasting relation to, which need one mention only; ``case``: word → [times
    written in lower case, times capitalised mid-sentence] over whole sessions; ``exclude``:
    names that are no subject (a named assistant); ``cues``: :func:`sentence_cues` over
    every sentence of the sessions (default: over the facts alone); ``related``: names a
    speaker states a relation to (:func:`related_names`, default: over the facts), which
    need one mention when they are a person or an organisation."""
    human = [s for s in speakers if not is_role(s)]
    namer = _Namer(facts, human, extra_names, case)
    men = _mentions(facts, namer, human, extra_names, exclude or set())
    evidence = _TypeEvidence(speakers, strong_types or {}, cue_types(facts) if cues is None else cues,
                             men.votes)
    placey = {n for n in men.counts if (evidence.strong.get(n) or {}).get("place")
              or (evidence.cues.get(n) or {}).get("place")}
    # a speaker's full name is a person's whatever its head word ("Zoe Park", "Ana Hill")
    people = {n for n in men.counts if (evidence.strong.get(n) or {}).get("person")
              or (evidence.cues.get(n) or {}).get("person")} | set(extra_names or {})
    canon = merge_map(men.counts, {n: _majority(men.votes.get(n)) for n in men.counts}, set(human),
                      placey, people)
    if related is None:
        related = related_names(f["text"] for f in facts)
    by_slug = _pages(facts, canon, _turns(facts, men.per_fact, canon), human, anchored or set(),
                     settings, men.counts, evidence, related)
    alias_of: dict[str, str] = {}
    for slug, s in by_slug.items():
        for n in [s.title, *s.aliases]:
            alias_of.setdefault(n, slug)
    lower_alias = _lower_aliases(by_slug, facts)
    # every way a fact wrote a subject's name leads to its page
    for f in facts:
        for raw in list(f.get("subjects", {})) + f.get("names", []) + f.get("lead", []):
            if raw not in alias_of:
                hits = {alias_of[canon[n]] for n in namer.norm(raw) if n in canon and canon[n] in alias_of}
                if len(hits) == 1:
                    alias_of[raw] = hits.pop()
    # speakers are known by their name even when it was never extracted as an entity
    return Subjects(by_slug, alias_of, lower_alias)


def _mentions(facts: list[dict], namer: _Namer, human: list[str], extra_names: Counter | None,
              exclude: set[str]) -> _Mentions:
    """Every fact's names (subjects and mid-sentence names; a sentence opener only when the
    corpus knows it from elsewhere), with type votes and counts."""
    counts: Counter = Counter(extra_names or {})
    votes: dict[str, Counter] = defaultdict(Counter)
    per_fact: dict[int, set[str]] = {}
    for f in facts:
        found: set[str] = set()
        for raw, typ in list(f.get("subjects", {}).items()) + [(n, "") for n in f.get("names", [])]:
            if namer.within_joined(raw, f["text"]):
                continue
            for n in namer.norm(raw):
                if n in exclude:
                    continue
                found.add(n)
                if typ and typ != "entity":
                    votes[n][typ] += 1
        per_fact[id(f)] = found
    known = {n for ns in per_fact.values() for n in ns} | set(human) | set(extra_names or {})
    for f in facts:
        # a sentence opener counts only as a name the corpus knows from elsewhere
        per_fact[id(f)] |= {n for raw in f.get("lead", []) if not namer.within_joined(raw, f["text"])
                            for n in namer.norm(raw) if n in known and n not in exclude}
        counts.update(per_fact[id(f)])
    for s in human:
        counts[s] += 1
    return _Mentions(per_fact, votes, counts)


def _turns(facts: list[dict], per_fact: dict[int, set[str]], canon: dict[str, str]) -> dict[str, set]:
    """Canonical name → the (session, anchor) turns that mention it."""
    turns: dict[str, set] = defaultdict(set)
    for f in facts:
        for n in per_fact[id(f)]:
            turns[canon[n]].add((f["session"], f["anchor"]))
        # the speaker's own first-person statements are about them
        if f.get("about_speaker") and f["speaker"] in canon:
            turns[canon[f["speaker"]]].add((f["session"], f["anchor"]))
    return turns


def _pages(facts: list[dict], canon: dict[str, str], turns: dict[str, set], human: list[str],
           anchored: set[str], settings: Settings, counts: Counter,
           evidence: _TypeEvidence, related: set[str] = frozenset()) -> dict[str, Subject]:
    """slug → subject, for every canonical name with enough mentions (the user always)."""
    # the user: the human speaker with the most turns
    spoken = Counter(f["speaker"] for f in facts if f["speaker"] in human)
    # one person talking whose turns state nothing the patterns read is still the user (a
    # correction may say what is true of them: "The soil moisture threshold is 35%")
    user = spoken.most_common(1)[0][0] if spoken else (human[0] if len(human) == 1 else None)
    min_m = settings.min_mentions
    min_s = settings.min_sessions
    by_slug: dict[str, Subject] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for n, c in canon.items():
        groups[c].append(n)
    for c, members in sorted(groups.items()):
        ts = turns.get(c, set())
        sess = {s for s, _a in ts}
        is_user = user is not None and (c == user or canon.get(user) == c or (
            user not in canon and not spoken and c.split()[0] == user))
        typ = type_of(c, members, evidence.votes, evidence.strong, evidence.speakers, evidence.cues)
        # a person or organisation the speaker works with, met, partners with: one mention
        once = any(m in anchored for m in members) or (
            typ in ("person", "organization") and any(m in related for m in members))
        need_m, need_s = (1, 1) if once else (min_m, min_s)
        if not is_user and (len(ts) < need_m or len(sess) < need_s):
            continue
        slug = slugify(c)
        if slug == "index":
            slug = "index-subject"
        if slug in by_slug:  # two names with one slug ("Sora-City" / "Sora City"): keep the bigger
            if len(by_slug[slug].turns) >= len(ts):
                continue
        aliases = sorted({m for m in members if m != c}, key=lambda m: (-counts[m], m))
        by_slug[slug] = Subject(slug, c, typ, aliases, ts, sess, is_user)
    return by_slug


def _lower_aliases(by_slug: dict[str, Subject], facts: list[dict]) -> dict[str, str]:
    """"the atlas" for "Baltic Surge Atlas": a project's head noun with "the", when one
    project has that head (said in lower case, so no extractor sees it); the turns that
    say it join the subject's."""
    heads: dict[str, list[str]] = defaultdict(list)
    for slug, sub in by_slug.items():
        toks = sub.title.lower().split()
        if sub.type == "project" and len(toks) > 1 and toks[-1] in PROJECT_HEADS | {"map", "maps"}:
            heads[toks[-1]].append(slug)
    lower_alias = {f"the {h}": ss[0] for h, ss in heads.items() if len(ss) == 1}
    for phrase, slug in lower_alias.items():
        rx = re.compile(rf"\b{phrase}\b")
        hit = False
        for f in facts:
            if rx.search(f["text"]):
                by_slug[slug].turns.add((f["session"], f["anchor"]))
                by_slug[slug].sessions.add(f["session"])
                hit = True
        if hit and phrase not in by_slug[slug].aliases:
            by_slug[slug].aliases.append(phrase)
    return {p: s for p, s in lower_alias.items() if p in by_slug[s].aliases}


def fact_slugs(f: dict, subs: "Subjects") -> set[str]:
    """The pages a fact belongs to: the subjects it names, and its speaker's when it is about them."""
    out = set()
    for n in list(f.get("subjects", {})) + list(f.get("names", [])) + list(f.get("lead", [])):
        out.update(subs.slugs_for(n))
    for phrase, slug in subs.lower_alias.items():
        if phrase in f["text"]:
            out.add(slug)
    if f.get("about_speaker") and not is_role(f["speaker"]):
        s = subs.slug_for(f["speaker"])
        if s:
            out.add(s)
    return out
