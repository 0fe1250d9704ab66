"""Procedures: a workflow the user describes, as ordered steps, kept in its current order.

A person tells a workflow once ("My workflow for the atlas has five stages: first I ingest
the gauge records, then I run quality control, …, and finally I export the print PDFs")
and amends it later in passing ("the datum correction happens between ingest and quality
control", "After the export I also tile the web map"). A timeline keeps each of those
sentences apart; what an agent needs is the procedure as it stands, one cited step a line.

* **Told** (:func:`told_in`, at extraction, per turn): a sentence of a human speaker that
  names a procedure word (workflow, procedure, process, pipeline, routine, checklist,
  steps, stages, phases) and, from it to the end of the turn, at least three steps: a
  sequence of "first … then … next … finally …", a list after a colon ("five stages:
  ingest, QC, styling, layout and export"), arrows ("ingest → QC → export") or numbers
  ("1) … 2) …").
* **Amended** (:func:`amendments_in`): "X happens/comes/goes between A and B", "X comes
  after/before A", "After A, I also X", "add X after A", "we dropped the X step", "no
  longer X". An amendment applies to an earlier procedure of the same speaker whose steps
  it names (every content word of A, stemmed, in one step); otherwise it is no amendment
  (an "after the meeting I also …" names no step).
* **Rendered** (:func:`render_pages`): one page per procedure, ``type: procedure``, the
  steps numbered in their current order, each cited to the turn that said it; a
  ``## Timeline`` quoting when it was told and each amendment.
* **Recorded** (:func:`records`): one fact record of kind ``procedure`` per procedure
  (``cache/facts/records.py``), its value the steps joined by `` → ``.

General rules, no names: nothing here knows a persona's workflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from brainfs.cache.facts.records import FactRecord, record_id
from brainfs.cache.layout import turn_ref

from .prose import human_day
from .synth import Sources, frontmatter
from .text import capitalised_runs, content_words, sentences, slugify

#: Words that name a procedure in a sentence.
_TRIGGER_RE = re.compile(r"\b(workflow|procedure|process|pipeline|routine|checklist|recipe|"
                         r"steps|stages|phases)\b", re.I)
#: Sequence markers between steps ("first …, then …, and finally …").
_MARKER = (r"(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|after that|afterwards|"
           r"finally|lastly|last of all|at the end)")
_MARKER_RE = re.compile(r"(?:^|(?<=[\s,;:]))(?:and\s+)?" + _MARKER + r"\b,?\s*", re.I)
_OPENS_WITH_MARKER_RE = re.compile(r"^\s*(?:and\s+)?" + _MARKER + r"\b", re.I)
#: A list's separators ("ingest, QC, styling, layout and export").
_LIST_SPLIT_RE = re.compile(r"\s*(?:,\s*(?:and\s+|then\s+)?|;\s*|\s+and\s+(?:then\s+)?|\s+then\s+)", re.I)
_ARROW_SPLIT_RE = re.compile(r"\s*(?:→|->|=>|⟶)\s*")
_NUMBERED_SPLIT_RE = re.compile(r"(?:^|\s)\(?\d{1,2}[.)]\s+")
#: A step's own subject ("I ingest …", "we run …"), a modal before its verb, adverbs.
_STEP_SUBJECT_RE = re.compile(r"^(?:(?:i|we|you|they)(?:'ll|'d)?\s+)?(?:(?:also|always|usually|"
                              r"normally|just|now|will|then|do|can|should)\s+)*", re.I)
_ARTICLE_RE = re.compile(r"^(?:the|a|an|our|my)\s+", re.I)
_STEP_MAX_WORDS = 12
_NUMBER_WORDS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10}

#: A phrase naming a step in an amendment: a few words, no clause.
def _ref_rx(group: str) -> str:
    return rf"(?:the\s+)?(?P<{group}>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,4}}?)"



_HAPPENS = (r"(?:now\s+)?(?:happens|comes|goes|sits|belongs|runs|is done|has to happen|"
            r"needs to happen|should (?:happen|come|go)|must (?:happen|come|go))")
_AMEND_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("between", re.compile(r"^(?:the\s+)?(?P<new>[a-z][\w\-]*(?:\s+[\w\-]+){0,5}?)\s+" + _HAPPENS
                           + r"\s+between\s+" + _ref_rx("a")
                           + r"\s+and\s+" + _ref_rx("b") + r"\s*[.!]?$", re.I)),
    ("rel", re.compile(r"^(?:the\s+)?(?P<new>[a-z][\w\-]*(?:\s+[\w\-]+){0,5}?)\s+" + _HAPPENS
                       + r"\s+(?:right\s+|just\s+)?(?P<rel>after|before)\s+" + _ref_rx("a")
                       + r"\s*[.!]?$", re.I)),
    ("lead", re.compile(r"^(?P<rel>after|before)\s+" + _ref_rx("a")
                        + r",?\s+(?:i|we)\s+(?:also\s+|now\s+|always\s+)*(?P<new>[a-z].*?)\s*[.!]?$", re.I)),
    ("add", re.compile(r"\b(?:add|insert|put)\s+(?:a\s+|an\s+|the\s+)?(?P<new>[\w\-]+(?:\s+[\w\-]+){0,4}?)"
                       r"(?:\s+step)?\s+(?P<rel>after|before)\s+" + _ref_rx("a")
                       + r"\s*[.!]?$", re.I)),
    ("drop", re.compile(r"\b(?:(?:i|we)\s+(?:have\s+)?(?:dropped|skip(?:ped)?|removed|cut)\s+the\s+"
                        r"(?P<a>[\w\-]+(?:\s+[\w\-]+){0,3}?)\s+step|(?:i|we)\s+no longer\s+"
                        r"(?P<a2>[a-z][\w\-]*(?:\s+[\w\-]+){0,4}?))\s*[.!]?$", re.I)),
)


def _clean_step(s: str) -> str:
    s = s.strip(" ,;:.!—-")
    s = re.sub(r"^(?:and|or|so)\s+", "", s, flags=re.I)
    s = re.sub(r"^" + _MARKER + r"\b,?\s*", "", s, flags=re.I)
    s = _STEP_SUBJECT_RE.sub("", s)
    s = _ARTICLE_RE.sub("", s).strip(" ,;:.!")
    return s[:1].upper() + s[1:] if s else s


def _steps_ok(steps: list[str]) -> bool:
    return len(steps) >= 3 and all(0 < len(s.split()) <= _STEP_MAX_WORDS for s in steps)


def _sequence(sents: list[str]) -> list[str]:
    """Steps of "first …, then …, finally …" from the first sentence on, while each next
    sentence goes on with a marker."""
    steps: list[str] = []
    for k, s in enumerate(sents):
        if k and not _OPENS_WITH_MARKER_RE.match(s):
            break
        body = s.split(":", 1)[1] if k == 0 and ":" in s else s
        marks = list(_MARKER_RE.finditer(body))
        if not marks:
            if k == 0:
                continue  # "My morning routine is simple. First, …"
            break
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
            step = _clean_step(body[m.end():end])
            if step:
                steps.append(step)
    return steps


def _listed(sentence: str) -> list[str]:
    """Steps listed after the procedure word and a colon, by arrows, or by numbers."""
    m = _TRIGGER_RE.search(sentence)
    tail = sentence[m.end():] if m else sentence
    tail = re.sub(r"^\s*(?:is|are|goes|runs|looks like)\b\s*", "", tail, flags=re.I)
    if _ARROW_SPLIT_RE.search(tail):
        steps = [_clean_step(x) for x in _ARROW_SPLIT_RE.split(tail.split(":", 1)[-1])]
        if _steps_ok(steps):
            return steps
    if len(_NUMBERED_SPLIT_RE.findall(tail)) >= 3:
        steps = [_clean_step(x) for x in _NUMBERED_SPLIT_RE.split(tail)[1:]]
        if _steps_ok(steps):
            return steps
    if ":" in tail:
        steps = [_clean_step(x) for x in _LIST_SPLIT_RE.split(tail.split(":", 1)[1])]
        if _steps_ok(steps):
            return steps
    return []


def _name_of(sentence: str) -> str:
    """What the procedure is called in its sentence: the procedure word with the lower-case
    words before it and what it is "for" ("workflow for the atlas", "field survey checklist")."""
    m = _TRIGGER_RE.search(sentence)
    if not m:
        return ""
    word = m.group(1).lower()
    if word in ("steps", "stages", "phases"):
        word = "workflow"
    before = re.findall(r"[A-Za-z][\w\-]*", sentence[:m.start()])
    mods: list[str] = []
    for w in reversed(before):
        if w.lower() in ("my", "our", "the", "a", "an", "has", "have", "is", "in", "of", "this",
                         "that", "his", "her", "their", "its", "i", "we") or not w.islower() \
                or w in _NUMBER_WORDS or w.isdigit():
            break
        mods.insert(0, w)
    after = re.match(r"\s+(?:for|of)\s+((?:the\s+)?[\w\-]+(?:\s+[A-Z][\w\-]+)*)", sentence[m.end():])
    return " ".join(mods + [word] + ([after.group(0).strip()] if after else []))


def told_in(turns: list[tuple[str, str, str]]) -> list[dict]:
    """The procedures told in a session's turns (``(anchor, speaker, text)`` of human
    speakers): ``{anchor, speaker, name, sentence, steps}`` each."""
    out = []
    for anchor, speaker, text in turns:
        sents = sentences(text)
        for i, s in enumerate(sents):
            if not _TRIGGER_RE.search(s) or s.rstrip().endswith("?"):
                continue
            steps = _sequence(sents[i:]) or _listed(s)
            if _steps_ok(steps):
                out.append({"anchor": anchor, "speaker": speaker, "name": _name_of(s),
                            "sentence": s, "steps": steps})
                break
    return out


def amendments_in(turns: list[tuple[str, str, str]]) -> list[dict]:
    """Sentences that may amend a procedure (see the module docstring): ``{anchor, speaker,
    op, new, a, b, rel, sentence}``. Whether one does is decided against the steps told."""
    out = []
    for anchor, speaker, text in turns:
        for s in sentences(text):
            body = s.split(": ", 1)[1] if ": " in s else s
            for op, rx in _AMEND_RES:
                m = rx.search(body)
                if not m:
                    continue
                g = m.groupdict()
                a = g.get("a") or g.get("a2") or ""
                out.append({"anchor": anchor, "speaker": speaker, "op": op,
                            "new": _clean_step(g.get("new") or ""), "a": a, "b": g.get("b") or "",
                            "rel": (g.get("rel") or "").lower(), "sentence": s})
                break
    return out


def _stem(w: str) -> str:
    w = w.lower()
    for suf in ("ations", "ation", "ings", "ing", "ed", "es", "s", "e"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in content_words(text)}


def _find(ref: str, steps: list["Step"]) -> int | None:
    """The one step whose words hold every content word of ``ref`` (stemmed)."""
    want = _stems(ref)
    if not want:
        return None
    hits = [i for i, st in enumerate(steps) if want <= _stems(st.text)]
    return hits[0] if len(hits) == 1 else None


@dataclass
class Step:
    text: str
    source: str          # the turn that said it
    date: str | None


@dataclass
class Procedure:
    """One procedure in its current order, with what was said of it."""

    speaker: str
    name: str
    sentence: str
    steps: list[Step]
    source: str
    date: str | None
    session: str
    owner: str | None = None         # the page it belongs to (a project's slug), if any
    teller: str = ""                 # the speaker's page title
    slug: str = ""
    title: str = ""
    history: list[tuple[str | None, str, str, str]] = field(default_factory=list)  # (date, what, quote, source)


def _ref(session: str, anchor: str) -> str:
    return turn_ref(session, anchor)


def _apply(p: Procedure, am: dict, ref: str, day: str | None) -> bool:
    """Apply one amendment to ``p``; whether it named ``p``'s steps."""
    steps = p.steps
    new = Step(am["new"], ref, day)
    if am["op"] == "between":
        i, j = _find(am["a"], steps), _find(am["b"], steps)
        if i is None or j is None or i == j or not am["new"]:
            return False
        lo, hi = min(i, j), max(i, j)
        k = _find(am["new"], steps)
        if k is not None and lo < k < hi:
            return True  # already there
        if k is not None and k not in (lo, hi):
            moved = steps.pop(k)
            new = Step(moved.text, ref, day)
            lo = lo - (k < lo)
        steps.insert(lo + 1, new)
        return True
    if am["op"] in ("rel", "lead", "add"):
        i = _find(am["a"], steps)
        if i is None or not am["new"]:
            return False
        k = _find(am["new"], steps)
        if k is not None and k != i:
            moved = steps.pop(k)
            new = Step(moved.text, ref, day)
            i = i - (k < i)
        elif k == i:
            return False
        steps.insert(i + 1 if am["rel"] == "after" else i, new)
        return True
    if am["op"] == "drop":
        i = _find(am["a"], steps)
        if i is None:
            return False
        steps.pop(i)
        return True
    return False


def build(sessions: dict[str, dict], order: list[str], speaker_of, forgotten) -> list[Procedure]:
    """Every procedure told in the sessions (``order``: their ids in date order), each
    amendment applied in date order. ``speaker_of(name)``: the speaker a session's name
    stands for (a role renamed), or None to leave the turn out (an assistant);
    ``forgotten(text)``: a forget request covers it."""
    procs: list[Procedure] = []
    for sid in order:
        ss = sessions[sid]
        day = ss.get("date")
        told = [t for t in ss.get("procedures") or [] if not forgotten(t["sentence"])]
        amends = [a for a in ss.get("amendments") or [] if not forgotten(a["sentence"])]
        events = sorted([(t["anchor"], 0, t) for t in told] + [(a["anchor"], 1, a) for a in amends],
                        key=lambda e: (_anchor_key(e[0]), e[1]))
        for anchor, kind, e in events:
            who = speaker_of(e["speaker"])
            if who is None:
                continue
            ref = _ref(sid, anchor)
            if kind == 0:
                procs.append(Procedure(who, e["name"], e["sentence"],
                                       [Step(s, ref, day) for s in e["steps"]], ref, day, sid,
                                       history=[(day, "told", e["sentence"], ref)]))
                continue
            if any(p.source == ref for p in procs):
                continue  # the turn that tells a procedure does not amend it too
            # the newest procedure of this speaker whose steps the amendment names
            for p in reversed([p for p in procs if p.speaker == who]):
                if _apply(p, e, ref, day):
                    p.history.append((day, "amended", e["sentence"], ref))
                    break
    return procs


def _anchor_key(anchor: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", anchor)) or (0,)


def place(procs: list[Procedure], subs, taken: set[str]) -> list[Procedure]:
    """Each procedure's owner page (a subject its sentence names: "the atlas", a project's
    name; else its speaker's), title and slug (not one of ``taken``); of a procedure told
    again under the same title, the newest telling (the list returned)."""
    for p in procs:
        owner = None
        for phrase, slug in sorted(subs.lower_alias.items()):
            if re.search(rf"\b{re.escape(phrase)}\b", p.sentence):
                owner = slug
        if owner is None:
            for run, _pos in capitalised_runs(p.sentence):
                s = subs.slug_for(run)
                if s and s != subs.slug_for(p.speaker):
                    owner = s
                    break
        p.owner = owner
        who = subs.by_slug.get(subs.slug_for(p.speaker) or "")
        p.teller = who.title if who else p.speaker
        word = re.sub(r"\s+(?:for|of)\s+.*$", "", p.name) or "workflow"
        if owner:
            p.title = f"{subs.by_slug[owner].title} {word}"
        else:
            p.title = f"{p.teller}'s {word}"
    newest: dict[str, Procedure] = {}
    for p in procs:
        newest[p.title] = p
    out = [p for p in procs if newest[p.title] is p]
    for p in out:
        slug = slugify(p.title)
        base, n = slug, 2
        while slug in taken:
            slug, n = f"{base}-{n}", n + 1
        taken.add(slug)
        p.slug = slug
    return out


def render_page(p: Procedure, titles: dict[str, str], generator: str) -> str:
    """The procedure's page: its steps in their current order, each cited; then when it was
    told and amended, quoted."""
    src = Sources()
    told = human_day(p.date)
    last = max((d or "" for d, what, _q, _r in p.history if what == "amended"), default="")
    of = f" for [[{p.owner}]]" if p.owner and p.owner in titles else ""
    intro = (f"{p.title} is a procedure{of}, as {p.teller or p.speaker} described it on {told}"
             + (f" and amended it up to {human_day(last)}" if last else "")
             + f": {len(p.steps)} steps, in their current order.")
    lines = [f"# {p.title}", "", intro, ""]
    lines += [f"{i}. {st.text} {src.cite(st.source)}" for i, st in enumerate(p.steps, 1)]
    lines += ["", "## Timeline", ""]
    for day, what, quote, ref in p.history:
        q = quote.replace("“", "'").replace("”", "'").replace('"', "'")
        lines.append(f"- {day or 'undated'} — {what.capitalize()}: “{q}” {src.cite(ref)}")
    updated = max((d or "" for d, *_r in p.history), default="") or (p.date or "")
    meta = {"title": p.title, "type": "procedure", "aliases": [], "updated": updated,
            "sources": src.refs, "generator": generator}
    if p.owner and p.owner in titles:
        meta["of"] = p.owner
    return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"


def gist(p: Procedure) -> str:
    """The steps as one line (INDEX.md, a record's value)."""
    return " → ".join(st.text[:1].lower() + st.text[1:] for st in p.steps)


def records(procs: list[Procedure], subject_of) -> list[FactRecord]:
    """One fact record of kind ``procedure`` per procedure: the steps in their current order
    (``value``: joined by `` → ``), every turn that told or amended them cited.
    ``subject_of(p)``: the slug the record is about (the procedure's own page)."""
    out = []
    for p in procs:
        sources = tuple(dict.fromkeys([p.source] + [st.source for st in p.steps]
                                      + [r for *_x, r in p.history]))
        value = gist(p)
        subject = subject_of(p)
        out.append(FactRecord(
            id=record_id(subject, "procedure", p.title.lower(), value, p.source),
            subject=subject, attribute="procedure", key=p.title.lower(), value=value,
            text=f"{p.title}: {value}", valid_from=(p.date or "")[:10] or None,
            recorded_at=(max((d or "" for d, *_r in p.history), default="") or p.date or "")[:10] or None,
            sources=sources, kind="procedure", scope=p.owner or "", origin="said"))
    return out
