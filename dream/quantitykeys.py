"""How a quantity or a deadline is keyed, so two statements of it compare (:func:`same_key`).

Numbers and deadlines are keyed by their head noun and its modifiers ("alert threshold",
"audit deadline"): two statements share a key when the heads match and the modifiers of
one are among the other's (or one has none), so "the fall-risk score threshold is 45" and
"the fall-risk threshold is 40, not 45" are the same quantity, and "the CPU alert threshold"
and "the memory alert threshold" two. A name the quantity's phrase holds, or one the sentence
puts in front ("For the Harbour Survey the depth tolerance is …"), keys it too. Whose it is
comes from a possessive before its name (:func:`owner_of`, :func:`possessor`).

Read by :mod:`.quantities` and :mod:`.deadlines`; :func:`same_key` by the page layer.
"""

from __future__ import annotations

import re

from .patternwords import KIN, MONTHS, NAME

#: Words that are no modifier of a quantity's name.
STOP_MODS = frozenset("the a an our my its this that new old current now also for it them".split())


def modifiers(s: str) -> str:
    """The modifiers of a quantity's or deadline's name, in lower case (articles, possessives
    and the like left out)."""
    # "s" alone is what a possessive leaves ("the report's deadline"): no modifier
    words = [w.lower() for w in re.findall(r"[\w\-]+", s or "") if w.lower() not in STOP_MODS and w.lower() != "s"]
    return " ".join(words)


#: Who owns a quantity or a date by a possessive before its name.
_OWNER_RE = re.compile(r"(?:\b(?P<p>his|her|their|your)\s+|(?P<w>[A-Za-z][\w\-]*)['’](?:s\s+)?)$")
_TIME_OWNERS = frozenset("today tonight tomorrow yesterday week month year weekend quarter season "
                         "monday tuesday wednesday thursday friday saturday sunday".split())
_KIN_WORDS = frozenset(KIN.split("|")) | frozenset("kid kids child children colleague friend boss manager "
                                                   "neighbour neighbor flatmate roommate client".split())


_POSSESSOR_RE = re.compile(r"(?<![\w\-])(?P<n>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)+)['’](?:s\s+)?$")


_NOT_POSSESSORS = frozenset("the my our his her their your its this that these those a an".split())
#: Days named like people ("New Year's Eve party budget").
_OCCASIONS = frozenset({"new year", "new years", "christmas eve", "chinese new"})


def possessor(sentence: str, at: int) -> str:
    """The full name (two words or more) that owns what is named from ``at``
    ("Gwendolyn Sefton-Ali's Fairbourne report deadline"): the quantity or date is that
    person's (or organisation's), which the pages resolve; "" when none is named so."""
    m = _POSSESSOR_RE.search(sentence[:at])
    if m is None:
        return ""
    words = m.group("n").split()
    # "The New Year's party budget", "My Mother's Day plans": no one's name
    if words[0].lower() in _NOT_POSSESSORS or " ".join(words[-2:]).lower() in _OCCASIONS:
        return ""
    return m.group("n")


def owner_of(sentence: str, at: int) -> str | None:
    """Whose is the quantity or date named from ``at``: "" for the speaker's or nobody's in
    particular, a word to key it by for a thing's ("the project's deadline" → "project"), None
    for another person's ("his step goal", "my daughter's deadline", "Tom's budget")."""
    m = _OWNER_RE.search(sentence[:at])
    if m is None:
        return ""
    if m.group("p"):
        return None
    w = m.group("w")
    if w.lower() in _TIME_OWNERS:
        return ""
    if w.lower() in _KIN_WORDS or w[:1].isupper():
        return None
    return w.lower()


#: "For the Harbour Survey the depth tolerance is 10 cm": a name put in front says whose
#: quantity it is (see :func:`names_key`), so the River Survey's tolerance is another one.
_FRONT_RE = re.compile(rf"^\W*(?i:for|on|in|at|with|about)\s+(?:the\s+)?(?P<n>{NAME})\s*,?\s+")
_CALENDAR = frozenset(MONTHS.split("|")) | frozenset(
    "monday tuesday wednesday thursday friday saturday sunday".split())


def with_front(key: str, sentence: str, at: int) -> str:
    """``key`` with the name a sentence puts in front of the quantity at ``at``, if any."""
    m = _FRONT_RE.match(sentence)
    if not m or m.end() > at or m.group("n").lower().split()[0] in _CALENDAR:
        return key
    base, _, names = key.partition("@")
    got = set(filter(None, names.split(";"))) | {m.group("n").lower()}
    return base + "@" + ";".join(sorted(got))


_KEY_NAME_RE = re.compile(r"(?<![\w\-])[A-Z][\w\-]*(?:\s+(?:of\s+|the\s+|for\s+)?[A-Z][\w\-]*)*")


def names_key(span: str, at: int) -> str:
    """The names a quantity's or deadline's name holds ("the conference submission for Ramp
    Ledger" → "@ramp ledger"), the sentence's first word left out: two quantities that name
    different things (Ramp Ledger's and Haptic Crosswalk's submissions) are two."""
    names = []
    for m in _KEY_NAME_RE.finditer(span):
        run = m.group(0)
        if at + m.start() == 0:  # the sentence's capitalised first word
            run = run.split(None, 1)[1] if " " in run else ""
        if run:
            names.append(run.lower())
    return "@" + ";".join(sorted(set(names))) if names else ""


def after_determiner(sentence: str, start: int, end: int) -> int:
    """Where a quantity's name starts: after the last article or possessive before its head
    ("Actually the sampling rate" → "sampling rate")."""
    last = start
    # "Hamza Qureshi's audit report deadline": the name's "s" is no word of the quantity's
    if start > 0 and sentence[start - 1] in "'’" and sentence[start:start + 2].lower() == "s ":
        last = start + 2
    for m in re.finditer(r"\b(?:the|a|an|our|my|its|their|this|that)\s+", sentence[start:end], re.I):
        last = start + m.end()
    return last


def same_key(a: str, b: str) -> bool:
    """Do two quantity keys ("threshold|alert", "threshold|fall-risk score") name the same
    quantity: same head, and the modifiers of one among the other's (or one without any)?"""
    if "|" not in a or "|" not in b:
        return a == b
    a, _, na = a.partition("@")
    b, _, nb = b.partition("@")
    if na and nb and not (set(na.split(";")) <= set(nb.split(";")) or set(nb.split(";")) <= set(na.split(";"))):
        return False  # the submission for Ramp Ledger is not Haptic Crosswalk's
    ha, ma = a.split("|", 1)
    hb, mb = b.split("|", 1)
    if ha != hb:
        return False
    # "fall-risk score" / "fall-risk" are one quantity, "CPU alert" / "memory alert" two:
    # a word each has and the other lacks names another thing
    sa, sb = set(ma.split()), set(mb.split())
    return sa <= sb or sb <= sa
