"""A tool call and its result as one short turn of the assistant, ``[tool: Bash] ls -la
(312 lines of output: total 48)``: the call's gist and the output's first line, never its
body, so that tool output cannot flood search. Shared by the formats that carry tool calls
(Claude Code, Claude.ai, ChatGPT, messages)."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from brainfs.cache.sessions.conversation import Turn

#: The first output line kept in a tool turn: enough for "error: No module named foo" or a
#: file's first line, short enough that a tool turn stays a one-line summary.
TOOL_LINE_CHARS = 100


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


def content_text(content: Any) -> str:
    """Plain text of a tool result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(content_text(c.get("text") if isinstance(c, dict) else c)
                         for c in content if c is not None)
    if isinstance(content, dict):
        return content_text(content.get("text") or content.get("content") or "")
    return "" if content is None else str(content)


class ToolCalls:
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
