"""Gathered lines: what a person said across sessions about one kind of thing, on one line.

"What activities does Melanie do?" has its answer in four sessions (pottery in July,
camping in June, painting in May, swimming in May); a page's timeline holds each as one
line among a hundred, and a reader inside a small budget sees one or two of them. A
gathered line lists them together, each value with the month it was said and its citation:

    - Melanie's activities and hobbies: swimming (May 2023) [cite:4], camping (June 2023) [cite:20], …

The rules are general patterns of first-person speech (not any persona's words), each kind
a few regular expressions over the speaker's own statements (``I``/``we``):

* **activities and hobbies** — "go/went camping", "I love/enjoy/started painting", "I've
  been running", "a pottery class/workshop/lesson";
* **places** — "went/been/moved/travelled/flew to <Name>", "a trip to <Name>", "visited <Name>";
* **books** — "read <"Title">" (a quoted title);
* **instruments and sports played** — "play the violin", "playing the clarinet";
* **things bought** — "I bought/purchased a <thing>", "got myself a <thing>".

A value said once is listed once (its first statement); a line needs at least
:data:`MIN_VALUES` values (one value is a timeline entry, not a list) and holds at most
:data:`MAX_VALUES` (the most recent). Facts another statement retired (contradiction,
correction) are left out, as for threads. The section stands after ``## Timeline``: these
lines are a history of what was said, not what is true now.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .prose import human_day
from .synth import Claim

SECTION = "Across sessions"
#: A list of one is a timeline entry; of more, the cross-session view a question needs.
MIN_VALUES = 2
#: The most recent values kept on one line (a line is read whole or not at all).
MAX_VALUES = 10

_I = r"\b(?:I|we|I've|we've|I'd|we'd|I'm|we're)\b"
#: -ing words that follow "go"/"love"/"been" without naming an activity.
_NOT_ACTIVITY = frozenset("""thinking feeling trying looking wondering working doing going getting having
planning hoping saying wanting needing using making taking giving keeping telling asking talking
coming leaving living learning reading watching seeing meeting waiting helping sharing struggling
dealing focusing considering missing loving liking enjoying starting finishing spending being
something nothing anything everything thing morning evening during bring sing king ring spring
string wing ceiling building anything caring hearing sitting standing putting setting letting
offering hosting attending teaching organizing organising leading joining playing""".split())
_DET = r"(?:a|an|the|my|our|this|that|these|some|another|new|first|second|little)"
_NOT_THING = frozenset("""lot bit few couple ton way time chance thing things one ones kind
sort part idea look feeling call message question break day week month year moment minute
""".split())
#: Words that open a class-like phrase without naming its subject ("a new class", "my first class").
_NOT_CLASS = frozenset("a an the my our this that these those some any every each which what another "
                       "new first second last next local online free great fun big small little "
                       "weekly weekend evening morning couple few".split())
_NOT_PLACE = frozenset("""january february march april may june july august september october november
december monday tuesday wednesday thursday friday saturday sunday mom dad mum christmas easter
thanksgiving""".split())
_NAME = r"(?P<v>(?-i:[A-Z][\w'’\-]+)(?:\s+(?-i:[A-Z][\w'’\-]+)){0,2})"

#: (kind, label template, patterns); a pattern's group ``v`` is the value.
KINDS: list[tuple[str, str, list[re.Pattern[str]]]] = [
    ("activities", "{who}'s activities and hobbies", [
        # the speaker goes: "I went camping", "we go hiking every May" (not "you should go hiking")
        re.compile(_I + r"[^.!?;]{0,40}?\b(?:go|goes|going|went|gone)\s+(?P<v>[a-z]{3,}ing)\b", re.I),
        # "I love painting." / "…painting with the kids": the -ing word stands alone (one
        # with an object, "finding unique pieces", "chasing my dreams", is not a pastime)
        re.compile(_I + r"(?:\s+(?:really|also|just|always|still|have|had|been|recently))*\s+"
                   r"(?:love|enjoy|enjoyed|like|started|start|took\s+up|take\s+up|tried|got\s+into|"
                   r"picked\s+up)\s+(?P<v>[a-z]{3,}ing)(?=\s*(?:[.,;:!?)\-–—]|$|\s+(?:with|in|at|on|and|"
                   r"together|again|lately|more|a\s+lot|every|since|for\s+(?:a|an|the|my|\d)|to\s+(?:relax|de-?stress|unwind))\b))",
                   re.I),
        re.compile(r"\b(?P<v>[a-z]{4,}(?:\s+[a-z]{4,})?)\s+(?:class|classes|lessons?|workshops?|courses?)\b"
                   r"(?!\s+(?:plans?|notes?|materials?|times?|schedules?)\b)", re.I),
    ]),
    ("places", "places {who} has been", [
        re.compile(_I + r"(?:\s+(?:just|finally|also|recently|have|had|'ve|been))*\s+"
                   r"(?:went|been|moved|travell?ed|flew|drove|go|going|visited|visiting)\s+"
                   r"(?:back\s+)?(?:to\s+|from\s+)?" + _NAME, re.I),
        re.compile(r"\b(?:trip|vacation|holiday|journey)\s+to\s+" + _NAME, re.I),
    ]),
    ("books", "books {who} has read", [
        re.compile(_I + r"(?:\s+(?:just|also|recently|finally|have|had|'ve|been))*\s+"
                   r"(?:finished\s+|started\s+)?(?:read|reading)\s+(?:the\s+book\s+)?[\"“](?P<v>[^\"”]{2,60})[\"”]", re.I),
    ]),
    ("plays", "what {who} plays", [
        re.compile(r"\bplay(?:s|ed|ing)?\s+(?:the|my|our|their)\s+(?P<v>[a-z]{4,})\b", re.I),
    ]),
    ("bought", "things {who} has bought", [
        re.compile(_I + r"(?:\s+(?:just|finally|also|recently|have|had))*\s+"
                   r"(?:bought|purchased|got\s+myself)\s+" + _DET + r"?\s*(?:new\s+)?(?:pair\s+of\s+)?"
                   r"(?P<v>[a-z]{3,}(?:\s+[a-z]{3,})?)\b", re.I),
    ]),
]
#: Words that tell a kind's line apart from the rest of the page (for a reader's task words
#: and for verification, which does not ask the source for them: they are the wiki's framing).
FRAME_WORDS = frozenset("activities hobbies places books plays things".split())
_STOP_TAIL = frozenset("with for and to at in on of from the a an it them that this".split())


def _value(kind: str, v: str) -> str | None:
    """The value as listed, or None when it is not one (a filler word, a pronoun)."""
    v = " ".join(v.split()).strip(" ,.;:!?'’\"")
    words = v.lower().split()
    while words and words[-1] in _STOP_TAIL:
        words.pop()
    if not words:
        return None
    low = " ".join(words)
    if kind == "activities":
        orig = v.split()[: len(words)]
        # "those dance classes", "weekend yoga", "loved taking classes": the class's subject
        # is the last word, with a describing word before it ("creative writing") but not
        # a verb ("loved", "enjoy") nor a determiner
        while words and (words[0] in _NOT_CLASS or len(words) > 1 and words[0].endswith(("ed", "ing", "ly"))
                         or len(words) > 1 and words[0] in _NOT_ACTIVITY):
            words.pop(0)
            orig.pop(0)
        low = " ".join(words)
        if not words or low in _NOT_ACTIVITY or low.endswith(("thing", "ly")):
            return None
        return " ".join(orig)  # as written: "German", "pottery"
    if kind == "bought":
        if words[0] in _NOT_THING or low in _NOT_THING or words[0] in ("it", "them", "sure", "sense"):
            return None
        return low
    if kind == "plays":
        return None if low in ("part", "role", "game", "games", "time", "music") else low
    if kind == "places" and (low.endswith(("'s", "’s")) or words[0] in _NOT_PLACE):
        return None  # "went to Caroline's party": a person's, not a place
    return " ".join(v.split()[: len(words)])


def values(text: str) -> list[tuple[str, str]]:
    """The (kind, value) pairs one first-person statement gives, in the order of KINDS."""
    out: list[tuple[str, str]] = []
    for kind, _label, pats in KINDS:
        for rx in pats:
            for m in rx.finditer(text):
                v = _value(kind, m.group("v"))
                if v and (kind, v) not in out:
                    out.append((kind, v))
    return out


def _month(day: str | None) -> str:
    """"May 2023" of an ISO day ("" when undated)."""
    h = human_day(day) if day else ""
    return " ".join(h.split()[-2:]) if h else ""


def gathered(by_slug: dict[str, list[dict]], slugs: list[str], titles: dict[str, str],
             speaker_slug: Callable[[str], str | None], retired: Callable[[dict, str], bool],
             ref: Callable[[dict], str]) -> dict[str, list[Claim]]:
    """Per page slug (a person who speaks), its gathered lines (section :data:`SECTION`,
    ``group`` = the kind, ``parts`` = each value with its citation)."""
    out: dict[str, list[Claim]] = {}
    for slug in slugs:
        per: dict[str, dict[str, dict]] = {}
        for f in sorted(by_slug.get(slug, []), key=lambda f: (f.get("date") or "", f.get("order", 0))):
            if speaker_slug(f.get("speaker", "")) != slug or retired(f, slug):
                continue
            for kind, v in values(f["text"]):
                per.setdefault(kind, {}).setdefault(v.lower(), {"v": v, "f": f})
        lines = []
        for kind, label, _pats in KINDS:
            vals = list(per.get(kind, {}).values())
            if len(vals) < MIN_VALUES:
                continue
            vals = vals[-MAX_VALUES:]
            parts = tuple((f"{x['v']}" + (f" ({_month(x['f'].get('date'))})" if x["f"].get("date") else ""),
                           ref(x["f"])) for x in vals)
            lines.append(Claim(label.format(who=titles[slug]), parts[0][1], None, SECTION,
                               group=kind, parts=parts))
        if lines:
            out[slug] = lines
    return out
