"""What a context window is made of and how it reads: :class:`ContextItem` (one piece of
memory and the decision about it) and :class:`ContextWindow` (the budget, the decisions,
and the JSON, prompt, Markdown and HTML renderings of ``brainfs context``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .page import render
from .policy import LANES, STATUSES, TASK_LANES, TASK_SHARE


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


def _md_cell(s: str) -> str:
    return " ".join(str(s).split()).replace("|", "\\|")
