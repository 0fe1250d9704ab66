"""A forget request reaches the sources too: the phrase is redacted in transcripts (turn ids
kept), GUIDE.md, and the user's own cards and pages under ``notes/``, ``knowledge/`` and
``sessions/`` (every file dream does not render itself).

Pages, summaries and dream's cards drop what a forget request names on every render (see
:mod:`.core`); the search index drops chunks that contain it (``cache/search/forget.py``). This
module makes the memory itself forget, with the redaction the index and the importer use
(:func:`brainfs.cache.search.forget.redact`): each occurrence of the phrase (case-insensitive, as
whole words, any punctuation between its words) becomes ``[forgotten]``. A transcript keeps
every turn and anchor, so citations of other turns still resolve; of its frontmatter only
the free-text ``title`` is redacted (the keys, date and participants are structure). A
redacted file no longer contains the phrase, so a second run changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from brainfs.cache.layout import GUIDE_PATH, KNOWLEDGE, NOTES, SESSIONS, TRANSCRIPT_RE
from brainfs.cache.search.forget import MARK, phrase_re, redact

__all__ = ["MARK", "phrase_re", "redact_file", "is_redactable", "apply"]

#: A frontmatter line whose value is free text a person or an import wrote.
_TEXT_FIELD_RE = re.compile(r"^(title:[ \t]*)(.*)$", re.M)


def redact_file(text: str, phrases: list[str]) -> str:
    """``text`` with every phrase replaced by the mark: the body, and the frontmatter's
    ``title`` value (still a YAML string)."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            head, body = text[: end + 4], text[end + 4:]
            head = _TEXT_FIELD_RE.sub(lambda m: m.group(1) + _redact_value(m.group(2), phrases), head)
            return head + redact(body, phrases)
    return redact(text, phrases)


def _redact_value(value: str, phrases: list[str]) -> str:
    """A YAML scalar with the phrases redacted; a plain one that now starts with the mark
    ("[forgotten] with Tomas" would read as a list) is single-quoted."""
    new = redact(value, phrases)
    if new == value or value[:1] in ("'", '"'):
        return new
    return "'" + new.replace("'", "''") + "'"


def is_redactable(path: str, dream_dirs: tuple[str, ...],
                  dream_files: frozenset[str] | set[str] = frozenset()) -> bool:
    """Transcripts, GUIDE.md, and the Markdown a person (or an import) wrote under
    ``notes/``, ``knowledge/`` and ``sessions/``; not dream's own output (``dream_dirs``,
    ``dream_files``: what it renders, which drops the phrase itself), not the forget log."""
    if TRANSCRIPT_RE.match(path) or path == GUIDE_PATH:
        return True
    if path in dream_files or path.startswith(dream_dirs) or not path.endswith(".md"):
        return False
    return path.startswith((NOTES, KNOWLEDGE, SESSIONS))


def apply(read: Callable[[str], str | None], listing: dict[str, str], phrases: list[str],
          dream_dirs: tuple[str, ...],
          dream_files: frozenset[str] | set[str] = frozenset()) -> dict[str, str]:
    """path → redacted text, for every file of :func:`is_redactable` that contains a phrase."""
    out: dict[str, str] = {}
    if not phrases:
        return out
    pats = [phrase_re(ph) for ph in phrases if ph]
    for p in sorted(listing):
        if not is_redactable(p, dream_dirs, dream_files):
            continue
        text = read(p)
        if text is None or not any(rx.search(text) for rx in pats):
            continue
        new = redact_file(text, phrases)
        if new != text:
            out[p] = new
    return out
