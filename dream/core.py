"""The dream run over a memory tree: orient, summarize, attach facts, update the wiki,
validate, verify — producing a staged tree and the list of changes. No S3 here: the tree is
anything with ``paths()`` and ``read()`` (:class:`LocalTree` for a directory);
:mod:`brainfs.dream.sync` puts the S3 layer, git history, lease and re-index on top.

Incremental: the state (``.brainfs/dream-state.json``) keeps, per session, the transcript's
ETag and what was extracted from it (summary sentences, facts with their turn). A run reads
only new or grown transcripts, then re-renders every managed file from the state; because
rendering is deterministic, an unchanged input gives byte-identical files and no change.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import logging
import math
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from brainfs.backend.keys import DREAM_SKILL_KEY, is_internal
from brainfs.cache.search.chunker import human_date, split_frontmatter
from brainfs.cache.search.forget import FORGET_DIR, norm, request_phrases
from brainfs.cache.search.forget import is_request as is_forget_request

from . import edits as E
from . import pages as P
from . import reach, redact
from . import relations as R
from . import subjects as S
from . import text as T
from .cards import is_rule, preference_cards, rule_cards
from .contradict import clause_frames, contradiction, frames_contradict
from .corrections import CARDS_DIR, CORRECTIONS_DIR, process_corrections, render_card, subjects_in
# `brainfs correct` (fs/cli, fs/api) imports the event writer from here
from .corrections import correction_event as correction_event
from .entities import Extractor, get_extractor
from .progress import Progress
from .state import STATE_PATH, STATE_VERSION, DreamState
from .subjects import is_role
from .synth import Claim, DeterministicSynthesizer, PageSpec, Synthesizer
from .threads import threads
from .validate import CITE_ANY_RE, INDEX_PATH, CorpusView, Problem, estimate_tokens, validate_tree
from .verify import Verifier

log = logging.getLogger(__name__)

SKILL_PATHS = (DREAM_SKILL_KEY, "DREAM.md")
SESSIONS_INDEX = "sessions/index.md"
#: What extract_session records per fact; another value re-extracts every session.
EXTRACTION = "facts-v10"
_TRANSCRIPT_RE = re.compile(r"^sessions/([^/]+)/transcript\.md$")


class Tree(Protocol):
    """A memory tree dream reads: every path with its ETag (MD5 of the content), and text."""

    def paths(self) -> dict[str, str]: ...

    def read(self, path: str) -> str | None: ...


class LocalTree:
    """A memory tree in a local directory (hidden VCS folders skipped)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._paths: dict[str, str] | None = None

    def paths(self) -> dict[str, str]:
        if self._paths is None:
            out = {}
            for p in sorted(self.root.rglob("*")):
                if p.is_file() and ".git" not in p.relative_to(self.root).parts:
                    out[p.relative_to(self.root).as_posix()] = T.md5_hex(p.read_bytes())
            self._paths = out
        return self._paths

    def read(self, path: str) -> str | None:
        p = self.root / path
        try:
            return p.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None


class DictTree:
    """A memory tree held in memory (``path → text``)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def paths(self) -> dict[str, str]:
        return {p: T.md5_hex(t) for p, t in self.files.items()}

    def read(self, path: str) -> str | None:
        return self.files.get(path)


# --------------------------------------------------------------------------- settings

def default_skill() -> str:
    return resources.files("brainfs.dream").joinpath("skill.md").read_text(encoding="utf-8")


def settings_from(*skills: str | None, overrides: dict | None = None) -> dict[str, Any]:
    """Settings from skill files' frontmatter (later ones win), then ``overrides``."""
    out: dict[str, Any] = {}
    for s in skills:
        if not s:
            continue
        meta, _b, _bad = split_frontmatter(s)
        for k, v in (meta or {}).items():
            if isinstance(v, (int, float, str, bool)):
                out[k] = v
    out.update(overrides or {})
    return out


# --------------------------------------------------------------------------- results


@dataclass
class Change:
    path: str
    action: str  # add / modify / delete
    reason: str

    def __str__(self) -> str:
        sign = {"add": "A", "modify": "M", "delete": "D"}[self.action]
        return f"{sign} {self.path} — {self.reason}"


@dataclass
class RunResult:
    """What one run would publish."""

    nothing_new: bool
    staged: dict[str, str] = field(default_factory=dict)       # full managed tree
    changes: list[Change] = field(default_factory=list)
    state: DreamState = field(default_factory=DreamState)
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    previous: dict[str, str | None] = field(default_factory=dict)  # old text of changed paths
    deferred: list[str] = field(default_factory=list)

    @property
    def changed(self) -> dict[str, str]:
        return {c.path: self.staged[c.path] for c in self.changes if c.action != "delete"}

    @property
    def deleted(self) -> list[str]:
        return [c.path for c in self.changes if c.action == "delete"]

    def diff(self) -> str:
        out = []
        for c in self.changes:
            old = (self.previous.get(c.path) or "").splitlines(keepends=True)
            new = ("" if c.action == "delete" else self.staged[c.path]).splitlines(keepends=True)
            out.append(f"# {c}\n")
            out.extend(difflib.unified_diff(old, new, f"a/{c.path}", f"b/{c.path}"))
        return "".join(out)

    def commit_message(self) -> str:
        counts = Counter(c.action for c in self.changes)
        head = (f"dream: {counts.get('add', 0)} added, {counts.get('modify', 0)} updated, "
                f"{counts.get('delete', 0)} deleted")
        body = [str(c) for c in self.changes if not is_internal(c.path)]
        st = self.stats
        tail = [f"sessions read: {st.get('sessions_read', 0)}; claims: {st.get('claims', 0)}; "
                f"rejected by verification: {st.get('rejected', 0)} ({st.get('verify_method')})"]
        if st.get("synth_note"):
            tail.append(st["synth_note"])
        if self.problems:
            tail.append(f"validation problems: {len(self.problems)}")
        return head + "\n\n" + "\n".join(body) + "\n\n" + "\n".join(tail) + "\n"


# --------------------------------------------------------------------------- helpers

def _quote(s: str) -> str:
    s = s.replace("“", "'").replace("”", "'").replace('"', "'")
    return f"“{s}”"


def forget_phrases(tree: Tree, listing: dict[str, str]) -> list[tuple[str, str]]:
    """(request path, phrase) for every line of every ``forget/*.md`` request."""
    return [(p, ph) for p in sorted(listing) if is_forget_request(p)
            for ph in request_phrases(tree.read(p) or "")]


def _forgotten(text: str, phrases: list[tuple[str, str]]) -> str | None:
    n = f" {norm(text)} "
    for path, ph in phrases:
        if f" {ph} " in n:
            return path
    return None


_NEGATED_RE = re.compile(r"\b(?:not|no longer|isn't|wasn't|aren't|instead of|rather than|never)\s+"
                         r"(?:a |an |the |in |at |to |called |named )?([\w'\-]+(?:\s+[A-Z][\w\-]+)*)", re.I)


# --------------------------------------------------------------------------- phase 2 + 3

#: A request to the assistant ("Please draft a note to Leila …") is not a fact about anyone.
_REQUEST_RE = re.compile(r"^(?:please|can you|could you|would you|will you|help me|let's|let me|"
                         r"remind me|tell me|draft|write|send|show me|give me|find)\b", re.I)

def _score_sentence(s: str, tf: Counter, n_entities: int) -> float:
    # sorted: a float sum in set order would differ in its last bit with the hash seed, and
    # break ties between equal sentences differently from one process to the next
    cw = sorted(set(T.content_words(s)))
    if not cw:
        return 0.0
    return sum(math.log1p(tf[w]) for w in cw) / math.sqrt(len(cw) + 2) + 1.5 * n_entities


def extract_session(tr: T.Transcript, settings: dict, extractor: Extractor | None = None) -> dict:
    """Phase 2 and 3 for one session: summary sentences and facts with subjects.
    ``extractor`` finds the entities (default: :func:`get_extractor` of the settings'
    ``extractor``, spaCy NER when installed)."""
    extractor = extractor or get_extractor(str(settings.get("extractor", "auto")))
    # an assistant with a name ("Aria: Sure, noted.") is an assistant all the same
    service = S.service_counts([(t.speaker, t.text) for t in tr.turns])
    helpers = S.named_assistants(service)

    def is_assistant(name: str) -> bool:
        return name in helpers or S.is_assistant(name)

    speakers = set(tr.participants) | {t.speaker for t in tr.turns}
    tf: Counter = Counter()
    sents: list[tuple[T.Turn, str]] = []
    for t in tr.turns:
        if T.is_tool_turn(t.text):
            continue  # what a tool ran, not what anyone said (cache/FORMAT.md)
        for s in T.sentences(t.text):
            sents.append((t, s))
            tf.update(T.content_words(s))
    # one batched call per session (nlp.pipe), not one per sentence; a role's turns ("Assistant")
    # state no facts, so they are not sent to the model (the NER is most of dream's time)
    todo = [i for i, (t, _s) in enumerate(sents) if not is_assistant(t.speaker)]
    got = extractor.extract([sents[i][1] for i in todo], tr.date, speakers)
    found: list[list] = [[] for _ in sents]
    for i, ents in zip(todo, got):
        found[i] = ents
    cands: list[dict] = []
    for order, ((t, s), ents_s) in enumerate(zip(sents, found)):
        nwords = len(T.words(s))
        ents: dict[str, str] = {}
        verbs = T.imperative_openers(s)
        for e in ents_s:
            if e.is_subject and e.text != t.speaker and e.text not in verbs:
                ents.setdefault(e.text, e.type)
        when = [[e.text, e.resolved] for e in ents_s if e.type == "date" and e.resolved]
        # what the extractor did not resolve ("on Friday" is a DATE "Friday" to spaCy): the
        # sentence's relative dates, read in its tense (text.relative_dates, dateparser)
        known_when = {x for w in when for x in w}
        when += [w for w in T.relative_dates(s, tr.date) if not known_when & set(w)]
        question = s.rstrip().endswith("?")
        fp = T.is_first_person(s)
        score = _score_sentence(s, tf, len(ents))
        cands.append({"turn": t, "s": s, "ents": ents, "q": question, "fp": fp, "n": nwords,
                      "score": score, "order": order, "when": when})
    # Summary: best sentences, in conversation order.
    k = int(settings.get("summary_sentences", 5))
    k = max(1, min(k, max(2, len(tr.turns) // 4)))
    pool = [c for c in cands if not c["q"] and c["n"] >= 5]
    best = sorted(pool, key=lambda c: (-c["score"], c["order"]))[:k]
    summary = [[c["turn"].anchor, c["turn"].speaker, T.resolve_relative_dates(c["s"], tr.date)]
               for c in sorted(best, key=lambda c: c["order"])]
    top_words = [w for w, _ in sorted(tf.items(), key=lambda kv: (-kv[1], kv[0]))
                 if w not in {x.lower() for x in speakers} and len(w) > 3][:4]
    # the session's own title (an import's, a person's) when the transcript has one
    title = tr.title or (" & ".join(sorted(speakers)) if speakers else "Session") + (
        " — " + ", ".join(top_words) if top_words else "")
    # Facts: sentences that say something about a subject. A speaker that is a role
    # ("Assistant") states no facts: its turns echo the user's or draft letters for them.
    facts: list[dict] = []
    per_speaker: dict[str, list[dict]] = defaultdict(list)
    for c in cands:
        if c["q"] or c["n"] < 4:
            continue
        t: T.Turn = c["turn"]
        if is_assistant(t.speaker) or _REQUEST_RE.match(c["s"]):
            continue
        subjects = dict(c["ents"])
        # every capitalised run, openers included: a name the extractor missed here is still
        # a mention once another sentence makes it a subject (counted in subjects.build)
        # after a colon a new clause starts ("Still true: Threshold for …"): its first word is
        # an opener, not a mid-sentence capital
        runs = [(n, pos) for clause in re.split(r":\s+", c["s"])
                for n, pos in T.capitalised_runs(clause) if n != t.speaker and n not in subjects]
        names = [n for n, pos in runs if pos > 0]
        lead = [n for n, pos in runs if pos == 0]  # a sentence opener: a name only if known otherwise
        about_self = c["fp"] and len(T.content_words(c["s"])) >= 3
        fact = {"session": tr.session, "anchor": t.anchor, "ordinal": t.ordinal, "order": c["order"],
                "date": tr.date, "speaker": t.speaker,
                "text": T.resolve_relative_dates(c["s"], tr.date),
                "subjects": subjects, "names": names, "lead": lead, "kind": T.fact_kind(c["s"]), "attr": None,
                "score": round(c["score"], 4), "when": c["when"], "about_speaker": about_self}
        has_rel = bool(R.extract(c["s"]))
        if about_self:
            fact["subjects"] = {t.speaker: "person", **subjects}
            a = T.attribute_of(c["s"])
            if a or has_rel:
                fact["attr"] = list(a) if a else ["relation", ""]
            per_speaker[t.speaker].append(fact)
        elif subjects or names or lead or has_rel:
            facts.append(fact)
    # how this session writes each word that it also capitalises: [lower case, capitalised
    # mid-sentence] counts, so that subjects.py can tell "Slides" (a word) from "Sora" (a name)
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
    # a speaker's full name, from any capitalised run that starts with it ("I'm Ines Okafor",
    # a letter signed "Noor Rahimi")
    full: dict[str, str] = {}
    for _t, s in sents:
        for name, _pos in T.capitalised_runs(s):
            toks = name.split()
            if 2 <= len(toks) <= 3 and toks[0] in speakers and not is_role(toks[0]) and \
                    S.clean_name(" ".join(toks[1:])) and all(w[:1].isupper() for w in toks):
                full.setdefault(toks[0], name)
    # standing rules the user sets ("Always cite sources.", "From now on, …"): cards.py
    rules = [[t.anchor, t.speaker, s] for t, s in sents
             if not is_assistant(t.speaker) and is_rule(s)]
    # a "User" speaker's name, when the conversation says it
    common = {w for w, (lo, up) in case.items() if lo >= up and lo}
    for role, name in S.self_names([(t.speaker, s) for t, s in sents], common).items():
        full.setdefault(role, name)
    cap = int(settings.get("facts_per_speaker_per_session", 8))
    for spk, fs in per_speaker.items():
        keep = [f for f in fs if f["subjects"].keys() - {spk} or f["names"] or f["lead"] or f["attr"]
                or f["kind"] != "event"]
        rest = sorted((f for f in fs if f not in keep), key=lambda f: (-f["score"], f["order"]))
        room = max(0, cap - len(keep))
        facts.extend(keep + rest[:room])
    facts.sort(key=lambda f: f["order"])
    return {"full_names": full, "case": case, "rules": rules, "service": service,
            "date": tr.date, "participants": sorted(speakers), "turns": len(tr.turns),
            "title": title, "summary": summary, "facts": facts}


# --------------------------------------------------------------------------- phase 4


@dataclass
class WikiInfo:
    """What :func:`build_wiki` learned besides the files it rendered."""

    subjects: S.Subjects
    titles: dict[str, str]              # slug → title of every page
    by_slug: dict[str, list[dict]]      # slug → the page's facts, in date order
    renamed: dict[str, str]             # a role speaker ("User") → the name the sessions give
    pages: int = 0
    facts: int = 0
    superseded: int = 0
    corrected: int = 0
    contradictions: int = 0
    forgotten: dict[str, int] = field(default_factory=dict)  # forget request → facts dropped


def build_wiki(state: DreamState, phrases: list[tuple[str, str]], settings: dict,
               synth: Synthesizer) -> tuple[dict[str, str], dict[str, list[str]], WikiInfo]:
    """Render every managed file from the state. Returns (files, reasons, info)."""
    reasons: dict[str, list[str]] = defaultdict(list)
    files: dict[str, str] = {}
    sessions = state.sessions
    order = sorted(sessions, key=lambda s: (sessions[s].get("date") or "", s))
    forgotten_count: Counter = Counter()

    # summaries + sessions/index.md
    idx_lines = ["# Sessions", ""]
    for sid in order:
        ss = sessions[sid]
        claims = []
        for anchor, speaker, sent in ss["summary"]:
            req = _forgotten(sent, phrases)
            if req:
                forgotten_count[req] += 1
                continue
            claims.append(Claim(f"{speaker}: {_quote(sent)}",
                                f"sessions/{sid}/transcript.md#{anchor}", ss.get("date"), "Facts"))
        title = ss["title"]
        if _forgotten(title, phrases):
            title = " & ".join(ss["participants"]) or "Session"
        idx_lines.append(f"- {sid} | {ss.get('date') or 'undated'} | {title}")
        if not ss.get("date"):
            continue  # a summary is dated: the transcript's missing date is reported on it
        files[f"sessions/{sid}/summary.md"] = synth.summary(sid, ss.get("date"), title,
                                                            ss["participants"], ss["turns"], claims)
    files[SESSIONS_INDEX] = "\n".join(idx_lines) + "\n"

    # facts, minus forgotten ones
    # a named assistant ("Aria"), judged over all sessions: its turns are no facts
    service: dict[str, list[int]] = {}
    for sid in order:
        for spk, (n, k) in (sessions[sid].get("service") or {}).items():
            c = service.setdefault(spk, [0, 0])
            c[0] += n
            c[1] += k
    helpers = S.named_assistants(service)
    # a role speaker that stands for the user ("User") takes the name the sessions give it
    role_name: dict[str, Counter] = defaultdict(Counter)
    for sid in order:
        for spk, name in (sessions[sid].get("full_names") or {}).items():
            if is_role(spk):
                role_name[spk][name] += 1
    renamed = {r: sorted(c.items(), key=lambda kv: (-len(kv[0].split()), -kv[1], kv[0]))[0][0]
               for r, c in role_name.items()}
    facts = []
    for sid in order:
        for f in sessions[sid]["facts"]:
            if f["speaker"] in helpers:
                continue
            if f["speaker"] in renamed:
                f = {**f, "speaker": renamed[f["speaker"]],
                     "subjects": {(renamed[f["speaker"]] if n == f["speaker"] else n): t
                                  for n, t in f["subjects"].items()}}
            req = _forgotten(f["text"], phrases) or next(
                (r for s in f["subjects"] if (r := _forgotten(s, phrases))), None)
            if req:
                forgotten_count[req] += 1
                continue
            facts.append(f)

    speakers = {f["speaker"] for f in facts} | {p for sid in order for p in sessions[sid].get("participants", [])}
    speakers |= set(renamed.values())
    speakers -= helpers
    rel_cache: dict[int, list] = {}
    full_names: Counter = Counter()
    for sid in order:
        full_names.update(n for spk, n in (sessions[sid].get("full_names") or {}).items()
                          if not is_role(spk))
    strong, anchored = strong_types(facts, rel_cache)
    case: dict[str, list[int]] = {}
    for sid in order:
        for w, (lo, up) in (sessions[sid].get("case") or {}).items():
            c = case.setdefault(w, [0, 0])
            c[0] += lo
            c[1] += up
    subs = S.build(facts, speakers, settings, strong, extra_names=full_names, anchored=anchored,
                   case=case, exclude=helpers)
    hand = state.hand
    # a page a person deleted retires its subject (see edits.py)
    qualifying = [s for s in subs.by_slug if not hand.get(f"knowledge/{s}.md", {}).get("deleted")]
    qualifying.sort(key=lambda s: (-len(subs.by_slug[s].turns), s))
    qualifying = qualifying[: int(settings.get("max_pages", 2000))]
    qset = set(qualifying)
    for s in list(subs.by_slug):
        if s not in qset:
            subs.by_slug.pop(s)
    subs.alias_of = {n: s for n, s in subs.alias_of.items() if s in qset}
    titles = {s: subs.by_slug[s].title for s in qualifying}
    by_slug: dict[str, list[dict]] = defaultdict(list)
    for f in facts:
        for slug in P.fact_slugs(f, subs):
            by_slug[slug].append(f)

    co: dict[str, Counter] = defaultdict(Counter)
    for f in facts:
        slugs = sorted(P.fact_slugs(f, subs))
        for a in slugs:
            for b in slugs:
                if a != b:
                    co[a][b] += 1

    # general contradictions on each page: same speaker, same predicate frame, a different
    # object or the opposite polarity (see contradict.py); the newer statement wins
    contra = page_contradictions(by_slug, qualifying, {})
    for (_fid, slug), (_new, why) in contra.items():
        reasons[f"knowledge/{slug}.md"].append(f"newer statement supersedes an older one ({why})")

    # corrections → cards, and what they correct
    cards = state.cards
    card_files = {}
    live_cards: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    card_facts: list[dict] = []
    user = subs.user()
    for cp, card in sorted(cards.items()):
        if _forgotten(card["text"], phrases):
            forgotten_count[_forgotten(card["text"], phrases)] += 1
            continue
        card_files[cp] = render_card(cp, card)
        if not card.get("superseded_by"):
            card_facts.append({"text": card["text"], "ref": cp, "date": card["created"][:10],
                               # a correction is the user's statement about their memory
                               "speaker": user.title if user is not None else "",
                               "session": "", "anchor": cp, "order": 0, "subjects": {},
                               "names": [n for n, _p in T.capitalised_runs(card["text"])],
                               "about_speaker": True, "when": []})
            for s in set(card["subjects"]) | set(subjects_in(card["text"], titles)):
                s = subs.slug_for(s) or s
                if s in qset:
                    live_cards[s].append((cp, card))
    # a subject with nothing to say (a speaker whose turns state no fact, no card about it)
    # gets no page: a page is its cited lines, and one without any has no sources to cite
    empty = {s for s in qualifying if not by_slug[s] and not live_cards.get(s)}
    if empty:
        qualifying = [s for s in qualifying if s not in empty]
        qset -= empty
        titles = {s: t for s, t in titles.items() if s not in empty}
    corrected: dict[tuple[int, str], tuple[str, dict]] = {}
    for slug, lst in live_cards.items():
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
                    reasons[f"knowledge/{slug}.md"].append(f"correction {cp} supersedes a fact")
    # "…, not X" reaches every page that states X in the same context, named in it or not
    for cp, card in sorted(cards.items()):
        if card.get("superseded_by") or cp not in card_files:
            continue
        for new_v, old_v in reach.pairs(card["text"]):
            for slug in qualifying:
                for f in by_slug[slug]:
                    if (id(f), slug) not in corrected and (f.get("date") or "") <= card["created"][:10] \
                            and reach.states_old_value(f["text"], card["text"], old_v, new_v):
                        corrected[(id(f), slug)] = (cp, card)
                        reasons[f"knowledge/{slug}.md"].append(f"correction {cp} supersedes a fact")
    retired: dict[tuple[int, str], tuple[str, str]] = {}
    for (fid, slug), (new, why) in contra.items():
        # what changed ("num: 47 → 52") names the old value too, which the newer statement
        # (the one this part cites) does not say: the reason goes to the commit message
        retired[(fid, slug)] = (f"— contradicted on {new['date']}: {P.statement(new, subs)}",
                                P.ref_of(new))
    for (fid, slug), (cp, card) in corrected.items():
        retired[(fid, slug)] = (f"— corrected {card['created'][:10]}: {card['text']}", cp)
    models, n_replaced, groups = P.build_models(facts, subs, settings, card_facts, retired, rel_cache)
    # cards from sessions: the user's preferences and standing rules (cards.py)
    user_title = user.title if user else ""
    learned = preference_cards(groups, user.slug if user else None, user_title, P.now_text, P.ref_of)
    said_rules = []
    for sid in order:
        for anchor, speaker, sent in sessions[sid].get("rules", []):
            if not _forgotten(sent, phrases):
                said_rules.append(({"session": sid, "anchor": anchor, "date": sessions[sid].get("date")},
                                   sent))
    learned.update(rule_cards(said_rules, user.slug if user else None, P.ref_of))
    learned = {p: t for p, t in learned.items() if not _forgotten(t, phrases)}
    replaced_facts = {id(st.fact) for m in models.values() for st in m.replaced_facts}
    thread_claims = threads(by_slug, qualifying, titles, facts,
                            lambda f, slug: (id(f), slug) in retired or id(f) in replaced_facts,
                            lambda f: P.statement(f, subs), P.ref_of, settings)

    pages: dict[str, str] = {}
    specs: dict[str, PageSpec] = {}
    card_of = {card["source"]: cp for cp, card in cards.items() if cp in card_files}
    last_day = max((f["date"] for f in facts if f.get("date")), default=None)
    for slug in qualifying:
        page_hand = hand.get(f"knowledge/{slug}.md")
        m = models.get(slug) or P.PageModel()
        claims: list[Claim] = []
        # claims a person deleted from this page are not re-added

        def keep(c: Claim, page_hand: dict | None = page_hand) -> bool:
            return not E.forgot(page_hand, _as_fact(c))

        claims += [Claim(c.text, c.source, None, "Now") for c in m.now if keep(c)]
        for cp, card in live_cards.get(slug, []):
            if card.get("hand_page") == f"knowledge/{slug}.md":
                continue  # the hand line citing it stays where the person put it
            # what is true now, without the replaced value ("…, not PDF"): that one is
            # under Superseded, and the current part of a page never states it
            claims.append(Claim(f"Correction: {R.without_negations(card['text'])}", cp,
                                card["created"][:10], "Corrections"))
        claims += [c for c in m.timeline if keep(c)]
        claims += [Claim(c.text, c.source, None, "Superseded", c.extra, c.extra_source)
                   for c in m.superseded if keep(c)]
        claims += [c for c in thread_claims.get(slug, []) if keep(c)]
        claims = P.fit(claims, int(settings.get("max_page_chars", 64000)))
        # a page dated by its facts, or by its cards when a correction is all it holds
        dates = sorted(d for d in (f["date"] for f in by_slug[slug]) if d) or sorted(
            c.date for c in claims if c.date)
        related = sorted(co[slug].items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        sub = subs.by_slug[slug]
        spec = PageSpec(slug, sub.title, sub.type, claims, related, len(sub.turns),
                        len(sub.sessions), dates[0] if dates else None,
                        dates[-1] if dates else None, titles=titles, aliases=list(sub.aliases),
                        is_user=sub.is_user, gist=P.gist(slug, m),
                        importance=importance(sub, by_slug[slug], last_day,
                                              float(settings.get("index_half_life_days", 120))))
        specs[slug] = spec
        pages[f"knowledge/{slug}.md"] = E.merge(synth.page(spec), f"knowledge/{slug}.md",
                                                page_hand, card_of, qset,
                                                lambda ln: _forgotten(ln, phrases))
    files.update(pages)
    files.update(card_files)
    files.update(learned)
    files[INDEX_PATH] = render_index(specs, synth, int(settings.get("index_cap_tokens", 2000)))
    info = WikiInfo(subs, titles, by_slug, renamed, pages=len(pages), facts=len(facts),
                    superseded=n_replaced, corrected=len(corrected), contradictions=len(contra),
                    forgotten=dict(forgotten_count))
    return files, reasons, info


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
            rels = rel_cache[id(f)] = R.extract(f["text"])
        for r in rels:
            if r.value_type and r.value:
                out[r.value][r.value_type] += 1
            if r.attr == "species" and r.subject:
                out[r.subject]["pet"] += 1
            if r.subject and (r.attr in ("employer", "manager") or (
                    r.attr == "role" and _JOB_RE.search(r.value))):
                out[r.subject]["person"] += 1
            if not r.subject and r.value_type and r.attr in _ANCHORS:
                anchored.add(r.value)
    return out, anchored


_TRAVEL_RE = re.compile(r"\b(?:travel(?:l)?ing to|travel(?:l)?ed to|went to|going to|flew to|flying to|"
                        r"trip to|visited|visiting|back from|moved to|arrived in|based in)\s+"
                        r"((?:[A-Z][\w\-]+)(?:\s+[A-Z][\w\-]+)*)")
#: A job title's last word ("grant manager", "hardware engineer", "audiologist").
_JOB_RE = re.compile(r"(?:er|or|ist|ian|ant|ent|eer|officer|manager|lead|head|chair|nurse|"
                     r"doctor|student|intern|advisor|adviser|organizer|organiser|coordinator)$")
_ANCHORS = frozenset("employer manager home project pet friend contact".split())


def _as_fact(c: Claim) -> dict:
    """The turn a claim cites, as edits.forgot reads a fact (session, anchor, text)."""
    path, _, anchor = c.source.partition("#")
    parts = path.split("/")
    return {"session": parts[1] if parts[0] == "sessions" and len(parts) > 2 else "",
            "anchor": anchor, "text": c.text}


def importance(sub: S.Subject, facts: list[dict], last_day: str | None, half_life: float) -> float:
    """A page's rank in INDEX.md: the user first; then mentions weighted by recency (a
    mention ``half_life`` days before the newest session counts half)."""
    if sub.is_user:
        return 1e9
    end = T.parse_day(last_day)
    score = 0.0
    for f in facts:
        d = T.parse_day(f.get("date"))
        age = (end - d).days if end and d else 0
        score += 0.5 ** (max(0, age) / half_life)
    return round(score, 6)


def page_contradictions(by_slug: dict[str, list[dict]], slugs: list[str],
                        already: dict[int, Any]) -> dict[tuple[int, str], tuple[dict, str]]:
    """(id(old fact), slug) → (newer fact, why) for statements on one page that a later one
    by the same speaker contradicts. Only identical clause frames can contradict, so the
    clauses are bucketed by frame: linear in the page's facts."""
    out: dict[tuple[int, str], tuple[dict, str]] = {}
    frames: dict[int, list] = {}
    for slug in slugs:
        buckets: dict[tuple, list[tuple[dict, Any]]] = defaultdict(list)
        for f in by_slug[slug]:  # chronological
            if id(f) in already:
                continue
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
                        break
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


# --------------------------------------------------------------------------- the run


@dataclass
class _Run:
    """One run's inputs and what its phases made of them, in phase order."""

    tree: Tree
    synth: Synthesizer
    prog: Progress
    t0: float
    now: _dt.datetime | None
    listing: dict[str, str]
    raw_state: str | None
    prev: DreamState
    cfg: dict[str, Any]
    skill_hash: str
    transcripts: dict[str, str]            # session id → transcript path
    extractor: Extractor
    ex_name: str
    new_sessions: list[str]
    gone: list[str]
    forget_now: dict[str, str]
    hand_edits: list[E.Edit]
    state: DreamState = field(default_factory=DreamState)
    reasons: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    deferred: list[str] = field(default_factory=list)
    read: int = 0
    phrases: list[tuple[str, str]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    info: WikiInfo | None = None
    hand_events: dict[str, str] = field(default_factory=dict)
    external: dict[str, str] = field(default_factory=dict)   # GUIDE.md, user cards, transcripts
    redacted: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    excluded: set[str] = field(default_factory=set)
    verifier: Verifier | None = None
    citations: int = 0
    share_before: float = 1.0
    share_after: float = 1.0
    changes: list[Change] = field(default_factory=list)
    previous: dict[str, str | None] = field(default_factory=dict)


def dream(tree: Tree, *, synthesizer: Synthesizer | None = None, embedder=None,
          settings: dict | None = None, force: bool = False,
          now: _dt.datetime | None = None, progress: Progress | None = None) -> RunResult:
    """One run over ``tree``; nothing is written (see :func:`run_local` and sync).
    ``progress``: where phases and counts go (default: standard error when it is a terminal)."""
    t0 = time.monotonic()
    run = orient(tree, synthesizer or DeterministicSynthesizer(), settings,
                 progress if progress is not None else Progress(), t0, now)
    if not (run.new_sessions or run.gone or force or inputs_changed(run, settings)):
        return RunResult(nothing_new=True, stats={"seconds": round(time.monotonic() - t0, 3)})
    start_state(run)
    read_sessions(run)
    write_wiki(run)
    verify_and_validate(run, embedder)
    diff_against_previous(run)
    return finish(run)


# ---- phase 1: orient


def orient(tree: Tree, synth: Synthesizer, settings: dict | None, prog: Progress, t0: float,
           now: _dt.datetime | None) -> _Run:
    """Read the state, the settings, the listing: which sessions are new or grown, which
    are gone, which pages a person edited."""
    listing = tree.paths()
    raw_state = tree.read(STATE_PATH) if STATE_PATH in listing else None
    prev = DreamState.from_json(raw_state)
    corpus_skill = next((tree.read(p) for p in SKILL_PATHS if p in listing), None)
    cfg = settings_from(default_skill(), corpus_skill, overrides=settings)
    skill_hash = T.md5_hex((corpus_skill or "") + json.dumps(settings or {}, sort_keys=True))
    transcripts = {m.group(1): p for p in listing if (m := _TRANSCRIPT_RE.match(p))}
    known = prev.sessions
    extractor = get_extractor(str(cfg.get("extractor", "auto")))
    ex_name = f"{extractor.name}+{EXTRACTION}"
    if prev.extractor != ex_name:
        known = {}  # another entity extractor: every session's subjects are re-extracted
    return _Run(
        tree=tree, synth=synth, prog=prog, t0=t0, now=now, listing=listing, raw_state=raw_state,
        prev=prev, cfg=cfg, skill_hash=skill_hash, transcripts=transcripts, extractor=extractor,
        ex_name=ex_name,
        new_sessions=sorted(s for s, p in transcripts.items() if known.get(s, {}).get("etag") != listing[p]),
        gone=sorted(set(prev.sessions) - set(transcripts)),
        forget_now={p: e for p, e in listing.items() if p.startswith(FORGET_DIR)},
        # pages a person edited (or deleted) since dream wrote them: their edits are inputs
        hand_edits=E.detect(tree, listing, prev.written))


def inputs_changed(run: _Run, settings: dict | None) -> bool:
    """Whether anything but the sessions changed: forget requests, corrections, the skill
    and settings, the synthesizer, a hand edit."""
    corr_now = {p: e for p, e in run.listing.items() if p.startswith(CORRECTIONS_DIR)}
    return (run.forget_now != run.prev.forget
            or any(run.prev.corrections.get(p) != e for p, e in corr_now.items())
            or run.skill_hash != run.prev.skill_hash
            or run.synth.name != run.prev.synthesizer
            or bool(run.hand_edits))


def start_state(run: _Run) -> None:
    """This run's state: a copy of the last one, with the hand edits folded in."""
    state = run.prev.copy()
    state.version = STATE_VERSION
    # A synthesizer that calls a model keeps its answers in the state (by prompt hash): an
    # unchanged page is not asked again and a rerun renders the same bytes.
    if run.synth.caches_answers:
        if state.synth_cache is None:
            state.synth_cache = {}
        run.synth.bind_cache(state.synth_cache)
    else:
        state.synth_cache = None
    E.record(state, run.hand_edits)
    for s in run.gone:
        state.sessions.pop(s, None)
    run.state = state


# ---- phases 2 + 3: summarize, attach facts


def read_sessions(run: _Run) -> None:
    """Extract new and grown sessions, within the run's budgets (the rest waits)."""
    cfg, state, prog = run.cfg, run.state, run.prog
    budget_n = int(cfg.get("max_sessions_per_run", 1000))
    budget_s = float(cfg.get("time_budget_seconds", 600))
    prog.phase("reading sessions", total=len(run.new_sessions))
    for sid in run.new_sessions:
        if run.read >= budget_n or time.monotonic() - run.t0 > budget_s:
            run.deferred.append(sid)
            continue
        prog.step()
        path = run.transcripts[sid]
        tr = T.parse_transcript(path, run.tree.read(path) or "")
        ex = extract_session(tr, cfg, run.extractor)
        old = state.sessions.get(sid)
        ex["etag"] = run.listing[path]
        state.sessions[sid] = ex
        run.read += 1
        why = (f"session {sid} grew ({old['turns']} → {ex['turns']} turns)" if old
               else f"new session {sid} ({ex['turns']} turns)")
        run.reasons[f"sessions/{sid}/summary.md"].append(why)
        run.reasons["__sessions__"].append(why)
    state.forget = run.forget_now
    state.skill_hash = run.skill_hash
    state.synthesizer = run.synth.name
    state.extractor = run.ex_name
    prog.done(f"{len(run.deferred)} deferred" if run.deferred else "")


# ---- phase 4: the wiki


def write_wiki(run: _Run) -> None:
    """Render every managed file; then corrections (to cards, pages, GUIDE.md and the
    user's cards) and forget requests (redacted at the source), and render again."""
    tree, listing, state, reasons = run.tree, run.listing, run.state, run.reasons
    run.prog.phase("writing the wiki")
    run.phrases = phrases = forget_phrases(tree, listing)
    files, rs, info = build_wiki(state, phrases, run.cfg, run.synth)
    for e in run.hand_edits:
        reasons[e.path].append(e.describe())
    # a hand line contradicting its page becomes a correction event, written by this run
    run.hand_events = E.conflict_events(state, info.by_slug, info.titles,
                                        run.now or _dt.datetime.now(_dt.timezone.utc))
    new_cards = process_corrections(tree.read, listing, state, info.titles, extra=run.hand_events)
    # a correction reaches GUIDE.md and the user's own cards that state the old value
    live = [(cp, c) for cp, c in sorted(state.cards.items())
            if not c.get("superseded_by") and not _forgotten(c["text"], phrases)]
    external = reach.apply(tree.read, listing, live, CARDS_DIR)
    # a forget request reaches the transcripts and the user's cards too (redact.py)
    run.redacted = redact.apply(lambda q: external.get(q) or tree.read(q), listing,
                                [ph for _p, ph in phrases], (CARDS_DIR, "notes/learned/"))
    for rp, txt in run.redacted.items():
        external[rp] = txt
        reasons[rp].append("forget request: phrase redacted")
        m = _TRANSCRIPT_RE.match(rp)
        if m and m.group(1) in state.sessions:
            # what the state holds for it is what the redacted transcript says (and its ETag,
            # so the next run does not read it again)
            ex = extract_session(T.parse_transcript(rp, txt), run.cfg, run.extractor)
            ex["etag"] = T.md5_hex(txt)
            state.sessions[m.group(1)] = ex
    for ep in external:
        reasons[ep].append("a correction supersedes what it stated: " + ", ".join(
            cp for cp, c in live if ep == reach.GUIDE_PATH or ep in c.get("supersedes_notes", [])))
    if new_cards or external:
        files, rs, info = build_wiki(state, phrases, run.cfg, run.synth)
        for cp in new_cards:
            card = state.cards[cp]
            reasons[cp].append(f"correction {card['source']}" + (
                f", supersedes {card['supersedes']}" if card.get("supersedes") else ""))
            if card.get("supersedes"):
                reasons[card["supersedes"]].append(f"superseded by {cp}")
            for s in card["subjects"]:
                reasons[f"knowledge/{s}.md"].append(f"correction {cp}")
    for k, v in rs.items():
        reasons[k].extend(v)
    for ep, content in run.hand_events.items():
        meta = split_frontmatter(content)[0] or {}
        files[ep] = content
        reasons[ep].append(f"hand edit of {meta.get('page')} contradicts a claim of the page")
    run.files, run.info, run.external = files, info, external


# ---- validation and semantic verification


class _Sources:
    """What a citation names, as verification reads it: a transcript turn with what it
    implies (the session's date, resolved relative dates, the aliases' full names), a hand
    line, a card with its date."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.turn_cache: dict[str, dict[str, str] | None] = {}
        self.day_of: dict[str, str | None] = {}
        subs = run.info.subjects
        user_sub = subs.user()
        self.user_title = user_sub.title if user_sub else ""
        self.aliases = {n: subs.by_slug[s].title for n, s in subs.alias_of.items()
                        if s in subs.by_slug and n != subs.by_slug[s].title}

    def turns_of(self, tpath: str) -> dict[str, str] | None:
        """anchor → "Speaker: text": a synthesizer that paraphrases ("Mara adopted a dog")
        names the speaker, which the turn's text alone does not contain."""
        if tpath not in self.turn_cache:
            txt = self.run.tree.read(tpath) if tpath in self.run.listing else None
            tr = T.parse_transcript(tpath, txt) if txt is not None else None
            self.turn_cache[tpath] = None if tr is None else {
                t.anchor: f"{t.speaker}: {t.text}" for t in tr.turns}
            self.day_of[tpath] = tr.date if tr is not None else None
        return self.turn_cache[tpath]

    def derived(self, tpath: str, text: str) -> str:
        """What a turn implies beyond its words, for verification: the session's date, the
        turn's relative dates resolved, and the full names of the aliases it uses."""
        day = self.day_of.get(tpath)
        extra = []
        if day:
            extra.append(f"session date {day} ({human_date(day)})")
            res = T.resolve_relative_dates(text, day)
            if res != text:
                extra.append(res)
                # a resolved day as a page writes it ("until 6 April 2026")
                extra += [human_date(m) for _e, m in T.relative_dates(text, day)
                          if re.fullmatch(r"\d{4}-\d{2}-\d{2}", m)]
        spk = text.split(":", 1)[0]
        renamed, subs = self.run.info.renamed, self.run.info.subjects
        if spk in renamed:  # "User: …" is the user speaking, by the name the sessions give
            who = subs.slug_for(renamed[spk])
            extra.append(f"{spk} = {renamed[spk]}" + (
                f" = {subs.by_slug[who].title}" if who in subs.by_slug else ""))
        extra += [f"{a} = {t}" for a, t in self.aliases.items() if a in text]
        return text + (" [" + "; ".join(extra) + "]" if extra else "")

    def text(self, ref: str) -> str | None:
        """The source text a citation names (None: it names nothing)."""
        path, _, anchor = ref.partition("#")
        if anchor.startswith("hand-"):
            # a hand line's source is the person's edit, kept in the state
            line = next((x["text"] for x in self.run.state.hand.get(path, {}).get("lines", [])
                         if x["id"] == anchor[5:]), None)
            return E.hand_text(line) if line is not None else None
        if _TRANSCRIPT_RE.match(path):
            ts = self.turns_of(path)
            txt = ts.get(anchor) if ts else None
            return self.derived(path, txt) if txt is not None else None
        files, listing = self.run.files, self.run.listing
        txt = files.get(path) or (self.run.tree.read(path) if path in listing else None)
        if txt is None:
            return None
        meta, body, _bad = split_frontmatter(txt)
        # a card's date is part of what it says (a correction line names when it was made)
        when = [str(meta.get(k))[:10] for k in ("created", "updated") if meta and meta.get(k)]
        # a correction is the user's own statement about their memory
        who = [f"by {self.user_title}"] if self.user_title and path.startswith(CARDS_DIR) else []
        tail = "; ".join([f"dated {', '.join(when)}"] * bool(when) + who)
        return body + (f" [{tail}]" if tail else "")


def _citation_share(files: dict[str, str], probs: list[Problem]) -> tuple[int, float]:
    """(citations, share valid) over the staged pages and summaries."""
    total = sum(len(CITE_ANY_RE.findall(txt)) for p, txt in files.items()
                if p.startswith("knowledge/") or p.endswith("summary.md"))
    bad = sum(1 for pr in probs if pr.code in ("cite-syntax", "cite-unresolved",
                                               "source-missing", "source-turn"))
    return total, (round(1 - bad / total, 4) if total else 1.0)


def _checked(p: str) -> bool:
    """A file whose claims verification reads: a page (not INDEX.md) or a summary."""
    return p.startswith("knowledge/") and p != INDEX_PATH or p.endswith("/summary.md")


def verify_and_validate(run: _Run, embedder) -> None:
    """Each claim against its source (unsupported ones dropped); then validation, where an
    erroneous file keeps its previous version (or the fallback rendering when it has none)."""
    files, listing, state, info, prog = run.files, run.listing, run.state, run.info, run.prog
    sources = _Sources(run)
    view = CorpusView(lambda p: p in listing or p in files,
                      lambda p: (set(sources.turns_of(p)) if sources.turns_of(p) is not None else None))
    cap_tokens = int(run.cfg.get("index_cap_tokens", 2000))
    problems = validate_tree(files, view, cap_tokens)
    # a session without a date is the transcript's problem (its summary is not written)
    problems += [Problem(run.transcripts[sid], "transcript-date",
                         "transcript frontmatter has no 'date' (ISO 8601, see cache/FORMAT.md): "
                         "not summarised; its facts are undated", "warning")
                 for sid in sorted(state.sessions)
                 if sid in run.transcripts and not state.sessions[sid].get("date")]
    run.citations, run.share_before = _citation_share(files, problems)
    verifier = Verifier(embedder, float(run.cfg.get("similarity_threshold", 0.45)),
                        float(run.cfg.get("lexical_threshold", 0.5)), cache=state.verified)
    prog.done(f"{info.pages} pages, {info.facts} facts")
    prog.phase("verifying claims", total=len([p for p in files if _checked(p)]))
    for p in sorted(files):
        if _checked(p):
            prog.step()
            new_text, rejected = verifier.verify_file(p, files[p], sources.text)
            if rejected:
                files[p] = new_text
                for ln in rejected:
                    problems.append(Problem(p, "unsupported-claim",
                                            f"dropped, not supported by its source: {ln.strip()[:100]!r}",
                                            "warning"))
    prog.done(f"{verifier.stats.claims} claims, {verifier.stats.rejected} rejected")
    # Errors exclude a file (its previous version stays); repeat: an exclusion can break links.
    excluded = run.excluded
    for _round in range(3):
        errs = [pr for pr in validate_tree(files, view, cap_tokens) if pr.severity == "error"]
        bad = {pr.path for pr in errs} - excluded
        if not bad:
            break
        problems += [pr for pr in errs if pr.path in bad]
        for p in bad:
            old = run.tree.read(p) if p in listing else None
            alt = run.synth.fallback(p) if _round == 0 else None
            if alt is not None and (old is None or _forgotten(old, run.phrases)):
                # No previous version to keep (or it holds what a forget request removed):
                # the deterministic rendering of the same facts, itself validated next round.
                files[p] = alt
                problems.append(Problem(p, "synth-fallback", "rejected rendering replaced by the "
                                        "deterministic one", "warning"))
                continue
            excluded.add(p)
            if old is None:
                files.pop(p)
            else:
                files[p] = old
    # GUIDE.md and the user's cards are theirs, not dream's: changed, never managed
    files.update(run.external)
    # What is published: the share of valid citations after validation (must be 1.0).
    run.citations, run.share_after = _citation_share(
        files, [pr for pr in validate_tree(files, view, cap_tokens) if pr.path not in excluded])
    # drop duplicate problems, keep order
    seen_pr: set = set()
    run.problems = [pr for pr in problems if not (str(pr) in seen_pr or seen_pr.add(str(pr)))]
    run.verifier = verifier


# ---- what changed


def diff_against_previous(run: _Run) -> None:
    """The changes against the tree as listed, and what the state records of them: the
    managed files and, per page, what dream wrote (to tell a hand edit next run)."""
    files, listing, state, excluded = run.files, run.listing, run.state, run.excluded
    managed_prev = set(run.prev.managed)
    for p in sorted(files):
        if p in excluded:
            continue
        if listing.get(p) == T.md5_hex(files[p]):
            continue
        old = run.tree.read(p) if p in listing else None
        run.previous[p] = old
        why = "; ".join(dict.fromkeys(run.reasons.get(p, []))) or _why(p, old, files[p], run.phrases)
        run.changes.append(Change(p, "modify" if old is not None else "add", why))
    for p in sorted(managed_prev - set(files)):
        if p in listing:
            run.previous[p] = run.tree.read(p)
            run.changes.append(Change(p, "delete", _why_gone(p, run.previous[p], run.phrases)))
    state.managed = sorted((set(files) - excluded | (managed_prev & excluded)) - set(run.hand_events)
                           - set(run.external))
    # What dream wrote, line by line, so that the next run can tell a hand edit (edits.py).
    written = {}
    for p in sorted(state.managed):
        if not E.is_page(p):
            continue
        if p in excluded:
            if p in run.prev.written:
                written[p] = run.prev.written[p]
            continue
        ids = {norm(E.strip_cites(x.get("shown", x["text"]))): x["id"]
               for x in state.hand.get(p, {}).get("lines", [])}
        written[p] = E.written_record(files[p], ids)
    state.written = written


def finish(run: _Run) -> RunResult:
    """The state's last fields, the stats, and the result."""
    state, info, verifier, synth = run.state, run.info, run.verifier, run.synth
    # The state names the synthesizer that actually rendered: a run that fell back from the
    # model differs from the configured name, so the next run renders again.
    state.synthesizer = synth.effective_name
    synth.prune_cache()
    state.last_run = (run.now or _dt.datetime.now(_dt.timezone.utc)).replace(microsecond=0).isoformat()
    stats = {
        "sessions_total": len(run.transcripts), "sessions_read": run.read,
        "sessions_deferred": len(run.deferred),
        "pages": info.pages, "facts": info.facts, "superseded": info.superseded,
        "contradictions": info.contradictions,
        "corrected": info.corrected, "forgotten": sum(info.forgotten.values()) + len(run.redacted),
        "redacted_files": len(run.redacted),
        "claims": verifier.stats.claims, "rejected": verifier.stats.rejected,
        "share_rejected": round(verifier.stats.share_rejected, 4),
        "verify_method": verifier.stats.method, "verify_model_calls": verifier.stats.embedded,
        "citations": run.citations,
        "share_valid_citations": run.share_after, "share_valid_citations_before_validation": run.share_before,
        "problems": len(run.problems), "excluded": sorted(run.excluded),
        "seconds": round(time.monotonic() - run.t0, 3),
    }
    report = synth.report()
    if report is not None:
        stats["synth"] = report
        stats["synth_note"] = synth.note()
    out_files = dict(run.files)
    out_files[STATE_PATH] = state.to_json()
    changes = run.changes
    if STATE_PATH not in [c.path for c in changes]:
        changes.append(Change(STATE_PATH, "modify" if STATE_PATH in run.listing else "add", "dream state"))
        run.previous[STATE_PATH] = run.raw_state
    return RunResult(False, out_files, changes, state, run.problems, stats, run.previous, run.deferred)


def _why(path: str, old: str | None, new: str, phrases: list[tuple[str, str]]) -> str:
    """A readable reason for a change without a recorded one: what the sources did."""
    if path == INDEX_PATH:
        return "index of pages changed"
    if path == SESSIONS_INDEX:
        return "session list changed"
    om = (split_frontmatter(old)[0] or {}) if old else {}
    nm = split_frontmatter(new)[0] or {}
    os_, ns = set(om.get("sources") or []), set(nm.get("sources") or [])
    added, removed = ns - os_, os_ - ns
    parts = []
    if old is None:
        parts.append("new page")
    if added:
        sess = sorted({a.split("/")[1] for a in added if a.startswith("sessions/")})
        parts.append(f"+{len(added)} cited turn{'s' if len(added) != 1 else ''}"
                     + (f" from {', '.join(sess[:5])}" + ("…" if len(sess) > 5 else "") if sess else ""))
    if removed:
        parts.append(f"−{len(removed)} cited turn{'s' if len(removed) != 1 else ''}"
                     + (" (forget request)" if phrases else ""))
    return "; ".join(parts) or "rewritten"


def _why_gone(path: str, old: str | None, phrases: list[tuple[str, str]]) -> str:
    if old and phrases:
        meta = split_frontmatter(old)[0] or {}
        title = str(meta.get("title") or "")
        req = _forgotten(title, phrases)
        if req:
            return f"forgotten ({req})"
        return "no facts left after forget requests or below min_mentions"
    return "no longer has enough facts"


def run_local(tree_dir: Path | str, staged_dir: Path | str | None = None, *,
              apply: bool = False, **kw) -> RunResult:
    """Run dream on a local memory tree. The staged tree (every file dream manages, as it
    would publish it) is written to ``staged_dir``; with ``apply`` the changes are also
    written into ``tree_dir`` (changed files replaced, deleted files removed)."""
    tree_dir = Path(tree_dir)
    res = dream(LocalTree(tree_dir), **kw)
    if res.nothing_new:
        return res
    if staged_dir is not None:
        staged = Path(staged_dir)
        for p, txt in res.staged.items():
            dst = staged / p
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(txt, encoding="utf-8")
    if apply:
        apply_to_dir(res, tree_dir)
    return res


def apply_to_dir(res: RunResult, root: Path) -> None:
    for p, txt in res.changed.items():
        dst = root / p
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".dream-tmp")
        tmp.write_text(txt, encoding="utf-8")
        tmp.replace(dst)
    for p in res.deleted:
        (root / p).unlink(missing_ok=True)
