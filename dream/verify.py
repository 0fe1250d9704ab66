"""Semantic verification: is each cited claim supported by the source it cites?

A *claim* is the text of a line up to a ``[cite:N]`` marker (from the previous marker or
the start of the line), with Markdown, dates and link brackets removed. It is compared with
its source (the cited turn's text, or a card's body):

* with the embedding model (``cache.embedder``), cosine similarity ≥ ``similarity_threshold``;
* without it, the share of the claim's content words found in the source ≥
  ``lexical_threshold``.

Before either, a **hard check** (:func:`hard_check`): every name, number, date and file
format the claim states must be in its source, or derivable from it (the session's date and
the resolved relative dates and aliases that dream appends to the source text). "Met in
Osaka" against a source saying Kyoto, "3 dogs" against "two dogs", PNG for PDF are
rejected however similar the rest of the sentence is.

A line with any rejected claim is dropped from the page (not published). Decisions are
cached by (claim, source text) hash so a rerun does not embed again.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from brainfs.cache.search.queryterms import STOPWORDS

from .gather import FRAME_WORDS as GATHER_FRAME
from .text import content_words, strip_annotations
from .validate import CITE_OK_RE, frontmatter_of

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
    s = re.sub(r"^\s*(?:[-*]|\d{1,3}\.)\s+", "", segment)  # a bullet or a numbered step
    s = re.sub(r"^\d{4}-\d{2}-\d{2}\s+—\s+", "", s)
    s = s.replace("[[", "").replace("]]", "").replace("~~", "")
    s = strip_annotations(s)
    return " ".join(s.split()).strip(" —")


#: Words of the wiki's own framing ("since", "replaced by", "works at"): not evidence.
FRAME_WORDS = frozenset("since until from replaced ended works worked lives lived prefers "
                        "preferred wants wanted leads led correction corrected contradicted "
                        "asked confirmed".split()) | GATHER_FRAME


def _stem(w: str) -> str:
    for suf in ("ies", "es", "s"):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def lexical_support(claim: str, source: str, ignore: set[str] = frozenset()) -> float:
    cw = [w for w in dict.fromkeys(content_words(claim)) if w not in ignore and w not in FRAME_WORDS]
    if not cw:
        return 1.0
    sw = {_stem(w) for w in content_words(source)}
    return sum(1 for w in cw if _stem(w) in sw) / len(cw)


_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"]
_MON_RE = "|".join(_MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_DATE_RES = [
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon>{_MON_RE})\b(?:\s+(?P<y>\d{{4}}))?", re.I),
    re.compile(rf"\b(?P<mon>{_MON_RE})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?", re.I),
    re.compile(rf"\b(?P<mon>{_MON_RE})\b(?:\s+(?P<y>\d{{4}}))?", re.I),
]
_NUM_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
              "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
              "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
              "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
              "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
              "hundred": 100, "thousand": 1000, "dozen": 12, "twice": 2, "once": 1, "both": 2,
              "couple": 2, "pair": 2}
_NAME_RE = re.compile(r"\b[A-Z][\w\-]*(?:['’]s)?\b|\b[A-Z]{2,}\b")
_SKIP_NAMES = frozenset("the a an i it this that these those there here he she they we you my "
                        "his her their our your its correction also and but or so".split())
#: Common words that open a sentence capitalised without being a name.
_OPENERS = frozenset("""according after before during then later also both today yesterday
tomorrow once when while since until in on at for with from by as because although however
meanwhile finally first next last some many most all every each another other such what
which who why how where everyone people nobody someone something if though yes no not
""".split())


def _dates(text: str) -> tuple[list[tuple], str]:
    """(year, month, day) triples (None where not said) in ``text``, and the text without them."""
    out = []
    for rx in _DATE_RES:
        def sub(m: re.Match[str]) -> str:
            g = m.groupdict()
            mon = g.get("mon")
            month = int(g["m"]) if g.get("m") else (_month(mon) if mon else None)
            out.append((int(g["y"]) if g.get("y") else None, month,
                        int(g["d"]) if g.get("d") else None))
            return " "
        text = rx.sub(sub, text)
    return out, text


def _month(name: str) -> int:
    low = name.lower()[:3]
    return next(i + 1 for i, m in enumerate(_MONTHS) if m.startswith(low))


def _numbers(text: str) -> set[float]:
    out = {float(x.replace(",", "")) for x in re.findall(r"(?<![\w:])\d+(?:[.,]\d+)?(?![\w:])", text)
           if x.replace(",", "").replace(".", "", 1).isdigit()}
    out |= {float(_NUM_WORDS[w]) for w in re.findall(r"[a-z]+", text.lower()) if w in _NUM_WORDS}
    return out


def hard_check(claim: str, source: str) -> bool:
    """Every name, number and date of ``claim`` is in ``source`` (see the module docstring)."""
    if not source:
        return False
    cdates, crest = _dates(claim)
    sdates, srest = _dates(source)
    for cy, cm, cd in cdates:
        if not any((cy is None or sy is None or cy == sy) and (cm is None or sm is None or cm == sm)
                   and (cd is None or sd is None or cd == sd) and (sm is not None or cm is None)
                   for sy, sm, sd in sdates):
            return False
    snums = _numbers(srest) | _numbers(source)
    for n in _numbers(crest) - {1.0}:  # "a"/"once": too common to require
        if n not in snums:
            return False
    swords = {x for w in re.findall(r"[\w\-]+", source) for x in (w.lower(), w.lower().strip("-"))}
    for m in _NAME_RE.finditer(crest):
        w = re.sub(r"['’]s$", "", m.group(0)).strip("-")
        low = w.lower()
        if low in _SKIP_NAMES or low in _MONTHS or low in swords or _stem(low) in swords:
            continue
        at_start = m.start() == 0 or re.search(r"(?:^|[.:;!?—]\s*|,\s+)$", crest[:m.start()])
        if at_start and (low in STOPWORDS or low in _OPENERS):
            continue
        return False
    return True


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
        return hashlib.sha1(f"{self.stats.method}-v2\x00{claim}\x00{source}".encode()).hexdigest()[:20]

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
                if not hard_check(pairs[i][0], pairs[i][1]):
                    out[i] = False
                elif lex[i] >= max(self.lex, 0.8):
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
        return drop_lines(text, self.check_file(path, text, source_text, ignore).bad_lines)

    def check_file(self, path: str, text: str, source_text: Callable[[str], str | None],
                   ignore: set[str] = frozenset(),
                   known: Callable[[str, str], bool | None] | None = None,
                   found: Callable[[str, str, bool], None] | None = None) -> FileVerdict:
        """Each claim of ``text`` against its source: how many, how many rejected, and the
        body lines (numbered from 0 after the frontmatter) that hold a rejected one.
        ``known(claim, ref)``: a verdict already known for the claim against that source
        (None: check it); ``found(claim, ref, verdict)`` hears every verdict."""
        meta, body, bad = frontmatter_of(text)
        if bad or not meta:
            return FileVerdict(0, 0, [])
        sources = meta.get("sources") or []
        lines = body.split("\n")
        jobs: list[tuple[int, str, str | None, bool | None, str]] = []
        for li, line in enumerate(lines):
            pos = 0
            for m in CITE_OK_RE.finditer(line):
                seg = claim_text(line[pos:m.start()])
                pos = m.end()
                for n in (int(x) for x in m.group(1).split(",")):
                    ref = sources[n - 1] if 0 < n <= len(sources) else None
                    if not isinstance(ref, str):
                        jobs.append((li, seg, None, None, ""))
                        continue
                    ok = known(seg, ref) if known is not None else None
                    src = source_text(ref) if ok is None else None
                    jobs.append((li, seg, ref, ok, src if src is not None else ""))
        if not jobs:
            return FileVerdict(0, 0, [])
        todo = [j for j in jobs if j[3] is None]
        checked = iter(self.check_many([(c, s, set(ignore)) for _li, c, _r, _ok, s in todo]))
        bad_lines: set[int] = set()
        rejected = 0
        for li, c, ref, ok, _s in jobs:
            if ok is None:
                ok = next(checked)
            if found is not None and ref is not None:
                found(c, ref, ok)
            self.stats.claims += 1
            if not ok:
                rejected += 1
                self.stats.rejected += 1
                bad_lines.add(li)
                if len(self.stats.rejected_examples) < 20:
                    self.stats.rejected_examples.append(f"{path}: {c[:100]!r}")
        return FileVerdict(len(jobs), rejected, sorted(bad_lines))


@dataclass
class FileVerdict:
    """What verification found in one file (what a later run replays when neither the file
    nor what its citations read changed)."""

    claims: int
    rejected: int
    bad_lines: list[int]  # body lines holding a rejected claim, from 0 after the frontmatter


def drop_lines(text: str, bad_lines: list[int]) -> tuple[str, list[str]]:
    """``text`` without the body lines ``bad_lines`` (see :class:`FileVerdict`); and those
    lines."""
    if not bad_lines:
        return text, []
    _meta, body, _bad = frontmatter_of(text)
    lines = body.split("\n")
    drop = set(bad_lines)
    rejected = [lines[i] for i in sorted(drop)]
    # a section whose every line is dropped goes with its heading: a page shows no
    # "## Corrections" with nothing under it
    drop |= {j for i, ln in enumerate(lines) if ln.startswith("## ")
             for j in _emptied_section(lines, i, drop)}
    kept = [ln for i, ln in enumerate(lines) if i not in drop]
    head = text[: len(text) - len(body)]
    return head + "\n".join(kept), rejected


def _emptied_section(lines: list[str], at: int, drop: set[int]) -> list[int]:
    """The heading at ``at`` and its blank lines when the section had lines and every one
    of them is in ``drop``; [] otherwise."""
    rest = []
    for i in range(at + 1, len(lines)):
        if lines[i].startswith("#"):
            break
        rest.append(i)
    content = [i for i in rest if lines[i].strip()]
    return [at, *rest] if content and all(i in drop for i in content) else []
