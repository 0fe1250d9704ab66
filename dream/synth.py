"""Synthesizers: turn attached facts into page text.

:class:`Synthesizer` is the interface; :class:`DeterministicSynthesizer` is the default
(offline, extractive: every claim is a quote of the turn it cites, so a rerun produces the
same bytes). The LLM synthesizer (``dream.llm``, any OpenAI-compatible endpoint) implements
the same protocol, and so does ``dream.llm.AgentSynthesizer`` (the user's agent, through MCP);
whatever they write still goes through validation and semantic verification before anything
is published, so they cannot publish a claim its citation does not support.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml


@dataclass
class Claim:
    """One cited statement on a page."""

    text: str          # the statement as it should read (without the [cite:N] marker)
    source: str        # sessions/<id>/transcript.md#D1:2 or a corpus path (a card)
    date: str | None
    section: str       # "Preferences", "Decisions", "Facts", "Corrections", "Superseded"
    extra: str = ""    # text after the citation (e.g. what superseded it)
    extra_source: str | None = None
    group: str | None = None  # sub-heading or kind inside the section (a current line's attribute)
    evidence: str = ""        # what the source says ("Mara: “I adopted a dog…”"), for a writer model
    rank: int = 0             # a timeline entry's informativeness rank (0 = most): what a size cap cuts last
    #: a gathered line's values, each with its own source ("pottery (July 2023)", ref): the
    #: line reads "text: value [cite:a], value [cite:b]" (gather.py)
    parts: tuple[tuple[str, str], ...] = ()


@dataclass
class PageSpec:
    """Everything a page is made from."""

    slug: str
    title: str
    type: str
    claims: list[Claim]
    related: list[tuple[str, int]]   # (slug, shared turns)
    mentions: int
    sessions: int
    first: str | None
    last: str | None
    titles: dict[str, str] = field(default_factory=dict)  # slug → title for link text
    aliases: list[str] = field(default_factory=list)
    is_user: bool = False      # the person whose memory this is
    gist: str = ""             # one-line current summary (INDEX.md)
    importance: float = 0.0    # INDEX.md rank (see wiki.importance)


class Synthesizer(Protocol):
    """Everything dream calls on a synthesizer (:class:`DeterministicSynthesizer` is the
    reference; ``dream.llm.LLMSynthesizer`` the model-backed one)."""

    #: recorded in the state: another name re-renders every file
    name: str
    #: whether it keeps answers in the state (``synth_cache``, see :meth:`bind_cache`)
    caches_answers: bool

    @property
    def effective_name(self) -> str:
        """The name of what actually rendered this run (a model that fell back differs)."""
        ...

    def page(self, spec: PageSpec) -> str: ...

    def summary(self, session: str, date: str | None, title: str, participants: list[str],
                turns: int, claims: list[Claim]) -> str: ...

    def index_line(self, spec: PageSpec) -> str: ...

    def bind_cache(self, cache: dict[str, str]) -> None:
        """Keep answers in ``cache`` (the state's, by prompt hash), when it caches any."""
        ...

    def prune_cache(self) -> None:
        """Drop cached answers no file of this run used."""
        ...

    def fallback(self, path: str) -> str | None:
        """Another rendering of a file validation rejected (None: keep the previous one)."""
        ...

    def report(self) -> dict[str, Any] | None:
        """What it did this run, for the stats (None: nothing to say)."""
        ...

    def note(self) -> str | None:
        """One line for the commit message, if any."""
        ...

    def ask_pending(self, progress: Any = None) -> bool:
        """Ask what the last rendering queued (a model's prompts, several at once); True
        when the wiki must be rendered again with the answers."""
        ...

    def checked(self, path: str, text: str, bad_lines: list[int]) -> str | None:
        """Verification's verdict on ``path`` (``bad_lines``: body lines holding a rejected
        claim): another rendering to publish instead (a model's page that failed falls back
        whole), or None to drop the rejected lines as usual."""
        ...


def frontmatter(meta: dict) -> str:
    """Stable YAML frontmatter (keys in the given order)."""
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{body}\n---\n"


class Sources:
    """The ``sources`` list of one file: [cite:N] names its N-th entry, in first-cited order
    (a writer that cites evidence 1..n first gets [cite:N] = evidence N)."""

    def __init__(self) -> None:
        self.refs: list[str] = []

    def cite(self, ref: str) -> str:
        if ref not in self.refs:
            self.refs.append(ref)
        return f"[cite:{self.refs.index(ref) + 1}]"


#: Page sections in order. What stands before ``## Timeline`` is what is true now: the
#: current lines ("Now", no heading, right under the intro) and live corrections.
SECTION_ORDER = ("Now", "Corrections", "Timeline", "Across sessions", "Superseded", "Threads")


def intro(spec: PageSpec) -> str:
    """The line under a page's title: type, aliases, how much the memory says about it."""
    art = "an" if spec.type[:1] in "aeiou" else "a"
    who = f"{spec.title} is {'the person whose memory this is' if spec.is_user else art + ' ' + spec.type}"
    span = spec.first if spec.first == spec.last else f"{spec.first} – {spec.last}"
    out = (f"{who}; {spec.mentions} mention{'s' if spec.mentions != 1 else ''} in {spec.sessions} "
           f"session{'s' if spec.sessions != 1 else ''}" + (f", {span}" if spec.first else "") + ".")
    if spec.aliases:
        out += " Also called: " + ", ".join(spec.aliases) + "."
    return out


class DeterministicSynthesizer:
    """Offline and byte-for-byte reproducible: the page's lines as :mod:`.pages` wrote them."""

    name = "deterministic-v3"
    caches_answers = False

    @property
    def effective_name(self) -> str:
        return self.name

    def bind_cache(self, cache: dict[str, str]) -> None:
        """Nothing to cache: the rendering is a function of its input."""

    def prune_cache(self) -> None:
        """Nothing cached."""

    def fallback(self, path: str) -> str | None:
        """None: this is the fallback of the others."""
        return None

    def report(self) -> dict[str, Any] | None:
        return None

    def note(self) -> str | None:
        return None

    def ask_pending(self, progress: Any = None) -> bool:
        """Nothing to ask."""
        return False

    def checked(self, path: str, text: str, bad_lines: list[int]) -> str | None:
        """None: a rejected line is dropped, the rest of the page stands."""
        return None

    def page(self, spec: PageSpec) -> str:
        src = Sources()
        lines: list[str] = [f"# {spec.title}", "", intro(spec), ""]
        for section in SECTION_ORDER:
            claims = [c for c in spec.claims if c.section == section]
            if not claims:
                continue
            if section != "Now":
                lines += [f"## {section}", ""]
            if section == "Threads":
                lines += thread_lines(claims, src.cite)
                continue
            lines += [claim_line(c, src.cite) for c in claims]
            lines.append("")
        return finish_page(spec, lines, src.refs, self.name)

    def summary(self, session: str, date: str | None, title: str, participants: list[str],
                turns: int, claims: list[Claim]) -> str:
        src = Sources()
        lines = [f"# Session {session}" + (f" — {date}" if date else ""), "",
                 f"Participants: {', '.join(participants) or 'unknown'}. {turns} turns.", ""]
        for c in claims:
            lines.append(f"- {c.text} {src.cite(c.source)}")
        meta = {"session": session, "date": date or "", "title": title, "type": "summary",
                "participants": participants, "turns": turns, "sources": src.refs,
                "generator": self.name}
        return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"

    def index_line(self, spec: PageSpec) -> str:
        return index_line(spec)


def index_line(spec: PageSpec, gist: str | None = None) -> str:
    """``- [[slug]] Title — type; current summary`` (cut at 100 characters)."""
    g = (spec.gist if gist is None else gist).replace("[[", "").replace("]]", "")
    if len(g) > 100:
        g = g[:97].rsplit(" ", 1)[0] + "…"
    kind = "the user" if spec.is_user else spec.type
    return f"- [[{spec.slug}]] {spec.title} — {kind}" + (f"; {g}" if g else "")


def thread_lines(claims: list[Claim], cite: Callable[[str], str]) -> list[str]:
    """``### topic`` and its dated mentions, for each thread in order."""
    out: list[str] = []
    for group in dict.fromkeys(c.group for c in claims):
        out += [f"### {group}", ""]
        out += [claim_line(c, cite) for c in claims if c.group == group]
        out.append("")
    return out


def claim_line(c: Claim, cite: Callable[[str], str]) -> str:
    """One dated, cited bullet (with its superseding or correcting remark, if any)."""
    when = f"{c.date} — " if c.date else ""
    if c.parts:  # a gathered line: each value cites its own statement
        return f"- {when}{c.text}: " + ", ".join(f"{v} {cite(src)}" for v, src in c.parts)
    line = f"- {when}{c.text} {cite(c.source)}"
    if c.extra:
        line += f" {c.extra}"
        if c.extra_source:
            line += f" {cite(c.extra_source)}"
    return line


def finish_page(spec: PageSpec, lines: list[str], sources: list[str], generator: str) -> str:
    """``## Related`` and the frontmatter around a page body, whoever wrote the body."""
    lines = list(lines)
    if spec.related:
        lines += ["## Related", ""]
        for s, n in spec.related:
            lines.append(f"- [[{s}]] — {spec.titles.get(s, s)}, {n} shared turn{'s' if n != 1 else ''}")
        lines.append("")
    meta = {"title": spec.title, "type": spec.type, "aliases": list(spec.aliases),
            "updated": spec.last or "", "sources": sources, "generator": generator}
    return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"
