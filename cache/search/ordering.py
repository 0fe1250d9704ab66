"""The order of recall's answer after fusion: a turn by a person the question names gains,
a turn next to a strong match gains a share of its score, the best sessions lift their turns,
and a question naming a day or month lifts the turns said then (``rerank``,
``dates.named_period``); then the top k is chosen — a question that gathers several facts
spread over sessions (``rerank.session_spread``) with the last places of every ten going to
the best sessions not yet listed (``rerank.session_reserve``), else MMR or a per-file cap
when asked for — and a wiki line whose cited turns stand in the list is left to them
(``restated``). Each stage optional: one that fails is skipped and named in ``why``.
"""

from __future__ import annotations

import datetime as _dt
import logging
from typing import TYPE_CHECKING, Any

from .dates import named_period
from .fusion import parse_when
from .querysplit import is_list_question
from .queryterms import query_terms
from .rerank import (date_prior, mmr, propagate_neighbours, ranked, session_cap,
                     session_prior, session_reserve, session_spread)
from .restated import Restated, leave_to_turns

if TYPE_CHECKING:
    from .index import SearchIndex
    from .retrieval import RecallParams

# The stages log under the name of the module they were part of, as before.
log = logging.getLogger("brainfs.cache.search.retrieval")


def rescore(index: SearchIndex, query: str, scores: dict[int, float],
            rows: dict[int, dict[str, Any]], p: RecallParams, k: int, stages: list[str],
            file_lists: dict[str, list[str]] | None = None,
            ) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
    """The fused scores again: speaker, neighbours, session-first, then the day the question
    names (see the ``rerank`` module); a stage that fails is skipped and named."""
    if p.speaker > 0 and scores:
        # A turn by a person the question names ("what does Melanie …") is more likely hers
        # than the other speaker's. Pages and notes have no speaker: one that names the
        # same person is on an equal footing, so a wiki page about her is not outranked by
        # her every turn.
        named = set(query_terms(query))
        people = {sp for c in scores if c in rows and (sp := rows[c].get("speaker"))
                  and set(query_terms(sp)) <= named}
        if people:
            names = [set(query_terms(sp)) for sp in people]
            for c in scores:
                row = rows.get(c)
                if row is None:
                    continue
                if row.get("speaker"):
                    hit = row["speaker"] in people
                else:
                    words = set(query_terms(f"{row.get('title') or ''} {row.get('text') or ''}"))
                    hit = any(n <= words for n in names)
                if hit:
                    scores[c] *= 1.0 + p.speaker
            stages.append("speaker named")
    if p.neighbour > 0 and scores:
        try:
            # the best few dozen only: a neighbour of a weak match is noise
            head = ranked(scores)[:max(3 * k, 30)]
            nb = index.neighbour_ids(head)
            new = {n for ns in nb.values() for n in ns if n not in rows}
            if new:
                rows = {**rows, **index.chunks_by_id(new)}
            # only turns lend to turns: a page's next section is not a reply
            nb = {c: [n for n in ns if n in rows and rows[n]["kind"] == "turn"]
                  for c, ns in nb.items() if rows[c]["kind"] == "turn"}
            scores = propagate_neighbours(scores, nb, p.neighbour)
            stages.append("neighbours")
        except Exception as e:  # noqa: BLE001
            log.warning("neighbour stage failed: %s", e)
            stages.append(f"neighbours skipped ({e})")
    if (p.session_weight > 0 or p.session_gate > 0) and scores:
        try:
            paths = {c: rows[c]["path"] for c in scores}
            scores = session_prior(scores, paths, p.session_weight, p.session_top, p.rrf_k,
                                   p.session_gate, file_lists)
            stages.append("session-first")
        except Exception as e:  # noqa: BLE001
            log.warning("session stage failed: %s", e)
            stages.append(f"session-first skipped ({e})")
    if p.date_weight > 0 and scores:
        try:
            period = named_period(query)
            if period is not None:
                days = {c: d for c in scores if c in rows and (d := _day_of(rows[c])) is not None}
                scores = date_prior(scores, days, period, p.date_weight)
                stages.append(f"said {'on' if period.kind == 'day' else 'in'} {period.human()}")
        except Exception as e:  # noqa: BLE001
            log.warning("date stage failed: %s", e)
            stages.append(f"date stage skipped ({e})")
    return scores, rows


def _day_of(row: dict[str, Any]) -> _dt.date | None:
    """The day a chunk was said or written (its ``created``, else ``updated``), or None."""
    d = parse_when(row.get("created") or row.get("updated"))
    return d.date() if d else None


def diversify(index: SearchIndex, query: str, order: list[int], scores: dict[int, float],
              rows: dict[int, dict[str, Any]], p: RecallParams, k: int,
              stages: list[str]) -> list[int]:
    """A list question spread over sessions; else MMR when asked for and vectors exist,
    else the per-file cap, else ``order``. Then a list question's tail places are
    reserved for sessions not yet in it."""
    listed = False
    if (p.list_spread > 0 or p.session_reserve > 0) and len(order) > 1:
        try:
            listed = is_list_question(query)
        except Exception as e:  # noqa: BLE001
            log.warning("list question test failed: %s", e)
            stages.append(f"session spread skipped ({e})")
    out = _spread(index, query, order, scores, rows, p, k, stages, listed)
    if listed and p.session_reserve > 0:
        try:
            paths = {c: rows[c]["path"] for c in scores if c in rows}
            picked = set(out)
            out = session_reserve(out + [c for c in order if c not in picked], scores, paths,
                                  p.session_reserve, p.session_top, k)
            stages.append(f"last {p.session_reserve} of every 10 places for new sessions")
        except Exception as e:  # noqa: BLE001
            log.warning("session reserve failed: %s", e)
            stages.append(f"session reserve skipped ({e})")
    return out[:k]


def _spread(index: SearchIndex, query: str, order: list[int], scores: dict[int, float],
            rows: dict[int, dict[str, Any]], p: RecallParams, k: int, stages: list[str],
            listed: bool) -> list[int]:
    """The first ``k`` of ``order`` spread: over sessions for a list question, else by MMR
    or the per-file cap when asked for."""
    if listed and p.list_spread > 0:
        try:
            pool = order[:max(3 * k, 30)]
            spread = session_spread(pool, scores, {c: rows[c]["path"] for c in pool},
                                    p.list_spread, k)
            stages.append(f"list question: spread over sessions ({p.list_spread})")
            return spread
        except Exception as e:  # noqa: BLE001
            log.warning("session spread failed: %s", e)
            stages.append(f"session spread skipped ({e})")
    if p.mmr_lambda < 1 and len(order) > 1:
        try:
            pool = order[:max(3 * k, 30)]
            vecs = index.vectors(pool) if index.has_vectors() else {}
            if vecs:
                stages.append(f"mmr λ={p.mmr_lambda}")
                return mmr(pool, scores, vecs, p.mmr_lambda, k)
            stages.append("mmr skipped (no vectors)")
        except Exception as e:  # noqa: BLE001
            log.warning("mmr failed: %s", e)
            stages.append(f"mmr skipped ({e})")
    if p.session_cap > 0:
        stages.append(f"≤{p.session_cap} per file")
        return session_cap(order, {c: rows[c]["path"] for c in order}, p.session_cap, k)
    return order[:k]


def leave_to_cited_turns(index: SearchIndex, query: str, top_ids: list[int], order: list[int],
                         rows: dict[int, dict[str, Any]], k: int,
                         alias_groups: list[list[str]] | None, replaced: set[int],
                         stages: list[str]) -> Restated:
    """The list with the wiki lines that restate a returned turn left to it, filled up to
    ``k`` again from ``order`` (:mod:`.restated`); ``replaced`` chunks stay whole. A failure
    returns the list as it was, and says so."""
    groups: list[list[str]] | None = alias_groups

    def names_of(row: dict[str, Any]) -> list[str]:
        nonlocal groups
        if groups is None:
            groups = index.alias_groups()
        title = str(row.get("title") or "")
        return [title] + [n for g in groups if title.lower() in (x.lower() for x in g) for n in g]

    try:
        out = leave_to_turns(top_ids, order, rows, k, query, replaced, names_of)
    except Exception as e:  # noqa: BLE001 - the pages stay whole
        log.warning("leaving wiki lines to their turns failed: %s", e)
        stages.append(f"wiki lines kept whole ({e})")
        return Restated(list(top_ids))
    if out.lines:
        stages.append(out.said())
    return out
