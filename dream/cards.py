"""Cards from sessions: what the user prefers and the standing rules they set become memory
cards in ``notes/learned/`` without anyone writing them (the Perch seed's learning from
corrections).

* A **preference** (an attribute of the user's page: ``preference``, ``format``, a favourite)
  is one card per value: "Ines Okafor prefers afternoon meetings." Said again, the same card
  gains confidence (0.6, +0.1 per repetition, at most 0.95) instead of a new card; replaced
  by another value, the older card gets ``superseded_by`` (confidence 0.3) and the newer
  ``supersedes`` it — which ``brainfs context`` reads to skip the older one.
* A **standing rule** is a user's sentence that starts "Always …", "Never …", "From now on
  …", "Going forward …" (a request for every future turn, not one task): one card per rule,
  text as said, type ``rule``.

Cards are derived from the sessions on every run (deterministic, so an unchanged memory
gives the same bytes); their ``source`` is the turn that first said it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from brainfs.cache.layout import LEARNED_DIR

from .facts import stays as replay
from .prose import OPENERS
from .synth import frontmatter
from .text import content_words, slugify, words
_RULE_RE = re.compile(r"^(?:please\s+)?(?:always|never|from now on|going forward|in future|"
                      r"by default|as a rule)\b[\s,]*(?P<rest>.+)$", re.I)


def is_rule(sentence: str) -> bool:
    """A standing rule ("Always cite sources.", "From now on, export charts as SVG.")."""
    m = _RULE_RE.match(OPENERS.sub("", sentence.strip()))
    return bool(m) and len(words(m.group("rest"))) >= 2 and not sentence.rstrip().endswith("?")


def _confidence(n: int) -> float:
    return round(min(0.95, 0.6 + 0.1 * (n - 1)), 2)


def _card(meta: dict, body: str) -> str:
    return frontmatter(meta) + "\n" + body.strip() + "\n"


def preference_cards(groups: dict[tuple, list], user_slug: str | None, user_title: str,
                     now_text: Callable, ref: Callable[[dict], str],
                     stays_of: Callable[[tuple], list] | None = None) -> dict[str, str]:
    """Cards for the user's preference groups (``pages.group_statements`` output), one per
    stay of a value (:func:`.facts.stays`, the replay the fact records come from):
    ``stays_of(group key)`` gives a group's stays as the records were made from them
    (default: replayed here). A stay that a correction started has its card in
    ``notes/corrections/``; its restatements in sessions make a learned card of their own."""
    out: dict[str, str] = {}
    if not user_slug:
        return out
    for gkey, group in sorted(groups.items()):
        subj, attr, key = gkey
        if subj != user_slug or attr not in ("preference", "format"):
            continue
        got = (stays_of(gkey) if stays_of is not None else None) or replay(group, key)
        runs = [[st for st in stay.said if st.fact.get("session") and st.op == "set"] for stay in got]
        paths = [f"{LEARNED_DIR}{slugify(key or attr)[:40]}-{slugify(r[0].value)[:40]}.md"
                 if r else None for r in runs]
        for i, (stay, run) in enumerate(zip(got, runs)):
            if not run:
                continue  # a correction's value: its card is the correction's
            ended = stay.ended_by is not None
            meta = {"type": "preference", "scope": "global",
                    "confidence": 0.3 if ended else _confidence(len(run)),
                    "created": run[0].fact.get("date") or "", "updated": run[-1].fact.get("date") or "",
                    "subjects": [user_slug], "source": ref(run[0].fact),
                    "sources": list(dict.fromkeys(ref(st.fact) for st in run))}
            if i > 0 and paths[i - 1] and got[i - 1].ended_by is not None \
                    and got[i - 1].ended_by.fact.get("session"):
                meta["supersedes"] = paths[i - 1]
            if stay.record is not None:
                meta["record"] = stay.record.id
            # what replaced this value: a correction (its card), else the next value's card,
            # else the turn that ended it ("I've gone off Earl Grey")
            by = stay.ended_by
            if by is not None:
                nxt = paths[i + 1] if stay.next is not None and by.fact.get("session") \
                    and i + 1 < len(paths) and paths[i + 1] else ref(by.fact)
                meta.update(superseded_by=nxt, status="superseded", confidence=0.3,
                            updated=str(by.fact.get("date") or meta["updated"]))
            out[paths[i]] = _card(meta, now_text(run[0], user_title) + ".")
    return out


def rule_cards(rules: list[tuple[dict, str]], user_slug: str | None,
               ref: Callable[[dict], str]) -> dict[str, str]:
    """Cards for standing rules: (turn info, sentence) in date order; a rule said again
    raises the confidence of its card."""
    by_text: dict[str, list[tuple[dict, str]]] = {}
    for info, sent in rules:
        # the same rule said again, politely or not, is one card
        key = " ".join(w for w in content_words(sent) if w not in ("please", "again", "thanks"))
        by_text.setdefault(key, []).append((info, sent))
    out: dict[str, str] = {}
    for key, said in by_text.items():
        if not key:
            continue
        first = said[0][0]
        path = f"{LEARNED_DIR}rule-{slugify(key)[:60]}.md"
        meta = {"type": "rule", "scope": "global", "confidence": _confidence(len(said)),
                "created": first.get("date") or "", "updated": said[-1][0].get("date") or "",
                "subjects": [user_slug] if user_slug else [], "source": ref(first),
                "sources": list(dict.fromkeys(ref(i) for i, _s in said))}
        out[path] = _card(meta, said[0][1])
    return out
