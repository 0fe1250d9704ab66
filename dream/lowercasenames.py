"""A manager named in lower case, in chat written without capitals ("my manager is dana
levi", "my new boss stefan marinescu likes bullet points", "my review with gordon pike (my
manager)"): the patterns of :mod:`.relations` read names by their capitals, so these are read
here, in the few places a name is all the words can be.

Pure regular expressions over the sentence: no model, reproducible.
"""

from __future__ import annotations

import re

from .irrealis import hypothetical
from .relationrecord import Relation

#: Someone named in lower case where a person is the value ("my line manager is tariq aziz"),
#: in a sentence written all in lower case (a writer who capitalises nothing): two words
#: that are no common word of chat, nor read as an adjective, adverb or participle.
_LOWER_BOSS = r"(?:line\s+manager|manager|mgr|boss|supervisor|team\s+lead)"
#: A manager named in lower case: "my manager is dana levi", "my new boss stefan marinescu
#: likes bullet points" (a verb after the two words tells them a name), "my review with
#: gordon pike (my manager)".
_LOWER_PERSON = re.compile(r"\bmy\s+(?:new\s+)?" + _LOWER_BOSS + r"(?:\s+is|['’]s)\s+(?:now\s+)?"
                           r"(?P<v>[a-z]{2,}\s+[a-z]{2,})(?=\s*(?:[,.;!]|$)|\s+now\b)"
                           r"|\bmy\s+(?:new\s+)?" + _LOWER_BOSS + r"\s*,?\s+(?P<v2>[a-z]{2,}\s+[a-z]{2,})\s*,?\s+"
                           r"(?:likes|wants|said|says|asked|asks|thinks|needs|prefers|told|gave|sent|hates|loves|expects|"
                           r"doesn['’]t|does\s+not|won['’]t|is|was|has|just|always|never|only)\b"
                           r"|\b(?:with|to|from|for|by|and)\s+(?P<v3>[a-z]{2,}\s+[a-z]{2,})\s*(?:\(\s*|,\s*)my\s+(?:new\s+)?"
                           + _LOWER_BOSS + r"\b(?!['’])"
                           # "my mgr is anjali now (anjali menon)": the first name, then the full one
                           r"|\bmy\s+(?:new\s+)?" + _LOWER_BOSS + r"(?:\s+is|['’]s)\s+(?:now\s+)?(?P<first>[a-z]{2,})(?:\s+now)?"
                           r"\s*\(\s*(?P<v4>(?P=first)\s+[a-z]{2,})\s*\)")
NOT_NAME_WORDS = frozenset("""
a an the my our his her their your this that it is was be on off in out at to of for and or but so
very really super pretty quite kinda sorta so too rather bit lot much more most less least not no
new old nice great good bad fine ok okay cool chill strict lovely awesome terrible awful busy sick
ill away back here there now today tomorrow yesterday still also just leave holiday vacation gone
leaving retiring moving great amazing brilliant decent fair hard tough kind mean rude lazy sound
the best worst same different another someone somebody nobody everyone younger older tiny huge
""".split())
NOT_NAME_END = re.compile(r"(?:ly|ing|ed|ful|ous|ive|ic|able|ible|less|est)$")


def lower_case_managers(sentence: str) -> list[Relation]:
    """The speaker's manager named in lower case (see :data:`_LOWER_PERSON`), of a sentence
    written in lower case."""
    out = []
    for m in _LOWER_PERSON.finditer(sentence):
        words = (m.group("v") or m.group("v2") or m.group("v3") or m.group("v4")).split()
        if hypothetical(sentence, m.start()) or any(w in NOT_NAME_WORDS or NOT_NAME_END.search(w) for w in words):
            continue
        out.append(Relation("", "manager", " ".join(w.capitalize() for w in words), "set", "", False, "person"))
    return out


#: A place typed in lower case after a move ("since we moved up to porto last month"), in a
#: sentence written in lower case: a writer who capitalises nothing, whose "moved to zoom" or
#: "moved to python" would be read the same way by a writer who does (and is not).
_LOWER_MOVE = re.compile(r"\b(?:[iI]|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+)*(?:moved|relocated)\s+"
                         r"(?:back\s+|up\s+|down\s+|over\s+)?to\s+(?P<v>[a-z][a-z\-]{2,})"
                         r"(?=\s+(?:last|this|in|on|two|three|a\s+few|few|with|for)\b|\s*[.,;!)]|$)")
NOT_PLACES = frozenset("""sales marketing finance support ops operations engineering part full remote nights days
weekends another new tears town city country countryside suburbs abroad python zoom teams slack linux windows mac
spreadsheets decaf intermediate advanced beginner management""".split())


def lower_case_homes(sentence: str) -> list[Relation]:
    """The speaker's new home typed in lower case (:data:`_LOWER_MOVE`), of a sentence with no
    capital but "I"."""
    # the day dream writes after a relative one ("last month (April 2026)") is not the writer's
    typed = re.sub(r"\s*\([^()]*\d{4}[^()]*\)", "", sentence)
    if re.search(r"[A-Z]", re.sub(r"\bI(?=\b|['’])", "", typed)):
        return []
    out = []
    for m in _LOWER_MOVE.finditer(sentence):
        if m.group("v") not in NOT_PLACES and not hypothetical(sentence, m.start()):
            out.append(Relation("", "home", m.group("v"), "set", "", True, "place"))
    return out
