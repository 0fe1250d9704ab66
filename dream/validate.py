"""Deterministic validation of a staged wiki tree: objective criteria, one message per problem.

Checked, per file kind:

* ``knowledge/<slug>.md`` — frontmatter present and a mapping; ``title``, ``type``,
  ``updated`` non-empty; ``sources`` a non-empty list; a body with content; every citation
  written ``[cite:N]`` (N ≥ 1, or ``[cite:1,2]``); every N names ``sources[N-1]``; every
  source exists in the corpus (a transcript source must name a turn that exists in that
  transcript); every list item outside ``## Related`` carries a citation (a claim without
  evidence is not published); every ``[[link]]`` names a page in the staged tree.
* ``knowledge/INDEX.md`` — links resolve; size within the token cap (≈ characters / 4).
* ``sessions/<id>/summary.md`` — ``session``, ``date``, ``title``, ``type: summary``;
  citations as above.
* ``notes/corrections/*.md`` — ``type``, ``scope``, ``confidence``, ``created``, ``updated``;
  ``supersedes`` (when present: a path or a list of paths) names existing cards.
* ``knowledge/.facts.jsonl`` — every line a fact record (``cache/facts/records.py``); every
  source resolves as a page's does; every ``superseded_by`` names a record of the file.
* Across pages: no two pages with the same title (case-insensitive) or the same body.

``severity`` is ``error`` (the file is not published) or ``warning`` (published, reported).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from brainfs.cache.facts.records import FACTS_PATH, FactFormatError, loads
# the index's path, named by the tree's layout (re-exported: dream's modules read it here)
from brainfs.cache.layout import INDEX_PATH as INDEX_PATH
from brainfs.cache.layout import NOTES, in_knowledge, page_path
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.text import estimate_tokens

CITE_ANY_RE = re.compile(r"\[\s*cite\b[^\]]*\]", re.I)
CITE_OK_RE = re.compile(r"\[cite:([1-9][0-9]*(?:,\s*[1-9][0-9]*)*)\]")
LINK_RE = re.compile(r"\[\[([^\]\|#]+)(?:[#|][^\]]*)?\]\]")
TURN_SRC_RE = re.compile(r"^sessions/([^/]+)/transcript\.md#(.+)$")

#: text → its split frontmatter, until :func:`clear_parsed`: one run validates its files
#: three or four times and verifies them once, each reading the same frontmatter.
_parsed: dict[str, tuple[dict | None, str, bool]] = {}


def frontmatter_of(text: str) -> tuple[dict | None, str, bool]:
    """``split_frontmatter(text)``, parsed once per run (do not change what it returns)."""
    got = _parsed.get(text)
    if got is None:
        if len(_parsed) >= 50_000:
            _parsed.clear()  # a caller that never clears (not a dream run) stays bounded
        got = _parsed[text] = split_frontmatter(text)
    return got


def clear_parsed() -> None:
    """Forget the frontmatter parsed so far (the end of a run)."""
    _parsed.clear()


@dataclass(frozen=True)
class Problem:
    path: str
    code: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.severity}: {self.message} [{self.code}]"


class CorpusView:
    """What validation may look up: which files exist and which turns a transcript has."""

    def __init__(self, exists: Callable[[str], bool], turns: Callable[[str], set[str] | None]):
        self.exists = exists
        self.turns = turns  # transcript path → its turn anchors (None when unreadable)


def _cites(body: str) -> list[tuple[str, list[int] | None]]:
    out = []
    for m in CITE_ANY_RE.finditer(body):
        ok = CITE_OK_RE.fullmatch(m.group(0))
        out.append((m.group(0), [int(x) for x in ok.group(1).split(",")] if ok else None))
    return out


def _check_sources(path: str, meta: dict, body: str, view: CorpusView, staged: dict[str, str],
                   problems: list[Problem]) -> None:
    sources = meta.get("sources")
    if not isinstance(sources, list) or not sources:
        problems.append(Problem(path, "sources", "frontmatter 'sources' must be a non-empty list"))
        sources = []
    for raw, nums in _cites(body):
        if nums is None:
            problems.append(Problem(path, "cite-syntax",
                                    f"malformed citation {raw!r} (write [cite:N] with N ≥ 1)"))
            continue
        for n in nums:
            if n > len(sources):
                problems.append(Problem(path, "cite-unresolved",
                                        f"[cite:{n}] has no source (only {len(sources)} listed)"))
    for i, src in enumerate(sources, 1):
        if not isinstance(src, str) or not src.strip():
            problems.append(Problem(path, "source-format", f"source {i} is not a path"))
            continue
        m = TURN_SRC_RE.match(src)
        if m:
            tpath = src.split("#", 1)[0]
            turns = view.turns(tpath)
            if turns is None:
                problems.append(Problem(path, "source-missing", f"source {i} {src}: no such transcript"))
            elif m.group(2) not in turns:
                problems.append(Problem(path, "source-turn",
                                        f"source {i} {src}: transcript has no turn {m.group(2)}"))
            continue
        target = src.split("#", 1)[0]
        if "://" in target:
            continue  # a connector source; nothing to check offline
        if target not in staged and not view.exists(target):
            problems.append(Problem(path, "source-missing", f"source {i} {src}: no such file in the corpus"))


def _sections(body: str) -> list[tuple[str | None, str]]:
    """(level-2 heading, line) for each line of ``body``."""
    cur: str | None = None
    out = []
    for line in body.split("\n"):
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            cur = m.group(1)
        out.append((cur, line))
    return out


def validate_page(path: str, text: str, view: CorpusView, staged: dict[str, str]) -> list[Problem]:
    """Problems of one knowledge page."""
    problems: list[Problem] = []
    meta, body, bad = frontmatter_of(text)
    if bad or meta is None:
        return [Problem(path, "frontmatter", "missing or malformed YAML frontmatter")]
    for key in ("title", "type", "updated"):
        if not str(meta.get(key) or "").strip():
            problems.append(Problem(path, "frontmatter-field", f"frontmatter field '{key}' is missing or empty"))
    content = [ln for ln in body.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    if not content:
        problems.append(Problem(path, "empty", "page has no content"))
    _check_sources(path, meta, body, view, staged, problems)
    for section, line in _sections(body):
        if re.match(r"^\s*[-*]\s+", line) and (section or "").lower() not in ("related", "see also"):
            if not CITE_ANY_RE.search(line):
                problems.append(Problem(path, "uncited-claim",
                                        f"claim without citation: {line.strip()[:80]!r}"))
    for m in LINK_RE.finditer(body):
        slug = m.group(1).strip()
        if page_path(slug) not in staged:
            problems.append(Problem(path, "link-unresolved", f"[[{slug}]] names no page"))
    return problems


def validate_tree(staged: dict[str, str], view: CorpusView, index_cap_tokens: int = 2000,
                  memo: dict | None = None) -> list[Problem]:
    """Every problem of the staged tree (``path → text`` of the files dream would publish;
    pages not in it are taken as they are in the corpus). ``memo``: a dict kept between
    calls with the same ``view`` (one run validates three or four times): a file whose text
    and the tree's paths are as at the last call keeps its problems."""
    problems: list[Problem] = []
    titles: dict[str, str] = {}
    bodies: dict[str, str] = {}
    paths = sorted(staged)
    sig = hash(tuple(paths))
    for path in paths:
        text = staged[path]
        if path == INDEX_PATH:
            if estimate_tokens(text) > index_cap_tokens:
                problems.append(Problem(path, "index-cap",
                                        f"INDEX is ~{estimate_tokens(text)} tokens, over the cap of {index_cap_tokens}"))
            for m in LINK_RE.finditer(text):
                slug = m.group(1).strip()
                if page_path(slug) not in staged:
                    problems.append(Problem(path, "link-unresolved", f"[[{slug}]] names no page"))
            continue
        hit = memo.get((path, text)) if memo is not None else None
        if hit is not None and hit[0] == sig:
            own, title, norm = hit[1], hit[2], hit[3]
        else:
            own, title, norm = _file_problems(path, text, view, staged)
            if memo is not None:
                memo[(path, text)] = (sig, own, title, norm)
        problems += own
        if title:
            if title in titles:
                problems.append(Problem(path, "duplicate", f"same title as {titles[title]}"))
            titles.setdefault(title, path)
        if norm:
            if norm in bodies:
                problems.append(Problem(path, "duplicate", f"same content as {bodies[norm]}"))
            bodies.setdefault(norm, path)
    return problems


def _file_problems(path: str, text: str, view: CorpusView,
                   staged: dict[str, str]) -> tuple[list[Problem], str | None, str | None]:
    """One file's own problems; for a page also its title (lower case) and its body with
    whitespace collapsed (the duplicate checks across pages)."""
    problems: list[Problem] = []
    if path == FACTS_PATH:
        return validate_facts(path, text, view, staged), None, None
    if in_knowledge(path) and path.endswith(".md"):
        problems += validate_page(path, text, view, staged)
        meta, body, _ = frontmatter_of(text)
        title = str(meta.get("title") or "").strip().lower() if meta else None
        return problems, title, " ".join(body.split())
    if re.match(r"^sessions/[^/]+/summary\.md$", path):
        meta, body, bad = frontmatter_of(text)
        if bad or meta is None:
            problems.append(Problem(path, "frontmatter", "missing or malformed YAML frontmatter"))
            return problems, None, None
        for key in ("session", "date", "title"):
            if not str(meta.get(key) or "").strip():
                problems.append(Problem(path, "frontmatter-field", f"frontmatter field '{key}' is missing or empty"))
        if meta.get("type") != "summary":
            problems.append(Problem(path, "frontmatter-field", "frontmatter 'type' must be 'summary'"))
        if _cites(body):
            _check_sources(path, meta, body, view, staged, problems)
    elif path.startswith(NOTES) and path.endswith(".md"):
        meta, body, bad = frontmatter_of(text)
        if bad or meta is None:
            problems.append(Problem(path, "frontmatter", "missing or malformed YAML frontmatter"))
            return problems, None, None
        for key in ("type", "scope", "confidence", "created", "updated"):
            if meta.get(key) in (None, ""):
                problems.append(Problem(path, "frontmatter-field", f"frontmatter field '{key}' is missing or empty"))
        sups = meta.get("supersedes")
        for sup in (sups if isinstance(sups, list) else [sups] if sups else []):
            if str(sup) not in staged and not view.exists(str(sup)):
                problems.append(Problem(path, "supersedes", f"supersedes {sup}, which does not exist"))
        if not body.strip():
            problems.append(Problem(path, "empty", "card has no content"))
    return problems, None, None


def validate_facts(path: str, text: str, view: CorpusView, staged: dict[str, str]) -> list[Problem]:
    """The fact records file: parsed whole, every source resolving (as a page's sources
    must), every ``superseded_by`` naming a record of the file."""
    try:
        recs = loads(text, where=path)
    except FactFormatError as e:
        return [Problem(path, "facts-format", str(e))]
    problems: list[Problem] = []
    ids = {r.id for r in recs}
    sources = sorted({s for r in recs for s in r.sources})
    if sources:  # the same checks as a page's frontmatter sources
        _check_sources(path, {"sources": sources}, "", view, staged, problems)
    for r in recs:
        if not r.sources:
            problems.append(Problem(path, "facts-source", f"record {r.id} cites nothing"))
        if r.superseded_by and r.superseded_by not in ids:
            problems.append(Problem(path, "facts-successor",
                                    f"record {r.id} is superseded by {r.superseded_by}, not in the file"))
    return problems
