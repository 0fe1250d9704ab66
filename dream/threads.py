"""Threads: the topics a page's facts return to across sessions ("camping" in May, July and
October), each mention a short, dated, cited fragment in the wiki's words.

A topic word is a content word that is rare in the whole wiki (in at most
``thread_max_share`` of all facts, so not "love" or "great") and not the subject's own name,
said in at least two sessions. Each mention is cut to ``thread_window_words`` words either
side of the topic, so one thread holds several sessions' mentions in the size of one
transcript turn: the cross-session view multi-hop and "when did …" questions need, which a
page's timeline (one line per turn) does not give at that size.

Hysteresis: a topic's score (sessions × idf) uses whole-wiki counts, so any new fact anywhere
nudges every score, and a page whose facts did not change would be rewritten for two
topics trading places. With the page's current topic order given (``previous``, its
``### topic`` headings as published), the page keeps that order for the topics still there;
a topic moves above another, or a new one enters a full page in place of the weakest, only
when its score beats the other's by :data:`MARGIN`. Without a previous order (a first
run, a new page) the order is the plain ranking.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from . import text
from .settings import Settings
from .synth import Claim

#: How much a topic's score must exceed another's to pass it (or to take a full page's last
#: place from it) when the page has an order already: one session more for a topic said in
#: four. Whole-wiki drift moves scores by a few percent per ten sessions (idf), which this
#: absorbs; a topic that really grows still rises.
MARGIN = 0.25
_THREADS_RE = re.compile(r"^## Threads[ \t]*$(.*?)(?=^## |\Z)", re.M | re.S)
_TOPIC_RE = re.compile(r"^### (\S+)[ \t]*$", re.M)


#: Words that are not what a thread is about, however rare: verbs and their forms,
#: adverbs and adjectives of everyday speech ("stands", "worth", "knowing"). A topic is a
#: thing talked of (a noun): "camping", "gauges", "datum". The model-free stand-in for a
#: part-of-speech check, which would tag every fact of the wiki on every run.
NOT_TOPICS = frozenset("""
stand stands standing stood know knows knowing knew known worth think thinks thinking thought
seem seems seemed seeming look looks looked looking find finds finding found try tries tried
trying mean means meant meaning tell tells telling told said says saying ask asks asked asking
need needs needed needing start starts started starting finish finishes finished finishing
leave leaves left leaving wait waits waited waiting hope hopes hoped hoping guess guessed
believe believes believed show shows showed shown showing turn turns turned turning
bring brings brought bringing become becomes became becoming happen happens happened happening
remember remembers remembered remembering forget forgets forgot forgotten talk talks talked
talking send sends sent sending keep keeps keeping hold holds held holding move moves moved
moving stay stays stayed staying change changes changed changing feel feeling seeing
getting going coming using used uses saying wanting trying putting letting setting
sound sounds sounded plan plans planned planning decide decides decided deciding
able sure ready busy whole real true truly important different possible likely hard easy
quick quickly fine better best worse worst same own early late enough less least really
actually basically probably definitely certainly maybe perhaps almost quite rather pretty
again already always often usually sometimes still soon later today tonight anyway else
instead otherwise though although however especially exactly simply clearly finally
recently currently nearly mostly mainly fully totally completely absolutely literally
honestly hopefully seriously lately properly directly easily slightly either neither
kind sort bit lot lots stuff things thing way ways part parts point points case cases
fact facts idea ideas reason reasons sense side sides end ends order number numbers
nice great good bad big small large long short high low full free open close closed
new old young last next first second third other another every each such much many
glad happy excited proud worried tired interesting amazing awesome wonderful lovely
""".split())


_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def lower_case_topics(fact_text: str) -> set[str]:
    """A fact's topic words (:func:`text.topic_words`) that it writes in lower case: a word
    written only capitalised is part of a name ("Lantern Books and Coffee", "Ramp Ledger",
    which have pages and links of their own) or opens a sentence ("Prepare the slides"),
    never a topic the page returns to."""
    written = set()
    for tok in _TOKEN_RE.findall(fact_text):
        if tok.islower():
            written.add(tok)
            written.add(re.sub(r"['’]s$", "", tok))
    return text.topic_words(fact_text) & written


def page_topics(page_text: str | None) -> list[str]:
    """The ``### topic`` headings of a page's ``## Threads`` section, in order."""
    if not page_text:
        return []
    m = _THREADS_RE.search(page_text)
    return _TOPIC_RE.findall(m.group(1)) if m else []


def ordered_topics(scores: dict[str, float], previous: Sequence[str], max_topics: int,
                   margin: float = MARGIN) -> list[str]:
    """The topics to show, in order: ``scores`` ranked (most first, ties by word) when there
    is no ``previous`` order; else that order for the topics still scored, each topic (kept
    ones first, then new ones by rank) placed after the last topic it does not beat by
    ``margin``, a new one entering a full list only by beating its weakest by ``margin``."""
    ranked = sorted(scores, key=lambda w: (-scores[w], w))
    kept = list(dict.fromkeys(w for w in previous if w in scores))
    if not kept:
        return ranked[:max_topics]
    out: list[str] = []

    def place(w: str) -> None:
        i = len(out)
        while i > 0 and scores[w] > (1 + margin) * scores[out[i - 1]]:
            i -= 1
        out.insert(i, w)

    for w in kept[:max_topics]:
        place(w)
    have = set(out)
    for w in ranked:
        if w in have:
            continue
        if len(out) >= max_topics:
            # the weakest shown topic (the lowest score; of equals, the one shown last)
            weakest = min(reversed(range(len(out))), key=lambda i: scores[out[i]])
            if not scores[w] > (1 + margin) * scores[out[weakest]]:
                continue
            del out[weakest]
        place(w)
    return out


def threads(by_slug: dict[str, list[dict]], slugs: list[str], titles: dict[str, str],
            facts: list[dict], retired: Callable[[dict, str], bool], statement: Callable[[dict], str],
            ref: Callable[[dict], str], settings: Settings,
            previous: Callable[[str], Sequence[str]] | None = None) -> dict[str, list[Claim]]:
    """Per page slug, its thread claims (section "Threads", ``group`` = the topic word).
    ``retired(fact, slug)``: a fact that no longer holds there (a thread follows what is
    still true); ``statement(fact)``: the fact in the wiki's words; ``previous(slug)``: the
    page's topics as published, in order (see the module docstring), or none."""
    max_topics = settings.thread_max_topics
    max_mentions = settings.thread_max_mentions
    window = settings.thread_window_words
    share = settings.thread_max_share
    df: Counter = Counter()
    words: dict[int, set[str]] = {}  # id(fact) → its topic words (a fact is on several pages)
    for f in facts:
        words[id(f)] = lower_case_topics(f["text"])
        df.update(words[id(f)])
    said: dict[int, str] = {}  # id(fact) → the fact in the wiki's words (several topics say it)

    def say(f: dict) -> str:
        if id(f) not in said:
            said[id(f)] = statement(f)
        return said[id(f)]

    limit = max(3, share * len(facts))
    out: dict[str, list[Claim]] = {}
    for slug in slugs:
        own = set(text.content_words(titles[slug]))
        shown = list(previous(slug)) if previous is not None else []
        shown_set = set(shown)
        topics: dict[str, list[dict]] = defaultdict(list)
        for f in by_slug.get(slug, []):
            if retired(f, slug):
                continue
            tw = words.get(id(f))
            for w in (tw if tw is not None else lower_case_topics(f["text"])) - own - NOT_TOPICS:
                # a shown topic stays while its share is within the margin of the limit
                if df[w] <= limit or w in shown_set and df[w] <= (1 + MARGIN) * limit:
                    topics[w].append(f)
        # most sessions first, weighted by rarity (idf): "camping" in 7 sessions before "make" in 8
        scores = {w: n * math.log(1 + len(facts) / df[w]) for w, fs in topics.items()
                  if (n := len({f["session"] for f in fs})) >= 2}
        ordered = ordered_topics(scores, shown, max_topics)
        claims: list[Claim] = []
        for w in ordered:
            for f in topics[w][-max_mentions:]:
                claims.append(Claim(text.fragment(say(f), w, window), ref(f), f["date"],
                                    "Threads", group=w))
        if claims:
            out[slug] = claims
    return out
