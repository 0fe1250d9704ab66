"""A ChatGPT data export (``chatgpt``): its ``conversations.json`` (or the export's .zip), a
list of conversations with ``title``, ``create_time`` and a ``mapping`` of nodes; the
conversation is the chain from ``current_node`` up to the root (the branch shown last)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from brainfs.cache.sessions.conversation import Conversation, ImportInputError, Turn
from brainfs.cache.sessions.jsonfiles import load_json
from brainfs.cache.sessions.times import parse_time
from brainfs.cache.sessions.toolturns import ToolCalls, one_line


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
    doc = load_json(path, data, "a ChatGPT conversations.json")
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
        tools = ToolCalls(turns)
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
