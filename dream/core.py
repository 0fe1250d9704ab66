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
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from brainfs.backend.keys import DREAM_SKILL_KEY, is_internal
from brainfs.cache.search.chunker import human_date, split_frontmatter
from brainfs.cache.search.forget import FORGET_DIR, norm, request_phrases
from brainfs.cache.search.forget import is_request as is_forget_request

from . import edits as E
from . import reach, redact
from . import text as T
from .corrections import CARDS_DIR, CORRECTIONS_DIR, merge_twins, process_corrections, twins
# `brainfs correct` (fs/cli, fs/api) imports the event writer from here
from .corrections import correction_event as correction_event
from .entities import Extractor, get_extractor
from .extract import EXTRACTION, extract_session
from .progress import Progress
from .settings import Settings, default_skill, settings_from
from .state import STATE_PATH, STATE_VERSION, DreamState
from .synth import DeterministicSynthesizer, Synthesizer
from .threads import page_topics
from .validate import CITE_ANY_RE, INDEX_PATH, CorpusView, Problem, clear_parsed, frontmatter_of, validate_tree
from .verify import FileVerdict, Verifier, drop_lines
from .wiki import SESSIONS_INDEX, WikiInfo, build_wiki, forgotten_by

log = logging.getLogger(__name__)

SKILL_PATHS = (DREAM_SKILL_KEY, "DREAM.md")
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


def forget_phrases(tree: Tree, listing: dict[str, str]) -> list[tuple[str, str]]:
    """(request path, phrase) for every line of every ``forget/*.md`` request."""
    return [(p, ph) for p in sorted(listing) if is_forget_request(p)
            for ph in request_phrases(tree.read(p) or "")]


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
    cfg: Settings
    skill_hash: str
    transcripts: dict[str, str]            # session id → transcript path
    extractor: Extractor
    ex_name: str
    new_sessions: list[str]
    gone: list[str]
    forget_now: dict[str, str]
    hand_edits: list[E.Edit]
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


def dream(tree: Tree, *, synthesizer: Synthesizer | None = None, embedder=None,
          settings: dict | None = None, force: bool = False,
          now: _dt.datetime | None = None, progress: Progress | None = None) -> RunResult:
    """One run over ``tree``; nothing is written (see :func:`run_local` and sync).
    ``progress``: where phases and counts go (default: standard error when it is a terminal)."""
    t0 = time.monotonic()
    run = orient(tree, synthesizer or DeterministicSynthesizer(), settings,
                 progress if progress is not None else Progress(), t0, now)
    if not (run.new_sessions or run.gone or force or inputs_changed(run)):
        return RunResult(nothing_new=True, stats={"seconds": round(time.monotonic() - t0, 3)})
    start_state(run)
    read_sessions(run)
    write_wiki(run)
    try:
        verify_and_validate(run, embedder)
        diff_against_previous(run)
    finally:
        clear_parsed()
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
    cfg = Settings.from_values(settings_from(default_skill(), corpus_skill, overrides=settings))
    skill_hash = T.md5_hex((corpus_skill or "") + json.dumps(settings or {}, sort_keys=True))
    transcripts = {m.group(1): p for p in listing if (m := _TRANSCRIPT_RE.match(p))}
    known = prev.sessions
    extractor = get_extractor(cfg.extractor)
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
        hand_edits=E.detect(tree, listing, prev.written),
        overwritten=E.overwritten(tree, listing, prev.owned))


def inputs_changed(run: _Run) -> bool:
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


def start_state(run: _Run) -> None:
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
    E.record(state, run.hand_edits)
    for twin, first in merge_twins(state.cards):
        run.reasons[twin].append(f"the same correction as {first}: merged into it")
        run.reasons[first].append(f"stands again: {twin} said the same")
    for s in run.gone:
        state.sessions.pop(s, None)
    run.state = state


# ---- phases 2 + 3: summarize, attach facts


def read_sessions(run: _Run) -> None:
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
        tr = T.parse_transcript(path, run.tree.read(path) or "")
        ex = extract_session(tr, cfg, run.extractor)
        old = state.sessions.get(sid)
        ex["etag"] = run.listing[path]
        state.sessions[sid] = ex
        run.read += 1
        why = (f"session {sid} grew ({old['turns']} → {ex['turns']} turns)" if old
               else f"new session {sid} ({ex['turns']} turns)")
        run.reasons[f"sessions/{sid}/summary.md"].append(why)
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
    topics_of = _published_topics(tree, listing)
    owner_texts = _owner_texts(tree, listing)
    files, rs, info = _build(run, phrases, topics_of, owner_texts)
    # a page a person wrote where dream now writes one: its lines are kept in dream's page
    adopted = E.adopt(tree, {p: listing[p] for p in files if p in listing}, run.prev.written,
                      run.prev.managed, state.hand, [ph for _p, ph in phrases])
    if adopted:
        E.record(state, adopted)
        for e in adopted:
            reasons[e.path].append(f"the page that was there is kept: {len(e.added)} line(s) under "
                                   f"'{E.ADOPTED_SECTION}'")
        files, rs, info = _build(run, phrases, topics_of, owner_texts)
    for e in run.hand_edits:
        reasons[e.path].append(e.describe())
    # a hand line contradicting its page becomes a correction event, written by this run
    run.hand_events = E.conflict_events(state, info.by_slug, info.titles,
                                        run.now or _dt.datetime.now(_dt.timezone.utc))
    new_cards = process_corrections(tree.read, listing, state, info.titles, extra=run.hand_events)
    # a correction reaches GUIDE.md, the user's own cards and hand pages that state the old value
    live = [(cp, c) for cp, c in sorted(state.cards.items())
            if not c.get("superseded_by") and not forgotten_by(c["text"], phrases)]
    external = reach.apply(tree.read, listing, live, CARDS_DIR,
                           managed=set(files) | set(run.prev.managed))
    # a forget request reaches the transcripts and the user's cards too (redact.py)
    corrected = set(external)
    run.redacted = redact.apply(lambda q: external.get(q) or tree.read(q), listing,
                                [ph for _p, ph in phrases], (CARDS_DIR, "notes/learned/"),
                                set(files) | set(run.prev.managed))
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
    for ep in corrected:
        reasons[ep].append("a correction supersedes what it stated: " + ", ".join(
            cp for cp, c in live if ep == reach.GUIDE_PATH or ep in c.get("supersedes_notes", [])))
    if new_cards or external:
        files, rs, info = _build(run, phrases, topics_of, owner_texts)
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


def _build(run: _Run, phrases, topics_of, owner_texts):
    """Render every managed file; a synthesizer that queued prompts (a model's) asks them
    now, several at once, and the wiki is rendered again with the answers (the second
    rendering of an unchanged page is a cache hit)."""
    got = build_wiki(run.state, phrases, run.cfg, run.synth, topics_of, owner_texts)
    if run.synth.ask_pending(run.prog):
        run.prog.phase("writing the wiki")
        got = build_wiki(run.state, phrases, run.cfg, run.synth, topics_of, owner_texts)
    return got


def _published_topics(tree: Tree, listing: dict[str, str]) -> Callable[[str], list[str]]:
    """slug → the thread topics of its page as the tree has it, in order (threads.py keeps
    that order, so a page is not rewritten for whole-wiki counts that moved a little)."""
    seen: dict[str, list[str]] = {}

    def topics(slug: str) -> list[str]:
        if slug not in seen:
            p = f"knowledge/{slug}.md"
            seen[slug] = page_topics(tree.read(p)) if p in listing else []
        return seen[slug]
    return topics


def _owner_texts(tree: Tree, listing: dict[str, str]) -> Callable[[str], list[str]]:
    """The user's one-word speaker name → texts of the tree that may give their full name:
    GUIDE.md ("You are assisting Nadia Rahman, …") and the titles of the pages under
    knowledge/ whose slug starts with that name (a person's page someone already keeps)."""
    def texts(first: str) -> list[str]:
        out = []
        if reach.GUIDE_PATH in listing:
            out.append(tree.read(reach.GUIDE_PATH) or "")
        prefix = f"knowledge/{T.slugify(first)}-"
        for p in sorted(listing):
            if p.startswith(prefix) and p.endswith(".md") and p.count("/") == 1:
                m = re.search(r"^title:\s*['\"]?(.+?)['\"]?\s*$", tree.read(p) or "", re.M)
                if m:
                    out.append(m.group(1))
        return out
    return texts


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
    return p.startswith("knowledge/") and p.endswith(".md") and p != INDEX_PATH or p.endswith("/summary.md")


def verify_and_validate(run: _Run, embedder) -> None:
    """Each claim against its source (unsupported ones dropped); then validation, where an
    erroneous file keeps its previous version (or the fallback rendering when it has none)."""
    files, listing, state = run.files, run.listing, run.state
    sources = _Sources(run)
    view = CorpusView(lambda p: p in listing or p in files,
                      lambda p: (set(sources.turns_of(p)) if sources.turns_of(p) is not None else None))
    cap_tokens = run.cfg.index_cap_tokens
    memo: dict = {}  # this run's validations of unchanged files (validate_tree)
    problems = validate_tree(files, view, cap_tokens, memo)
    # a session without a date is the transcript's problem (its summary is not written)
    problems += [Problem(run.transcripts[sid], "transcript-date",
                         "transcript frontmatter has no 'date' (ISO 8601, see cache/FORMAT.md): "
                         "not summarised; its facts are undated", "warning")
                 for sid in sorted(state.sessions)
                 if sid in run.transcripts and not state.sessions[sid].get("date")]
    run.citations, run.share_before = _citation_share(files, problems)
    run.verifier = _verify_claims(run, embedder, sources, problems)
    _exclude_errors(run, view, cap_tokens, problems, memo)
    # GUIDE.md and the user's cards are theirs, not dream's: changed, never managed
    files.update(run.external)
    # What is published: the share of valid citations after validation (must be 1.0).
    run.citations, run.share_after = _citation_share(
        files, [pr for pr in validate_tree(files, view, cap_tokens, memo) if pr.path not in run.excluded])
    # drop duplicate problems, keep order
    seen_pr: set = set()
    run.problems = [pr for pr in problems if not (str(pr) in seen_pr or seen_pr.add(str(pr)))]


#: Part of every verification record's key: another value checks every file again (bump it
#: when what verification reads from a source changes: ``_Sources``, ``verify.py``).
CHECK_VERSION = "check-v2"


def _verify_claims(run: _Run, embedder, sources: _Sources, problems: list[Problem]) -> Verifier:
    """Each claim of each page and summary against its source; an unsupported one is
    dropped from the file and reported. A file whose text and cited sources are what the
    last run verified gets that run's verdict again (``state.checked``) instead of each
    claim checked anew: the same claims against the same source texts, so the same result."""
    files, info, prog = run.files, run.info, run.prog
    verifier = Verifier(embedder, run.cfg.similarity_threshold,
                        run.cfg.lexical_threshold, cache=run.state.verified)
    prog.done(f"{info.pages} pages from {info.facts} facts")
    prog.phase("verifying claims", total=len([p for p in files if _checked(p)]))
    keys = _CheckKeys(run, sources, verifier)
    for p in sorted(files):
        if _checked(p):
            prog.step()
            key = keys.key(p, files[p])
            old = keys.previous.get(p)
            if old is not None and old[0] == key and not keys.alias_changed(files[p]):
                verdict = FileVerdict(old[1], old[2], list(old[3]))
                verifier.stats.claims += verdict.claims
                verifier.stats.rejected += verdict.rejected
                keys.reused += 1
                keys.records[p] = old
            else:
                # a changed file: each claim whose (claim, source) the last run judged is not
                # judged again (the user's page changes with every session, most of it not)
                keys.current = {}
                verdict = verifier.check_file(p, files[p], sources.text, known=keys.known,
                                              found=keys.found)
                keys.records[p] = [key, verdict.claims, verdict.rejected, verdict.bad_lines,
                                   keys.current]
            alt = run.synth.checked(p, files[p], verdict.bad_lines)
            if alt is not None:
                # a model's page with a rejected sentence falls back whole: the deterministic
                # rendering of the same facts, verified in its turn
                for ln in drop_lines(files[p], verdict.bad_lines)[1]:
                    problems.append(Problem(p, "unsupported-claim", "the model's sentence is not "
                                            f"supported by its source: {ln.strip()[:100]!r}", "warning"))
                problems.append(Problem(p, "synth-fallback", "a sentence failed verification: the "
                                        "deterministic rendering is published", "warning"))
                files[p] = alt
                verdict = verifier.check_file(p, alt, sources.text)
            new_text, rejected = drop_lines(files[p], verdict.bad_lines)
            if rejected:
                files[p] = new_text
                for ln in rejected:
                    problems.append(Problem(p, "unsupported-claim",
                                            f"dropped, not supported by its source: {ln.strip()[:100]!r}",
                                            "warning"))
    run.state.checked = keys.as_state()
    prog.done(f"files, {verifier.stats.claims} claims, {verifier.stats.rejected} rejected"
              + (f" ({keys.reused} files as last run)" if keys.reused else ""))
    run.checked_reused = keys.reused
    run.claims_reused = keys.claims_reused
    return verifier


class _CheckKeys:
    """The key of one file's verification: a hash of its text and of what each of its
    sources reads — a transcript's ETag (its turns and date), a hand line's text, a card's
    text and the user's name — within a context (the verifier's method and thresholds, the
    role speakers' names). The aliases a turn's source text adds ("Mara = Mara Lind") are
    the rest: a file citing a turn that contains an alias added, dropped or renamed since
    the last run is checked again."""

    def __init__(self, run: _Run, sources: _Sources, verifier: Verifier) -> None:
        self.run, self.sources = run, sources
        subs, renamed = run.info.subjects, run.info.renamed
        roles = sorted((spk, name, subs.by_slug[w].title if (w := subs.slug_for(name)) in subs.by_slug else "")
                       for spk, name in renamed.items())
        self.context = T.md5_hex(json.dumps([CHECK_VERSION, verifier.stats.method, verifier.sim,
                                             verifier.lex, roles]))
        last = run.state.checked or {}
        same = last.get("context") == self.context
        self.previous: dict[str, list] = (last.get("files") or {}) if same else {}
        old_aliases: dict[str, str] = (last.get("aliases") or {}) if same else {}
        self.aliases = dict(sorted(sources.aliases.items()))
        self.changed = sorted(a for a in set(self.aliases) | set(old_aliases)
                              if self.aliases.get(a) != old_aliases.get(a))
        self.records: dict[str, list] = {}
        self.reused = 0
        #: (claim, source) key → verdict, of every file the last run judged
        self.verdicts: dict[str, bool] = {}
        for rec in self.previous.values():
            if len(rec) > 4:
                self.verdicts.update(rec[4])
        self.current: dict[str, bool] = {}   # the file being checked: its verdicts
        self.claims_reused = 0
        self._refs: dict[str, tuple[str, bool]] = {}

    def key(self, path: str, text: str) -> str:
        meta, _body, bad = frontmatter_of(text)
        refs = (meta.get("sources") or []) if meta and not bad else []
        parts = [text]
        for ref in refs:
            parts.append(f"{ref}\x00{self._reads(ref)}")
        return T.md5_hex("\x01".join(parts))

    def _reads(self, ref: object) -> str:
        """What verification's source text for ``ref`` depends on (see the class)."""
        if not isinstance(ref, str):
            return ""
        run = self.run
        path, _, anchor = ref.partition("#")
        if anchor.startswith("hand-"):
            line = next((x["text"] for x in run.state.hand.get(path, {}).get("lines", [])
                         if x["id"] == anchor[5:]), None)
            return "hand:" + ("" if line is None else line)
        if _TRANSCRIPT_RE.match(path):
            return "turn:" + (run.listing.get(path) or "")
        # a card's source text names the user (verification reads it as their statement)
        who = f"by:{self.sources.user_title}:" if path.startswith(CARDS_DIR) else ""
        txt = run.files.get(path)
        if txt:
            return who + "file:" + T.md5_hex(txt)
        return who + "tree:" + (run.listing.get(path) or "")

    def _claim_key(self, claim: str, ref: str) -> tuple[str, bool]:
        """(the key of ``claim`` against ``ref``'s source, whether an alias the cited turn
        names changed since the last run)."""
        got = self._refs.get(ref)
        if got is None:
            dirty = False
            path, _, anchor = ref.partition("#")
            if self.changed and _TRANSCRIPT_RE.match(path):
                turn = (self.sources.turns_of(path) or {}).get(anchor)
                dirty = turn is not None and any(a in turn for a in self.changed)
            got = self._refs[ref] = (f"{ref}\x00{self._reads(ref)}", dirty)
        return T.md5_hex(claim + "\x00" + got[0])[:20], got[1]

    def known(self, claim: str, ref: str) -> bool | None:
        """The last run's verdict on ``claim`` against the same source text, if any."""
        key, dirty = self._claim_key(claim, ref)
        got = None if dirty else self.verdicts.get(key)
        self.claims_reused += got is not None
        return got

    def found(self, claim: str, ref: str, ok: bool) -> None:
        self.current[self._claim_key(claim, ref)[0]] = ok

    def alias_changed(self, text: str) -> bool:
        """Whether a turn ``text`` cites names an alias added, dropped or renamed since the
        last run (its source text then reads differently: the file is checked again)."""
        if not self.changed:
            return False
        meta, _body, bad = frontmatter_of(text)
        for ref in (meta.get("sources") or []) if meta and not bad else []:
            path, _, anchor = str(ref).partition("#")
            if _TRANSCRIPT_RE.match(path):
                turn = (self.sources.turns_of(path) or {}).get(anchor)
                if turn is not None and any(a in turn for a in self.changed):
                    return True
        return False

    def as_state(self) -> dict:
        return {"context": self.context, "aliases": self.aliases, "files": self.records}


def _exclude_errors(run: _Run, view: CorpusView, cap_tokens: int, problems: list[Problem],
                    memo: dict | None = None) -> None:
    """Errors exclude a file (its previous version stays, or the fallback rendering when
    there is none); repeated, since an exclusion can break links."""
    files, listing, excluded = run.files, run.listing, run.excluded
    for _round in range(3):
        errs = [pr for pr in validate_tree(files, view, cap_tokens, memo) if pr.severity == "error"]
        bad = {pr.path for pr in errs} - excluded
        if not bad:
            break
        problems += [pr for pr in errs if pr.path in bad]
        for p in bad:
            old = run.tree.read(p) if p in listing else None
            alt = run.synth.fallback(p) if _round == 0 else None
            if alt is not None and (old is None or forgotten_by(old, run.phrases)):
                # No previous version to keep (or it holds what a forget request removed):
                # the deterministic rendering of the same facts, itself validated next round.
                files[p] = alt
                problems.append(Problem(p, "synth-fallback", "rejected rendering replaced by the "
                                        "deterministic one", "warning"))
                continue
            excluded.add(p)
            if old is None:
                title = re.search(r"^title:\s*['\"]?(.*?)['\"]?\s*$", files.pop(p), re.M)
                _unlink_page(files, p, title.group(1) if title else None)
            else:
                files[p] = old


def _unlink_page(files: dict[str, str], page: str, title: str | None) -> None:
    """A page dropped for its own error takes its links along, not the pages that hold
    them: ``[[slug]]`` becomes plain text in every other staged file (one page past a
    parser's limit once took 1,993 pages that linked to it down with it)."""
    if not (page.startswith("knowledge/") and page.endswith(".md")):
        return
    slug = page[len("knowledge/"):-len(".md")]
    pat = re.compile(r"\[\[" + re.escape(slug) + r"(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
    for p, text in files.items():
        if "[[" + slug in text:
            files[p] = pat.sub(lambda m: m.group(1) or title or slug, text)


# ---- what changed


def diff_against_previous(run: _Run) -> None:
    """The changes against the tree as listed, and what the state records of them: the
    managed files and, per page, what dream wrote (to tell a hand edit next run)."""
    files, listing, state, excluded = run.files, run.listing, run.state, run.excluded
    managed_prev = set(run.prev.managed)
    for p, how in run.overwritten.items():
        # first: why a file nothing else changed is written (a derived file is not kept as
        # edited; what it should say goes through a correction, a note or the page)
        run.reasons[p].insert(0, f"{how} outside dream since its last run; written again from the "
                                 "memory (to change what it says: `brainfs correct`, a note, or "
                                 "the subject's page)")
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
            merged = p.startswith(CARDS_DIR) and run.reasons.get(p)  # a twin card (merge_twins)
            run.changes.append(Change(p, "delete", "; ".join(dict.fromkeys(merged)) if merged
                                      else _why_gone(run.previous[p], run.phrases)))
    state.managed = sorted((set(files) - excluded | (managed_prev & excluded)) - set(run.hand_events)
                           - set(run.external))
    state.owned = {p: T.md5_hex(files[p]) for p in state.managed if p in files and not E.is_page(p)}
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
        last = run.prev.written.get(p)
        if (not ids and last is not None and last["md5"] == listing.get(p) == T.md5_hex(files[p])
                and not any("hand" in e for e in last["lines"].values())):
            # the same text as the last run wrote, no hand line then or now: the same record
            written[p] = last
            continue
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
        "verify_files_reused": run.checked_reused, "verify_claims_reused": run.claims_reused,
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


def _why_gone(old: str | None, phrases: list[tuple[str, str]]) -> str:
    """A readable reason for a managed file that is gone."""
    if old and phrases:
        meta = split_frontmatter(old)[0] or {}
        title = str(meta.get("title") or "")
        req = forgotten_by(title, phrases)
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
