"""What is true now comes first: the currency stage of recall, on the statements the index
holds of what replaced what (:mod:`.validity`).

``cur-v1``  after fusion and reranking, a passage that states a replaced value (``validity``:
            a closed fact record, a superseded card, a page's ``## Superseded`` line, a
            turn that only closed statements cite) is scored × ``validity.DEMOTE`` (0.5),
            and what replaced it (its record, card or cited source) is pulled in when it is
            not a candidate and lifted to at least the replaced passage's former score: a
            replaced value never comes before its successor. ``history`` skips this (the
            marks stay); ``as_of`` first leaves out what was said after the day.
"""

from __future__ import annotations

import datetime as _dt
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .validity import DEMOTE, Verdict

if TYPE_CHECKING:
    from .index import SearchIndex

# The stages log under the name of the module they were part of, as before.
log = logging.getLogger("brainfs.cache.search.retrieval")

CURRENCY = "cur-v1"


def check_day(day: str | None) -> str | None:
    """An ``as_of`` day as ``YYYY-MM-DD`` (a datetime's day is taken); ValueError otherwise."""
    if day is None or day == "":
        return None
    try:
        return _dt.date.fromisoformat(str(day).strip()[:10]).isoformat()
    except ValueError:
        raise ValueError(f"not a day: {day!r} (give it as YYYY-MM-DD)") from None


@dataclass
class Currency:
    """What the currency stage made of the candidates: their scores and rows (successors
    pulled in), each replaced candidate's verdict, the lifted successors (id → the ref of
    what they replaced), and what to say in ``why``."""

    scores: dict[int, float]
    rows: dict[int, dict[str, Any]]
    verdicts: dict[int, Verdict] = field(default_factory=dict)
    lifted: dict[int, str] = field(default_factory=dict)
    said: str = ""


def currency(index: SearchIndex, scores: dict[int, float], rows: dict[int, dict[str, Any]],
             as_of: str | None, history: bool) -> Currency:
    """``cur-v1`` (see the module docstring): leave out what was not said yet ``as_of``, mark what
    was replaced, rank it below what replaced it (pulled in when it is not a candidate)."""
    out = Currency(scores, rows)
    try:
        validity = index.validity()
    except Exception as e:  # noqa: BLE001 - an index without statements answers as before
        log.warning("validity unavailable: %s", e)
        out.said = f"replaced values not checked ({e})"
        return out
    if not validity and as_of is None:
        return out
    dropped = 0
    for c in list(scores):
        row = rows.get(c)
        if row is None:
            continue
        v = validity.judge(row, as_of)
        if v.drop:
            del scores[c]
            dropped += 1
        elif v.replaced is not None:
            out.verdicts[c] = v
    said = [f"as of {as_of}: {dropped} passages said later left out"] if as_of else []
    if out.verdicts and not history:
        at = {(r["path"], r["anchor"]): c for c, r in rows.items() if c in scores}
        want = [ref for v in out.verdicts.values() for ref in v.successors if ref not in at]
        if want:
            try:
                got = index.ids_at(want)
                new = {c for c in got.values() if c not in rows}
                rows.update(index.chunks_by_id(new))
                for ref, c in got.items():
                    if c in rows and not validity.judge(rows[c], as_of).drop \
                            and validity.judge(rows[c], as_of).replaced is None:
                        at[ref] = c
            except Exception as e:  # noqa: BLE001 - ranked without them
                log.warning("could not pull in what replaced a passage: %s", e)
        for c, v in sorted(out.verdicts.items(), key=lambda cv: -scores[cv[0]]):
            base = scores[c]
            for ref in v.successors:
                s = at.get(ref)
                if s is None or s in out.verdicts:
                    continue
                if scores.get(s, 0.0) < base:
                    scores[s] = base
                    out.lifted[s] = f"{rows[c]['path']}#{rows[c]['anchor']}".rstrip("#")
            scores[c] = base * DEMOTE
        said.append(f"{len(out.verdicts)} replaced passages ranked below what replaced them")
    elif out.verdicts:
        said.append(f"history: {len(out.verdicts)} replaced passages keep their rank, marked")
    out.said = "; ".join(said)
    return out
