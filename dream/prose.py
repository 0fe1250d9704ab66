"""The wiki's own words: a first-person sentence as a third-person statement, and dates as a
reader writes them.

``third_person("I adopted a dog last weekend.", "Mara Lind")`` → "Mara Lind adopted a dog
last weekend." The first "I" becomes the name, later ones "they"; "my" becomes "Mara Lind's"
then "their"; "I'm" → "is", "I've" → "has", a present-tense verb after "I" takes its "-s"
("I love" → "loves"). Interjections that open a chat line ("Big news:", "Yes,", "Actually")
are dropped. The content words stay those of the source, so verification still finds them
there (it compares word stems).
"""

from __future__ import annotations

import datetime as _dt
import re

from .text import content_words

#: Discourse openers ("Big news:", "By the way,", "Reminder:") before what a sentence states.
OPENERS = re.compile(
    r"^(?:(?:big news|good news|bad news|update|correction|a correction|quick update|"
    r"fun fact|by the way|btw|also|actually|so|well|yes|yeah|no|oh|ok|okay|hey|hi|hello|"
    r"guess what|anyway|and|but|great|good|sure|thanks|honestly|finally|now|noting this for later|"
    r"note to self|still true|reminder|just a reminder|something to remember|"
    r"before i forget|same as before|one more thing|heads up|fyi|noted|quick note|for the record|"
    r"for context|to be clear|again)\b[\s,:!.\-—]*)+", re.I)
_MODALS = frozenset("can could will would should might must may shall did had was were "
                    "do does don't didn't can't won't wouldn't couldn't shouldn't".split())
#: Past forms that do not end in "-ed" (an "-s" would make "lefts").
_PAST = frozenset("""left went got met took made saw came ran said told found bought brought thought
felt kept gave sent spent began wrote read put set had won lost paid built sold heard held knew
grew flew drew ate drank swam sang taught caught fought chose drove rode broke spoke woke forgot
became sat stood understood slept led fed fell hurt cut hit quit let shut tried""".split())
_ADVERBS = frozenset("really just also never always still now finally only actually usually "
                     "often recently even already sometimes currently officially definitely "
                     "totally absolutely truly mostly rarely once first".split())
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "'m": "is", "'ve": "has",
              "'ll": "will", "'d": "would"}
_PLURAL = {"am": "are", "was": "were", "'m": "are", "'ve": "have", "have": "have", "has": "have"}


def _inflect(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    past = low.endswith("ed") and not low.endswith("eed") and low not in ("embed", "shed", "wed", "shred")
    if low in _MODALS or low in _PAST or past or not low.isalpha():
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


#: "X and I" as a sentence's subject: the speaker and someone else.
_JOINT_RE = re.compile(r"(?<![\w-])[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)*\s+and\s+I\b")
#: The first person plural of such a sentence, in the wiki's words.
_JOINT = {"our": "their", "ours": "theirs", "us": "them", "ourselves": "themselves"}


class _Referent:
    """The speaker as the rewritten sentence names them: by name the first time, then
    "they", "their", "them"."""

    def __init__(self, name: str) -> None:
        self.joint = False          # the sentence's subject is "X and I"
        self.name = name
        self.named = False          # the name was used (as subject or object)
        self.possessed = False      # "<name>'s" was used

    def subject(self) -> str:
        if self.named:
            return "they"
        self.named = True
        return self.name

    def possessive(self) -> str:
        if self.possessed or self.named:
            return "their"
        self.possessed = True
        return f"{self.name}'s"

    def object(self) -> str:
        out = "them" if self.named else self.name
        self.named = True
        return out


def third_person(sentence: str, name: str) -> str:
    """``sentence`` (said by ``name``) rewritten in the third person (see module docstring)."""
    s = OPENERS.sub("", sentence.strip()).strip()
    if not s:
        return sentence
    s = s[0].upper() + s[1:]
    ref = _Referent(name)
    # "Kenji and I go back to our student days": "our" is theirs, and the verb stays plural
    ref.joint = bool(_JOINT_RE.search(s))
    # every character is kept: letters (accented too), numbers, spaces, punctuation
    toks = re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+(?:[.,:]\d+)*|\s+|_|[^\w\s]", s)
    # one output per token; rewriting "I" inflects a later token in place
    text = "".join(_rewrite(toks, i, ref) for i in range(len(toks))).strip()
    return text[0].upper() + text[1:] if text else text


def _rewrite(toks: list[str], i: int, ref: _Referent) -> str:
    """Token ``i`` in the third person."""
    t = toks[i]
    low = t.lower().replace("’", "'")
    if low in ("i", "i'm", "i've", "i'll", "i'd"):
        return _subject(toks, i, low, ref)
    if low == "my":
        return ref.possessive()
    if low == "me":
        return ref.object()
    if low == "myself":
        return "themselves"
    if ref.joint and low in _JOINT:
        return _JOINT[low] if t[:1].islower() else _JOINT[low].capitalize()
    if low == "mine":
        return "theirs"
    return t


def _subject(toks: list[str], i: int, low: str, ref: _Referent) -> str:
    """"I" (or "I'm", "I've", …) as the speaker's name or "they", with its verb agreeing:
    a clitic's verb here, the next verb (past any adverbs) in ``toks``."""
    who = ref.subject()
    # "Kenji and I": a subject of two people takes the plural verb
    k = i - 1
    while k >= 0 and toks[k].isspace():
        k -= 1
    plural = who == "they" or (k >= 0 and toks[k].lower() in ("and", "&"))
    if low != "i":
        clitic = low[1:]
        verb = _PLURAL.get(clitic, _IRREGULAR[clitic]) if plural else _IRREGULAR[clitic]
        return f"{who} {verb}"
    j = i + 1
    while j < len(toks):
        w = toks[j]
        wl = w.lower()
        if w.isspace() or wl in _ADVERBS:
            j += 1
            continue
        if w[:1].isalpha() and w[:1].islower():
            toks[j] = (_PLURAL.get(wl, w) if plural else _inflect(w))
        break
    return who


def human_day(day: str | None) -> str:
    """"2026-04-02" → "2 April 2026" (anything else unchanged)."""
    if not day:
        return ""
    try:
        d = _dt.date.fromisoformat(day[:10])
    except ValueError:
        return day
    return f"{d.day} {d.strftime('%B')} {d.year}"


def a_or_an(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


#: A word that points outside its sentence, at its end ("… is waiting on it.") or as its
#: subject ("It was great.").
_POINTS_AT_END_RE = re.compile(r"\b(?:it|them|this|that|these|those|him|her)\s*[.!]*\s*$", re.I)
_POINTS_AT_START_RE = re.compile(r"^(?:it|it's|they|they're|this|that|these|those|he|she)\b", re.I)


def says_nothing(sentence: str) -> bool:
    """Does ``sentence`` say nothing alone: its subject or object is only a pronoun that
    another sentence explains, and besides the names in it at most two content words are
    left ("Sora City Lab is waiting on it.", "It was great.", "They loved it.")? Such a
    line, written on a page, tells a reader nothing (and said seven times, seven times)."""
    s = OPENERS.sub("", sentence.strip()).strip()
    names = {w.lower() for w in re.findall(r"(?<!^)(?<![.!?]\s)\b[A-Z][\w'’\-]*", s)}
    # "It came up again in the Vesterby interviews." still says where something came up
    if not (_POINTS_AT_END_RE.search(s) or (_POINTS_AT_START_RE.match(s) and not names)):
        return False
    rest = [w for w in content_words(s) if w not in names
            and w not in ("it", "them", "this", "that", "these", "those", "him", "her")]
    return len(rest) <= 2
