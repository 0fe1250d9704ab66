"""What recall returns: a card per passage, with the metadata that makes the pick
inspectable and the reason it is there, and the answer as Markdown."""

from __future__ import annotations

import datetime as _dt
import logging
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .fusion import ADJUST, FUSION, RRF_K, age_days
from .queryterms import fts_query
from .staleness import is_stale

if TYPE_CHECKING:
    from .currency import Currency
    from .index import SearchIndex
    from .restated import Restated

# Cards are made under the name of the module they were part of, as before.
log = logging.getLogger("brainfs.cache.search.retrieval")


@dataclass
class Card:
    """One recalled passage with the metadata that makes the pick inspectable."""

    path: str
    anchor: str
    kind: str
    scope: str | None
    title: str | None
    text: str
    truncated: bool
    freshness: str
    stale: bool
    confidence_pct: int
    score: float
    reason: str
    ranks: dict[str, int] = field(default_factory=dict)
    matched_terms: list[str] = field(default_factory=list)
    updated: str | None = None
    speaker: str | None = None
    chunk_id: int | None = None
    #: what replaced the value this passage states (``validity.Replacement.to_dict``:
    #: value, date, source, mark), None while it holds
    superseded_by: dict[str, Any] | None = None

    @property
    def ref(self) -> str:
        """Citation form ``path#anchor``."""
        return f"{self.path}#{self.anchor}" if self.anchor else self.path

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (includes ``ref``)."""
        d = asdict(self)
        d["ref"] = self.ref
        return d


@dataclass
class RecallResult:
    """What :func:`~.retrieval.retrieve` returns: the cards, which retrieval mode answered and why."""

    query: str
    mode: str
    cards: list[Card]
    timings: dict[str, float]
    why: str = ""
    terms: list[str] = field(default_factory=list)
    fusion: str = f"{FUSION}(k={RRF_K})+{ADJUST}"
    #: the day the answer is as of (None: now); whether replaced passages kept their rank
    as_of: str | None = None
    history: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"query": self.query, "mode": self.mode, "why": self.why, "terms": self.terms,
                "fusion": self.fusion, "as_of": self.as_of, "history": self.history,
                "timings": self.timings, "cards": [c.to_dict() for c in self.cards]}


def truncate(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_chars`` characters at a word boundary, ending in "…".

    Returns (text, truncated)."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text, False
    limit = max(1, max_chars - 1)  # room for the ellipsis
    cut = text[:limit]
    if not text[limit].isspace():  # the cut falls inside a word: back up to its start
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        if space >= limit // 2:  # …unless that word is huge (a URL, a hash): cut hard
            cut = cut[:space]
    return cut.rstrip(" \t\n,;:-—") + "…", True


def freshness_label(days: float | None) -> str:
    """A human label for an age in days: "today", "3 days ago", "5 months ago", …"""
    if days is None:
        return "date unknown"
    if days < -1:
        n = math.ceil(-days)
        return f"in {n} day{'s' if n != 1 else ''}" if n < 60 else "in the future"
    if days < 1:
        return "today"
    if days < 2:
        return "yesterday"

    def plural(n: int, unit: str) -> str:
        return f"{n} {unit}{'s' if n != 1 else ''} ago"

    if days < 14:
        return plural(int(days), "day")
    if days < 60:
        return plural(int(days // 7), "week")
    if days < 730:
        return plural(max(2, int(days // 30.44)), "month")
    return plural(int(days // 365.25), "year")


def matched_terms(index: SearchIndex, terms: list[str], top: list[int],
                  answered: str) -> dict[int, list[int]]:
    """Which query terms each top chunk holds (for the reason line; cosmetic)."""
    if terms and answered != "recent" and index.has_fts():
        try:
            return index.matched_phrases(fts_query(terms), top)
        except Exception as e:  # noqa: BLE001 - cosmetic: the reason line loses its terms
            log.debug("matched-terms lookup failed: %s", e)
    return {}


def make_card(row: dict[str, Any], cid: int, score: float, cid_ranks: dict[str, int],
              mterms: list[str], answered: str, notes: list[str], now: _dt.datetime,
              stale_days: int, max_chars: int) -> Card:
    """One recalled chunk as a card, with the reason it is there."""
    updated = row["updated"] or row["created"]
    days = age_days(updated, now)
    text, cut = truncate(row["text"] or "", max_chars)
    # the question's own lists, with its name-free form's ("dense:unnamed") and its best
    # sentences' ("dense:sentences"); a split question's parts are only counted
    r = {n: v for n, v in cid_ranks.items() if ":" not in n or n.endswith((":unnamed", ":sentences"))}
    parts_hit = sum(1 for n in cid_ranks if n not in r)
    reason = ", ".join(f"{name} #{rank}" for name, rank in sorted(r.items(), key=lambda x: x[1]))
    if parts_hit:
        reason += (", " if reason else "") + f"{parts_hit} sub-query list{'s' if parts_hit > 1 else ''}"
    if not reason:
        reason = "next to a match"
    if answered == "recent":
        reason = f"recent #{r.get('recent')} (no search: {'; '.join(notes) or 'as requested'})"
    if mterms:
        reason += "; matched: " + ", ".join(mterms)
    return Card(
        path=row["path"], anchor=row["anchor"], kind=row["kind"], scope=row["scope"],
        title=row["title"], text=text, truncated=cut, freshness=freshness_label(days),
        stale=is_stale(text, row["kind"] or "", days, stale_days),
        confidence_pct=int(round(100 * float(row["confidence"] if row["confidence"] is not None else 0))),
        score=round(score, 6), reason=reason, ranks=dict(r), matched_terms=mterms,
        updated=updated, speaker=row["speaker"], chunk_id=cid)


def mark(cards: list[Card], cur: Currency, rest: Restated) -> None:
    """Say in each card what replaced the value it states (``superseded_by`` and its
    reason), what it replaced when it was lifted for that, and which of its wiki lines
    were left to the turns they cite."""
    for card in cards:
        v = cur.verdicts.get(card.chunk_id)  # type: ignore[arg-type]
        if v is not None and v.replaced is not None:
            card.superseded_by = v.replaced.to_dict()
            card.reason += f"; {v.replaced.mark}"
        if card.chunk_id in cur.lifted:
            card.reason += f"; what replaced {cur.lifted[card.chunk_id]}"
        left_to = rest.left_to.get(card.chunk_id)  # type: ignore[arg-type]
        if left_to:
            card.reason += "; lines left to the recalled turns they cite: " + ", ".join(left_to)


def render_synthesis(result: RecallResult, materialized: list[str]) -> str:
    """Deterministic, extractive Markdown for a recall: the passages grouped by file (files
    in order of their best card), each with ``path#anchor``, metadata and score, then the
    files now materialized on local disk. No model is involved; same input, same output."""
    lines = [f"# Recall: {result.query.strip() or '(empty query)'}", ""]
    nfiles = len({c.path for c in result.cards})
    lines.append(f"_mode {result.why}; {len(result.cards)} passages from "
                 f"{nfiles} file{'s' if nfiles != 1 else ''}_")
    lines.append("")
    groups: dict[str, list[Card]] = {}
    for c in result.cards:
        groups.setdefault(c.path, []).append(c)
    if not groups:
        lines += ["Nothing found.", ""]
    for path, cards in groups.items():
        title = cards[0].title
        lines.append(f"## {path}" + (f" — {title}" if title and title not in path else ""))
        lines.append("")
        for c in cards:
            meta = [c.kind]
            if c.scope:
                meta.append(f"scope {c.scope}")
            meta.append(c.freshness + (" (stale)" if c.stale else ""))
            meta.append(f"confidence {c.confidence_pct}%")
            meta.append(f"score {c.score:.4f}")
            if c.truncated:
                meta.append("truncated")
            if c.superseded_by:
                meta.append(str(c.superseded_by.get("mark") or "superseded"))
            lines.append(f"- `{c.ref}` · {' · '.join(meta)} — {c.reason}")
            lines.extend("  > " + ln if ln.strip() else "  >" for ln in c.text.split("\n"))
            lines.append("")
    lines.append("## Files now materialized")
    lines.append("")
    if materialized:
        lines.extend(f"- {p}" for p in materialized)
    else:
        lines.append("- (none)")
    lines.append("")
    return "\n".join(lines)
