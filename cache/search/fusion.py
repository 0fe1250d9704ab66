"""Fusion of the ranked lists and the adjustment of each fused score by the chunk's
confidence and age.

Formulas (named and versioned so a stored score can be traced to the code that made it;
the currency stage after them, ``cur-v1``, is :mod:`.currency`'s):

``rrf-v1``  fused(d) = Σ_r W_r / (k_rrf + rank_r(d)), rank 1-based within each list of
            at most max(50, 5·k) candidates, k_rrf = ``RecallParams.rrf_k`` (5, by
            cross-validation; ``RRF_K`` = 10 was the value before issue 16),
            W_dense = W_bm25 = 1 (a sub-query's lists: × ``split_weight``). A list
            that does not contain d contributes nothing. Single-retriever modes use the
            same formula with one list, so scores stay on one scale.
            Why 10 and not the customary 60: k=60 (Cormack et al. 2009) was chosen for
            fusing many 1,000-deep TREC runs judged by MAP. We fuse two lists to fill a
            handful of cards, and with k=60 the tails weigh almost as much as the heads —
            a chunk ranked 50th by both lists (2/110) beats one ranked 1st by one list
            (1/61) — which in a small corpus (one LoCoMo conversation: 400–700 turns, so
            a 100-deep list is a fifth of it) rewards agreement among mediocre matches.
            10 was chosen on LoCoMo conv-26 and conv-30 and checked on conv-41/42/43
            (hybrid turn recall@5 there: 0.574 with k=60, 0.631 with k=10); with the
            stages after it, leave-one-conversation-out picks 5 over 3, 10 and 20 in
            every fold (benchmarks/results/locomo.md).
``adj-v1``  score(d) = fused(d) × (0.75 + 0.25·confidence) × (0.9 + 0.1·0.5^(age_days/180))
            Confidence and recency are tie-breakers, not overrides: near the top of the
            fused list one rank is worth 5–8 %, so a card at 50 % confidence (×0.875)
            falls a couple of places below a certain one and a year-old card (×0.92) a
            place or two below one written today; a clearly better match still wins.
            Undated chunks get the factor of a 180-day-old one (×0.95): unknown age is
            neither fresh nor ancient.
``adj-v2``  adj-v1 with the confidence factor raised to ln((k+2)/(k+1)) / ln(12/11) for a
            fusion constant k other than 10: one rank near the top is worth ~17 % at k = 5
            against ~8 % at k = 10, and a card dream marked superseded (confidence 30 %)
            must still fall below its correction by as many ranks as before. (The recency
            factor is left as in v1: LoCoMo's figures were measured with it; confidence is
            the same for every LoCoMo turn, so this change does not move them.)
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import SearchIndex

FUSION = "rrf-v1"
ADJUST = "adj-v2"
RRF_K = 10
WEIGHTS = {"dense": 1.0, "bm25": 1.0}
#: Half-life (days) of the recency factor and its floor: see ``adj-v1`` above.
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_FLOOR = 0.9
CONFIDENCE_FLOOR = 0.75


def parse_when(value: str | None) -> _dt.datetime | None:
    """ISO date/datetime string → aware datetime (naive means UTC), or None."""
    if not value:
        return None
    try:
        d = _dt.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        try:
            d = _dt.datetime.combine(_dt.date.fromisoformat(str(value)[:10]), _dt.time())
        except ValueError:
            return None
    return d if d.tzinfo else d.replace(tzinfo=_dt.timezone.utc)


def as_utc(now: _dt.datetime | None) -> _dt.datetime:
    """``now`` (default: the current time), read as UTC when it carries no zone."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return now.replace(tzinfo=_dt.timezone.utc) if now.tzinfo is None else now


def age_days(updated: str | None, now: _dt.datetime) -> float | None:
    """Days between ``updated`` and ``now`` (negative for future dates), or None."""
    d = parse_when(updated)
    if d is None:
        return None
    return (now - d).total_seconds() / 86400.0


def adjust_factor(confidence: float | None, days: float | None, rrf_k: int = RRF_K) -> float:
    """The ``adj-v2`` multiplier for a chunk's confidence and age (see module docstring)."""
    c = 0.8 if confidence is None else min(1.0, max(0.0, float(confidence)))
    conf_f = CONFIDENCE_FLOOR + (1.0 - CONFIDENCE_FLOOR) * c
    if rrf_k != RRF_K:
        # worth as many ranks at the top of the list as at k = 10, where it was designed
        conf_f **= math.log((rrf_k + 2) / (rrf_k + 1)) / math.log((RRF_K + 2) / (RRF_K + 1))
    d = RECENCY_HALF_LIFE_DAYS if days is None else max(0.0, days)
    rec_f = RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * 0.5 ** (d / RECENCY_HALF_LIFE_DAYS)
    return conf_f * rec_f


def rrf(lists: dict[str, list[int]], weights: dict[str, float] | None = None,
        k: int | None = None) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """Reciprocal rank fusion (``rrf-v1``): ids → fused score, and ids → {list: rank}."""
    weights = weights or WEIGHTS
    k = RRF_K if k is None else k
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, ids in lists.items():
        w = weights.get(name, 1.0)
        for rank, cid in enumerate(ids, 1):
            scores[cid] = scores.get(cid, 0.0) + w / (k + rank)
            ranks.setdefault(cid, {})[name] = rank
    return scores, ranks


def adjusted_scores(index: SearchIndex, fused: dict[int, float], now: _dt.datetime,
                    rrf_k: int) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
    """Fused scores times the confidence and recency factor (``adj-v2``), with the rows."""
    rows = index.chunks_by_id(fused)
    scores: dict[int, float] = {}
    for cid, base in fused.items():
        row = rows.get(cid)
        if row is None:  # deleted between the search and now
            continue
        days = age_days(row["updated"] or row["created"], now)
        scores[cid] = base * adjust_factor(row["confidence"], days, rrf_k)
    return scores, rows
