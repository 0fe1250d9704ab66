"""Hybrid recall over a :class:`~brainfs.cache.search.index.SearchIndex`, returning cards.

Pipeline: the query runs through dense search (MiniLM cosine) and sparse search (FTS5
BM25) together; the two ranked lists are merged by reciprocal rank fusion and the fused
score is adjusted by each chunk's confidence and age. When a part is missing or fails the
chain degrades instead of failing — hybrid → dense → sparse → recent — and
``RecallResult.mode`` / ``.why`` say which part answered and why.

Around the fusion (issue 16), each stage optional and named in ``why`` when it acts or
fails: a multi-part question is split (``querysplit``) and each part adds its own lists;
the question without the people it names adds its own (``querysplit.without_names``); the
head of those lists ranked by each candidate's best sentence adds one more
(``sentences``); the keyword query is expanded with the wiki's aliases (``aliases``);
after fusion a turn by a person the question names gains, a turn next to a strong match
gains a share of its score, the best sessions lift their turns, and a question naming a
day or month lifts the turns said then (``rerank``, ``dates.named_period``); a question
that gathers several facts is spread over sessions (``rerank.session_spread``) and the
last places of every ten go to the best sessions not yet listed
(``rerank.session_reserve``), else MMR or a per-file cap can spread the list. Every
weight is a field of :class:`RecallParams`, whose defaults are what
leave-one-conversation-out cross-validation on LoCoMo dev chose
(``benchmarks/locomo_eval.py``, ``benchmarks/results/locomo.md`` and, for the fourth
round, ``locomo-reserve.md``). The index resolves a
turn's relative dates ("yesterday" → "7 May 2023", ``cache.dates``) into its text.

Formulas (named and versioned so a stored score can be traced to the code that made it):

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

``cur-v1``  after the stages above, a passage that states a replaced value (``validity``:
            a closed fact record, a superseded card, a page's ``## Superseded`` line, a
            turn that only closed statements cite) is scored × ``validity.DEMOTE`` (0.5),
            and what replaced it (its record, card or cited source) is pulled in when it is
            not a candidate and lifted to at least the replaced passage's former score: a
            replaced value never comes before its successor. ``history`` skips this (the
            marks stay); ``as_of`` first leaves out what was said after the day.

Last, a wiki line whose cited turns all stand among the returned turns is left to them
(``restated``): dropped from its chunk's text, the chunk when nothing is left, and the list
filled up to k from the next candidates (``recall(leave_to_turns=True)``, as
``Recaller.search`` asks for every reader; the lines of
``## Superseded``, of a replaced passage, and of what is true now of a page the query names
stay).

FTS5 queries are never built from raw user text: terms are extracted with the same notion
of a token as the ``unicode61`` tokenizer (letters and digits), stopwords dropped, each term
double-quoted, then joined with OR. As basic-memory does, a strict AND of the same terms can
run first with the relaxed OR filling the remainder (``STRICT_FIRST``).

Dense search embeds the raw query; a turn is embedded with the turn it replies to as
context (see ``chunker.embed_text``).
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import re
import time
import unicodedata
from collections.abc import Collection
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .aliases import expansions
from .chunker import cite_numbers, source_table, split_frontmatter
from .dates import named_period
from .querysplit import is_list_question, split_question, without_names
from .rerank import (date_prior, mmr, propagate_neighbours, ranked, session_cap,
                     session_prior, session_reserve, session_spread)
from .restated import Restated, leave_to_turns
from .sentences import best_sentence_scores
from .staleness import is_stale
from .validity import DEMOTE, Verdict

if TYPE_CHECKING:
    from .embedder import Embedder
    from .index import SearchIndex

log = logging.getLogger(__name__)

FUSION = "rrf-v1"
ADJUST = "adj-v2"
CURRENCY = "cur-v1"
RRF_K = 10
WEIGHTS = {"dense": 1.0, "bm25": 1.0}
#: Half-life (days) of the recency factor and its floor: see ``adj-v1`` above.
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_FLOOR = 0.9
CONFIDENCE_FLOOR = 0.75
#: Each retriever contributes this many candidates (at least) to the fusion: deep enough
#: that a chunk ranked modestly by both lists can surface, cheap at 100k chunks.
MIN_DEPTH = 50
DEPTH_PER_K = 5
#: Run a strict AND query first, then fill with OR (basic-memory's approach): a chunk
#: holding every term is a better keyword match than BM25's OR ranking alone may show
#: when one common term is repeated. Measured on LoCoMo: +0.4 pt BM25 recall@5, hybrid
#: unchanged; costs one more FTS query.
STRICT_FIRST = True
MAX_TERMS = 32

MODES = ("auto", "hybrid", "dense", "sparse", "recent")

# A standard English stopword list (the NLTK/Lucene family), plus contraction tails that
# the tokenizer splits off ("caroline's" → "caroline", "s").
STOPWORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each few for from further had hadn has hasn have haven having he her here hers herself
him himself his how i if in into is isn it its itself just ll me more most mustn my myself no
nor not now of off on once only or other ought our ours ourselves out over own re same shan
she should shouldn so some such than that the their theirs them themselves then there these
they this those through to too under until up very ve was wasn we were weren what when where
which while who whom why will with won would wouldn you your yours yourself yourselves s t d
m o y ain isn ma
""".split())

_TOKEN_RE = re.compile(r"[^\W_]+")


# --------------------------------------------------------------------------- query handling

def query_terms(query: str) -> list[str]:
    """Search terms of a free-text query: lower-cased letter/digit runs (the unicode61
    tokenizer's notion of a token), stopwords and 1-letter tokens dropped, de-duplicated,
    at most ``MAX_TERMS``. If every token is a stopword, they are kept (something beats
    nothing). Never raises."""
    if not isinstance(query, str):
        query = str(query or "")
    text = unicodedata.normalize("NFKC", query).lower()
    tokens = [t for t in _TOKEN_RE.findall(text) if len(t) > 1 or t.isdigit()]
    terms = [t for t in dict.fromkeys(tokens) if t not in STOPWORDS]
    if not terms:
        terms = list(dict.fromkeys(tokens))
    return terms[:MAX_TERMS]


def fts_query(terms: list[str], op: str = "OR") -> str:
    """An FTS5 MATCH expression of double-quoted terms joined by ``op`` ("OR" or "AND").

    Terms come from :func:`query_terms` (letters and digits only) so they cannot contain a
    quote; quoting them anyway makes FTS5 keywords (AND, OR, NOT, NEAR) and column filters
    plain strings. Returns "" for no terms.
    """
    op = " AND " if op.upper() == "AND" else " OR "
    return op.join('"' + t.replace('"', '""') + '"' for t in terms)


# --------------------------------------------------------------------------- cards

@dataclass
class Card:
    """One recalled passage with the metadata that makes the pick inspectable."""

    path: str
    anchor: str
    kind: str
    scope: str | None
    title: str | None
    text: str
    truncated: bool
    freshness: str
    stale: bool
    confidence_pct: int
    score: float
    reason: str
    ranks: dict[str, int] = field(default_factory=dict)
    matched_terms: list[str] = field(default_factory=list)
    updated: str | None = None
    speaker: str | None = None
    chunk_id: int | None = None
    #: what replaced the value this passage states (``validity.Replacement.to_dict``:
    #: value, date, source, mark), None while it holds
    superseded_by: dict[str, Any] | None = None

    @property
    def ref(self) -> str:
        """Citation form ``path#anchor``."""
        return f"{self.path}#{self.anchor}" if self.anchor else self.path

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (includes ``ref``)."""
        d = asdict(self)
        d["ref"] = self.ref
        return d


@dataclass
class RecallResult:
    """What :func:`recall` returns: the cards, which retrieval mode answered and why."""

    query: str
    mode: str
    cards: list[Card]
    timings: dict[str, float]
    why: str = ""
    terms: list[str] = field(default_factory=list)
    fusion: str = f"{FUSION}(k={RRF_K})+{ADJUST}"
    #: the day the answer is as of (None: now); whether replaced passages kept their rank
    as_of: str | None = None
    history: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"query": self.query, "mode": self.mode, "why": self.why, "terms": self.terms,
                "fusion": self.fusion, "as_of": self.as_of, "history": self.history,
                "timings": self.timings, "cards": [c.to_dict() for c in self.cards]}


def truncate(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_chars`` characters at a word boundary, ending in "…".

    Returns (text, truncated)."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text, False
    limit = max(1, max_chars - 1)  # room for the ellipsis
    cut = text[:limit]
    if not text[limit].isspace():  # the cut falls inside a word: back up to its start
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        if space >= limit // 2:  # …unless that word is huge (a URL, a hash): cut hard
            cut = cut[:space]
    return cut.rstrip(" \t\n,;:-—") + "…", True


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


def freshness_label(days: float | None) -> str:
    """A human label for an age in days: "today", "3 days ago", "5 months ago", …"""
    if days is None:
        return "date unknown"
    if days < -1:
        n = math.ceil(-days)
        return f"in {n} day{'s' if n != 1 else ''}" if n < 60 else "in the future"
    if days < 1:
        return "today"
    if days < 2:
        return "yesterday"

    def plural(n: int, unit: str) -> str:
        return f"{n} {unit}{'s' if n != 1 else ''} ago"

    if days < 14:
        return plural(int(days), "day")
    if days < 60:
        return plural(int(days // 7), "week")
    if days < 730:
        return plural(max(2, int(days // 30.44)), "month")
    return plural(int(days // 365.25), "year")


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


# --------------------------------------------------------------------------- recall

def _sparse(index: SearchIndex, terms: list[str], depth: int,
            extra: list[str] | None = None) -> list[int]:
    """BM25 ids, best first; strict AND first when ``STRICT_FIRST`` and several terms.
    ``extra`` terms (alias names) join the relaxed OR query only."""
    ids: list[int] = []
    if STRICT_FIRST and len(terms) > 1:
        ids = [cid for cid, _ in index.sparse_search(fts_query(terms, "AND"), depth)]
    if len(ids) < depth:
        seen = set(ids)
        ids += [cid for cid, _ in index.sparse_search(fts_query(terms + (extra or [])[:MAX_TERMS], "OR"),
                                                      depth) if cid not in seen]
    return ids[:depth]


@dataclass(frozen=True)
class RecallParams:
    """Every tuned choice of :func:`recall`, in one place. The defaults are the grid point
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


class _QueryPlan(NamedTuple):
    """What query analysis makes of a question: (query text, list weight) pairs, the
    question itself first, then its sub-queries; and the alias names that expand it."""

    queries: list[tuple[str, float]]
    extra_names: list[str]


@dataclass
class _Lists:
    """The ranked candidate lists of one recall, by list name ("dense", "bm25", "dense:1"
    for a sub-query's, "recent"), their fusion weights, and why a part is missing."""

    ids: dict[str, list[int]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: the query vectors (the question's first), once embedded
    qvecs: Any = None
    embed_ms: float = 0.0
    search_ms: float = 0.0
    #: which kinds of list came back non-empty (set by :meth:`settle`, before feedback)
    has_dense: bool = False
    has_bm25: bool = False

    def settle(self) -> None:
        """Drop empty lists and note which kinds answered."""
        self.ids = {name: ids for name, ids in self.ids.items() if ids}
        self.has_dense = any(n.startswith("dense") for n in self.ids)
        self.has_bm25 = any(n.startswith("bm25") for n in self.ids)


def recall(index: SearchIndex, query: str, k: int = 10, embedder: Embedder | None = None,
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
    filled up to ``k`` again — what recall gives a reader (``Recaller.search``: ``brainfs
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
    plan = _analyse_query(index, query, terms, mode, p, alias_groups, stages)
    found = _Lists()
    if mode in ("auto", "hybrid", "dense"):
        _dense_lists(index, query, plan, embedder, depth, p, found)
    if mode in ("auto", "hybrid", "sparse") or (mode == "dense" and "dense" not in found.ids):
        _sparse_lists(index, terms, plan, depth, p, found)
    found.settle()
    if p.unnamed_weight > 0 and mode != "recent" and (found.has_dense or found.has_bm25):
        _unnamed_lists(index, query, terms, embedder, depth, p, found, stages)
    if p.sentence_weight > 0 and found.has_dense and embedder is not None:
        _sentence_list(index, embedder, p, found, stages)
    answered, why = _answered(found, mode)

    t = time.perf_counter()
    fused, ranks = _fuse(index, found, answered, terms, depth, p, stages)
    scores, rows = _adjusted_scores(index, fused, now, p.rrf_k)
    if answered != "recent":
        file_lists = _file_lists(index, terms, found, depth, p, stages)
        scores, rows = _rerank(index, query, scores, rows, p, k, stages, file_lists)
    cur = _currency(index, scores, rows, as_of, history)
    scores, rows = cur.scores, cur.rows
    if exclude:
        gone = set(exclude)
        scores = {c: s for c, s in scores.items() if rows.get(c, {}).get("path") not in gone}
    order = ranked(scores)
    top_ids = _diversify(index, query, order, scores, rows, p, k, stages)
    rest = (_restated(index, query, top_ids, order, rows, k, alias_groups, set(cur.verdicts), stages)
            if leave_to_turns else Restated(top_ids))
    top = [(scores[cid], cid) for cid in rest.ids]
    if stages and answered != "recent":
        why += " + " + "; ".join(stages)
    if cur.said:
        why += " + " + cur.said
    matched = _matched_terms(index, terms, [cid for _, cid in top], answered)
    found.search_ms += (time.perf_counter() - t) * 1000

    cards = [_card({**rows[cid], "text": rest.texts[cid]} if cid in rest.texts else rows[cid],
                   cid, score, ranks.get(cid, {}),
                   [terms[i] for i in matched.get(cid, []) if i < len(terms)],
                   answered, found.notes, now, stale_days, max_chars)
             for score, cid in top]
    for card in cards:
        v = cur.verdicts.get(card.chunk_id)  # type: ignore[arg-type]
        if v is not None and v.replaced is not None:
            card.superseded_by = v.replaced.to_dict()
            card.reason += f"; {v.replaced.mark}"
        if card.chunk_id in cur.lifted:
            card.reason += f"; what replaced {cur.lifted[card.chunk_id]}"
        left_to = rest.left_to.get(card.chunk_id)  # type: ignore[arg-type]
        if left_to:
            card.reason += "; lines left to the recalled turns they cite: " + ", ".join(left_to)
    timings = {"embed_ms": round(found.embed_ms, 2), "search_ms": round(found.search_ms, 2)}
    return RecallResult(query=query, mode=answered, cards=cards, timings=timings, why=why, terms=terms,
                        fusion=f"{FUSION}(k={p.rrf_k})+{ADJUST}", as_of=as_of,
                        history=history)


def check_day(day: str | None) -> str | None:
    """An ``as_of`` day as ``YYYY-MM-DD`` (a datetime's day is taken); ValueError otherwise."""
    if day is None or day == "":
        return None
    try:
        return _dt.date.fromisoformat(str(day).strip()[:10]).isoformat()
    except ValueError:
        raise ValueError(f"not a day: {day!r} (give it as YYYY-MM-DD)") from None


@dataclass
class _Currency:
    """What the currency stage made of the candidates: their scores and rows (successors
    pulled in), each replaced candidate's verdict, the lifted successors (id → the ref of
    what they replaced), and what to say in ``why``."""

    scores: dict[int, float]
    rows: dict[int, dict[str, Any]]
    verdicts: dict[int, Verdict] = field(default_factory=dict)
    lifted: dict[int, str] = field(default_factory=dict)
    said: str = ""


def _currency(index: SearchIndex, scores: dict[int, float], rows: dict[int, dict[str, Any]],
              as_of: str | None, history: bool) -> _Currency:
    """``cur-v1`` (see :func:`recall`): leave out what was not said yet ``as_of``, mark what
    was replaced, rank it below what replaced it (pulled in when it is not a candidate)."""
    out = _Currency(scores, rows)
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


def _analyse_query(index: SearchIndex, query: str, terms: list[str], mode: str, p: RecallParams,
                   alias_groups: list[list[str]] | None, stages: list[str]) -> _QueryPlan:
    """Sub-queries of a multi-part question and alias names of the subjects it names (each
    stage optional: a failure is named in ``stages``)."""
    parts: list[str] = []
    if p.split_weight > 0 and mode != "recent":
        try:
            parts = split_question(query)
        except Exception as e:  # noqa: BLE001 - a stage, not a requirement
            stages.append(f"question splitting failed ({e})")
        if parts:
            stages.append(f"split into {len(parts)}")
    extra_names: list[str] = []
    if p.aliases and terms and mode != "recent":
        try:
            groups = index.alias_groups() if alias_groups is None else alias_groups
            extra_names = expansions(query, groups)
        except Exception as e:  # noqa: BLE001
            stages.append(f"alias expansion failed ({e})")
        if extra_names:
            stages.append("aliases: " + ", ".join(extra_names))
    return _QueryPlan([(query, 1.0)] + [(q, p.split_weight) for q in parts], extra_names)


def _dense_lists(index: SearchIndex, query: str, plan: _QueryPlan, embedder: Embedder | None,
                 depth: int, p: RecallParams, found: _Lists) -> None:
    """Vector search for the question and each sub-query; a missing part is noted."""
    if not query.strip():
        found.notes.append("empty query")
    elif embedder is None:
        found.notes.append("no embedder")
    elif not index.has_vectors():
        found.notes.append("no vectors in the index")
    elif index.embedder_name() not in (None, embedder.name):
        found.notes.append(f"index vectors are from {index.embedder_name()}, not {embedder.name}")
    else:
        try:
            t = time.perf_counter()
            qvs = embedder.embed([q for q, _ in plan.queries])
            found.qvecs = qvs
            found.embed_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            for i, ((_q, w), qv) in enumerate(zip(plan.queries, qvs)):
                name = "dense" if i == 0 else f"dense:{i}"
                found.ids[name] = [cid for cid, _ in index.dense_search(qv, depth)]
                found.weights[name] = p.w_dense * w
            found.search_ms += (time.perf_counter() - t) * 1000
        except Exception as e:  # noqa: BLE001 - degrade, and say why
            log.warning("dense search failed: %s", e)
            found.notes.append(f"dense search failed: {e}")
            found.ids = {n: v for n, v in found.ids.items() if not n.startswith("dense")}


def _sparse_lists(index: SearchIndex, terms: list[str], plan: _QueryPlan, depth: int,
                  p: RecallParams, found: _Lists) -> None:
    """BM25 for the question (with alias terms) and each sub-query; a missing part is noted."""
    if not terms:
        found.notes.append("no search terms")
    elif not index.has_fts():
        found.notes.append("no FTS index")
    else:
        try:
            t = time.perf_counter()
            alias_terms = [x for x in query_terms(" ".join(plan.extra_names)) if x not in terms]
            found.ids["bm25"] = _sparse(index, terms, depth, alias_terms)
            found.weights["bm25"] = p.w_bm25
            for i, (q, w) in enumerate(plan.queries[1:], 1):
                qt = query_terms(q)
                if qt:
                    found.ids[f"bm25:{i}"] = _sparse(index, qt, depth)
                    found.weights[f"bm25:{i}"] = p.w_bm25 * w
            found.search_ms += (time.perf_counter() - t) * 1000
            if not found.ids["bm25"]:
                found.notes.append("no keyword match")
        except Exception as e:  # noqa: BLE001
            log.warning("FTS search failed: %s", e)
            found.notes.append(f"keyword search failed: {e}")
            found.ids = {n: v for n, v in found.ids.items() if not n.startswith("bm25")}


def _unnamed_lists(index: SearchIndex, query: str, terms: list[str], embedder: Embedder | None,
                   depth: int, p: RecallParams, found: _Lists, stages: list[str]) -> None:
    """The question without the people it names (``querysplit.without_names``) as one
    more query, through the kinds of list that answered the question. The people are the
    speakers of the question's candidates whose names the question holds (the same test
    as the speaker stage), so a place or a title in capitals is never removed."""
    try:
        head = {c for ids in found.ids.values() for c in ids[:depth]}
        rows = index.chunks_by_id(head)
        named = set(terms)
        people = {sp for r in rows.values() if (sp := r.get("speaker"))
                  and set(query_terms(sp)) <= named}
        unnamed = without_names(query, people)
        if not unnamed:
            return
        w = p.unnamed_weight
        if found.has_dense and embedder is not None:
            t = time.perf_counter()
            qv = embedder.embed([unnamed])[0]
            found.embed_ms += (time.perf_counter() - t) * 1000
            found.ids["dense:unnamed"] = [cid for cid, _ in index.dense_search(qv, depth)]
            found.weights["dense:unnamed"] = p.w_dense * w
        uterms = query_terms(unnamed)
        if found.has_bm25 and uterms:
            found.ids["bm25:unnamed"] = _sparse(index, uterms, depth)
            found.weights["bm25:unnamed"] = p.w_bm25 * w
        found.ids = {n: v for n, v in found.ids.items() if v}
        stages.append(f"without {', '.join(sorted(people))}")
    except Exception as e:  # noqa: BLE001 - a stage, not a requirement
        log.warning("unnamed query failed: %s", e)
        stages.append(f"unnamed query skipped ({e})")
        found.ids = {n: v for n, v in found.ids.items() if not n.endswith(":unnamed")}


def _sentence_list(index: SearchIndex, embedder: Embedder, p: RecallParams, found: _Lists,
                   stages: list[str]) -> None:
    """The head of the lists fused so far, ranked by each candidate's best sentence
    (``sentences.best_sentence_scores``), as the list "dense:sentences". Its sentences are
    embedded now (a memo keeps them), so the pool is small: ``sentence_pool``."""
    try:
        t = time.perf_counter()
        fused, _ranks = rrf(found.ids, weights=found.weights, k=p.rrf_k)
        n = max(1, p.sentence_pool)
        head = sorted(fused, key=lambda c: (-fused[c], c))[:2 * n]
        rows = index.chunks_by_id(head)

        def place(c: int) -> tuple[str, str]:
            # ties go by where the chunk is, not by its id: an index in parts numbers its
            # chunks otherwise than the whole index, and must answer the same
            return (rows[c]["path"], rows[c]["anchor"]) if c in rows else ("", "")

        pool = sorted(head, key=lambda c: (-round(fused[c], 9), place(c)))[:n]
        best, made = best_sentence_scores(rows, pool, found.qvecs[0], embedder)
        if best:
            found.ids["dense:sentences"] = sorted(best, key=lambda c: (-round(best[c], 6), place(c)))
            found.weights["dense:sentences"] = p.w_dense * p.sentence_weight
            stages.append(f"best sentence of {len(best)} ({made} embedded)")
        found.embed_ms += (time.perf_counter() - t) * 1000
    except Exception as e:  # noqa: BLE001 - a stage, not a requirement
        log.warning("sentence stage failed: %s", e)
        stages.append(f"sentence stage skipped ({e})")
        found.ids.pop("dense:sentences", None)


def _answered(found: _Lists, mode: str) -> tuple[str, str]:
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


def _fuse(index: SearchIndex, found: _Lists, answered: str, terms: list[str], depth: int,
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
            extra = _feedback_lists(index, fused, terms, qvec, depth, p)
            if extra:
                found.ids.update(extra)
                found.weights.update({n: p.prf_weight for n in extra})
                fused, ranks = rrf(found.ids, weights=found.weights, k=p.rrf_k)
                stages.append("feedback")
        except Exception as e:  # noqa: BLE001
            log.warning("feedback stage failed: %s", e)
            stages.append(f"feedback skipped ({e})")
    return fused, ranks


def _adjusted_scores(index: SearchIndex, fused: dict[int, float], now: _dt.datetime,
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


def _file_lists(index: SearchIndex, terms: list[str], found: _Lists, depth: int,
                p: RecallParams, stages: list[str]) -> dict[str, list[str]]:
    """Whole-file rankings for session-first, when it ranks sessions by file."""
    file_lists: dict[str, list[str]] = {}
    if p.session_files and (p.session_weight > 0 or p.session_gate > 0):
        try:
            if found.has_bm25:
                file_lists["bm25"] = index.file_search(fts_query(terms), depth)
            if found.has_dense:
                file_lists["dense"] = index.file_dense_search(found.qvecs[0], depth)
        except Exception as e:  # noqa: BLE001
            stages.append(f"file-level search skipped ({e})")
    return file_lists


def _matched_terms(index: SearchIndex, terms: list[str], top: list[int],
                   answered: str) -> dict[int, list[int]]:
    """Which query terms each top chunk holds (for the reason line; cosmetic)."""
    if terms and answered != "recent" and index.has_fts():
        try:
            return index.matched_phrases(fts_query(terms), top)
        except Exception as e:  # noqa: BLE001 - cosmetic: the reason line loses its terms
            log.debug("matched-terms lookup failed: %s", e)
    return {}


def _card(row: dict[str, Any], cid: int, score: float, cid_ranks: dict[str, int],
          mterms: list[str], answered: str, notes: list[str], now: _dt.datetime,
          stale_days: int, max_chars: int) -> Card:
    """One recalled chunk as a card, with the reason it is there."""
    updated = row["updated"] or row["created"]
    days = age_days(updated, now)
    text, cut = truncate(row["text"] or "", max_chars)
    # the question's own lists, with its name-free form's ("dense:unnamed") and its best
    # sentences' ("dense:sentences"); a split question's parts are only counted
    r = {n: v for n, v in cid_ranks.items() if ":" not in n or n.endswith((":unnamed", ":sentences"))}
    parts_hit = sum(1 for n in cid_ranks if n not in r)
    reason = ", ".join(f"{name} #{rank}" for name, rank in sorted(r.items(), key=lambda x: x[1]))
    if parts_hit:
        reason += (", " if reason else "") + f"{parts_hit} sub-query list{'s' if parts_hit > 1 else ''}"
    if not reason:
        reason = "next to a match"
    if answered == "recent":
        reason = f"recent #{r.get('recent')} (no search: {'; '.join(notes) or 'as requested'})"
    if mterms:
        reason += "; matched: " + ", ".join(mterms)
    return Card(
        path=row["path"], anchor=row["anchor"], kind=row["kind"], scope=row["scope"],
        title=row["title"], text=text, truncated=cut, freshness=freshness_label(days),
        stale=is_stale(text, row["kind"] or "", days, stale_days),
        confidence_pct=int(round(100 * float(row["confidence"] if row["confidence"] is not None else 0))),
        score=round(score, 6), reason=reason, ranks=dict(r), matched_terms=mterms,
        updated=updated, speaker=row["speaker"], chunk_id=cid)


#: Pseudo-relevance feedback: the best this many chunks of the first pass lend their words
#: (a word must occur in two of them) and their mean vector to a second pass.
PRF_DOCS = 5
PRF_TERMS = 8


def _feedback_lists(index: SearchIndex, fused: dict[int, float], terms: list[str],
                    qvec: Any, depth: int, p: RecallParams) -> dict[str, list[int]]:
    """Second-pass lists from the first pass's best chunks (Rocchio for the dense query,
    RM3-like added words for BM25); words of a turn's "Speaker (date):" prefix do not
    count — they are in every turn."""
    import numpy as np

    head = sorted(fused, key=lambda c: (-fused[c], c))[:PRF_DOCS]
    rows = index.chunks_by_id(head)
    out: dict[str, list[int]] = {}
    df: dict[str, int] = {}
    for c in head:
        text = rows[c]["text"] if c in rows else ""
        if rows.get(c, {}).get("speaker"):
            text = text.split(": ", 1)[-1]
        for w in set(query_terms(text)):
            if w not in terms and not w.isdigit():
                df[w] = df.get(w, 0) + 1
    words = [w for w, n in sorted(df.items(), key=lambda x: (-x[1], x[0])) if n >= 2][:PRF_TERMS]
    if words and index.has_fts():
        out["bm25:prf"] = [cid for cid, _ in index.sparse_search(fts_query(terms + words), depth)]
    if qvec is not None:
        vecs = index.vectors(head)
        if vecs:
            q = np.asarray(qvec, dtype=np.float32) + np.mean(list(vecs.values()), axis=0)
            q /= np.linalg.norm(q) or 1.0
            out["dense:prf"] = [cid for cid, _ in index.dense_search(q, depth)]
    return {n: v for n, v in out.items() if v}


def _rerank(index: SearchIndex, query: str, scores: dict[int, float],
            rows: dict[int, dict[str, Any]], p: RecallParams, k: int, stages: list[str],
            file_lists: dict[str, list[str]] | None = None,
            ) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
    """Speaker, neighbours, then session-first (see ``rerank``); a stage that fails is
    skipped and named."""
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


def _diversify(index: SearchIndex, query: str, order: list[int], scores: dict[int, float],
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


def _restated(index: SearchIndex, query: str, top_ids: list[int], order: list[int],
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


# --------------------------------------------------------------------------- synthesis

def render_synthesis(result: RecallResult, materialized: list[str]) -> str:
    """Deterministic, extractive Markdown for a recall: the passages grouped by file (files
    in order of their best card), each with ``path#anchor``, metadata and score, then the
    files now materialized on local disk. No model is involved; same input, same output."""
    lines = [f"# Recall: {result.query.strip() or '(empty query)'}", ""]
    nfiles = len({c.path for c in result.cards})
    lines.append(f"_mode {result.why}; {len(result.cards)} passages from "
                 f"{nfiles} file{'s' if nfiles != 1 else ''}_")
    lines.append("")
    groups: dict[str, list[Card]] = {}
    for c in result.cards:
        groups.setdefault(c.path, []).append(c)
    if not groups:
        lines += ["Nothing found.", ""]
    for path, cards in groups.items():
        title = cards[0].title
        lines.append(f"## {path}" + (f" — {title}" if title and title not in path else ""))
        lines.append("")
        for c in cards:
            meta = [c.kind]
            if c.scope:
                meta.append(f"scope {c.scope}")
            meta.append(c.freshness + (" (stale)" if c.stale else ""))
            meta.append(f"confidence {c.confidence_pct}%")
            meta.append(f"score {c.score:.4f}")
            if c.truncated:
                meta.append("truncated")
            if c.superseded_by:
                meta.append(str(c.superseded_by.get("mark") or "superseded"))
            lines.append(f"- `{c.ref}` · {' · '.join(meta)} — {c.reason}")
            lines.extend("  > " + ln if ln.strip() else "  >" for ln in c.text.split("\n"))
            lines.append("")
    lines.append("## Files now materialized")
    lines.append("")
    if materialized:
        lines.extend(f"- {p}" for p in materialized)
    else:
        lines.append("- (none)")
    lines.append("")
    return "\n".join(lines)


_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.I)


def cited_refs(text: str | bytes) -> dict[int, str]:
    """``[cite:N]`` number → full source ref (``path#anchor``, connector sources included)
    from a page's frontmatter. Never raises."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        meta, _body, _bad = split_frontmatter(text.replace("\r\n", "\n"))
        return source_table(meta)
    except Exception:  # noqa: BLE001
        return {}


def cited_sources(text: str | bytes) -> list[str]:
    """Source paths a page cites: each ``[cite:N]`` (or ``[cite:1,2]``) in the body is
    resolved through the frontmatter ``sources`` (see :func:`cited_refs`); anchors are
    stripped and duplicates dropped, in order of first citation. Connector sources
    (``scheme://``) and unsafe paths are skipped. Never raises."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        meta, body, _bad = split_frontmatter(text.replace("\r\n", "\n"))
        table = source_table(meta)
        out: list[str] = []
        for n in cites_in(body):
            target = table.get(n)
            if not target or _SCHEME_RE.match(target):
                continue
            path = target.split("#", 1)[0].strip().lstrip("/")
            if not path or ".." in path.split("/"):
                continue
            if path not in out:
                out.append(path)
        return out
    except Exception:  # noqa: BLE001 - a helper for fetching: bad input yields nothing
        log.debug("cited_sources failed", exc_info=True)
        return []


def cites_in(text: str) -> list[int]:
    """The ``[cite:N]`` numbers in a passage, in order, without duplicates."""
    return cite_numbers(text)
