"""A wiki page's recall hits as one item of the cards lane: its claim lines about the task
(:mod:`.claims`), dated as a person writes them, without ``[cite:N]`` markers, chosen as
:class:`~.policy.WikiUse` says."""

from __future__ import annotations

from typing import NamedTuple

from brainfs.cache.search.chunker import normalize_date
from brainfs.cache.search.cards import Card

from .asof import AsOf
from .claims import Claim, chunk_claims, names_page, page_names, words
from .policy import WikiUse
from .sources import MemorySource
from .window import ContextItem


def _said(source: MemorySource, claim: Claim) -> str | None:
    """The day of the session whose turn a claim cites first (its transcript's ``date:``)."""
    path = claim.sources[0].split("#", 1)[0] if claim.sources else ""
    if not (claim.date and path.endswith("/transcript.md")):
        return None
    return (normalize_date(source.frontmatter(path).get("date")) or "")[:10] or None


def _whole_lines(claims: dict[str, Claim]) -> dict[tuple[str, ...], Claim]:
    """The line that stands in for a thread fragment, by the turns it cites.

    A thread fragment is a cut of a timeline line: the whole line stands in for it, or,
    when the timeline was cut (``max_timeline``), the longest fragment of the same turn."""
    whole: dict[tuple[str, ...], Claim] = {}
    for cl in claims.values():
        if cl.section in ("now", "timeline"):
            whole.setdefault(cl.sources, cl)
    for cl in claims.values():
        if cl.section == "thread":
            have = whole.get(cl.sources)
            if have is None or (have.section == "thread" and len(cl.text) > len(have.text)):
                whole[cl.sources] = cl
    return whole


class _Lines(NamedTuple):
    """The claim lines a page's item was chosen from, and the counts its reason gives."""

    kept: list[Claim]
    considered: list[Claim]
    steps: list[Claim]
    n_lines: int
    n_other: int
    n_dup: int


def _lines_about(source: MemorySource, claims: dict[str, Claim], hits: list[tuple[int, Card]],
                 want: set[str], named: bool, turn_refs: set[str], wiki: WikiUse) -> _Lines:
    """The page's lines about the task (``want``: its words besides the page's names), in
    order: the procedure's steps, the gathered lines of a page the task names, then the
    lines of the recalled chunks (see :func:`_page_claims_item`)."""
    whole = _whole_lines(claims)
    kept: list[Claim] = []
    considered: list[Claim] = []
    seen_text: set[str] = set()
    n_lines = n_other = n_dup = 0
    # the lines gathered across sessions of a page the task names come first, recalled or not
    gathered = [cl for cl in claims.values() if cl.section == "gathered"] if wiki.gathered and named else []
    # A procedure's steps come whole and in order, whichever of its chunks recall found: a
    # step rarely shares a word with the task that asks for the procedure, and no turn
    # states the steps as they stand once amended, so none is left to a turn either.
    steps = [cl for cl in claims.values() if cl.section == "step"]
    for cl in steps + [cl for cl in gathered if want & words(cl.text)] + [
            cl for _rank, c in hits for cl in chunk_claims(c.text, claims) if cl.section != "step"]:
        n_lines += 1
        considered.append(cl)
        if cl.section == "step":
            kept.append(cl)
            seen_text.add(cl.render())
            continue
        if cl.section == "thread":
            if not wiki.threads:
                n_other += 1
                continue
            cl = whole.get(cl.sources, cl)
        if len(want & words(cl.text)) < wiki.overlap and not (named and cl.section == "now"):
            n_other += 1
            continue
        if wiki.dedupe and not wiki.prefer_lines and set(cl.sources) <= turn_refs:
            n_dup += 1
            continue
        line = cl.render(_said(source, cl))
        if line in seen_text:
            continue
        seen_text.add(line)
        kept.append(cl)
    return _Lines(kept, considered, steps, n_lines, n_other, n_dup)


def _page_claims_item(source: MemorySource, path: str, lane_rank: int,
                      hits: list[tuple[int, Card]], n_cards: int, mode: str, best: float,
                      task: str, turn_refs: set[str], wiki: WikiUse,
                      when: AsOf | None = None, *, floor: float) -> ContextItem:
    """One wiki page's recall hits as one cards item of claim lines (see :class:`WikiUse`):
    the lines of its recalled chunks, in recall order, that share ``wiki.overlap`` words
    with the task besides the page's names, less those whose cited turns are all recall
    hits too (``wiki.dedupe``, unless ``wiki.prefer_lines``), and repeats; a thread fragment is read as the whole timeline
    line it was cut from (or the longest fragment of the same turn). A task that names the
    page's subject also gets its lines of what is true now; a procedure page, its numbered
    steps first, all of them in order. A page none of whose lines is left is a skipped item
    that says why. As of a day (``when``) the page's lines are read
    as they stood then (:meth:`.asof.AsOf.page`). ``floor`` is the weak-match floor, a
    share of the ``best`` hit's score (``RELATIVE_FLOOR``)."""
    meta = source.frontmatter(path)
    claims = source.claims(path)
    view = when.page(claims) if when is not None else None
    if view is not None:
        claims = view.claims
    names = page_names(meta)
    want = words(task, names)
    # a task that names the page's subject gets what is true of it now, whatever its words
    named = names_page(meta, task)
    kept, considered, steps, n_lines, n_other, n_dup = _lines_about(
        source, claims, hits, want, named, turn_refs, wiki)
    first_rank, top = hits[0]
    score = max(c.score for _r, c in hits)
    reason = (f"cards #{lane_rank} (recall #{first_rank} of {n_cards}, {mode}), score {score:.4f}: "
              f"wiki page, {len(hits)} recalled chunk{'s' if len(hits) != 1 else ''} holding "
              f"{n_lines} claim line{'s' if n_lines != 1 else ''}: {len(kept)} kept"
              + (f" ({len(steps)} step{'s' if len(steps) != 1 else ''} of the procedure, in order)"
                 if steps else "") + f", {n_other} "
              f"sharing no word with the task, {n_dup} already stated by a recalled turn or "
              f"line; {top.reason}")
    if view is not None and (view.later or view.then):
        reason += (f"; as of {when.day}: {view.later} line{'s' if view.later != 1 else ''} "  # type: ignore[union-attr]
                   f"not yet said or true left out, {view.then} replaced only later shown as "
                   "they stood")
    if kept:
        srcs = list(dict.fromkeys(s for cl in kept for s in cl.sources))
        reason += "; cites " + ", ".join(srcs[:6]) + (f" and {len(srcs) - 6} more" if len(srcs) > 6 else "")
    it = ContextItem(lane="cards", status="", tokens=0, source=path, reason=reason,
                     line_sources={cl.render(_said(source, cl)): cl.sources for cl in kept}
                     if wiki.prefer_lines else {},
                     text="\n".join(dict.fromkeys(cl.render(_said(source, cl)) for cl in (kept or considered)))
                     or top.text,
                     freshness=top.freshness + (" (stale)" if top.stale else ""),
                     confidence=top.confidence_pct / 100.0, kind="claims" if kept else top.kind,
                     stale=top.stale, score=score, rank=lane_rank, updated=top.updated,
                     path=path, anchor="")
    if not kept and claims:
        it.status = "skipped"
        it.reason += " — skipped: no claim line of the recalled chunks is about the task"
    elif not kept and view is not None and view.later:
        it.status = "skipped"
        it.reason += f" — skipped: every claim line of the page came after {when.day}"  # type: ignore[union-attr]
    if view is not None and not kept and not considered:
        it.text = ""  # the chunk as written may state what came later
    elif best > 0 and score < floor * best:
        it.weak = (f"cards #{lane_rank}: weak match, score {score:.4f} below "
                   f"{floor:.0%} of the best ({best:.4f})")
    return it
