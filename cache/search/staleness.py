"""Which statements go stale: those likely to change, not confirmed for a long time.

Age alone says little: a birthday stated a year ago is as true today, a decision stays what
was decided, a transcript turn is a dated record of what was said that day. What goes stale
is a statement the memory gives as holding now (a card, a line of a page) about a state of
affairs that moves on its own — a plan ("will", "next month", a deadline), a status
("currently", "in progress", where someone lives or something is kept), a role ("leads",
"works at") — when nothing has confirmed it for ``stale_days``. :func:`changeable` says
which of the three a text is, and :func:`is_stale` puts the age to it. The word lists are
plain English: a text in another language is never flagged, which is the safe side (a flag
that cries wolf is ignored).
"""

from __future__ import annotations

import re

#: Frontmatter types (and chunk kinds) whose statements do not change once made.
STABLE_KINDS = frozenset({"decision", "correction", "guide", "rule", "index", "scope",
                          "procedure", "summary"})
#: Chunk kinds that are dated records of what was said (a transcript's turns): "I am
#: currently in Osaka" said in March is true of March, and the item's date already says
#: when. Only what the memory states as holding now (a card, a page's line) can go stale;
#: flagging every old turn that says "will" or "still" made the flag meaningless.
RECORD_KINDS = frozenset({"turn"})

_STABLE = re.compile(r"\b(?:born|birthday|birth date|anniversary|decided|decision|agreed on)\b",
                     re.IGNORECASE)

#: What each kind of changeable statement looks like, in the order they are tested.
CHANGEABLE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("plan", re.compile(
        r"\b(?:plan(?:s|ned|ning)?\s+(?:to|for|on)|will|going to|intends? to|next (?:week|month|"
        r"year|spring|summer|autumn|fall|winter|term|quarter)|upcoming|deadline|due (?:on|by|in)|"
        r"scheduled|tomorrow|this (?:week|month)|soon)\b", re.IGNORECASE)),
    ("status", re.compile(
        r"\b(?:status|currently|at the moment|right now|in progress|working on|pending|"
        r"waiting (?:for|on)|ongoing|is now|still|lives in|based in|located (?:at|in)|moored|"
        r"stays at|kept (?:at|in))\b", re.IGNORECASE)),
    ("role", re.compile(
        r"\b(?:role|leads|led by|lead of|manages|managed by|manager|works (?:at|for|as)|"
        r"job|position|head of|director|chairs?|coordinates|in charge of|reports to|"
        r"took over)\b", re.IGNORECASE)),
)


def changeable(text: str, kind: str = "") -> str | None:
    """``"plan"``, ``"status"`` or ``"role"`` when ``text`` states something of that kind
    (likely to change), None when it does not or when ``kind`` never changes (a decision,
    a rule…) or is a dated record (a transcript turn)."""
    if kind in STABLE_KINDS or kind in RECORD_KINDS or _STABLE.search(text or ""):
        return None
    for name, pat in CHANGEABLE:
        if pat.search(text or ""):
            return name
    return None


def is_stale(text: str, kind: str, days: float | None, stale_days: int) -> bool:
    """Whether a statement is stale: older than ``stale_days`` and :func:`changeable`."""
    return days is not None and days > stale_days and changeable(text, kind) is not None
