"""A forget request reaches the sources too: the phrase is redacted in transcripts (turn ids
kept) and in the user's own cards under ``notes/``.

Pages, summaries and dream's cards drop what a forget request names on every render (see
:mod:`.core`); the search index drops chunks that contain it (``cache/forget.py``). This
module makes the memory itself forget: each occurrence of the phrase (case-insensitive, as
whole words, any punctuation between its words) becomes ``[forgotten]``. A transcript keeps
every turn and anchor, so citations of other turns still resolve. A redacted file no longer
contains the phrase, so a second run changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARK = "[forgotten]"


def phrase_re(phrase: str) -> re.Pattern[str]:
    """A normalized phrase ("max the beagle") as it can be written ("Max, the Beagle")."""
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<![\w'])" + r"[^\w']+".join(words) + r"(?![\w'])", re.I)


def redact(text: str, phrases: list[str]) -> str:
    """``text`` with every phrase replaced by the mark (the frontmatter is left alone)."""
    head, body = "", text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            head, body = text[: end + 4], text[end + 4:]
    for ph in phrases:
        if ph:
            body = phrase_re(ph).sub(MARK, body)
    return head + body


def is_redactable(path: str, dream_dirs: tuple[str, ...]) -> bool:
    """Transcripts and the user's cards; not dream's own output, not the forget log."""
    if re.fullmatch(r"sessions/[^/]+/transcript\.md", path):
        return True
    return path.startswith("notes/") and path.endswith(".md") and not path.startswith(dream_dirs)


def apply(read: Callable[[str], str | None], listing: dict[str, str], phrases: list[str],
          dream_dirs: tuple[str, ...]) -> dict[str, str]:
    """path → redacted text, for every transcript and user card that contains a phrase."""
    out: dict[str, str] = {}
    if not phrases:
        return out
    pats = [phrase_re(ph) for ph in phrases if ph]
    for p in sorted(listing):
        if not is_redactable(p, dream_dirs):
            continue
        text = read(p)
        if text is None or not any(rx.search(text) for rx in pats):
            continue
        new = redact(text, phrases)
        if new != text:
            out[p] = new
    return out
