"""Admission: the pass that decides every item of a window in order — duplicate, weak,
superseded, stale, lane share, fit — then hands unused budget back in a backfill (the
rules and priority classes of :mod:`.assembly`'s docstring)."""

from __future__ import annotations

import hashlib
from typing import Callable

from brainfs.cache.search.staleness import changeable

from .guide import relevant_part
from .policy import CUT_MARK, CUT_TO_TASK, LANE_SHARE, MIN_TRUNCATED_TOKENS, TASK_LANES, TASK_MIN_ITEMS
from .tokens import _fit
from .window import ContextItem


def _text_key(text: str) -> str:
    return hashlib.sha1(" ".join(text.lower().split()).encode()).hexdigest()


def _article(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


class _Admission:
    """One admission pass over a window's items (rules in :mod:`.assembly`'s docstring):
    the running totals, what has been taken, and the items that wait for a backfill."""

    def __init__(self, avail: int, superseded_by: dict[str, str], drop_stale: bool,
                 stale_days: int, count: Callable[[list[str]], list[int]],
                 shares: dict[str, float] | None = None, task_floor: int = 0,
                 task: str = "", history: bool = False) -> None:
        self.avail, self.superseded_by = avail, superseded_by
        self.history = history  # a superseded card is kept, marked, rather than skipped
        self.shares = shares or LANE_SHARE
        self.task_floor, self.task = task_floor, task
        self.task_started = False  # a task lane's first item has been reached
        self.task_taken = 0        # task-lane items admitted in the first pass
        self.task_pending = 0      # task-lane candidates not decided yet
        self.stated: dict[str, ContextItem] = {}  # turn ref → the admitted claims item citing it
        self.drop_stale, self.stale_days, self.count = drop_stale, stale_days, count
        self.used = 0
        self.whole: dict[str, ContextItem] = {}   # path admitted whole → its item
        self.seen_ref: dict[str, ContextItem] = {}
        self.seen_text: dict[str, ContextItem] = {}
        self.deferred: list[ContextItem] = []     # skipped for lane share: candidates for backfill
        self.lane_start: dict[str, int] = {}
        self.lane_used: dict[str, int] = {}

    def run(self, items: list[ContextItem]) -> int:
        """Decide every item in order, then backfill; returns tokens used."""
        self.task_pending = sum(1 for it in items if it.lane in TASK_LANES
                                and it.status != "skipped" and not it.weak)
        # Strict rules first: they are never dropped for the guide's prose or anything else.
        order = ([it for it in items if it.kind == "rule"]
                 + [it for it in items if it.kind != "rule"])
        for it in order:
            if it.status == "skipped":
                continue
            task_item = it.lane in TASK_LANES
            if task_item:
                self.task_started = True
                self.task_pending -= 0 if it.weak else 1
            if it.lane not in self.lane_start:
                self.lane_start[it.lane] = self.avail - self.used
            if self._ruled_out(it) or self._waits_for_share(it):
                continue
            self._fit(it)
            if task_item and it.status != "skipped":
                self.task_taken += 1
        self._backfill()
        return self.used

    def _held_for_task(self, it: ContextItem) -> int:
        """Tokens an item before the task lanes (guide prose, index, pinned) must leave
        for the task's own evidence in the first pass (``task_floor``); 0 for the rest."""
        if self.task_started or it.kind in ("rule", "scope") or it.lane in TASK_LANES:
            return 0
        return self.task_floor

    def _task_cap(self, it: ContextItem) -> int | None:
        """The most one of the task's first ``TASK_MIN_ITEMS`` items may take in the first
        pass, so that a long one leaves room for the others; None when no cap applies."""
        if it.lane not in TASK_LANES or self.task_taken >= TASK_MIN_ITEMS:
            return None
        slots = min(TASK_MIN_ITEMS - self.task_taken, self.task_pending + 1)
        if slots <= 1:
            return None
        return max(MIN_TRUNCATED_TOKENS, (self.avail - self.used) // slots)

    def _duplicate(self, it: ContextItem) -> ContextItem | None:
        return (self._same_passage(it) or self.whole.get(it.path)
                or self.seen_text.get(_text_key(it.text)))

    def _same_passage(self, it: ContextItem) -> ContextItem | None:
        """The item admitted for ``it``'s passage (its ``path#anchor``), when it holds
        ``it``'s text or ``it`` holds its text. A long section or list is indexed as several
        chunks under one anchor: the second holds other lines, and is no duplicate."""
        prev = self.seen_ref.get(it.source)
        if prev is None:
            return None
        a, b = " ".join(prev.text.lower().split()), " ".join(it.text.lower().split())
        return prev if a in b or b in a else None

    def _ruled_out(self, it: ContextItem) -> bool:
        """Rules 1–3: a duplicate, a weak match, a superseded card or (with ``drop_stale``)
        a stale one is skipped; a stale one kept is flagged."""
        dup = self._duplicate(it)
        if dup is not None:
            it.status = "skipped"
            it.reason += f" — skipped: duplicate of {dup.source} ({dup.lane})"
            return True
        by = self.stated.get(it.source) if it.kind == "turn" else None
        if by is not None:
            it.status = "skipped"
            it.reason += f" — skipped: stated by a line of {by.source} (cards), which cites this turn"
            return True
        if it.weak:
            it.status, it.reason = "skipped", it.weak
            return True
        newer = self.superseded_by.get(it.path)
        if newer and self.history and it.kind not in ("guide", "rule", "index", "scope"):
            if "superseded" not in it.text.rsplit("\n", 1)[-1]:
                it.text += f"\n(superseded by {newer})"
                it.tokens = it.full_tokens = self.count([it.rendered()])[0]
            it.reason += f"; history: kept though {newer} supersedes it"
        elif newer and it.kind not in ("guide", "rule", "index", "scope"):
            it.status = "skipped"
            it.reason += f" — skipped: superseded by {newer} (a newer card names it in supersedes:); the newer statement wins"
            return True
        if it.stale:
            if self.drop_stale:
                it.status = "skipped"
                it.reason += (f" — skipped: stale ({changeable(it.text, it.kind) or 'likely to change'}, "
                              f"updated {it.freshness.replace(' (stale)', '')}, over {self.stale_days} days)")
                return True
            what = changeable(it.text, it.kind) or "statement likely to change"
            it.reason += (f"; flagged stale: {_article(what)} not confirmed in over {self.stale_days} "
                          f"days: verify before relying on it")
        return False

    def _room(self, it: ContextItem) -> tuple[int, int]:
        """Tokens left in the window, and in the item's lane share."""
        left = self.avail - self.used - self._held_for_task(it)
        share = int(self.shares.get(it.lane, 1.0) * self.lane_start[it.lane])
        return left, share - self.lane_used.get(it.lane, 0)

    def _waits_for_share(self, it: ContextItem) -> bool:
        """Rule 4: an item that fits the window but not its lane's share waits for the
        backfill (an index is a list: it is cut to its share instead)."""
        left, lane_left = self._room(it)
        cap = self._task_cap(it)
        if cap is not None and it.tokens > cap and min(cap, lane_left) >= MIN_TRUNCATED_TOKENS:
            return False  # one of the task's first items: cut to its part rather than wait
        first = not self.lane_used.get(it.lane)  # a lane's first item is cut, never left waiting
        if (it.tokens > lane_left and self.shares.get(it.lane, 1.0) < 1.0 and it.tokens <= left
                and not ((it.kind == "index" or first) and lane_left >= MIN_TRUNCATED_TOKENS)):
            it.status = "skipped"
            it.reason += (f" — skipped: {it.lane} lane share ({self.shares[it.lane]:.0%} of the "
                          f"{self.lane_start[it.lane]} tokens left at its start) spent")
            self.deferred.append(it)
            return True
        return False

    def _fit(self, it: ContextItem) -> None:
        """Rule 5: admit whole or cut; else skip (and wait for the backfill if it could fit)."""
        left, lane_left = self._room(it)
        limit = min(left, lane_left) if self.shares.get(it.lane, 1.0) < 1.0 else left
        why = "tokens left:"
        cap = self._task_cap(it)
        if cap is not None and it.tokens > cap and cap < limit:
            limit, why = cap, f"one of the task's first {TASK_MIN_ITEMS} items, its part:"
        held = self._held_for_task(it)
        if held and it.tokens > limit:
            why = f"tokens left after the task's share ({held} tokens kept for its evidence):"
        if self._place(it, limit, why):
            return
        it.status = "skipped"
        if held:
            it.reason += (f" — skipped: needs {it.tokens} tokens, {max(0, left)} left of {self.avail} "
                          f"after the task's share ({held} tokens kept for its evidence)")
        else:
            it.reason += f" — skipped: needs {it.tokens} tokens, {left} left of {self.avail}"
        if it.tokens <= self.avail - self.used:
            self.deferred.append(it)

    def _backfill(self) -> None:
        """Hand unused budget back to items that waited on a lane share, in order."""
        for it in self.deferred:
            if self.avail - self.used <= 0:
                break
            if self._duplicate(it) is not None:
                continue
            old_reason = it.reason
            it.reason = it.reason.split(" — skipped:", 1)[0]
            it.status = ""
            if self._place(it, self.avail - self.used, "backfill, tokens left:"):
                if it.status != "skipped":
                    it.reason += " (admitted in backfill: budget left after all lanes)"
            else:
                it.status = "skipped"
                it.reason = old_reason

    def _relevant_part(self, it: ContextItem, limit: int, why_short: str) -> bool:
        """A guide or an index too long for ``limit``: its paragraphs and list items about
        the task, under their headings (:func:`guide.relevant_part`), instead of its first
        ``limit`` tokens — the first lines of a map are about whatever sorts first."""
        full_text, full = it.text, it.tokens
        it.status = "truncated"  # the header says so; count it in

        def measure(text: str) -> int:
            it.text = text + CUT_MARK  # the model sees that lines were left out, as in any cut
            return self.count([it.rendered()])[0]

        got = relevant_part(full_text, self.task, limit, measure)
        if got is None:
            it.text, it.status = full_text, ""
            return False
        text, kept, total = got
        it.tokens = measure(text)
        self._take(it, "truncated")
        it.reason += (f" — truncated to its part about the task: {kept} of its {total} paragraphs "
                      f"and list items, {full} tokens to {it.tokens} ({why_short} {limit})")
        return True

    def _take(self, it: ContextItem, status: str) -> None:
        it.status = status
        self.used += it.tokens
        self.lane_used[it.lane] = self.lane_used.get(it.lane, 0) + it.tokens
        if it.whole and it.path and status == "admitted":
            self.whole[it.path] = it
        self.seen_ref[it.source] = it
        self.seen_text[_text_key(it.text)] = it
        if it.line_sources:  # the turns its admitted lines state (a cut keeps whole lines only)
            for line in it.text.split("\n"):
                for ref in it.line_sources.get(line, ()):
                    self.stated.setdefault(ref, it)

    def _place(self, it: ContextItem, limit: int, why_short: str) -> bool:
        """Admit whole or cut to ``limit`` tokens; False if it cannot be placed."""
        if it.tokens <= limit:
            self._take(it, "admitted")
            return True
        if it.kind == "rule":
            it.status = "skipped"
            it.reason += (f" — skipped: a rule is applied whole and needs {it.tokens} tokens, "
                          f"{why_short} {limit}")
            return True
        if (it.kind in CUT_TO_TASK and limit >= MIN_TRUNCATED_TOKENS
                and self._relevant_part(it, limit, why_short)):
            return True
        if limit >= MIN_TRUNCATED_TOKENS:
            full = it.tokens
            n = _fit(it, limit, self.count)
            if n:
                it.tokens = n
                self._take(it, "truncated")
                it.reason += f" — truncated: {full} tokens cut to {n} to fit ({why_short} {limit})"
                return True
            it.status = ""
        return False
