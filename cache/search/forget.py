"""The deletion log: ``forget/*.md`` requests and the phrases they ask to forget.

One request is a Markdown file under ``forget/``; every non-empty body line (after the
frontmatter; list markers and ``#`` comment lines ignored) is a phrase. A text is forgotten
when it contains a phrase as whole words, case-insensitively. Dream drops such facts from
the wiki; the search index drops such chunks, so recall does not bring back from the
transcripts what the wiki forgot.
"""

from __future__ import annotations

import re

# where requests are filed, named by the tree's layout (re-exported for dream and the index)
from brainfs.cache.layout import FORGET_DIR as FORGET_DIR

from .chunker import split_frontmatter


def norm(s: str) -> str:
    """Lower case, punctuation (but apostrophes) as spaces, single spaces."""
    return " ".join(re.sub(r"[^\w\s']", " ", s.lower()).split())


def is_request(path: str) -> bool:
    """Whether ``path`` is a forget request."""
    return path.startswith(FORGET_DIR) and path.endswith((".md", ".txt"))


def request_phrases(text: str) -> list[str]:
    """The normalized phrases of one forget request."""
    _meta, body, _bad = split_frontmatter(text)
    out = []
    for line in body.splitlines():
        line = line.strip().lstrip("-*").strip()
        if line and not line.startswith("#"):
            ph = norm(line)
            if ph:
                out.append(ph)
    return out


def forgotten_by(text: str, phrases: list[str]) -> str | None:
    """The first phrase ``text`` contains (whole words), or None."""
    n = f" {norm(text)} "
    for ph in phrases:
        if f" {ph} " in n:
            return ph
    return None


#: What a forgotten phrase becomes in a transcript (dream's redaction writes the same).
MARK = "[forgotten]"


def phrase_re(phrase: str) -> re.Pattern[str]:
    """A normalized phrase ("max the beagle") as it can be written ("Max, the Beagle"):
    whole words, case-insensitive, any punctuation between its words."""
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<![\w'])" + r"[^\w']+".join(words) + r"(?![\w'])", re.I)


def redact(text: str, phrases: list[str]) -> str:
    """``text`` with every occurrence of each phrase replaced by :data:`MARK`."""
    for ph in phrases:
        if ph:
            text = phrase_re(ph).sub(MARK, text)
    return text
