"""What each page says: current attributes and relations, a dated timeline, what was replaced.

From the facts of every session and the wiki's :class:`~.subjects.Subjects`:

* **Relations** (:mod:`.relations`) are grouped by (subject, attribute[, quantity key]) and
  played in date order: a ``set`` with another value replaces the current one, an ``end``
  ("I left X") closes it, a correction card that names the old value ("…, not X") closes it
  too. The value standing at the end is current — one line under the page's opening, in the
  wiki's words, dated and cited ("Ines Okafor's manager is Leila Haddad (since 2 April
  2026) [cite:3]"); each replaced value goes to ``## Superseded`` with when it held and what
  replaced it, cited to both statements. A relation line is on the subject's page and on the
  value's page when the value is a subject too.
* **Timeline**: every other fact about the subject, as a third-person sentence (``prose``),
  dated by the resolved relative date when the sentence has one, else by the session date.
  At most ``max_timeline`` entries: the least informative (lowest extraction score) are cut
  first; current lines are never cut.
* Facts the contradiction check or a correction supersedes go to ``## Superseded`` as well.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from . import facts as fact_records
from . import reach
from . import meaning
from . import relations
from . import retelling
from . import tastes
from .grouping import SINGLE, Stated, group_statements, same_words
from .prose import a_or_an, human_day, third_person
from .quantities import NUMBER, UNIT
from .relationrecord import SELF, Relation
from .settings import Settings
from .subjectnames import FORMATS, is_role
from .subjects import Subjects, fact_slugs
from .subjecttypes import head_type
from .synth import Claim
from .text import content_words, parse_day, words

@dataclass
class PageModel:
    now: list[Claim] = field(default_factory=list)
    timeline: list[Claim] = field(default_factory=list)
    superseded: list[Claim] = field(default_factory=list)
    gist: str = ""
    score: float = 0.0
    replaced_facts: list = field(default_factory=list)  # statements of values since replaced


ref_of = fact_records.ref_of


def fact_date(f: dict) -> str | None:
    """The day a fact happened: its resolved relative date when it is one day, else the session's."""
    for _expr, res in f.get("when") or []:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", res or ""):
            return res
    return f.get("date")


def _phrase(key: str) -> str:
    head, _, mods = key.partition("|")
    return " ".join(x for x in (mods, head) if x).strip()


def statements(facts: list[dict], subs: Subjects, rel_cache: dict[int, list]) -> list[Stated]:
    """Every relation statement of ``facts`` whose subject has a page."""
    out: list[Stated] = []
    shared = _shared_first_names(facts)
    turns: dict[tuple, list[dict]] = defaultdict(list)
    for f in facts:
        if f.get("session"):
            turns[(f["session"], f.get("anchor"))].append(f)
    for f in facts:
        rels = rel_cache.get(id(f))
        if rels is None:
            rels = rel_cache[id(f)] = meaning.extract(f["text"], f.get("antecedent", ""), f.get("project", ""))
        neg = tuple(reach.negated_values(f["text"]))
        for r in rels:
            if r.subject:
                if r.subject in shared:
                    continue  # "Mei works at X" with Mei Lin and Mei Tanaka about: whose job?
                subj = subs.slug_for(r.subject)
                if subj and _first_name_only(r.subject, subs.by_slug[subj]):
                    continue
                if subj and r.by_meaning and subs.by_slug[subj].type != "person":
                    continue  # "Signbridge goes with X": a job or a home is a person's
                if subj and r.inferred and subs.by_slug[subj].type != "person":
                    # a "she" read as the last name before it, which names no person here
                    # ("Sanne de Vries left Ortelius Maps. She's with …"): the last person
                    # the turn names before the pronoun, if any
                    subj = _person_before(f, turns, subs)
                    if not subj:
                        continue
            else:
                if is_role(f["speaker"]):
                    continue
                subj = subs.slug_for(f["speaker"])
            if not subj:
                continue
            if r.value == SELF:
                # "I'm the lead on P now": the speaker, by the name of their page
                if is_role(f["speaker"]) or not subs.slug_for(f["speaker"]):
                    continue
                r = Relation(r.subject, r.attr, subs.by_slug[subs.slug_for(f["speaker"])].title,
                             r.op, r.key, r.event, r.value_type, r.detail, r.phrase)
            if r.attr == "home" and _organization(r.value, subs):
                # "I moved to Tessellate Labs" is a job, not a home
                r = Relation(r.subject, "employer", r.value, r.op, r.key, r.event, "organization")
            vslug = (subs.slug_for(r.value) if (r.value_type or r.attr in ("friend", "contact") or r.detail == "move")
                     and r.value not in shared else None)  # "Emi" with two Emis: as said
            value = subs.by_slug[vslug].title if vslug else r.value
            if vslug == subj:
                continue
            if r.attr == "employer" and r.detail in ("with", "move") and not _organization(r.value, subs) and \
                    (r.detail == "move" or (f.get("subjects") or {}).get(r.value) != "organization"):
                # "She's with Tom Hansen now": whom one is with is no employer; "she's gone
                # to Lisbon": where one went is none either (by its head word or page type,
                # not the extractor's label alone, which calls "York" an organisation)
                continue
            out.append(Stated(subj, r.attr, r.key, value, vslug, r.op, f, r.detail,
                              r.phrase or _phrase(r.key), neg, r.event))
    return out


def _person_before(f: dict, turns: dict[tuple, list[dict]], subs: Subjects) -> str | None:
    """The page of the last person (by page type, not the speaker) that ``f``'s turn names
    before ``f``'s pronoun: in ``f`` before it, else in the turn's earlier sentences."""
    at = relations.needs_antecedent(f["text"])
    before = [(f["text"][:at if at is not None else len(f["text"])], f)] + [
        (g["text"], g) for g in sorted(turns.get((f.get("session"), f.get("anchor")), []),
                                       key=lambda g: -g.get("order", 0))
        if g.get("order", 0) < f.get("order", 0)]
    me = subs.slug_for(f["speaker"])
    for text, g in before:
        best, pos = None, -1
        for n in list(g.get("subjects") or {}) + list(g.get("names") or []) + list(g.get("lead") or []):
            slug = subs.slug_for(n)
            k = text.rfind(n)
            if slug and slug != me and k > pos and subs.by_slug[slug].type == "person":
                best, pos = slug, k
        if best:
            return best
    return None


def _organization(name: str, subs: Subjects) -> bool:
    """Is ``name``, where someone moved to, an organisation rather than a place: by its head
    word ("Tessellate Labs", "Fernhill Networks") or by its page's type (the named-entity
    extractor's word alone is not enough: the small model calls "York" an organisation)?"""
    if head_type(name) == "organization":
        return True
    slug = subs.slug_for(name)
    if bool(slug) and subs.by_slug[slug].type == "organization":
        return True
    # a trade the name carries that no head word lists ("Fennick Wholesale"), read by meaning
    # (a one-word name is most often a place: "Kreuzberg" is no firm)
    return head_type(name) is None and len(name.split()) > 1 and meaning.kind_of_name(name) == "organization"


def _shared_first_names(facts: list[dict]) -> set[str]:
    """One-word names that start two or more longer person-like names of the corpus ("Mei"
    with "Mei Lin" and "Mei Tanaka"): a statement whose subject is only that word names
    nobody for sure, so it states nothing and supersedes nothing."""
    longer: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        for n in list(f.get("names", [])) + list(f.get("subjects", {})):
            toks = n.split()
            if len(toks) >= 2 and toks[0][:1].isupper() and head_type(n) is None:
                longer[toks[0]].add(n)
    return {w for w, ns in longer.items() if len(ns) >= 2}


def _first_name_only(name: str, sub) -> bool:
    """A person called by one word of a longer name ("Camila" for Camila Ito): the sessions
    may mean another Camila the assistant named in full (its turns state no facts), so such
    a statement sets and replaces no attribute of the person (it stays on the timeline)."""
    return (sub.type == "person" and len(name.split()) == 1
            and len(sub.title.split()) > 1 and not sub.is_user)


def formatted_things(key: str) -> str:
    """What a format is for, in the plural, from its key: "format of figure" → "figures",
    "format document" (a family, :mod:`.formats`) → "documents", "format slides" → "slides"."""
    if key.startswith("format of "):
        return key[len("format of "):] + "s"
    thing = key[len("format "):] if key.startswith("format ") else key
    return thing if thing.endswith("s") else thing + "s"


def now_text(st: Stated, title: str) -> str:
    v, a = st.value, st.attr
    return {
        "employer": f"{title} works at {v}",
        "role": f"{title} is {a_or_an(v)} {v}",
        "manager": f"{title}'s manager is {v}",
        "project": f"{title} works on {v}",
        "home": f"{title} lives in {v}",
        "pet": f"{v} is {title}'s {st.detail or 'pet'}",
        "friend": f"{v} is {title}'s friend",
        "family": f"{v} is {title}'s {st.detail or 'relative'}",
        "contact": f"{v} is {title}'s {_contact(st.key)}contact",
        "lead": f"{v} leads {title}",
        "trip": f"{title} is going to {v}",
        "species": f"{title} is {a_or_an(v)} {v}",
        "preference": (f"{title}'s {st.key} is {v}" if st.key.startswith("favorite ")
                       else f"{title} prefers {v}"),
        "format": f"{title} wants {formatted_things(st.key)} as {v}",
        "number": f"The {st.phrase} is {v}",
        "deadline": f"The {st.phrase} is {v}",
    }.get(a, f"{title}: {a} {v}")


def _past_text(st: Stated, title: str) -> str:
    v, a = st.value, st.attr
    return {
        "employer": f"{title} worked at {v}",
        "role": f"{title} was {a_or_an(v)} {v}",
        "manager": f"{title}'s manager was {v}",
        "project": f"{title} worked on {v}",
        "home": f"{title} lived in {v}",
        "contact": f"{v} was {title}'s {_contact(st.key)}contact",
        "lead": f"{v} led {title}",
        "trip": f"{title} was going to {v}",
        "species": f"{title} was {a_or_an(v)} {v}",
        "preference": (f"{title}'s {st.key} was {v}" if st.key.startswith("favorite ")
                       else f"{title} preferred {v}"),
        "format": f"{title} wanted {formatted_things(st.key)} as {v}",
        "number": f"The {st.phrase} was {v}",
        "deadline": f"The {st.phrase} was {v}",
        "pet": f"{v} was {title}'s {st.detail or 'pet'}",
        "friend": f"{v} was {title}'s friend",
        "family": f"{v} was {title}'s {st.detail or 'relative'}",
    }.get(a, f"{title}: {a} was {v}")


def _contact(key: str) -> str:
    """What a contact is for, from its key ("contact council" → "council "), or ''."""
    return key[len("contact "):] + " " if key.startswith("contact ") else ""


def _mentions(neg: tuple[str, ...], value: str) -> bool:
    """Does a "not X" name ``value``: the same words, or the same number ("not 40" / "40 cm")?"""
    vw = words(value)
    # two phone numbers ("07700 900123" / "07700 900456") are told apart by all their digits
    # (:func:`.facts.same_phone`), not by the first number as a quantity is
    return any(same_words(n, value) or (words(n) and vw and words(n)[0] == vw[0] and vw[0][:1].isdigit()
                                        and (max(len(re.sub(r"\D", "", v)) for v in (n, value)) < 7
                                             or fact_records.same_phone(n, value)))
               for n in neg)


@dataclass
class Outcome:
    """How one group of statements ends: the current statement (or None) and the replaced ones
    with what replaced them."""

    current: Stated | None
    since: Stated | None
    replaced: list[tuple[Stated, Stated, Stated]]   # (old, first statement of it, replacement)


def play(group: list[Stated]) -> Outcome:
    """Replay one (subject, attribute) group in order (see the module docstring and
    :func:`.facts.stays`, the one replay the records and every view come from)."""
    got = fact_records.stays(group)
    cur = got[-1] if got and got[-1].ended_by is None else None
    return Outcome(cur.last if cur else None, cur.first if cur else None,
                   [(s.last, s.first, s.ended_by) for s in got if s.ended_by is not None])


def _cite_claim(text: str, f: dict, section: str, extra: str = "", extra_f: dict | None = None) -> Claim:
    return Claim(text, ref_of(f), f.get("date"), section, extra=extra,
                 extra_source=ref_of(extra_f) if extra_f else None)


def build_models(facts: list[dict], subs: Subjects, settings: Settings, cards: list[dict],
                 superseded_facts: dict[tuple[int, str], str], rel_cache: dict[int, list],
                 asides: Sequence[dict] = ()
                 ) -> tuple[dict[str, PageModel], int, dict[tuple, list[Stated]], fact_records.FactLedger]:
    """Per page slug, its current lines, timeline and superseded lines; how many values
    were replaced; the statement groups (for cards.py); and the fact records, which the
    current and superseded lines are rendered from. ``cards``: live correction
    cards as pseudo-facts (``text``, ``ref``, ``date``, ``speaker``); ``superseded_facts``:
    (id(fact), slug) → (why, citing source), for facts the contradiction and correction
    checks retired (they leave the timeline); ``asides``: requests that say a value changed
    in passing (:func:`.retelling.later_statement` reads them, nothing else does)."""
    models: dict[str, PageModel] = defaultdict(PageModel)
    newest = max((f.get("date") or "" for f in facts), default="")
    stale_days = settings.stale_after_days
    groups = group_statements(statements(facts + cards, subs, rel_cache))
    # a card's "not X" closes a current value X of the same kind
    card_negs = [(c, reach.negated_values(c["text"])) for c in cards]
    used: set[tuple] = set()        # (fact, page) shown as a relation line, not repeated in its timeline
    n_replaced = 0
    ledger = fact_records.FactLedger()
    later = retelling.Later(facts + cards + list(asides), subs)
    for (subj, attr, key), group in sorted(groups.items()):
        _apply_cards(group, card_negs, subj, attr, key, subs)
        _said_before(group, facts, subj, attr, key, subs)
        retelling.later_statement(group, later, subj, attr, key, lambda name: _organization(name, subs))
        if attr in ("role", "employer"):
            _kept_alongside(group)
        title = subs.by_slug[subj].title
        got = fact_records.stays(group, key if attr in SINGLE else "")
        ledger.add((subj, attr, key), got,
                   fact_records.records_for_group(got, subj, lambda st, t=title: now_text(st, t), group))
        for st in group:
            # a taste's sentence says more than the taste ("I love hiking in Kyoto"): it stays
            # on the timeline beside the current line, so the wiki loses no word of it
            if not st.event and not (attr == "preference" and tastes.is_taste(st.value, key)):
                used.update({(id(st.fact), subj), (id(st.fact), st.value_slug)})
        n_replaced += _superseded_lines(models, got, subj, title, subs)
        if got and got[-1].ended_by is None:
            _current_line(models, got[-1], subj, attr, title, subs, newest, stale_days)
    cap = settings.timeline_cap
    _timelines(models, facts, subs, superseded_facts, used, cap)
    for m in models.values():
        m.now.sort(key=lambda c: _ORDER.get(c.group or "", 99))
        m.now = _unique(m.now)
        m.superseded = _unique(m.superseded)
    return dict(models), n_replaced, groups, ledger


def _apply_cards(group: list[Stated], card_negs: list[tuple[dict, list[str]]], subj: str, attr: str,
                 key: str, subs: Subjects) -> None:
    """A correction card that says "not X" of the group's current value X replaces it with
    the card's new value ("SVG, not PDF"), or ends it: appended to ``group``."""
    for c, negs in card_negs:
        cur = play(group).current
        if cur is None or c in [g.fact for g in group]:
            continue
        shared = set(content_words(c["text"])) & (set(content_words(cur.fact["text"]))
                                                      - set(content_words(cur.value)))
        if _mentions(tuple(negs), cur.value) and (shared or attr == "format"
                                                  or cur.value.lower() in FORMATS):
            # "SVG, not PDF": the new value of the same kind replaces the old one
            new = next((n for n, o in reach.pairs(c["text"]) if n and same_words(o, cur.value)), None)
            if new:
                group.append(Stated(subj, attr, key, new, subs.slug_for(new), "set", c,
                                    cur.detail, cur.phrase))
            else:
                group.append(Stated(subj, attr, key, cur.value, cur.value_slug, "end", c))


def _said_before(group: list[Stated], facts: list[dict], subj: str, attr: str, key: str,
                 subs: Subjects) -> None:
    """A correction "X works at B, not A" names the value it replaces: when no statement
    of the group says A, the last earlier turn that names both the subject and A is where
    the memory learned it ("Hedda Lindqvist, who is doing our pension review, works at
    Wexmoor Mutual" — words no pattern reads), and becomes the first statement A, which the
    correction then closes. Nothing is added when no turn names both."""
    for st in list(group):
        if st.op != "set" or not (fact_records._is_correction(st) or st.attr in _NAMES_REPLACED):
            continue
        corrects = fact_records._is_correction(st)
        was = reach.was_values(st.fact["text"]) if corrects else []
        for new, old in reach.pairs(st.fact["text"]) + _instead_of(st.fact["text"]) + [(None, w) for w in was]:
            # the word before "not" is the new value or its last word ("an occupational
            # therapist, not a physiotherapist")
            fits = new is None or same_words(new, st.value) or st.value.lower().endswith(" " + new.lower()) or (
                attr == "trip" and st.value.lower().startswith(new.lower() + " "))  # "Mauritius in August"
            if not old or not fits or same_words(old, st.value):
                continue
            if old[:1].islower():
                # a title in lower case is as many words as the new one ("a charge nurse, not
                # a staff nurse"): the words after "not"
                k = len(st.value.split())
                m = re.search(rf"\bnot\s+(?:an?\s+|the\s+)?({re.escape(old)}(?:\s+[\w\-]+){{0,{k - 1}}})",
                              st.fact["text"])
                old = m.group(1) if m else old
            if any(_mentions((old,), g.value) or re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", g.value, re.I)
                   for g in group if g.op == "set"):
                continue
            rx = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])", re.I)
            day = st.fact.get("date") or ""
            # an earlier turn, not the statement's own ("the threshold is 21 percent, not
            # 40" says no value was ever 40)
            here = (st.fact.get("session"), st.fact.get("anchor"))
            # a correction may find the subject named in another sentence of the turn that
            # said the old value ("… dev on Saffron Ledger. Rukhsana Begum leads it")
            said = [f for f in facts if f.get("session") and (f.get("date") or "") <= day
                    and (f["session"], f.get("anchor")) != here and (f.get("date"), f.get("order", 0))
                    <= (st.fact.get("date"), st.fact.get("order", 0))
                    and rx.search(f["text"])
                    and (_names_subject(f, subj, st, subs)
                         or corrects and _turn_names_subject(f, facts, subj, st, subs))
                    and _speaks_of(attr, f["text"])]
            if not said:
                if corrects and (old in was or reach.ends_clause(st.fact["text"], old)) and _plain_value(old, attr) \
                        and (old in was or _CHANGED.search(st.fact["text"])
                             or not any(rx.search(f["text"]) for f in facts if f.get("session"))):
                    # no turn the memory kept says it (a request, a question: "write me a
                    # signature: …, ydemir@anadolumail.net"), yet the correction says what
                    # stood before: a value of unknown start, closed by the correction. Only
                    # when it says a change ("is now X, not Y") or the memory never heard of Y:
                    # "Edgar works at Kestle, not Lumenor" after "Tiago works at Lumenor" puts
                    # right a mix-up, it does not say Edgar was ever at Lumenor
                    group.insert(group.index(st), Stated(subj, attr, key, old, subs.slug_for(old), "set",
                                                         {**st.fact, "date": None},
                                                         st.detail, st.phrase))
                    break
                continue
            f = max(said, key=lambda f: (f.get("date") or "", f.get("order", 0)))
            m = rx.search(f["text"])
            value = _whole_name(f["text"], m, subs) if old[:1].isupper() and " " not in old else (
                m.group(0) if old[:1].isupper() or not m.group(0)[:1].isupper() else old)
            if value is None:
                continue
            group.insert(group.index(st), Stated(subj, attr, key, value, subs.slug_for(value), "set",
                                                 f, st.detail, st.phrase))
            break


#: Attributes whose new value, said in the chat with the one it replaces ("I sit under Kwame
#: Oduya instead of Bettina Ruhl", "the budget is 18k now, not 22k"), closes that one as a
#: correction does. A taste is left out: "tea, not coffee" says what one likes, not that it
#: changed.
_NAMES_REPLACED = frozenset("employer role manager home contact lead number deadline trip format".split())
_INSTEAD_RE = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing)\s+(?:the\s+|a\s+|an\s+)?"
                         r"(?P<old>" + NUMBER + UNIT
                         + r"|[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*)")


#: A correction that says the value changed, not only that the memory had it wrong.
_CHANGED = re.compile(r"\b(?:now|any\s*more|no\s+longer|since|these\s+days|from\s+now\s+on|going\s+forward)\b", re.I)


def _plain_value(old: str, attr: str) -> bool:
    """Can ``old``, which a correction says stood before, stand alone as the value ``attr``
    had? A name, a number, an address does, and any value of a setting; a lower-case title
    ("not a staff nurse") needs the turn that said it."""
    return bool(old) and (old[:1].isupper() or old[:1].isdigit() or old[:1] in "+£$€" or "@" in old
                          or attr in ("format", "preference", "number", "deadline", "trip", "contact"))


def _whole_name(text: str, m: re.Match[str], subs: Subjects) -> str | None:
    """The name a first name found at ``m`` starts, as ``text`` writes it: the capitalised
    words after it ("Hana Kuroda-Bell"); in a text written in lower case, the words after it
    only when the name they make is a known subject ("hana yesterday" is no name). None when
    the name cannot be told (a first name alone, in lower case, with no page to say whose)."""
    rest = text[m.end():]
    if m.group(0)[:1].isupper():
        more = re.match(r"(?:\s+[A-Z][\w'’\-]*)*", rest).group(0)
        return (m.group(0) + more).strip()
    words = re.match(r"(?:\s+[a-z][\w'’\-]*){0,2}", rest).group(0).split()
    for n in range(len(words), -1, -1):
        name = " ".join("-".join(p[:1].upper() + p[1:] for p in w.split("-")) for w in [m.group(0), *words[:n]])
        if n and subs.slug_for(name):
            return subs.by_slug[subs.slug_for(name)].title
    return None


#: What a turn says when it states an attribute: the value found in a turn that says none of
#: these ("had lunch with people from Lumenor", "flew to York for a conference") was not
#: that attribute's value.
_ATTR_CUES = {
    "employer": r"work|job|employ|joined|hired|staff|company|firm|contract|started\s+at|colleague|team",
    "role": r"\b(?:is|was|am|'m|’m|as)\s+(?:an?|the)\b|title|role|job|position|promot",
    "manager": r"manager|boss|report|supervis|line\s+manage|under",
    "home": r"live|living|lives|lived|based|home|moved|house|flat|apartment|relocat|from",
    "contact": r"contact|point\s+of|liaison|account\s+manager|rep\b|e-?mail|\bmail|address|number|\bnr\b|phone|"
               r"mobile|\bcell|handy|handle|@",
    "lead": r"lead|led|owner|owns|owned|run|runs|head|charge|manag",
}


def _turn_names_subject(f: dict, facts: list[dict], subj: str, st: Stated, subs: Subjects) -> bool:
    """Does another sentence of ``f``'s turn name the subject of ``st``?"""
    turn = (f.get("session"), f.get("anchor"))
    return any((g.get("session"), g.get("anchor")) == turn and g is not f and _names_subject(g, subj, st, subs)
               for g in facts)


def _speaks_of(attr: str, text: str) -> bool:
    """Does ``text`` use a word of stating ``attr`` (:data:`_ATTR_CUES`; a quantity or a date
    is matched by its key's words instead, :func:`_names_subject`)?"""
    cue = _ATTR_CUES.get(attr)
    return cue is None or re.search(cue, text, re.I) is not None


def _instead_of(text: str) -> list[tuple[str | None, str]]:
    """(None, old value) for each "instead of / rather than Y" (see :func:`reach.pairs` for
    "…, not Y")."""
    return [(None, m.group("old").strip()) for m in _INSTEAD_RE.finditer(text)]


def _kept_alongside(group: list[Stated]) -> None:
    """A new job or title said in a turn that keeps the current one ("I've just become a
    volunteer coach on saturdays! day job unchanged, still paralegal") is one more, not a
    replacement: it leaves the group (it stays on the timeline)."""
    for st in list(group):
        if st.op != "set" or fact_records._is_correction(st):
            continue
        cur = play(group[:group.index(st)]).current
        if cur is None or same_words(cur.value, st.value):
            continue
        turn = st.fact["text"] + " " + st.fact.get("after", "")  # it and what follows it
        # "still X" as a clause of its own ("day job unchanged, still paralegal", "Still a
        # pharmacist in the week", "I'm still at Boots Row"), not "friends at X still message me"
        if re.search(rf"(?:^|[,.;:!?(—–-]\s*|\b(?:and|but|I['’]m|I\s+am|im|is|are|was|['’]s|remains|stays)\s+)"
                     rf"(?:still|also)\s+"
                     rf"(?:an?\s+|the\s+|at\s+|with\s+|for\s+)?{re.escape(cur.value)}(?![\w-])", turn, re.I):
            group.remove(st)


def _names_subject(f: dict, subj: str, st: Stated, subs: Subjects) -> bool:
    """Is ``f`` about the subject and attribute of ``st``: it names the subject, or, for a
    quantity or a date keyed by what it measures ("the soil moisture threshold"), its
    speaker is the subject and it names what is measured ("water when soil moisture drops
    below 40%")."""
    if subj in fact_slugs(f, subs):
        return True
    if st.attr not in ("number", "deadline", "trip") or subs.slug_for(f.get("speaker", "")) != subj:
        return False
    head, _, mods = st.key.partition("|")
    words = set(content_words(mods.split("@")[0])) or set(content_words(head))
    return bool(words) and words <= set(content_words(f["text"]))


def _named_with(st: Stated, subj: str, subs: Subjects) -> set[str]:
    """The projects and organisations a number or deadline statement names (their pages
    show it too)."""
    if st.attr not in ("number", "deadline"):
        return set()
    out = set()
    for n in list(st.fact.get("names", [])) + list(st.fact.get("subjects", {})):
        s2 = subs.slug_for(n)
        if s2 and s2 != subj and subs.by_slug[s2].type in ("project", "organization"):
            out.add(s2)
    return out


def _superseded_lines(models: dict[str, PageModel], got: list[fact_records.Stay], subj: str, title: str,
                      subs: Subjects) -> int:
    """Each replaced value as a ``## Superseded`` line, from its record (when it held, what
    replaced it), on the subject's page and the value's (a number's or deadline's also on
    the projects and organisations named with it, as its current line is); how many were
    replaced."""
    n = 0
    for stay in got:
        if stay.ended_by is None or stay.record is None:
            continue
        n += 1
        old, first, new, rec = stay.shown, stay.first, stay.ended_by, stay.record
        for slug in {subj, old.value_slug} - {None}:
            models[slug].replaced_facts.append(first)
            models[slug].replaced_facts.append(old)
        by = f"replaced by {stay.next.record.value}" if stay.replaced and stay.next.record else (
            f"replaced by {stay.next.shown.value}" if stay.replaced else "ended")
        # a value known only from the correction that replaced it has no day it began
        since = f" (from {human_day(rec.valid_from)})" if rec.valid_from else ""
        line = _cite_claim(f"{_past_text(old, title)}{since}",
                           stay.dated_by.fact, "Superseded",
                           extra=f"— until {human_day(rec.valid_until)}, {by}", extra_f=new.fact)
        line.record = rec.id
        for slug in ({subj, old.value_slug} - {None}) | _named_with(first, subj, subs):
            models[slug].superseded.append(line)
    return n


def _current_line(models: dict[str, PageModel], stay: fact_records.Stay, subj: str, attr: str,
                  title: str, subs: Subjects, newest: str, stale_days: int) -> None:
    """The value standing at the end, dated from its record ("since …", "as said" when the
    conversation gave the day, "corrected …" for a correction that gave none), on the
    subject's page and the value's (a number or deadline also on the projects and
    organisations named with it)."""
    st, rec = stay.shown, stay.record
    text = f"{now_text(st, title)} ({fact_records.since_text(rec, human_day)})"
    # "seasonal" pruning: a value nobody has restated for a long time is marked, not dropped;
    # the day of its last statement is that statement's to cite, when it is another turn
    newer = stay.last
    last = newer.fact.get("date") or ""
    extra, extra_f = "", None
    if newest and last and _days(last, newest) > stale_days:
        if ref_of(newer.fact) == ref_of(stay.dated_by.fact) or last == stay.dated_by.fact.get("date"):
            text = text[:-1] + f"; not confirmed since {human_day(last)})"
        else:
            extra, extra_f = f"— not confirmed since {human_day(last)}", newer.fact
    line = _cite_claim(text, stay.dated_by.fact, "Now", extra=extra, extra_f=extra_f)
    line.group = attr
    line.record = rec.id
    for slug in {subj, st.value_slug} - {None}:
        models[slug].now.append(line)
    # numbers and deadlines also belong to the projects and organisations named with them
    for s2 in _named_with(stay.first, subj, subs):
        models[s2].now.append(line)


def _timelines(models: dict[str, PageModel], facts: list[dict], subs: Subjects,
               superseded_facts: dict[tuple[int, str], str], used: set[tuple], cap: int) -> None:
    """Every other fact of each page: retired ones under ``## Superseded``, the rest on the
    timeline — at most ``cap``, the most informative, in date order."""
    per: dict[str, list[dict]] = defaultdict(list)
    for f in facts:
        for slug in fact_slugs(f, subs):
            if (id(f), slug) in superseded_facts:
                why = superseded_facts[(id(f), slug)]
                models[slug].superseded.append(Claim(statement(f, subs), ref_of(f), f.get("date"),
                                                     "Superseded", extra=why[0],
                                                     extra_source=why[1]))
                continue
            if (id(f), slug) in used:
                continue
            per[slug].append(f)
    for slug, fs in per.items():
        keep = sorted(fs, key=lambda f: (-f.get("score", 0), f.get("date") or "", f.get("order", 0)))[:cap]
        rank = {id(f): i for i, f in enumerate(keep)}  # 0 = most informative
        keep.sort(key=lambda f: (fact_date(f) or "", f.get("order", 0)))
        models[slug].timeline = [Claim(statement(f, subs), ref_of(f), fact_date(f), "Timeline",
                                       evidence=f"{f['speaker']}: “{f['text']}”", rank=rank[id(f)])
                                 for f in keep]


#: The order of current lines on a page: who they are, then work, home, people, likes.
_ORDER = {a: i for i, a in enumerate("employer role manager project lead home species pet "
                                       "family friend contact preference format number deadline".split())}


def fit(claims: list[Claim], max_chars: int) -> list[Claim]:
    """A page's claims within ``max_chars`` (≈ 4 characters a token), counting the source
    each adds to the frontmatter. The least informative timeline entries go first (one entry
    repeats one turn), down to ``_MIN_TIMELINE``; then the last-ranked threads (a thread
    gathers one topic across sessions); then the rest of the timeline; then the oldest
    superseded values, down to ``_MIN_SUPERSEDED``. Current lines and corrections are never
    cut."""
    def cost(c: Claim) -> int:
        # "- 2026-04-02 — " and " [cite:N]" in the body, "- <source>" in the frontmatter
        # (which a reader, the index among them, must be able to parse whole: a user's page
        # over months of sessions once cited 1,701 sources, past any parser's limit)
        return (len(c.text) + len(c.extra) + 25 + len(c.source) + 4
                + (len(c.extra_source) + 4 if c.extra_source else 0)
                + sum(len(v) + len(src) + 16 for v, src in c.parts))

    total = sum(cost(c) for c in claims)
    if max_chars <= 0 or total <= max_chars:
        return claims
    timeline = sorted((c for c in claims if c.section == "Timeline"), key=lambda c: -c.rank)
    drop: set[int] = set()

    def cut_timeline(keep: int) -> None:
        nonlocal total
        for c in timeline[: max(0, len(timeline) - keep)]:
            if total <= max_chars:
                return
            if id(c) not in drop:
                drop.add(id(c))
                total -= cost(c)

    cut_timeline(_MIN_TIMELINE)
    topics = list(dict.fromkeys(c.group for c in claims if c.section == "Threads"))
    while topics and total > max_chars:
        t = topics.pop()
        for c in claims:
            if c.section == "Threads" and c.group == t:
                drop.add(id(c))
                total -= cost(c)
    cut_timeline(0)
    # Replaced values, oldest first: the newest replacements say the most about now.
    superseded = sorted((c for c in claims if c.section == "Superseded"),
                        key=lambda c: c.date or "")
    for c in superseded[: max(0, len(superseded) - _MIN_SUPERSEDED)]:
        if total <= max_chars:
            break
        drop.add(id(c))
        total -= cost(c)
    return [c for c in claims if id(c) not in drop]


#: Timeline entries a size cap keeps before it cuts threads.
_MIN_TIMELINE = 20
#: Superseded values a size cap never cuts (the newest).
_MIN_SUPERSEDED = 20


def _days(a: str, b: str) -> int:
    """Days from ISO day ``a`` to ``b`` (0 when either is unreadable)."""
    da, db = parse_day(a), parse_day(b)
    return (db - da).days if da and db else 0


def _unique(claims: list[Claim]) -> list[Claim]:
    seen: set[tuple] = set()
    out = []
    for c in claims:
        k = (c.text, c.source, c.extra)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


def statement(f: dict, subs: Subjects) -> str:
    """A fact in the wiki's words: third person for the speaker."""
    slug = subs.slug_for(f["speaker"])
    name = subs.by_slug[slug].title if slug else f["speaker"]
    return third_person(f["text"], name)


#: A line that opens or ends on a word pointing outside it ("It came up again in the Y
#: interviews.", "X is waiting on it.") or speaks to someone ("Can't wait to see your
#: show") does not say, alone, what it is about. ("their" inside a line is the wiki's own
#: pronoun for a speaker it names, prose.py.)
_POINTING_RES = (
    re.compile(r"^\W*(?:it|its|it's|they|they're|them|he|he's|him|she|she's|her|this|that|these|those)\b", re.I),
    re.compile(r"\b(?:it|them|this|that|him|her|these|those)\W*$", re.I),
    re.compile(r"\b(?:you|your|yours|you're|you've|you'll)\b", re.I),
)


def stands_alone(text: str, names: Sequence[str] = ()) -> bool:
    """Does ``text`` read alone as a line about the subject called ``names``: it names the
    subject (when names are given), does not open or end on a pronoun from another sentence
    and is not said to someone?"""
    if any(rx.search(text) for rx in _POINTING_RES):
        return False
    return not names or any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text) for n in names if n)


def gist(m: PageModel, names: Sequence[str] = (), gone: Collection[str] = ()) -> str:
    """The one-line current summary of a page (for INDEX.md): its first current line, else
    the newest timeline line that stands alone (names the subject, ``names``: its title and
    aliases, and leans on no pronoun) and cites no turn of ``gone`` (turns that stated a
    value since replaced or ended, on any page); '' when no line does (the caller says when
    the subject was mentioned instead: a line that starts from "it" tells a reader nothing)."""
    if m.now:
        # "Mara Lind's manager is Priya Nair (since July 2026)": the month is enough here
        return re.sub(r"\(since (?:\d{1,2} )?([A-Z][a-z]+ \d{4})[^)]*\)$", r"(since \1)", m.now[0].text)
    if m.timeline:
        # not a line of the turn that stated a value since replaced or ended ("Hugo is going
        # to Iceland in March" once the trip is off): the index would say it as current
        gone = {*gone, *(c.source for c in m.superseded)}
        line = next((c.text for c in reversed(m.timeline) if stands_alone(c.text, names) and c.source not in gone), "")
        if line or not m.superseded:
            return line
    if m.superseded:  # only a past: "Ines Okafor lived in Lisbon (until April 2026)"
        c = m.superseded[0]
        until = re.search(r"until (?:\d{1,2} )?([A-Z][a-z]+ \d{4})", c.extra)
        return re.sub(r"\s*\(from [^)]*\)$", "", c.text) + (f" (until {until.group(1)})" if until else "")
    return ""
