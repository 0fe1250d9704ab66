"""Context assembly: what reaches the model each turn, under a token budget, with reasons.

``assemble(task, source)`` renders the memory into named **lanes**, admits their items in a
fixed order until ``budget - reserve`` tokens are spent, and records a decision with a
one-line reason for every item it looked at — admitted, truncated or skipped. Nothing is
dropped silently. The reserve is never spent: it is the room left for the model's answer.
Each lane's ``why`` (:meth:`ContextWindow.lane_usage`, a column of the Markdown table)
counts its cuts and skips by cause, and :meth:`ContextWindow.priorities` says how the
priority classes below fell: the strict rules kept, the room the task's evidence was
guaranteed and what it got.

Lanes, in admission order (``LANES``):

``scope``   folder-scoped metadata known before any file is read: project name, the user's
            notes, a summary of what the memory holds (from GUIDE.md frontmatter,
            knowledge/INDEX.md and sessions/index.md). One small item.
``guide``   standing instructions: the global guide (``$BRAINFS_GLOBAL_GUIDE``, default
            ``~/.config/brainfs/GUIDE.md``), the memory's ``GUIDE.md``, then ``rules/*.md``.
            A rule is applied strictly, so it is admitted whole or skipped — never cut.
``index``   ``knowledge/INDEX.md``, the compact map of the wiki (cut to its entries about the
            task when large, see rule 5).
``pinned``  note cards whose frontmatter says ``pinned: true``, newest first.
``cards``   persistent cards: hybrid recall hits in ``notes/`` and ``knowledge/``; the hits
            on one wiki page dream wrote are one item of its claim lines about the task,
            dated, without markers (``claims.py``, :class:`WikiUse`).
``thread``  evidence from past sessions: the summary of the session the task continues
            (the newest of the sessions most related to it by recall that are about it:
            their name shares a word with the task or their summary half of its words;
            none when no such session is), then recall hits
            in ``sessions/`` (transcript turns and summaries).
``files``   any other file the recall found relevant.

Rules of admission (in this order, for each item):

1. *duplicate* — the same passage (path#anchor holding the same lines, a chunk of a file
   already admitted whole, or the same text) is skipped, naming what it duplicates; another
   chunk under the same anchor (a long list's next lines) is not a duplicate;
2. *superseded* — newer statements win: a card whose path is named by another card's
   ``supersedes:`` frontmatter is skipped, naming the newer card. When a superseded card
   matches the task and the newer one did not, the newer one is pulled in right after it;
3. *stale* — an item likely to change (a plan, a status, a role:
   ``search.staleness.changeable``) not confirmed for over ``stale_days`` is admitted but
   flagged (freshness says "(stale)" and the reason says which kind); with
   ``drop_stale=True`` it is skipped instead. Age alone is no reason: a birthday or a
   decision does not go stale. Guide, rules and the index are standing material, never stale;
4. *lane share* — a lane may spend at most ``LANE_SHARE[lane]`` of the budget that is
   left when it starts, so one lane cannot starve the next; an item over its lane's share
   waits (an index, being a list, and a lane's first item — the thread's summary, a pinned
   card — are cut to the share instead, so a lane with room is never left empty), and what
   the later lanes leave unused is handed back to waiting items in a final **backfill**
   pass, in the same lane order;
5. *fit* — an item that fits is admitted; one that fits only shortened (at least
   ``MIN_TRUNCATED_TOKENS`` left) is cut and marked ``truncated``: a guide or an index
   (``CUT_TO_TASK``) to its paragraphs and list items that share a word with the task,
   under their headings, most task words first (:func:`guide.relevant_part`); anything
   else, or one of those with no such line, at a word boundary. Otherwise it is skipped
   with what it needed and what was left.

Priority classes, which decide a small window (the numbers are fractions of the window,
``budget - reserve``, never tuned to one memory):

a. *strict rules* (``rules/*.md``) are decided before anything else, whole: a rule is never
   dropped for the guide's prose, the index or evidence; one larger than the whole window
   is skipped, saying so;
b. *the task's own evidence* (the cards, thread and files lanes) is guaranteed
   ``TASK_SHARE`` of the window: the guide's prose, the index and pinned cards spend only
   what leaves that much free in the first pass (the reason of an item cut or skipped for
   it says how many tokens were kept), and the first ``TASK_MIN_ITEMS`` pieces of evidence
   split the room left for them, so a window holds several of them rather than one long one;
c. *standing prose and maps* (GUIDE.md, the global guide, INDEX.md, pinned cards) take
   what is left, cut to their part about the task (rule 5);
d. the *backfill* hands what any lane left unused to the items that waited, in lane order.

Tokens are counted with the MiniLM word-piece tokenizer (``model.token_counter``, read
from the model package, offline), falling back to a documented ``chars/4`` estimate when
the tokenizer is not installed. An item's ``tokens`` counts it as rendered in the prompt —
its one-line header plus its text — so ``used`` equals the token count of
:meth:`ContextWindow.to_prompt` (word pieces never span whitespace).

As of a day (``as_of``), the window is the one the memory gave at the end of that day: recall
runs as of it, freshness is judged then, and what is read whole (pages' lines, INDEX.md,
GUIDE.md, the links between cards) is read as it stood (:mod:`.asof`); every reason of the
task's lanes and the scope item say which day.

Retrieval degrades like recall does (hybrid → dense → sparse → recent); with no embedder
(``BRAINFS_EMBEDDER=none``) assembly runs in sparse mode and ``mode`` says so; with no
index at all the recall lanes are empty and ``mode`` is ``"none"``.

The parts live in modules named for what they hold: :mod:`.policy` (the lanes, their shares
and the other numbers above, :class:`WikiUse`), :mod:`.sources` (where the memory is read
from), :mod:`.window` (items, the window and its renderings), :mod:`.standing` (the scope
and guide lanes), :mod:`.notes` (pinned cards, supersession), :mod:`.recalled` and
:mod:`.wikipage` (the lanes recall fills), :mod:`.thread` (the session the task continues),
:mod:`.tokens` (counting and cutting) and :mod:`.admission` (the rules of admission). This
module puts them together and keeps every public name importable from here.
"""

from __future__ import annotations

import datetime as _dt
import time

from brainfs.cache.layout import GUIDE_PATH, INDEX_PATH, SESSIONS_INDEX
from brainfs.cache.search.currency import check_day
from brainfs.cache.search.fusion import as_utc

from .admission import _Admission
from .asof import AsOf, end_of_day
from .builder import _Builder
from .notes import _pinned_lane, _scan_notes
from .policy import (CUT_MARK, CUT_TO_TASK, K_MAX, K_MIN, LANE_SHARE, LANES, MIN_TRUNCATED_TOKENS,
                     RELATIVE_FLOOR, STATUSES, TASK_LANES, TASK_MIN_ITEMS, TASK_SHARE,
                     TOKENS_PER_CANDIDATE, WikiUse)
from .recalled import _cards_lane, _recall_cards, _recall_lanes, _RecallLanes
from .sources import ENV_GLOBAL_GUIDE, HEAD_BYTES, MemorySource, StoreSource, global_guide_path
from .standing import _count_pages, _guide_lane, _scope, _scope_item, _sessions_index
from .thread import THREAD_RELATED, _thread_summary
from .tokens import _count_tokens, _counter
from .window import ContextItem, ContextWindow

__all__ = ["CUT_MARK", "CUT_TO_TASK", "ENV_GLOBAL_GUIDE", "HEAD_BYTES", "K_MAX", "K_MIN", "LANES",
           "LANE_SHARE", "MIN_TRUNCATED_TOKENS", "RELATIVE_FLOOR", "STATUSES", "TASK_LANES",
           "TASK_MIN_ITEMS", "TASK_SHARE", "THREAD_RELATED", "TOKENS_PER_CANDIDATE",
           "ContextItem", "ContextWindow", "MemorySource", "StoreSource", "WikiUse", "assemble",
           "global_guide_path"]


def assemble(task: str, source: MemorySource, budget: int = 8000, reserve: int = 2000,
             now: _dt.datetime | None = None, k: int | None = None, stale_days: int = 180,
             drop_stale: bool = False, wiki: WikiUse | None = None,
             as_of: str | None = None, history: bool = False) -> ContextWindow:
    """Assemble the memory context for one turn of ``task`` (see the module docstring).

    ``budget`` is the whole context budget in tokens, ``reserve`` the part kept free for
    the model's answer; items are admitted until ``budget - reserve`` is spent. ``k`` is
    the recall pool (candidates for the cards/thread/files lanes; default scales with the
    budget). ``now`` anchors freshness (default: current UTC time). ``wiki`` says how hits
    on wiki pages are read (:class:`WikiUse`; default: as claim lines).

    ``as_of`` (``YYYY-MM-DD``): the window as the memory stood at the end of that day —
    recall runs as of it, freshness and staleness are judged then (``now`` is the end of
    the day), and the pages, INDEX.md, GUIDE.md and the links between cards are read as
    they stood (:mod:`.asof`). ``history``: recall keeps replaced values where they match
    and a card another one supersedes is admitted, marked, instead of skipped. Raises
    ValueError on a budget that leaves nothing (``budget <= reserve``, negative numbers),
    on a day that is not one, and on ``as_of`` with ``history``.
    """
    budget, reserve = _check_budget(budget, reserve)
    as_of = check_day(as_of)
    if as_of and history:
        raise ValueError("give as_of or history, not both")
    task = task if isinstance(task, str) else str(task or "")
    now = end_of_day(as_of) if as_of else as_utc(now)
    when = AsOf.of(source, as_of) if as_of else None
    avail = budget - reserve
    if k is None:
        k = max(K_MIN, min(K_MAX, avail // TOKENS_PER_CANDIDATE))
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    b = _Builder(task, source, now, stale_days, drop_stale)

    # The guide lane is read first: the scope lane takes the project name from it.
    t = time.perf_counter()
    guide = _guide_lane(b, source, when)
    timings["guide_ms"] = (time.perf_counter() - t) * 1000
    index_text = source.read_cached(INDEX_PATH)
    sess_index = _sessions_index(source.read_cached(SESSIONS_INDEX))
    t = time.perf_counter()
    notes = _scan_notes(source)
    timings["scan_ms"] = (time.perf_counter() - t) * 1000
    if when is not None:
        sess_index = when.sessions(sess_index)
        notes = notes._replace(paths=when.written(notes.paths), pinned=when.pinned(notes.pinned))

    n_pages = _count_pages(source, index_text)
    newest = max(sess_index, key=lambda s: s[1]) if sess_index else None
    scope = _scope(source, guide, notes, n_pages, len(sess_index), newest)
    b.items.insert(0, _scope_item(scope, as_of))  # before the guide items
    if index_text:
        _index_item(b, index_text, n_pages, when)
    _pinned_lane(b, source, notes.pinned)

    t = time.perf_counter()
    wiki = wiki or WikiUse()
    found = _recall_cards(source, task, k, now, stale_days, wiki, as_of, history)
    timings["recall_ms"] = (time.perf_counter() - t) * 1000
    lanes = _recall_lanes(found, source, notes.superseded_by, task, wiki, avail, when)
    if when is not None:
        when.supersession(notes.superseded_by)  # a card replaces another from its own day
        _read_as_of(when, lanes)
    b.items.extend(_cards_lane(b, source, lanes, notes))
    if found.mode not in ("recent", "none"):  # recent: nothing matched, the task continues no thread
        _thread_summary(b, source, lanes.thread, sess_index)  # the related session's summary first
    b.items.extend(lanes.thread)
    b.items.extend(lanes.files)
    for it in (i for i in b.items if as_of and i.lane in TASK_LANES):
        if f"as of {as_of}" not in it.reason:
            it.reason += f"; as of {as_of}"
        it.weak = it.weak and f"{it.weak}; as of {as_of}"

    count, tok_name = _counter()
    _count_tokens(b.items, count)
    t = time.perf_counter()
    # the wiki's share applies where wiki lines are in the cards lane; notes alone keep theirs
    has_lines = any(i.kind == "claims" for i in b.items)
    shares = {**LANE_SHARE, "cards": wiki.share} if has_lines else LANE_SHARE
    task_room = sum(i.tokens for i in b.items
                    if i.lane in TASK_LANES and i.status != "skipped" and not i.weak)
    task_floor = min(int(TASK_SHARE * avail), task_room)
    used = _Admission(avail, notes.superseded_by, drop_stale, stale_days, count, shares,
                      task_floor, task, history).run(b.items)
    timings["admit_ms"] = (time.perf_counter() - t) * 1000
    timings["total_ms"] = (time.perf_counter() - t0) * 1000
    assert used <= avail, (used, avail)
    return ContextWindow(task=task, budget=budget, reserve=reserve, used=used, mode=found.mode,
                         items=b.items, why=found.why, scope=scope, tokenizer=tok_name,
                         timings={kk: round(v, 2) for kk, v in timings.items()},
                         now=now.isoformat(), as_of=as_of, history=history, task_floor=task_floor)


def _index_item(b: _Builder, index_text: str, n_pages: int, when: AsOf | None) -> None:
    """The index lane's item: ``knowledge/INDEX.md`` (as of a day: the summaries naming a
    value begun after it cut to the page's name)."""
    why = f"index: map of the knowledge wiki ({n_pages} pages), open a page for details"
    if when is not None:
        index_text, cut = when.index(index_text)
        why += (f"; as of {when.day}: the map as it is now" + (
            f", {cut} summar{'ies' if cut != 1 else 'y'} naming a value begun after "
            f"{when.day} cut to the page's name" if cut else ""))
    b.add_file("index", INDEX_PATH, index_text, why, kind="index", stale_ok=False)


def _read_as_of(when: AsOf, lanes: _RecallLanes) -> None:
    """A recalled piece of a file read whole elsewhere (INDEX.md, GUIDE.md, the sessions'
    index) read as of the day the same way."""
    for it in (i for its in lanes for i in its):
        if it.path == INDEX_PATH:
            it.text = when.index(it.text)[0]
        elif it.path == GUIDE_PATH:
            it.text = when.guide(it.text)[0]
        elif it.path == SESSIONS_INDEX:
            it.text = when.sessions_text(it.text)


def _check_budget(budget: int, reserve: int) -> tuple[int, int]:
    """``budget`` and ``reserve`` as ints; ValueError when they leave nothing for memory."""
    budget, reserve = int(budget), int(reserve)
    if budget <= 0 or reserve < 0:
        raise ValueError(f"budget must be positive and reserve non-negative (got {budget}, {reserve})")
    if reserve >= budget:
        raise ValueError(f"reserve ({reserve}) must be smaller than the budget ({budget})")
    return budget, reserve
