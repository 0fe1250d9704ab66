"""The numbers and settings that decide a context window: the lanes and their order, each
lane's share of the budget, the room the task's evidence is guaranteed, the recall pool,
and how recall's hits on wiki pages are read (:class:`WikiUse`). The rules they feed are
in :mod:`.assembly`'s docstring."""

from __future__ import annotations

from dataclasses import dataclass

#: Lane names in admission order (see :mod:`.assembly`'s docstring).
LANES = ("scope", "guide", "index", "pinned", "cards", "thread", "files")
#: Share of the budget left at a lane's start that the lane may spend in the first pass.
#: Guide material is taken first and whole; the index is a map, not the territory; cards
#: leave room for thread evidence, which leaves room for other files. Unused budget is
#: handed back in the backfill pass.
LANE_SHARE = {"scope": 1.0, "guide": 1.0, "index": 0.35, "pinned": 0.5, "cards": 0.6,
              "thread": 0.85, "files": 1.0}
#: Shortest useful cut of an item; below this an item that does not fit is skipped.
MIN_TRUNCATED_TOKENS = 40
#: The lanes of the task's own evidence (recall hits).
TASK_LANES = ("cards", "thread", "files")
#: Share of the window the task's evidence is guaranteed: the guide's prose, the index and
#: the pinned cards leave it free in the first pass (strict rules and the scope do not). Four
#: tenths: on LoCoMo (no guide, no pins) the index's own share already leaves more, so the
#: guarantee only binds where a guide or pins would have taken it.
TASK_SHARE = 0.4
#: The task's first items share the room left for them: none of them takes more than its
#: part (the room over the items still to come, up to this many), so a small window holds
#: several pieces of evidence rather than one long one.
TASK_MIN_ITEMS = 3
#: Recall candidates scoring below this share of the best candidate are not considered
#: (they would pad the context with noise when the budget is large).
RELATIVE_FLOOR = 0.25
#: Recall pool size when ``k`` is not given: one candidate per this many tokens of budget,
#: within [K_MIN, K_MAX].
TOKENS_PER_CANDIDATE = 50
K_MIN, K_MAX = 24, 200
STATUSES = ("admitted", "truncated", "skipped")
#: Kinds of long standing text cut to their part about the task (``guide.relevant_part``)
#: rather than to their first tokens: a guide's prose, and an index (INDEX.md, a
#: sessions/index.md recall returned), whose lines are one entry each.
CUT_TO_TASK = ("guide", "index")
#: The last line of a text cut to its part about the task (a cut at a word ends in "…").
CUT_MARK = "\n…"


@dataclass(frozen=True)
class WikiUse:
    """How recall's hits on wiki pages (``knowledge/*.md`` but INDEX.md) reach the context.

    With ``claims`` (the default) the hits on one page become one item of the cards lane:
    the claim lines (``claims.Claim``) of the recalled chunks that share at least
    ``overlap`` words with the task besides the page's own names, each with its date as a
    person writes it, without ``[cite:N]`` markers; a line whose cited turns are all recall
    hits of the task too is left out (``dedupe``: the turn is the same statement in full);
    With ``prefer_lines`` it is the other way round: the lines are kept, and a turn that an
    admitted line cites is skipped as stated (a line is a sentence under the page's one
    header, a turn a paragraph under its own). ``threads`` keeps the fragments of
    ``## Threads``; ``after_turns`` puts the page items after the turns (files lane), so
    they take only what the turns leave; ``floor_by_kind`` takes the weak-match
    floor (``RELATIVE_FLOOR``) of page hits and of other hits apart. Without ``claims``, each
    hit is its chunk as recall returns it. ``share`` is the cards lane's share of the budget
    (rule 4) when wiki lines are in it (``LANE_SHARE`` otherwise); ``pool`` how much deeper recall is asked so that page hits leave ``k`` others.
    ``pool``, ``share``, ``turn_floor`` and ``dedupe_share`` are the setting chosen on LoCoMo
    dev by leave-one-conversation-out (``benchmarks/dream_answers.py --context-only``,
    benchmarks/results/dream-answers-context.md, which says what each fold chose);
    ``overlap`` 2, ``prefer_lines``, pool 2 and 8 were measured worse there. ``gathered``: a task that
    names the page's subject also gets the page's lines gathered across sessions
    (``## Across sessions``, dream/gather.py) that share a word with it, recalled or not,
    first in the item: one such line answers a list question ("What activities does
    Melanie do?") that would otherwise need a turn from each of four sessions.
    ``turn_floor`` is the weak-match floor of the other hits when recall returned page
    hits too: pages rank among the turns in each of recall's lists, so a turn's fused score
    falls further below the best turn's than in a memory without pages. ``dedupe_share``:
    a line is left to its turn only when that turn is among the recalled turns that fit in
    this share of the window (their text as counted by ``estimate_tokens``, in recall
    order); None: any recalled turn, though the ones ranked last may not fit and the line
    is then lost with them."""

    claims: bool = True
    threads: bool = True
    dedupe: bool = True
    prefer_lines: bool = False
    after_turns: bool = False
    overlap: int = 1
    share: float = 0.3
    floor_by_kind: bool = True
    pool: float = 4.0
    gathered: bool = True
    turn_floor: float = 0.05
    dedupe_share: float | None = 0.4
