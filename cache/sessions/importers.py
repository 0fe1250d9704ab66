"""Sessions people already have → conversations (turns with speakers and times).

Five source formats, each read whole and checked before anything is written (see
``cache/FORMAT.md`` for what they become and :mod:`brainfs.cache.sessions.sessionfile` for the
writing):

* ``claude-code`` — Claude Code session logs: JSONL, one file per session, records of
  ``type`` user/assistant (``message.content`` a string or a list of text / tool_use /
  tool_result blocks), ``timestamp``, ``sessionId``, ``cwd``; a ``summary`` record titles it.
* ``chatgpt`` — a ChatGPT data export's ``conversations.json`` (or the export's .zip): a
  list of conversations with ``title``, ``create_time`` and a ``mapping`` of nodes; the
  conversation is the chain from ``current_node`` up to the root (the branch shown last).
* ``claude-ai`` — a Claude.ai data export's ``conversations.json`` (or the export's .zip):
  conversations with ``uuid``, ``name``, ``created_at`` and ``chat_messages`` (``sender``
  human/assistant, ``text`` or ``content`` blocks, ``created_at``).
* ``messages`` — OpenAI-style ``[{"role": …, "content": …}]`` or ``{"messages": […]}``
  (Anthropic content blocks and OpenAI ``tool_calls`` too).
* ``text`` — Markdown or plain text with ``Speaker: text`` lines (``[10:02] Speaker: text``
  keeps the turn's time); dated by what it states (frontmatter, a ``Date:`` line, its title,
  its name), ``--date``, else the import's time — never the file's modification time.

A tool call and its result become one short turn of the assistant, ``[tool: Bash] ls -la
(312 lines of output: total 48)``: the call's gist and the output's first line, never its
body, so that tool output cannot flood search.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from brainfs.cache.sessions.chatgpt import parse_chatgpt
from brainfs.cache.sessions.claudeai import is_claude_ai, parse_claude_ai
from brainfs.cache.sessions.claudecode import parse_claude_code
from brainfs.cache.sessions.conversation import Conversation, ImportInputError, UnknownFormat
from brainfs.cache.sessions.jsonfiles import load_json, zip_member
from brainfs.cache.sessions.messages import parse_messages
from brainfs.cache.sessions.options import ImportOptions
from brainfs.cache.sessions.plaintext import parse_text
from brainfs.cache.sessions.times import clock_times

FORMATS = ("claude-code", "chatgpt", "claude-ai", "messages", "text")

#: Extensions read when SRC is a directory; other files there are skipped.
EXTENSIONS = {".jsonl": "claude-code", ".json": None, ".zip": None, ".md": "text",
              ".markdown": "text", ".txt": "text"}


def detect(path: Path, data: bytes) -> str:
    """The format of one file, from its name and first bytes (one-line error if none)."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return _zip_format(path)
    if path.name == "conversations.json":  # ChatGPT's and Claude.ai's exports both call it so
        return "claude-ai" if is_claude_ai(load_json(path, data, "a conversations.json")) else "chatgpt"
    if suffix == ".jsonl":
        return "claude-code"
    if suffix in (".md", ".markdown", ".txt"):
        return "text"
    head = data.lstrip()[:1]
    if suffix == ".json" or head in (b"[", b"{"):
        doc = load_json(path, data, "a .json session file")
        items = doc if isinstance(doc, list) else [doc]
        firsts = [x for x in items[:3] if isinstance(x, dict)]
        if firsts and all("mapping" in x for x in firsts):
            return "chatgpt"
        if is_claude_ai(doc):
            return "claude-ai"
        if isinstance(doc, dict) and "messages" in doc or firsts and all(
                "role" in x or "messages" in x for x in firsts):
            return "messages"
        if firsts and "type" in firsts[0] and ("sessionId" in firsts[0] or "message" in firsts[0]):
            return "claude-code"
        raise UnknownFormat(f"{path}: JSON of no known session format (a ChatGPT or Claude.ai "
                               f"conversations.json, a messages list, or a Claude Code log); give "
                               f"--format if it is one")
    raise UnknownFormat(f"{path}: cannot tell its format from its name; give --format "
                           f"(claude-code, chatgpt, claude-ai, messages, text)")


def _zip_format(path: Path) -> str:
    """A data export .zip: Claude.ai's when its conversations.json has ``chat_messages``,
    else ChatGPT's (whose parser names what is missing)."""
    try:
        data = zip_member(path, "conversations.json", "a ChatGPT or Claude.ai data export .zip")
    except ImportInputError:
        return "chatgpt"
    try:
        return "claude-ai" if is_claude_ai(json.loads(data.decode("utf-8-sig"))) else "chatgpt"
    except (ValueError, UnicodeDecodeError):
        return "chatgpt"


PARSERS = {"claude-code": parse_claude_code, "chatgpt": parse_chatgpt, "claude-ai": parse_claude_ai,
           "messages": parse_messages}


def source_files(src: Path, fmt: str = "auto") -> list[Path]:
    """The files to read: SRC itself, or the session files under a directory SRC."""
    if not src.exists():
        raise ImportInputError(f"{src}: no such file or directory")
    if src.is_file():
        return [src]
    out = []
    for p in sorted(src.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(src).parts):
            continue
        ext = p.suffix.lower()
        if ext not in EXTENSIONS:
            continue
        if fmt != "auto" and EXTENSIONS[ext] not in (None, fmt):
            continue
        if ext == ".zip" and fmt not in ("auto", "chatgpt", "claude-ai"):
            continue  # a data export: only its own formats read it
        if fmt in ("chatgpt", "claude-ai") and ext == ".json" and p.name != "conversations.json":
            continue  # an unzipped export's user.json, message_feedback.json, …
        out.append(p)
    if not out:
        raise ImportInputError(f"{src}: no session files in it (.jsonl, .json, .zip, .md, .txt)")
    return out


def read_source(path: Path, fmt: str = "auto", options: ImportOptions | None = None) -> list[Conversation]:
    """Every conversation of one file (one-line :class:`ImportInputError` if unreadable),
    with ``options`` applied: the speakers renamed, a plain transcript's date set."""
    convs = _read_source(path, fmt, options or ImportOptions())
    opts = options or ImportOptions()
    if opts.speakers:
        for c in convs:
            for t in c.turns:
                if t.speaker in opts.speakers:
                    t.said_as, t.speaker = t.speaker, opts.speakers[t.speaker]
    return convs


def _read_source(path: Path, fmt: str, opts: ImportOptions) -> list[Conversation]:
    try:
        data = b"" if path.suffix.lower() == ".zip" else path.read_bytes()
    except OSError as e:
        raise ImportInputError(f"{path}: {e.strerror or e}") from None
    if not data.strip() and path.suffix.lower() != ".zip":
        raise ImportInputError(f"{path}: empty file (remove it or give a non-empty one)")
    kind = detect(path, data) if fmt == "auto" else fmt
    convs = parse_text(path, data) if kind == "text" else PARSERS[kind](path, data)
    for c in convs:
        # A file name that is not UTF-8 (an old Latin-1 disk, a zip from elsewhere) reaches
        # Python with surrogates, which no transcript or hash can encode: it is named with
        # U+FFFD where its bytes are not text, the same on every import.
        c.key, c.file = _text_name(c.key), _text_name(c.file)
        _date(c, opts.date)
    return convs


def _text_name(name: str) -> str:
    """``name`` (a path as Python reads it) with undecodable bytes as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _date(c: Conversation, date: _dt.datetime | None) -> None:
    """Give ``c`` its date and say where it came from: ``--date`` over what a plain transcript
    says, the source's own times (kept over ``--date``: they are the record), else the import
    time (the file's modification time is the time of a copy as often as of the talk)."""
    if date is not None and (c.fmt == "text" or c.start is None):
        c.start, c.dated = date, "from --date"
        for t in c.turns:
            t.time = date if c.fmt == "text" else t.time
    elif c.start is not None:
        c.dated = c.dated or "from its own times"
    else:
        # the day only: the time of the import says nothing of the talk's, and the same
        # transcript imported again that day renders the same bytes (no read to compare)
        c.start = _dt.datetime.now(_dt.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        c.dated = "at import (the file states no date; give --date DATE)"
    if c.clocks:  # times of day count on a day the file or the user gave, not on a guess
        clock_times(c, None if c.dated.startswith("at import") else c.start)
