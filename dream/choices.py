"""The speaker's standing choices of how things come: a value of a closed dimension
(spelling, temperature unit, units, layout, time format, tone, reply language) and a file
format, each keyed by what it is a choice of, so a newer choice replaces the older; an
instruction about one thing ("write this in bullet points") is no standing choice."""

from __future__ import annotations

import re

from .formats import format_values
from .irrealis import hypothetical, unrealised
from .relationrecord import Relation


#: Closed sets of values of one dimension of how a person wants things (a standing choice
#: among them): a newer choice in the same dimension replaces the older, whatever the verb
#: ("I use British spelling" → "Actually I prefer American spelling now"; "Give me
#: temperatures in Fahrenheit" → "Switch to Celsius please"). (dimension, pattern, canonical
#: spellings of one value).
_DIMENSIONS: list[tuple[str, re.Pattern[str], dict[str, str]]] = [
    ("spelling", re.compile(r"\b(?P<v>(?:British|American|UK|US|Australian|Canadian|Oxford)\s+(?:English\s+)?spelling)\b"),
     {"uk": "British", "us": "American"}),
    ("temperature unit", re.compile(r"\b(?:degrees\s+)?(?P<v>Celsius|Fahrenheit|centigrade|celsius|fahrenheit)\b"),
     {"centigrade": "Celsius", "celsius": "Celsius", "fahrenheit": "Fahrenheit"}),
    ("units", re.compile(r"\b(?P<v>metric|imperial)(?:\s+units|\s+measurements)?\b", re.I), {}),
    ("layout", re.compile(r"\b(?P<v>(?:(?:full|short|proper|longer|plain)\s+)?paragraphs|(?:full|complete|short)\s+sentences|prose|bullet(?:ed)?\s+(?:points|lists?)|bullets|"
                          r"numbered\s+lists?|tables)\b", re.I),
     {"bullets": "bullet points", "bullet list": "bullet points", "bulleted list": "bullet points",
      "bullet lists": "bullet points", "bulleted lists": "bullet points", "bullet points": "bullet points"}),
    ("time format", re.compile(r"\b(?P<v>(?:24|12)[- ]hour\s+(?:clock|time|format))\b", re.I), {}),
    ("tone", re.compile(r"\b(?P<v>formal|informal|casual|chatty|friendly)(?:\s+(?:tone|style|register|language))?\b", re.I),
     {"formal": "formal tone", "informal": "casual tone", "casual": "casual tone", "chatty": "casual tone",
      "friendly": "friendly tone"}),
    ("language", re.compile(r"\bin\s+(?P<v>(?-i:English|Portuguese|Spanish|French|German|Italian|Dutch|Polish|Japanese|"
                            r"Chinese|Mandarin|Korean|Arabic|Hindi|Turkish|Swedish|Norwegian|Danish|Finnish|Greek|"
                            r"Russian|Ukrainian|Indonesian|Vietnamese|Thai|Czech|Romanian|Hungarian|Hebrew))\b", re.I), {}),
]
#: What makes a value of a dimension the speaker's standing choice: their own stance ("I
#: prefer", "I use", "I like replies as …"), a switch ("switch to X", "I've gone back to X"),
#: or an instruction opening the sentence ("Give me temperatures in X", "From now on write to
#: me in X"); a stance that ends ("I don't need bullet points anymore") ends it.
_DIM_TRIGGER = re.compile(
    r"\b(?:I|we)(?:['’]d|\s+would)?\s+(?:(?:now|really|actually|mostly|always|usually|still|much|generally)\s+)*(?P<stance>prefer|use|like|want|"
    r"write\s+in|work\s+in|think\s+in|rather\s+have)\b"
    r"|(?:^|[.;!:]\s+|\b(?:I|we)(?:['’]ve|\s+have|['’]ll|\s+will)?\s+(?:just\s+|now\s+)?|\bplease\s+|\blet['’]s\s+)(?P<switch>switch|switched|"
    r"change|changed|go\s+back|gone\s+back|went\s+back|move|moved|stick|stay)(?:\s+(?:over|back))?(?:\s+from\s+[^.;!?]{1,40}?)?\s+(?:to|with)\b"
    r"|^(?:please\s+)?(?P<marker>from\s+now\s+on|going\s+forward|in\s+future|from\s+today)\b"
    r"|^(?:(?:please|always|from\s+now\s+on|going\s+forward|in\s+future|from\s+today)\s*,?\s+)*(?:just\s+)?(?P<order>give|send|write|reply|"
    r"answer|format|put|show|keep|do|use|list|express|set\s+out)\b"
    r"|\b(?:I|we)\s+(?:don['’]t|do\s+not|no\s+longer|won['’]t)\s+(?P<stop>want|need|use|like)\b"
    r"|^(?:please\s+)?(?P<stop2>no\s+more)\b", re.I)
#: Words between an instruction and its value that make it about one thing, not a standing
#: choice ("Write this in bullet points", "give me today's forecast in Celsius").
_ONE_OFF = re.compile(r"\b(?:this|that|these|those|it|today['’]s|tonight['’]s|the\s+(?:last|attached|above|following))\b", re.I)
#: One thing named before the value ("Write the summary in bullet points", "give me the
#: answer in Celsius"): a singular noun after a determiner. Plural things ("the monthly
#: reports as PDF", "temperatures in °F") are a kind of thing, asked for every time.
_ONE_THING = re.compile(r"\b(?:the|this|that|my|your|our)\s+(?:[\w\-]+\s+){0,2}(?P<n>[\w\-]+)\s+(?:in|as|to|into|using|with)\s*$", re.I)
_STANDING_MARK = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|in\s+future|from\s+today|always|every\s+time|anymore|any\s+more)\b", re.I)


def _for_once(before: str, sentence: str) -> bool:
    """Is an instruction about one thing, not a standing choice (see :data:`_ONE_OFF`,
    :data:`_ONE_THING`; "from now on", "always" make it standing)?"""
    if _STANDING_MARK.search(sentence):
        return False
    if _ONE_OFF.search(before):
        return True
    m = _ONE_THING.search(before)
    return bool(m) and not m.group("n").lower().endswith("s")


_NOT_CHOSEN = re.compile(r"(?:\bnot|\brather\s+than|\binstead\s+of|\bover|\bfrom|\bthan|\bno\s+more)\s+(?:in\s+|as\s+)?$", re.I)


def dimensions(sentence: str) -> list[Relation]:
    """The speaker's standing choices of a :data:`_DIMENSIONS` value (see there)."""
    out: list[Relation] = []
    for t in _DIM_TRIGGER.finditer(sentence):
        if unrealised(sentence, t.start()):
            continue
        end = re.search(r"[.;!?]|\s+but\b", sentence[t.end():])
        clause = sentence[t.end():t.end() + end.start()] if end else sentence[t.end():]
        for dim, rx, canon in _DIMENSIONS:
            for m in rx.finditer(clause):
                if _NOT_CHOSEN.search(clause[:m.start()]) or (
                        (t.group("order") or t.group("switch")) and _for_once(clause[:m.start()], sentence)):
                    continue
                v = m.group("v")
                v = canon.get(v.lower(), v)
                if dim == "spelling":
                    first, rest = v.split(None, 1)
                    v = f"{canon.get(first.lower(), first)} {rest}"
                op = "end" if t.group("stop") or t.group("stop2") else "set"
                if not any(r.key == f"preference {dim}" for r in out):
                    out.append(Relation("", "preference", v, op, f"preference {dim}"))
                break
    # the mark of a standing choice after its value ("casual is fine from now on", "metric
    # from now on please"): the value in the marked clause
    for mark in _STANDING_MARKER.finditer(sentence):
        # the clause around the mark, found outward from it (a pattern that scans for the
        # clause's start took quadratic time on a long turn without punctuation)
        start = max(sentence.rfind(p, 0, mark.start()) for p in ".;!?,") + 1
        ends = [i for i in (sentence.find(p, mark.end()) for p in ".;!?,") if i >= 0]
        clause = sentence[start:min(ends) if ends else len(sentence)]
        if unrealised(sentence, start):
            continue
        for dim, rx, canon in _DIMENSIONS:
            if any(r.key == f"preference {dim}" for r in out):
                continue
            m = rx.search(clause)
            if m and not _NOT_CHOSEN.search(clause[:m.start()]):
                v = canon.get(m.group("v").lower(), m.group("v"))
                out.append(Relation("", "preference", v, "set", f"preference {dim}"))
    return out


_STANDING_MARKER = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|from\s+today)\b", re.I)


#: Words that make a format named in a sentence a standing choice without an instruction
#: verb ("xlsx from now pls", "as of March …", "I meant SVG").
_FORMAT_STANDING = re.compile(r"\b(?:whenever|as\s+of|now|for\s+everything|all\s+(?:my|the|our)|every|each|default|meant)\b", re.I)
#: The thing a format is for, right before it ("export the figures as PDF", "summaries in
#: Markdown"), its plural "s" dropped as the format patterns key it.
_FORMATTED = re.compile(r"\b(?P<k>[a-z]+?)s?\s+(?:files?\s+)?(?:(?:should|must|need\s+to|have\s+to|can|will|are\s+to)\s+"
                        r"(?:always\s+)?be\s+(?:in\s+|saved\s+as\s+|exported\s+as\s+|sent\s+as\s+)?|as\s+|in\s+|into\s+)"
                        r"(?:an?\s+)?$", re.I)
_NOT_FORMATTED = frozenset("them it this that everything anything stuff thing me us everyone one all "
                           "be".split())
#: A format is what is asked for where a word of choosing leads to it ("as PDF", "should be
#: SVG", "always SVG", "formatted for PowerPoint", "insists on Chicago") or a word of standing
#: follows it ("xlsx from now pls"); "the PNGs blur in print" names one, and asks nothing.
_CHOSEN_BEFORE = re.compile(r"(?:^|\b(?:as|in|into|to|be|meant|use|using|prefer|want|always|only|just|on|for|with))"
                            r"\s*(?:an?\s+|the\s+)?(?:\w+\s+)?$", re.I)
_CHOSEN_AFTER = re.compile(r"\s*(?:from\s+now|now|please|pls|going\s+forward|for\s+everything|only|from\s+today)\b",
                           re.I)
#: An instruction anywhere in the sentence ("… so give me slide stuff in Google Slides").
_FORMAT_ORDER = re.compile(r"\b(?:give|send|export|save|use|format|make|keep|switch|put|write|deliver|share)\b", re.I)
#: A format named as what was, not what is wanted ("PowerPoint is gone for us", "I wrote PNG
#: yesterday").
_FORMAT_GONE = re.compile(r"^\s*(?:is|are|was|were)\s+(?:gone|dead|out|over|history|no\s+more|banned)\b"
                          r"|^\s*(?:yesterday|before|earlier|last\s+time)\b", re.I)


def formats(sentence: str) -> list[Relation]:
    """The speaker's standing choice of a format (:mod:`.formats`), one per family: the
    last one the sentence wants, not one it turns down ("xlsx from now, not csv")."""
    found = format_values(sentence)
    if not found:
        return []
    ordered = any(not (t.group("stop") or t.group("stop2")) for t in _DIM_TRIGGER.finditer(sentence)) \
        or bool(_FORMAT_ORDER.search(sentence))
    strong = bool(_STANDING_MARK.search(sentence))
    standing = strong or bool(_FORMAT_STANDING.search(sentence))
    if not (ordered or strong or (standing and re.search(r"\b(?:I|we|my|me|our|us|pls|please)\b", sentence, re.I))):
        return []
    last: dict[str, str] = {}
    for family, value, start, end in found:
        clause = re.split(r"[.;:!,]\s+", sentence[:start])[-1]
        # a modal is how a format is asked for ("charts should be SVG"): only a condition,
        # a wish or a time gone by keeps it from holding
        if hypothetical(sentence, start) or _NOT_CHOSEN.search(sentence[:start]) or _FORMAT_GONE.search(sentence[end:]) \
                or (not standing and _for_once(clause, sentence)) \
                or not (_CHOSEN_BEFORE.search(sentence[:start]) or _CHOSEN_AFTER.match(sentence[end:])):
            continue
        # what is formatted, where the sentence names it ("the figures as SVG"): a figure's
        # format and a report's are two choices; else the family stands for the thing
        thing = _FORMATTED.search(sentence[:start])
        noun = thing.group("k").lower() if thing and thing.group("k").lower() not in _NOT_FORMATTED else ""
        last[f"format of {noun}" if noun else f"format {family}"] = value
    return [Relation("", "format", v, "set", key) for key, v in last.items()]
