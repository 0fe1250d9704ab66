"""Hybrid recall over a :class:`~brainfs.cache.search.index.SearchIndex`, returning cards:
:func:`retrieve` runs the pipeline, :class:`RecallParams` holds its tuned choices.

Pipeline: the query runs through dense search (MiniLM cosine) and sparse search (FTS5
BM25) together, with more lists beside them (``candidates``; the query's words:
``queryterms``); the lists are merged by reciprocal rank fusion and the fused score is
adjusted by each chunk's confidence and age (``fusion``, where the formulas are named and
versioned); the scores are adjusted again and the top k chosen (``ordering``), a passage
stating a replaced value is ranked below what replaced it (``currency``), and the chosen
chunks become cards (``cards``). When a part is missing or fails the chain degrades
instead of failing — hybrid → dense → sparse → recent — and ``RecallResult.mode`` /
``.why`` say which part answered and why; every later stage is optional too, and named in
``why`` when it acts or fails.

Every weight is a field of :class:`RecallParams`, whose defaults are what
leave-one-conversation-out cross-validation on LoCoMo dev chose
(``benchmarks/locomo_eval.py``, ``benchmarks/results/locomo.md`` and, for the fourth
round, ``locomo-reserve.md``). The index resolves a
turn's relative dates ("yesterday" → "7 May 2023", ``cache.dates``) into its text.

Last, a wiki line whose cited turns all stand among the returned turns is left to them
(``restated``): dropped from its chunk's text, the chunk when nothing is left, and the list
filled up to k from the next candidates (``retrieve(leave_to_turns=True)``, as
``LocalIndex.search`` asks for every reader; the lines of
``## Superseded``, of a replaced passage, and of what is true now of a page the query names
stay).
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .candidates import (DEPTH_PER_K, MIN_DEPTH, Lists, analyse_query, dense_lists, feedback_lists,
                         file_lists, sentence_list, sparse_lists, unnamed_lists)
from .cards import RecallResult, make_card, mark, matched_terms
from .currency import check_day, currency
from .fusion import ADJUST, FUSION, adjusted_scores, as_utc, rrf
from .ordering import diversify, leave_to_cited_turns, rescore
from .queryterms import query_terms
from .rerank import ranked
from .restated import Restated

if TYPE_CHECKING:
    from .embedder import Embedder
    from .index import SearchIndex

log = logging.getLogger(__name__)

MODES = ("auto", "hybrid", "dense", "sparse", "recent")


@dataclass(frozen=True)
class RecallParams:
    """Every tuned choice of :func:`retrieve`, in one place. The defaults are the grid point
    that ``benchmarks/locomo_eval.py`` selects on all five LoCoMo dev conversations; the
    figure to expect on unseen data is its leave-one-conversation-out one, reported beside
    it in ``benchmarks/results/locomo.md``. A weight of 0 switches a stage off.

    ``rrf_k``, ``w_dense``, ``w_bm25``: the fusion (``rrf-v1``). ``depth``: candidates
    per list, at least ``DEPTH_PER_K``·k. ``split_weight``: each sub-query of a split
    question (``querysplit``) adds its lists at this weight. ``aliases``: expand the
    keyword query with the wiki's aliases. ``neighbour``: share of a neighbouring turn's
    score a chunk gains (``rerank.propagate_neighbours``). ``session_weight``,
    ``session_top``, ``session_gate``: session-first ranking (``rerank.session_prior``);
    ``session_files``: rank sessions by fusing whole-file BM25 and the file's mean vector
    with the sum of its best turns, instead of that sum alone.
    ``mmr_lambda`` < 1: MMR over the vectors; ``session_cap`` > 0: at most that many
    chunks per file (used when MMR is off or has no vectors). ``speaker``: a turn whose
    speaker the question names ("what does Melanie …") scores ×(1 + speaker).
    ``prf_weight``: weight of the pseudo-relevance-feedback lists (a second pass).
    ``unnamed_weight``: the question without the people it names
    (``querysplit.without_names``) adds its dense and BM25 lists at this weight.
    ``list_spread``: a question asking for a list (``querysplit.is_list_question``) has
    its top k spread over sessions (``rerank.session_spread`` at this strength).
    ``session_reserve``: for such a question, the last this many places of every ten go
    to the best sessions (by the sum of their ``session_top`` best turns) not yet in the
    list (``rerank.session_reserve``), after the spread. ``date_weight``: a question
    naming a day or month with its year (``dates.named_period``) has the chunks dated in
    it scored ×(1 + date_weight) (``rerank.date_prior``).
    ``sentence_weight``: the best ``sentence_pool`` candidates of the first fusion,
    ranked by their best sentence's cosine with the question (``sentences``), join the
    fusion as one more list at this weight.
    """

    rrf_k: int = 5
    w_dense: float = 1.0
    w_bm25: float = 1.0
    depth: int = MIN_DEPTH
    split_weight: float = 0.0
    aliases: bool = True
    neighbour: float = 0.1
    session_weight: float = 0.0
    session_top: int = 3
    session_gate: int = 0
    session_files: bool = False
    mmr_lambda: float = 1.0
    session_cap: int = 0
    speaker: float = 2.0
    prf_weight: float = 0.0
    unnamed_weight: float = 1.0
    list_spread: float = 0.5
    #: Chosen by leave-one-conversation-out on LoCoMo dev in every fold (issue 16's fourth
    #: round, ``benchmarks/results/locomo-reserve.md``): session recall@10 0.933 → 0.940,
    #: turn recall@10 unchanged.
    session_reserve: int = 2
    #: Chosen with it in 4 of 5 folds: temporal turn recall@10 0.869 → 0.882.
    date_weight: float = 1.0
    #: Off by default although cross-validation picks 1.0 (LoCoMo dev: turn recall@10
    #: +0.008, multi-hop +0.012): the sentences are embedded at query time, and through a
    #: mount at 2,000 files that took the median recall of a new question from 93 to
    #: 274 ms (``benchmarks/results/locomo.md``). Sentence vectors made at index time
    #: would remove that cost.
    sentence_weight: float = 0.0
    sentence_pool: int = 20

    def label(self, base: RecallParams | None = None) -> str:
        """The fields that differ from ``base`` (default: the defaults), for results
        tables ("rrf_k=20 neighbour=0.3")."""
        base = base or RecallParams()
        return " ".join(f"{f}={getattr(self, f)}" for f in self.__dataclass_fields__
                        if getattr(self, f) != getattr(base, f)) or "(same)"


DEFAULT_PARAMS = RecallParams()


def retrieve(index: SearchIndex, query: str, k: int = 10, embedder: Embedder | None = None,
             now: _dt.datetime | None = None, stale_days: int = 180, max_chars: int = 800,
             mode: str = "auto", rrf_k: int | None = None,
             params: RecallParams | None = None,
             alias_groups: list[list[str]] | None = None,
             as_of: str | None = None, history: bool = False,
             leave_to_turns: bool = False, exclude: Collection[str] = ()) -> RecallResult:
    """Recall the ``k`` best passages for ``query`` as cards.

    ``mode``: "auto"/"hybrid" (dense + BM25 fused), "dense", "sparse" or "recent"; a mode
    whose parts are unavailable degrades down the chain hybrid → dense → sparse → recent,
    and the result says which mode answered and why. ``now`` (default: current UTC time)
    anchors freshness and recency; ``stale_days`` sets the stale flag; card text is cut to
    ``max_chars`` at a word boundary; ``params`` holds the tuned choices
    (:class:`RecallParams`; ``rrf_k`` overrides its fusion constant, for ablations);
    ``alias_groups`` replaces the index's own alias table (names of one subject each).

    What is true now comes first (``cur-v1``, :mod:`.validity`): a passage stating a value
    that was replaced (a closed fact record, a superseded card, a page's ``## Superseded``
    line, a turn only closed statements cite) is scored ×``validity.DEMOTE``, what replaced
    it is pulled in and lifted to at least its former score, and its card carries
    ``superseded_by``. ``history``: every passage keeps its rank (the marks stay).
    ``as_of`` (an ISO day): what held then — turns said and records begun after it are left
    out, and only changes made by then mark or demote.

    ``leave_to_turns`` (:mod:`.restated`): a wiki line whose cited turns all stand among the
    returned turns is dropped from its chunk, the chunk when no line is left, and the list
    filled up to ``k`` again — what recall gives a reader (``LocalIndex.search``: ``brainfs
    recall``, a mount's ``.recall/``, MCP, ``Memory.recall``). Off by default: ``brainfs
    context`` asks recall deeper than it reads and leaves a line to its turn only when the
    turn fits its window (``assembly.WikiUse.dedupe``).

    ``exclude``: paths whose passages must not be returned (files deleted since the index
    was built, as the caller knows): left out before the list is chosen, so the list is
    filled from the next candidates and no wiki line is left to a turn of a gone file.

    Stages, each optional (a stage that fails or lacks its data is skipped and named in
    ``why``): question splitting and alias expansion, the per-query lists, fusion,
    confidence/recency, neighbours, session-first, diversification. Never raises on
    hostile query text.
    """
    if mode not in MODES:
        raise ValueError(f"unknown recall mode {mode!r}; use one of {', '.join(MODES)}")
    as_of = check_day(as_of)
    p = params or DEFAULT_PARAMS
    if rrf_k is not None:
        p = replace(p, rrf_k=int(rrf_k))
    query = query if isinstance(query, str) else str(query or "")
    now = as_utc(now)
    k = max(1, int(k))
    depth = max(p.depth, DEPTH_PER_K * k)
    terms = query_terms(query)
    stages: list[str] = []
    plan = analyse_query(index, query, terms, mode, p, alias_groups, stages)
    found = Lists()
    if mode in ("auto", "hybrid", "dense"):
        dense_lists(index, query, plan, embedder, depth, p, found)
    if mode in ("auto", "hybrid", "sparse") or (mode == "dense" and "dense" not in found.ids):
        sparse_lists(index, terms, plan, depth, p, found)
    found.settle()
    if p.unnamed_weight > 0 and mode != "recent" and (found.has_dense or found.has_bm25):
        unnamed_lists(index, query, terms, embedder, depth, p, found, stages)
    if p.sentence_weight > 0 and found.has_dense and embedder is not None:
        sentence_list(index, embedder, p, found, stages)
    answered, why = _answered(found, mode)

    t = time.perf_counter()
    fused, ranks = _fuse(index, found, answered, terms, depth, p, stages)
    scores, rows = adjusted_scores(index, fused, now, p.rrf_k)
    if answered != "recent":
        files = file_lists(index, terms, found, depth, p, stages)
        scores, rows = rescore(index, query, scores, rows, p, k, stages, files)
    cur = currency(index, scores, rows, as_of, history)
    scores, rows = cur.scores, cur.rows
    if exclude:
        gone = set(exclude)
        scores = {c: s for c, s in scores.items() if rows.get(c, {}).get("path") not in gone}
    order = ranked(scores)
    top_ids = diversify(index, query, order, scores, rows, p, k, stages)
    rest = (leave_to_cited_turns(index, query, top_ids, order, rows, k, alias_groups,
                                 set(cur.verdicts), stages)
            if leave_to_turns else Restated(top_ids))
    top = [(scores[cid], cid) for cid in rest.ids]
    if stages and answered != "recent":
        why += " + " + "; ".join(stages)
    if cur.said:
        why += " + " + cur.said
    matched = matched_terms(index, terms, [cid for _, cid in top], answered)
    found.search_ms += (time.perf_counter() - t) * 1000

    cards = [make_card({**rows[cid], "text": rest.texts[cid]} if cid in rest.texts else rows[cid],
                       cid, score, ranks.get(cid, {}),
                       [terms[i] for i in matched.get(cid, []) if i < len(terms)],
                       answered, found.notes, now, stale_days, max_chars)
             for score, cid in top]
    mark(cards, cur, rest)
    timings = {"embed_ms": round(found.embed_ms, 2), "search_ms": round(found.search_ms, 2)}
    return RecallResult(query=query, mode=answered, cards=cards, timings=timings, why=why, terms=terms,
                        fusion=f"{FUSION}(k={p.rrf_k})+{ADJUST}", as_of=as_of,
                        history=history)


def _answered(found: Lists, mode: str) -> tuple[str, str]:
    """The mode that answers given the lists that came back, and why."""
    if found.has_dense and found.has_bm25:
        answered = "hybrid"
    elif found.has_dense:
        answered = "dense"
    elif found.has_bm25:
        answered = "sparse"
    else:
        answered = "recent"
    requested = "hybrid" if mode == "auto" else mode
    why = (f"{answered}: " + ("; ".join(found.notes) if found.notes and answered != requested else
                              {"hybrid": f"dense + bm25 fused ({FUSION}, {ADJUST})",
                               "dense": "dense only, as requested",
                               "sparse": "bm25 only, as requested",
                               "recent": "most recently updated, as requested"}[answered]))
    return answered, why


def _fuse(index: SearchIndex, found: Lists, answered: str, terms: list[str], depth: int,
          p: RecallParams, stages: list[str]) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """Reciprocal rank fusion of the lists (the recent list when nothing searched), then the
    pseudo-relevance-feedback pass when asked for."""
    if answered == "recent":
        found.ids = {"recent": index.recent(depth)}
        found.weights = {"recent": 1.0}
    fused, ranks = rrf(found.ids, weights=found.weights, k=p.rrf_k)
    if p.prf_weight > 0 and answered != "recent" and fused:
        try:
            qvec = found.qvecs[0] if found.has_dense else None
            extra = feedback_lists(index, fused, terms, qvec, depth, p)
            if extra:
                found.ids.update(extra)
                found.weights.update({n: p.prf_weight for n in extra})
                fused, ranks = rrf(found.ids, weights=found.weights, k=p.rrf_k)
                stages.append("feedback")
        except Exception as e:  # noqa: BLE001
            log.warning("feedback stage failed: %s", e)
            stages.append(f"feedback skipped ({e})")
    return fused, ranks
