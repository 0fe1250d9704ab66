"""Message lists (``messages``): OpenAI-style ``[{"role": …, "content": …}]`` or
``{"messages": […]}``, one conversation or a list of them; Anthropic content blocks and
OpenAI ``tool_calls`` too."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn
from brainfs.cache.sessions.jsonfiles import load_json
from brainfs.cache.sessions.times import parse_time
from brainfs.cache.sessions.toolturns import ToolCalls, content_text, tool_gist


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
    tools = ToolCalls(turns)
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
            tools.result(m.get("tool_call_id"), "Assistant", content_text(m.get("content")),
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
                   tools: ToolCalls) -> None:
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
            tools.result(p.get("tool_use_id"), "Assistant", content_text(p.get("content")),
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
    doc = load_json(path, data, "a messages file")
    if isinstance(doc, dict) and "messages" in doc:
        return [_messages_conv(path, doc, None)]
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and "messages" in x for x in doc):
        return [_messages_conv(path, x, i) for i, x in enumerate(doc)]
    if isinstance(doc, list):
        return [_messages_conv(path, doc, None)]
    raise ImportInputError(f"{path}: expected [{{\"role\": …, \"content\": …}}, …] or "
                           f"{{\"messages\": […]}}; use --format to choose another format")
