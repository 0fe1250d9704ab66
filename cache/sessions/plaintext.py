"""Markdown or plain-text transcripts (``text``) with ``Speaker: text`` lines (``[10:02]
Speaker: text`` keeps the turn's time): which lines start turns, and the title and date the
file states (frontmatter, a ``Date:`` line, its title, its name) — never the file's
modification time."""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

from brainfs.cache.search.chunker import TURN_RE, split_frontmatter
from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn, UnknownFormat
from brainfs.cache.sessions.times import parse_time, turn_clock, written_date, written_date_match
from brainfs.cache.sessions.toolturns import one_line


_SPEAKER_RE = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)?(?P<name>[^\W\d_][\w .'’-]{0,39}?)(?:\*\*|__)?\s*:"
                         r"(?:\*\*|__)?(?:\s+(?P<text>.*))?$")
_KNOWN_SPEAKERS = {"user", "assistant", "human", "ai", "system", "me", "you", "bot", "claude",
                   "chatgpt", "gpt", "model", "agent", "tool"}
_META_KEYS = {"date", "title", "session", "participants", "source", "time", "subject"}
_DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


def parse_text(path: Path, data: bytes) -> list[Conversation]:
    """A Markdown or plain-text transcript (``Speaker: text`` lines). Its date is the one
    it states (:func:`_text_heading`); None when it states none (the caller dates it)."""
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        raise ImportInputError(f"{path}: not UTF-8 text (save it as UTF-8)") from None
    meta, body, bad = split_frontmatter(text)
    if bad:
        raise ImportInputError(f"{path}: its frontmatter (between the '---' lines) is not a YAML "
                               f"mapping; fix it or remove it")
    meta = meta or {}
    lines = body.split("\n")
    starts = _turn_starts(lines, meta)
    if not starts:
        raise UnknownFormat(f"{path}: no 'Speaker: text' lines found (each turn starts a line "
                               f"with its speaker and a colon, e.g. 'User: hello')")
    first = min(starts)
    title, when, why = _text_heading(lines[:first], meta, path)
    turns: list[Turn] = []
    clocks: list = []
    for i in range(first, len(lines)):
        if i in starts:
            name, t, stamp = starts[i]
            turns.append(Turn(name, t, when))
            clocks.append(turn_clock(stamp))
        elif turns and not re.match(r"^#{1,6}\s", lines[i]):
            turns[-1].text += "\n" + lines[i]
    kept = [(Turn(t.speaker, t.text.strip(), t.time), c) for t, c in zip(turns, clocks) if t.text.strip()]
    key = f"text:{meta.get('session') or path.name}"
    return [Conversation(key, str(path), "text", str(title) if title else None, when,
                         [t for t, _c in kept], dated=why,
                         clocks=[c for _t, c in kept] if any(c for _t, c in kept) else [])]


#: A time written before a turn's speaker, as chat and meeting tools write them: "[10:02]
#: Nadia: …", "10:02:33 Nadia: …", "[10:02 PM] Nadia: …", "[2026-11-03 10:02] Nadia: …".
_STAMP_RE = re.compile(r"^\s*(?P<open>\[)?(?P<stamp>(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}:\d{2}(?::\d{2})?"
                       r"(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?)(?(open)\]|)\s+(?=\S)")


_MERIDIEM_RE = re.compile(r"[AaPp]\.?[Mm]\.?")


def _turn_starts(lines: list[str], meta: dict) -> dict[int, tuple[str, str, str | None]]:
    """Line number → (speaker, text, the time written before the speaker) of each line that
    starts a turn."""
    # candidate turn starts: (line, name, text, how it was marked, written time)
    cands: list[tuple[int, str, str, str, str | None]] = []
    for i, line in enumerate(lines):
        st = _STAMP_RE.match(line)  # "[10:02] Nadia: …" is a time, not a brainfs anchor
        m = _SPEAKER_RE.match(line[st.end():]) if st else None
        if m and _MERIDIEM_RE.fullmatch(m.group("name").strip()):
            m = None  # "1:00 PM: lunch", an agenda line: the time's own PM, not a speaker
        if m and len(m.group("name").split()) <= 4:
            # a log writes its times one way: "[10:02]" and "10:02" are two marks
            how = "stamped[" if st.group("open") else "stamped"
            cands.append((i, m.group("name").strip(), m.group("text") or "", how, st.group("stamp")))
            continue
        m = TURN_RE.match(line.strip())
        if m:  # already in the brainfs form: the anchor is dropped, the speaker kept
            cands.append((i, m.group("speaker").strip(), m.group("text"), "anchor", None))
            continue
        m = _SPEAKER_RE.match(line)
        if m and len(m.group("name").split()) <= 4:
            bold = line.lstrip(" -*").startswith(("**", "__")) or line.lstrip().startswith(("**", "__"))
            cands.append((i, m.group("name").strip(), m.group("text") or "", "bold" if bold else "plain", None))
    counts: dict[str, int] = {}
    for _i, name, _t, _how, _st in cands:
        counts[name] = counts.get(name, 0) + 1
    named = meta.get("participants")
    named = {str(x) for x in named} if isinstance(named, list) else set()
    # A speaker: named in the frontmatter, a known role, marked in bold, or at the start of
    # two lines or more ("Note: …" once inside a turn is text, not a speaker). When the file
    # is in the anchored form, its anchored lines are its turns; when its first turn has a
    # time, its timed lines are ("09:00 Standup: …" inside another file's turn stays text).
    form = cands[0][3] if cands and cands[0][3] in ("anchor", "stamped", "stamped[") else None
    return {i: (name, t, st) for i, name, t, how, st in cands
            if name.lower() not in _META_KEYS
            and (how == form if form else how not in ("anchor", "stamped[") and (
                name in named or how == "bold" or counts[name] >= 2 or name.lower() in _KNOWN_SPEAKERS))}


def _text_heading(head: list[str], meta: dict,
                  path: Path) -> tuple[str | None, _dt.datetime | None, str]:
    """Title, date and where the date came from: the frontmatter, a ``Date:`` line, a date
    written in the title or the lines before the first turn, the file's name, in that order.
    Never the file's modification time: a copied, downloaded or unzipped transcript gets the
    time of the copy, which would pass for the conversation's."""
    title = meta.get("title")
    when = parse_time(meta.get("date"))
    why = "from its frontmatter's date" if when else ""
    for line in head:
        h = re.match(r"^#\s+(.+?)\s*#*$", line)
        if h and not title:
            title = h.group(1)
        kv = re.match(r"^\s*(?:\*\*)?(date|title)(?:\*\*)?\s*:\s*(.+)$", line, re.I)
        if kv and kv.group(1).lower() == "date" and when is None:
            when = parse_time(kv.group(2).strip()) or written_date(kv.group(2))
            why = f"from its line {one_line(line, 60)!r}" if when else ""
        elif kv and kv.group(1).lower() == "title" and not title:
            title = kv.group(2).strip()
    if when is None:  # "# Planning call, 3 November 2026", "Weekly sync — Nov 3, 2026"
        for where, text in [("its title", str(title or ""))] + [("the line before its first turn", x)
                                                                for x in head]:
            found = written_date_match(text)
            if found:
                when, why = found[0], f"from {where} ({found[1]!r})"
                break
    if when is None:  # "standup-2026-11-03.md", "Planning call 3 November 2026.txt"
        m = _DATE_IN_NAME.search(path.name)
        found = (parse_time(m.group(1)), m.group(1)) if m else written_date_match(
            path.stem.replace("_", " "))
        if found and found[0]:
            when, why = found[0], f"from its file name ({found[1]!r})"
    return title, when, why
