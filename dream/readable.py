"""What keeps a page something a person would keep: no line said twice, and a bound on the
user's own page, which every session feeds.

* :func:`unique_lines` — a line whose words another line of the same section already says
  (the same sentence told in three sessions, a thread fragment repeated) is written once,
  at its first date.
* :func:`bound_lines` — the user's page within ``max_lines`` lines as rendered (frontmatter
  sources included): its threads go first, the last-ranked topic first (on the user's page
  a thread gathers the user's own everyday words); then the least informative timeline
  entries (the extraction's score, as ``pages.fit`` ranks them); then the oldest
  superseded values. Current lines and corrections are never cut. What is cut stays in
  the transcripts it came from and in recall; the page keeps what is true now and the
  detail that says most.
"""

from __future__ import annotations

from .synth import SECTION_ORDER, Claim
from .text import content_words

#: Lines of a rendered page besides its claims: the frontmatter's fixed keys, the title,
#: the intro, and ``## Related`` (at most 8 links).
_FIXED_LINES = 9 + 4 + 11


def unique_lines(claims: list[Claim]) -> list[Claim]:
    """``claims`` without a line that repeats an earlier one of the same section and group
    (the same content words in the same order)."""
    seen: set[tuple] = set()
    out: list[Claim] = []
    for c in claims:
        if c.parts:  # a gathered line is one of a kind
            out.append(c)
            continue
        key = (c.section, c.group, " ".join(content_words(c.text)), c.extra)
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out


def page_lines(claims: list[Claim]) -> int:
    """How many lines a page of ``claims`` renders to (see :data:`_FIXED_LINES`)."""
    sources = set()
    n = _FIXED_LINES
    for section in SECTION_ORDER:
        cs = [c for c in claims if c.section == section]
        if not cs:
            continue
        n += (2 if section != "Now" else 0) + len(cs) + 1
        if section == "Threads":
            n += 3 * len({c.group for c in cs})
    for c in claims:
        sources.add(c.source)
        if c.extra_source:
            sources.add(c.extra_source)
        sources.update(src for _v, src in c.parts)
    return n + len(sources)


def bound_lines(claims: list[Claim], max_lines: int) -> list[Claim]:
    """``claims`` cut to render within ``max_lines`` lines (see the module docstring)."""
    if max_lines <= 0 or page_lines(claims) <= max_lines:
        return claims
    drop: set[int] = set()

    def left() -> list[Claim]:
        return [c for c in claims if id(c) not in drop]

    topics = list(dict.fromkeys(c.group for c in claims if c.section == "Threads"))
    while topics and page_lines(left()) > max_lines:
        t = topics.pop()
        drop.update(id(c) for c in claims if c.section == "Threads" and c.group == t)
    for section, order in (("Timeline", lambda c: -c.rank), ("Superseded", lambda c: c.date or "")):
        cut = sorted((c for c in claims if c.section == section), key=order)
        # one line at a time would be quadratic on a long page: cut by the overshoot
        while cut and page_lines(left()) > max_lines:
            over = page_lines(left()) - max_lines
            step, cut = cut[: max(1, over // 2)], cut[max(1, over // 2):]
            drop.update(id(c) for c in step)
    return left()
