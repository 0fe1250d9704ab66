"""The "context window" page (``brainfs context --html FILE``): the budget as a bar, one row
per item with its text, reason and source, filters by lane and status, sortable columns.

One self-contained HTML file (inline CSS and script, nothing fetched), rendered from the
Jinja2 template ``page.html`` beside this module with autoescaping on.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from .window import ContextWindow

# jinja2 (55 ms) is imported when a page is rendered: every context assembly imports this
# module (through window.py), and few of them write a page.

#: One colour per lane, on the bar, the legend and the rows.
LANE_COLORS = {"scope": "#6b7280", "guide": "#7c3aed", "index": "#0e7490", "pinned": "#c2410c",
               "cards": "#2563eb", "thread": "#15803d", "files": "#a16207"}
_OTHER = "#374151"


def human_time(stamp: str) -> str:
    """``2026-11-30T22:51:42.123456+00:00`` -> ``30 Nov 2026, 22:51 UTC`` (unparsable: as is)."""
    try:
        t = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return stamp or ""
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc)
    return f"{t.day} {t:%b %Y, %H:%M} UTC"


def source_link(path: str, base: str | None) -> str | None:
    """Where an item's source opens: ``base`` + path (``file:///…/`` for a mount or a tree,
    ``s3://bucket/prefix/`` for a corpus); None when the item has no file behind it."""
    if not path or not base:
        return None
    return base.rstrip("/") + "/" + quote(path)


def link_base(where: str | Path | None) -> str | None:
    """The ``base`` for :func:`source_link`: a directory as a ``file://`` URI, an s3 URL as is."""
    if where is None:
        return None
    text = str(where)
    if text.startswith("s3://"):
        return text
    return Path(text).resolve().as_uri()


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda part, whole: f"{100.0 * part / whole:.3f}" if whole else "0"
    return env


def render(w: ContextWindow, base: str | None = None) -> str:
    """The page for window ``w``; sources link under ``base`` (see :func:`link_base`)."""
    usage = w.lane_usage()  # in lane order, present lanes only
    lanes = [{"name": lane, "color": LANE_COLORS.get(lane, _OTHER), **u,
              "in": u["admitted"] + u["truncated"]}
             for lane, u in usage.items()]
    items: list[dict[str, Any]] = []
    for n, it in enumerate(w.items, 1):
        items.append({"n": n, "it": it, "color": LANE_COLORS.get(it.lane, _OTHER),
                      "href": source_link(it.path, base), "pct": round(100 * it.confidence)})
    counts = {s: sum(1 for i in w.items if i.status == s) for s in ("admitted", "truncated", "skipped")}
    sc = w.scope
    meta = [("project", sc.get("project")), ("memory", sc.get("summary")),
            ("user's notes", sc.get("notes") or "—"), ("mode", f"{w.mode} — {w.why}"),
            ("tokens", w.tokenizer),
            ("assembled", f"{human_time(w.now)} in {w.timings.get('total_ms', 0):.0f} ms")]
    return _environment().get_template("page.html").render(
        w=w, lanes=lanes, items=items, counts=counts, meta=meta,
        free=max(0, w.available - w.used),
        pct_used=100.0 * w.used / w.available if w.available else 0.0)
