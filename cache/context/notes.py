"""What the note cards' frontmatter says for a window: which cards are pinned, and which
card supersedes which (``supersedes:``, ``superseded_by:``); and the pinned lane."""

from __future__ import annotations

from typing import Any, NamedTuple

from brainfs.cache.search.chunker import normalize_date

from .builder import _Builder
from .sources import MemorySource


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1", "on"))


def _norm_path(v: str, base: str) -> str:
    v = str(v).strip().split("#", 1)[0].strip().lstrip("/")
    if v.startswith("./"):
        v = v[2:]
    if "/" not in v and base:
        v = f"{base.rsplit('/', 1)[0]}/{v}"
    return v


def _own_supersession(meta: dict[str, Any], path: str, superseded_by: dict[str, str]) -> None:
    """A card that says it is superseded (``superseded_by:``, as dream marks the older card
    when a correction or a newer statement replaces it) is, even when the newer card does
    not name it in ``supersedes:`` or is not listed."""
    newer = meta.get("superseded_by")
    if isinstance(newer, str) and newer.strip() and newer.strip() != path:
        superseded_by.setdefault(path, newer.strip())


def _supersedes(meta: dict[str, Any], path: str) -> list[str]:
    raw = meta.get("supersedes")
    if not raw:
        return []
    vals = raw if isinstance(raw, list) else [raw]
    return [_norm_path(v, path) for v in vals if isinstance(v, str) and v.strip()]


class _NotesScan(NamedTuple):
    """What a scan of ``notes/`` frontmatter finds: the note paths, old path → the card that
    supersedes it, and the pinned cards with their frontmatter."""

    paths: list[str]
    superseded_by: dict[str, str]
    pinned: list[tuple[str, dict[str, Any]]]


def _scan_notes(source: MemorySource) -> _NotesScan:
    """Every note's frontmatter: the supersedes map and the pinned cards."""
    note_paths = [p for p in source.list("notes") if p.endswith((".md", ".markdown"))]
    superseded_by: dict[str, str] = {}
    pinned: list[tuple[str, dict[str, Any]]] = []
    for p in note_paths:
        meta = source.frontmatter(p)
        if not meta:
            continue
        for old in _supersedes(meta, p):
            superseded_by.setdefault(old, p)
        _own_supersession(meta, p, superseded_by)
        if _truthy(meta.get("pinned")):
            pinned.append((p, meta))
    return _NotesScan(note_paths, superseded_by, pinned)


def _pinned_lane(b: _Builder, source: MemorySource, pinned: list[tuple[str, dict[str, Any]]]) -> None:
    """Pinned cards, newest first."""
    def upd(meta: dict[str, Any]) -> str:
        return normalize_date(meta.get("updated")) or normalize_date(meta.get("created")) or ""

    for rank, (p, meta) in enumerate(sorted(pinned, key=lambda x: upd(x[1]), reverse=True), 1):
        text = source.read(p)
        if text:
            it = b.add_file("pinned", p, text, f"pinned #{rank}: frontmatter says pinned: true")
            if it:
                it.rank = rank
