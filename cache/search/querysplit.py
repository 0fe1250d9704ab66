"""Question splitting for multi-hop recall: one question that joins several facts becomes
the sub-queries that each find one of them.

"What subject have Caroline and Melanie both painted?" asks about two people's turns, and a
single query matches best the turns that mention painting *and* one of them; the other
person's turn falls below the cut. Retrieving for "What subject have Caroline painted" and
"… Melanie painted" separately, then fusing the lists (``retrieval.retrieve``), gives each part
its own head of the list. Three shapes are split, by rules (no model):

* coordinated names or short phrases — "Caroline and Melanie", "in Sapporo and in Tallinn",
  "met and helped": the question once per conjunct, the others removed (and "both" dropped);
* a second clause — "…, and how many years was he with his team": each clause alone;
* a time relation — "the hike after the roadtrip", "her manager before the atlas": the main
  clause and the event it is placed against.

:func:`split_question` returns the parts only (never the question itself), at most
``MAX_PARTS``, each with a content word; a question with nothing to split
gives ``[]``. Never raises.
"""

from __future__ import annotations

import re

#: More parts than this are more likely a list question ("books, films, songs and …")
#: than several facts; the first ones are kept.
MAX_PARTS = 4

_NAME = r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*"
#: "Caroline and Melanie", "Jon, Gina and Tim", "Jean & John"
_NAMES_RE = re.compile(rf"\b({_NAME}(?:\s*,\s*{_NAME})*\s*,?\s+(?:and|or|&)\s+{_NAME})\b")
_NAME_SPLIT_RE = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+")
#: Where a conjunct after "and" stops: a word that opens a new phrase or clause.
_BOUNDARY = frozenset("""
a an the to in on at of for from with by about into during before after while when where who
whom whose which what why how that than as since because until if is are was were be been
do does did has have had will would can could should may might must both also ever
""".split())
_CLAUSE_START = frozenset("""
what when where who whom whose which why how is are was were do does did has have had will
would can could should
""".split())
_RELATION_RE = re.compile(r"\s+(before|after|since|until|while|during)\s+", re.I)
_STOP = frozenset("""
a an the and or of to in on at for from with by about both what when where who whom whose
which why how did do does is are was were has have had be been her his their its she he they
it this that these those i you we my our your me us them there any some ever also
""".split())


def _content_words(text: str) -> int:
    return sum(1 for w in re.findall(r"[\w'’]+", text.lower()) if w not in _STOP and len(w) > 1)


def _tidy(text: str) -> str:
    text = re.sub(r"\bboth\s+", "", text, flags=re.I)
    text = re.sub(r"\s+", " ", text).strip(" ,;")
    return text


def _names_parts(q: str) -> list[str]:
    m = _NAMES_RE.search(q)
    if not m:
        return []
    names = [n for n in _NAME_SPLIT_RE.split(m.group(1)) if n]
    # A question opening with the coordination ("What and …") is not names.
    if len(names) < 2 or any(n.lower() in _BOUNDARY for n in names):
        return []
    rest = q[m.end():]
    if rest.startswith(("'s", "’s")):  # "Tim and John's favourite" → "Tim's", "John's"
        names, rest = [n + rest[:2] for n in names], rest[2:]
    return [_tidy(q[:m.start()] + n + rest) for n in names]


def _clause_parts(q: str) -> list[str]:
    m = re.search(r",?\s+and\s+(\w+)", q)
    if not m or m.group(1).lower() not in _CLAUSE_START:
        return []
    return [_tidy(q[:m.start()]), _tidy(q[m.start():].split("and", 1)[1])]


def _phrase_parts(q: str) -> list[str]:
    """"in Sapporo and in Tallinn", "met and helped": as many words before "and" as the
    conjunct after it has (at most 3, up to a boundary word)."""
    words = q.rstrip("?.! ").split()
    for i, w in enumerate(words):
        if w.lower() not in ("and", "or") or i == 0 or i == len(words) - 1:
            continue
        right: list[str] = []
        for x in words[i + 1:]:
            if (right and x.lower().strip(",") in _BOUNDARY) or len(right) == 3:
                break
            right.append(x)
            if x.endswith(","):
                break
        n = len(right)
        if n == 0 or i - n < 1:
            continue
        left = words[i - n:i]
        if left[0].lower() != right[0].lower() and (left[0].lower() in _BOUNDARY) != (
                right[0].lower() in _BOUNDARY):
            n = min(n, 1)  # "in Sapporo and Tallinn": share the preposition
            left, right = words[i - 1:i], right[:1] if right[0].lower() not in _BOUNDARY else right[1:2]
            if not right:
                continue
        before, after = words[:i - len(left)], words[i + 1 + len(right):]
        return [_tidy(" ".join(before + left + after)), _tidy(" ".join(before + right + after))]
    return []


def _relation_parts(q: str) -> list[str]:
    m = _RELATION_RE.search(q)
    if not m:
        return []
    main, event = q[:m.start()], q[m.end():]
    return [_tidy(main), _tidy(event.rstrip("?.! "))]


def split_question(question: str) -> list[str]:
    """The sub-queries of a multi-part question (see the module docstring), or ``[]``."""
    try:
        q = " ".join(str(question or "").split())
        if not q:
            return []
        for rule in (_names_parts, _clause_parts, _phrase_parts, _relation_parts):
            parts = [p for p in rule(q) if _content_words(p) >= 1]
            parts = [p for p in dict.fromkeys(parts) if p.lower() != q.lower()]
            if len(parts) >= 2:
                return parts[:MAX_PARTS]
        return []
    except Exception:  # noqa: BLE001 - a splitter bug must never fail a recall
        return []


# --------------------------------------------------------------------------- the subject-free query

_POSSESSIVE_RE = re.compile(r"(?:'s|’s|'|’)$")


def without_names(question: str, names: list[str] | set[str]) -> str:
    """``question`` with the people it names removed ("What states has Maria vacationed
    at?" → "What states has vacationed at?"), or "" when it names none of ``names`` or
    nothing else is left.

    Why: in a conversation between two people every turn is by one of them, so a name in
    the question says little about *what* is asked, yet it pulls the question's vector
    towards any turn about that person. The speaker stage already favours the person's
    own turns; the question without the name lets the topic ("states", "vacationed")
    rank the turns. Names are matched whole, case-insensitively, with a possessive
    ("Maria's") or trailing punctuation; a multi-word name is matched word by word."""
    try:
        words = {w.lower() for n in names for w in str(n).split() if w}
        if not words:
            return ""
        kept: list[str] = []
        dropped = False
        for token in str(question or "").split():
            bare = _POSSESSIVE_RE.sub("", token.rstrip("?.!,;:")).lower()
            if bare in words:
                dropped = True
                if token[-1] in "?.!" and kept:  # keep the question mark on the last word
                    kept[-1] += token[-1]
                continue
            kept.append(token)
        out = " ".join(kept)
        return out if dropped and _content_words(out) >= 1 else ""
    except Exception:  # noqa: BLE001 - a stage, never a failure of recall
        return ""


# --------------------------------------------------------------------------- list questions

_AUX = r"(?:has|have|had|does|do|did|is|are|was|were|can|could|would|will|should)"
_PLURAL = r"[a-z]+(?:[^s\W]s|ies)"  # a word ending in s but not -ss: a plural, mostly
_LIST_RES = (
    re.compile(r"^\s*how many\b", re.I),
    # "what states has …", "which classical musicians does …", "what kinds of books …"
    re.compile(rf"\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[a-z-]+\s+){{0,2}}"
               rf"{_PLURAL}\s+{_AUX}\b", re.I),
    # "what are Maria's dogs' names"
    re.compile(rf"\b(?:what|which)\s+are\s+(?:[\w'’]+\s+){{0,3}}{_PLURAL}\b", re.I),
    re.compile(r"\b(?:names|things|activities|ways|places|items|hobbies)\b", re.I),
    # the present perfect over a life: "what has she painted", "where has he camped"
    re.compile(r"^\s*(?:what|where|which|who)\b(?:\s+[\w'’-]+){0,3}\s+(?:has|have)\s+(?!been\b)",
               re.I),
    # two people's shared things: "what do Jon and Gina both like", "… have in common"
    re.compile(r"\bboth\b|\bin common\b", re.I),
    _NAMES_RE,
    # a guess from what is known: "would she enjoy …", "what might he pursue"
    re.compile(r"\b(?:would|might|likely|could)\b", re.I),
)


def is_list_question(question: str) -> bool:
    """Whether ``question`` gathers several facts — things collected over time ("What
    states has Maria vacationed at?", "How many tournaments has Nate won?", "What has
    Melanie painted?"), two people's shared things ("What do Jon and Gina both like?") or
    a guess from what is known ("Would Tim enjoy …?") — whose evidence sits in different
    sessions, rather than one fact. By rules on the question's shape (a plural asked for,
    "how many", the present perfect, coordinated names or "both", would/might/likely);
    recall spreads such a question's list over sessions (``rerank.session_spread``).
    Never raises."""
    try:
        q = " ".join(str(question or "").split())
        return any(r.search(q) for r in _LIST_RES)
    except Exception:  # noqa: BLE001
        return False
