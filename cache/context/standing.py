"""The lanes read before recall: the folder's scope (project, notes, what the memory
holds) and the guide lane (the global guide, GUIDE.md, ``rules/``), with the counts of
pages and sessions behind the scope."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from brainfs.cache.layout import GUIDE_PATH, INDEX_PATH, KNOWLEDGE

from .asof import AsOf
from .builder import _Builder, _body
from .notes import _NotesScan
from .sources import MemorySource
from .window import ContextItem


class _Guide(NamedTuple):
    """The guide lane's items (global guide, GUIDE.md, rules) and GUIDE.md's frontmatter."""

    items: list[ContextItem]
    meta: dict[str, Any]


_INDEX_LINE = re.compile(r"^\s*-\s*(?P<id>[^|]+?)\s*\|\s*(?P<date>\d{4}-\d{2}-\d{2}[^|]*?)\s*\|\s*(?P<title>.*)$")


def _sessions_index(text: str | None) -> list[tuple[str, str, str]]:
    """``sessions/index.md`` lines → [(session id, date, title)]."""
    out = []
    for line in (text or "").splitlines():
        m = _INDEX_LINE.match(line)
        if m:
            sid = m.group("id").strip().strip("[]`")
            out.append((sid, m.group("date").strip(), m.group("title").strip()))
    return out


def _count_pages(source: MemorySource, index_text: str | None) -> int:
    """The wiki's pages as they are now: the ``knowledge/*.md`` files (pages written since
    the last dream are not in INDEX.md yet), or INDEX.md's links where the folder cannot be
    listed."""
    pages = [p for p in source.list(KNOWLEDGE.rstrip("/"))
             if p.endswith(".md") and p.count("/") == 1 and p != INDEX_PATH]
    if pages:
        return len(pages)
    return len(re.findall(r"\[\[[^\]]+\]\]", index_text or "")) if index_text else 0


def _guide_lane(b: _Builder, source: MemorySource, when: AsOf | None = None) -> _Guide:
    """The global guide, the project's GUIDE.md and its ``rules/``, each whole (as of a
    day: GUIDE.md without the lines corrections after it wrote)."""
    items: list[ContextItem] = []
    gpath = source.global_guide
    gtext = None
    try:
        gtext = gpath.read_text(encoding="utf-8", errors="replace") if gpath and gpath.is_file() else None
    except OSError:
        gtext = None
    if gtext:
        it = b.add_file("guide", f"~global/{gpath.name}", gtext,
                        f"guide: global guide ({gpath}), applies in every memory", kind="guide",
                        stale_ok=False, default_conf=1.0)
        if it:
            items.append(it)
    guide_text = source.read_cached(GUIDE_PATH)
    guide_meta = _body(guide_text)[0] if guide_text else {}
    if guide_text:
        why = "guide: project guide, standing instructions for every turn here"
        if when is not None:
            guide_text, cut = when.guide(guide_text)
            if cut:
                why += (f"; as of {when.day}: {cut} line{'s' if cut != 1 else ''} a correction "
                        f"after {when.day} wrote left out")
        it = b.add_file("guide", GUIDE_PATH, guide_text, why,
                        kind="guide", stale_ok=False, default_conf=1.0)
        if it:
            items.append(it)
    for rp in (p for p in source.list("rules") if p.endswith((".md", ".markdown", ".txt"))):
        rtext = source.read_cached(rp)
        if rtext:
            it = b.add_file("guide", rp, rtext, "guide: strict rule, applied whole on every turn",
                            kind="rule", stale_ok=False, default_conf=1.0)
            if it:
                it.kind = "rule"
                items.append(it)
    return _Guide(items, guide_meta)


def _scope(source: MemorySource, guide: _Guide, notes: _NotesScan, n_pages: int,
           n_sessions: int, newest: tuple[str, str, str] | None) -> dict[str, Any]:
    """The folder's metadata (the window's ``scope``, also the scope lane's text)."""
    meta = guide.meta
    scope: dict[str, Any] = {
        "project": str(meta.get("project") or meta.get("name") or source.name),
        "notes": str(meta.get("notes") or meta.get("user_notes") or "").strip() or None,
        "root": str(source.root) if source.root is not None else source.name,
        "knowledge_pages": n_pages,
        "note_cards": len(notes.paths),
        "pinned": len(notes.pinned),
        "rules": sum(1 for i in guide.items if i.kind == "rule"),
        "sessions": n_sessions,
        "newest_session": ({"id": newest[0], "date": newest[1][:10], "title": newest[2]}
                           if newest else None),
    }
    scope["summary"] = (f"{scope['knowledge_pages']} knowledge pages, {scope['note_cards']} note cards "
                        f"({scope['pinned']} pinned), {scope['sessions']} sessions"
                        + (f", newest {newest[1][:10]} \"{newest[2]}\"" if newest else "")
                        + f", {scope['rules']} rules")
    return scope


def _scope_item(scope: dict[str, Any], as_of: str | None = None) -> ContextItem:
    """The scope lane's one item: project, root and what the memory holds (as of a day:
    which day, so the model reads the rest as what held then)."""
    stext = f"Project: {scope['project']}\n"
    if scope["root"] != scope["project"]:  # a corpus URL names the project itself
        stext += f"Memory root: {scope['root']}\n"
    stext += f"Memory holds: {scope['summary']}"
    if scope["notes"]:
        stext += f"\nUser's notes: {scope['notes']}"
    reason = ("scope: folder metadata (project, notes, memory summary) from GUIDE.md "
              "frontmatter, knowledge/INDEX.md and sessions/index.md")
    if as_of:
        stext += f"\nAs of: {as_of} (what the memory held at the end of that day)"
        reason += f"; as of {as_of}: sessions up to that day, later statements left out"
    return ContextItem(
        lane="scope", status="", tokens=0, source="(folder scope)",
        reason=reason,
        text=stext, freshness="today", confidence=1.0, kind="scope", path="")
