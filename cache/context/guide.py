"""The part of a long guide that is about the task.

A guide (``GUIDE.md``, the global guide) is standing prose: a few paragraphs and lists under
``##`` headings. When a small window cannot hold all of it, the cut that helps the model is
not the file's first N tokens but its lines about the task — "Email handling: wants drafts,
never sent directly" for a task about an email — kept under their own headings so they
still read as the guide's. :func:`relevant_part` makes that cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .claims import words

_HEADING = re.compile(r"^#{1,6}\s+\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class Unit:
    """One paragraph or list item of a guide, under its heading (``""`` before the first)."""

    heading: str
    text: str
    order: int


def units(body: str) -> list[Unit]:
    """A guide's body as units: each list item and each paragraph, with the heading above."""
    out: list[Unit] = []
    heading = ""
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(Unit(heading, "\n".join(para), len(out)))
            para.clear()

    for line in body.split("\n"):
        if _HEADING.match(line):
            flush()
            heading = line.strip()
        elif not line.strip():
            flush()
        elif _LIST_ITEM.match(line):
            flush()
            para.append(line.rstrip())
        elif para and _LIST_ITEM.match(para[0]) and line.startswith((" ", "\t")):
            para.append(line.rstrip())  # a list item's continuation line
        else:
            if para and _LIST_ITEM.match(para[0]):
                flush()
            para.append(line.rstrip())
    flush()
    return out


def render(chosen: list[Unit]) -> str:
    """Units in the guide's order, each heading written once above its units."""
    lines: list[str] = []
    last: str | None = None
    for u in sorted(chosen, key=lambda u: u.order):
        if u.heading != last:
            if lines:
                lines.append("")
            if u.heading:
                lines.append(u.heading)
            last = u.heading
        lines.append(u.text)
    return "\n".join(lines)


def relevant_part(body: str, task: str, limit: int,
                  count: Callable[[str], int]) -> tuple[str, int, int] | None:
    """The guide's units about ``task`` that fit in ``limit`` tokens (``count`` measures a
    candidate text as rendered), most task words first, rendered in the guide's order
    under their headings; the opening paragraph (who the user is) leads when it fits.
    Returns (text, units kept, units in all), or None when no unit shares a word with the
    task or not even one fits — the caller then cuts the file as any other item."""
    all_units = units(body)
    want = words(task)
    scored = sorted(((len(want & words(u.heading + " " + u.text)), u) for u in all_units),
                    key=lambda x: (-x[0], x[1].order))
    relevant = [u for s, u in scored if s > 0]
    if not relevant:
        return None
    intro = [u for u in all_units[:1] if not u.heading and u not in relevant]
    chosen: list[Unit] = []
    for u in intro + relevant:
        trial = chosen + [u]
        if count(render(trial)) <= limit:
            chosen = trial
    if not any(u in relevant for u in chosen):
        return None
    text = render(chosen)
    return text, len(chosen), len(all_units)
