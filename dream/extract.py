"""Phases 2 and 3 of a dream run for one session: its summary sentences, its title, and the
facts it states with their subjects, dates and kinds (what the state keeps per session)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from . import gather
from . import procedures
from . import meaning
from . import projects
from . import relations
from . import retold
from . import speakernames
from . import subjectnames
from . import subjecttypes
from .cards import is_rule
from .entities import Extractor, get_extractor
from .patternwords import PARTICLES
from .prose import says_nothing
from .settings import Settings
from .subjectnames import is_role
from .text import (NOT_SUBJECT, Transcript, Turn, attribute_of, capitalised_runs, content_words, fact_kind,
                   imperative_openers, is_first_person, is_tool_turn, relative_dates, resolve_relative_dates,
                   quoted_sentences, sentences, words)
from .threads import NOT_TOPICS

#: What extract_session records per fact; another value re-extracts every session.
EXTRACTION = "facts-v27"  # v27: tastes by their kind (tastes.py: "I use VS Code for everything", "I'm a tea person", "Running is my thing"); greetings in many languages open a self-introduction ("Kia ora, Moana Tupou, marine biologist"); "X leads it" takes the project named before; a project's name as a title is no title ("the Kelp Farm Pilot"); "the last programmer on Vega" is no title; v26: a rate the speaker keeps is a relation ("I run about 25 km per week"), so its sentence is kept as a fact; v25: requests that say a value changed in passing are kept as asides (retold.py); v24: a quick fix typed without a subject is the user's; "(was X)"; a manager in lower case glossed in full ("my mgr is anjali now (anjali menon)"); a first fortnight at X; a new manager met "today"; "I'm under X now"; a move to a place in lower case; let go with the rest of a team; v23: a project of one's own named by what it is ("I'm writing a crime novel", "killed the budgeting app", "all my evenings go into a repair café"); v22: a tool kept or used for a use ("I keep my notes in Notion"); a trip said to go elsewhere ("my October trip is to Naples"); a phone said gone after it is no second phone; a format after "in" is no home; v21: a question that asks for a standing choice ("can all the charts be svg going forward?"); a speaker's full name with a lower-case particle ("Ilse de Vries"); v20: a lead said without its project takes the project its turn named before; an emoji ends a sentence; a run-on statement that ends asking something is read; v19: sentences inside a quotation are no statement of the speaker; what a correction states of a person named in full, read as they would say it; ends without a successor (retired, no manager, nobody leading, a deadline dropped); tone and reply language; subtitle formats; trips over a range of days; v18: the speaker's email, phone and handles (channels.py); v17: turn days (turn_times); chat without capitals split into sentences; "now??" is no question; possessed dates; "teh"
# v13: a statement that gathers a value (gather.py: "I went camping") is kept
# v12: habit preferences ("I always have X", "gone off X") are relations

#: A request to the assistant ("Please draft a note to Leila …") is not a fact about anyone.
#: What a request can state as a standing choice of the speaker's.
_STANDING = frozenset(("preference", "format", "contact"))
#: Words that make a request a standing one.
_FOR_GOOD_RE = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|from\s+here\s+on|in\s+(?:the\s+)?future|moving\s+forward"
                          r"|by\s+default)\b", re.I)
_REQUEST_RE = re.compile(r"^(?:please|can you|could you|would you|will you|help me|let's|let me|"
                         r"remind me|tell me|draft|write|send|show me|give me|find)\b", re.I)


def _score_sentence(s: str, tf: Counter, n_entities: int) -> float:
    # sorted: a float sum in set order would differ in its last bit with the hash seed, and
    # break ties between equal sentences differently from one process to the next
    cw = sorted(set(content_words(s)))
    if not cw:
        return 0.0
    return sum(math.log1p(tf[w]) for w in cw) / math.sqrt(len(cw) + 2) + 1.5 * n_entities


@dataclass
class _Session:
    """One transcript as the extraction reads it: who speaks, its sentences (tool turns
    left out) and how often each content word occurs."""

    tr: Transcript
    service: dict[str, list[int]]       # speaker → service-turn counts (speakernames.service_counts)
    helpers: set[str]                   # named assistants ("Aria: Sure, noted.")
    speakers: set[str]
    sents: list[tuple[Turn, str]]
    tf: Counter
    #: indices into ``sents`` of sentences inside a quotation (someone else's words)
    quoted: frozenset[int] = frozenset()

    def is_assistant(self, name: str) -> bool:
        # an assistant with a name is an assistant all the same
        return name in self.helpers or subjectnames.is_assistant(name)


@dataclass
class _Candidate:
    """One sentence with what the extraction found in it."""

    turn: Turn
    text: str
    ents: dict[str, str]                # subject name → entity type
    question: bool
    first_person: bool
    n_words: int
    score: float
    order: int                          # position in the session
    when: list[list[str]]               # [expression, resolved date]


def extract_session(tr: Transcript, settings: Settings, extractor: Extractor | None = None) -> dict:
    """Phase 2 and 3 for one session: summary sentences and facts with subjects.
    ``extractor`` finds the entities (default: :func:`get_extractor` of the settings'
    ``extractor``, spaCy NER when installed)."""
    extractor = extractor or get_extractor(settings.extractor)
    ses = _read(tr)
    cands = _candidates(ses, extractor)
    case = _case_counts(ses.sents)
    # standing rules the user sets ("Always cite sources.", "From now on, …"): cards.py
    rules = [[t.anchor, t.speaker, s] for t, s in ses.sents
             if not ses.is_assistant(t.speaker) and is_rule(s)]
    facts, asides = _facts(ses, cands, settings.facts_per_speaker_per_session)
    # how every sentence speaks of a name ("the workshop in X"), for the subject's type
    cues = {n: dict(c) for n, c in subjecttypes.sentence_cues(s for _, s in ses.sents).items()}
    # workflows told and amended, read over whole turns (a procedure spans sentences)
    human = [(t.anchor, t.speaker, t.text) for t in tr.turns
             if not ses.is_assistant(t.speaker) and not is_tool_turn(t.text)]
    return {"full_names": _full_names(ses, case), "case": case, "rules": rules, "cues": cues,
            "procedures": procedures.told_in(human), "amendments": procedures.amendments_in(human),
            "service": ses.service, "date": tr.date, "participants": sorted(ses.speakers),
            "turns": len(tr.turns), "title": _title(ses),
            "summary": _summary(ses, cands, settings.summary_sentences),
            "facts": facts, "asides": asides}


def _read(tr: Transcript) -> _Session:
    service = speakernames.service_counts([(t.speaker, t.text) for t in tr.turns])
    tf: Counter = Counter()
    sents: list[tuple[Turn, str]] = []
    quoted: set[int] = set()
    for t in tr.turns:
        if is_tool_turn(t.text):
            continue  # what a tool ran, not what anyone said (cache/FORMAT.md)
        parts = sentences(t.text)
        for s, inside in zip(parts, quoted_sentences(t.text, parts)):
            if inside:
                quoted.add(len(sents))
            sents.append((t, s))
            tf.update(content_words(s))
    return _Session(tr, service, speakernames.named_assistants(service),
                    set(tr.participants) | {t.speaker for t in tr.turns}, sents, tf, frozenset(quoted))


def _candidates(ses: _Session, extractor: Extractor) -> list[_Candidate]:
    """Every sentence with its subjects, dates and score."""
    tr, sents = ses.tr, ses.sents
    # one batched call per session (nlp.pipe), not one per sentence; a role's turns ("Assistant")
    # state no facts, so they are not sent to the model (the NER is most of dream's time)
    todo = [i for i, (t, _s) in enumerate(sents) if not ses.is_assistant(t.speaker)]
    found: list[list] = [[] for _ in sents]
    # one call per day the turns were said on (most sessions: one), so "yesterday" is read
    # from the turn's own day
    days = sorted({sents[i][0].day or tr.date or "" for i in todo})
    for day in days:
        some = [i for i in todo if (sents[i][0].day or tr.date or "") == day]
        for i, ents in zip(some, extractor.extract([sents[i][1] for i in some], day or None, ses.speakers)):
            found[i] = ents
    cands: list[_Candidate] = []
    for order, ((t, s), ents_s) in enumerate(zip(sents, found)):
        ents: dict[str, str] = {}
        verbs = imperative_openers(s)
        for e in ents_s:
            if e.is_subject and e.text != t.speaker and e.text not in verbs:
                ents.setdefault(e.text, e.type)
        when = [[e.text, e.resolved] for e in ents_s if e.type == "date" and e.resolved]
        # what the extractor did not resolve ("on Friday" is a DATE "Friday" to spaCy): the
        # sentence's relative dates, read in its tense (text.relative_dates, cache.search.dates)
        known_when = {x for w in when for x in w}
        when += [w for w in relative_dates(s, t.day or tr.date) if not known_when & set(w)]
        cands.append(_Candidate(t, s, ents, _asks(s), is_first_person(s),
                                len(words(s)), _score_sentence(s, ses.tf, len(ents)), order, when))
    return cands


def _summary(ses: _Session, cands: list[_Candidate], wanted: int) -> list[list[str]]:
    """The best sentences, in conversation order: [anchor, speaker, sentence]."""
    tr = ses.tr
    k = max(1, min(wanted, max(2, len(tr.turns) // 4)))
    pool = [c for c in cands if not c.question and c.n_words >= 5 and not says_nothing(c.text)]
    best = sorted(pool, key=lambda c: (-c.score, c.order))[:k]
    return [[c.turn.anchor, c.turn.speaker, resolve_relative_dates(c.text, tr.date)]
            for c in sorted(best, key=lambda c: c.order)]


def _title(ses: _Session) -> str:
    """The session's own title (an import's, a person's) when the transcript has one; else
    what it is about: the names its human speakers mention most ("Skagerrak Tide Atlas,
    Kenji Sato") and its most frequent topic words ("workflow, gauge"), never who spoke
    nor a contraction ("i've")."""
    if ses.tr.title:
        return ses.tr.title
    speakers = {x.lower() for x in ses.speakers}
    names: Counter = Counter()
    for t, s in ses.sents:
        if ses.is_assistant(t.speaker):
            continue
        for clause in re.split(r":\s+", s):
            for run, pos in capitalised_runs(clause):
                n = subjectnames.clean_name(run)
                if n and (pos > 0 or len(n.split()) > 1) and n.lower() not in speakers \
                        and not subjectnames.is_role(n) and n.split()[0].lower() not in speakers:
                    names[n] += 1
    # a name whose words the session comes back to ("the atlas") before one said in passing
    def weight(kv: tuple[str, int]) -> tuple:
        return (-kv[1], -max((ses.tf[w] for w in content_words(kv[0])), default=0),
                -len(kv[0]), kv[0])
    top_names = [n for n, _c in sorted(names.items(), key=weight)][:2]
    in_names = {w for n in top_names for w in content_words(n)}
    top_words = [w for w, _ in sorted(ses.tf.items(), key=lambda kv: (-kv[1], kv[0]))
                 if w not in speakers and w not in in_names and len(w) > 3 and w.isalpha()
                 and w not in NOT_TOPICS and w not in NOT_SUBJECT][:3 if not top_names else 2]
    title = ", ".join(top_names)
    if top_words:
        title = f"{title} — {', '.join(top_words)}" if title else ", ".join(top_words)
    return title or (" & ".join(sorted(ses.speakers)) if ses.speakers else "Session")


#: A statement in the first person said with surprise ("so uh im the team lead now??"): its
#: question marks doubled, its words a statement's.
_SURPRISE_RE = re.compile(r"^(?:(?:so|uh|um|well|ok|okay|and|but|lol|wait|omg|guess\s+what)[\s,]+)*"
                          r"(?:I['’]m|I\s+am|im|I['’]ve|ive|I\s+got|we['’]re)\b[^?]*\b(?:now|officially|finally)\b"
                          r"[^?]*[?!]*\?[?!]+\s*$", re.I)


#: Where a request or question joins a run-on sentence's statements ("… so we're going to
#: Calgary instead for the long weekend, and the kids want dinosaurs, so can you suggest …?").
_ASK_TAIL_RE = re.compile(r"(?:,|;|\band\b)\s+(?:so\s+)?(?:can|could|would|will)\s+you\b"
                          r"|,\s+(?:so\s+)?(?:what|how|which|where|any)\s+(?:is|are|do|does|should|would|can|ideas|tips)\b", re.I)
_ASKING_HEAD_RE = re.compile(r"\s*(?:do|does|did|is|are|was|were|can|could|would|should|will|what|how|why|where|"
                             r"when|which|who|whom|whose|any|have|has)\b", re.I)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|I['’]m|we|we['’]re|my|our)\b", re.I)


def _asks(sentence: str) -> bool:
    """Is ``sentence`` a question (a statement said with surprise is not, nor a run-on of
    first-person statements that ends asking something)?"""
    s = sentence.rstrip()
    if not s.endswith("?") or _SURPRISE_RE.match(s):
        return False
    tail = _ASK_TAIL_RE.search(s)
    head = s[:tail.start()] if tail else ""
    return not (len(head.split()) >= 6 and _FIRST_PERSON_RE.search(head) and not _ASKING_HEAD_RE.match(head))


def _fact(ses: _Session, c: _Candidate) -> dict:
    """The fact a sentence states, as the state keeps it."""
    tr, t = ses.tr, c.turn
    subjects = dict(c.ents)
    # every capitalised run, openers included: a name the extractor missed here is still
    # a mention once another sentence makes it a subject (counted in subjects.build)
    # after a colon a new clause starts ("Still true: Threshold for …"): its first word is
    # an opener, not a mid-sentence capital
    runs = [(n, pos) for clause in re.split(r":\s+", c.text)
            for n, pos in capitalised_runs(clause) if n != t.speaker and n not in subjects]
    # "Renée and I …": whoever stands beside "I" is a person, a name even as an opener
    with_me = {n for n, _pos in runs if re.search(rf"(?<![\w-]){re.escape(n)}\s+and\s+(?:I|me)\b", c.text)}
    names = [n for n, pos in runs if pos > 0 or n in with_me]
    lead = [n for n, pos in runs if pos == 0 and n not in with_me]  # an opener: a name only if known otherwise
    about_self = c.first_person and len(content_words(c.text)) >= 3
    return {"session": tr.session, "anchor": t.anchor, "ordinal": t.ordinal, "order": c.order,
            # a talk that runs over days: the turn's own day, where the source gave one
            "date": t.day or tr.date, "speaker": t.speaker,
            "text": resolve_relative_dates(c.text, t.day or tr.date),
            "subjects": subjects, "names": names, "lead": lead, "kind": fact_kind(c.text), "attr": None,
            "score": round(c.score, 4), "when": c.when, "about_speaker": about_self}


def _facts(ses: _Session, cands: list[_Candidate], cap: int) -> tuple[list[dict], list[dict]]:
    """Sentences that say something about a subject, in conversation order. A speaker that
    is a role ("Assistant") states no facts: its turns echo the user's or draft letters for
    them. Of a speaker's statements about themselves, at most ``cap`` plain events. Second:
    the asides, requests that say in passing a value changed ("can you redo the order form
    with 055 219 0364, my new number"): no fact of their own, read only as a later value of
    one the memory holds (:mod:`.retold`)."""
    facts: list[dict] = []
    asides: list[dict] = []
    per_speaker: dict[str, list[dict]] = defaultdict(list)
    for i, c in enumerate(cands):
        if c.n_words < 4 or c.order in ses.quoted or ses.is_assistant(c.turn.speaker):
            # a sentence inside a quotation is someone else's ("can you summarise this? 'Hi
            # all, I have a new address: …'"): not a statement of the speaker's
            continue
        # a question that asks for how things are to come from now on ("can all the charts be
        # svg going forward?") states a standing choice as a request does
        asks_for_good = c.question and _FOR_GOOD_RE.search(c.text) is not None
        asks_to_do = _REQUEST_RE.match(c.text) is not None
        if c.question and not asks_for_good:
            if asks_to_do and retold.may_say_a_change(c.text):
                asides.append({**_fact(ses, c), "aside": True})
            continue
        t = c.turn
        who = _antecedent(cands, i)
        project = _project_before(cands, i)
        rels = meaning.extract(c.text, who, project)
        if (asks_to_do or asks_for_good) and not any(r.attr in _STANDING for r in rels):
            # a request to the assistant is no fact, unless it states how things are to
            # come from now on ("Please send reports as PDF", "Give me temperatures in °F")
            if retold.may_say_a_change(c.text):
                asides.append({**_fact(ses, c), "aside": True})
            continue
        fact = _fact(ses, c)
        if who:
            fact["antecedent"] = who
        if project:
            # the project is the lead's subject: a subject of the sentence that leaves it out
            fact["project"] = project
            fact["subjects"] = {**fact["subjects"], project: "project"}
        has_rel = bool(rels)
        if has_rel:
            # what the turn says after it ("I've become a volunteer coach! day job unchanged,
            # still paralegal"): whether a new value replaces the old or joins it
            after = " ".join(d.text for d in cands[i + 1:i + 3] if d.turn is t)
            if after:
                fact["after"] = after[:300]
        if fact["about_speaker"]:
            fact["subjects"] = {t.speaker: "person", **fact["subjects"]}
            a = attribute_of(c.text)
            if a or has_rel:
                fact["attr"] = list(a) if a else ["relation", ""]
            per_speaker[t.speaker].append(fact)
        elif fact["subjects"] or fact["names"] or fact["lead"] or has_rel:
            facts.append(fact)
        elif retold.may_say_a_change(c.text):
            # "phew, the journal pushed it back, so 21 May now": no subject of its own, yet
            # the later value of one the speaker has
            asides.append({**fact, "aside": True})
    for spk, fs in per_speaker.items():
        # a statement that gathers a value ("I went camping", gather.py) is kept too: the
        # page's line across sessions is made of them
        keep = [f for f in fs if f["subjects"].keys() - {spk} or f["names"] or f["lead"] or f["attr"]
                or f["kind"] != "event" or gather.values(f["text"])]
        rest = sorted((f for f in fs if f not in keep), key=lambda f: (-f["score"], f["order"]))
        room = max(0, cap - len(keep))
        facts.extend(keep + rest[:room])
        asides.extend({**f, "aside": True} for f in rest[room:] if retold.may_say_a_change(f["text"]))
    facts.sort(key=lambda f: f["order"])
    asides.sort(key=lambda f: f["order"])
    return facts, asides


def _antecedent(cands: list[_Candidate], i: int) -> str:
    """The person a "he"/"she" of sentence ``i`` stands for when it names the speaker's
    manager ("a guy named Sandeep Gill runs the crew, so he's my boss now"; "The principal,
    Mrs Bisi Coker. She is my boss from now on."): the last name before the pronoun in the
    same turn — a person by the extractor, else a capitalised run of two or three words."""
    c = cands[i]
    at = relations.needs_antecedent(c.text)
    if at is None:
        return ""
    before = [(c.text[:at], c.ents)] + [(p.text, p.ents) for p in reversed(cands[:i])
                                        if p.turn is c.turn]
    # the speaker is never their own "he" or "she": a name that holds the speaker's
    # ("my brother-in-law is also called Lee Joon-young, and he just joined …", said by
    # Joon-young) is someone else's, or the speaker's own
    mine = set(c.turn.speaker.split())
    for text, ents in before:
        people = [n for n, typ in ents.items() if typ == "person" and n in text and not mine & set(n.split())]
        runs = [n for n, _p in capitalised_runs(text)
                if 2 <= len(n.split()) <= 4 and not mine & set(n.split())]
        pick = max(people, key=text.rfind) if people else (runs[-1] if runs else "")
        name = subjectnames.clean_name(pick) if pick else None
        if name:
            return name
    return ""


def _project_before(cands: list[_Candidate], i: int) -> str:
    """The project a lead said without its name stands for ("I'm a junior dev on the Orchard
    app (farm shop ordering). Tamsin Reid is the lead."): the last one named in passing
    before it in the same turn, else ""."""
    c = cands[i]
    got = projects.unnamed_lead(c.text)
    if got is None:
        return ""
    before = [p.text for p in reversed(cands[:i]) if p.turn is c.turn]
    if re.match(r"[^.;!?]*?\bit\b", c.text[got[1]:]):
        before = before[:1]  # "Sven Ekdahl leads it": only what the sentence before named
    for text in [c.text[:got[1]]] + before:
        if found := projects.last_project_named(text):
            return found
    return ""


def _case_counts(sents: list[tuple[Turn, str]]) -> dict[str, list[int]]:
    """How this session writes each word that it also capitalises: [lower case, capitalised
    mid-sentence] counts, so that subjects.py can tell "Slides" (a word) from "Sora" (a name)."""
    case: dict[str, list[int]] = {}
    for _t, s in sents:
        for clause in re.split(r":\s+", s):
            for k, w in enumerate(re.findall(r"[^\W\d_][\w'’\-]*", clause)):
                if w[0].isupper() and k > 0:
                    case.setdefault(w.lower(), [0, 0])[1] += 1
    for _t, s in sents:
        for w in re.findall(r"[^\W\d_][\w'’\-]*", s):
            if w[0].islower() and w in case:
                case[w][0] += 1
    return case


def _full_names(ses: _Session, case: dict[str, list[int]]) -> dict[str, str]:
    """A speaker's full name, from any capitalised run that starts with it ("I'm Ines
    Okafor", a letter signed "Noor Rahimi"); a "User" speaker's, when the conversation says it."""
    full: dict[str, str] = {}
    for _t, s in ses.sents:
        for name, _pos in capitalised_runs(s):
            toks = name.split()
            # a surname's particle in lower case ("Ilse de Vries", "Anna van der Berg")
            if 2 <= len(toks) <= 4 and toks[0] in ses.speakers and not is_role(toks[0]) and \
                    subjectnames.clean_name(" ".join(w for w in toks[1:] if w not in PARTICLES)) and \
                    toks[-1][:1].isupper() and \
                    all(w[:1].isupper() or w in PARTICLES for w in toks) and \
                    sum(w[:1].isupper() for w in toks) <= 3:
                full.setdefault(toks[0], name)
    common = {w for w, (lo, up) in case.items() if lo >= up and lo}
    for role, name in speakernames.self_names([(t.speaker, s) for t, s in ses.sents], common).items():
        full.setdefault(role, name)
    return full
