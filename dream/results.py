"""What one dream run would publish (:class:`RunResult`): the staged tree, each change with
its reason, the state, the problems and the stats; its diff and its commit message."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field

from brainfs.backend.keys import is_internal

from .state import DreamState
from .validate import Problem


@dataclass
class Change:
    """One file a run adds, modifies or deletes, and why."""

    path: str
    action: str  # add / modify / delete
    reason: str

    def __str__(self) -> str:
        sign = {"add": "A", "modify": "M", "delete": "D"}[self.action]
        return f"{sign} {self.path} — {self.reason}"


@dataclass
class RunResult:
    """What one run would publish."""

    nothing_new: bool
    staged: dict[str, str] = field(default_factory=dict)       # full managed tree
    changes: list[Change] = field(default_factory=list)
    state: DreamState = field(default_factory=DreamState)
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    previous: dict[str, str | None] = field(default_factory=dict)  # old text of changed paths
    deferred: list[str] = field(default_factory=list)

    @property
    def changed(self) -> dict[str, str]:
        return {c.path: self.staged[c.path] for c in self.changes if c.action != "delete"}

    @property
    def deleted(self) -> list[str]:
        return [c.path for c in self.changes if c.action == "delete"]

    def diff(self) -> str:
        out = []
        for c in self.changes:
            old = (self.previous.get(c.path) or "").splitlines(keepends=True)
            new = ("" if c.action == "delete" else self.staged[c.path]).splitlines(keepends=True)
            out.append(f"# {c}\n")
            out.extend(difflib.unified_diff(old, new, f"a/{c.path}", f"b/{c.path}"))
        return "".join(out)

    def commit_message(self) -> str:
        counts = Counter(c.action for c in self.changes)
        head = (f"dream: {counts.get('add', 0)} added, {counts.get('modify', 0)} updated, "
                f"{counts.get('delete', 0)} deleted")
        body = [str(c) for c in self.changes if not is_internal(c.path)]
        st = self.stats
        tail = [f"sessions read: {st.get('sessions_read', 0)}; claims: {st.get('claims', 0)}; "
                f"rejected by verification: {st.get('rejected', 0)} ({st.get('verify_method')})"]
        if st.get("synth_note"):
            tail.append(st["synth_note"])
        if self.problems:
            tail.append(f"validation problems: {len(self.problems)}")
        return head + "\n\n" + "\n".join(body) + "\n\n" + "\n".join(tail) + "\n"

