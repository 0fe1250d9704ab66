"""A Claude.ai data export (``claude-ai``): its ``conversations.json`` (or the export's
.zip), conversations with ``uuid``, ``name``, ``created_at`` and ``chat_messages``
(``sender`` human/assistant, ``text`` or ``content`` blocks, ``created_at``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn
from brainfs.cache.sessions.jsonfiles import load_json, zip_member
from brainfs.cache.sessions.times import parse_time
from brainfs.cache.sessions.toolturns import ToolCalls, content_text, one_line, tool_gist


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
        data = zip_member(path, "conversations.json", "a Claude.ai data export .zip")
    doc = load_json(path, data, "a Claude.ai conversations.json")
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
        tools = ToolCalls(turns)
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
                    tools.result(b.get("tool_use_id"), "Claude", content_text(b.get("content")),
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
