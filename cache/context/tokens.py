"""Token counts of context items: the MiniLM word-piece counter (or a ``chars/4`` estimate
when the tokenizer is missing), memoised for long texts, and the cut of an item's text at
a word boundary to fit a number of tokens."""

from __future__ import annotations

import hashlib
import logging
from typing import Callable

from brainfs.cache.search.model import EmbedderUnavailable, token_counter
from brainfs.cache.search.cards import truncate
from brainfs.cache.search.text import estimate_tokens

from .window import ContextItem

# the name these warnings have always carried, so that a log filter on it still sees them
log = logging.getLogger("brainfs.cache.context.assembly")


_TOKEN_CACHE: dict[str, int] = {}
_TOKEN_CACHE_MAX = 8192


def _cached(count: Callable[[list[str]], list[int]]) -> Callable[[list[str]], list[int]]:
    """Memoise counts of long texts by content hash: guides, rules and the index are the
    same on every turn and the index of a large memory is hundreds of KB."""

    def counted(texts: list[str]) -> list[int]:
        keys = [hashlib.sha1(t.encode("utf-8", "replace")).hexdigest() if len(t) > 2000 else None
                for t in texts]
        todo = [i for i, k in enumerate(keys) if k is None or k not in _TOKEN_CACHE]
        got = dict(zip(todo, count([texts[i] for i in todo]))) if todo else {}
        out = []
        for i, k in enumerate(keys):
            if i in got:
                n = got[i]
                if k is not None:
                    if len(_TOKEN_CACHE) >= _TOKEN_CACHE_MAX:
                        _TOKEN_CACHE.clear()
                    _TOKEN_CACHE[k] = n
            else:
                n = _TOKEN_CACHE[k]  # type: ignore[index]
            out.append(n)
        return out

    return counted


def _counter() -> tuple[Callable[[list[str]], list[int]], str]:
    """The token counter and its name (MiniLM word pieces, or a chars/4 estimate)."""
    count, name = _raw_counter()
    return _cached(count), name


def _raw_counter() -> tuple[Callable[[list[str]], list[int]], str]:
    try:
        return token_counter(), "all-MiniLM-L6-v2 word pieces"
    except EmbedderUnavailable as e:
        log.warning("tokenizer unavailable (%s); estimating tokens as chars/4", e)
    except Exception as e:  # noqa: BLE001 - any broken tokenizer install: fall back, do not fail the turn
        log.warning("tokenizer unavailable (%s); estimating tokens as chars/4", e)
    return (lambda texts: [max(1, estimate_tokens(t)) for t in texts]), "estimate (chars/4)"


def _fit(item: ContextItem, limit: int, count: Callable[[list[str]], list[int]]) -> int:
    """Cut ``item.text`` (at a word boundary) so the rendered item has at most ``limit``
    tokens; returns the new token count, or 0 if nothing useful fits."""
    full = item.text
    item.status = "truncated"  # the header says so; count it in
    # Search near the cut the item's own chars-per-token ratio predicts, widening only if
    # needed: a 200 KB index is then tokenized a few times in 10 KB pieces, not 18 times whole.
    ratio = len(full) / max(1, item.full_tokens or item.tokens or 1)
    guess = int(limit * ratio)
    lo, hi, best = 1, len(full), None
    for f in (0.8, 0.6, 0.3):
        probe = int(guess * f)
        if probe < 1 or probe >= len(full):
            continue
        item.text = truncate(full, probe)[0]
        n = count([item.rendered()])[0]
        if n <= limit:
            lo, best = probe + 1, (probe, n)
            break
    for f in (1.2, 1.5, 2.5):
        probe = int(guess * f) + 1
        if probe >= len(full):
            break
        item.text = truncate(full, probe)[0]
        if count([item.rendered()])[0] > limit:
            hi = probe
            break
    while lo <= hi:
        mid = (lo + hi) // 2
        cut, _ = truncate(full, mid)
        item.text = cut
        n = count([item.rendered()])[0]
        if n <= limit:
            best = (mid, n)
            lo = mid + 1
        else:
            hi = mid - 1
    if best is None:
        item.text = full
        return 0
    item.text = truncate(full, best[0])[0]
    return best[1]


def _count_tokens(items: list[ContextItem], count: Callable[[list[str]], list[int]]) -> None:
    """Every item's rendered size (pending items in one batch)."""
    pending = [i for i in items if i.status == ""]
    for i, n in zip(pending, count([i.rendered() for i in pending])):
        i.tokens = i.full_tokens = n
    for i in items:
        if i.status == "skipped" and not i.tokens:
            i.tokens = i.full_tokens = count([i.rendered()])[0]
