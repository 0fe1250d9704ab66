"""Wiki lines that restate what recall returns anyway: left to the turns they cite.

A knowledge page (``knowledge/*.md``, dream/README.md *Pages*) is mostly a digest of the
transcripts: each claim line cites the turns it was read from (``[cite:N]`` → the page's
``sources:``), and those turns are indexed too. When recall returns a page chunk *and*
every turn one of its lines cites, the line says nothing the list does not say in full,
yet takes room in the reader's budget (on LoCoMo dev, wiki passages took 463 of the first
1,000 tokens of hybrid recall, and answers fell from 72.0 % to 70.2 %). Such a line is
dropped from the chunk's text, the chunk when no line is left, and the list is filled up
to ``k`` again from the next candidates — the rule ``brainfs context`` applies to its
claim lines (``assembly.WikiUse.dedupe``).

Kept whatever the turns: a line that cites nothing or a source the page does not list
(nothing to check it against), the lines of the ``## Superseded`` section and of a passage
``validity`` marks replaced (what replaced a value is said by no single turn), and the
lines of what is true now of a page the query names (its title or one of its aliases,
every word in the query): the answer to "what is X now" is the page's, not a turn's. A kept
line is kept verbatim, so its ``[cite:N]`` resolves through the page as before.

The chunk's cites come resolved from the index (``Chunk.cites``, ``chunks.cites``); an
index of an earlier format has none, and its pages are returned whole, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from brainfs.cache.layout import KNOWLEDGE

from .chunker import cite_numbers
from .validity import SUPERSEDED_HEADING

_WORD = re.compile(r"[^\W_]+")


def is_wiki(row: dict[str, Any]) -> bool:
    """Whether a chunk row is of a knowledge page (INDEX.md cites nothing)."""
    path = str(row.get("path") or "")
    return path.startswith(KNOWLEDGE) and path.endswith(".md") and not path.endswith("/INDEX.md")


def turn_ref(row: dict[str, Any]) -> str | None:
    """A transcript turn's citation form (``path#anchor``), None for any other chunk."""
    if row.get("kind") != "turn" or not row.get("anchor"):
        return None
    return f"{row['path']}#{row['anchor']}"


def chunk_cites(row: dict[str, Any]) -> dict[int, str]:
    """A chunk row's resolved ``[cite:N]`` sources (JSON in ``chunks.cites``); {} when none
    or unreadable."""
    raw = row.get("cites")
    if not raw:
        return {}
    try:
        return {int(n): str(ref) for n, ref in json.loads(raw).items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def names_subject(query: str, names: list[str]) -> bool:
    """Whether ``query`` names a page's subject: every word of one of its ``names`` (title,
    aliases) stands in it (``claims.names_page``'s rule)."""
    have = set(_WORD.findall(query.lower()))
    return any(ws and ws <= have for ws in (set(_WORD.findall(n.lower())) for n in names))


def is_now(row: dict[str, Any]) -> bool:
    """Whether a page chunk is of its lines true now: under no heading or the page's own
    title (``# Melanie``), before ``## Timeline``."""
    heading = row.get("heading")
    return heading is None or heading == row.get("title")


def left_lines(text: str, cites: dict[int, str], turns: set[str]) -> tuple[str, list[str]]:
    """``text`` without its lines whose every ``[cite:N]`` resolves (``cites``) to one of
    ``turns``, and the refs those lines cited. A line citing nothing, or a number ``cites``
    does not resolve, stays."""
    kept: list[str] = []
    left_to: list[str] = []
    for line in text.split("\n"):
        nums = cite_numbers(line)
        refs = [cites.get(n) for n in nums]
        if nums and all(r is not None and r in turns for r in refs):
            left_to += [r for r in refs if r and r not in left_to]
            continue
        kept.append(line)
    return "\n".join(kept).strip("\n"), left_to


@dataclass
class Restated:
    """What :func:`leave_to_turns` made of a list: the ids in order, the new text of each
    chunk that lost lines, the turns each such chunk left its lines to, and counts."""

    ids: list[int]
    texts: dict[int, str] = field(default_factory=dict)
    left_to: dict[int, list[str]] = field(default_factory=dict)
    lines: int = 0
    dropped: int = 0

    def said(self) -> str:
        """The stage's words for ``why`` ("" when it changed nothing)."""
        if not self.lines:
            return ""
        return (f"{self.lines} wiki line{'s' if self.lines != 1 else ''} left to the recalled turns "
                f"they cite" + (f" ({self.dropped} passage{'s' if self.dropped != 1 else ''} "
                                "dropped, the list filled up again)" if self.dropped else ""))


def leave_to_turns(chosen: list[int], order: list[int], rows: dict[int, dict[str, Any]], k: int,
                   query: str, protected: set[int],
                   names_of: Callable[[dict[str, Any]], list[str]]) -> Restated:
    """The first ``k`` of ``chosen``, then ``order``, with each wiki chunk's lines that
    restate a returned turn dropped (see the module docstring); ``protected`` chunks (marked
    replaced) are left whole; ``names_of(row)`` gives a page's title and aliases.

    Turns only join the list (a dropped chunk is never a turn), so a line once left to its
    turns stays redundant: the loop ends when no chunk is emptied, at most once per chunk.
    """
    ids = [c for c in chosen if c in rows][:k]
    pool = iter([c for c in order if c in rows and c not in set(ids)])
    named: dict[str, bool] = {}

    def keeps_whole(c: int) -> bool:
        row = rows[c]
        if c in protected or not is_wiki(row) or row.get("heading") == SUPERSEDED_HEADING:
            return True
        if is_now(row):
            path = str(row["path"])
            if path not in named:
                named[path] = names_subject(query, names_of(row))
            return named[path]
        return False

    out = Restated(ids)
    gone: set[int] = set()
    while True:
        turns = {r for c in ids if (r := turn_ref(rows[c])) is not None}
        out.texts, out.left_to, emptied = {}, {}, []
        for c in ids:
            cites = chunk_cites(rows[c])
            if not cites or keeps_whole(c):
                continue
            text, left_to = left_lines(str(rows[c].get("text") or ""), cites, turns)
            if not left_to:
                continue
            if text.strip():
                out.texts[c], out.left_to[c] = text, left_to
            else:
                emptied.append(c)
        if not emptied:
            break
        gone.update(emptied)
        ids[:] = [c for c in ids if c not in gone]
        for c in pool:
            ids.append(c)
            if len(ids) >= k:
                break
    out.dropped = len(gone)
    out.lines = sum(_lines(rows[c].get("text")) for c in gone) + sum(
        _lines(rows[c].get("text")) - _lines(t) for c, t in out.texts.items())
    return out


def _lines(text: Any) -> int:
    return sum(1 for ln in str(text or "").split("\n") if ln.strip())
