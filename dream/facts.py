"""The fact records dream writes (``knowledge/.facts.jsonl``): what each attribute and
relation held, from when, until when, and what replaced it.

The record format is :mod:`brainfs.cache.facts.records`; this module makes the records from
the one replay of the statements that the pages also render from:

* :func:`stays` replays one (subject, attribute[, key]) group of statements in date order
  and cuts it into **stays** — one value, from its first statement to what ended it (a
  newer value, "I left X", a correction's "…, not X"). A stay is one record.
* :func:`record_of` turns a stay into a :class:`FactRecord`: ``valid_from`` is the day the
  change happened when its sentence says so ("on 2 February", "since 1 January",
  "yesterday" — ``date_basis: said``), else the date of the session that said it
  (``session``), or for a correction with no day of its own the day the conversation gave
  the same value, else the correction's date (``correction``). A stay ended by a newer value
  is closed at the newer record's ``valid_from`` with ``superseded_by`` its id; one ended
  without a successor ("I left X") at the ending statement's day.
* :func:`build_records` collects every record of a run, with records other parts of dream
  make (procedures: ``extra``), and :func:`render` writes the file.

The pages' current lines and ``## Superseded`` lines, the INDEX summary lines (a page's
first current line) and the preference cards are rendered from the same stays and their
records (:mod:`.pages`, :mod:`.cards`), so every view says what the records say.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brainfs.cache.facts.records import FACTS_PATH, FactRecord, FactSet, dumps, loads, record_id
from brainfs.cache.layout import GUIDE_PATH, INDEX_PATH, NOTES, page_path, turn_ref
from brainfs.cache.search.chunker import split_frontmatter

from .formats import same_format
from .text import parse_day, words

if TYPE_CHECKING:
    from .grouping import Stated

__all__ = ["FACTS_PATH", "Stay", "stays", "said_day", "record_of", "build_records", "render"]

_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december"
    .split(), 1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
#: A day the sentence gives for the change: "on 2 February", "since 1 January", "from
#: February 2", "as of 3 March 2026", "effective 1 April", "starting 5 May", "on 2026-02-02".
_SAID_DAY_RE = re.compile(
    rf"\b(?:on|since|from|as of|effective|starting|started|starts)\s+(?:the\s+)?"
    rf"(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MON})\.?(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MON})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{{4}}))?"
    rf"|(?P<iso>\d{{4}}-\d{{2}}-\d{{2}}))\b", re.I)


_VALUE_DAY_RE = re.compile(rf"(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m1>{_MON})|(?P<m2>{_MON})\s+(?P<d2>\d{{1,2}})"
                           rf"(?:st|nd|rd|th)?)(?:,?\s+(?P<y>\d{{4}}))?\s*$", re.I)


def day_of_value(value: str, said: str | None) -> str | None:
    """The ISO day a value ends in ("Lisbon on 3 May"), said on ``said``: in its own year, else
    the first such day on or after ``said`` (None when it names no day of a month)."""
    m = _VALUE_DAY_RE.search(value or "")
    base = parse_day(said)
    if not m or (base is None and not m.group("y")):
        return None
    d, mon = int(m.group("d1") or m.group("d2")), _MONTHS[(m.group("m1") or m.group("m2")).lower()]
    years = [int(m.group("y"))] if m.group("y") else [base.year, base.year + 1]
    for y in years:
        try:
            got = _dt.date(y, mon, d)
        except ValueError:
            return None
        if m.group("y") or got >= base:
            return got.isoformat()
    return None


def said_day(sentence: str, day: str | None, value: str = "",
             when: Iterable[Iterable[str]] = ()) -> str | None:
    """The day ``sentence`` (said on ``day``) gives for what it reports, as an ISO day:
    an explicit date after "on/since/from/as of/…" that is not part of ``value`` (a
    deadline's value is a date, not the day it was set), else a relative date that is one
    day (``when``: the extraction's resolved ``[expression, meaning]`` pairs). A date with
    no year takes the year that puts it within half a year of ``day``."""
    vlow = value.lower()
    for m in _SAID_DAY_RE.finditer(sentence):
        if vlow and m.group(0).split(None, 1)[-1].lower() in vlow:
            continue
        if m.group("iso"):
            return m.group("iso")
        d = int(m.group("d1") or m.group("d2"))
        mon = _MONTHS[(m.group("m1") or m.group("m2")).lower()]
        year = m.group("y1") or m.group("y2")
        base = parse_day(day)
        try:
            if year:
                return _dt.date(int(year), mon, d).isoformat()
            if base is None:
                continue
            got = _dt.date(base.year, mon, d)
            if (got - base).days > 183:
                got = _dt.date(base.year - 1, mon, d)
            elif (base - got).days > 183:
                got = _dt.date(base.year + 1, mon, d)
            return got.isoformat()
        except ValueError:
            continue
    for _expr, res in when or ():
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", res or ""):
            return res
    return None


@dataclass
class Stay:
    """One value of a (subject, attribute, key) group, from its first statement to what
    ended it; its :class:`FactRecord` once :func:`record_of` made it."""

    said: list["Stated"]                    # the statements of this value, in date order
    ended_by: "Stated | None" = None        # a newer value's first statement, or an "end"
    key: str = ""                           # the group's key (quantities share one)
    record: FactRecord | None = None
    next: "Stay | None" = None              # the stay that replaced this one
    dated: "Stated | None" = None           # the statement that gave valid_from, when not the first

    @property
    def dated_by(self) -> "Stated":
        """The statement a line dated by this stay cites (it says the day)."""
        return self.dated or self.said[0]

    @property
    def shown(self) -> "Stated":
        """The statement whose words the record and its lines use: the newest, unless it
        gives the value in other words than the cited one ("Emi Yilmaz" after "Emi", with two
        Emis about): then the cited one's, which its turn supports."""
        last, cited = self.said[-1], self.dated_by
        return last if last.value == cited.value else cited

    @property
    def first(self) -> "Stated":
        return self.said[0]

    @property
    def last(self) -> "Stated":
        return self.said[-1]

    @property
    def replaced(self) -> bool:
        """Ended by another value of the same attribute (not only ended)."""
        return self.next is not None


def _typo(x: str, y: str) -> bool:
    """Are two words one, mistyped: equal, two letters swapped, or one letter changed,
    added or dropped (in words of four letters or more)?"""
    if x == y:
        return True
    if min(len(x), len(y)) < 4 or abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]])
    short, long_ = (x, y) if len(x) < len(y) else (y, x)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _national(number: str) -> str:
    """A phone number's digits without the country code or trunk zero people leave off or
    add when they restate it ("+44 7700 900123", "07700 900123", "0044 7700…" → 7700900123
    ends them all)."""
    return re.sub(r"\D", "", number).lstrip("0")


def same_phone(a: str, b: str) -> bool:
    """One phone number written two ways: the shorter one's digits (past a trunk zero) end
    the longer one's, and hold at least seven (a country code is one to three digits)."""
    x, y = sorted((_national(a), _national(b)), key=len)
    return len(x) >= 7 and y.endswith(x) and len(y) - len(x) <= 3


#: A title's words as chat shortens them ("senior dev" is a "senior developer").
_SHORT = {"dev": "developer", "devs": "developers", "eng": "engineer", "mgr": "manager", "admin": "administrator",
          "asst": "assistant", "sr": "senior", "snr": "senior", "jr": "junior", "jnr": "junior", "exec": "executive"}


def _same(a: str, b: str) -> bool:
    """One value said twice (a title's shortened words as the full ones): the same words, or a one-word name that is the first word of
    the other ("Mei" / "Mei Lin" is no change of manager: nothing says it is another
    person), one phone number with and without its country code, or one file format by
    its program's name and its extension ("Word" / "docx")."""
    wa, wb = words(a), words(b)
    if wa == wb or [_SHORT.get(w, w) for w in wa] == [_SHORT.get(w, w) for w in wb]:
        return True
    if all(re.fullmatch(r"[\d\s+().-]{7,}", v.strip()) for v in (a, b)) and same_phone(a, b):
        return True
    if same_format(a, b):
        return True
    # "Ridley & Sons" / "Ridley and Sons": one name, its "and" written either way
    if [w for w in wa if w not in ("and", "&")] == [w for w in wb if w not in ("and", "&")] and wa:
        return True
    if len(wa) == len(wb) >= 2 and wa[0] == wb[0] and wa[0][:1].isdigit() and \
            all(_typo(x, y) for x, y in zip(wa[1:], wb[1:])):
        return True  # "30 days" / "30 dyas": the same quantity, its unit mistyped
    short, long_ = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    return len(short) == 1 and len(long_) > 1 and long_[0] == short[0] and a[:1].isupper() \
        and b[:1].isupper()


def _shortened(value: str, st: "Stated") -> bool:
    """A project ended by the words that end its name, in lower case ("I've shelved the novel"
    ends "crime novel", "killed the app" ends "budgeting app")."""
    wv, ws = words(value), words(st.value)
    return st.attr == "project" and st.value[:1].islower() and 0 < len(ws) < len(wv) and wv[-len(ws):] == ws


def stays(group: list["Stated"], key: str = "") -> list[Stay]:
    """Replay one group in order: a ``set`` of another value ends the current stay and
    starts the next; an ``end`` of the current value ends it ("I left X. My new job is at
    Y" the same day: Y replaced X); a restatement joins the current stay."""
    out: list[Stay] = []
    cur: Stay | None = None
    for st in group:
        if st.op == "end":
            # an end without a value ends whatever holds ("Crete's off": the trip to Crete)
            if cur is not None and (not st.value or _same(cur.last.value, st.value) or _shortened(cur.last.value, st)):
                cur.ended_by = st
                cur = None
            continue
        if cur is None:
            nxt = Stay([st], key=key)
            last = out[-1] if out else None
            if last is not None and last.ended_by is not None and last.ended_by.op == "end" \
                    and last.next is None and last.ended_by.fact.get("date") == st.fact.get("date"):
                last.ended_by, last.next = st, nxt
            out.append(nxt)
            cur = nxt
            continue
        if _same(cur.last.value, st.value):
            cur.said.append(st)
            continue
        nxt = Stay([st], key=key)
        cur.ended_by, cur.next = st, nxt
        out.append(nxt)
        cur = nxt
    return out


def ref_of(f: dict) -> str:
    """The source a statement cites: its turn, or a correction card's path."""
    return f.get("ref") or turn_ref(f["session"], f["anchor"])


def _is_correction(st: "Stated") -> bool:
    return not st.fact.get("session")


def _when(st: "Stated") -> tuple[str | None, str]:
    """(day, basis) a statement gives for its change (see :func:`said_day`)."""
    f = st.fact
    got = said_day(f["text"], f.get("date"), st.value if st.attr in ("deadline", "trip") else "",
                   f.get("when") or ())
    if got:
        return got, "said"
    return f.get("date"), "correction" if _is_correction(st) else "session"


def record_of(stay: Stay, subject: str, text: Callable[["Stated"], str],
              conversation: list["Stated"] = ()) -> FactRecord:
    """The record of one stay (its successor's record must be made first, for
    ``superseded_by``; :func:`records_for_group` goes newest first). ``conversation``: the
    group's statements, where a correction with no day of its own finds the day the
    conversation gave the same value."""
    first = stay.first
    day, basis = _when(first)
    corrected = _is_correction(first)
    if corrected and basis == "correction":
        # "the correction happened on the day the conversation said", when it said one
        for st in conversation:
            if not _is_correction(st) and st.op == "set" and _same(st.value, first.value):
                d, b = _when(st)
                if b == "said":
                    day, basis = d, "said"
                    stay.dated = st
                    break
    if day is None:
        basis = "session"
    until, by = None, None
    if stay.ended_by is not None:
        if stay.next is not None and stay.next.record is not None:
            by = stay.next.record.id
            until = stay.next.record.valid_from
        if until is None:
            until = _when(stay.ended_by)[0]
        until = until or stay.ended_by.fact.get("date") or first.fact.get("date")
    sources = tuple(dict.fromkeys(ref_of(st.fact) for st in stay.said + [stay.dated_by]))
    origin = "corrected" if corrected else ("inferred" if first.fact.get("antecedent") else "said")
    conf = 0.9 if corrected else round(min(0.95, 0.7 + 0.1 * len(sources)), 2)
    kind = "preference" if first.attr in ("preference", "format") else "fact"
    # what a preference applies to: "figure" of "format of figure", "spelling" of
    # "preference spelling" (a taste with no such key applies to everything)
    scope = re.sub(r"^(?:format(?:\s+of)?|preference)\s*", "", stay.key).strip() if kind == "preference" else ""
    return FactRecord(
        id=record_id(subject, first.attr, stay.key, stay.shown.value, sources[0]),
        subject=subject, attribute=first.attr, key=stay.key, value=stay.shown.value,
        text=text(stay.shown), kind=kind, scope=scope, valid_from=day, valid_until=until, superseded_by=by,
        recorded_at=first.fact.get("date"), sources=sources, confidence=conf, origin=origin,
        date_basis=basis)


def records_for_group(group_stays: list[Stay], subject: str, text: Callable[["Stated"], str],
                      conversation: list["Stated"]) -> list[FactRecord]:
    """Every stay's record, newest first made (a record names its successor's id)."""
    for stay in reversed(group_stays):
        stay.record = record_of(stay, subject, text, conversation)
    return [s.record for s in group_stays if s.record is not None]


@dataclass
class FactLedger:
    """Every record of a run, made while the pages' models are built."""

    records: list[FactRecord] = field(default_factory=list)
    #: (subject, attribute, key) → the group's stays, as the records were made from them
    stays: dict[tuple, list[Stay]] = field(default_factory=dict)

    def add(self, group: tuple, got: list[Stay], recs: Iterable[FactRecord]) -> None:
        self.stays[group] = got
        self.records.extend(recs)


def build_records(ledger: FactLedger | Iterable[FactRecord],
                  extra: Iterable[FactRecord] = ()) -> list[FactRecord]:
    """The records of one run: the relation records (``ledger``) and any ``extra`` ones
    another part of dream made (procedures), one per id, in file order. An extra record
    whose id a relation record has is dropped (the relation's wins)."""
    base = list(ledger.records if isinstance(ledger, FactLedger) else ledger)
    seen = {r.id for r in base}
    out = base + [r for r in extra if r.id not in seen and not seen.add(r.id)]
    uniq: dict[str, FactRecord] = {}
    for r in out:
        uniq.setdefault(r.id, r)
    return list(uniq.values())


def render(records: Iterable[FactRecord]) -> str:
    """The text of ``knowledge/.facts.jsonl`` (sorted, byte-stable)."""
    return dumps(records)


def since_text(rec: FactRecord, human_day: Callable[[str | None], str]) -> str:
    """How a current line dates its value, from the record: "since 1 July 2026" (the
    session's date), "since 2 February 2026, as said" (the day the conversation or the
    correction gives), "corrected 2026-07-02" (a correction that gives no day: its own)."""
    if rec.date_basis == "correction":
        return f"corrected {rec.valid_from}"
    if rec.date_basis == "said":
        return f"since {human_day(rec.valid_from)}, as said"
    return f"since {human_day(rec.valid_from)}"


def _sections(page: str) -> tuple[str, str]:
    """(current part, ``## Superseded`` section) of a page's text."""
    body = page.split("\n---\n", 1)[-1] if page.startswith("---") else page
    now = body.split("\n## ", 1)[0]
    sup = body.split("\n## Superseded\n", 1)[1].split("\n## ", 1)[0] if "\n## Superseded\n" in body else ""
    return now, sup


def check_views(files: dict[str, str], guide: str | None = None) -> list[str]:
    """Where a view disagrees with the records of ``files`` (a staged wiki: path → text),
    one message each; [] when every view says what the records say:

    * every open record's value stands in its subject's page above the first section;
    * every closed record stands under ``## Superseded`` with its successor's value
      ("replaced by …"), and its current wording is not in the current part (unless an open
      record says the same);
    * an INDEX.md summary states no closed record;
    * a learned card names its record and is superseded exactly when the record is closed;
      a correction card ``closes`` only closed records;
    * a ``GUIDE.md`` line "(corrected …; was X)" names a closed value X whose successor's
      value the line states."""
    out: list[str] = []
    recs = [r for r in loads(files.get(FACTS_PATH, "")) if r.kind != "procedure"]
    facts = FactSet(recs)
    open_texts = {(r.subject, r.text) for r in recs if r.is_open}
    index = files.get(INDEX_PATH, "")
    for r in recs:
        page = files.get(page_path(r.subject))
        if page is None:
            out.append(f"{r.id}: no page {page_path(r.subject)}")
            continue
        now, sup = _sections(page)
        if r.is_open:
            if r.value not in now:
                out.append(f"{r.id}: open value {r.value!r} not in the current part of {r.subject}")
            continue
        nxt = facts.successor(r)
        lines = [ln for ln in sup.splitlines() if r.value in ln]
        if not lines:
            out.append(f"{r.id}: closed value {r.value!r} not under Superseded on {r.subject}")
        elif r.superseded_by and nxt is not None and not any(
                f"replaced by {facts.by_id[r.superseded_by].value}" in ln for ln in lines):
            out.append(f"{r.id}: Superseded line of {r.value!r} does not name its successor")
        if (r.subject, r.text) not in open_texts:
            if r.text in now:
                out.append(f"{r.id}: closed record stated as current on {r.subject}")
            line = next((ln for ln in index.splitlines() if f"[[{r.subject}]]" in ln), "")
            if r.text in line:
                out.append(f"{r.id}: closed record stated in INDEX.md")
    for p, text in sorted(files.items()):
        if not p.startswith(NOTES) or not p.endswith(".md"):
            continue
        meta = split_frontmatter(text)[0] or {}
        rid = meta.get("record")
        if rid is not None:
            rec = facts.by_id.get(rid)
            if rec is None:
                out.append(f"{p}: names record {rid}, not in the file")
            elif rec.is_open == (meta.get("status") == "superseded"):
                out.append(f"{p}: status {meta.get('status')!r} but record {rid} is "
                           f"{'open' if rec.is_open else 'closed'}")
        for rid in meta.get("closes") or []:
            rec = facts.by_id.get(rid)
            if rec is None or rec.is_open:
                out.append(f"{p}: closes {rid}, which is {'open' if rec else 'not in the file'}")
    for ln in (guide or "").splitlines():
        m = re.search(r"\(corrected [\d-]+; was (.+?)\)\s*$", ln)
        if not m:
            continue
        old = [r for r in recs if not r.is_open and r.value.lower() == m.group(1).lower()]
        if not any((n := facts.successor(r)) is not None and n.value.lower() in ln.lower()
                   for r in old):
            out.append(f"{GUIDE_PATH}: {ln.strip()!r} names no closed value with its successor")
    return out
