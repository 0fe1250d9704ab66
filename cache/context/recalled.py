"""The lanes recall fills (cards, thread, files): recall run for the task, and each hit as
an item of its lane, weak matches marked, the hits on one wiki page made one item of its
claim lines (:mod:`.wikipage`), and a superseded card followed by the card that replaces it."""

from __future__ import annotations

import datetime as _dt
import logging
import re
from typing import NamedTuple

from brainfs.cache.layout import KNOWLEDGE, NOTES, SESSIONS, SESSIONS_INDEX
from brainfs.cache.search.cards import Card
from brainfs.cache.search.retrieval import retrieve
from brainfs.cache.search.text import estimate_tokens

from .asof import AsOf
from .builder import _Builder
from .notes import _NotesScan, _own_supersession, _supersedes
from .policy import K_MAX, RELATIVE_FLOOR, WikiUse
from .sources import MemorySource
from .wikipage import _page_claims_item
from .window import ContextItem

# the name this warning has always carried, so that a log filter on it still sees it
log = logging.getLogger("brainfs.cache.context.assembly")


class _Recalled(NamedTuple):
    """The recall behind the cards/thread/files lanes: the mode that answered, why, cards."""

    mode: str
    why: str
    cards: list[Card]


class _RecallLanes(NamedTuple):
    """Recall hits as items of the lanes they belong to, in recall order."""

    cards: list[ContextItem]
    thread: list[ContextItem]
    files: list[ContextItem]


def _recall_cards(source: MemorySource, task: str, k: int, now: _dt.datetime,
                  stale_days: int, wiki: WikiUse | None = None, as_of: str | None = None,
                  history: bool = False) -> _Recalled:
    """Recall for the task; a failure leaves the recall lanes empty, never breaks the turn.
    With ``wiki.pool`` > 1, recall is asked ``pool`` × ``k`` deep (at most ``K_MAX``, as
    recall's cost grows with it) and keeps every wiki page
    hit but only the first ``k`` others: a page's hits become one item of a few claim
    lines, so they must not take the places of the turns."""
    if source.index is None:
        return _Recalled("none", "no search index", [])
    emb = source.embedder()
    wiki = wiki or WikiUse()
    deep = wiki.claims and wiki.pool > 1
    try:
        res = retrieve(source.index, task, k=max(k, min(K_MAX, int(k * wiki.pool))) if deep else k,
                       embedder=emb,
                       now=now, stale_days=stale_days, max_chars=100_000, as_of=as_of,
                       history=history)
        why = res.why
        if emb is None and source.embedder_error:
            why += f" (embeddings unavailable: {source.embedder_error})"
        cards = res.cards
        if deep:
            others = [c for c in cards if not _is_page(c.path)][:k]
            keep = {id(c) for c in others}
            cards = [c for c in cards if id(c) in keep or _is_page(c.path)]
        return _Recalled(res.mode, why, cards)
    except Exception as e:  # noqa: BLE001 - the turn must not break: lanes stay empty
        log.warning("recall failed during context assembly: %s", e)
        return _Recalled("none", f"recall failed: {e}", [])


def _is_page(path: str) -> bool:
    return path.startswith(KNOWLEDGE) and not path.endswith("/INDEX.md")


def _recall_lanes(found: _Recalled, source: MemorySource,
                  superseded_by: dict[str, str], task: str = "",
                  wiki: WikiUse | None = None, avail: int | None = None,
                  when: AsOf | None = None) -> _RecallLanes:
    """Each recalled card as an item of its lane (notes and wiki pages → cards, session
    files → thread, the rest → files); a note's own ``supersedes:`` joins ``superseded_by``.
    With ``wiki.claims``, a wiki page's hits become one item of claim lines, where its best
    hit ranks (:func:`_page_claims_item`)."""
    wiki = wiki or WikiUse()
    cards = found.cards
    best = max((c.score for c in cards), default=0.0)
    page_best = best
    if wiki.claims and wiki.floor_by_kind:
        # Recall scores a page chunk by its subject's name too, so a wiki hit often leads
        # the list by far; the weak-match floor is then taken per kind (pages / the rest),
        # or one strong page would drop every turn as "weak".
        page_best = max((c.score for c in cards if _is_page(c.path)), default=0.0)
        best = max((c.score for c in cards if not _is_page(c.path)), default=0.0)
    lane_ranks = {"cards": 0, "thread": 0, "files": 0}
    lanes = _RecallLanes([], [], [])
    page_hits: dict[str, list[tuple[int, Card]]] = {}
    has_claims: dict[str, bool] = {}  # a page with no cited claim lines (hand-written) stays chunks
    floor = (wiki.turn_floor if wiki.claims and wiki.floor_by_kind and page_best > 0
             and any(_is_page(c.path) for c in cards) else RELATIVE_FLOOR)
    turn_refs = _stated_turns(cards, best, floor,
                              None if wiki.dedupe_share is None or avail is None
                              else wiki.dedupe_share * avail)
    for rank, c in enumerate(cards, 1):
        p = c.path
        if wiki.claims and _is_page(p) and has_claims.setdefault(
                p, bool(source.claims(p))):
            if p not in page_hits:
                page_hits[p] = []
                lane_ranks["cards"] += 1
                lanes.cards.append(_PagePlaceholder(p, lane_ranks["cards"]))  # type: ignore[arg-type]
            page_hits[p].append((rank, c))
            continue
        if p.startswith((NOTES, KNOWLEDGE)) and not p.endswith("/INDEX.md"):
            lane, into = "cards", lanes.cards
        elif p.startswith(SESSIONS) and p != SESSIONS_INDEX:
            lane, into = "thread", lanes.thread
        else:
            lane, into = "files", lanes.files
        lane_ranks[lane] += 1
        it = _card_item(c, lane, lane_ranks[lane], rank, len(cards), found.mode, best, floor)
        if p.startswith(KNOWLEDGE) and _links_only(c.text):
            it.status = "skipped"
            it.reason += " — skipped: a list of links to other pages (## Related), no statement"
        into.append(it)
        # Supersession known only from the recalled card itself (e.g. a mount whose notes
        # listing is partial): read its frontmatter too.
        if p.startswith(NOTES):
            meta = source.frontmatter(p)
            for old in _supersedes(meta, p):
                superseded_by.setdefault(old, p)
            _own_supersession(meta, p, superseded_by)
    for i, it in enumerate(lanes.cards):
        if isinstance(it, _PagePlaceholder):
            lanes.cards[i] = _page_claims_item(source, it.path, it.rank, page_hits[it.path],
                                               len(cards), found.mode, page_best, task, turn_refs, wiki,
                                               when, floor=RELATIVE_FLOOR)
    if wiki.after_turns:  # wiki lines take what the turns leave, in the files lane
        pages = [it for it in lanes.cards if it.path in page_hits]
        lanes.cards[:] = [it for it in lanes.cards if it.path not in page_hits]
        for it in pages:
            it.lane = "files"
            it.reason = "files" + it.reason[len("cards"):]
            it.weak = it.weak and "files" + it.weak[len("cards"):]
        lanes.files[:0] = pages
    return lanes


#: Tokens of an item's header line, roughly, for :func:`_stated_turns`'s estimate.
_HEADER_TOKENS = 15


def _stated_turns(cards: list[Card], best: float, floor: float, room: float | None) -> set[str]:
    """The refs of the recalled turns (not weak) that a wiki line may leave its statement
    to: all of them, or with ``room`` (tokens) only those that fit in it, in recall order —
    a turn ranked past what the window holds states nothing."""
    out: set[str] = set()
    spent = 0
    for c in cards:
        if not c.path.startswith(SESSIONS) or (best > 0 and c.score < floor * best):
            continue
        if room is not None:
            spent += estimate_tokens(c.text) + _HEADER_TOKENS
            if spent > room:
                break
        out.add(c.ref)
    return out


_LINK_LINE = re.compile(r"^\s*[-*+]\s+\[\[[^\]]+\]\](?:\s*\([^)]*\))?\s*$")


def _links_only(text: str) -> bool:
    """Whether a chunk is only wikilinks (a page's ``## Related`` list)."""
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.startswith("#")]
    return bool(lines) and all(_LINK_LINE.match(ln) for ln in lines)


class _PagePlaceholder(NamedTuple):
    """Where a wiki page's claims item goes in the cards lane (its first hit's place)."""

    path: str
    rank: int


def _card_item(c: Card, lane: str, lane_rank: int, rank: int, n_cards: int, mode: str,
               best: float, floor: float = RELATIVE_FLOOR) -> ContextItem:
    """One recall hit as a lane item, marked weak when far below the best hit."""
    fresh = c.freshness + (" (stale)" if c.stale else "")
    reason = (f"{lane} #{lane_rank} (recall #{rank} of {n_cards}, {mode}), "
              f"score {c.score:.4f}: {c.reason}")
    if c.scope:
        reason += f"; scope {c.scope}"
    text = c.text
    if c.superseded_by:
        # recall ranked it below what replaced it; the model must not take it as current
        text += f"\n({c.superseded_by.get('mark') or 'superseded'})"
    it = ContextItem(lane=lane, status="", tokens=0, source=c.ref, reason=reason,
                     text=text, freshness=fresh, confidence=c.confidence_pct / 100.0,
                     kind=c.kind, stale=c.stale, score=c.score, rank=lane_rank,
                     updated=c.updated, path=c.path, anchor=c.anchor)
    if best > 0 and c.score < floor * best:
        it.weak = (f"{lane} #{lane_rank}: weak match, score {c.score:.4f} below "
                   f"{floor:.0%} of the best ({best:.4f})")
    return it


def _cards_lane(b: _Builder, source: MemorySource, lanes: _RecallLanes,
                notes: _NotesScan) -> list[ContextItem]:
    """The recalled cards, each followed by the newer card that supersedes it when only the
    superseded one matched."""
    cand_paths = {it.path for its in lanes for it in its} | {p for p, _ in notes.pinned}
    cards_lane: list[ContextItem] = []
    for it in lanes.cards:
        cards_lane.append(it)
        newer = notes.superseded_by.get(it.path)
        if newer and newer not in cand_paths and it.status != "skipped" and not it.weak:
            ntext = source.read(newer)
            if ntext:
                saved = len(b.items)
                nit = b.add_file("cards", newer, ntext,
                                 f"cards: supersedes {it.path}, which matched the task "
                                 f"(cards #{it.rank}); the newer statement wins")
                if nit:
                    b.items.pop(saved)
                    nit.rank = it.rank
                    cards_lane.append(nit)
                    cand_paths.add(newer)
    return cards_lane
