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
import hashlib
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brainfs.cache.search.chunker import TURN_RE, split_frontmatter

FORMATS = ("claude-code", "chatgpt", "claude-ai", "messages", "text")

#: Extensions read when SRC is a directory; other files there are skipped.
EXTENSIONS = {".jsonl": "claude-code", ".json": None, ".zip": None, ".md": "text",
              ".markdown": "text", ".txt": "text"}

#: The first output line kept in a tool turn: enough for "error: No module named foo" or a
#: file's first line, short enough that a tool turn stays a one-line summary.
TOOL_LINE_CHARS = 100


class ImportInputError(ValueError):
    """A source file that cannot be imported: one line naming the file and the fix."""


class UnknownFormat(ImportInputError):
    """A file of no known session format (skipped inside a directory SRC: an unzipped
    ChatGPT export also holds user.json, an agent's folder settings and to-do lists)."""


@dataclass
class Turn:
    """One turn; ``said_as``: the speaker as the source names it, when a ``--speaker``
    mapping renamed it (so a re-import under another mapping finds the turn again)."""

    speaker: str
    text: str
    time: _dt.datetime | None = None
    tool: bool = False
    said_as: str | None = None


@dataclass
class Conversation:
    """One conversation at its source. ``key`` names it there (a session id, a ChatGPT
    conversation id, a file name) and stays the same when the conversation grows.
    ``timed``: the source gives each turn its own time (written to the transcript's
    ``turn_times``); ``dated``: where ``start`` came from, as the import's output says it
    ("from its title ('3 November 2026')"); ``warnings``: what was left out of the file and
    why, ``bad_lines`` how many of its lines that was."""

    key: str
    file: str
    fmt: str
    title: str | None = None
    start: _dt.datetime | None = None
    turns: list[Turn] = field(default_factory=list)
    timed: bool = False
    warnings: list[str] = field(default_factory=list)
    dated: str = ""
    bad_lines: int = 0
    #: a plain transcript's turns' written times, one per turn: a time of day (h, m, s) to
    #: be put on the session's day once it is known, a full time, or None
    clocks: list[tuple[int, int, int] | _dt.datetime | None] = field(default_factory=list)


@dataclass
class ImportOptions:
    """What the user says about a source that the source does not: ``date`` of a plain
    transcript (``--date``), and ``speakers``, the names to write for the source's roles
    (``--speaker User=Nadia``; the ``[import] speakers`` setting)."""

    date: _dt.datetime | None = None
    speakers: dict[str, str] = field(default_factory=dict)


def parse_speakers(specs: list[str] | dict[str, str] | None) -> dict[str, str]:
    """``["User=Nadia"]`` (or a mapping) → ``{"User": "Nadia"}``; ImportInputError on a
    spec without ``=`` or with an empty side, or a name a transcript cannot hold."""
    if isinstance(specs, dict):
        items = [(str(k), str(v)) for k, v in specs.items()]
    else:
        items = []
        for spec in specs or []:
            if "=" not in spec:
                raise ImportInputError(f"--speaker {spec!r}: expected ROLE=NAME (e.g. User=Nadia)")
            k, v = spec.split("=", 1)
            items.append((k, v))
    out: dict[str, str] = {}
    for k, v in items:
        k, v = k.strip(), " ".join(v.split())
        if not k or not v or re.search(r"[:\[\]\n]", v) or len(v) > 80:
            raise ImportInputError(f"speaker mapping {k}={v}: expected ROLE=NAME, the name "
                                   f"without ':', '[' or ']' and at most 80 characters")
        out[k] = v
    return out


def make_options(setting: str, speakers: list[str] | None, date: str | None) -> ImportOptions:
    """The options of ``--speaker ROLE=NAME`` (over the ``import_speakers`` setting,
    ``"User=Nadia, Human=Nadia"``) and ``--date``; ImportInputError (one line) on a bad one."""
    listed = [x for x in (setting or "").split(",") if x.strip()]
    mapping = {**parse_speakers(listed), **parse_speakers(speakers or [])}
    when = None
    if date:
        when = parse_time(date) or written_date(date)
        if when is None:
            raise ImportInputError(f"--date {date!r}: not a date (give 2026-11-03, "
                                   f"2026-11-03T14:00:00Z or 3 November 2026)")
    return ImportOptions(date=when, speakers=mapping)


# --------------------------------------------------------------------------- small helpers

def parse_time(value: Any) -> _dt.datetime | None:
    """An ISO 8601 string or an epoch number → an aware UTC datetime (None if neither)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            v = float(value)
            if v > 1e11:  # milliseconds
                v /= 1000.0
            return _dt.datetime.fromtimestamp(v, _dt.timezone.utc)
        s = str(value).strip()
        if re.fullmatch(r"\d+(\.\d+)?", s):
            return parse_time(float(s))
        d = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return d.astimezone(_dt.timezone.utc)


def one_line(text: str, limit: int) -> str:
    """The first non-empty line of ``text``, whitespace collapsed, cut at ``limit``."""
    for line in str(text).splitlines():
        if line.strip():
            s = " ".join(line.split())
            return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
    return ""


def tool_text(name: str, gist: str, output: str | None, error: bool = False) -> str:
    """The one-line summary turn of a tool call and its result."""
    head = f"[tool: {one_line(name, 40) or 'tool'}]"
    gist = one_line(gist, 120)
    out = head + (f" {gist}" if gist else "")
    if output is None:
        return out
    first = one_line(output, TOOL_LINE_CHARS)
    if error:
        return out + f" (error: {first})" if first else out + " (error)"
    n = len([ln for ln in str(output).splitlines() if ln.strip()])
    if n == 0:
        return out + " (no output)"
    lines = f"{n} line{'s' if n != 1 else ''} of output"
    return out + (f" ({lines}: {first})" if first else f" ({lines})")


#: The input field that says what a Claude Code tool call did, by tool name.
_TOOL_GIST = {"bash": "command", "read": "file_path", "write": "file_path", "edit": "file_path",
              "multiedit": "file_path", "notebookedit": "notebook_path", "grep": "pattern",
              "glob": "pattern", "webfetch": "url", "websearch": "query", "task": "description",
              "ls": "path"}


def tool_gist(name: str, args: Any) -> str:
    """What a call did, from its arguments (a dict, or a JSON string of one)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return args
    if not isinstance(args, dict):
        return ""
    key = _TOOL_GIST.get(str(name).lower())
    if key and isinstance(args.get(key), str):
        return args[key]
    if str(name).lower() == "todowrite" and isinstance(args.get("todos"), list):
        return f"{len(args['todos'])} to-do items"
    for v in args.values():
        if isinstance(v, str) and v.strip():
            return v
    return ""


def _content_text(content: Any) -> str:
    """Plain text of a tool result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_content_text(c.get("text") if isinstance(c, dict) else c)
                         for c in content if c is not None)
    if isinstance(content, dict):
        return _content_text(content.get("text") or content.get("content") or "")
    return "" if content is None else str(content)


def _load_json(path: Path, data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ImportInputError(f"{path}: not UTF-8 text ({what} is UTF-8 JSON)") from None
    except ValueError as e:
        raise ImportInputError(f"{path}: not valid JSON: {json_error(e)}; "
                               f"{what} must be one JSON document") from None


def json_error(e: ValueError, what: str = "file") -> str:
    """A JSON parse error as one phrase with its place: "unterminated string starting at
    line 1, column 5012 (the file ends inside it: is it complete?)" (``json``'s own message
    ends in "at" and leaves the place to be added, once). An error where the text ends says
    so: a download or copy cut short is the usual cause. ``what``: the text parsed (a file,
    a line)."""
    msg = (getattr(e, "msg", None) or str(e)).strip()
    msg = re.sub(r"\s+at$", "", msg)
    lineno, colno = getattr(e, "lineno", None), getattr(e, "colno", None)
    out = msg[:1].lower() + msg[1:] + (f" at line {lineno}, column {colno}" if lineno is not None else "")
    doc, pos = getattr(e, "doc", None), getattr(e, "pos", None)
    if msg.startswith("Unterminated string"):
        out += f" (the {what} ends inside it: is it complete?)"
    elif isinstance(doc, str) and isinstance(pos, int) and pos >= len(doc.rstrip()):
        out += f" (the {what} ends there: is it complete?)"
    return out


class _Tools:
    """Pending tool calls of one conversation: the call's turn is placed where the call was
    made and completed when its result arrives."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.open: dict[str, tuple[Turn, str, str]] = {}

    def call(self, call_id: str | None, speaker: str, name: str, gist: str,
             when: _dt.datetime | None) -> None:
        t = Turn(speaker, tool_text(name, gist, None), when, tool=True)
        self.turns.append(t)
        self.open[call_id or f"#{len(self.turns)}"] = (t, name, gist)

    def result(self, call_id: str | None, speaker: str, output: str, error: bool,
               when: _dt.datetime | None, name: str = "tool") -> None:
        key = call_id if call_id in self.open else (next(reversed(self.open)) if self.open and call_id is None else None)
        if key is None:
            self.turns.append(Turn(speaker, tool_text(name, "", output, error), when, tool=True))
            return
        t, cname, gist = self.open.pop(key)
        t.text = tool_text(cname, gist, output, error)


# --------------------------------------------------------------------------- claude code

_CC_SKIP_TAGS = re.compile(r"<(system-reminder|local-command-stdout|local-command-stderr|"
                           r"command-message|command-args)>.*?</\1>", re.S)
_CC_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_CC_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def _cc_user_text(text: str) -> str:
    """A user message's text minus Claude Code's markup; a slash command as typed."""
    cmd = _CC_COMMAND.search(text)
    if cmd:
        args = _CC_ARGS.search(text)
        return (cmd.group(1).strip() + (" " + args.group(1).strip() if args and args.group(1).strip() else ""))
    text = _CC_SKIP_TAGS.sub("", text)
    if text.strip() in ("[Request interrupted by user]", "[Request interrupted by user for tool use]"):
        return ""
    return text.strip()


def parse_claude_code(path: Path, data: bytes) -> list[Conversation]:
    warnings: list[str] = []
    records, bad = _cc_records(path, data, warnings)
    log = _ClaudeCodeLog({r.get("uuid") for r in records if r.get("uuid")})
    for rec in records:
        log.record(rec)
    key = f"claude-code:{log.session_id or path.stem}"
    start = next((t.time for t in log.turns if t.time), None)
    return [Conversation(key, str(path), "claude-code", log.title, start, log.turns,
                         timed=any(t.time for t in log.turns), warnings=warnings,
                         dated="from its first turn's timestamp" if start else "",
                         bad_lines=bad)]


#: Damaged lines of one log named one by one in the warnings; more are counted.
_BAD_LINES_NAMED = 3


def _cc_records(path: Path, data: bytes, warnings: list[str] | None = None) -> tuple[list[dict], int]:
    """The JSON records of a Claude Code log and how many of its lines are not JSON records,
    each left out with a warning in ``warnings`` (a last line cut short is a log being
    written: the next import reads it whole; elsewhere, two processes writing at once or a
    damaged copy). ImportInputError when the file is not a log at all: more damaged lines
    than records, or no user or assistant record."""
    try:
        # Records end at "\n" only: str.splitlines() also breaks at U+2028, U+2029 and U+0085,
        # which JSON writers (Node's JSON.stringify among them) leave raw inside strings, so a
        # pasted paragraph separator would cut a good record in two damaged lines.
        lines = [ln.removesuffix("\r") for ln in data.decode("utf-8-sig").split("\n")]
    except UnicodeDecodeError:
        raise ImportInputError(f"{path}: not UTF-8 text (a Claude Code log is UTF-8 JSONL)") from None
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    records: list[dict] = []
    bad: list[str] = []
    first_bad = 0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            first_bad = first_bad or n
            if n == last:
                bad.append(f"{path}:{n}: the last line is not a JSON record ({json_error(e, 'line')}); "
                           f"1 line left out (a log still being written is read whole by the next "
                           f"import; a damaged one: fix or remove that line)")
            else:
                bad.append(f"{path}:{n}: not a JSON record ({json_error(e, 'line')}); left out "
                           f"(a damaged line: fix or remove it)")
            continue
        if not isinstance(rec, dict):
            raise ImportInputError(f"{path}:{n}: not a JSON object (a Claude Code log has one JSON "
                                   f"object per line; use --format to choose another format)")
        records.append(rec)
    if bad and len(bad) > len(records):
        raise ImportInputError(f"{path}: {len(bad)} of its {len(bad) + len(records)} lines are not "
                               f"JSON records (the first: line {first_bad}); not a Claude "
                               f"Code log (one JSON object per line)")
    if records and not any(r.get("type") in ("user", "assistant", "summary") for r in records):
        raise ImportInputError(f"{path}: no user or assistant records; not a Claude Code session log "
                               f"(use --format to choose another format)")
    if warnings is not None:
        warnings += bad[:_BAD_LINES_NAMED]
        if len(bad) > _BAD_LINES_NAMED:
            warnings.append(f"{path}: … and {len(bad) - _BAD_LINES_NAMED} more lines that are not "
                            f"JSON records, left out")
    return records, len(bad)


class _ClaudeCodeLog:
    """The turns, title and session id of a Claude Code log, read record by record."""

    def __init__(self, uuids: set[str]) -> None:
        self.uuids = uuids
        self.turns: list[Turn] = []
        self.tools = _Tools(self.turns)
        self.title: str | None = None
        self.title_sure = False
        self.session_id: str | None = None
        self.last_msg_id: str | None = None

    def record(self, rec: dict) -> None:
        """Read one record: a summary (the title) or a user/assistant message."""
        kind = rec.get("type")
        if kind == "summary" and isinstance(rec.get("summary"), str):
            # a resumed session's log can open with the summaries of earlier ones: the title
            # is the summary whose leaf is a message of this log, else the first one
            if rec.get("leafUuid") in self.uuids and not self.title_sure:
                self.title, self.title_sure = rec["summary"], True
            elif self.title is None:
                self.title = rec["summary"]
            return
        if kind not in ("user", "assistant") or rec.get("isSidechain") or rec.get("isMeta"):
            return
        self.session_id = self.session_id or rec.get("sessionId")
        when = parse_time(rec.get("timestamp"))
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
        msg_id = msg.get("id")
        record_turn = None  # the user turn this record started (its text and images)
        for b in blocks:
            if isinstance(b, dict):
                record_turn = self._block(b, kind, msg_id, when, record_turn)
        self.last_msg_id = msg_id if kind == "assistant" else None

    def _block(self, b: dict, kind: str, msg_id: str | None, when: _dt.datetime | None,
               record_turn: Turn | None) -> Turn | None:
        """Read one content block; returns the user turn the record has started so far."""
        turns = self.turns
        speaker = "User" if kind == "user" else "Claude"
        bt = b.get("type")
        if bt == "text":
            text = _cc_user_text(str(b.get("text") or "")) if kind == "user" else str(b.get("text") or "").strip()
            if not text:
                return record_turn
            prev = turns[-1] if turns else None
            if prev is not None and not prev.tool and prev.speaker == speaker and (
                    (kind == "assistant" and msg_id is not None and msg_id == self.last_msg_id)
                    or (kind == "user" and prev is record_turn)):
                prev.text += "\n" + text  # one message: several records, or text + image
            else:
                turns.append(Turn(speaker, text, when))
                record_turn = turns[-1]
        elif bt == "tool_use":
            name = str(b.get("name") or "tool")
            self.tools.call(b.get("id"), "Claude", name, tool_gist(name, b.get("input")), when)
        elif bt == "tool_result":
            self.tools.result(b.get("tool_use_id"), "Claude", _content_text(b.get("content")),
                              bool(b.get("is_error")), when)
        elif bt == "image" and kind == "user":
            if turns and turns[-1] is record_turn:
                record_turn.text += "\n[shared image]"
            else:
                turns.append(Turn(speaker, "[shared image]", when))
                record_turn = turns[-1]
        return record_turn


# --------------------------------------------------------------------------- chatgpt

_CG_SKIP_TYPES = {"user_editable_context", "model_editable_context", "thoughts", "reasoning_recap",
                  "system_error"}


def _cg_parts(content: dict, meta: dict) -> str:
    out: list[str] = []
    parts = content.get("parts")
    if isinstance(parts, list):
        for p in parts:
            if isinstance(p, str):
                if p.strip():
                    out.append(p.strip())
            elif isinstance(p, dict):
                ct = p.get("content_type", "")
                if "image" in ct:
                    prompt = ((p.get("metadata") or {}).get("dalle") or {}).get("prompt")
                    out.append(f"[shared image: {one_line(prompt, 200)}]" if prompt else "[shared image]")
                elif "audio" in ct:
                    out.append("[audio]")
                elif isinstance(p.get("text"), str):
                    out.append(p["text"].strip())
    elif isinstance(content.get("text"), str):
        out.append(content["text"].strip())
    elif isinstance(content.get("result"), str):
        out.append(content["result"].strip())
    for a in meta.get("attachments") or []:
        if isinstance(a, dict) and a.get("name"):
            out.append(f"[attachment: {one_line(a['name'], 120)}]")
    return "\n".join(x for x in out if x)


def _cg_chain(conv: dict) -> list[dict]:
    mapping = conv["mapping"]
    node = conv.get("current_node")
    if node not in mapping:
        # no current node: follow the last child from the root (the newest branch)
        roots = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("parent")]
        node = roots[0] if roots else None
        while node is not None and (mapping.get(node) or {}).get("children"):
            node = mapping[node]["children"][-1]
    chain: list[dict] = []
    seen: set[str] = set()
    while node is not None and node in mapping and node not in seen:
        seen.add(node)
        chain.append(mapping[node])
        node = mapping[node].get("parent")
    return chain[::-1]


def parse_chatgpt(path: Path, data: bytes) -> list[Conversation]:
    if path.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(path) as z:
                name = next((n for n in z.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"), None)
                if name is None:
                    raise ImportInputError(f"{path}: no conversations.json inside (expected a ChatGPT "
                                           f"data export .zip)")
                data = z.read(name)
        except zipfile.BadZipFile:
            raise ImportInputError(f"{path}: not a readable .zip file (unzip it and give its "
                                   f"conversations.json)") from None
    doc = _load_json(path, data, "a ChatGPT conversations.json")
    if isinstance(doc, dict) and "mapping" in doc:
        doc = [doc]
    if not isinstance(doc, list):
        raise ImportInputError(f"{path}: expected a list of conversations (a ChatGPT export's "
                               f"conversations.json); use --format to choose another format")
    out: list[Conversation] = []
    for i, conv in enumerate(doc):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise ImportInputError(f"{path}: conversation {i} has no 'mapping' of messages (expected "
                                   f"a ChatGPT export's conversations.json, unedited)")
        start = parse_time(conv.get("create_time"))
        turns: list[Turn] = []
        tools = _Tools(turns)
        for node in _cg_chain(conv):
            msg = node.get("message") if isinstance(node, dict) else None
            if not isinstance(msg, dict):
                continue
            meta = msg.get("metadata") or {}
            content = msg.get("content") or {}
            role = (msg.get("author") or {}).get("role")
            if (role == "system" or meta.get("is_visually_hidden_from_conversation")
                    or content.get("content_type") in _CG_SKIP_TYPES):
                continue
            when = parse_time(msg.get("create_time")) or start
            text = _cg_parts(content, meta)
            recipient = msg.get("recipient") or "all"
            if role == "assistant" and recipient != "all":
                tools.call(msg.get("id"), "ChatGPT", recipient, text, when)
            elif role == "tool":
                name = (msg.get("author") or {}).get("name") or "tool"
                tools.result(None, "ChatGPT", text, meta.get("is_error") is True, when, name)
            elif role in ("user", "assistant") and text:
                turns.append(Turn("User" if role == "user" else "ChatGPT", text, when))
        cid = conv.get("id") or conv.get("conversation_id")
        if not cid:
            cid = hashlib.sha1(f"{conv.get('title')}|{conv.get('create_time')}".encode()).hexdigest()[:16]
        out.append(Conversation(f"chatgpt:{cid}", str(path), "chatgpt", conv.get("title") or None,
                                start or next((t.time for t in turns if t.time), None), turns,
                                timed=any(t.time and t.time != start for t in turns),
                                dated="from the conversation's create_time" if start else ""))
    return out


# --------------------------------------------------------------------------- claude.ai

def is_claude_ai(doc: Any) -> bool:
    """Whether a parsed JSON document is a Claude.ai export's ``conversations.json`` (a
    list of conversations with ``chat_messages``)."""
    items = doc if isinstance(doc, list) else [doc]
    firsts = [x for x in items[:3] if isinstance(x, dict)]
    return bool(firsts) and all("chat_messages" in x for x in firsts)


def _ca_text(msg: dict) -> str:
    """A Claude.ai message's text: its ``content`` blocks (text, tool use and results as
    one-line turns are left to the caller) or its flat ``text``; attachments by name."""
    parts: list[str] = []
    content = msg.get("content")
    if isinstance(content, list) and content:
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text") or "").strip():
                parts.append(str(b["text"]).strip())
    elif isinstance(msg.get("text"), str):
        parts.append(msg["text"].strip())
    for a in (msg.get("attachments") or []) + (msg.get("files") or []):
        if isinstance(a, dict):
            name = a.get("file_name") or a.get("name")
            if name:
                parts.append(f"[attachment: {one_line(str(name), 120)}]")
    return "\n".join(p for p in parts if p)


def parse_claude_ai(path: Path, data: bytes) -> list[Conversation]:
    """A Claude.ai data export's ``conversations.json`` (or the export's .zip): a list of
    conversations with ``uuid``, ``name``, ``created_at`` and ``chat_messages`` (``sender``
    human/assistant, ``text`` or ``content`` blocks, ``created_at``, attachments)."""
    if path.suffix.lower() == ".zip":
        data = _zip_member(path, "conversations.json", "a Claude.ai data export .zip")
    doc = _load_json(path, data, "a Claude.ai conversations.json")
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise ImportInputError(f"{path}: expected a list of conversations (a Claude.ai export's "
                               f"conversations.json); use --format to choose another format")
    out: list[Conversation] = []
    for i, conv in enumerate(doc):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise ImportInputError(f"{path}: conversation {i} has no 'chat_messages' list (expected "
                                   f"a Claude.ai export's conversations.json, unedited)")
        start = parse_time(conv.get("created_at"))
        turns: list[Turn] = []
        tools = _Tools(turns)
        for msg in conv["chat_messages"]:
            if not isinstance(msg, dict):
                continue
            when = parse_time(msg.get("created_at")) or start
            sender = str(msg.get("sender") or "")
            speaker = "User" if sender == "human" else "Claude"
            for b in msg.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    name = str(b.get("name") or "tool")
                    tools.call(b.get("id"), "Claude", name, tool_gist(name, b.get("input")), when)
                elif isinstance(b, dict) and b.get("type") == "tool_result":
                    tools.result(b.get("tool_use_id"), "Claude", _content_text(b.get("content")),
                                 bool(b.get("is_error")), when, str(b.get("name") or "tool"))
            text = _ca_text(msg)
            if text and sender in ("human", "assistant"):
                turns.append(Turn(speaker, text, when))
        cid = conv.get("uuid") or hashlib.sha1(
            f"{conv.get('name')}|{conv.get('created_at')}".encode()).hexdigest()[:16]
        out.append(Conversation(f"claude-ai:{cid}", str(path), "claude-ai", conv.get("name") or None,
                                start or next((t.time for t in turns if t.time), None), turns,
                                timed=any(t.time and t.time != start for t in turns),
                                dated="from the conversation's created_at" if start else ""))
    return out


def _zip_member(path: Path, name: str, what: str) -> bytes:
    """The bytes of the member called ``name`` (in any folder) of a .zip export."""
    try:
        with zipfile.ZipFile(path) as z:
            member = next((n for n in z.namelist() if n.rsplit("/", 1)[-1] == name), None)
            if member is None:
                raise ImportInputError(f"{path}: no {name} inside (expected {what})")
            return z.read(member)
    except zipfile.BadZipFile:
        raise ImportInputError(f"{path}: not a readable .zip file (unzip it and give its "
                               f"{name})") from None


# --------------------------------------------------------------------------- messages

_ROLE_SPEAKER = {"user": "User", "assistant": "Assistant", "system": "System", "developer": "System",
                 "human": "User", "ai": "Assistant", "model": "Assistant"}
_TIME_KEYS = ("timestamp", "created_at", "create_time", "created", "date", "time")


def _msg_time(obj: dict) -> _dt.datetime | None:
    for k in _TIME_KEYS:
        t = parse_time(obj.get(k))
        if t:
            return t
    return None


def _messages_conv(path: Path, obj: dict | list, index: int | None) -> Conversation:
    where = f"{path}" + (f" (conversation {index})" if index is not None else "")
    msgs = obj.get("messages") if isinstance(obj, dict) else obj
    if not isinstance(msgs, list):
        raise ImportInputError(f"{where}: 'messages' is not a list (expected [{{\"role\": …, "
                               f"\"content\": …}}, …])")
    turns: list[Turn] = []
    tools = _Tools(turns)
    for n, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ImportInputError(f"{where}: message {n} has no 'role' (each message is "
                                   f"{{\"role\": \"user\", \"content\": \"…\"}})")
        role = m["role"].lower()
        when = _msg_time(m)
        speaker = _ROLE_SPEAKER.get(role, role.title()[:40])
        if role == "user" and isinstance(m.get("name"), str) and m["name"].strip():
            speaker = m["name"].strip()
        if role in ("tool", "function"):
            tools.result(m.get("tool_call_id"), "Assistant", _content_text(m.get("content")),
                         False, when, str(m.get("name") or "tool"))
            continue
        _message_turns(m, speaker, when, turns, tools)
    meta = obj if isinstance(obj, dict) else {}
    cid = meta.get("id") or meta.get("conversation_id") or (
        f"{path.name}#{index}" if index is not None else path.name)
    start = _msg_time(meta)
    dated = "from the conversation's own time" if start else ""
    start = start or next((t.time for t in turns if t.time), None)
    return Conversation(f"messages:{cid}", str(path), "messages",
                        meta.get("title") if isinstance(meta.get("title"), str) else None, start, turns,
                        timed=any(t.time for t in turns), dated=dated)


def _message_turns(m: dict, speaker: str, when: _dt.datetime | None, turns: list[Turn],
                   tools: _Tools) -> None:
    """One message's content parts and tool calls as turns (text before a tool call is
    its own turn)."""
    content = m.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else (
        content if isinstance(content, list) else [])
    texts: list[str] = []
    for p in parts:
        if isinstance(p, str):
            texts.append(p)
            continue
        if not isinstance(p, dict):
            continue
        pt = str(p.get("type") or "")
        if pt in ("text", "input_text", "output_text"):
            texts.append(str(p.get("text") or ""))
        elif "image" in pt:
            texts.append("[shared image]")
        elif pt in ("file", "input_file", "document"):
            name = p.get("filename") or (p.get("file") or {}).get("filename") or p.get("title")
            texts.append(f"[attachment: {name}]" if name else "[attachment]")
        elif pt == "tool_use":
            if "\n".join(texts).strip():
                turns.append(Turn(speaker, "\n".join(texts).strip(), when))
            texts = []
            name = str(p.get("name") or "tool")
            tools.call(p.get("id"), "Assistant", name, tool_gist(name, p.get("input")), when)
        elif pt == "tool_result":
            tools.result(p.get("tool_use_id"), "Assistant", _content_text(p.get("content")),
                         bool(p.get("is_error")), when)
    text = "\n".join(texts).strip()
    if text:
        turns.append(Turn(speaker, text, when))
    for call in m.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function") or {}
        name = str(fn.get("name") or "tool")
        tools.call(call.get("id"), "Assistant", name, tool_gist(name, fn.get("arguments")), when)


def parse_messages(path: Path, data: bytes) -> list[Conversation]:
    doc = _load_json(path, data, "a messages file")
    if isinstance(doc, dict) and "messages" in doc:
        return [_messages_conv(path, doc, None)]
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and "messages" in x for x in doc):
        return [_messages_conv(path, x, i) for i, x in enumerate(doc)]
    if isinstance(doc, list):
        return [_messages_conv(path, doc, None)]
    raise ImportInputError(f"{path}: expected [{{\"role\": …, \"content\": …}}, …] or "
                           f"{{\"messages\": […]}}; use --format to choose another format")


# --------------------------------------------------------------------------- text

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
            clocks.append(_clock(stamp))
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


def _clock(stamp: str | None) -> tuple[int, int, int] | _dt.datetime | None:
    """A turn's written time: a full time when it has a date, else (hour, minute, second)."""
    if not stamp:
        return None
    if re.match(r"\d{4}-", stamp):
        return parse_time(stamp)
    m = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s?(?:([AaPp])\.?[Mm]\.?)?$", stamp)
    if not m:
        return None
    h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    if m.group(4):
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if m.group(4).lower() == "p" else 0)
    return (h, mi, sec) if h < 24 and mi < 60 and sec < 60 else None


#: How far a written time of day may go back and still be the same day: a line written out
#: of order (an edit, two people's clocks). Past midnight the clock goes back by nearly a day
#: (23:58, then 00:03), so a longer step back is the next day.
_CLOCK_BACK = _dt.timedelta(hours=1)


def _clock_times(c: Conversation, day: _dt.datetime | None) -> None:
    """Time a plain transcript's turns by their written times: a time of day on ``day``
    (the session's stated day; None: its times of day are not used), a day later each time
    the clock goes back by more than ``_CLOCK_BACK`` (past midnight); a turn without one
    said when the one before was."""
    prev: _dt.datetime | None = None
    for t, clock in zip(c.turns, c.clocks):
        if isinstance(clock, _dt.datetime):
            t.time = clock
        elif clock is not None and day is not None:
            t.time = day.replace(hour=clock[0], minute=clock[1], second=clock[2], microsecond=0)
            while prev is not None and t.time < prev - _CLOCK_BACK:
                t.time += _dt.timedelta(days=1)
        else:
            t.time = prev or (day if day is not None else None)
        prev = t.time or prev
    c.timed = any(isinstance(k, _dt.datetime) or (k is not None and day is not None) for k in c.clocks)


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


_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], 1)}
_MON = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
       r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WRITTEN_DATES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    # "2026/11/03", "2026.11.03": year first is never ambiguous (03/11/2026 is, and is left);
    # dotted, two digits each, as a version number "2024.1.2" is not a date
    re.compile(r"\b(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})\b"),
    re.compile(r"(?<![\d.])(?P<y>\d{4})\.(?P<m>\d{2})\.(?P<d>\d{2})(?![\d.]*\d)"),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MON + r",?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b" + _MON + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I),
)


def written_date(text: str) -> _dt.datetime | None:
    """The first calendar date written in ``text`` — "2026-11-03", "3 November 2026",
    "Nov 3, 2026" — as midnight UTC, or None."""
    found = written_date_match(text)
    return found[0] if found else None


def written_date_match(text: str) -> tuple[_dt.datetime, str] | None:
    """:func:`written_date` and the words that wrote it ("3 November 2026")."""
    for pat in _WRITTEN_DATES:
        m = pat.search(text or "")
        if not m:
            continue
        g = m.groupdict()
        month = int(g["m"]) if g.get("m") else next(
            v for k, v in _MONTHS.items() if k.startswith(g["mon"].lower().rstrip(".")[:3]))
        try:
            return _dt.datetime(int(g["y"]), month, int(g["d"]), tzinfo=_dt.timezone.utc), m.group(0)
        except ValueError:
            continue
    return None


# --------------------------------------------------------------------------- detection

def detect(path: Path, data: bytes) -> str:
    """The format of one file, from its name and first bytes (one-line error if none)."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return _zip_format(path)
    if path.name == "conversations.json":  # ChatGPT's and Claude.ai's exports both call it so
        return "claude-ai" if is_claude_ai(_load_json(path, data, "a conversations.json")) else "chatgpt"
    if suffix == ".jsonl":
        return "claude-code"
    if suffix in (".md", ".markdown", ".txt"):
        return "text"
    head = data.lstrip()[:1]
    if suffix == ".json" or head in (b"[", b"{"):
        doc = _load_json(path, data, "a .json session file")
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
        data = _zip_member(path, "conversations.json", "a ChatGPT or Claude.ai data export .zip")
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
        _clock_times(c, None if c.dated.startswith("at import") else c.start)
