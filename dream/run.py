"""One dream run's record (:class:`Run`: its inputs and what each phase made of them) and
its first phases: orient (what is new, gone, edited by hand), the state the run starts from,
and the reading of new and grown sessions (summaries and facts, within the run's budgets)."""

from __future__ import annotations

import datetime as _dt
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field

from brainfs.backend.keys import DREAM_SKILL_KEY
from brainfs.cache.layout import CORRECTIONS_DIR, FORGET_DIR, TRANSCRIPT_RE, summary_path
from brainfs.cache.search.forget import is_request as is_forget_request
from brainfs.cache.search.forget import request_phrases

from . import edits
from .corrections import merge_twins, twins
from .entities import Extractor, get_extractor
from .extract import EXTRACTION, extract_session
from .progress import Progress
from .results import Change
from .settings import Settings, default_skill, settings_from
from .state import STATE_PATH, STATE_VERSION, DreamState
from .synth import Synthesizer
from .text import md5_hex, parse_transcript
from .trees import Tree
from .validate import Problem
from .verify import Verifier
from .wiki import WikiInfo

#: Where a corpus keeps dream's skill (its settings and instructions), first found first.
SKILL_PATHS = (DREAM_SKILL_KEY, "DREAM.md")


def forget_phrases(tree: Tree, listing: dict[str, str]) -> list[tuple[str, str]]:
    """(request path, phrase) for every line of every ``forget/*.md`` request."""
    return [(p, ph) for p in sorted(listing) if is_forget_request(p)
            for ph in request_phrases(tree.read(p) or "")]



@dataclass
class Run:
    """One run's inputs and what its phases made of them, in phase order."""

    tree: Tree
    synth: Synthesizer
    prog: Progress
    t0: float
    now: _dt.datetime | None
    listing: dict[str, str]
    raw_state: str | None
    prev: DreamState
    cfg: Settings
    skill_hash: str
    transcripts: dict[str, str]            # session id → transcript path
    extractor: Extractor
    ex_name: str
    new_sessions: list[str]
    gone: list[str]
    forget_now: dict[str, str]
    hand_edits: list[edits.Edit]
    #: derived files another writer changed or deleted since dream wrote them (path → how)
    overwritten: dict[str, str] = field(default_factory=dict)
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
    checked_reused: int = 0                # files whose verification was the last run's
    claims_reused: int = 0                 # claims of the other files judged as last run
    changes: list[Change] = field(default_factory=list)
    previous: dict[str, str | None] = field(default_factory=dict)


def orient(tree: Tree, synth: Synthesizer, settings: dict | None, prog: Progress, t0: float,
           now: _dt.datetime | None) -> Run:
    """Read the state, the settings, the listing: which sessions are new or grown, which
    are gone, which pages a person edited."""
    listing = tree.paths()
    raw_state = tree.read(STATE_PATH) if STATE_PATH in listing else None
    prev = DreamState.from_json(raw_state)
    corpus_skill = next((tree.read(p) for p in SKILL_PATHS if p in listing), None)
    cfg = Settings.from_values(settings_from(default_skill(), corpus_skill, overrides=settings))
    skill_hash = md5_hex((corpus_skill or "") + json.dumps(settings or {}, sort_keys=True))
    transcripts = {m.group(1): p for p in listing if (m := TRANSCRIPT_RE.match(p))}
    known = prev.sessions
    extractor = get_extractor(cfg.extractor)
    ex_name = f"{extractor.name}+{EXTRACTION}"
    if prev.extractor != ex_name:
        known = {}  # another entity extractor: every session's subjects are re-extracted
    return Run(
        tree=tree, synth=synth, prog=prog, t0=t0, now=now, listing=listing, raw_state=raw_state,
        prev=prev, cfg=cfg, skill_hash=skill_hash, transcripts=transcripts, extractor=extractor,
        ex_name=ex_name,
        new_sessions=sorted(s for s, p in transcripts.items() if known.get(s, {}).get("etag") != listing[p]),
        gone=sorted(set(prev.sessions) - set(transcripts)),
        forget_now={p: e for p, e in listing.items() if p.startswith(FORGET_DIR)},
        # pages a person edited (or deleted) since dream wrote them: their edits are inputs
        hand_edits=edits.detect(tree, listing, prev.written),
        overwritten=edits.overwritten(tree, listing, prev.owned))


def inputs_changed(run: Run) -> bool:
    """Whether anything but the sessions changed: forget requests, corrections, the skill
    and settings (``skill_hash``), the synthesizer, a hand edit, a derived file another
    writer changed (written again)."""
    corr_now = {p: e for p, e in run.listing.items() if p.startswith(CORRECTIONS_DIR)}
    return (run.forget_now != run.prev.forget
            or any(run.prev.corrections.get(p) != e for p, e in corr_now.items())
            or run.skill_hash != run.prev.skill_hash
            or run.synth.name != run.prev.synthesizer
            or bool(run.hand_edits)
            or bool(run.overwritten)
            or bool(twins(run.prev.cards)))


def start_state(run: Run) -> None:
    """This run's state: a copy of the last one, with the hand edits folded in."""
    state = run.prev.copy_of(run.raw_state)
    state.version = STATE_VERSION
    # A synthesizer that calls a model keeps its answers in the state (by prompt hash): an
    # unchanged page is not asked again and a rerun renders the same bytes.
    if run.synth.caches_answers:
        if state.synth_cache is None:
            state.synth_cache = {}
        run.synth.bind_cache(state.synth_cache)
    else:
        state.synth_cache = None
    edits.record(state, run.hand_edits)
    for twin, first in merge_twins(state.cards):
        run.reasons[twin].append(f"the same correction as {first}: merged into it")
        run.reasons[first].append(f"stands again: {twin} said the same")
    for s in run.gone:
        state.sessions.pop(s, None)
    run.state = state


def read_sessions(run: Run) -> None:
    """Extract new and grown sessions, within the run's budgets (the rest waits)."""
    cfg, state, prog = run.cfg, run.state, run.prog
    budget_n = cfg.max_sessions_per_run
    budget_s = cfg.time_budget_seconds
    prog.phase("reading sessions", total=len(run.new_sessions))
    for sid in run.new_sessions:
        if run.read >= budget_n or time.monotonic() - run.t0 > budget_s:
            run.deferred.append(sid)
            continue
        prog.step()
        path = run.transcripts[sid]
        tr = parse_transcript(path, run.tree.read(path) or "")
        ex = extract_session(tr, cfg, run.extractor)
        old = state.sessions.get(sid)
        ex["etag"] = run.listing[path]
        state.sessions[sid] = ex
        run.read += 1
        why = (f"session {sid} grew ({old['turns']} → {ex['turns']} turns)" if old
               else f"new session {sid} ({ex['turns']} turns)")
        run.reasons[summary_path(sid)].append(why)
    state.forget = run.forget_now
    state.skill_hash = run.skill_hash
    state.synthesizer = run.synth.name
    state.extractor = run.ex_name
    prog.done(f"{len(run.deferred)} deferred" if run.deferred else "")

