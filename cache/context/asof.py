"""The context window as of a past day: what the memory held at the end of that day.

Recall answers "as of" a day by itself (``retrieval.retrieve(as_of=…)``, :mod:`..search.validity`):
turns said later are left out and only changes made by then mark a passage replaced. The
rest of the window is read from files as they are now, and a file dream rewrites states
today's values: a page's current lines, its ``## Superseded`` lines ("… — until 2 February
2026, replaced by Sora City Lab"), the one-line summaries of ``knowledge/INDEX.md``, the
"(corrected …; was …)" lines of ``GUIDE.md``, and the ``supersedes:`` links between cards.
:class:`AsOf` reads each of them as it stood on the day, from the dates they carry, the days
of the sessions they cite (a transcript's ``date:``) and the fact records
(``knowledge/.facts.jsonl``):

* a line is left out when it was not true or not said yet: every turn it cites was said
  later, a current line's value began later ("since 2 February 2026", or a record of its
  value that begins later), a timeline line said later;
* a ``## Superseded`` line whose change came later stated the value of the day: it is shown
  as a current line (its record's present-tense text when there is one, else the line
  without its tail), never marked replaced by what happened after;
* a line gathered across sessions keeps only the values said by then;
* an INDEX.md summary naming a value that began later is cut to the page's name and type;
* a GUIDE.md line corrected later is left out, and so is a later session's line of
  ``sessions/index.md``;
* a card replaces another (``supersedes:``/``superseded_by:``) only from the day it was
  written, and a card written later is not pinned yet.

Lines whose dates cannot be read are kept as they are: the day is a filter on what is
known to be later, not a guess.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from brainfs.cache.facts.records import FACTS_PATH, FactFormatError, FactRecord, FactSet
from brainfs.cache.search.chunker import human_date, normalize_date
from brainfs.cache.search.validity import DAY as _DAY, iso_day as day_of

from .claims import Claim

if TYPE_CHECKING:
    from .sources import MemorySource

#: The tail dream puts on a replaced value's line (validity reads the same words).
_TAIL = re.compile(
    rf"\s+—\s+(?:until (?P<d1>{_DAY}),\s+(?:replaced by .+|ended)"
    rf"|corrected (?P<d2>{_DAY}):\s+.+|contradicted on (?P<d3>{_DAY}):\s+.+)$")
#: How a current line dates its value: "(since 2 February 2026, as said)", "(corrected 2026-03-06)".
_SINCE = re.compile(rf"\((?:since|from) (?P<d>{_DAY})|\(corrected (?P<c>{_DAY})")
_FROM = re.compile(rf"\(from (?P<d>{_DAY})\)")
#: A value of a gathered line with its citation: "swimming (May 2023) [cite:3]".
_PART = re.compile(r"\s*(?P<v>[^\[]+?)\s*\[cite:\s*(?P<n>\d+)\]\s*,?")
_CORRECTED = re.compile(r"\(corrected (?P<d>\d{4}-\d{2}-\d{2}); was .+\)\s*$")
_ROW_DAY = re.compile(r"\|\s*(\d{4}-\d{2}-\d{2})")
_INDEX_LINE = re.compile(r"^(?P<head>\s*-\s*\[\[[^\]]+\]\][^;]*?)(?P<gist>;.*)$")


def end_of_day(day: str) -> _dt.datetime:
    """The last instant of ``day`` (UTC): freshness and staleness are judged then."""
    d = _dt.date.fromisoformat(day)
    return _dt.datetime(d.year, d.month, d.day, 23, 59, 59, tzinfo=_dt.timezone.utc)


@dataclass
class PageView:
    """A page's claim lines as of the day, and what changed: lines left out (not yet said
    or true), lines shown as they stood (replaced only later)."""

    claims: dict[str, Claim]
    later: int = 0
    then: int = 0


@dataclass
class AsOf:
    """What the memory held at the end of ``day`` (see the module docstring)."""

    day: str
    source: MemorySource
    facts: FactSet = field(default_factory=FactSet)
    _said: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, source: MemorySource, day: str) -> AsOf:
        """The view of ``source`` on ``day``, with its fact records (a bad line is skipped:
        the records' reader names it elsewhere)."""
        records: list[FactRecord] = []
        for line in (source.read(FACTS_PATH) or "").splitlines():
            if line.strip():
                try:
                    records.append(FactRecord.from_dict(json.loads(line)))
                except (ValueError, TypeError, AttributeError, FactFormatError):
                    continue
        return cls(day, source, FactSet(records))

    # -- dates -------------------------------------------------------------------------
    def said(self, ref: str) -> str | None:
        """The day a turn (``sessions/<id>/transcript.md#D1:3``) or a card was said or
        written: its file's ``date:`` (``created:`` for a card); None when unknown."""
        path = ref.split("#", 1)[0]
        if path not in self._said:
            meta = self.source.frontmatter(path) if path else {}
            when = meta.get("date") or meta.get("created")
            self._said[path] = (normalize_date(when) or "")[:10] or None
        return self._said[path]

    def later(self, day: str | None) -> bool:
        """Whether a known day comes after the view's day."""
        return bool(day) and day > self.day  # type: ignore[operator]

    def _all_said_later(self, refs: tuple[str, ...]) -> bool:
        days = [self.said(r) for r in refs]
        return bool(days) and all(self.later(d) for d in days)

    # -- page lines --------------------------------------------------------------------
    def page(self, claims: dict[str, Claim]) -> PageView:
        """A page's claim lines (:func:`claims.page_claims`) as they stood on the day."""
        view = PageView({})
        for key, cl in claims.items():
            got = self.claim(cl)
            if got is None:
                view.later += 1
                continue
            if got is not cl:
                view.then += 1
            view.claims[key] = got
        return view

    def claim(self, cl: Claim) -> Claim | None:
        """One line as it stood on the day: itself, a rewritten line, or None (not yet)."""
        if cl.section == "gathered":
            return self._gathered(cl)
        if self._all_said_later(cl.sources):
            return None
        if cl.section == "superseded":
            return self._replaced(cl)
        if cl.section == "now":
            m = _SINCE.search(cl.text)
            if m and self.later(day_of(m.group("d") or m.group("c"))):
                return None
            if any(self.later((r.valid_from or "")[:10]) and r.value.casefold() in cl.text.casefold()
                   for s in cl.sources for r in self.facts.citing(s)):
                return None
            return cl
        if not any(self.said(s) for s in cl.sources) and self.later(cl.date):
            return None  # a dated line nobody is known to have said by then
        return cl

    def _replaced(self, cl: Claim) -> Claim | None:
        """A ``## Superseded`` line: replaced by then (kept, marked), true then (shown as a
        current line), or not true yet (None)."""
        tail = _TAIL.search(cl.text)
        if tail is None:
            return cl
        changed = day_of(tail.group("d1") or tail.group("d2") or tail.group("d3"))
        if not self.later(changed):
            return cl  # replaced by then: it stays marked
        head = cl.text[:tail.start()].strip()
        begun = _FROM.search(head)
        if begun and self.later(day_of(begun.group("d"))):
            return None
        kept = tuple(s for s in cl.sources if not self.later(self.said(s))) or cl.sources[:1]
        rec = self._record(kept, head)
        if rec is not None:
            since = human_date(rec.valid_from) if rec.valid_from else None
            text = rec.text + (f" (since {since})" if since else "")
        else:
            text = _FROM.sub(lambda m: f"(since {m.group('d')})", head)
        return replace(cl, section="now", text=text, sources=kept)

    def _record(self, sources: tuple[str, ...], text: str) -> FactRecord | None:
        """The record of a replaced value (cited by the line, its value in the line, open
        on the day), whose text says it in the present tense."""
        low = text.casefold()
        for s in sources:
            for r in self.facts.citing(s):
                if r.value.casefold() in low and r.open_at(self.day):
                    return r
        return None

    def _gathered(self, cl: Claim) -> Claim | None:
        """A line gathered across sessions keeps the values said by then."""
        days = [self.said(s) for s in cl.sources]
        if not any(self.later(d) for d in days):
            return cl
        body = re.sub(r"^\s{0,3}[-*+]\s+", "", cl.raw)
        lead, sep, rest = body.partition(": ")
        parts = list(_PART.finditer(rest)) if sep else []
        numbers = list(dict.fromkeys(m.group("n") for m in parts))
        if not parts or len(numbers) != len(cl.sources):
            return None  # its values cannot be told apart: none is shown
        src = dict(zip(numbers, cl.sources))
        keep = [m for m in parts if not self.later(self.said(src[m.group("n")]))]
        if not keep:
            return None
        lead_text = cl.text.partition(": ")[0] if ": " in cl.text else lead
        text = f"{lead_text}: " + ", ".join(m.group("v").strip() for m in keep)
        return replace(cl, text=text, sources=tuple(dict.fromkeys(src[m.group("n")] for m in keep)))

    # -- other files -------------------------------------------------------------------
    def index(self, text: str) -> tuple[str, int]:
        """INDEX.md with each summary that names a value begun after the day cut to the
        page's name and type; the text and how many summaries were cut."""
        later = [r.value.casefold() for r in self.facts
                 if self.later((r.valid_from or "")[:10]) and r.value.strip()]
        if not later:
            return text, 0
        out, n = [], 0
        for line in text.split("\n"):
            m = _INDEX_LINE.match(line)
            if m and any(v in m.group("gist").casefold() for v in later):
                line, n = m.group("head").rstrip(), n + 1
            out.append(line)
        return "\n".join(out), n

    def guide(self, text: str) -> tuple[str, int]:
        """GUIDE.md without the lines a correction after the day wrote; how many."""
        out, n = [], 0
        for line in text.split("\n"):
            m = _CORRECTED.search(line)
            if m and self.later(m.group("d")):
                n += 1
                continue
            out.append(line)
        return "\n".join(out), n

    def sessions(self, rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """``sessions/index.md`` rows of the sessions held by the day."""
        return [r for r in rows if not self.later(r[1][:10])]

    def sessions_text(self, text: str) -> str:
        """``sessions/index.md`` (or a chunk of it) without the lines of later sessions."""
        return "\n".join(ln for ln in text.split("\n")
                         if not self.later(next(iter(_ROW_DAY.findall(ln)), None)))

    def supersession(self, superseded_by: dict[str, str]) -> int:
        """Drop the ``old → newer card`` links whose newer card was written after the day
        (it replaced nothing yet); how many."""
        gone = [old for old, newer in superseded_by.items() if self.later(self.said(newer))]
        for old in gone:
            del superseded_by[old]
        return len(gone)

    def written(self, paths: list[str]) -> list[str]:
        """The cards written by the day (their ``created:``; unknown: kept)."""
        return [p for p in paths if not self.later(self.said(p))]

    def pinned(self, pinned: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        """The pinned cards written by the day."""
        return [(p, meta) for p, meta in pinned
                if not self.later((normalize_date(meta.get("created")) or "")[:10] or None)]
