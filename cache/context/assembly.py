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
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from brainfs.backend.keys import INTERNAL_PREFIX

from brainfs.cache.search.chunker import DEFAULT_CONFIDENCE, normalize_date, parse_confidence, path_kind, split_frontmatter
from brainfs.cache.search.retrieval import (Card, age_days, as_utc, check_day, freshness_label, recall,
                                             truncate)
from brainfs.cache.search.text import estimate_tokens
from brainfs.cache.search.staleness import changeable, is_stale

from .asof import AsOf, end_of_day
from .claims import Claim, chunk_claims, names_page, page_claims, page_names, words
from .guide import relevant_part

if TYPE_CHECKING:
    from brainfs.cache.search.embedder import Embedder
    from brainfs.cache.search.index import SearchIndex

log = logging.getLogger(__name__)

#: Lane names in admission order (see the module docstring).
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
#: Characters read from the start of a note to find its frontmatter (pinned, supersedes).
HEAD_BYTES = 4096
STATUSES = ("admitted", "truncated", "skipped")
#: Kinds of long standing text cut to their part about the task (``guide.relevant_part``)
#: rather than to their first tokens: a guide's prose, and an index (INDEX.md, a
#: sessions/index.md recall returned), whose lines are one entry each.
CUT_TO_TASK = ("guide", "index")
#: The last line of a text cut to its part about the task (a cut at a word ends in "…").
CUT_MARK = "\n…"
ENV_GLOBAL_GUIDE = "BRAINFS_GLOBAL_GUIDE"


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

#: Top-level names that are not memory (brainfs's own objects, the mount's magic folder).
_HIDDEN = (INTERNAL_PREFIX, ".recall", ".git")


def global_guide_path() -> Path:
    """Where the global guide lives: ``$BRAINFS_GLOBAL_GUIDE`` or ``~/.config/brainfs/GUIDE.md``."""
    env = os.environ.get(ENV_GLOBAL_GUIDE)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".config" / "brainfs" / "GUIDE.md"


# --------------------------------------------------------------------------- sources

class MemorySource:
    """Read access to one memory tree plus, optionally, its search index.

    The base class reads a local directory — a plain tree or a running brainfs mount (files
    are just read; on a mount, reading a path that is not local yet materializes it).
    Subclasses override :meth:`read`, :meth:`list` and :meth:`stamp` for other stores.

    ``embedder``: ``"auto"`` loads the default model on first use (None if it cannot load,
    the reason kept in ``embedder_error``); None disables dense search; or an instance.
    """

    def __init__(self, root: Path | str | None, index: SearchIndex | None = None,
                 embedder: Embedder | str | None = "auto", name: str | None = None,
                 global_guide: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.index = index
        self._embedder = embedder
        self.embedder_error: str | None = None
        self.name = name or (self.root.resolve().name if self.root is not None else "memory")
        self.global_guide = Path(global_guide) if global_guide else global_guide_path()
        self._heads: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._texts: dict[str, tuple[Any, str | None]] = {}
        self._claims: dict[str, tuple[Any, dict[str, Claim]]] = {}
        self._root_s = str(self.root) if self.root is not None else ""

    # -- file access -------------------------------------------------------------------
    def read(self, path: str) -> str | None:
        """Text of a corpus path, or None when it does not exist / cannot be read."""
        assert self.root is not None
        try:
            return (self.root / path).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None

    def read_head(self, path: str, n: int = HEAD_BYTES) -> str | None:
        """The first ``n`` bytes of a path as text (enough for a card's frontmatter)."""
        assert self.root is not None
        try:
            with open(self.root / path, "rb") as f:
                return f.read(n).decode("utf-8", errors="replace")
        except OSError:
            return None

    def stamp(self, path: str) -> Any:
        """A cheap change stamp of a path (mtime + size), or None."""
        assert self.root is not None
        try:
            st = os.stat(os.path.join(self._root_s, path))
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def list(self, prefix: str) -> list[str]:
        """Every file under the corpus folder ``prefix`` (recursive, sorted); hidden and
        internal folders (``.brainfs``, ``.recall``, ``.git``) are left out."""
        assert self.root is not None
        base = self.root / prefix if prefix else self.root
        out: list[str] = []
        stack = [(base, prefix.strip("/"))]
        while stack:
            d, rel = stack.pop()
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                if e.name.startswith("."):  # .brainfs, .recall, .git, editor files
                    continue
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append((Path(e.path), r))
                    elif e.is_file(follow_symlinks=False):
                        out.append(r)
                except OSError:
                    continue
        return sorted(out)

    # -- derived -----------------------------------------------------------------------
    def read_cached(self, path: str) -> str | None:
        """:meth:`read`, remembered per change stamp (for files read every turn: guides,
        rules, indexes)."""
        stamp = self.stamp(path)
        hit = self._texts.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        text = self.read(path) if stamp is not None or self.root is None else None
        self._texts[path] = (stamp, text)
        return text

    def claims(self, path: str) -> dict[str, Claim]:
        """The claim lines of a wiki page (:func:`claims.page_claims`), cached per change
        stamp: a page is parsed once however many of its chunks recall returns."""
        stamp = self.stamp(path)
        hit = self._claims.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        out = page_claims(path, self.read_cached(path) or "")
        self._claims[path] = (stamp, out)
        return out

    def frontmatter(self, path: str) -> dict[str, Any]:
        """A file's frontmatter (``{}`` if none), cached per change stamp."""
        stamp = self.stamp(path)
        hit = self._heads.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        head = self.read_head(path)
        meta: dict[str, Any] = {}
        if head is not None and head.startswith("---"):
            m, _body, bad = split_frontmatter(head)
            if bad or m is None:
                full = self.read(path) or ""
                m, _body, bad = split_frontmatter(full.replace("\r\n", "\n"))
            meta = m or {}
        self._heads[path] = (stamp, meta)
        return meta

    def embedder(self) -> Embedder | None:
        """The embedding model, or None (dense search off; the reason in ``embedder_error``)."""
        if isinstance(self._embedder, str):
            from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

            spec = None if self._embedder == "auto" else self._embedder
            try:
                self._embedder = load_embedder(spec)
            except EmbedderUnavailable as e:
                self.embedder_error = str(e)
                self._embedder = None
        return self._embedder  # type: ignore[return-value]


class StoreSource(MemorySource):
    """A memory source reading objects from an :class:`~brainfs.backend.store.ObjectStore`
    (``brainfs context s3://B/P``). Listing is one paginated LIST; heads are cached by
    ETag, so notes are fetched once per process."""

    def __init__(self, store: Any, index: SearchIndex | None = None,
                 embedder: Embedder | str | None = "auto", name: str | None = None,
                 global_guide: Path | str | None = None) -> None:
        super().__init__(None, index, embedder, name or str(store.url), global_guide)
        self.store = store
        self._listing: dict[str, str] | None = None

    def _all(self) -> dict[str, str]:
        if self._listing is None:
            self._listing = {o.path: o.etag for o in self.store.list()
                             if not o.path.startswith(_HIDDEN)}
        return self._listing

    def read(self, path: str) -> str | None:
        from brainfs.backend.errors import BackendError

        try:
            data, _etag = self.store.get(path)
        except BackendError:
            return None
        return data.decode("utf-8", errors="replace")

    def read_head(self, path: str, n: int = HEAD_BYTES) -> str | None:
        return self.read(path)

    def stamp(self, path: str) -> Any:
        return self._all().get(path)

    def list(self, prefix: str) -> list[str]:
        p = prefix.strip("/") + "/" if prefix else ""
        return sorted(k for k in self._all() if k.startswith(p))


# --------------------------------------------------------------------------- items

@dataclass
class ContextItem:
    """One piece of memory considered for the turn, and the decision about it."""

    lane: str
    status: str
    tokens: int
    source: str
    reason: str
    text: str
    freshness: str
    confidence: float
    kind: str = ""
    stale: bool = False
    score: float | None = None
    rank: int | None = None
    updated: str | None = None
    #: Tokens of the whole item before it was cut (equal to ``tokens`` unless truncated).
    full_tokens: int = 0
    path: str = ""
    anchor: str = ""
    #: why a recall hit is too weak to admit (decided after the duplicate check)
    weak: str = ""
    #: True when ``text`` is the whole file body (a later chunk of it is a duplicate).
    whole: bool = False
    #: For a wiki page's claims item: each rendered line → the turns it cites.
    line_sources: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def header(self) -> str:
        """The one-line header the item carries in the prompt."""
        bits = [self.kind or self.lane]
        if self.freshness and self.freshness != "date unknown":
            bits.append(self.freshness)
        bits.append(f"confidence {round(100 * self.confidence)}%")
        if self.status == "truncated":
            bits.append("truncated")
        return f"### [{self.lane}] {self.source} ({'; '.join(bits)})"

    def rendered(self) -> str:
        """The item as the model sees it: header line, then text."""
        return f"{self.header()}\n{self.text}"

    def to_dict(self) -> dict[str, Any]:
        """One item of ``brainfs context --json`` (docs/ARCHITECTURE.md), plus extra keys."""
        return {"lane": self.lane, "status": self.status, "tokens": self.tokens,
                "source": self.source, "reason": self.reason, "text": self.text,
                "freshness": self.freshness, "confidence": round(self.confidence, 3),
                "kind": self.kind, "stale": self.stale, "score": self.score,
                "rank": self.rank, "updated": self.updated, "full_tokens": self.full_tokens}


@dataclass
class ContextWindow:
    """What :func:`assemble` returns: the budget, the decisions, and renderers."""

    task: str
    budget: int
    reserve: int
    used: int
    mode: str
    items: list[ContextItem]
    why: str = ""
    scope: dict[str, Any] = field(default_factory=dict)
    tokenizer: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    now: str = ""
    #: The day the window was assembled as of (``YYYY-MM-DD``), or None: as of now.
    as_of: str | None = None
    #: Replaced values kept where they match (marked), as ``recall --history``.
    history: bool = False
    #: Tokens the task's evidence was guaranteed (``TASK_SHARE`` of the window, or less
    #: when its candidates needed less).
    task_floor: int = 0

    @property
    def available(self) -> int:
        """Tokens the memory may use: ``budget - reserve``."""
        return self.budget - self.reserve

    def admitted(self) -> list[ContextItem]:
        """Items that reach the model (admitted or truncated), in lane order."""
        return [i for i in self.items if i.status != "skipped"]

    def skipped(self) -> list[ContextItem]:
        return [i for i in self.items if i.status == "skipped"]

    def lane_usage(self) -> dict[str, dict[str, Any]]:
        """Per lane: tokens used, item counts by status, and ``why``: what decided the lane
        (its items' cuts and skips counted by cause, from their reasons)."""
        out: dict[str, dict[str, Any]] = {}
        for lane in LANES:
            its = [i for i in self.items if i.lane == lane]
            if not its:
                continue
            out[lane] = {"tokens": sum(i.tokens for i in its if i.status != "skipped"),
                         **{s: sum(1 for i in its if i.status == s) for s in STATUSES},
                         "why": _lane_why(lane, its)}
        return out

    def priorities(self) -> str:
        """One line on the priority classes as they fell in this window: the strict rules
        kept whole, and the room the task's evidence was guaranteed and got."""
        rules = [i for i in self.items if i.kind == "rule"]
        task = [i for i in self.items if i.lane in TASK_LANES and i.status != "skipped"]
        bits = []
        if rules:
            kept = sum(1 for i in rules if i.status == "admitted")
            bits.append(f"strict rules first, whole: {kept} of {len(rules)} kept")
        bits.append(f"the task's evidence: {len(task)} item{'s' if len(task) != 1 else ''}, "
                    f"{sum(i.tokens for i in task)} tokens ({self.task_floor} guaranteed: "
                    f"{TASK_SHARE:.0%} of the window, or all it needed, before the guide's "
                    f"prose, the index and pinned cards)")
        return "; ".join(bits)

    # -- renderers -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The ``brainfs context --json`` object of docs/ARCHITECTURE.md (plus extra keys)."""
        return {"budget": self.budget, "reserve": self.reserve, "used": self.used,
                "mode": self.mode, "items": [i.to_dict() for i in self.items],
                "task": self.task, "why": self.why, "lanes": self.lane_usage(),
                "lane_order": list(LANES), "scope": self.scope, "tokenizer": self.tokenizer,
                "timings": self.timings, "now": self.now, "as_of": self.as_of,
                "history": self.history, "task_floor": self.task_floor,
                "priorities": self.priorities()}

    def to_prompt(self) -> str:
        """Exactly the memory text given to the model: admitted items in lane order."""
        return "\n\n".join(i.rendered() for i in self.admitted())

    def to_markdown(self) -> str:
        """For people: the admitted context as the model gets it, then the skipped items."""
        adm = self.admitted()
        when = (f" (as of {self.as_of})" if self.as_of else
                " (history: replaced values kept, marked)" if self.history else "")
        lines = [f"# Context for: {self.task.strip() or '(empty task)'}{when}", "",
                 f"_{self.used} of {self.available} tokens used (budget {self.budget}, "
                 f"reserve {self.reserve} kept for the answer); mode {self.mode}"
                 + (f" — {self.why}" if self.why else "") + f"; {len(adm)} items admitted, "
                 f"{len(self.skipped())} skipped; tokens by {self.tokenizer}_", "",
                 f"_Priorities: {self.priorities()}_", ""]
        usage = self.lane_usage()
        lines.append("| lane | tokens | admitted | truncated | skipped | why |")
        lines.append("|---|---:|---:|---:|---:|---|")
        for lane, u in usage.items():
            lines.append(f"| {lane} | {u['tokens']} | {u['admitted']} | {u['truncated']} | "
                         f"{u['skipped']} | {_md_cell(u['why'])} |")
        lines += ["", "## Context given to the model", ""]
        if adm:
            lines.append(self.to_prompt())
        else:
            lines.append("(nothing admitted)")
        lines += ["", "## Why each item is there", ""]
        lines.append("| # | lane | status | tokens | source | reason |")
        lines.append("|---:|---|---|---:|---|---|")
        for n, i in enumerate(self.items, 1):
            if i.status != "skipped":
                lines.append(f"| {n} | {i.lane} | {i.status} | {i.tokens} | `{_md_cell(i.source)}` | {_md_cell(i.reason)} |")
        lines += ["", "## Skipped", ""]
        sk = self.skipped()
        if not sk:
            lines.append("Nothing was skipped.")
        else:
            lines.append("| # | lane | tokens | source | freshness | confidence | reason |")
            lines.append("|---:|---|---:|---|---|---:|---|")
            for n, i in enumerate(self.items, 1):
                if i.status == "skipped":
                    lines.append(f"| {n} | {i.lane} | {i.tokens} | `{_md_cell(i.source)}` | "
                                 f"{_md_cell(i.freshness)} | {round(100 * i.confidence)}% | {_md_cell(i.reason)} |")
        lines.append("")
        return "\n".join(lines)

    def to_html(self, base: str | None = None) -> str:
        """The "context window" page (:mod:`.page`): the budget as a bar, one row per
        item with its text, lane and status filters; sources link under ``base``
        (``page.link_base(root or s3 URL)``). Self-contained."""
        from .page import render

        return render(self, base)


#: How an item's reason says it was cut or skipped → the cause a lane's ``why`` counts.
_CAUSES = (("truncated to its part about the task", "cut to its part about the task"),
           ("one of the task's first", "cut to share the task's room"),
           ("after the task's share", "held back for the task's share"),
           ("lane share", "over the lane's share"),
           ("a rule is applied whole", "a rule too long to apply whole"),
           ("duplicate of", "duplicate"),
           ("weak match", "weak match"),
           ("superseded by", "superseded"),
           ("skipped: stale", "stale"),
           ("stated by a line", "stated by a page line"),
           ("a list of links", "links only"),
           ("no claim line", "no line about the task"),
           ("came after", "later than the day asked"),
           ("truncated:", "cut to fit"),
           ("needs ", "no room left"))


def _lane_why(lane: str, items: list[ContextItem]) -> str:
    """What decided a lane, from its items' reasons: the cuts and skips counted by cause,
    the items the backfill took; the guide lane says its rules come first and whole."""
    counts: dict[str, int] = {}
    for it in items:
        if it.status == "admitted" and "(admitted in backfill" in it.reason:
            counts["taken in the backfill"] = counts.get("taken in the backfill", 0) + 1
        if it.status == "admitted":
            continue
        tail = it.reason.split(" — ", 1)[-1] if " — " in it.reason else it.reason
        cause = next((c for key, c in _CAUSES if key in tail), "other")
        if it.status == "skipped" and cause.startswith("cut"):
            cause = "no room left"
        counts[cause] = counts.get(cause, 0) + 1
    bits = [f"{n} {c}" for c, n in counts.items()]
    if lane == "guide" and any(i.kind == "rule" for i in items):
        bits.insert(0, "strict rules first, whole")
    if lane in TASK_LANES and not bits:
        bits.append("all admitted")
    return "; ".join(bits) or "all admitted"


def _article(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def _md_cell(s: str) -> str:
    return " ".join(str(s).split()).replace("|", "\\|")


# --------------------------------------------------------------------------- tokens

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
        from brainfs.cache.search.model import EmbedderUnavailable, token_counter

        try:
            return token_counter(), "all-MiniLM-L6-v2 word pieces"
        except EmbedderUnavailable as e:
            log.warning("tokenizer unavailable (%s); estimating tokens as chars/4", e)
    except Exception as e:  # noqa: BLE001
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


# --------------------------------------------------------------------------- helpers

def _body(text: str) -> tuple[dict[str, Any], str]:
    meta, body, bad = split_frontmatter(text.replace("\r\n", "\n"))
    return (meta or {}), (text if bad else body).strip()


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1", "on"))


def _norm_path(v: str, base: str) -> str:
    v = str(v).strip().split("#", 1)[0].strip().lstrip("/")
    if v.startswith("./"):
        v = v[2:]
    if "/" not in v and base:
        v = f"{base.rsplit('/', 1)[0]}/{v}"
    return v


def _own_supersession(meta: dict[str, Any], path: str, superseded_by: dict[str, str]) -> None:
    """A card that says it is superseded (``superseded_by:``, as dream marks the older card
    when a correction or a newer statement replaces it) is, even when the newer card does
    not name it in ``supersedes:`` or is not listed."""
    newer = meta.get("superseded_by")
    if isinstance(newer, str) and newer.strip() and newer.strip() != path:
        superseded_by.setdefault(path, newer.strip())


def _supersedes(meta: dict[str, Any], path: str) -> list[str]:
    raw = meta.get("supersedes")
    if not raw:
        return []
    vals = raw if isinstance(raw, list) else [raw]
    return [_norm_path(v, path) for v in vals if isinstance(v, str) and v.strip()]


def _text_key(text: str) -> str:
    return hashlib.sha1(" ".join(text.lower().split()).encode()).hexdigest()


_INDEX_LINE = re.compile(r"^\s*-\s*(?P<id>[^|]+?)\s*\|\s*(?P<date>\d{4}-\d{2}-\d{2}[^|]*?)\s*\|\s*(?P<title>.*)$")


def _sessions_index(text: str | None) -> list[tuple[str, str, str]]:
    """``sessions/index.md`` lines → [(session id, date, title)]."""
    out = []
    for line in (text or "").splitlines():
        m = _INDEX_LINE.match(line)
        if m:
            sid = m.group("id").strip().strip("[]`")
            out.append((sid, m.group("date").strip(), m.group("title").strip()))
    return out


# --------------------------------------------------------------------------- assemble

class _Builder:
    def __init__(self, task: str, src: MemorySource, now: _dt.datetime, stale_days: int,
                 drop_stale: bool) -> None:
        self.task, self.src, self.now = task, src, now
        self.stale_days, self.drop_stale = stale_days, drop_stale
        self.items: list[ContextItem] = []

    def _age(self, updated: str | None, text: str = "", kind: str = "") -> tuple[str, bool, float | None]:
        days = age_days(updated, self.now)
        stale = is_stale(text, kind, days, self.stale_days)
        return freshness_label(days) + (" (stale)" if stale else ""), stale, days

    def add_file(self, lane: str, path: str, text: str, reason: str, *, kind: str | None = None,
                 stale_ok: bool = True, default_conf: float | None = None) -> ContextItem | None:
        meta, body = _body(text)
        if not body:
            return None
        k = kind or str(meta.get("type") or path_kind(path))
        base = path_kind(path)
        conf = parse_confidence(meta.get("confidence"),
                                default_conf if default_conf is not None
                                else DEFAULT_CONFIDENCE.get(base, DEFAULT_CONFIDENCE["text"]))
        updated = normalize_date(meta.get("updated")) or normalize_date(meta.get("created") or meta.get("date"))
        fresh, stale, _ = self._age(updated, body, k)
        if not stale_ok:  # standing material: age is shown, never a reason to drop
            stale = False
            fresh = fresh.replace(" (stale)", "")
        it = ContextItem(lane=lane, status="", tokens=0, source=path, reason=reason, text=body,
                         freshness=fresh, confidence=conf, kind=k, stale=stale, updated=updated,
                         path=path, whole=True)
        self.items.append(it)
        return it


class _Guide(NamedTuple):
    """The guide lane's items (global guide, GUIDE.md, rules) and GUIDE.md's frontmatter."""

    items: list[ContextItem]
    meta: dict[str, Any]


class _NotesScan(NamedTuple):
    """What a scan of ``notes/`` frontmatter finds: the note paths, old path → the card that
    supersedes it, and the pinned cards with their frontmatter."""

    paths: list[str]
    superseded_by: dict[str, str]
    pinned: list[tuple[str, dict[str, Any]]]


class _Recalled(NamedTuple):
    """The recall behind the cards/thread/files lanes: the mode that answered, why, cards."""

    mode: str
    why: str
    cards: list[Card]


class _RecallLanes(NamedTuple):
    """Recall hits as items of the lanes they belong to, in recall order."""

    cards: list[ContextItem]
    thread: list[ContextItem]
    files: list[ContextItem]


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
    index_text = source.read_cached("knowledge/INDEX.md")
    sess_index = _sessions_index(source.read_cached("sessions/index.md"))
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
        why = f"index: map of the knowledge wiki ({n_pages} pages), open a page for details"
        if when is not None:
            index_text, cut = when.index(index_text)
            why += (f"; as of {as_of}: the map as it is now" + (
                f", {cut} summar{'ies' if cut != 1 else 'y'} naming a value begun after "
                f"{as_of} cut to the page's name" if cut else ""))
        b.add_file("index", "knowledge/INDEX.md", index_text, why, kind="index", stale_ok=False)
    _pinned_lane(b, source, notes.pinned)

    t = time.perf_counter()
    wiki = wiki or WikiUse()
    found = _recall_cards(source, task, k, now, stale_days, wiki, as_of, history)
    timings["recall_ms"] = (time.perf_counter() - t) * 1000
    lanes = _recall_lanes(found, source, notes.superseded_by, task, wiki, avail, when)
    if when is not None:
        when.supersession(notes.superseded_by)  # a card replaces another from its own day
        for it in (i for its in lanes for i in its):
            # a recalled piece of a file read whole elsewhere is read as of the day the same way
            if it.path == "knowledge/INDEX.md":
                it.text = when.index(it.text)[0]
            elif it.path == "GUIDE.md":
                it.text = when.guide(it.text)[0]
            elif it.path == "sessions/index.md":
                it.text = when.sessions_text(it.text)
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


def _count_pages(source: MemorySource, index_text: str | None) -> int:
    """The wiki's pages as they are now: the ``knowledge/*.md`` files (pages written since
    the last dream are not in INDEX.md yet), or INDEX.md's links where the folder cannot be
    listed."""
    pages = [p for p in source.list("knowledge")
             if p.endswith(".md") and p.count("/") == 1 and p != "knowledge/INDEX.md"]
    if pages:
        return len(pages)
    return len(re.findall(r"\[\[[^\]]+\]\]", index_text or "")) if index_text else 0


def _check_budget(budget: int, reserve: int) -> tuple[int, int]:
    """``budget`` and ``reserve`` as ints; ValueError when they leave nothing for memory."""
    budget, reserve = int(budget), int(reserve)
    if budget <= 0 or reserve < 0:
        raise ValueError(f"budget must be positive and reserve non-negative (got {budget}, {reserve})")
    if reserve >= budget:
        raise ValueError(f"reserve ({reserve}) must be smaller than the budget ({budget})")
    return budget, reserve


def _guide_lane(b: _Builder, source: MemorySource, when: AsOf | None = None) -> _Guide:
    """The global guide, the project's GUIDE.md and its ``rules/``, each whole (as of a
    day: GUIDE.md without the lines corrections after it wrote)."""
    items: list[ContextItem] = []
    gpath = source.global_guide
    gtext = None
    try:
        gtext = gpath.read_text(encoding="utf-8", errors="replace") if gpath and gpath.is_file() else None
    except OSError:
        gtext = None
    if gtext:
        it = b.add_file("guide", f"~global/{gpath.name}", gtext,
                        f"guide: global guide ({gpath}), applies in every memory", kind="guide",
                        stale_ok=False, default_conf=1.0)
        if it:
            items.append(it)
    guide_text = source.read_cached("GUIDE.md")
    guide_meta = _body(guide_text)[0] if guide_text else {}
    if guide_text:
        why = "guide: project guide, standing instructions for every turn here"
        if when is not None:
            guide_text, cut = when.guide(guide_text)
            if cut:
                why += (f"; as of {when.day}: {cut} line{'s' if cut != 1 else ''} a correction "
                        f"after {when.day} wrote left out")
        it = b.add_file("guide", "GUIDE.md", guide_text, why,
                        kind="guide", stale_ok=False, default_conf=1.0)
        if it:
            items.append(it)
    for rp in (p for p in source.list("rules") if p.endswith((".md", ".markdown", ".txt"))):
        rtext = source.read_cached(rp)
        if rtext:
            it = b.add_file("guide", rp, rtext, "guide: strict rule, applied whole on every turn",
                            kind="rule", stale_ok=False, default_conf=1.0)
            if it:
                it.kind = "rule"
                items.append(it)
    return _Guide(items, guide_meta)


def _scan_notes(source: MemorySource) -> _NotesScan:
    """Every note's frontmatter: the supersedes map and the pinned cards."""
    note_paths = [p for p in source.list("notes") if p.endswith((".md", ".markdown"))]
    superseded_by: dict[str, str] = {}
    pinned: list[tuple[str, dict[str, Any]]] = []
    for p in note_paths:
        meta = source.frontmatter(p)
        if not meta:
            continue
        for old in _supersedes(meta, p):
            superseded_by.setdefault(old, p)
        _own_supersession(meta, p, superseded_by)
        if _truthy(meta.get("pinned")):
            pinned.append((p, meta))
    return _NotesScan(note_paths, superseded_by, pinned)


def _scope(source: MemorySource, guide: _Guide, notes: _NotesScan, n_pages: int,
           n_sessions: int, newest: tuple[str, str, str] | None) -> dict[str, Any]:
    """The folder's metadata (the window's ``scope``, also the scope lane's text)."""
    meta = guide.meta
    scope: dict[str, Any] = {
        "project": str(meta.get("project") or meta.get("name") or source.name),
        "notes": str(meta.get("notes") or meta.get("user_notes") or "").strip() or None,
        "root": str(source.root) if source.root is not None else source.name,
        "knowledge_pages": n_pages,
        "note_cards": len(notes.paths),
        "pinned": len(notes.pinned),
        "rules": sum(1 for i in guide.items if i.kind == "rule"),
        "sessions": n_sessions,
        "newest_session": ({"id": newest[0], "date": newest[1][:10], "title": newest[2]}
                           if newest else None),
    }
    scope["summary"] = (f"{scope['knowledge_pages']} knowledge pages, {scope['note_cards']} note cards "
                        f"({scope['pinned']} pinned), {scope['sessions']} sessions"
                        + (f", newest {newest[1][:10]} \"{newest[2]}\"" if newest else "")
                        + f", {scope['rules']} rules")
    return scope


def _scope_item(scope: dict[str, Any], as_of: str | None = None) -> ContextItem:
    """The scope lane's one item: project, root and what the memory holds (as of a day:
    which day, so the model reads the rest as what held then)."""
    stext = f"Project: {scope['project']}\n"
    if scope["root"] != scope["project"]:  # a corpus URL names the project itself
        stext += f"Memory root: {scope['root']}\n"
    stext += f"Memory holds: {scope['summary']}"
    if scope["notes"]:
        stext += f"\nUser's notes: {scope['notes']}"
    reason = ("scope: folder metadata (project, notes, memory summary) from GUIDE.md "
              "frontmatter, knowledge/INDEX.md and sessions/index.md")
    if as_of:
        stext += f"\nAs of: {as_of} (what the memory held at the end of that day)"
        reason += f"; as of {as_of}: sessions up to that day, later statements left out"
    return ContextItem(
        lane="scope", status="", tokens=0, source="(folder scope)",
        reason=reason,
        text=stext, freshness="today", confidence=1.0, kind="scope", path="")


def _pinned_lane(b: _Builder, source: MemorySource, pinned: list[tuple[str, dict[str, Any]]]) -> None:
    """Pinned cards, newest first."""
    def upd(meta: dict[str, Any]) -> str:
        return normalize_date(meta.get("updated")) or normalize_date(meta.get("created")) or ""

    for rank, (p, meta) in enumerate(sorted(pinned, key=lambda x: upd(x[1]), reverse=True), 1):
        text = source.read(p)
        if text:
            it = b.add_file("pinned", p, text, f"pinned #{rank}: frontmatter says pinned: true")
            if it:
                it.rank = rank


def _recall_cards(source: MemorySource, task: str, k: int, now: _dt.datetime,
                  stale_days: int, wiki: WikiUse | None = None, as_of: str | None = None,
                  history: bool = False) -> _Recalled:
    """Recall for the task; a failure leaves the recall lanes empty, never breaks the turn.
    With ``wiki.pool`` > 1, recall is asked ``pool`` × ``k`` deep (at most ``K_MAX``, as
    recall's cost grows with it) and keeps every wiki page
    hit but only the first ``k`` others: a page's hits become one item of a few claim
    lines, so they must not take the places of the turns."""
    if source.index is None:
        return _Recalled("none", "no search index", [])
    emb = source.embedder()
    wiki = wiki or WikiUse()
    deep = wiki.claims and wiki.pool > 1
    try:
        res = recall(source.index, task, k=max(k, min(K_MAX, int(k * wiki.pool))) if deep else k,
                     embedder=emb,
                     now=now, stale_days=stale_days, max_chars=100_000, as_of=as_of,
                     history=history)
        why = res.why
        if emb is None and source.embedder_error:
            why += f" (embeddings unavailable: {source.embedder_error})"
        cards = res.cards
        if deep:
            others = [c for c in cards if not _is_page(c.path)][:k]
            keep = {id(c) for c in others}
            cards = [c for c in cards if id(c) in keep or _is_page(c.path)]
        return _Recalled(res.mode, why, cards)
    except Exception as e:  # noqa: BLE001 - the turn must not break: lanes stay empty
        log.warning("recall failed during context assembly: %s", e)
        return _Recalled("none", f"recall failed: {e}", [])


def _is_page(path: str) -> bool:
    return path.startswith("knowledge/") and not path.endswith("/INDEX.md")


def _recall_lanes(found: _Recalled, source: MemorySource,
                  superseded_by: dict[str, str], task: str = "",
                  wiki: WikiUse | None = None, avail: int | None = None,
                  when: AsOf | None = None) -> _RecallLanes:
    """Each recalled card as an item of its lane (notes and wiki pages → cards, session
    files → thread, the rest → files); a note's own ``supersedes:`` joins ``superseded_by``.
    With ``wiki.claims``, a wiki page's hits become one item of claim lines, where its best
    hit ranks (:func:`_page_claims_item`)."""
    wiki = wiki or WikiUse()
    cards = found.cards
    best = max((c.score for c in cards), default=0.0)
    page_best = best
    if wiki.claims and wiki.floor_by_kind:
        # Recall scores a page chunk by its subject's name too, so a wiki hit often leads
        # the list by far; the weak-match floor is then taken per kind (pages / the rest),
        # or one strong page would drop every turn as "weak".
        page_best = max((c.score for c in cards if _is_page(c.path)), default=0.0)
        best = max((c.score for c in cards if not _is_page(c.path)), default=0.0)
    lane_ranks = {"cards": 0, "thread": 0, "files": 0}
    lanes = _RecallLanes([], [], [])
    page_hits: dict[str, list[tuple[int, Card]]] = {}
    has_claims: dict[str, bool] = {}  # a page with no cited claim lines (hand-written) stays chunks
    floor = (wiki.turn_floor if wiki.claims and wiki.floor_by_kind and page_best > 0
             and any(_is_page(c.path) for c in cards) else RELATIVE_FLOOR)
    turn_refs = _stated_turns(cards, best, floor,
                              None if wiki.dedupe_share is None or avail is None
                              else wiki.dedupe_share * avail)
    for rank, c in enumerate(cards, 1):
        p = c.path
        if wiki.claims and _is_page(p) and has_claims.setdefault(
                p, bool(source.claims(p))):
            if p not in page_hits:
                page_hits[p] = []
                lane_ranks["cards"] += 1
                lanes.cards.append(_PagePlaceholder(p, lane_ranks["cards"]))  # type: ignore[arg-type]
            page_hits[p].append((rank, c))
            continue
        if p.startswith(("notes/", "knowledge/")) and not p.endswith("/INDEX.md"):
            lane, into = "cards", lanes.cards
        elif p.startswith("sessions/") and p != "sessions/index.md":
            lane, into = "thread", lanes.thread
        else:
            lane, into = "files", lanes.files
        lane_ranks[lane] += 1
        it = _card_item(c, lane, lane_ranks[lane], rank, len(cards), found.mode, best, floor)
        if p.startswith("knowledge/") and _links_only(c.text):
            it.status = "skipped"
            it.reason += " — skipped: a list of links to other pages (## Related), no statement"
        into.append(it)
        # Supersession known only from the recalled card itself (e.g. a mount whose notes
        # listing is partial): read its frontmatter too.
        if p.startswith("notes/"):
            meta = source.frontmatter(p)
            for old in _supersedes(meta, p):
                superseded_by.setdefault(old, p)
            _own_supersession(meta, p, superseded_by)
    for i, it in enumerate(lanes.cards):
        if isinstance(it, _PagePlaceholder):
            lanes.cards[i] = _page_claims_item(source, it.path, it.rank, page_hits[it.path],
                                               len(cards), found.mode, page_best, task, turn_refs, wiki,
                                               when)
    if wiki.after_turns:  # wiki lines take what the turns leave, in the files lane
        pages = [it for it in lanes.cards if it.path in page_hits]
        lanes.cards[:] = [it for it in lanes.cards if it.path not in page_hits]
        for it in pages:
            it.lane = "files"
            it.reason = "files" + it.reason[len("cards"):]
            it.weak = it.weak and "files" + it.weak[len("cards"):]
        lanes.files[:0] = pages
    return lanes


#: Tokens of an item's header line, roughly, for :func:`_stated_turns`'s estimate.
_HEADER_TOKENS = 15


def _stated_turns(cards: list[Card], best: float, floor: float, room: float | None) -> set[str]:
    """The refs of the recalled turns (not weak) that a wiki line may leave its statement
    to: all of them, or with ``room`` (tokens) only those that fit in it, in recall order —
    a turn ranked past what the window holds states nothing."""
    out: set[str] = set()
    spent = 0
    for c in cards:
        if not c.path.startswith("sessions/") or (best > 0 and c.score < floor * best):
            continue
        if room is not None:
            spent += estimate_tokens(c.text) + _HEADER_TOKENS
            if spent > room:
                break
        out.add(c.ref)
    return out


def _said(source: MemorySource, claim: Claim) -> str | None:
    """The day of the session whose turn a claim cites first (its transcript's ``date:``)."""
    path = claim.sources[0].split("#", 1)[0] if claim.sources else ""
    if not (claim.date and path.endswith("/transcript.md")):
        return None
    return (normalize_date(source.frontmatter(path).get("date")) or "")[:10] or None


_LINK_LINE = re.compile(r"^\s*[-*+]\s+\[\[[^\]]+\]\](?:\s*\([^)]*\))?\s*$")


def _links_only(text: str) -> bool:
    """Whether a chunk is only wikilinks (a page's ``## Related`` list)."""
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.startswith("#")]
    return bool(lines) and all(_LINK_LINE.match(ln) for ln in lines)


class _PagePlaceholder(NamedTuple):
    """Where a wiki page's claims item goes in the cards lane (its first hit's place)."""

    path: str
    rank: int


def _page_claims_item(source: MemorySource, path: str, lane_rank: int,
                      hits: list[tuple[int, Card]], n_cards: int, mode: str, best: float,
                      task: str, turn_refs: set[str], wiki: WikiUse,
                      when: AsOf | None = None) -> ContextItem:
    """One wiki page's recall hits as one cards item of claim lines (see :class:`WikiUse`):
    the lines of its recalled chunks, in recall order, that share ``wiki.overlap`` words
    with the task besides the page's names, less those whose cited turns are all recall
    hits too (``wiki.dedupe``, unless ``wiki.prefer_lines``), and repeats; a thread fragment is read as the whole timeline
    line it was cut from (or the longest fragment of the same turn). A task that names the
    page's subject also gets its lines of what is true now; a procedure page, its numbered
    steps first, all of them in order. A page none of whose lines is left is a skipped item
    that says why. As of a day (``when``) the page's lines are read
    as they stood then (:meth:`.asof.AsOf.page`)."""
    meta = source.frontmatter(path)
    claims = source.claims(path)
    view = when.page(claims) if when is not None else None
    if view is not None:
        claims = view.claims
    names = page_names(meta)
    want = words(task, names)
    # a task that names the page's subject gets what is true of it now, whatever its words
    named = names_page(meta, task)
    # A thread fragment is a cut of a timeline line: the whole line stands in for it, or,
    # when the timeline was cut (``max_timeline``), the longest fragment of the same turn.
    whole: dict[tuple[str, ...], Claim] = {}
    for cl in claims.values():
        if cl.section in ("now", "timeline"):
            whole.setdefault(cl.sources, cl)
    for cl in claims.values():
        if cl.section == "thread":
            have = whole.get(cl.sources)
            if have is None or (have.section == "thread" and len(cl.text) > len(have.text)):
                whole[cl.sources] = cl
    kept: list[Claim] = []
    considered: list[Claim] = []
    seen_text: set[str] = set()
    n_lines = n_other = n_dup = 0
    # the lines gathered across sessions of a page the task names come first, recalled or not
    gathered = [cl for cl in claims.values() if cl.section == "gathered"] if wiki.gathered and named else []
    # A procedure's steps come whole and in order, whichever of its chunks recall found: a
    # step rarely shares a word with the task that asks for the procedure, and no turn
    # states the steps as they stand once amended, so none is left to a turn either.
    steps = [cl for cl in claims.values() if cl.section == "step"]
    for cl in steps + [cl for cl in gathered if want & words(cl.text)] + [
            cl for _rank, c in hits for cl in chunk_claims(c.text, claims) if cl.section != "step"]:
        n_lines += 1
        considered.append(cl)
        if cl.section == "step":
            kept.append(cl)
            seen_text.add(cl.render())
            continue
        if cl.section == "thread":
            if not wiki.threads:
                n_other += 1
                continue
            cl = whole.get(cl.sources, cl)
        if len(want & words(cl.text)) < wiki.overlap and not (named and cl.section == "now"):
            n_other += 1
            continue
        if wiki.dedupe and not wiki.prefer_lines and set(cl.sources) <= turn_refs:
            n_dup += 1
            continue
        line = cl.render(_said(source, cl))
        if line in seen_text:
            continue
        seen_text.add(line)
        kept.append(cl)
    first_rank, top = hits[0]
    score = max(c.score for _r, c in hits)
    reason = (f"cards #{lane_rank} (recall #{first_rank} of {n_cards}, {mode}), score {score:.4f}: "
              f"wiki page, {len(hits)} recalled chunk{'s' if len(hits) != 1 else ''} holding "
              f"{n_lines} claim line{'s' if n_lines != 1 else ''}: {len(kept)} kept"
              + (f" ({len(steps)} step{'s' if len(steps) != 1 else ''} of the procedure, in order)"
                 if steps else "") + f", {n_other} "
              f"sharing no word with the task, {n_dup} already stated by a recalled turn or "
              f"line; {top.reason}")
    if view is not None and (view.later or view.then):
        reason += (f"; as of {when.day}: {view.later} line{'s' if view.later != 1 else ''} "  # type: ignore[union-attr]
                   f"not yet said or true left out, {view.then} replaced only later shown as "
                   "they stood")
    if kept:
        srcs = list(dict.fromkeys(s for cl in kept for s in cl.sources))
        reason += "; cites " + ", ".join(srcs[:6]) + (f" and {len(srcs) - 6} more" if len(srcs) > 6 else "")
    it = ContextItem(lane="cards", status="", tokens=0, source=path, reason=reason,
                     line_sources={cl.render(_said(source, cl)): cl.sources for cl in kept}
                     if wiki.prefer_lines else {},
                     text="\n".join(dict.fromkeys(cl.render(_said(source, cl)) for cl in (kept or considered)))
                     or top.text,
                     freshness=top.freshness + (" (stale)" if top.stale else ""),
                     confidence=top.confidence_pct / 100.0, kind="claims" if kept else top.kind,
                     stale=top.stale, score=score, rank=lane_rank, updated=top.updated,
                     path=path, anchor="")
    if not kept and claims:
        it.status = "skipped"
        it.reason += " — skipped: no claim line of the recalled chunks is about the task"
    elif not kept and view is not None and view.later:
        it.status = "skipped"
        it.reason += f" — skipped: every claim line of the page came after {when.day}"  # type: ignore[union-attr]
    if view is not None and not kept and not considered:
        it.text = ""  # the chunk as written may state what came later
    elif best > 0 and score < RELATIVE_FLOOR * best:
        it.weak = (f"cards #{lane_rank}: weak match, score {score:.4f} below "
                   f"{RELATIVE_FLOOR:.0%} of the best ({best:.4f})")
    return it


def _card_item(c: Card, lane: str, lane_rank: int, rank: int, n_cards: int, mode: str,
               best: float, floor: float = RELATIVE_FLOOR) -> ContextItem:
    """One recall hit as a lane item, marked weak when far below the best hit."""
    fresh = c.freshness + (" (stale)" if c.stale else "")
    reason = (f"{lane} #{lane_rank} (recall #{rank} of {n_cards}, {mode}), "
              f"score {c.score:.4f}: {c.reason}")
    if c.scope:
        reason += f"; scope {c.scope}"
    text = c.text
    if c.superseded_by:
        # recall ranked it below what replaced it; the model must not take it as current
        text += f"\n({c.superseded_by.get('mark') or 'superseded'})"
    it = ContextItem(lane=lane, status="", tokens=0, source=c.ref, reason=reason,
                     text=text, freshness=fresh, confidence=c.confidence_pct / 100.0,
                     kind=c.kind, stale=c.stale, score=c.score, rank=lane_rank,
                     updated=c.updated, path=c.path, anchor=c.anchor)
    if best > 0 and c.score < floor * best:
        it.weak = (f"{lane} #{lane_rank}: weak match, score {c.score:.4f} below "
                   f"{floor:.0%} of the best ({best:.4f})")
    return it


def _cards_lane(b: _Builder, source: MemorySource, lanes: _RecallLanes,
                notes: _NotesScan) -> list[ContextItem]:
    """The recalled cards, each followed by the newer card that supersedes it when only the
    superseded one matched."""
    cand_paths = {it.path for its in lanes for it in its} | {p for p, _ in notes.pinned}
    cards_lane: list[ContextItem] = []
    for it in lanes.cards:
        cards_lane.append(it)
        newer = notes.superseded_by.get(it.path)
        if newer and newer not in cand_paths and it.status != "skipped" and not it.weak:
            ntext = source.read(newer)
            if ntext:
                saved = len(b.items)
                nit = b.add_file("cards", newer, ntext,
                                 f"cards: supersedes {it.path}, which matched the task "
                                 f"(cards #{it.rank}); the newer statement wins")
                if nit:
                    b.items.pop(saved)
                    nit.rank = it.rank
                    cards_lane.append(nit)
                    cand_paths.add(newer)
    return cards_lane


#: Sessions whose recalled passages' scores sum to at least this share of the best
#: session's sum are "most related" to the task by recall.
THREAD_RELATED = 0.8


def _thread_summary(b: _Builder, source: MemorySource, hits: list[ContextItem],
                    sess_index: list[tuple[str, str, str]]) -> None:
    """The summary of the session the task continues, at the head of the thread lane.

    The sessions most related to the task are those whose recalled passages' scores sum
    to within ``THREAD_RELATED`` of the best session's sum (recall's evidence for the
    session: one strong turn of a session about something else weighs less than the many
    turns of the session the task continues). A recalled passage can come from a
    session about something else (a turn that names the task's funder in passing), so a
    session counts only when it is itself about the task: its name (id and title) shares a
    word with the task, or its summary at least half of the task's words (a summary names
    much in passing; a name is the topic). Of those, the newest with a summary is taken
    (recent first: the thread's latest state). None of them, no summary: the newest
    session whatever the task, or one met only in passing, would be noise — and when the
    session the task continues has no summary, its own passages lead the lane."""
    best: dict[str, float] = {}
    n_hits: dict[str, int] = {}
    for it in hits:
        parts = it.path.split("/")
        if it.status == "skipped" or it.weak or len(parts) < 3 or it.score is None:
            continue
        best[parts[1]] = best.get(parts[1], 0.0) + it.score
        n_hits[parts[1]] = n_hits.get(parts[1], 0) + 1
    want = words(b.task)
    if not best or not want:
        return
    top = max(best.values())
    dates = {sid: (date, title) for sid, date, title in sess_index}
    by_score = [sid for sid, sc in best.items() if sc >= THREAD_RELATED * top]
    newest_first = sorted(by_score, key=lambda x: (dates.get(x, ("", ""))[0], best[x], x), reverse=True)
    for sid in newest_first:
        date, title = dates.get(sid, ("", ""))
        named = want & words(f"{sid.replace('-', ' ')} {title}")
        sp = f"sessions/{sid}/summary.md"
        stext = source.read(sp)
        summed = want & words(_body(stext)[1]) if stext else set()
        if not named and 2 * len(summed) < len(want):
            continue  # met in passing: not the thread the task continues
        common = named | summed
        if not stext:
            return  # the newest session about the task has no summary: its passages lead
        said = f" ({date[:10]}, \"{title}\")" if date else ""
        n, m = n_hits[sid], len(by_score)
        b.add_file("thread", sp, stext,
                   f"thread: summary of the session the task continues{said}: the newest of the "
                   f"{m} session{'s' if m != 1 else ''} most related to the task by recall that is "
                   f"about it (its name or summary shares {', '.join(_task_words(b.task, common))}"
                   f"); {n} recalled passage{'s' if n != 1 else ''} of it")
        return


def _task_words(task: str, stems: set[str]) -> list[str]:
    """The task's own words whose stems (:func:`claims.words`) are in ``stems``, in order."""
    return list(dict.fromkeys(w for w in re.findall(r"[^\W_]+", task.lower()) if words(w) & stems))


def _count_tokens(items: list[ContextItem], count: Callable[[list[str]], list[int]]) -> None:
    """Every item's rendered size (pending items in one batch)."""
    pending = [i for i in items if i.status == ""]
    for i, n in zip(pending, count([i.rendered() for i in pending])):
        i.tokens = i.full_tokens = n
    for i in items:
        if i.status == "skipped" and not i.tokens:
            i.tokens = i.full_tokens = count([i.rendered()])[0]


class _Admission:
    """One admission pass over a window's items (rules in the module docstring): the running
    totals, what has been taken, and the items that wait for a backfill."""

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
