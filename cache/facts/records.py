"""Fact records: every statement dream keeps, with the time it held.

The one source of truth behind the wiki's views. Dream writes the records; the pages,
cards, ``GUIDE.md`` lines and ``INDEX.md`` entries are rendered from them, and recall and
context read them to rank what is true now above what was replaced and to answer "as of"
a date. The file lives in the bucket beside the wiki, inside its git working tree, so it is
versioned with the pages it explains:

``knowledge/.facts.jsonl`` — one JSON object per line, sorted by (subject, attribute, key,
valid_from, id), keys in a fixed order, so that a diff of two runs reads as what changed::

    {"id": "f-3b1c…", "subject": "mara-lind", "attribute": "employer", "key": "",
     "value": "Tessellate Labs", "text": "Mara Lind works at Tessellate Labs",
     "kind": "fact", "scope": "", "valid_from": "2026-07-01", "valid_until": null,
     "superseded_by": null, "recorded_at": "2026-07-01",
     "sources": ["sessions/s12/transcript.md#D3:7"], "confidence": 0.9, "origin": "said",
     "date_basis": "said"}

Fields (all present on every line):

* ``id`` — stable: a hash of (subject, attribute, key, value, first source); a rerun over the
  same input writes the same ids.
* ``subject`` — a page's slug (``knowledge/<subject>.md``); ``attribute`` — ``employer``,
  ``role``, ``manager``, ``lead``, ``home``, ``number``, ``preference``, ``format``,
  ``procedure``, …; ``key`` — what tells apart two values of one attribute that do not
  replace each other ("qc spike threshold" and "fall-risk threshold" are two ``number`` keys),
  ``""`` when none.
* ``value`` — the value as said; ``text`` — the statement in the wiki's own words.
* ``kind`` — ``fact``, ``preference`` or ``procedure`` (a procedure's ``value`` is its steps
  joined by `` → `` in their current order); ``scope`` — what a preference applies to.
* ``valid_from`` / ``valid_until`` — ISO dates (``YYYY-MM-DD``), ``valid_until`` ``null``
  while the record is open (true now); ``superseded_by`` — the id of the record that closed
  it, ``null`` when none (a record can end with no successor: "I left X").
* ``recorded_at`` — when the memory first heard it (the session's or the correction's date).
* ``sources`` — the turns it cites (``sessions/<id>/transcript.md#D<s>:<t>``) or a card's
  path; ``confidence`` 0..1; ``origin`` — ``said``, ``corrected`` or ``inferred``.
* ``date_basis`` — where ``valid_from`` comes from: ``said`` (the conversation names the day
  the change happened), ``session`` (the date of the session that said it) or
  ``correction`` (the date of the correction, when nothing says when the change happened).

Readers never need dream: this module is the format, its reading and its questions
(open now, open at a date, what replaced what).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator

# the records' path, named by the tree's layout (re-exported for the readers)
from brainfs.cache.layout import FACTS_PATH as FACTS_PATH

#: Record kinds.
KINDS = ("fact", "preference", "procedure")
#: Where a record comes from.
ORIGINS = ("said", "corrected", "inferred")
#: Where a record's ``valid_from`` comes from.
DATE_BASES = ("said", "session", "correction")


class FactFormatError(ValueError):
    """A line of the records file that is not a record (the message names the line)."""


@dataclass(frozen=True)
class FactRecord:
    """One statement the memory keeps, with the time it held (see the module's docstring)."""

    id: str
    subject: str
    attribute: str
    value: str
    text: str
    valid_from: str | None
    recorded_at: str | None
    sources: tuple[str, ...] = ()
    key: str = ""
    kind: str = "fact"
    scope: str = ""
    valid_until: str | None = None
    superseded_by: str | None = None
    confidence: float = 0.9
    origin: str = "said"
    date_basis: str = "session"

    @property
    def is_open(self) -> bool:
        """True now: nothing closed it."""
        return self.valid_until is None and self.superseded_by is None

    def open_at(self, day: str) -> bool:
        """Whether the record held on ``day`` (ISO date): begun by then, not yet closed.

        A record with no ``valid_from`` is taken to hold from the start."""
        if self.valid_from and self.valid_from[:10] > day[:10]:
            return False
        if self.valid_until and self.valid_until[:10] <= day[:10]:
            return False
        return True

    def to_json(self) -> str:
        """One line of the records file, keys in the documented order."""
        d = asdict(self)
        d["sources"] = list(self.sources)
        order = ("id", "subject", "attribute", "key", "value", "text", "kind", "scope",
                 "valid_from", "valid_until", "superseded_by", "recorded_at", "sources",
                 "confidence", "origin", "date_basis")
        return json.dumps({k: d[k] for k in order}, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict) -> "FactRecord":
        """A record from one parsed line; raises :class:`FactFormatError` on a missing field."""
        try:
            return cls(id=str(d["id"]), subject=str(d["subject"]), attribute=str(d["attribute"]),
                       value=str(d["value"]), text=str(d.get("text") or d["value"]),
                       valid_from=d.get("valid_from"), recorded_at=d.get("recorded_at"),
                       sources=tuple(d.get("sources") or ()), key=str(d.get("key") or ""),
                       kind=str(d.get("kind") or "fact"), scope=str(d.get("scope") or ""),
                       valid_until=d.get("valid_until"), superseded_by=d.get("superseded_by"),
                       confidence=float(d.get("confidence", 0.9)),
                       origin=str(d.get("origin") or "said"),
                       date_basis=str(d.get("date_basis") or "session"))
        except (KeyError, TypeError, ValueError) as e:
            raise FactFormatError(f"not a fact record: missing or bad {e}") from None


def record_id(subject: str, attribute: str, key: str, value: str, source: str) -> str:
    """The stable id of a record: the same statement from the same turn, the same id."""
    h = hashlib.sha1("\x1f".join((subject, attribute, key, value.casefold(), source))
                     .encode("utf-8")).hexdigest()
    return "f-" + h[:12]


def dumps(records: Iterable[FactRecord]) -> str:
    """The records file's text: sorted, one record a line, a final newline."""
    rows = sorted(records, key=lambda r: (r.subject, r.attribute, r.key, r.valid_from or "",
                                          r.id))
    return "".join(r.to_json() + "\n" for r in rows)


def loads(text: str, *, where: str = FACTS_PATH) -> list[FactRecord]:
    """Parse a records file; a bad line raises :class:`FactFormatError` naming it."""
    out: list[FactRecord] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise FactFormatError(f"{where}:{n}: not JSON ({e.msg})") from None
        if not isinstance(d, dict):
            raise FactFormatError(f"{where}:{n}: not a JSON object")
        try:
            out.append(FactRecord.from_dict(d))
        except FactFormatError as e:
            raise FactFormatError(f"{where}:{n}: {e}") from None
    return out


@dataclass
class FactSet:
    """The records of one memory, with the questions recall and context ask of them."""

    records: list[FactRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.records}
        self._by_source: dict[str, list[FactRecord]] = {}
        for r in self.records:
            for s in r.sources:
                self._by_source.setdefault(s, []).append(r)

    def __iter__(self) -> Iterator[FactRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def current(self) -> list[FactRecord]:
        """The open records: what is true now."""
        return [r for r in self.records if r.is_open]

    def as_of(self, day: str) -> list[FactRecord]:
        """The records that held on ``day``."""
        return [r for r in self.records if r.open_at(day)]

    def successor(self, rec: FactRecord) -> FactRecord | None:
        """The record that replaced ``rec``, followed to the newest (a chain A → B → C gives C
        for A when B was replaced too), or ``None``."""
        seen: set[str] = set()
        nxt = self.by_id.get(rec.superseded_by or "")
        while nxt is not None and nxt.superseded_by and nxt.id not in seen:
            seen.add(nxt.id)
            later = self.by_id.get(nxt.superseded_by)
            if later is None:
                break
            nxt = later
        return nxt

    def citing(self, source: str) -> list[FactRecord]:
        """The records that cite ``source`` (a turn's ``…transcript.md#D3:7`` or a path);
        a whole transcript path gives the records citing any of its turns."""
        if "#" in source:
            return list(self._by_source.get(source, ()))
        prefix = source + "#"
        return [r for s, rs in self._by_source.items() if s == source or s.startswith(prefix)
                for r in rs]

    def replaced_mark(self, rec: FactRecord) -> str | None:
        """The words every view puts on a closed record: ``superseded by <value> (<date>)``,
        or ``ended (<date>)`` with no successor; ``None`` for an open record."""
        if rec.is_open:
            return None
        nxt = self.successor(rec)
        when = rec.valid_until or (nxt.valid_from if nxt else None) or "date unknown"
        if nxt is not None:
            return f"superseded by {nxt.value} ({when})"
        return f"ended ({when})"


def parse(text: str, *, where: str = FACTS_PATH) -> FactSet:
    """A :class:`FactSet` from a records file's text."""
    return FactSet(loads(text, where=where))
