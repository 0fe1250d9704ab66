"""Small text helpers shared by the cache, dream and the tools: the words of a file-name
slug, and the characters-per-token estimate used where no tokenizer is at hand."""

from __future__ import annotations

import re
import unicodedata

_WORD_RE = re.compile(r"[a-z0-9]+")

#: Characters per token of the estimate: about right for English prose in the tokenizers
#: of current models, and what the INDEX.md cap and the context budget fall back to.
CHARS_PER_TOKEN = 4


#: Letters Unicode does not decompose into an ASCII base (``ı`` is no ``i`` + accent), so a
#: plain fold drops them: "Aydın" would be "aydn", "Søren" "sren". Names spelled with them
#: are common (Turkish, Nordic, Polish, Icelandic, German), and a subject's slug should be
#: the one a person would type.
ASCII_LETTERS = str.maketrans({
    "ı": "i", "İ": "I", "ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ð": "d",
    "Ð": "D", "þ": "th", "Þ": "Th", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ß": "ss",
    "ħ": "h", "Ħ": "H", "ŧ": "t", "Ŧ": "T",
})


def slug_words(text: str) -> list[str]:
    """The words of a file-name slug of ``text``: accents folded to ASCII (``Café`` →
    ``cafe``), lower case, runs of letters and digits; everything else separates words and
    characters with no ASCII form are dropped. Callers join them with ``-`` under their own
    limits (a session id, a wiki page, a sample file name)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _WORD_RE.findall(folded.lower())


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by the usual estimate: ⌈characters / 4⌉ (0 for an empty text)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
