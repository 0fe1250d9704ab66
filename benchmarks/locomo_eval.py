"""LoCoMo retrieval quality of brainfs recall on the development split, with every tuned
parameter chosen by leave-one-conversation-out cross-validation.

For each arm — ``bm25``, ``dense``, ``hybrid``, ``hybrid+wiki`` (dream's wiki added, when
dream is importable) — a fixed grid of :class:`~brainfs.cache.search.retrieval.RecallParams`
(fusion constant and weights, candidate depth, question splitting, neighbours,
speaker, session-first ranking, MMR / per-session caps) is run over every question once.
Then, for each of the five conversations in turn, the grid point with the best turn
recall@10 on the *other four* is taken and scored on the held-out one: the concatenation
of those held-out scores is the **cross-validated** figure, what to expect on unseen
conversations. Beside it: the grid point best on all five (the shipped defaults come from
the hybrid arm's), as the tuned-on-all figure, and the untuned starting point of issue 16.

Writes ``benchmarks/results/locomo.md`` (tables) and ``locomo.json``. Also index build
throughput and size on one index over the whole split, and with ``--dense-bench N`` dense
search latency over N random 384-d vectors.

    BRAINFS_LOCOMO_DIR=DIR python benchmarks/locomo_eval.py \
        --embed-cache /tmp/brainfs-locomo-emb.npz          # ~15 min on 2 CPUs
    python benchmarks/locomo_eval.py --data FILE --arms hybrid --grid small   # quick look

The data is read from ``$BRAINFS_LOCOMO_DIR/locomo-dev.json`` or ``--data``; it is never
copied into the repository. ``--embed-cache FILE`` keeps the embeddings of turns and
questions in a file (outside the repository) so a re-run skips the model.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from brainfs.cache.search.embedder import load_embedder
from brainfs.cache.search.index import SearchIndex
from brainfs.tools.locomo import (CATEGORIES, ENV_DIR, KS, EmbeddingCache, _content_hash,
                                  _QueryCache, conversation_tree, dev_split, evaluate,
                                  index_retriever, wiki_retriever)
from brainfs.cache.search.retrieval import DEFAULT_PARAMS, RecallParams, retrieve

OUT = Path(__file__).resolve().parent / "results"


def build_benchmark(data: Path, embedder: Any) -> dict[str, Any]:
    """Index the whole split as one memory tree: throughput and size at rest."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    tree: dict[str, str] = {}
    for s in samples:
        tree.update(conversation_tree(s))
    files = [(p, _content_hash(t)) for p, t in tree.items()]
    out: dict[str, Any] = {"files": len(tree), "bytes_of_text": sum(len(t.encode()) for t in tree.values())}
    with tempfile.TemporaryDirectory(prefix="brainfs-ixbench-") as tmp:
        for label, emb in (("fts_only", None), ("hybrid", embedder)):
            db = Path(tmp) / f"{label}.db"
            ix = SearchIndex(db)
            st = ix.refresh(files, lambda p: tree[p].encode(), emb)
            again = ix.refresh(files, lambda p: tree[p].encode(), emb)  # nothing changed
            ix.close()
            size = sum(f.stat().st_size for f in Path(tmp).glob(f"{label}.db*"))
            out[label] = {"chunks": st["chunks"], "seconds": st["seconds"],
                          "embed_seconds": st["embed_seconds"], "chunks_per_s": st["chunks_per_s"],
                          "bytes": size, "bytes_per_chunk": round(size / max(1, st["chunks"])),
                          "mb_per_1000_files": round(size / len(tree) * 1000 / 1e6, 1),
                          "noop_refresh_seconds": again["seconds"]}
    return out


def dense_bench(n: int, dim: int = 384, queries: int = 20) -> dict[str, Any]:
    """vec0 KNN vs numpy brute force over ``n`` random unit vectors (top-50)."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    res: dict[str, Any] = {"vectors": n, "dim": dim}
    with tempfile.TemporaryDirectory(prefix="brainfs-densebench-") as tmp:
        ix = SearchIndex(Path(tmp) / "d.db")
        with ix.conn:
            ix.conn.execute(f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dim}] "
                            "distance_metric=cosine)")
            ix.conn.executemany("INSERT INTO chunks(id, path, anchor, kind, confidence, text, "
                                "ordinal, vec) VALUES (?, 'p', '', 'text', 1, '', 0, 1)",
                                ((i + 1,) for i in range(n)))
            ix.conn.executemany("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                                ((i + 1, x[i].tobytes()) for i in range(n)))
            ix.conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', 'bench'), ('dim', ?)",
                            (str(dim),))
        qs = x[rng.integers(0, n, queries)] + 0.05 * rng.standard_normal((queries, dim)).astype(np.float32)
        for backend in ("vec0", "numpy"):
            ix.dense_backend = backend
            t = time.perf_counter()
            ix.dense_search(qs[0], 50)  # numpy: loads the matrix once
            first = time.perf_counter() - t
            t = time.perf_counter()
            for q in qs:
                ix.dense_search(q, 50)
            res[backend] = {"ms_per_query": round((time.perf_counter() - t) * 1000 / queries, 2),
                            "first_query_ms": round(first * 1000, 1)}
        ix.close()
    return res


def latency_check(data: Path, model: Any, index_embedder: Any, points: dict[str, RecallParams],
                  per_conversation: int) -> dict[str, Any]:
    """Recall time in-process with the model itself — not the evaluation's vector cache,
    which answers every question (and sentence) it has seen without the model — for each
    of ``points`` over the first ``per_conversation`` questions of each conversation:
    p50 / p95 with the sentence memo and the per-user vector cache empty ("cold": every
    sentence the stage needs is embedded then), and again with the memo filled by that
    pass ("warm"), both as a mount keeps them: the in-process memo and a per-user vector
    cache (a new, empty one per point)."""
    import brainfs.cache.search.sentences as sentences
    from brainfs.tools.locomo import CATEGORIES as cats, question_time, read_samples

    def pct(ms: list[float], q: float) -> float:
        ms = sorted(ms)
        return round(ms[min(len(ms) - 1, int(q * len(ms)))], 1) if ms else 0.0

    saved_env = os.environ.get("BRAINFS_EMBED_CACHE")
    out: dict[str, Any] = {"questions_per_conversation": per_conversation, "points": {}}
    try:
        with tempfile.TemporaryDirectory(prefix="brainfs-latency-") as tmp:
            indexes = []
            for i, sample in enumerate(read_samples(data)):
                tree = conversation_tree(sample)
                ix = SearchIndex(Path(tmp) / f"{i}.db")
                ix.refresh([(p, _content_hash(t)) for p, t in tree.items()],
                           lambda p, tree=tree: tree[p].encode(), index_embedder)
                qs = [str(q["question"]) for q in sample.get("qa", [])
                      if q.get("category") in cats][:per_conversation]
                indexes.append((ix, question_time(sample), qs))
            for n, (name, params) in enumerate(points.items()):
                res: dict[str, Any] = {"label": params.label(START)}
                # an empty memo and an empty per-user vector cache of its own (the product
                # keeps sentence vectors in both)
                sentences.MEMO = sentences.SentenceMemo()
                os.environ["BRAINFS_EMBED_CACHE"] = str(Path(tmp) / f"vectors-{n}.sqlite")
                for phase in ("cold", "warm"):
                    ms = []
                    for ix, now, qs in indexes:
                        for q in qs:
                            t = time.perf_counter()
                            retrieve(ix, q, k=20, embedder=model, now=now, params=params)
                            ms.append((time.perf_counter() - t) * 1000)
                    res[phase] = {"p50": pct(ms, 0.5), "p95": pct(ms, 0.95), "n": len(ms)}
                out["points"][name] = res
            for ix, _now, _qs in indexes:
                ix.close()
    finally:
        if saved_env is None:
            os.environ.pop("BRAINFS_EMBED_CACHE", None)
        else:
            os.environ["BRAINFS_EMBED_CACHE"] = saved_env
    return out


# --------------------------------------------------------------------------- grids

#: Every stage off: the grid is spelt out from this, so it does not move when the shipped
#: defaults (chosen from it) change.
OFF: dict[str, Any] = dict(rrf_k=10, w_dense=1.0, w_bm25=1.0, depth=50, split_weight=0.0,
                           aliases=False, neighbour=0.0, session_weight=0.0, session_top=3,
                           session_gate=0, session_files=False, mmr_lambda=1.0, session_cap=0,
                           speaker=0.0, prf_weight=0.0, unnamed_weight=0.0, list_spread=0.0,
                           session_reserve=0, date_weight=0.0, sentence_weight=0.0,
                           sentence_pool=20)
#: Where issue 16 started: RRF k = 10, equal weights, no stage.
START = RecallParams(**OFF)


def _variants(base: dict[str, Any], **axes: list[Any]) -> list[RecallParams]:
    """``base``, then ``base`` with one field changed, for every value of every axis."""
    base = {**OFF, **base}
    out = [RecallParams(**base)]
    for name, values in axes.items():
        out += [RecallParams(**{**base, name: v}) for v in values]
    return out


def _fourth_round() -> tuple[dict[str, Any], list[RecallParams]]:
    """Issue 16's fourth round, around the shipped defaults of the third: a list
    question's last places of every ten reserved for new sessions (``session_reserve``),
    a question naming a day or month lifting the turns said then (``date_weight``), each
    alone and together, the reserve with the spread off or stronger, and both with the
    best-sentence stage."""
    shipped = {**OFF, "neighbour": 0.1, "speaker": 2.0, "rrf_k": 5, "aliases": True,
               "unnamed_weight": 1.0, "list_spread": 0.5}
    reserve = {**shipped, "session_reserve": 2}
    both = {**reserve, "date_weight": 1.0}
    sentence = {**shipped, "sentence_weight": 1.0}
    points = (_variants(shipped, session_reserve=[1, 2, 3], date_weight=[0.5, 1.0])
              + _variants(reserve, session_top=[5], list_spread=[0.0, 1.0])[1:]
              + _variants(both, date_weight=[0.5], session_reserve=[1], list_spread=[0.0])
              + _variants(sentence, session_reserve=[2])
              + [RecallParams(**{**sentence, "session_reserve": 2, "date_weight": 1.0}),
                 RecallParams(**{**sentence, "session_reserve": 2, "list_spread": 0.0}),
                 RecallParams(**{**sentence, "session_reserve": 2, "date_weight": 1.0,
                                 "list_spread": 0.0})])
    return shipped, points


def grids(size: str) -> dict[str, list[RecallParams]]:
    """The grid per arm, fixed before any fold is scored: issue 16's starting point, a core
    point (the stages that helped in exploratory runs on dev), each parameter varied
    alone around it, and neighbours × speaker. 'small' is for a quick look; 'reserve' is
    the fourth round alone (:func:`_fourth_round`) beside the start."""
    core = {**OFF, "neighbour": 0.3, "speaker": 1.0, "rrf_k": 5, "aliases": True}
    if size == "small":
        pts = [START, RecallParams(**core)]
        return {"bm25": pts, "dense": pts, "hybrid": pts, "hybrid+wiki": pts[1:]}
    shipped, fourth = _fourth_round()
    if size == "reserve":
        single = [START] + _variants(shipped, session_reserve=[1, 2, 3], date_weight=[1.0])
        return {"bm25": single, "dense": single, "hybrid": [START] + fourth,
                "hybrid+wiki": single[1:]}
    hybrid = [START] + _variants(
        core, rrf_k=[3, 10, 20], neighbour=[0.0, 0.2, 0.4], speaker=[0.0, 0.5, 2.0],
        session_weight=[0.5, 1.0], mmr_lambda=[0.7, 0.8], split_weight=[0.5, 1.0],
        w_bm25=[0.7, 1.5], depth=[100], session_cap=[4], prf_weight=[0.3], aliases=[False])
    hybrid += [RecallParams(**{**core, "session_files": True, "session_weight": w}) for w in (1.0, 2.0)]
    hybrid += [RecallParams(**{**core, "neighbour": n, "speaker": sp})
               for n in (0.0, 0.2, 0.4) for sp in (0.0, 0.5, 2.0)]
    # Issue 16's second round: the question without the people it names, and a list
    # question spread over sessions, around the best point of the first round.
    second = {**core, "neighbour": 0.2, "speaker": 2.0, "unnamed_weight": 1.0, "list_spread": 0.5}
    hybrid += _variants(second, unnamed_weight=[0.0, 0.5, 1.5], list_spread=[0.0, 0.3, 1.0],
                        neighbour=[0.1, 0.3], speaker=[1.0], mmr_lambda=[0.85],
                        session_weight=[0.5])
    hybrid += [RecallParams(**{**second, "neighbour": n, "speaker": 1.0}) for n in (0.1, 0.3)]
    # Issue 16's third round: each candidate scored by its best sentence (a list of its own),
    # around the shipped point of the second round.
    third = {**second, "neighbour": 0.1, "sentence_weight": 0.5}
    hybrid += _variants(third, sentence_weight=[1.0], sentence_pool=[40], list_spread=[1.0])
    hybrid += fourth
    single = [START] + _variants(core, neighbour=[0.0, 0.2], speaker=[0.0, 2.0], session_weight=[0.5])
    wiki = [RecallParams(**{**OFF, "aliases": True})] + _variants(core, speaker=[0.0, 2.0], neighbour=[0.0])
    wiki += _variants({**core, "unnamed_weight": 1.0}, list_spread=[0.5])
    wiki += _variants(shipped, session_reserve=[2], date_weight=[1.0])
    return {"bm25": single, "dense": single, "hybrid": list(dict.fromkeys(hybrid)),
            "hybrid+wiki": wiki}


ARM_MODES = {"bm25": "sparse", "dense": "dense", "hybrid": "hybrid", "hybrid+wiki": "hybrid"}


# --------------------------------------------------------------------------- selection

def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall overall and per category, passage size and latency, of per-question rows."""
    def mean(key: str, rs: list[dict[str, Any]]) -> float:
        return round(sum(r[key] for r in rs) / len(rs), 4) if rs else 0.0

    def pct(q: float) -> float:
        ms = sorted(r["ms"] for r in rows)
        return round(ms[min(len(ms) - 1, int(q * len(ms)))], 1) if ms else 0.0

    out: dict[str, Any] = {"questions": len(rows),
                           "turn": {f"recall@{k}": mean(f"turn@{k}", rows) for k in KS},
                           "session": {f"recall@{k}": mean(f"session@{k}", rows) for k in KS},
                           "tokens@10": round(mean("tokens@10", rows), 1),
                           "ms_p50": pct(0.5), "ms_p95": pct(0.95), "by_category": {}}
    for c, name in CATEGORIES.items():
        rs = [r for r in rows if r["category"] == c]
        if rs:
            out["by_category"][str(c)] = {
                "name": name, "questions": len(rs),
                "turn": {f"recall@{k}": mean(f"turn@{k}", rs) for k in KS},
                "session": {f"recall@{k}": mean(f"session@{k}", rs) for k in KS}}
    return out


#: What a fold maximises: the mean of turn and session recall@10, the issue's two
#: targets. (Turn recall@10 alone picks session-first points that concentrate the top 10
#: in fewer sessions: the same turn recall on dev, 0.04 less session recall.)
CRITERION = ("turn@10", "session@10")


def cross_validate(runs: dict[str, list[dict[str, Any]]],
                   metric: str | tuple[str, ...] = CRITERION) -> dict[str, Any]:
    """Leave-one-conversation-out over the grid points ``runs`` (label → per-question rows,
    the same questions in the same order for every label): per fold the label with the best
    mean ``metric`` (or mean of several) on the other conversations (ties: the earlier,
    simpler grid point)."""
    metrics = (metric,) if isinstance(metric, str) else tuple(metric)
    labels = list(runs)
    convs = list(dict.fromkeys(r["conversation"] for r in runs[labels[0]]))

    def score(label: str, keep: Any) -> float:
        rs = [r for r in runs[label] if keep(r["conversation"])]
        return sum(r[m] for r in rs for m in metrics) / max(1, len(rs) * len(metrics))

    folds: dict[str, str] = {}
    held_rows: list[dict[str, Any]] = []
    for held in convs:
        best = max(labels, key=lambda lab: (score(lab, lambda c: c != held), -labels.index(lab)))
        folds[held] = best
        held_rows += [r for r in runs[best] if r["conversation"] == held]
    tuned = max(labels, key=lambda lab: (score(lab, lambda c: True), -labels.index(lab)))
    return {"folds": folds, "cv": summarize(held_rows), "tuned": tuned,
            "tuned_all": summarize(runs[tuned]), "grid_points": len(labels),
            "criterion": " + ".join(metrics)}


# --------------------------------------------------------------------------- report

def _cells(e: dict[str, Any]) -> str:
    return (" | ".join(f"{e['turn'][f'recall@{k}']:.3f}" for k in KS) + " | "
            + " | ".join(f"{e['session'][f'recall@{k}']:.3f}" for k in KS))


def _turn_only_note(arms: dict[str, Any]) -> str:
    """What choosing on turn recall alone does to the hybrid arm, from this run's figures."""
    h = arms.get("hybrid")
    alt = (h or {}).get("turn_only")
    if not alt or alt["tuned"] == h["tuned"]:
        return ""
    return (f": for hybrid, tuned on all, `{alt['tuned']}` — turn / session R@10 "
            f"{alt['tuned_all']['turn']['recall@10']:.3f} / "
            f"{alt['tuned_all']['session']['recall@10']:.3f} against "
            f"{h['tuned_all']['turn']['recall@10']:.3f} / "
            f"{h['tuned_all']['session']['recall@10']:.3f} for the point chosen on both")


def render(res: dict[str, Any], cmd: str) -> str:
    arms = res["arms"]
    head = ("| retriever | figure | " + " | ".join(f"turn R@{k}" for k in KS) + " | "
            + " | ".join(f"session R@{k}" for k in KS) + " | tokens@10 | ms p50 | ms p95 |")
    lines = [
        "# LoCoMo evidence recall — brainfs recall, cross-validated",
        "",
        f"Data: `{res['data']}` (LoCoMo development split: {res['conversations']} conversations), "
        f"{res['questions']} questions of categories 1–4 ({res['skipped_questions']} skipped: no valid "
        f"evidence id). Embedder: {res['embedder']}. One index per conversation (index format "
        f"{res['index_format']}: relative dates resolved into the turns).",
        f"Generated {res['generated']} on {res['machine']}; evaluation {res['eval_seconds']:.0f} s.",
        "",
        "Turn recall@k: share of a question's gold evidence turns among the top-k passages "
        "(LoCoMo's retrieval metric); session recall@k: share of the gold evidence's sessions hit. "
        "**cross-validated** = leave-one-conversation-out: each conversation scored with the grid "
        "point that was best on the other four (mean of turn and session R@10) — the figure to "
        "expect on unseen data. "
        "**tuned on all** = the grid point best on all five (optimistic). ms = time of one "
        "recall in-process, warm model and index (p50 / p95 over all questions).",
        "",
        head, "|---" * 11 + "|",
    ]
    for arm, a in arms.items():
        cv, ta = a["cv"], a["tuned_all"]
        lines.append(f"| **{arm}** | **cross-validated** | {_cells(cv)} | {cv['tokens@10']:.0f} | "
                     f"{cv['ms_p50']} | {cv['ms_p95']} |")
        lines.append(f"| {arm} | tuned on all | {_cells(ta)} | {ta['tokens@10']:.0f} | "
                     f"{ta['ms_p50']} | {ta['ms_p95']} |")
    for arm, a in arms.items():
        alt = a.get("turn_only")
        if alt and alt["tuned"] != a["tuned"]:
            lines.append(f"| {arm} | cross-validated, chosen on turn R@10 alone | {_cells(alt['cv'])} | "
                         f"{alt['cv']['tokens@10']:.0f} | {alt['cv']['ms_p50']} | {alt['cv']['ms_p95']} |")
    if "start" in res:
        st = res["start"]
        lines.append(f"| hybrid | issue 16's start (k=10, no stage) | {_cells(st)} | "
                     f"{st['tokens@10']:.0f} | {st['ms_p50']} | {st['ms_p95']} |")
    lines += ["", "## By category, cross-validated (turn R@5 / @10 / @20; session R@10)", "",
              "| retriever | " + " | ".join(f"{c} {n}" for c, n in CATEGORIES.items()) + " |",
              "|---" * (1 + len(CATEGORIES)) + "|"]
    for arm, a in arms.items():
        cells = []
        for c in CATEGORIES:
            b = a["cv"]["by_category"].get(str(c))
            cells.append((" / ".join(f"{b['turn'][f'recall@{k}']:.3f}" for k in KS)
                          + f"; {b['session']['recall@10']:.3f} ({b['questions']})") if b else "–")
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    lines += ["", "## By category, tuned on all (turn R@10)", "",
              "| retriever | " + " | ".join(f"{c} {n}" for c, n in CATEGORIES.items()) + " |",
              "|---" * (1 + len(CATEGORIES)) + "|"]
    for arm, a in arms.items():
        cells = [f"{a['tuned_all']['by_category'][str(c)]['turn']['recall@10']:.3f}"
                 if str(c) in a["tuned_all"]["by_category"] else "–" for c in CATEGORIES]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    lines += ["", "## What each fold chose", "",
              "A grid point is named by the `RecallParams` fields that differ from issue 16's "
              "start (`(same)` = the start itself: RRF k = 10, every stage off). The shipped "
              f"defaults: `{DEFAULT_PARAMS.label(START)}`.", ""]
    for arm, a in arms.items():
        lines.append(f"- **{arm}** ({a['grid_points']} grid points): tuned on all → `{a['tuned']}`; "
                     + "; ".join(f"held out {c} → `{lab}`" for c, lab in a["folds"].items()))
    lines += ["", "## How far to trust the cross-validated figure", "",
              "- The grid is fixed in the code before folds are scored, but which stages and "
              "values it holds came from exploratory runs on all five dev conversations "
              "(speaker and neighbours helped there; question splitting, feedback, per-file "
              "caps and file-level session ranking did not; in a second round the question "
              "without the people it names and a list question spread over sessions did, "
              "and MMR over vectors, per-session MMR for every question and a reserved tail "
              "of new sessions traded more turn recall than they gave session recall; in a "
              "third round a candidate ranked by its best sentence did, a little, while "
              "session-level rankings — whole-session BM25, the session's mean vector, its "
              "sentences' best cosines, a logistic combination of these with the turns' "
              "scores, a recency-free score — found no more gold sessions in their top 8 or "
              "10 than the sum of a session's best turns, and a window of neighbouring turns' "
              "vectors, a keywords-only query vector and boosting only the question's "
              "subject among two named people moved nothing; in a fourth round a list "
              "question's last places of every ten reserved for new sessions and a named "
              "day or month lifting the turns said then did, while a second pass of "
              "turns like the best three (their vectors as queries) moved nothing). "
              "So the cross-validated figure "
              "is honest about the *choice within the grid*, not about the grid itself: "
              "expect unseen conversations a little lower.",
              "- The folds maximise the mean of turn and session recall@10 (the issue's two "
              "targets). Maximising turn recall@10 alone gives the 'chosen on turn R@10 "
              "alone' rows" + _turn_only_note(arms) + ".",
              *([f"- The shipped defaults are not the hybrid arm's choice (`{arms['hybrid']['tuned']}`): "
                 "the best-sentence stage embeds sentences at query time, which costs more time "
                 "per new question than the issue allows through a mount (see 'Recall time' "
                 "below); its figures above are what `sentence_weight` 1.0 gives."]
                if "hybrid" in arms and "sentence_weight" in arms["hybrid"]["tuned"]
                and "sentence_weight" not in DEFAULT_PARAMS.label(START) else []),
              "- `aliases` changes nothing in the transcript-only arms: aliases come from "
              "wiki pages, which only the hybrid+wiki arm has.",
              "- Latency is in-process on a machine shared with other jobs (the load average "
              "above), so compare rows of one run, not runs. hybrid+wiki's time is the "
              "evaluation's two searches (transcripts and wiki, each 3k deep), not a mount's."]
    ib = res.get("index_build")
    if ib:
        h, f = ib["hybrid"], ib["fts_only"]
        lines += ["", "## Index build (the whole split as one memory tree)", "",
                  f"{ib['files']} transcript files, {h['chunks']} chunks (turns), "
                  f"{ib['bytes_of_text'] / 1e6:.2f} MB of text.", "",
                  "| build | chunks/s | seconds | index size | bytes/chunk | MB per 1,000 files | no-op refresh |",
                  "|---|---|---|---|---|---|---|",
                  f"| FTS5 + MiniLM vectors | {h['chunks_per_s']:.0f} | {h['seconds']:.1f} | "
                  f"{h['bytes'] / 1e6:.1f} MB | {h['bytes_per_chunk']} | {h['mb_per_1000_files']} | "
                  f"{h['noop_refresh_seconds'] * 1000:.0f} ms |",
                  f"| FTS5 only | {f['chunks_per_s']:.0f} | {f['seconds']:.2f} | "
                  f"{f['bytes'] / 1e6:.1f} MB | {f['bytes_per_chunk']} | {f['mb_per_1000_files']} | "
                  f"{f['noop_refresh_seconds'] * 1000:.0f} ms |"]
    db = res.get("dense_bench")
    if db:
        lines += ["", f"## Dense search over {db['vectors']:,} × {db['dim']}-d vectors (top-50)", "",
                  "| backend | ms/query | first query |", "|---|---|---|",
                  f"| sqlite-vec vec0 KNN | {db['vec0']['ms_per_query']} | {db['vec0']['first_query_ms']} ms |",
                  f"| numpy brute force | {db['numpy']['ms_per_query']} | {db['numpy']['first_query_ms']} ms |"]
    lat = res.get("latency")
    if lat:
        lines += ["", "## Recall time with the model itself (no evaluation cache)", "",
                  f"In-process, warm model and index, the first {lat['questions_per_conversation']} "
                  "questions of each conversation, k = 20; *cold* = the sentence memo and the "
                  "per-user vector cache empty, so every sentence the stage needs is embedded "
                  "then; *warm* = the same questions again with both filled. The question "
                  "itself is embedded every time.", "",
                  "| point | cold p50 | cold p95 | warm p50 | warm p95 |", "|---|---|---|---|---|"]
        for name, r in lat["points"].items():
            lines.append(f"| {name} (`{r['label']}`) | {r['cold']['p50']} ms | {r['cold']['p95']} ms | "
                         f"{r['warm']['p50']} ms | {r['warm']['p95']} ms |")
        if lat.get("machine"):
            lines += ["", f"Measured {lat.get('generated', '')} on {lat['machine']}"
                      + (f", by `{lat['command']}`" if lat.get("command") else "") + "."]
        for m in lat.get("mount", []):
            lines += ["", f"Through a mount ({m['what']}): median recall → all files read "
                      f"{m['off_ms']} ms with the stage off, {m['on_ms']} ms with it on "
                      f"(embedding {m['off_embed_ms']} → {m['on_embed_ms']} ms), by `{m['command']}` "
                      f"({m['when']})."]
    lines += ["", "Reproduce:", "", "```", cmd, "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = dev_split()
    ap.add_argument("--data", type=Path, default=default,
                    help=f"LoCoMo-format JSON file (default: ${ENV_DIR}/locomo-dev.json)")
    ap.add_argument("--out", type=Path, default=OUT, help="directory for locomo.md / locomo.json")
    ap.add_argument("--arms", default="bm25,dense,hybrid,hybrid+wiki",
                    help="comma-separated arms to evaluate")
    ap.add_argument("--grid", choices=("full", "small", "reserve"), default="full")
    ap.add_argument("--conversations", type=int, default=None, help="first N conversations only")
    ap.add_argument("--questions", type=int, default=None, help="first N questions per conversation")
    ap.add_argument("--embed-cache", type=Path, default=None,
                    help="an .npz file (outside the repo) keeping turn and question embeddings")
    ap.add_argument("--no-build", action="store_true", help="skip the index build measurement")
    ap.add_argument("--details", type=Path, default=None,
                    help="write every grid point's per-question results to this JSON file "
                         "(large; keep it outside the repo)")
    ap.add_argument("--dense-bench", type=int, default=0, metavar="N",
                    help="also time dense search over N random vectors (e.g. 100000)")
    ap.add_argument("--latency", type=int, default=0, metavar="N",
                    help="also time recall with the model itself (no vector cache) for the "
                         "shipped defaults and the hybrid arm's chosen point, over the first N "
                         "questions of each conversation, sentence memo cold then warm")
    args = ap.parse_args(argv)
    if args.data is None:
        print(f"error: no LoCoMo data: set {ENV_DIR} to the directory holding locomo-dev.json, "
              "or pass --data FILE", file=sys.stderr)
        return 2
    if not args.data.is_file():
        print(f"error: {args.data}: no such file", file=sys.stderr)
        return 2
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARM_MODES]
    if unknown:
        print(f"error: unknown arm(s) {unknown}; use {', '.join(ARM_MODES)}", file=sys.stderr)
        return 2
    tty = sys.stderr.isatty()
    model = load_embedder()
    embedder: Any = EmbeddingCache(model, args.embed_cache) if args.embed_cache else _QueryCache(model)
    grid = grids(args.grid)
    factories: dict[str, Any] = {}
    labels: dict[str, dict[str, str]] = {}
    if "hybrid+wiki" in arms:
        try:
            from brainfs.tools.locomo_wiki import build_wiki
        except Exception as e:  # noqa: BLE001 - dream missing or broken: report without it
            print(f"hybrid+wiki skipped: {e}", file=sys.stderr)
            arms.remove("hybrid+wiki")
        else:
            built: dict[str, dict[str, str]] = {}

            def wiki_once(tree: dict[str, str]) -> dict[str, str]:
                # one dream run per conversation, shared by every grid point of the arm
                key = _content_hash("\n".join(sorted(tree)) + str(len(tree)))
                if key not in built:
                    built[key] = build_wiki(tree)
                return built[key]
    for arm in arms:
        labels[arm] = {}
        for i, params in enumerate(grid[arm]):
            name = f"{arm} #{i}"
            labels[arm][name] = params.label(START)
            if arm == "hybrid+wiki":
                factories[name] = wiki_retriever(wiki_once, params=params)
            else:
                factories[name] = index_retriever(ARM_MODES[arm], params=params)
    t = time.perf_counter()
    ev = evaluate(args.data, limit_conversations=args.conversations,
                  limit_questions=args.questions, retrievers=(), embedder=embedder,
                  progress=tty, extra_retrievers=factories, per_question=True)
    if isinstance(embedder, EmbeddingCache):
        embedder.save()
    res: dict[str, Any] = {
        "data": args.data.name, "conversations": ev["conversations"], "questions": ev["questions"],
        "skipped_questions": ev["skipped_questions"], "embedder": model.name,
        "index_format": __import__("brainfs.cache.search.indexschema", fromlist=["x"]).SCHEMA_VERSION,
        "eval_seconds": round(time.perf_counter() - t, 1),
        "generated": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": (f"{platform.machine()}, {os.cpu_count()} CPUs, load avg "
                    f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}"),
        "arms": {}, "grid": {arm: list(lab.values()) for arm, lab in labels.items()}}
    details: dict[str, Any] = {}
    for arm in arms:
        runs = {labels[arm][n]: ev["retrievers"][n]["questions_detail"] for n in labels[arm]}
        res["arms"][arm] = cross_validate(runs)
        # the other criterion, for comparison: turn recall@10 alone
        alt = cross_validate(runs, "turn@10")
        res["arms"][arm]["turn_only"] = {"tuned": alt["tuned"], "cv": alt["cv"],
                                         "tuned_all": alt["tuned_all"]}
        details[arm] = runs
        if arm == "hybrid" and START.label(START) in runs:
            res["start"] = summarize(runs[START.label(START)])
    if args.details:
        args.details.write_text(json.dumps(details) + "\n", encoding="utf-8")
    if not args.no_build:
        res["index_build"] = build_benchmark(args.data, model)
    if args.dense_bench:
        res["dense_bench"] = dense_bench(args.dense_bench)
    if args.latency:
        points = {"shipped defaults, best sentence off": replace(DEFAULT_PARAMS, sentence_weight=0.0),
                  "shipped defaults, best sentence on": replace(DEFAULT_PARAMS, sentence_weight=1.0)}
        if "hybrid" in res["arms"]:
            chosen = dict(zip(labels["hybrid"].values(), grid["hybrid"]))[res["arms"]["hybrid"]["tuned"]]
            if chosen not in points.values():
                points["hybrid, tuned on all"] = chosen
        res["latency"] = latency_check(args.data, model, embedder, points, args.latency)
        res["latency"]["machine"] = res["machine"]
        res["latency"]["generated"] = res["generated"]
    given = argv if argv is not None else sys.argv[1:]
    env = "" if "--data" in given else f"{ENV_DIR}={args.data.parent} "
    cmd = env + "python benchmarks/locomo_eval.py" + (" " + " ".join(given) if given else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "locomo.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    (args.out / "locomo.md").write_text(render(res, cmd), encoding="utf-8")
    print(render(res, cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
