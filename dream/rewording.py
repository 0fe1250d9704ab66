"""A sentence reworded so that the relation patterns read it: chat's spellings of the first
person written out (:func:`chat_spelling`), and a sentence that states something of a person
named in full said as that person would say it (:func:`as_first_person`)."""

from __future__ import annotations

import re

from .patternwords import BAD_VALUES, NOT_SUBJECT_WORDS


#: Chat's spellings of the first person ("im at X now", "ive joined X", "i work at X").
_CHAT_SPELLING = [(re.compile(r"(?<=\w):\s+"), " : "),  # "Alert threshold: 85%" reads as "threshold : 85%"
                  (re.compile(r"(?<=[a-z])['’]s\s+(?=(?:due|now|still|up|down|back|off|cancelled|canceled|set|at\s+\d|\d))"), " is "),
                  (re.compile(r"\b[Ii]m\b"), "I'm"), (re.compile(r"\b[Ii]ve\b"), "I've"),
                  (re.compile(r"\bi(?=\s|['’])"), "I"), (re.compile(r"\bIm\b"), "I'm"),
                  # the article mistyped ("im teh team lead now")
                  (re.compile(r"\b(?:teh|hte)\b"), "the")]


def chat_spelling(sentence: str) -> str:
    """``sentence`` with chat's first person written out ("im" → "I'm", "the report's due" →
    "the report is due") and a colon spaced, so every rule reads it."""
    for rx, rep in _CHAT_SPELLING:
        sentence = rx.sub(rep, sentence)
    return sentence


#: A sentence about a person by their full name, the way a correction is written ("Hamza
#: Qureshi's audit report deadline is now 14 October", "Nomvula Dlamini wants American
#: spelling now"): the name, then a possessive or a verb of stating.
_NAMED_SPEAKER = re.compile(
    r"^\s*(?P<name>[A-ZÀ-ÖØ-Þ][\w'’\-]+(?:\s+(?:(?:de|da|van|von|der|den|di|du|del|dos|das|al|el|bin|ter|le)\s+)?"
    r"[A-ZÀ-ÖØ-Þ][\w'’\-]+)+?)(?P<link>['’]s\s+|\s+(?:is|was|has|wants|works|lives|prefers|uses|likes|reports|"
    r"moved|needs)\b)")
_AS_FIRST = {"is": "I am", "was": "I was", "has": "I have", "wants": "I want", "works": "I work",
             "lives": "I live", "prefers": "I prefer", "uses": "I use", "likes": "I like",
             "reports": "I report", "moved": "I moved", "needs": "I need",
             # a quick fix's bare verbs (:func:`as_users_fix`)
             "switched": "I switched", "left": "I left", "joined": "I joined", "started": "I started"}
_THIRD_PRONOUNS = re.compile(r"\b(?:her|his|their)\b")


def as_first_person(sentence: str) -> tuple[str, str] | None:
    """(name, the sentence as that person would say it) for a sentence that states
    something of a person by their full name ("Lucía Benavides Ortega's email is now X" →
    "my email is now X"), so the speaker's own patterns read it; None otherwise."""
    m = _NAMED_SPEAKER.match(sentence)
    if not m or len(m.group("name").split()) < 2 or any(
            w.lower() in NOT_SUBJECT_WORDS or w.lower() in BAD_VALUES for w in m.group("name").split()):
        return None
    link = m.group("link").strip()
    said = "my " if link[:1] in "'’" else _AS_FIRST[link] + " "
    rest = _THIRD_PRONOUNS.sub("my", sentence[m.end():])
    return m.group("name"), (said + rest).strip()


#: A quick fix typed without its subject, the user's own: "Lives in Porto now, moved from
#: Lisbon.", "Reading goal is 30 books this year, not 52.", "new number 07700 900 431".
_BARE_VERB = re.compile(r"^\s*(?P<verb>Lives|Works|Reports|Moved|Switched|Left|Joined|Started|Prefers|Uses)"
                        r"(?=\s+(?:in|to)\s|\s+(?:at|for)\s+[A-Z]|\s+[A-Z]|\s+(?:at|in)\s+[A-Z])")
#: The thing a quick fix names first, in the words a person keeps ("Reading goal", "new
#: number", "Monthly budget"), never a name ("Dana Levi email", "Priya phone").
_THING_WORDS = (r"new|reading|step|daily|weekly|monthly|yearly|annual|savings|word|calorie|work|personal|home|office|"
                r"grocery|food|training|running|mobile|phone|email|e-mail")
_BARE_THING = re.compile(rf"^\s*(?P<thing>(?:(?i:{_THING_WORDS})\s+){{0,2}}(?i:goal|target|budget|limit|number|phone|mobile|"
                         r"email|e-mail|address|rent|dose|handle))"
                         r"(?P<is>\s+(?:is|are)\b|\s*[:,]?\s+(?=[+\d\w.-]+@|\+?\d))")


def as_users_fix(text: str) -> str:
    """A correction typed with no subject, as the user would say it ("Lives in Porto now" →
    "I live in Porto now"; "Reading goal is 30 books" → "my reading goal is 30 books"; "new
    number 07700 900 431" → "my new number is 07700 900 431"); any other text unchanged."""
    if m := _BARE_VERB.match(text):
        return _AS_FIRST[m.group("verb").lower()] + text[m.end():]
    if m := _BARE_THING.match(text):
        is_ = m.group("is").strip(" :,") or "is"
        return f"my {m.group('thing').lower()} {is_} " + text[m.end():].lstrip()
    return text
