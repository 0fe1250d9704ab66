"""Synthesizers: turn attached facts into page text.

:class:`Synthesizer` is the interface; :class:`DeterministicSynthesizer` is the default
(offline, extractive: every claim is a quote of the turn it cites, so a rerun produces the
same bytes). An LLM synthesizer (any OpenAI-compatible endpoint) would implement the same
three methods; whatever it writes still goes through validation and semantic verification
before anything is published, so it cannot publish a claim its citation does not support.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

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
    group: str | None = None  # sub-heading inside the section (a thread's topic word)


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


class Synthesizer(Protocol):
    """What dream needs from a synthesizer."""

    name: str

    def page(self, spec: PageSpec) -> str: ...

    def summary(self, session: str, date: str | None, title: str, participants: list[str],
                turns: int, claims: list[Claim]) -> str: ...

    def index_line(self, spec: PageSpec) -> str: ...


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


SECTION_ORDER = ("Preferences", "Decisions", "Facts", "Threads", "Corrections", "Superseded")


class DeterministicSynthesizer:
    """Extractive, offline, byte-for-byte reproducible."""

    name = "deterministic-v2"

    def page(self, spec: PageSpec) -> str:
        src = Sources()
        lines: list[str] = [f"# {spec.title}", ""]
        span = spec.first if spec.first == spec.last else f"{spec.first} – {spec.last}"
        intro = (f"{spec.title} ({spec.type}) is mentioned in {spec.mentions} turn"
                 f"{'s' if spec.mentions != 1 else ''} across {spec.sessions} session"
                 f"{'s' if spec.sessions != 1 else ''}" + (f", {span}" if spec.first else "") + ".")
        if spec.related:
            intro += " Related: " + ", ".join(f"[[{s}]]" for s, _ in spec.related[:5]) + "."
        lines += [intro, ""]
        for section in SECTION_ORDER:
            claims = [c for c in spec.claims if c.section == section]
            if not claims:
                continue
            lines.append(f"## {section}")
            lines.append("")
            if section == "Threads":
                # one sub-heading per topic followed across sessions, its mentions in order
                for group in dict.fromkeys(c.group for c in claims):
                    lines += [f"### {group}", ""]
                    for c in claims:
                        if c.group == group:
                            lines.append(f"- {c.date or 'undated'} — {c.text} {src.cite(c.source)}")
                    lines.append("")
                continue
            if section == "Facts":
                sentinel = object()
                last_date: object = sentinel
                for c in claims:
                    if c.date != last_date:
                        if last_date is not sentinel and lines[-1] != "":
                            lines.append("")
                        lines += [f"### {c.date or 'undated'}", ""]
                        last_date = c.date
                    lines.append(f"- {c.text} {src.cite(c.source)}")
                lines.append("")
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
        first = next((c for c in spec.claims if c.section in ("Preferences", "Decisions", "Facts")), None)
        gist = ""
        if first is not None:
            gist = first.text.replace("[[", "").replace("]]", "")
            if len(gist) > 90:
                gist = gist[:87].rsplit(" ", 1)[0] + "…"
            gist = "; " + gist
        return f"- [[{spec.slug}]] — {spec.type}, {spec.mentions} mentions{gist}"


def claim_line(c: Claim, cite: Callable[[str], str]) -> str:
    """One dated, cited bullet (with its superseding or correcting remark, if any)."""
    when = f"{c.date} — " if c.date else ""
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
    meta = {"title": spec.title, "type": spec.type, "updated": spec.last or "",
            "sources": sources, "generator": generator}
    return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"
