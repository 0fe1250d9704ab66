"""The stages of recall after fusion: neighbour support, session-first ranking and
diversification. Pure functions over scores (chunk id → fused score), so each stage is
tested alone and can be switched off (weight 0) or be missing without breaking recall.

* **Neighbours** (:func:`propagate_neighbours`): in a conversation the turn that holds the
  answer often follows the turn that matches the question's words ("Where did you go?" —
  "To Sapporo"). A turn takes a share of its neighbours' scores.
* **Session first** (:func:`session_prior`): a session whose several turns match is more
  likely the one the question is about than a session with one stray match. A session's
  score is the sum of its best turns' scores; sessions are ranked by it, a turn gains
  ``weight / (k + session rank)`` (the same reciprocal-rank form as the fusion, so the
  scales agree), and with a gate only the turns of the best sessions stay. Or, for the
  tail of a list question (:func:`session_reserve`): the last places of every ten go to
  the best-scored sessions the list does not hold yet.
* **Dates** (:func:`date_prior`): a question naming a day or a month lifts the chunks dated
  in it.
* **Diversification** (:func:`mmr`, :func:`session_cap`): maximal marginal relevance
  (Carbonell & Goldstein 1998) over the chunks' vectors, or at most N chunks per file in
  the top k, so that one session does not fill the list a multi-hop question needs spread;
  or, for a question gathering facts, a penalty per turn already taken from a session
  (:func:`session_spread`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np


def propagate_neighbours(scores: dict[int, float], neighbours: dict[int, list[int]],
                         weight: float) -> dict[int, float]:
    """score'(c) = score(c) + weight · max(score(n) for n next to c). Chunks that only
    appear as neighbours enter with their share. Scores of the input are not changed."""
    if weight <= 0:
        return dict(scores)
    out = dict(scores)
    for cid, base in scores.items():
        for n in neighbours.get(cid, ()):
            gain = weight * base
            if gain > out.get(n, 0.0) - scores.get(n, 0.0):
                out[n] = scores.get(n, 0.0) + gain
    return out


_SESSION_FILE_RE = re.compile(r"^(.*(?:^|/)sessions/[^/]+)/(?:transcript|summary)\.md$")


def session_key(path: str) -> str:
    """What a chunk's file counts as for session-first ranking: a session's transcript and
    the summary dream writes beside it are one session (``sessions/<id>``), so a summary
    that matches lifts its transcript's turns; any other file is itself."""
    m = _SESSION_FILE_RE.match(path)
    return m.group(1) if m else path


def session_scores(scores: dict[int, float], paths: dict[int, str], top: int) -> dict[str, float]:
    """A session's score (see :func:`session_key`): the sum of its ``top`` best chunk
    scores."""
    per: dict[str, list[float]] = {}
    for cid, s in scores.items():
        p = paths.get(cid)
        if p is not None:
            per.setdefault(session_key(p), []).append(s)
    return {p: sum(sorted(v, reverse=True)[:max(1, top)]) for p, v in per.items()}


def session_prior(scores: dict[int, float], paths: dict[int, str], weight: float, top: int,
                  k: int, gate: int = 0,
                  file_lists: dict[str, list[str]] | None = None) -> dict[int, float]:
    """score'(c) = score(c) + weight / (k + rank of c's file by :func:`session_scores`);
    with ``gate`` > 0 only chunks of the ``gate`` best files are kept. ``file_lists``
    (ranked paths from file-level searches) are fused with that ranking by reciprocal
    rank first."""
    if weight <= 0 and gate <= 0:
        return dict(scores)
    ss = session_scores(scores, paths, top)
    order = sorted(ss, key=lambda p: (-ss[p], p))
    if file_lists:
        fused: dict[str, float] = {}
        for lst in [order, *([session_key(p) for p in fl] for fl in file_lists.values())]:
            for r, p in enumerate(dict.fromkeys(lst), 1):
                fused[p] = fused.get(p, 0.0) + 1.0 / (k + r)
        order = sorted(fused, key=lambda p: (-fused[p], p))
    rank = {p: r for r, p in enumerate(order, 1)}
    out: dict[int, float] = {}
    for cid, s in scores.items():
        r = rank.get(session_key(paths.get(cid, "")), len(order) + 1)
        if gate > 0 and r > gate:
            continue
        out[cid] = s + (weight / (k + r) if weight > 0 else 0.0)
    return out


def date_prior(scores: dict[int, float], days: dict[int, Any], period: Any,
               weight: float) -> dict[int, float]:
    """score'(c) = score(c) × (1 + weight) for a chunk dated (``days``: id → a
    ``datetime.date``) inside ``period`` (anything with ``contains(date)``, e.g.
    ``dates.Period``); the rest unchanged. A question that names a day ("what did she do
    on 7 July, 2023?") is about what was said that day: every turn of that session gains
    alike, so the session's turns take the places other sessions' turns held, and within
    it the ranking stays the fusion's. ``weight`` ≤ 0 or no period keeps ``scores``."""
    if weight <= 0 or period is None:
        return dict(scores)
    out = dict(scores)
    for c, s in scores.items():
        d = days.get(c)
        if d is not None and period.contains(d):
            out[c] = s * (1.0 + weight)
    return out


def mmr(order: list[int], scores: dict[int, float], vectors: dict[int, np.ndarray],
        lam: float, k: int) -> list[int]:
    """The first ``k`` of ``order`` re-picked by maximal marginal relevance: each pick
    maximises ``lam · rel(c) − (1 − lam) · max cos(c, picked)``, rel = score scaled to
    [0, 1] over the candidates. A chunk without a vector is never penalised. ``lam`` = 1
    keeps ``order``."""
    if lam >= 1 or k <= 1 or len(order) <= 1:
        return order[:k]
    import numpy as np

    cand = list(order)
    top = max(scores[c] for c in cand)
    low = min(scores[c] for c in cand)
    span = (top - low) or 1.0
    rel = {c: (scores[c] - low) / span for c in cand}
    picked: list[int] = []
    best_sim = {c: 0.0 for c in cand}
    while cand and len(picked) < k:
        c = max(cand, key=lambda x: (lam * rel[x] - (1 - lam) * best_sim[x], -order.index(x)))
        picked.append(c)
        cand.remove(c)
        v = vectors.get(c)
        if v is not None:
            for x in cand:
                w = vectors.get(x)
                if w is not None:
                    best_sim[x] = max(best_sim[x], float(np.dot(v, w)))
    return picked


def session_cap(order: list[int], paths: dict[int, str], cap: int, k: int) -> list[int]:
    """The first ``k`` of ``order`` with at most ``cap`` chunks per file; when that leaves
    fewer than ``k``, the skipped ones fill the rest in order. ``cap`` ≤ 0 keeps ``order``."""
    if cap <= 0:
        return order[:k]
    count: dict[str, int] = {}
    kept: list[int] = []
    skipped: list[int] = []
    for c in order:
        p = paths.get(c, "")
        if count.get(p, 0) < cap:
            kept.append(c)
            count[p] = count.get(p, 0) + 1
        else:
            skipped.append(c)
        if len(kept) == k:
            break
    return (kept + skipped)[:k]


def ranked(scores: dict[int, float], ids: Iterable[int] | None = None) -> list[int]:
    """Ids by score, best first; ties by id (deterministic)."""
    pool = scores if ids is None else {i: scores[i] for i in ids if i in scores}
    return sorted(pool, key=lambda c: (-pool[c], c))


def session_spread(order: list[int], scores: dict[int, float], paths: dict[int, str],
                   strength: float, k: int) -> list[int]:
    """The first ``k`` of ``order`` re-picked so that a list gathers several sessions: each
    pick maximises score(c) / (1 + strength · n), n = chunks already picked from c's
    session (:func:`session_key`). A question asking for things gathered over time
    ("what states has she visited") has its answers in different sessions, and session
    recall counts distinct sessions; unlike a hard cap, a much better second turn of one
    session still comes before a weak first turn of another. ``strength`` ≤ 0 keeps
    ``order``."""
    if strength <= 0 or k <= 1:
        return order[:k]
    cand = list(order)
    picked: list[int] = []
    count: dict[str, int] = {}
    while cand and len(picked) < k:
        best = max(range(len(cand)), key=lambda i: (
            scores.get(cand[i], 0.0) / (1.0 + strength * count.get(session_key(paths.get(cand[i], "")), 0)),
            -i))
        c = cand.pop(best)
        picked.append(c)
        key = session_key(paths.get(c, ""))
        count[key] = count.get(key, 0) + 1
    return picked


def session_reserve(order: list[int], scores: dict[int, float], paths: dict[int, str],
                    reserve: int, top: int, k: int, every: int = 10) -> list[int]:
    """The first ``k`` of ``order`` with the last ``reserve`` places of every ``every``
    given to sessions not yet in the list: session first, for the tail of a list.

    A session's score is the sum of its ``top`` best chunk scores over every candidate
    in ``scores`` (:func:`session_scores`), and a reserved place takes the best chunk of
    the best session that no earlier place holds; the other places take ``order``'s next
    chunk not yet picked. Why: a question gathering facts over time ("what activities
    does she do") has its evidence in several sessions, and a session whose few turns
    each match a little is often one the answer needs, while the head of the turn
    ranking is already spent on the best session's turns. The head of the list is left
    as ranked (the places before the reserved ones are ``order``'s), and the rule is the
    same for every prefix (a list of 20 begins with the list of 10). When every session
    is in the list already, a reserved place takes ``order``'s next chunk. ``reserve`` ≤ 0
    keeps ``order``."""
    if reserve <= 0 or every <= reserve or k <= 1:
        return order[:k]
    reserve = min(reserve, every - 1)
    ss = session_scores(scores, paths, top)
    sessions = sorted(ss, key=lambda s: (-ss[s], s))
    best: dict[str, int] = {}
    for c in ranked(scores):
        p = paths.get(c)
        if p is not None:
            best.setdefault(session_key(p), c)
    picked: list[int] = []
    taken: set[int] = set()
    held: set[str] = set()
    rest = iter(order)
    while len(picked) < k:
        c = None
        if len(picked) % every >= every - reserve:
            c = next((best[s] for s in sessions if s not in held and best[s] not in taken), None)
        if c is None:
            c = next((x for x in rest if x not in taken), None)
        if c is None:
            break
        picked.append(c)
        taken.add(c)
        if c in paths:
            held.add(session_key(paths[c]))
    return picked
