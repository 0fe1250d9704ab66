"""Claude Code session logs (``claude-code``): JSONL, one file per session, records of
``type`` user/assistant (``message.content`` a string or a list of text / tool_use /
tool_result blocks), ``timestamp``, ``sessionId``, ``cwd``; a ``summary`` record titles it.
A damaged line is left out with a warning; a file of more damaged lines than records is not
a log."""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path

from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn
from brainfs.cache.sessions.jsonfiles import json_error
from brainfs.cache.sessions.times import parse_time
from brainfs.cache.sessions.toolturns import ToolCalls, content_text, tool_gist


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
        self.tools = ToolCalls(self.turns)
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
            self.tools.result(b.get("tool_use_id"), "Claude", content_text(b.get("content")),
                              bool(b.get("is_error")), when)
        elif bt == "image" and kind == "user":
            if turns and turns[-1] is record_turn:
                record_turn.text += "\n[shared image]"
            else:
                turns.append(Turn(speaker, "[shared image]", when))
                record_turn = turns[-1]
        return record_turn
