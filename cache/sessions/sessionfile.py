"""Conversations → ``sessions/<id>/transcript.md`` in the corpus, idempotently.

The form written is the one ``cache/FORMAT.md`` documents (and ``cache/search/chunker.py`` and
dream read): frontmatter ``session``, ``date``, ``participants``, ``title``, ``source``;
one ``[D<n>:<t>] Speaker: text`` paragraph per turn.

* **Sessions.** A conversation resumed after :data:`SESSION_GAP` or more is a new session
  (part ``n`` of the conversation, anchors ``D<n>:…``): a session has one date, and "when
  did I …" is answered from it.
* **Ids.** ``<date>-<slug>-<hash8>``: the date first (path order is time order), a slug of
  the title for people, and eight hex digits of the conversation's source key and part —
  what finds the session again on the next import, even if the title changed since.
* **Growth.** A session already in the corpus keeps its text; the source's turns that it
  does not hold yet (in order) are appended with the next turn numbers. Importing the same
  source again writes nothing.
* **Nothing half-written.** Every source file is read and checked before the first upload;
  each transcript is one PUT of the whole file (conditional on the ETag it was read with).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import logging

import yaml
from brainfs.backend.errors import NoSuchKey, PreconditionFailed
from brainfs.backend.keys import path_problem
# the list of sessions dream keeps (``- id | date | title`` lines), re-exported for its readers
from brainfs.cache.layout import SESSIONS_INDEX as SESSIONS_INDEX
from brainfs.cache.layout import transcript_path
from brainfs.cache.search.chunker import TURN_RE, split_frontmatter
from brainfs.cache.search.forget import FORGET_DIR, is_request, redact, request_phrases
from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn, UnknownFormat
from brainfs.cache.sessions.importers import read_source, source_files
from brainfs.cache.sessions.options import ImportOptions
from brainfs.cache.search.text import slug_words

log = logging.getLogger(__name__)

#: A pause this long starts a new session of the same conversation: a working session's
#: breaks (lunch, a meeting) are shorter; a night or a return days later is longer.
SESSION_GAP = _dt.timedelta(hours=6)

#: Longest turn kept whole. A pasted log or file in a message would otherwise be one huge
#: passage (the embedding model reads only its first ~1,000 characters anyway); the cut is
#: marked in the text.
MAX_TURN_CHARS = 6000

#: Speaker names that are a role standing for the user, not a person; dream reads them as
#: the memory's owner (``dream/subjectnames.py`` USER_ROLES, the ones an import writes).
USER_ROLES = frozenset({"user", "human", "me"})

_ID_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-(?:.+-)?(?P<h>[0-9a-f]{8})$")
_HEADING_RE = re.compile(r"^#{1,6}\s")
_ANCHOR_RE = re.compile(r"^D(\d+):(\d+)$")


@dataclass
class Draft:
    """One session as the source has it now."""

    hash: str
    sid: str
    part: int
    date: _dt.datetime | None
    title: str | None
    source: str
    turns: list[Turn]
    #: the source gives each turn its own time: the transcript keeps it (``turn_times``)
    timed: bool = False
    #: where ``date`` came from, in words ("from its title ('3 November 2026')")
    dated: str = ""
    #: ``date`` is a time the source recorded (a log's timestamp, an export's create_time)
    stamped: bool = False


def _iso(t: _dt.datetime) -> str:
    return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Report:
    files: dict[str, int] = field(default_factory=dict)  # format → files read
    conversations: int = 0
    empty: int = 0
    new: int = 0
    grown: int = 0
    unchanged: int = 0
    retimed: int = 0  # sessions given the turn times they lacked, nothing else changed
    turns_added: int = 0
    tool_turns: int = 0
    rewritten: list[str] = field(default_factory=list)  # sessions whose source changed earlier turns
    skipped: list[str] = field(default_factory=list)  # files of no known format (in a directory)
    paths: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the files held that was left out
    bad_lines: int = 0  # lines of the sources left out as unreadable (each with a warning)
    indexed: int = 0  # new sessions added to sessions/index.md
    #: (session id, day, where the day came from, a time the source recorded) of new sessions
    dates: list[tuple[str, str, str, bool]] = field(default_factory=list)
    #: a role speaker that stands for the user ("User") → how many sessions written keep it
    roles_kept: dict[str, int] = field(default_factory=dict)

    def line(self, url: str) -> str:
        fmts = ", ".join(f"{k} {v}" for k, v in sorted(self.files.items()))
        out = (f"imported {sum(self.files.values())} file(s) ({fmts}) into {url}: "
               f"{self.new} new session(s), {self.grown} grown, {self.unchanged} unchanged; "
               f"{self.turns_added} turns written ({self.tool_turns} tool calls summarised)")
        if self.empty:
            out += f"; {self.empty} empty conversation(s) skipped"
        if self.retimed:
            out += f"; {self.retimed} given their turns' own times"
        if self.bad_lines:
            out += f"; {self.bad_lines} unreadable line(s) left out (see the warnings)"
        if self.indexed:
            out += f"; {self.indexed} added to {SESSIONS_INDEX}"
        return out

    def notes(self, listed: int = 10) -> list[str]:
        """What the import decided for the user, one line each: the date of each new session
        and why (those the source did not time itself first, ``listed`` at most), and a role
        speaker kept as written, which dream reads as the memory's owner."""
        out: list[str] = []
        shown = sorted(self.dates, key=lambda d: (d[3], d[0]))
        today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
        for sid, day, why, _stamped in shown[:listed]:
            # "Launch plan for 3 December" written in November: the title's day is a plan's
            late = " — a day still to come: give --date DATE if the talk was earlier" if day > today else ""
            out.append(f"{sid}: dated {day} {why}{late}")
        rest = shown[listed:]
        if rest:
            kinds: dict[str, int] = {}
            for _sid, _day, why, stamped in rest:
                kind = ("their own timestamps" if stamped else "--date" if why == "from --date"
                        else "the import's time" if why.startswith("at import")
                        else "a date their file states")
                kinds[kind] = kinds.get(kind, 0) + 1
            out.append(f"… and {len(rest)} more new session(s) dated by "
                       + ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])))
        for role, n in sorted(self.roles_kept.items()):
            out.append(f"speaker {role!r} kept as {role!r} in {n} session(s): dream takes {role!r} "
                       f"for the memory's owner (the person who speaks most in it); if {role!r} "
                       f"is someone else, give --speaker {role}=NAME (or the import_speakers "
                       f"setting)")
        return out


# --------------------------------------------------------------------------- drafts

def slug(text: str | None, words: int = 6, chars: int = 40) -> str:
    """A session id's name part: the first ``words`` slug words of ``text`` that fit in
    ``chars`` characters, whole words only ('' for no text)."""
    if not text:
        return ""
    toks = slug_words(text)[:words]
    out = ""
    for t in toks:
        if len(out) + len(t) + 1 > chars:
            break
        out = f"{out}-{t}" if out else t
    return out


def _hash(key: str, part: int) -> str:
    return hashlib.sha1((key if part == 1 else f"{key}#{part}").encode("utf-8")).hexdigest()[:8]


def drafts_of(conv: Conversation) -> list[Draft]:
    """A conversation's sessions: split where it paused for SESSION_GAP or more."""
    parts: list[list[Turn]] = []
    last: _dt.datetime | None = None
    for t in conv.turns:
        if not parts or (t.time and last and t.time - last >= SESSION_GAP):
            parts.append([])
        parts[-1].append(t)
        last = t.time or last
    # the first thing the user asked names the session (a slash command like /clear does not)
    first_user = next((t.text for t in conv.turns if not t.tool and not t.text.startswith("/")
                       and t.speaker.lower() in ("user", "human", "me")),
                      conv.turns[0].text if conv.turns else "")
    name = slug(conv.title) or slug(first_user)
    out = []
    for n, turns in enumerate(parts, 1):
        when = next((t.time for t in turns if t.time), None)
        own = conv.timed and when is not None
        if when is None and n == 1:
            when = conv.start
        # a plain transcript's day is the one it states, whatever time its first turn says
        stated = conv.fmt == "text" and not conv.dated.startswith("at import")
        why = "from its first turn's own time" if own and not stated else conv.dated
        h = _hash(conv.key, n)
        day = when.date().isoformat() if when else "undated"
        sid = "-".join(x for x in (day, name, h) if x)
        title = conv.title or (one_title(first_user) if first_user else None)
        if title and len(parts) > 1:
            title = f"{title} (part {n})"
        stamped = own or (conv.fmt != "text" and why.startswith("from ") and why != "from --date")
        out.append(Draft(h, sid, n, when, title, f"{conv.fmt} {conv.key.split(':', 1)[1]}", turns,
                         conv.timed, why, stamped))
    return out


def one_title(text: str) -> str:
    s = " ".join(text.split())
    return s if len(s) <= 80 else s[:79].rsplit(" ", 1)[0] + "…"


# --------------------------------------------------------------------------- rendering

def turn_body(text: str) -> str:
    """A turn's text as one paragraph: blank lines dropped, a line that would read as a new
    turn or a heading escaped with a backslash, cut at MAX_TURN_CHARS."""
    text = str(text).replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if len(text) > MAX_TURN_CHARS:
        cut = text[:MAX_TURN_CHARS].rsplit(" ", 1)[0]
        text = cut + f" … [{len(text) - len(cut)} more characters not imported]"
    lines = [ln.rstrip() for ln in text.split("\n") if ln.strip()]
    out = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if i > 0 and (TURN_RE.match(s) or _HEADING_RE.match(s) or s.startswith(("---", "..."))):
            ln = ln.replace(s[0], "\\" + s[0], 1)
        out.append(ln)
    return "\n".join(out)


def speaker_name(name: str) -> str:
    s = " ".join(str(name).replace(":", " ").replace("]", " ").replace("[", " ").split())[:80]
    return s or "Unknown"


def _norm(text: str) -> str:
    return " ".join(text.split())


def frontmatter(meta: dict) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def render(d: Draft) -> tuple[str, int]:
    """A new session's transcript and its number of turns."""
    speakers = list(dict.fromkeys(speaker_name(t.speaker) for t in d.turns))
    meta: dict = {"session": d.sid}
    meta["date"] = d.date.strftime("%Y-%m-%dT%H:%M:%SZ") if d.date else ""
    meta["participants"] = speakers
    if d.title:
        meta["title"] = d.title
    meta["source"] = d.source
    turns = _nonempty(d.turns)
    paras = [f"[D{d.part}:{i}] {speaker_name(t.speaker)}: {turn_body(t.text)}"
             for i, t in enumerate(turns, 1)]
    if d.timed:
        times = {f"D{d.part}:{i}": _iso(t.time) for i, t in enumerate(turns, 1) if t.time}
        if times:
            meta["turn_times"] = times
    return frontmatter(meta) + "\n" + "\n\n".join(paras) + "\n", len(paras)


def _nonempty(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if turn_body(t.text).strip()]


def existing_turns(text: str) -> list[tuple[str, str, str]]:
    """(anchor, speaker, text) of a transcript, read as the chunker reads it."""
    _meta, body, _bad = split_frontmatter(text)
    out: list[list[str]] = []
    for line in body.split("\n"):
        m = TURN_RE.match(line.strip())
        if m:
            out.append([m.group("anchor"), m.group("speaker").strip(), m.group("text")])
        elif out and line.strip():
            out[-1][2] += "\n" + line
    return [(a, s, t) for a, s, t in out]


def grow(text: str, d: Draft) -> tuple[str, list[Turn], bool, int]:
    """``text`` (a transcript already in the corpus) with the draft's turns it lacks appended,
    and the source's times of the turns it holds that ``turn_times`` lacks (a transcript
    imported before turn times were kept gets them). Returns (new text, the turns added,
    whether the source changed turns already imported, how many of the turns added the
    source holds before a turn already imported: appended after it all the same, as the
    anchors already cited must stay)."""
    have = existing_turns(text)
    j = matched = 0
    new: list[Turn] = []
    by_body: dict[str, list[int]] = {}  # a turn's text, whitespace collapsed -> its places
    for k, (_a, _s, body) in enumerate(have):
        by_body.setdefault(_norm(body), []).append(k)
    used: set[int] = set()  # the transcript's turns matched so far
    late = 0  # turns added so far that no imported turn has followed yet
    before = 0  # turns added that come before an imported one in the source
    held: dict[str, _dt.datetime] = {}  # anchor of a turn the transcript holds -> source's time
    for t in _nonempty(d.turns):
        # a turn imported before a --speaker mapping was given is still this turn
        names = {speaker_name(x) for x in (t.speaker, t.said_as) if x}
        body = _norm(turn_body(t.text))
        same = [k for k in by_body.get(body, ()) if k not in used and have[k][1] in names]
        if not same and t.tool:
            same = _call_without_result(body, by_body, have, used, names)
        # the next one in order; else one an earlier import appended after turns it follows
        # in the source (a line fixed since, an edited turn): found, not appended again
        k = next((k for k in same if k >= j), same[0] if same else None)
        if k is None:
            new.append(t)
            late += 1
        else:
            before += late
            late = 0
            matched += 1
            used.add(k)
            j = max(j, k + 1)
            if d.timed and t.time:
                held[have[k][0]] = t.time
    # a source that only grew holds every imported turn, in order, before its new ones
    skipped = matched < len(have)
    if not new:
        return _add_times(text, held), [], False, 0
    nums = [_ANCHOR_RE.match(a) for a, _s, _t in have]
    nums = [m for m in nums if m]
    part = int(nums[0].group(1)) if nums else d.part
    nxt = max((int(m.group(2)) for m in nums), default=0) + 1
    paras = [f"[D{part}:{nxt + i}] {speaker_name(t.speaker)}: {turn_body(t.text)}" for i, t in enumerate(new)]
    meta, body, bad = split_frontmatter(text)
    if meta is not None and not bad:
        changed = False
        parts = meta.get("participants")
        if isinstance(parts, list):
            add = [speaker_name(t.speaker) for t in new if speaker_name(t.speaker) not in parts]
            if add:
                meta["participants"] = parts + list(dict.fromkeys(add))
                changed = True
        if d.timed and any(t.time for t in new):
            times = dict(meta.get("turn_times") or {}) if isinstance(meta.get("turn_times"), dict) else {}
            times.update({f"D{part}:{nxt + i}": _iso(t.time) for i, t in enumerate(new) if t.time})
            meta["turn_times"] = times
            changed = True
        if changed:
            text = frontmatter(meta) + "\n" + body
    return _add_times(text, held).rstrip("\n") + "\n\n" + "\n\n".join(paras) + "\n", new, skipped, before


def _call_without_result(body: str, by_body: dict[str, list[int]], have: list[tuple[str, str, str]],
                         used: set[int], names: set[str]) -> list[int]:
    """The transcript's places of a tool turn ``body`` imported before its result was in
    the source ("[tool: Bash] ls", now "[tool: Bash] ls (2 lines of output: a.txt)"): a
    log imported while its session was running. The turn is that one, not a new one."""
    out: list[int] = []
    at = body.find(" (")
    while at > 0 and not out:
        out = [k for k in by_body.get(body[:at], ()) if k not in used and have[k][1] in names
               and body[:at].startswith("[tool: ")]
        at = body.find(" (", at + 1)
    return out


def _add_times(text: str, held: dict[str, _dt.datetime]) -> str:
    """``text`` with the times of ``held`` (anchor -> time) that its ``turn_times`` lacks;
    a time already there is the transcript's and stays."""
    if not held:
        return text
    meta, body, bad = split_frontmatter(text)
    if meta is None or bad:
        return text
    times = meta.get("turn_times")
    times = dict(times) if isinstance(times, dict) else {}
    missing = {a: _iso(t) for a, t in held.items() if a not in times}
    if not missing:
        return text
    meta["turn_times"] = {**times, **missing}
    return frontmatter(meta) + "\n" + body


# --------------------------------------------------------------------------- the import

def forget_phrases(store) -> list[str]:
    """The phrases of the corpus's forget requests (``forget/*.md``)."""
    paths = [o.path for o in store.list(FORGET_DIR.rstrip("/")) if is_request(o.path)]
    out: list[str] = []
    for p in sorted(paths):
        try:
            out += request_phrases(store.get(p)[0].decode("utf-8", errors="replace"))
        except NoSuchKey:
            continue
    return list(dict.fromkeys(out))


def read_all(src: Path, fmt: str = "auto", skipped: list[str] | None = None,
             options: ImportOptions | None = None) -> tuple[list[Conversation], dict[str, int]]:
    """Every conversation under ``src``; any bad file stops it here, before a write. In a
    directory read with ``auto``, files of no known format are listed in ``skipped``."""
    convs: list[Conversation] = []
    counts: dict[str, int] = {}
    in_dir = src.is_dir() and fmt == "auto"
    for p in source_files(src, fmt):
        try:
            got = read_source(p, fmt, options)
        except UnknownFormat:
            if not in_dir or skipped is None:
                raise
            skipped.append(str(p))
            continue
        for c in got:
            counts[c.fmt] = counts.get(c.fmt, 0)
        if got:
            counts[got[0].fmt] += 1
        convs += got
    return convs, counts


class _Imported(NamedTuple):
    """What importing one draft did: ``kind`` is "new", "grown", "retimed" or "unchanged" (a
    :class:`Report` counter), with the turns and tool turns it added, whether the source
    changed turns already imported, and the transcript's path."""

    kind: str
    added: int
    tools: int
    rewritten: bool
    path: str
    #: turns added after imported turns that the source holds before them
    late: int = 0


def import_sessions(src: Path, store, fmt: str = "auto",
                    progress: Callable[[int, int], None] | None = None,
                    workers: int = 8, options: ImportOptions | None = None) -> Report:
    """Import the sessions under ``src`` into ``store``'s corpus (see the module docstring).
    Raises :class:`ImportInputError` (one line) before writing anything when a file is bad.
    New sessions are added to ``sessions/index.md`` (dream rewrites it whole on its run)."""
    skipped: list[str] = []
    convs, counts = read_all(src, fmt, skipped, options)
    if not convs and skipped:
        raise ImportInputError(f"{src}: no file in it is of a known session format (e.g. "
                               f"{skipped[0]}); give --format or a session file")
    rep = Report(files=counts, conversations=len(convs), skipped=skipped,
                 warnings=[w for c in convs for w in c.warnings],
                 bad_lines=sum(c.bad_lines for c in convs))
    _redact_forgotten(convs, forget_phrases(store))
    drafts = _drafts(convs, rep)
    known = _known_sessions(store)
    todo = sorted(drafts.values(), key=lambda d: d.sid)
    done = 0
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        for r in pool.map(lambda d: _import_one(store, known, d), todo):
            setattr(rep, r.kind, getattr(rep, r.kind) + 1)
            rep.turns_added += r.added
            rep.tool_turns += r.tools
            if r.kind != "unchanged":
                rep.paths.append(r.path)
            if r.rewritten:
                rep.rewritten.append(r.path)
            if r.late:
                # A line an earlier import left out as damaged, now readable: the transcript
                # gains it, but after the turns it preceded (their anchors may be cited).
                rep.warnings.append(
                    f"{r.path}: {r.late} turn(s) the source holds before turns already imported "
                    f"(left out by an earlier import, readable now) were added at the end, "
                    f"after the turns they preceded")
            done += 1
            if progress:
                progress(done, len(todo))
    except BaseException:
        # Ctrl-C or a failed upload: the PUTs in flight finish (each writes a whole file),
        # the others are not started; the same import again finishes the job.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    new = [d for d in todo if transcript_path(d.sid) in rep.paths and d.hash not in known]
    rep.indexed = add_to_sessions_index(store, new)
    rep.dates = [(d.sid, d.date.date().isoformat() if d.date else "undated", d.dated, d.stamped)
                 for d in new]
    paths = set(rep.paths)
    for d in todo:
        if {transcript_path(known.get(d.hash, (d.sid,))[0]), transcript_path(d.sid)} & paths:
            for role in {speaker_name(t.speaker) for t in d.turns if not t.tool}:
                if role.lower() in USER_ROLES:
                    rep.roles_kept[role] = rep.roles_kept.get(role, 0) + 1
    return rep


def add_to_sessions_index(store, drafts: list[Draft]) -> int:
    """Append the sessions not listed yet to ``sessions/index.md`` (dream's ``- id | date |
    title`` lines), so the memory lists them before the next dream; returns how many were
    added. Conditional on the ETag read; a lost race is left to the next dream."""
    if not drafts:
        return 0
    try:
        data, etag = store.get(SESSIONS_INDEX)
        text = data.decode("utf-8", errors="replace")
    except NoSuchKey:
        text, etag = "# Sessions\n\n", None
    listed = {ln.split("|", 1)[0].strip(" -`[]") for ln in text.splitlines() if ln.startswith("- ")}
    lines = [f"- {d.sid} | {d.date.date().isoformat() if d.date else 'undated'} | "
             f"{' '.join((d.title or 'Session').split())}" for d in sorted(drafts, key=lambda d: d.sid)
             if d.sid not in listed]
    if not lines:
        return 0
    text = text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    try:
        if etag is None:
            store.put(SESSIONS_INDEX, text.encode("utf-8"), if_none_match=True)
        else:
            store.put(SESSIONS_INDEX, text.encode("utf-8"), if_match=etag)
    except Exception as e:  # noqa: BLE001 - the transcripts are written; dream lists them anyway
        log.warning("%s not updated (%s); the next dream lists the new sessions", SESSIONS_INDEX, e)
        return 0
    return len(lines)


def _redact_forgotten(convs: list[Conversation], phrases: list[str]) -> None:
    """What the memory was asked to forget is not brought back by an import: the phrases of
    forget/ are redacted from the source's turns and titles as dream redacts them in
    transcripts, so a redacted turn still matches its source and a new one arrives
    redacted (its id and title too)."""
    if phrases:
        for c in convs:
            c.title = redact(c.title, phrases) if c.title else c.title
            for t in c.turns:
                t.text = redact(t.text, phrases)


def _drafts(convs: list[Conversation], rep: Report) -> dict[str, Draft]:
    """The sessions to write, by content hash (a conversation split over two files counts
    once, its longer form); empty conversations are counted in ``rep``. Raises
    :class:`ImportInputError` on a session id that is no valid path."""
    drafts: dict[str, Draft] = {}
    for c in convs:
        if not _nonempty(c.turns):
            rep.empty += 1
            continue
        for d in drafts_of(c):
            if not _nonempty(d.turns):
                continue
            old = drafts.get(d.hash)
            if old is None or len(d.turns) > len(old.turns):  # one conversation in two files
                drafts[d.hash] = d
    for d in drafts.values():
        problem = path_problem(transcript_path(d.sid))
        if problem:
            raise ImportInputError(f"{d.source}: session id {d.sid!r}: {problem}")
    return drafts


def _known_sessions(store) -> dict[str, tuple[str, str]]:
    """Sessions already in the corpus, by the hash their id ends with: (id, ETag)."""
    known: dict[str, tuple[str, str]] = {}
    for o in store.list("sessions"):
        parts = o.path.split("/")
        if len(parts) == 3 and parts[2] == "transcript.md":
            m = _ID_RE.match(parts[1])
            if m:
                known[m.group("h")] = (parts[1], o.etag)
    return known


#: Times one transcript is read and written again after another writer changed it between
#: the read and the conditional PUT (two imports of one log at once, a mount's edit).
RACE_RETRIES = 3


def _import_one(store, known: dict[str, tuple[str, str]], d: Draft) -> _Imported:
    """Write one draft: new, grown by the turns the corpus's copy lacks, or left alone. A
    conditional PUT that lost to another writer reads the transcript again and grows what
    that writer left, so neither's turns are lost and the import does not stop."""
    for attempt in range(RACE_RETRIES + 1):
        try:
            return _import_once(store, known, d)
        except PreconditionFailed:
            if attempt == RACE_RETRIES:
                raise
            # the other writer's transcript (created or grown) is the one to grow now
            sid = known.get(d.hash, (d.sid, ""))[0]
            known = {**known, d.hash: (sid, "")}
    raise AssertionError("unreachable")


def _import_once(store, known: dict[str, tuple[str, str]], d: Draft) -> _Imported:
    """One attempt of :func:`_import_one`."""
    if d.hash in known:
        sid, etag = known[d.hash]
        path = transcript_path(sid)
        if sid == d.sid and hashlib.md5(render(d)[0].encode("utf-8")).hexdigest() == etag:
            return _Imported("unchanged", 0, 0, False, path)  # as the last import wrote it: no GET
        try:
            data, etag = store.get(path)
        except NoSuchKey:
            data = None
        if data is not None:
            old = data.decode("utf-8", errors="replace")
            text, added, skipped, late = grow(old, d)
            if text == old:
                return _Imported("unchanged", 0, 0, False, path)
            store.put(path, text.encode("utf-8"), if_match=etag)
            if not added:  # only the turns' times the transcript lacked
                return _Imported("retimed", 0, 0, False, path)
            return _Imported("grown", len(added), sum(1 for t in added if t.tool), skipped, path,
                             0 if skipped else late)
    path = transcript_path(d.sid)
    text, n = render(d)
    store.put(path, text.encode("utf-8"), if_none_match=True)
    return _Imported("new", n, sum(1 for t in _nonempty(d.turns) if t.tool), False, path)


__all__ = [
    "MAX_TURN_CHARS",
    "SESSION_GAP",
    "ImportInputError",
    "Report",
    "drafts_of",
    "grow",
    "import_sessions",
    "render",
]
