"""Semantic verification: is each cited claim supported by the source it cites?

A *claim* is the text of a line up to a ``[cite:N]`` marker (from the previous marker or
the start of the line), with Markdown, dates and link brackets removed. It is compared with
its source (the cited turn's text, or a card's body):

* with the embedding model (``cache.embedder``), cosine similarity ≥ ``similarity_threshold``;
* without it, the share of the claim's content words found in the source ≥
  ``lexical_threshold``.

A line with any rejected claim is dropped from the page (not published). Decisions are
cached by (claim, source text) hash so a rerun does not embed again.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from brainfs.cache.chunker import split_frontmatter

from .text import content_words, strip_annotations
from .validate import CITE_OK_RE

log = logging.getLogger(__name__)


@dataclass
class VerifyStats:
    claims: int = 0
    rejected: int = 0
    method: str = "lexical"
    embedded: int = 0  # claims the model had to decide
    rejected_examples: list[str] = field(default_factory=list)

    @property
    def share_rejected(self) -> float:
        return self.rejected / self.claims if self.claims else 0.0


_QUOTE_RE = re.compile(r"“([^”]{3,})”")


def claim_text(segment: str) -> str:
    """The checkable statement of a segment: its quotation when it quotes (the framing —
    who said it, when, that it was superseded — is the synthesizer's, not the source's),
    else the segment without list markers, dates and link brackets."""
    quotes = _QUOTE_RE.findall(segment)
    if quotes:
        return strip_annotations(" ".join(" ".join(quotes).split()))
    s = re.sub(r"^\s*[-*]\s+", "", segment)
    s = re.sub(r"^\d{4}-\d{2}-\d{2}\s+—\s+", "", s)
    s = s.replace("[[", "").replace("]]", "").replace("~~", "")
    s = strip_annotations(s)
    return " ".join(s.split()).strip(" —")


def lexical_support(claim: str, source: str, ignore: set[str] = frozenset()) -> float:
    cw = [w for w in dict.fromkeys(content_words(claim)) if w not in ignore]
    if not cw:
        return 1.0
    sw = set(content_words(source))
    return sum(1 for w in cw if w in sw) / len(cw)


class Verifier:
    """Checks claims against sources; ``embedder`` None → lexical overlap."""

    def __init__(self, embedder=None, similarity_threshold: float = 0.45,
                 lexical_threshold: float = 0.5, cache: dict[str, bool] | None = None):
        self.embedder = embedder
        self.sim = similarity_threshold
        self.lex = lexical_threshold
        self.cache = cache if cache is not None else {}
        self.stats = VerifyStats(method="embedding" if embedder is not None else "lexical")

    def _key(self, claim: str, source: str) -> str:
        return hashlib.sha1(f"{self.stats.method}\x00{claim}\x00{source}".encode()).hexdigest()[:20]

    def check_many(self, pairs: list[tuple[str, str, set[str]]]) -> list[bool]:
        """(claim, source text, words to ignore such as the speaker's name) → supported?"""
        out: list[bool | None] = []
        todo: list[int] = []
        for i, (c, s, _ig) in enumerate(pairs):
            k = self._key(c, s)
            if k in self.cache:
                out.append(self.cache[k])
            else:
                out.append(None)
                todo.append(i)
        if todo:
            # Clear lexical support (≥ 0.8 of the claim's words in the source: a quotation or
            # a close paraphrase) passes without the model; the rest is decided by the
            # embedding when there is one, else by the lexical threshold.
            lex = {i: lexical_support(*pairs[i]) for i in todo}
            undecided = []
            for i in todo:
                if lex[i] >= max(self.lex, 0.8):
                    out[i] = True
                elif self.embedder is None:
                    out[i] = lex[i] >= self.lex
                else:
                    undecided.append(i)
            if undecided:
                texts = []
                for i in undecided:
                    texts += [pairs[i][0], pairs[i][1] or " "]
                vecs = self.embedder.embed(texts)
                for j, i in enumerate(undecided):
                    cos = float((vecs[2 * j] * vecs[2 * j + 1]).sum())
                    out[i] = bool(pairs[i][1]) and cos >= self.sim
                    self.stats.embedded += 1
            for i in todo:
                self.cache[self._key(pairs[i][0], pairs[i][1])] = bool(out[i])
        return [bool(x) for x in out]

    def verify_file(self, path: str, text: str, source_text: Callable[[str], str | None],
                    ignore: set[str] = frozenset()) -> tuple[str, list[str]]:
        """Drop the lines of ``text`` whose claims their sources do not support.
        Returns (new text, rejected lines)."""
        meta, body, bad = split_frontmatter(text)
        if bad or not meta:
            return text, []
        sources = meta.get("sources") or []
        lines = body.split("\n")
        jobs: list[tuple[int, str, str]] = []
        for li, line in enumerate(lines):
            pos = 0
            for m in CITE_OK_RE.finditer(line):
                seg = claim_text(line[pos:m.start()])
                pos = m.end()
                for n in (int(x) for x in m.group(1).split(",")):
                    ref = sources[n - 1] if 0 < n <= len(sources) else None
                    src = source_text(ref) if isinstance(ref, str) else None
                    jobs.append((li, seg, src if src is not None else ""))
        if not jobs:
            return text, []
        verdicts = self.check_many([(c, s, set(ignore)) for _li, c, s in jobs])
        bad_lines: set[int] = set()
        for (li, c, s), ok in zip(jobs, verdicts):
            self.stats.claims += 1
            if not ok:
                self.stats.rejected += 1
                bad_lines.add(li)
                if len(self.stats.rejected_examples) < 20:
                    self.stats.rejected_examples.append(f"{path}: {c[:100]!r}")
        if not bad_lines:
            return text, []
        rejected = [lines[i] for i in sorted(bad_lines)]
        kept = [ln for i, ln in enumerate(lines) if i not in bad_lines]
        head = text[: len(text) - len(body)]
        return head + "\n".join(kept), rejected
