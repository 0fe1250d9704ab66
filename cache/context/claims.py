"""Wiki claims for context assembly: a knowledge page read as its dated, cited lines.

Dream writes a page (dream/README.md, *Pages*) as an intro, the lines true **now**, a
``## Timeline``, ``## Across sessions`` (one line per kind of thing a person said across
sessions: "Melanie's activities and hobbies: swimming (May 2023), camping (June 2023), …",
each value cited), ``## Superseded``, ``## Threads`` (fragments of timeline facts gathered by
topic) and ``## Related`` (links). Recall finds a page by its chunks, a few claim lines each
(``chunker.CLAIM_CHARS``); read whole, a chunk also brings lines the task did not ask about,
its ``[cite:N]`` markers and the page's frontmatter sources, none of which helps a reader
inside a small budget. Here a page is parsed into :class:`Claim` lines, each with its
section, its date and the transcript turns it cites, so that assembly can admit only the
lines of the recalled chunks that share a word with the task, render each in a few tokens
("12 July 2023 — Melanie ran a charity race."), and drop a line whose cited turn is
already in the context. A procedure page's numbered steps are claims of section ``step``
that keep their number: assembly reads them together, in order (a step rarely shares a
word with the task that asks for the procedure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from brainfs.cache.search.chunker import human_date, split_frontmatter
from brainfs.cache.search.queryterms import STOPWORDS

#: Sections whose lines are claims, by the heading that opens them ("" = the lines under
#: the intro: what is true now). ``## Related`` (links) and ``## Corrections`` (cards that
#: recall finds on their own) are not claims.
CLAIM_SECTIONS = {"": "now", "timeline": "timeline", "superseded": "superseded",
                  "threads": "thread", "across sessions": "gathered"}
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(?P<body>\S.*)$")
#: A numbered line under a page's intro: a step of a procedure page (``type: procedure``,
#: dream/procedures.py), read as a claim of section ``step`` that keeps its number.
_NUMBERED = re.compile(r"^\s{0,3}(?P<n>\d{1,3})[.)]\s+(?P<body>\S.*)$")
_DATED = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})(?:\s*[–-]\s*\d{4}-\d{2}-\d{2})?\s+[—–-]+\s+(?P<text>.+)$")
_CITE = re.compile(r"\s*\[cite:\s*(?P<n>[0-9][0-9,\s]*)\]")
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Claim:
    """One line of a knowledge page: its section (``now``, ``step``, ``timeline``,
    ``superseded``, ``thread``, ``gathered``), date (ISO day or None), text without
    citation markers, and the sources (``sessions/<id>/transcript.md#D1:3``) its
    ``[cite:N]`` markers resolve to."""

    page: str
    section: str
    date: str | None
    text: str
    sources: tuple[str, ...]
    raw: str

    def render(self, said: str | None = None) -> str:
        """The claim as one short line for the model: the date as a person writes it
        ("12 July 2023"), the text with its ISO dates written the same way, no markers;
        a superseded value says so. ``said`` is the day of the session that stated it
        (ISO): when the line is dated otherwise (an event "last Friday" is dated that
        Friday), the line says both, as people date such events by when they were told."""
        text = _ISO.sub(lambda m: human_date(m.group(1)) or m.group(1), self.text)
        if self.section == "step":  # "2. Write a one-page summary": its number is its place
            return text
        head = (human_date(self.date) or self.date) if self.date else ""
        if head and said and said[:10] != self.date:
            head += f" (said {human_date(said) or said})"
        mark = "no longer true: " if self.section == "superseded" else ""
        return f"- {head + ' — ' if head else ''}{mark}{text}"


def _key(line: str) -> str:
    return " ".join(line.split())


def page_claims(path: str, text: str) -> dict[str, Claim]:
    """Every claim line of the page at ``path``, keyed by the line as written (whitespace
    collapsed), so a recalled chunk's lines find their claims."""
    meta, body, bad = split_frontmatter(text.replace("\r\n", "\n"))
    sources = [str(s) for s in ((meta or {}).get("sources") or [])] if not bad else []
    procedure = not bad and (meta or {}).get("type") == "procedure"
    out: dict[str, Claim] = {}
    section: str | None = CLAIM_SECTIONS[""]
    for line in body.split("\n"):
        if line.startswith("## "):
            section = CLAIM_SECTIONS.get(line[3:].strip().lower())
            continue
        if line.startswith("### ") or section is None:
            continue
        m = _BULLET.match(line)
        # only a procedure's numbered lines are its steps: elsewhere (a numbered hand line in
        # a person's page) a line that always comes whole would crowd out the task's lines
        step = None if m or section != "now" or not procedure else _NUMBERED.match(line)
        if step:
            m = step
        if not m:
            continue
        cites: list[str] = []
        for c in _CITE.finditer(m.group("body")):
            for n in re.findall(r"\d+", c.group("n")):
                if 0 < int(n) <= len(sources):
                    cites.append(sources[int(n) - 1])
        if not cites:  # an uncited line (a link, a note) states nothing checkable
            continue
        plain = _CITE.sub("", m.group("body")).strip()
        d = _DATED.match(plain)
        date, claim_text = (d.group("date"), d.group("text")) if d else (None, plain)
        if step:
            claim_text = f"{step.group('n')}. {plain}"
        out[_key(line)] = Claim(path, "step" if step else section, date, claim_text.strip(),
                                tuple(dict.fromkeys(cites)), line)
    return out


def chunk_claims(chunk: str, claims: dict[str, Claim]) -> list[Claim]:
    """The claims whose lines a recalled chunk of their page holds, in the chunk's order."""
    out = []
    for line in chunk.split("\n"):
        c = claims.get(_key(line))
        if c is not None:
            out.append(c)
    return out


def stem(word: str) -> str:
    """A crude stem, enough to match a task's word to a line's: one ending (-ing, -ed,
    -es, -s) off, then at most six letters ("leads"/"lead", "painted"/"painting")."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:6]


def words(text: str, drop: frozenset[str] = frozenset()) -> set[str]:
    """Stems (:func:`stem`) of the lower-case words of ``text`` longer than two letters
    (digits kept), less stop words (``queryterms.STOPWORDS``) and the words in ``drop``."""
    return {stem(w) for w in _WORD.findall(text.lower())
            if (len(w) > 2 or w.isdigit()) and w not in drop and w not in STOPWORDS}


def page_names(meta: dict[str, Any]) -> frozenset[str]:
    """The words of a page's title and aliases: every line of the page is about them, so
    they say nothing about which line answers a task."""
    names = [str(meta.get("title") or "")] + [str(a) for a in (meta.get("aliases") or [])]
    return frozenset(w for n in names for w in _WORD.findall(n.lower()))


def names_page(meta: dict[str, Any], task: str) -> bool:
    """Whether ``task`` names the page's subject: every word of its title, or of one of
    its aliases, stands in the task."""
    have = set(_WORD.findall(task.lower()))
    names = [str(meta.get("title") or "")] + [str(a) for a in (meta.get("aliases") or [])]
    return any(ws and ws <= have for ws in (set(_WORD.findall(n.lower())) for n in names))
