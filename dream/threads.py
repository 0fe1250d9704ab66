"""Threads: the topics a page's facts return to across sessions ("camping" in May, July and
October), each mention a short, dated, cited fragment in the wiki's words.

A topic word is a content word that is rare in the whole wiki (in at most
``thread_max_share`` of all facts, so not "love" or "great") and not the subject's own name,
said in at least two sessions. Each mention is cut to ``thread_window_words`` words either
side of the topic, so one thread holds several sessions' mentions in the size of one
transcript turn: the cross-session view multi-hop and "when did …" questions need, which a
page's timeline (one line per turn) does not give at that size.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable

from . import text as T
from .settings import Settings
from .synth import Claim


def threads(by_slug: dict[str, list[dict]], slugs: list[str], titles: dict[str, str],
            facts: list[dict], retired: Callable[[dict, str], bool], statement: Callable[[dict], str],
            ref: Callable[[dict], str], settings: Settings) -> dict[str, list[Claim]]:
    """Per page slug, its thread claims (section "Threads", ``group`` = the topic word).
    ``retired(fact, slug)``: a fact that no longer holds there (a thread follows what is
    still true); ``statement(fact)``: the fact in the wiki's words."""
    max_topics = settings.thread_max_topics
    max_mentions = settings.thread_max_mentions
    window = settings.thread_window_words
    share = settings.thread_max_share
    df: Counter = Counter()
    for f in facts:
        df.update(T.topic_words(f["text"]))
    limit = max(3, share * len(facts))
    out: dict[str, list[Claim]] = {}
    for slug in slugs:
        own = set(T.content_words(titles[slug]))
        topics: dict[str, list[dict]] = defaultdict(list)
        for f in by_slug.get(slug, []):
            if retired(f, slug):
                continue
            for w in T.topic_words(f["text"]) - own:
                if df[w] <= limit:
                    topics[w].append(f)
        # most sessions first, weighted by rarity (idf): "camping" in 7 sessions before "make" in 8
        ranked = sorted(((w, fs) for w, fs in topics.items() if len({f["session"] for f in fs}) >= 2),
                        key=lambda kv: (-len({f["session"] for f in kv[1]})
                                        * math.log(1 + len(facts) / df[kv[0]]), kv[0]))
        claims: list[Claim] = []
        for w, fs in ranked[:max_topics]:
            for f in fs[-max_mentions:]:
                claims.append(Claim(T.fragment(statement(f), w, window), ref(f), f["date"],
                                    "Threads", group=w))
        if claims:
            out[slug] = claims
    return out
