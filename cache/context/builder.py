"""The items of a window as they are gathered, before admission: a file read whole becomes
an item with its frontmatter's kind, confidence, date and freshness."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from brainfs.cache.search.chunker import (DEFAULT_CONFIDENCE, normalize_date, parse_confidence,
                                          path_kind, split_frontmatter)
from brainfs.cache.search.cards import freshness_label
from brainfs.cache.search.fusion import age_days
from brainfs.cache.search.staleness import is_stale

from .sources import MemorySource
from .window import ContextItem


def _body(text: str) -> tuple[dict[str, Any], str]:
    meta, body, bad = split_frontmatter(text.replace("\r\n", "\n"))
    return (meta or {}), (text if bad else body).strip()


class _Builder:
    """The items gathered for one window, with the clock and the staleness setting they are
    read with."""

    def __init__(self, task: str, src: MemorySource, now: _dt.datetime, stale_days: int,
                 drop_stale: bool) -> None:
        self.task, self.src, self.now = task, src, now
        self.stale_days, self.drop_stale = stale_days, drop_stale
        self.items: list[ContextItem] = []

    def _age(self, updated: str | None, text: str = "", kind: str = "") -> tuple[str, bool, float | None]:
        days = age_days(updated, self.now)
        stale = is_stale(text, kind, days, self.stale_days)
        return freshness_label(days) + (" (stale)" if stale else ""), stale, days

    def add_file(self, lane: str, path: str, text: str, reason: str, *, kind: str | None = None,
                 stale_ok: bool = True, default_conf: float | None = None) -> ContextItem | None:
        meta, body = _body(text)
        if not body:
            return None
        k = kind or str(meta.get("type") or path_kind(path))
        base = path_kind(path)
        conf = parse_confidence(meta.get("confidence"),
                                default_conf if default_conf is not None
                                else DEFAULT_CONFIDENCE.get(base, DEFAULT_CONFIDENCE["text"]))
        updated = normalize_date(meta.get("updated")) or normalize_date(meta.get("created") or meta.get("date"))
        fresh, stale, _ = self._age(updated, body, k)
        if not stale_ok:  # standing material: age is shown, never a reason to drop
            stale = False
            fresh = fresh.replace(" (stale)", "")
        it = ContextItem(lane=lane, status="", tokens=0, source=path, reason=reason, text=body,
                         freshness=fresh, confidence=conf, kind=k, stale=stale, updated=updated,
                         path=path, whole=True)
        self.items.append(it)
        return it
