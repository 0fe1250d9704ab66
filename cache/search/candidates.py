"""The candidate lists a query is fused from: dense search (MiniLM cosine) and sparse search
(FTS5 BM25) for the question, and, each stage optional and named in ``why`` when it acts or
fails, more lists beside them: a multi-part question's sub-queries (``querysplit``), the
question without the people it names (``querysplit.without_names``), the head of those
lists ranked by each candidate's best sentence (``sentences``), the keyword query expanded
with the wiki's aliases (``aliases``), a second pass from the first pass's best chunks
(pseudo-relevance feedback), and whole files ranked for session-first.

Dense search embeds the raw query; a turn is embedded with the turn it replies to as
context (see ``chunker.embed_text``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .aliases import expansions
from .fusion import rrf
from .querysplit import split_question, without_names
from .queryterms import MAX_TERMS, fts_query, query_terms
from .sentences import best_sentence_scores

if TYPE_CHECKING:
    from .embedder import Embedder
    from .index import SearchIndex
    from .retrieval import RecallParams

# The stages log under the name of the module they were part of, as before.
log = logging.getLogger("brainfs.cache.search.retrieval")

#: Each retriever contributes this many candidates (at least) to the fusion: deep enough
#: that a chunk ranked modestly by both lists can surface, cheap at 100k chunks.
MIN_DEPTH = 50
DEPTH_PER_K = 5
#: Run a strict AND query first, then fill with OR (basic-memory's approach): a chunk
#: holding every term is a better keyword match than BM25's OR ranking alone may show
#: when one common term is repeated. Measured on LoCoMo: +0.4 pt BM25 recall@5, hybrid
#: unchanged; costs one more FTS query.
STRICT_FIRST = True
#: Pseudo-relevance feedback: the best this many chunks of the first pass lend their words
#: (a word must occur in two of them) and their mean vector to a second pass.
PRF_DOCS = 5
PRF_TERMS = 8


class QueryPlan(NamedTuple):
    """What query analysis makes of a question: (query text, list weight) pairs, the
    question itself first, then its sub-queries; and the alias names that expand it."""

    queries: list[tuple[str, float]]
    extra_names: list[str]


@dataclass
class Lists:
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


def sparse_ids(index: SearchIndex, terms: list[str], depth: int,
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


def analyse_query(index: SearchIndex, query: str, terms: list[str], mode: str, p: RecallParams,
                  alias_groups: list[list[str]] | None, stages: list[str]) -> QueryPlan:
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
    return QueryPlan([(query, 1.0)] + [(q, p.split_weight) for q in parts], extra_names)


def dense_lists(index: SearchIndex, query: str, plan: QueryPlan, embedder: Embedder | None,
                depth: int, p: RecallParams, found: Lists) -> None:
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


def sparse_lists(index: SearchIndex, terms: list[str], plan: QueryPlan, depth: int,
                 p: RecallParams, found: Lists) -> None:
    """BM25 for the question (with alias terms) and each sub-query; a missing part is noted."""
    if not terms:
        found.notes.append("no search terms")
    elif not index.has_fts():
        found.notes.append("no FTS index")
    else:
        try:
            t = time.perf_counter()
            alias_terms = [x for x in query_terms(" ".join(plan.extra_names)) if x not in terms]
            found.ids["bm25"] = sparse_ids(index, terms, depth, alias_terms)
            found.weights["bm25"] = p.w_bm25
            for i, (q, w) in enumerate(plan.queries[1:], 1):
                qt = query_terms(q)
                if qt:
                    found.ids[f"bm25:{i}"] = sparse_ids(index, qt, depth)
                    found.weights[f"bm25:{i}"] = p.w_bm25 * w
            found.search_ms += (time.perf_counter() - t) * 1000
            if not found.ids["bm25"]:
                found.notes.append("no keyword match")
        except Exception as e:  # noqa: BLE001
            log.warning("FTS search failed: %s", e)
            found.notes.append(f"keyword search failed: {e}")
            found.ids = {n: v for n, v in found.ids.items() if not n.startswith("bm25")}


def unnamed_lists(index: SearchIndex, query: str, terms: list[str], embedder: Embedder | None,
                  depth: int, p: RecallParams, found: Lists, stages: list[str]) -> None:
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
            found.ids["bm25:unnamed"] = sparse_ids(index, uterms, depth)
            found.weights["bm25:unnamed"] = p.w_bm25 * w
        found.ids = {n: v for n, v in found.ids.items() if v}
        stages.append(f"without {', '.join(sorted(people))}")
    except Exception as e:  # noqa: BLE001 - a stage, not a requirement
        log.warning("unnamed query failed: %s", e)
        stages.append(f"unnamed query skipped ({e})")
        found.ids = {n: v for n, v in found.ids.items() if not n.endswith(":unnamed")}


def sentence_list(index: SearchIndex, embedder: Embedder, p: RecallParams, found: Lists,
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


def feedback_lists(index: SearchIndex, fused: dict[int, float], terms: list[str],
                   qvec: Any, depth: int, p: RecallParams) -> dict[str, list[int]]:
    """Second-pass lists from the first pass's best chunks (Rocchio for the dense query,
    RM3-like added words for BM25); words of a turn's "Speaker (date):" prefix do not
    count — they are in every turn."""
    import numpy as np  # here: ~90 ms to import, and the CLI's startup path imports us

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


def file_lists(index: SearchIndex, terms: list[str], found: Lists, depth: int,
               p: RecallParams, stages: list[str]) -> dict[str, list[str]]:
    """Whole-file rankings for session-first, when it ranks sessions by file."""
    out: dict[str, list[str]] = {}
    if p.session_files and (p.session_weight > 0 or p.session_gate > 0):
        try:
            if found.has_bm25:
                out["bm25"] = index.file_search(fts_query(terms), depth)
            if found.has_dense:
                out["dense"] = index.file_dense_search(found.qvecs[0], depth)
        except Exception as e:  # noqa: BLE001
            stages.append(f"file-level search skipped ({e})")
    return out
