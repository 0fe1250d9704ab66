"""What a recalled passage states: still true, or replaced — by what and since when.

Recall ranks what is true now above what was replaced, marks a replaced passage
``superseded by <value> (<date>)`` and, asked "as of" a day, answers with what held then.
The memory says what was replaced in four places, all read here:

* the fact records (``knowledge/.facts.jsonl``, :mod:`brainfs.cache.facts.records`): a closed
  record is replaced by its successor; a record is itself a passage (kind ``fact``, anchored
  by its id);
* cards (``notes/…``) whose frontmatter says ``superseded_by: <newer card>`` (what a
  correction leaves on the card it replaces), or names its ``record:`` (then the record
  decides);
* the lines of a page's ``## Superseded`` section (``… — until 2 February 2026, replaced by
  Sora City Lab [cite:1]``, ``— corrected 2026-12-02: … [cite:6]``, ``— contradicted on …``);
* a transcript turn that is the source of a closed record or a superseded card, and of no
  statement still open, states a replaced value too.

At index time :func:`statements_of` takes from each file what this needs (the records, a
card's frontmatter, a page's superseded lines with their cited sources) and the index stores
it beside the file's chunks (``SearchIndex.statements``); :class:`Validity` is built from
those rows once per index state, so a query only looks its candidates up in dicts.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from brainfs.cache.facts.records import FACTS_PATH, FactFormatError, FactRecord, FactSet

from .chunker import normalize_date, path_kind, slugify, split_frontmatter

#: The kind of a fact record's chunk.
FACT_KIND = "fact"
#: The heading of a page's section of replaced values (dream writes it).
SUPERSEDED_HEADING = "Superseded"
#: A replaced passage's score is multiplied by this (``cur-v1`` in ``retrieval``): it falls
#: below the open passages that match about as well, yet a question that only it answers
#: still finds it; and it never comes before its successor (which is lifted to its place).
DEMOTE = 0.5


@dataclass(frozen=True)
class Replacement:
    """What replaced a statement: the new value (None when it ended with no successor: "I
    left X"), the day the change happened, and where the new value is stated."""

    value: str | None
    date: str | None
    source: str | None

    @property
    def mark(self) -> str:
        """The words every view puts on the replaced passage."""
        when = self.date or "date unknown"
        return f"superseded by {self.value} ({when})" if self.value else f"ended ({when})"

    def to_dict(self) -> dict[str, Any]:
        """JSON: ``{"value", "date", "source", "mark"}``."""
        return {"value": self.value, "date": self.date, "source": self.source, "mark": self.mark}


@dataclass(frozen=True)
class Verdict:
    """What :meth:`Validity.judge` says of one passage: left out (``as_of`` before it was
    said), replaced (by what), and the places (path, anchor) of what replaced it."""

    drop: bool = False
    replaced: Replacement | None = None
    successors: tuple[tuple[str, str], ...] = ()


CURRENT = Verdict()


# --------------------------------------------------------------------------- index time

_CITE_RE = re.compile(r"\s*\[cite:\s*([0-9][0-9,\s]*)\]", re.I)
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
#: A day as pages write it: ISO, or "2 February 2026".
DAY = r"\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]+ \d{4}"
#: "… — until 2 February 2026, replaced by Sora City Lab", "— until …, ended",
#: "— corrected 2026-12-02: figures as SVG, not PDF", "— contradicted on 2026-04-29: …"
_TAIL_RE = re.compile(
    rf"\s+—\s+(?:until (?P<d1>{DAY}),\s+(?:replaced by (?P<v1>.+)|(?P<ended>ended))"
    rf"|corrected (?P<d2>{DAY}):\s+(?P<v2>.+)"
    rf"|contradicted on (?P<d3>{DAY}):\s+(?P<v3>.+))$")
_SOURCE_LINE_RE = re.compile(r"^Source:\s*(\S+)\s*$", re.M)


def iso_day(text: str | None) -> str | None:
    """"2 February 2026" or "2026-02-02…" → "2026-02-02"; None when it is not a day."""
    if not text:
        return None
    text = str(text).strip()
    try:
        return _dt.datetime.strptime(text, "%d %B %Y").date().isoformat()
    except ValueError:
        pass
    iso = normalize_date(text)
    return iso[:10] if iso else None


def _source_table(meta: dict[str, Any]) -> dict[int, str]:
    """A page's ``sources:`` list as {cite number: ref} (1-based, as dream writes it)."""
    src = meta.get("sources")
    out: dict[int, str] = {}
    if isinstance(src, list):
        for i, s in enumerate(src, 1):
            if isinstance(s, str) and s.strip():
                out[i] = s.strip()
            elif isinstance(s, dict):
                t = s.get("path") or s.get("source") or s.get("ref")
                if isinstance(t, str):
                    out[int(s.get("id") or s.get("n") or i)] = t.strip()
    return out


def _superseded_lines(meta: dict[str, Any], body: str) -> list[dict[str, Any]]:
    """The lines of a page's ``## Superseded`` section, each with the replacement it names."""
    table = _source_table(meta)
    out: list[dict[str, Any]] = []
    inside = False
    for line in body.split("\n"):
        m = _HEADING_RE.match(line)
        if m:
            inside = m.group(2).strip() == SUPERSEDED_HEADING
            continue
        if not inside or not line.lstrip().startswith(("- ", "* ")):
            continue
        text = line.strip()[2:].strip()
        cites = [int(n) for c in _CITE_RE.findall(text) for n in re.findall(r"\d+", c)]
        plain = _CITE_RE.sub("", text).strip()
        t = _TAIL_RE.search(plain)
        if t is None:
            continue
        value = (t.group("v1") or t.group("v2") or t.group("v3") or "").strip() or None
        day = iso_day(t.group("d1") or t.group("d2") or t.group("d3"))
        # the tail's own citation is the new value's source: the last one on the line
        tail_cites = [int(n) for c in _CITE_RE.findall(text[text.find(" — "):]) for n in re.findall(r"\d+", c)] \
            if " — " in text else []
        source = table.get(tail_cites[-1]) if tail_cites else None
        out.append({"line": " ".join(plain[:t.start()].split()), "value": value, "date": day,
                    "source": source, "cites": [table[n] for n in cites if n in table]})
    return out


def _card_sources(meta: dict[str, Any], body: str) -> list[str]:
    refs: list[str] = []
    for key in ("source", "sources"):
        v = meta.get(key)
        for s in ([v] if isinstance(v, str) else v if isinstance(v, list) else []):
            if isinstance(s, str) and s.strip():
                refs.append(s.strip())
    refs += _SOURCE_LINE_RE.findall(body)
    return list(dict.fromkeys(refs))


def statements_of(path: str, text: str) -> list[tuple[str, str]]:
    """What the index keeps of a file for :class:`Validity`: (anchor, JSON) rows — one per
    fact record (anchored by its id), one for a card, one per ``## Superseded`` line of a
    page (anchored like that section's chunks); [] for anything else. Never raises."""
    try:
        if path == FACTS_PATH:
            rows = []
            for line in text.splitlines():
                if line.strip():
                    try:
                        d = json.loads(line)
                        rec = FactRecord.from_dict(d)
                    except (ValueError, FactFormatError):
                        continue  # a bad line is not a statement; the rest still are
                    rows.append((rec.id, json.dumps({"record": json.loads(rec.to_json())},
                                                    ensure_ascii=False)))
            return rows
        kind = path_kind(path)
        if kind not in ("note", "page"):
            return []
        meta, body, bad = split_frontmatter(text)
        if bad:
            return []
        meta = meta or {}
        if kind == "note":
            by = meta.get("superseded_by")
            card = {"superseded_by": by if isinstance(by, str) else None,
                    "record": meta.get("record") if isinstance(meta.get("record"), str) else None,
                    "created": (normalize_date(meta.get("created")) or "")[:10] or None,
                    "updated": (normalize_date(meta.get("updated")) or "")[:10] or None,
                    "sources": _card_sources(meta, body),
                    "text": " ".join(_SOURCE_LINE_RE.sub("", body).split())[:300]}
            return [("", json.dumps({"card": card}, ensure_ascii=False))]
        return [(slugify(SUPERSEDED_HEADING), json.dumps({"superseded": ln}, ensure_ascii=False))
                for ln in _superseded_lines(meta, body)]
    except Exception:  # noqa: BLE001 - a file we cannot read this way states nothing here
        return []


# --------------------------------------------------------------------------- query time

def _norm(text: str) -> str:
    return " ".join(_CITE_RE.sub("", text or "").split()).casefold()


class Validity:
    """The index's statements, asked of each candidate passage (see the module docstring)."""

    def __init__(self, rows: Iterable[tuple[str, str, str]]) -> None:
        records: list[FactRecord] = []
        self.cards: dict[str, dict[str, Any]] = {}
        self.lines: dict[str, list[dict[str, Any]]] = {}
        for path, _anchor, data in rows:
            try:
                d = json.loads(data)
            except ValueError:
                continue
            if "record" in d:
                try:
                    records.append(FactRecord.from_dict(d["record"]))
                except FactFormatError:
                    continue
            elif "card" in d:
                self.cards[path] = d["card"]
            elif "superseded" in d:
                self.lines.setdefault(path, []).append(d["superseded"])
        self.facts = FactSet(records)
        #: turn ref → the cards that cite it
        self._card_citing: dict[str, list[str]] = {}
        for p, c in self.cards.items():
            for s in c.get("sources") or ():
                self._card_citing.setdefault(s, []).append(p)

    def __bool__(self) -> bool:
        return bool(self.facts.records or self.lines
                    or any(c.get("superseded_by") or c.get("record") for c in self.cards.values()))

    # -- records
    def _record_closed(self, rec: FactRecord, day: str | None) -> str | None:
        """The day ``rec`` closed if it had by ``day`` (now: at all), else None."""
        if rec.is_open:
            return None
        nxt = self.facts.by_id.get(rec.superseded_by or "")
        when = rec.valid_until or (nxt.valid_from if nxt else None) or ""
        if day is not None and (not when or when[:10] > day):
            return None
        return when[:10] or "?"

    def _record_replacement(self, rec: FactRecord, day: str | None) -> Verdict:
        closed = self._record_closed(rec, day)
        if closed is None:
            return CURRENT
        nxt = self.facts.by_id.get(rec.superseded_by or "")
        seen = {rec.id}
        # the newest value by then: follow the chain while the next one had closed too
        while nxt is not None and nxt.id not in seen and nxt.superseded_by \
                and self._record_closed(nxt, day) is not None \
                and nxt.superseded_by in self.facts.by_id:
            seen.add(nxt.id)
            nxt = self.facts.by_id[nxt.superseded_by]
        date = None if closed == "?" else closed
        if nxt is None:
            return Verdict(replaced=Replacement(None, date, None))
        src = nxt.sources[0] if nxt.sources else f"{FACTS_PATH}#{nxt.id}"
        succ = [(FACTS_PATH, nxt.id)] + [_split_ref(s) for s in nxt.sources[:1]]
        return Verdict(replaced=Replacement(nxt.value, date, src), successors=tuple(succ))

    # -- cards
    def _card_replacement(self, path: str, day: str | None) -> Verdict:
        card = self.cards.get(path) or {}
        rec = self.facts.by_id.get(card.get("record") or "")
        if rec is not None:
            v = self._record_replacement(rec, day)
            if v.replaced is not None:
                return Verdict(replaced=v.replaced, successors=v.successors
                               + ((_split_ref(card["superseded_by"]),) if card.get("superseded_by") else ()))
            if not card.get("superseded_by"):
                return CURRENT
        by = card.get("superseded_by")
        if not by:
            return CURRENT
        seen = {path}
        nxt, nxt_path = self.cards.get(by), by
        when = (nxt or {}).get("created") or card.get("updated")
        if day is not None and (not when or when > day):
            return CURRENT
        while nxt is not None and nxt.get("superseded_by") and nxt_path not in seen:
            later = nxt["superseded_by"]
            later_card = self.cards.get(later)
            later_when = (later_card or {}).get("created")
            if later_card is None or (day is not None and (not later_when or later_when > day)):
                break
            seen.add(nxt_path)
            nxt, nxt_path = later_card, later
        value = (nxt or {}).get("text") or nxt_path
        return Verdict(replaced=Replacement(value, when, nxt_path), successors=((nxt_path, ""),))

    def _card_open(self, path: str, day: str | None) -> bool:
        return self._card_replacement(path, day).replaced is None

    # -- the question
    def judge(self, row: dict[str, Any], day: str | None = None) -> Verdict:
        """Whether the passage ``row`` (an index chunk row) is left out as of ``day``
        (None: now), and what replaced what it states by then."""
        path, anchor = row.get("path") or "", row.get("anchor") or ""
        said = (row.get("created") or row.get("updated") or "")[:10]
        if path == FACTS_PATH:
            rec = self.facts.by_id.get(anchor)
            if rec is None:
                return CURRENT
            if day is not None and rec.valid_from and rec.valid_from[:10] > day:
                return Verdict(drop=True)
            return self._record_replacement(rec, day)
        kind = row.get("kind") or ""
        if kind == "turn" or (row.get("speaker") and "#" not in path):
            if day is not None and said and said > day:
                return Verdict(drop=True)
            return self._turn_replacement(f"{path}#{anchor}" if anchor else path, day)
        if path in self.cards:
            card = self.cards[path]
            if day is not None and card.get("created") and card["created"] > day:
                return Verdict(drop=True)
            return self._card_replacement(path, day)
        if row.get("heading") == SUPERSEDED_HEADING and path in self.lines:
            return self._line_replacement(path, row.get("text") or "", day)
        return CURRENT

    def _turn_replacement(self, ref: str, day: str | None) -> Verdict:
        recs = [r for r in self.facts.citing(ref)
                if day is None or not r.valid_from or r.valid_from[:10] <= day]
        cards = [p for p in self._card_citing.get(ref, ())
                 if day is None or not self.cards[p].get("created") or self.cards[p]["created"] <= day]
        if not recs and not cards:
            return CURRENT
        verdicts = [self._record_replacement(r, day) for r in recs] + \
                   [self._card_replacement(p, day) for p in cards]
        if any(v.replaced is None for v in verdicts):
            return CURRENT  # it still states something true
        return max(verdicts, key=lambda v: v.replaced.date or "")  # type: ignore[union-attr]

    def _line_replacement(self, path: str, text: str, day: str | None) -> Verdict:
        chunk = _norm(text)
        for ln in self.lines.get(path, ()):
            if _norm(ln.get("line") or "") not in chunk:
                continue
            if day is not None and (not ln.get("date") or ln["date"] > day):
                continue
            src = ln.get("source")
            return Verdict(replaced=Replacement(ln.get("value"), ln.get("date"), src),
                           successors=((_split_ref(src),) if src else ()))
        return CURRENT


def _split_ref(ref: str) -> tuple[str, str]:
    path, _, anchor = ref.partition("#")
    return path, anchor
