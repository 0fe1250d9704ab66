"""Which later sentence retells a group's value (:mod:`.retold` reads the value): one said after
the group's last statement, by its subject or naming it, that is not somebody else's change —
appended to the group as its next statement, so the replay (:func:`.facts.stays`) closes the
old value and every view follows."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from . import facts as fact_records
from . import meaning
from . import reach
from . import retold
from .grouping import Stated
from .relationrecord import SELF
from .subjects import Subjects, fact_slugs
from .text import content_words


def _when(f: dict) -> tuple:
    return (f.get("date") or "", 0 if f.get("session") else 1, f.get("order", 0))


class Later:
    """The sentences a later value may come from (facts, correction cards, asides), sorted by
    when they were said, with the pages each names: made once per run, read by every group."""

    def __init__(self, facts: list[dict], subs: Subjects) -> None:
        self.subs = subs
        self.facts = sorted(facts, key=_when)
        self.when = [_when(f) for f in self.facts]
        self._slugs: dict[int, set[str]] = {}

    def after(self, when: tuple) -> list[dict]:
        """The sentences said after ``when``, in order."""
        return self.facts[bisect_right(self.when, when):]

    def slugs(self, f: dict) -> set[str]:
        """:func:`.subjects.fact_slugs` of ``f``, once."""
        got = self._slugs.get(id(f))
        if got is None:
            got = self._slugs[id(f)] = fact_slugs(f, self.subs)
        return got


def later_statement(group: list[Stated], later: Later, subj: str, attr: str, key: str,
                    is_organization: Callable[[str], bool]) -> None:
    """A later sentence that says a change and names a value of the kind the group holds
    (:mod:`.retold`: "bumping my weekly mileage up to 45 km" after "I run 30 km a week") is the
    group's next value — when it is the subject's own statement (its speaker, saying nothing
    of another person) or names the subject, and no statement of the group comes after it.
    ``is_organization``: whether a name is an organisation's (pages.py knows by head word,
    page type and meaning). Appends the statement to ``group``."""
    if attr not in retold.KINDS or not group:
        return
    subs = later.subs
    got = fact_records.stays(group)
    cur = got[-1].last if got and got[-1].ended_by is None else None
    # an end with nothing in its place yet ("I've gone off Garamond, it looks dated."): a
    # value of the kind said later in the same session is its successor ("use Inter for
    # everything now"), as the replay takes an end and a value of one day
    ender = got[-1].ended_by if got and cur is None and got[-1].next is None else None
    if ender is not None and ender.op == "end":
        cur = got[-1].last
    if cur is None or cur.op != "set":
        return
    last = max(_when(g.fact) for g in group)
    said = {id(g.fact) for g in group}  # the group's own sentences
    for f in later.after(last):
        if id(f) in said:
            continue
        if ender is not None and (f.get("session") != ender.fact.get("session") or not f.get("session")):
            break
        named = later.slugs(f)
        title = subs.by_slug[subj].title
        if attr == "lead" and re.search(rf"(?<![\w-]){re.escape(title)}(?![\w-])", f["text"], re.I):
            named = named | {subj}  # "yasmin farouk is leading the harbourfront redesign now"
        mine = subs.slug_for(f.get("speaker", "")) == subj
        if subj not in named and not (mine and not {s for s in named - {subj} if subs.by_slug[s].type == "person"}):
            continue
        # a correction that names whom it is about ("Nadia has a new phone: …"): not the speaker's
        # telling of somebody else, though the speaker typed it
        by_name = not f.get("session") and re.search(rf"(?<![\w-]){re.escape(title.split()[0])}(?![\w-])",
                                                     f["text"], re.I) is not None
        if subj in named and not mine and _named_only_negated(f["text"], subs.by_slug[subj].title):
            continue  # "the Compass Data team (not our Compass Mobile) got a new lead"
        own = (mine and not by_name) or subj not in named
        about = subs.by_slug[subj].title if attr == "lead" else _about(attr, key)
        new = retold.later_value(attr, cur.value, f["text"], own=own, about=about)
        if new is None and not f.get("session"):
            # a correction typed to fix the memory says a change by being one
            new = retold.corrected_value(attr, cur.value, f["text"], about, subs.by_slug[subj].title)
            if new and attr in ("employer", "home", "project") and _a_person(new, subs):
                new = None  # "Project Heron is led by Mateus Costa now": the lead, not a project of mine
        if new is None:
            if ender is None and retold.ended(attr, cur.value, f["text"], own=own):
                # "cancelled Iceland", "brenda left … I report to nobody": ended, nothing in its place
                group.append(Stated(subj, attr, key, cur.value, cur.value_slug, "end", f, cur.detail, cur.phrase))
                return
            continue
        if new == SELF:
            me = subs.slug_for(f.get("speaker", ""))
            if not me or me == subj:
                continue
            new = subs.by_slug[me].title
        if attr == "employer" and not is_organization(new) and (
                len(new.split()) == 1 or meaning.kind_of_name(new) == "place"):
            continue  # "I moved to Leeds for a job at …": where one went
        if attr == "home" and is_organization(new):
            continue
        # what the sentence calls the thing: the phrase of the value it replaces only when it
        # names it too ("the deadline" for "the deadline for the Journal of Coastal Processes")
        phrase = cur.phrase if set(content_words(cur.phrase)) <= set(content_words(f["text"])) \
            else _named_before(f["text"], new) or key.partition("|")[0]
        group.append(Stated(subj, attr, key, new, subs.slug_for(new), "set", f, cur.detail, phrase,
                            tuple(reach.negated_values(f["text"]))))
        return


def _named_before(text: str, value: str) -> str:
    """The words ``text`` names ``value`` by, right before it ("water goal" of "water goal
    2.5 L not 2"), or ""; a quick fix names its thing so, and verification keeps a line
    only in its source's words."""
    at = text.lower().find(value.lower())
    if at <= 0:
        return ""
    words = re.findall(r"[A-Za-z][\w\-]*", re.split(r"[,.;:!?()—–]|\s-\s", text[:at])[-1])
    words = [w for w in words[-3:] if w.lower() not in _NOT_PHRASE]
    return " ".join(words) if words and set(w.lower() for w in words) <= set(content_words(" ".join(words))) else ""


#: Words that make no name of a thing before its value ("is now", "to", "my").
_NOT_PHRASE = frozenset("""is are was were now to my our the a an at of on in for from by new now it its this that i im
moved pushed changed switched set bumped raised cut increased reduced lowered upped dropped update updated""".split())


def _a_person(name: str, subs: Subjects) -> bool:
    """Is ``name`` a person's, by its page or its words?"""
    slug = subs.slug_for(name)
    if slug and slug in subs.by_slug:
        return subs.by_slug[slug].type == "person"
    return meaning.kind_of_name(name) == "person"


def _about(attr: str, key: str) -> str:
    """What a group's value is of, by its key's words: "audit report" of a deadline keyed
    "deadline|audit report@…", "draft" of a format keyed "format of draft"."""
    if attr == "format":
        return re.sub(r"^format\s+(?:of\s+)?", "", key)
    return key.partition("|")[2].split("@")[0]


def _named_only_negated(text: str, title: str) -> bool:
    """Is ``title`` named in ``text`` only after a "not" ("…, not our Compass Mobile")?"""
    at = [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(title)}(?![\w-])", text, re.I)]
    return bool(at) and all(re.search(r"\bnot\s+(?:our|my|the|their)?\s*$", text[max(0, a - 12):a], re.I) for a in at)
