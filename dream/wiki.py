"""Phase 4 of a dream run: every managed file rendered from the state — session summaries
and their index, one page per subject, correction and preference cards, ``knowledge/INDEX.md``
— with forget requests, corrections and contradictions applied."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

from brainfs.cache.layout import FACTS_PATH, INDEX_PATH, SESSIONS_INDEX, page_path, summary_path, turn_ref
from brainfs.cache.search.forget import norm

from . import channels
from . import choices
from . import deadlines
from . import edits
from . import ended
from . import facts as fact_records
from . import gather
from . import irrealis
from . import lowercasenames
from . import meaning
from . import pages as page_content
from . import patternwords
from . import projects
from . import procedures
from . import quantities
from . import quantitykeys
from . import reach
from . import readable
from . import relationrecord
from . import relations
from . import rewording
from . import speakernames
from . import subjectnames
from . import subjects
from . import trips
from .cards import preference_cards, rule_cards
from .contradict import clause_frames, contradiction, frames_contradict
from .corrections import render_card, subjects_in
from .nametypes import correction_anchors, preference_values, strong_types
from .prose import says_nothing
from .settings import Settings
from .state import DreamState
from .subjectnames import is_role
from .synth import Claim, DeterministicSynthesizer, PageSpec, Synthesizer
from .text import capitalised_runs, md5_hex, parse_day
from .threads import threads
from .validate import estimate_tokens


def _quote(s: str) -> str:
    """``s`` in typographic quotes (its own quotes made single)."""
    s = s.replace("“", "'").replace("”", "'").replace('"', "'")
    return f"“{s}”"


def forgotten_by(text: str, phrases: list[tuple[str, str]]) -> str | None:
    """The forget request (its path) one of whose phrases ``text`` contains, if any."""
    n = f" {norm(text)} "
    for path, ph in phrases:
        if f" {ph} " in n:
            return path
    return None


#: "not X", "no longer X", "instead of X": X is what a correction card corrects.
_NEGATED_RE = re.compile(r"\b(?:not|no longer|isn't|wasn't|aren't|instead of|rather than|never)\s+"
                         r"(?:a |an |the |in |at |to |called |named )?([\w'\-]+(?:\s+[A-Z][\w\-]+)*)", re.I)


@dataclass
class WikiInfo:
    """What :func:`build_wiki` learned besides the files it rendered."""

    subjects: subjects.Subjects
    titles: dict[str, str]              # slug → title of every page
    by_slug: dict[str, list[dict]]      # slug → the page's facts, in date order
    renamed: dict[str, str]             # a role speaker ("User") → the name the sessions give
    pages: int = 0
    facts: int = 0
    superseded: int = 0
    corrected: int = 0
    contradictions: int = 0
    forgotten: dict[str, int] = field(default_factory=dict)  # forget request → facts dropped
    #: the procedures told and amended (procedures.py); procedures.records(info.procedures, …)
    #: are their fact records of kind "procedure"
    procedures: list = field(default_factory=list)


class _Build:
    """One rendering of the wiki: its inputs, and what the steps add up as they go (the
    files, the reasons for each change, the facts each forget request dropped)."""

    def __init__(self, state: DreamState, phrases: list[tuple[str, str]], settings: Settings,
                 synth: Synthesizer) -> None:
        self.state = state
        self.phrases = phrases
        self.settings = settings
        self.synth = synth
        self.files: dict[str, str] = {}
        self.reasons: dict[str, list[str]] = defaultdict(list)
        self.forgotten: Counter = Counter()
        sessions = state.sessions
        #: session ids in date order
        self.order = sorted(sessions, key=lambda s: (sessions[s].get("date") or "", s))

    def forgotten_by(self, text: str) -> str | None:
        return forgotten_by(text, self.phrases)


@dataclass
class _Pool:
    """The facts of all sessions together, and who states them."""

    helpers: set[str]          # named assistants: their turns are no facts
    renamed: dict[str, str]    # a role speaker ("User") → the name the sessions give
    facts: list[dict]          # in session date order, forgotten ones dropped
    speakers: set[str]
    asides: list[dict]         # requests that say a value changed (retold.py), as the facts


@dataclass
class _Cards:
    """The correction cards as the pages read them."""

    files: dict[str, str]                        # card path → rendered card
    live: dict[str, list[tuple[str, dict]]]      # slug → live cards about the subject
    facts: list[dict]                            # live cards as pseudo-facts (pages.build_models)


class _PageInputs(NamedTuple):
    """What the rendering of one page reads."""

    subs: subjects.Subjects
    titles: dict[str, str]
    qset: set[str]
    by_slug: dict[str, list[dict]]
    co: dict[str, Counter]
    models: dict[str, page_content.PageModel]
    cards: _Cards
    thread_claims: dict[str, list[Claim]]
    gathered: dict[str, list[Claim]]              # gather.py: a speaker's values across sessions
    card_of: dict[str, str]                      # a correction event → its card
    last_day: str | None
    gone: frozenset[str]                         # turns that stated a value since replaced or ended


def build_wiki(state: DreamState, phrases: list[tuple[str, str]], settings: Settings,
               synth: Synthesizer, previous_topics: Callable[[str], Sequence[str]] | None = None,
               owner_texts: Callable[[str], Sequence[str]] | None = None,
               ) -> tuple[dict[str, str], dict[str, list[str]], WikiInfo]:
    """Render every managed file from the state. Returns (files, reasons, info).
    ``previous_topics(slug)``: the page's thread topics as published, in order (threads.py
    keeps that order unless a topic beats another by a margin); None: plain ranking.
    ``owner_texts(name)``: texts outside the sessions that may give the user's full name
    when the sessions call them by one word (GUIDE.md, a page already kept for them)."""
    w = _Build(state, phrases, settings, synth)
    _summaries(w)
    pool = _pool(w)
    rel_cache = _known_relations(state, pool.facts)
    subs, qualifying = _subjects(w, pool, rel_cache, owner_texts)
    qset = set(qualifying)
    titles = {s: subs.by_slug[s].title for s in qualifying}
    by_slug = _facts_by_page(pool.facts, subs)
    co = _cooccurrence(pool.facts, subs)
    # general contradictions on each page: same speaker, same predicate frame, a different
    # object or the opposite polarity (see contradict.py); the newer statement wins
    contra = page_contradictions(by_slug, qualifying, {}, state.contradicted)
    for (_fid, slug), (_new, why) in contra.items():
        w.reasons[page_path(slug)].append(f"newer statement supersedes an older one ({why})")
    user = subs.user()
    cards = _cards(w, subs, user, titles, qset)
    # a subject with nothing to say (a speaker whose turns state no fact, no card about it)
    # gets no page: a page is its cited lines, and one without any has no sources to cite
    empty = {s for s in qualifying if not by_slug[s] and not cards.live.get(s)}
    if empty:
        qualifying = [s for s in qualifying if s not in empty]
        qset -= empty
        titles = {s: t for s, t in titles.items() if s not in empty}
    corrected = _corrected(w, cards, by_slug, subs)
    _reached(w, cards, by_slug, qualifying, corrected)
    retired = _retired(contra, corrected, subs)
    models, n_replaced, groups, ledger = page_content.build_models(pool.facts, subs, settings, cards.facts,
                                                                   retired, rel_cache, pool.asides)
    _keep_relations(state, pool.facts, rel_cache)
    _card_closes(w, cards, ledger)
    # a subject whose only statements are values of its own (the user's threshold, said
    # without "I" or "my") has something to say: its current and replaced values, each a
    # fact record, get the page the records name
    said = sorted(s for s in empty if (m := models.get(s)) and (m.now or m.superseded))
    if said:
        qualifying += said
        qset |= set(said)
        titles.update({s: subs.by_slug[s].title for s in said})
    learned = _learned(w, groups, user, ledger)
    replaced_facts = {id(st.fact) for m in models.values() for st in m.replaced_facts}
    thread_claims = threads(by_slug, qualifying, titles, pool.facts,
                            lambda f, slug: (id(f), slug) in retired or id(f) in replaced_facts,
                            lambda f: page_content.statement(f, subs), page_content.ref_of, settings,
                            previous_topics)
    # a correction recorded again was merged into the card that says it (also_sources)
    card_of = {src: cp for cp, card in state.cards.items() if cp in cards.files
               for src in [card["source"], *card.get("also_sources", [])]}
    last_day = max((f["date"] for f in pool.facts if f.get("date")), default=None)
    gathered = gather.gathered(by_slug, qualifying, titles, subs.slug_for,
                               lambda f, slug: (id(f), slug) in retired or id(f) in replaced_facts,
                               page_content.ref_of)
    gone = frozenset(c.source for m in models.values() for c in m.superseded)
    inp = _PageInputs(subs, titles, qset, by_slug, co, models, cards, thread_claims, gathered,
                      card_of, last_day, gone)
    pages: dict[str, str] = {}
    specs: dict[str, PageSpec] = {}
    for slug in qualifying:
        specs[slug], pages[page_path(slug)] = _page(w, inp, slug)
    w.files.update(pages)
    w.files.update(cards.files)
    w.files.update(learned)
    procs = _procedures(w, pool, subs, titles, specs)
    w.files[INDEX_PATH] = render_index(specs, synth, settings.index_cap_tokens)
    # the fact records: the relation records the pages were rendered from, and records other
    # parts make (procedures) — see facts.build_records
    extra_records: list = procedures.records(procs, lambda p: p.slug)
    w.files[FACTS_PATH] = fact_records.render(
        r for r in fact_records.build_records(ledger, extra_records) if not w.forgotten_by(r.text))
    info = WikiInfo(subs, titles, by_slug, pool.renamed, pages=len(pages), facts=len(pool.facts),
                    superseded=n_replaced, corrected=len(corrected), contradictions=len(contra),
                    forgotten=dict(w.forgotten), procedures=procs)
    return w.files, w.reasons, info


def _procedures(w: _Build, pool: _Pool, subs: subjects.Subjects, titles: dict[str, str],
                specs: dict[str, PageSpec]) -> list[procedures.Procedure]:
    """The procedures the user told, amendments applied (procedures.py): one page each
    and an INDEX.md entry right after the page they belong to."""
    def speaker_of(name: str) -> str | None:
        if name in pool.helpers or subjectnames.is_assistant(name):
            return None
        return pool.renamed.get(name, name)

    procs = procedures.build(w.state.sessions, w.order, speaker_of, w.forgotten_by)
    procs = procedures.place(procs, subs, set(titles) | {"index"})
    for p in procs:
        w.files[page_path(p.slug)] = procedures.render_page(p, titles, DeterministicSynthesizer.name)
        owner = specs.get(p.owner or "") or specs.get(subs.slug_for(p.speaker) or "")
        days = sorted(d for d, *_r in p.history if d)
        specs[p.slug] = PageSpec(p.slug, p.title, "procedure", [], [], len(p.history),
                                 len({r.split("/")[1] for *_x, r in p.history}),
                                 days[0] if days else None, days[-1] if days else None,
                                 gist=procedures.gist(p),
                                 importance=(owner.importance if owner else 0.0) - 1e-3)
    return procs


#: The rules relations are read by: relations.py, the modules it reads quantities, deadlines,
#: trips, projects, standing choices, channels and ended values with, and meaning.py.
_RULE_MODULES = (relations, relationrecord, patternwords, irrealis, rewording, quantitykeys, quantities,
                 lowercasenames, deadlines, trips, projects, choices, channels, ended, meaning)
#: Changes with any of :data:`_RULE_MODULES`: relations a run read with other rules are read
#: again (and with or without the sentence model meaning.py reads by).
_RULES = md5_hex(b"".join(Path(m.__file__).read_bytes() for m in _RULE_MODULES))


def _rules() -> str:
    return f"{_RULES}:{'meaning' if meaning.available() else 'patterns'}"


_REL_FIELDS = [x.name for x in fields(relationrecord.Relation)]


def _relation_key(f: dict) -> str:
    return md5_hex(f["text"] + "\x00" + f.get("antecedent", ""))[:20]


def _known_relations(state: DreamState, facts: list[dict]) -> dict[int, list]:
    """id(fact) → its relations, for the facts whose relations the last run read with the
    same rules (``state.relations``): a sentence's relations are a function of its text
    and antecedent alone (relations.py is regular expressions, meaning.py a fixed local
    model), so a fact is read once."""
    rec = state.relations or {}
    if rec.get("rules") != _rules():
        return {}
    known = rec.get("facts") or {}
    out: dict[int, list] = {}
    for f in facts:
        got = known.get(_relation_key(f))
        if got is not None:
            out[id(f)] = [relationrecord.Relation(*x) for x in got]
    return out


def _keep_relations(state: DreamState, facts: list[dict], rel_cache: dict[int, list]) -> None:
    """What the next run reuses (:func:`_known_relations`): every current fact's relations."""
    state.relations = {"rules": _rules(), "facts": {
        _relation_key(f): [[getattr(r, a) for a in _REL_FIELDS] for r in rel_cache[id(f)]]
        for f in facts if id(f) in rel_cache}}


def _summaries(w: _Build) -> None:
    """Each dated session's summary, and ``sessions/index.md`` listing every session."""
    sessions = w.state.sessions
    idx_lines = ["# Sessions", ""]
    for sid in w.order:
        ss = sessions[sid]
        claims = []
        for anchor, speaker, sent in ss["summary"]:
            req = w.forgotten_by(sent)
            if req:
                w.forgotten[req] += 1
                continue
            claims.append(Claim(f"{speaker}: {_quote(sent)}",
                                turn_ref(sid, anchor), ss.get("date"), "Facts"))
        title = ss["title"]
        if w.forgotten_by(title):
            title = " & ".join(ss["participants"]) or "Session"
        idx_lines.append(f"- {sid} | {ss.get('date') or 'undated'} | {title}")
        if not ss.get("date"):
            continue  # a summary is dated: the transcript's missing date is reported on it
        w.files[summary_path(sid)] = w.synth.summary(
            sid, ss.get("date"), title, ss["participants"], ss["turns"], claims)
    w.files[SESSIONS_INDEX] = "\n".join(idx_lines) + "\n"


def _named_helpers(sessions: dict[str, dict], order: list[str]) -> set[str]:
    """A named assistant ("Aria"), judged over all sessions: its turns are no facts."""
    service: dict[str, list[int]] = {}
    for sid in order:
        for spk, (n, k) in (sessions[sid].get("service") or {}).items():
            c = service.setdefault(spk, [0, 0])
            c[0] += n
            c[1] += k
    return speakernames.named_assistants(service)


def _role_names(sessions: dict[str, dict], order: list[str]) -> dict[str, str]:
    """A role speaker that stands for the user ("User") → the name the sessions give it."""
    role_name: dict[str, Counter] = defaultdict(Counter)
    for sid in order:
        for spk, name in (sessions[sid].get("full_names") or {}).items():
            if is_role(spk):
                role_name[spk][name] += 1
    return {r: sorted(c.items(), key=lambda kv: (-len(kv[0].split()), -kv[1], kv[0]))[0][0]
            for r, c in role_name.items()}


def _pool(w: _Build) -> _Pool:
    """The facts of every session, a role speaker renamed, minus a named assistant's and
    the forgotten ones."""
    sessions, order = w.state.sessions, w.order
    helpers = _named_helpers(sessions, order)
    renamed = _role_names(sessions, order)
    # A "User" no session names, in a memory whose other sessions have the user speak by
    # name (an import of plain "User:/Assistant:" text beside them): the memory is one
    # person's, so "User" is the human who speaks most, not a second person.
    said = Counter(f["speaker"] for sid in order for f in sessions[sid]["facts"]
                   if not is_role(f["speaker"]) and f["speaker"] not in helpers)
    owner = sorted(said.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if said else None
    if owner:
        for sid in order:
            for f in sessions[sid]["facts"]:
                spk = f["speaker"]
                if spk not in renamed and spk.strip().lower() in subjectnames.USER_ROLES:
                    renamed[spk] = owner
    facts, asides = [], []
    for sid in order:
        said_here = sessions[sid]["facts"] + (sessions[sid].get("asides") or [])
        for f in said_here:
            if f["speaker"] in helpers:
                continue
            if f["speaker"] in renamed:
                f = {**f, "speaker": renamed[f["speaker"]],
                     "subjects": {(renamed[f["speaker"]] if n == f["speaker"] else n): t
                                  for n, t in f["subjects"].items()}}
            req = w.forgotten_by(f["text"]) or next(
                (r for s in f["subjects"] if (r := w.forgotten_by(s))), None)
            if req:
                if not f.get("aside"):
                    w.forgotten[req] += 1
                continue
            if f.get("aside"):
                asides.append(f)
                continue
            if says_nothing(f["text"]) and not meaning.extract(f["text"], f.get("antecedent", ""), f.get("project", "")):
                # "Sora City Lab is waiting on it.": what "it" is, another turn said ("She is
                # my boss from now on" says who, through its antecedent: a relation stays)
                continue
            facts.append(f)
    speakers = {f["speaker"] for f in facts} | {p for sid in order
                                                for p in sessions[sid].get("participants", [])}
    speakers |= set(renamed.values())
    speakers -= helpers
    return _Pool(helpers, renamed, facts, speakers, asides)


def _subjects(w: _Build, pool: _Pool, rel_cache: dict[int, list],
              owner_texts: Callable[[str], Sequence[str]] | None = None,
              ) -> tuple[subjects.Subjects, list[str]]:
    """The wiki's subjects, and the slugs that get a page (most mentioned first, within
    ``max_pages``); ``subs`` keeps only those."""
    sessions, order = w.state.sessions, w.order
    full_names: Counter = Counter()
    for sid in order:
        full_names.update(n for spk, n in (sessions[sid].get("full_names") or {}).items()
                          if not is_role(spk))
    if owner_texts is not None:
        full_names.update(_owner_full_name(w, pool, full_names, owner_texts))
    strong, anchored = strong_types(pool.facts, rel_cache)
    # whom a correction states something about is someone the user cares to have right
    live = [(cp, c) for cp, c in sorted(w.state.cards.items()) if not c.get("superseded_by")]
    anchored |= correction_anchors([c["text"] for _cp, c in live])
    values = preference_values(pool.facts, rel_cache)
    case: dict[str, list[int]] = {}
    for sid in order:
        for word, (lo, up) in (sessions[sid].get("case") or {}).items():
            c = case.setdefault(word, [0, 0])
            c[0] += lo
            c[1] += up
    cues: dict[str, Counter] = defaultdict(Counter)
    for sid in order:
        for name, votes in (sessions[sid].get("cues") or {}).items():
            cues[name].update(votes)
    # a live correction names subjects as a sentence does: whom it corrects gets a page even
    # when no turn states anything of them ("Yusuf Demir's email is now …" after requests only)
    said = [{"text": c["text"], "speaker": "", "session": "", "anchor": cp, "order": 0, "subjects": {},
             "names": [n for n, _p in capitalised_runs(c["text"])], "about_speaker": False, "when": []}
            for cp, c in live]
    subs = subjects.build(pool.facts + said, pool.speakers, w.settings, strong, extra_names=full_names,
                          anchored=anchored, case=case, exclude=pool.helpers | values, cues=cues)
    hand = w.state.hand
    # a page a person deleted retires its subject (see edits.py)
    qualifying = [s for s in subs.by_slug if not hand.get(page_path(s), {}).get("deleted")]
    qualifying.sort(key=lambda s: (-len(subs.by_slug[s].turns), s))
    qualifying = qualifying[: w.settings.max_pages]
    qset = set(qualifying)
    for s in list(subs.by_slug):
        if s not in qset:
            subs.by_slug.pop(s)
    subs.alias_of = {n: s for n, s in subs.alias_of.items() if s in qset}
    return subs, qualifying


def _owner_full_name(w: _Build, pool: _Pool, full_names: Counter,
                     owner_texts: Callable[[str], Sequence[str]]) -> list[str]:
    """The user's full name from outside the sessions, when the sessions call them by one
    word only: the most frequent run of two or three capitalised words that starts with that
    word in ``owner_texts`` (a memory's GUIDE.md names whom it assists; a page someone
    keeps for them is titled with their full name). One page per person: "Nadia" and the
    kept "Nadia Rahman" are one subject."""
    spoken = Counter(f["speaker"] for f in pool.facts
                     if not is_role(f["speaker"]) and f["speaker"] not in pool.helpers)
    if not spoken:
        return []
    user = sorted(spoken.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    if " " in user or any(n.split()[0] == user for n in full_names if " " in n):
        return []  # a full name already, or the sessions give it
    found: Counter = Counter()
    for text in owner_texts(user):
        for name, _pos in capitalised_runs(text):
            toks = name.split()
            if 2 <= len(toks) <= 3 and toks[0] == user and all(t[:1].isupper() for t in toks) \
                    and subjectnames.clean_name(" ".join(toks[1:])) and not w.forgotten_by(name):
                found[name] += 1
    if not found:
        return []
    return [sorted(found.items(), key=lambda kv: (-kv[1], -len(kv[0].split()), kv[0]))[0][0]]


def _facts_by_page(facts: list[dict], subs: subjects.Subjects) -> dict[str, list[dict]]:
    """slug → the facts on its page, in date order."""
    by_slug: dict[str, list[dict]] = defaultdict(list)
    for f in facts:
        for slug in page_content.fact_slugs(f, subs):
            by_slug[slug].append(f)
    return by_slug


def _cooccurrence(facts: list[dict], subs: subjects.Subjects) -> dict[str, Counter]:
    """slug → how many facts it shares with each other page (a page's related pages)."""
    co: dict[str, Counter] = defaultdict(Counter)
    for f in facts:
        slugs = sorted(page_content.fact_slugs(f, subs))
        for a in slugs:
            for b in slugs:
                if a != b:
                    co[a][b] += 1
    return co


def _cards(w: _Build, subs: subjects.Subjects, user: subjects.Subject | None, titles: dict[str, str],
           qset: set[str]) -> _Cards:
    """Every correction card rendered; the live ones as pseudo-facts, and by the subjects
    they are about."""
    out = _Cards({}, defaultdict(list), [])
    for cp, card in sorted(w.state.cards.items()):
        if w.forgotten_by(card["text"]):
            w.forgotten[w.forgotten_by(card["text"])] += 1
            continue
        out.files[cp] = render_card(card)
        if card.get("superseded_by"):
            continue
        out.facts.append({"text": rewording.as_users_fix(card["text"]), "ref": cp, "date": card["created"][:10],
                          # a correction is the user's statement about their memory
                          "speaker": user.title if user is not None else "",
                          "session": "", "anchor": cp, "order": 0, "subjects": {},
                          "names": [n for n, _p in capitalised_runs(card["text"])],
                          "about_speaker": True, "when": []})
        for s in set(card["subjects"]) | set(subjects_in(card["text"], titles)):
            s = subs.slug_for(s) or s
            if s in qset:
                out.live[s].append((cp, card))
    return out


def _card_closes(w: _Build, cards: _Cards, ledger: fact_records.FactLedger) -> None:
    """Each live correction card re-rendered with the fact records it closed (``closes``):
    the card and the records say the same replacement."""
    closes: dict[str, list[str]] = defaultdict(list)
    for got in ledger.stays.values():
        for stay in got:
            if stay.ended_by is not None and stay.record is not None:
                ref = stay.ended_by.fact.get("ref")
                if ref in cards.files:
                    closes[ref].append(stay.record.id)
    for cp, ids in closes.items():
        cards.files[cp] = render_card(w.state.cards[cp], sorted(set(ids)))


def _corrected(w: _Build, cards: _Cards, by_slug: dict[str, list[dict]],
               subs: subjects.Subjects) -> dict[tuple[int, str], tuple[str, dict]]:
    """(id(fact), slug) → (card path, card) for the facts on a card's subjects' pages that
    the card corrects."""
    corrected: dict[tuple[int, str], tuple[str, dict]] = {}
    for slug, lst in cards.live.items():
        for cp, card in lst:
            negs = [norm(m.group(1)) for m in _NEGATED_RE.finditer(card["text"])]
            for f in by_slug[slug]:
                n = f" {norm(f['text'])} "
                # "not X" names what it corrects; otherwise the general check, reading the
                # subject's name in the card as the fact's speaker when the page is theirs
                if any(neg and f" {neg} " in n for neg in negs) or contradiction(
                        f["text"], card["text"], f["speaker"],
                        f["speaker"] if subs.slug_for(f["speaker"]) == slug else None):
                    corrected[(id(f), slug)] = (cp, card)
                    w.reasons[page_path(slug)].append(f"correction {cp} supersedes a fact")
    return corrected


def _reached(w: _Build, cards: _Cards, by_slug: dict[str, list[dict]], qualifying: list[str],
             corrected: dict[tuple[int, str], tuple[str, dict]]) -> None:
    """"…, not X" reaches every page that states X in the same context, named in it or
    not: those facts join ``corrected``."""
    for cp, card in sorted(w.state.cards.items()):
        if card.get("superseded_by") or cp not in cards.files:
            continue
        for new_v, old_v in reach.pairs(card["text"]):
            for slug in qualifying:
                for f in by_slug[slug]:
                    if (id(f), slug) not in corrected and (f.get("date") or "") <= card["created"][:10] \
                            and reach.states_old_value(f["text"], card["text"], old_v, new_v):
                        corrected[(id(f), slug)] = (cp, card)
                        w.reasons[page_path(slug)].append(f"correction {cp} supersedes a fact")


def _retired(contra: dict[tuple[int, str], tuple[dict, str]],
             corrected: dict[tuple[int, str], tuple[str, dict]],
             subs: subjects.Subjects) -> dict[tuple[int, str], tuple[str, str]]:
    """(id(fact), slug) → (why, citing source) for every fact a newer statement or a
    correction superseded on that page."""
    retired: dict[tuple[int, str], tuple[str, str]] = {}
    for (fid, slug), (new, _why) in contra.items():
        # what changed ("num: 47 → 52") names the old value too, which the newer statement
        # (the one this part cites) does not say: the reason goes to the commit message
        retired[(fid, slug)] = (f"— contradicted on {new['date']}: {page_content.statement(new, subs)}",
                                page_content.ref_of(new))
    for (fid, slug), (cp, card) in corrected.items():
        retired[(fid, slug)] = (f"— corrected {card['created'][:10]}: {card['text']}", cp)
    return retired


def _learned(w: _Build, groups: dict[tuple, list[page_content.Stated]], user: subjects.Subject | None,
             ledger: fact_records.FactLedger) -> dict[str, str]:
    """Cards from sessions: the user's preferences and standing rules (cards.py)."""
    user_title = user.title if user else ""
    learned = preference_cards(groups, user.slug if user else None, user_title, page_content.now_text,
                               page_content.ref_of, ledger.stays.get)
    said_rules = []
    sessions = w.state.sessions
    for sid in w.order:
        for anchor, _speaker, sent in sessions[sid].get("rules", []):
            if not w.forgotten_by(sent):
                said_rules.append(({"session": sid, "anchor": anchor, "date": sessions[sid].get("date")},
                                   sent))
    learned.update(rule_cards(said_rules, user.slug if user else None, page_content.ref_of))
    return {p: t for p, t in learned.items() if not w.forgotten_by(t)}


def _page_claims(w: _Build, inp: _PageInputs, slug: str, page_hand: dict | None) -> list[Claim]:
    """A page's claims in section order, minus those a person deleted from it, within
    ``max_page_chars``."""
    m = inp.models.get(slug) or page_content.PageModel()

    # claims a person deleted from this page are not re-added
    def keep(c: Claim) -> bool:
        return not edits.forgot(page_hand, _as_fact(c))

    claims = [Claim(c.text, c.source, None, "Now", c.extra, c.extra_source) for c in m.now if keep(c)]
    for cp, card in inp.cards.live.get(slug, []):
        if card.get("hand_page") == page_path(slug):
            continue  # the hand line citing it stays where the person put it
        # what is true now, without the replaced value ("…, not PDF"): that one is
        # under Superseded, and the current part of a page never states it
        claims.append(Claim(f"Correction: {reach.without_negations(card['text'])}", cp,
                            card["created"][:10], "Corrections"))
    claims += [c for c in m.timeline if keep(c)]
    claims += [Claim(c.text, c.source, None, "Superseded", c.extra, c.extra_source)
               for c in m.superseded if keep(c)]
    claims += inp.gathered.get(slug, [])
    claims += [c for c in inp.thread_claims.get(slug, []) if keep(c)]
    claims = readable.unique_lines(claims)
    if inp.subs.by_slug[slug].is_user:
        claims = readable.bound_lines(claims, w.settings.user_page_lines)
    return page_content.fit(claims, w.settings.max_page_chars)


def _page(w: _Build, inp: _PageInputs, slug: str) -> tuple[PageSpec, str]:
    """One subject's page: its spec (for INDEX.md) and its text, hand edits merged."""
    page_hand = w.state.hand.get(page_path(slug))
    claims = _page_claims(w, inp, slug, page_hand)
    # a page dated by its facts, or by its cards when a correction is all it holds
    model = inp.models.get(slug) or page_content.PageModel()
    dates = sorted(d for d in (f["date"] for f in inp.by_slug[slug]) if d) or sorted(
        c.date for c in claims if c.date) or sorted(  # or by its values' statements
        c.date for c in model.now + model.superseded if c.date)
    related = sorted(inp.co[slug].items(), key=lambda kv: (-kv[1], kv[0]))[:8]
    sub = inp.subs.by_slug[slug]
    gist = page_content.gist(inp.models.get(slug) or page_content.PageModel(), [sub.title, *sub.aliases], inp.gone)
    if not gist and dates:
        # no line says alone what it is about: when it was talked of is what is true
        n = len(sub.sessions)
        gist = (f"mentioned in {n} session{'s' if n != 1 else ''}, "
                + (f"{dates[0][:10]} – {dates[-1][:10]}" if dates[0][:10] != dates[-1][:10] else dates[0][:10]))
    spec = PageSpec(slug, sub.title, sub.type, claims, related, len(sub.turns),
                    len(sub.sessions), dates[0] if dates else None,
                    dates[-1] if dates else None, titles=inp.titles, aliases=list(sub.aliases),
                    is_user=sub.is_user, gist=gist,
                    importance=importance(sub, inp.by_slug[slug], inp.last_day,
                                          w.settings.index_half_life_days))
    text = edits.merge(w.synth.page(spec), page_path(slug), page_hand, inp.card_of, inp.qset,
                       w.forgotten_by)
    return spec, text


def _as_fact(c: Claim) -> dict:
    """The turn a claim cites, as edits.forgot reads a fact (session, anchor, text)."""
    path, _, anchor = c.source.partition("#")
    parts = path.split("/")
    return {"session": parts[1] if parts[0] == "sessions" and len(parts) > 2 else "",
            "anchor": anchor, "text": c.text}


def importance(sub: subjects.Subject, facts: list[dict], last_day: str | None, half_life: float) -> float:
    """A page's rank in INDEX.md: the user first; then mentions weighted by recency (a
    mention ``half_life`` days before the newest session counts half)."""
    if sub.is_user:
        return 1e9
    end = parse_day(last_day)
    score = 0.0
    for f in facts:
        d = parse_day(f.get("date"))
        age = (end - d).days if end and d else 0
        score += 0.5 ** (max(0, age) / half_life)
    return round(score, 6)


def page_contradictions(by_slug: dict[str, list[dict]], slugs: list[str],
                        already: dict[int, Any], cache: dict[str, list] | None = None,
                        ) -> dict[tuple[int, str], tuple[dict, str]]:
    """(id(old fact), slug) → (newer fact, why) for statements on one page that a later one
    by the same speaker contradicts. Only identical clause frames can contradict, so the
    clauses are bucketed by frame: linear in the page's facts.

    A page's result depends on its facts' texts and speakers alone: ``cache`` (slug →
    [hash of those, [[old, newer, why], …] by position on the page]) holds the last run's,
    reused for a page whose facts are the same, and is updated in place."""
    out: dict[tuple[int, str], tuple[dict, str]] = {}
    frames: dict[int, list] = {}
    seen: dict[str, list] = {}
    for slug in slugs:
        facts = [f for f in by_slug[slug] if id(f) not in already]  # chronological
        key = md5_hex(json.dumps([[f["text"], f["speaker"]] for f in facts]))
        hit = cache.get(slug) if cache is not None else None
        if hit is not None and hit[0] == key:
            for i, j, why in hit[1]:
                out[(id(facts[i]), slug)] = (facts[j], why)
            seen[slug] = hit
            continue
        pos = {id(f): i for i, f in enumerate(facts)}
        found: list[list] = []
        buckets: dict[tuple, list[tuple[dict, Any]]] = defaultdict(list)
        for f in facts:
            if id(f) not in frames:
                frames[id(f)] = [fr for fr in clause_frames(f["text"], f["speaker"]) if fr.stative]
            for fr in frames[id(f)]:
                buckets[(f["speaker"], fr.tokens)].append((f, fr))
        for entries in buckets.values():
            for i, (old, a) in enumerate(entries[:-1]):
                if (id(old), slug) in out:
                    continue
                # The newest statement of the frame decides: one restating the old value
                # keeps it live (Osaka → Kyoto → Osaka), one contradicting it supersedes it.
                for new, b in reversed(entries[i + 1:]):
                    if new is old or (b.slots, b.negated) == (a.slots, a.negated):
                        break
                    why = frames_contradict(a, b)
                    if why:
                        out[(id(old), slug)] = (new, why)
                        found.append([pos[id(old)], pos[id(new)], why])
                        break
        seen[slug] = [key, found]
    if cache is not None:
        cache.clear()
        cache.update(seen)
    return out


def render_index(specs: dict[str, PageSpec], synth: Synthesizer, cap_tokens: int) -> str:
    """``knowledge/INDEX.md``: one line per page, the user first, then by importance
    (mentions weighted by recency, :func:`importance`; ties by slug), each with a one-line
    current summary. Cut rule: when the next line would take the file over ``cap_tokens``
    (≈ chars / 4), stop and end with one line saying how many pages are not listed."""
    ranked = sorted(specs.values(), key=lambda s: (-s.importance, -s.mentions, s.slug))
    head = (f"# Knowledge index\n\n{len(ranked)} pages, the user first, then by recent "
            "relevance. Open `knowledge/<slug>.md` for the cited facts.\n\n")
    lines: list[str] = []
    size = len(head)
    reserve = 120  # room for the footer
    for i, spec in enumerate(ranked):
        line = synth.index_line(spec) + "\n"
        if estimate_tokens("x" * (size + len(line) + reserve)) > cap_tokens:
            rest = len(ranked) - i
            lines.append(f"\n… {rest} more page{'s' if rest != 1 else ''} with fewer mentions "
                         f"not listed (cap {cap_tokens} tokens); `ls knowledge/` shows all.\n")
            break
        lines.append(line)
        size += len(line)
    return head + "".join(lines)
