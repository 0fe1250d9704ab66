"""Values that end with no successor: retired or between jobs (the employer), reporting to
nobody (the manager), nobody leading a project, a deadline dropped."""

from __future__ import annotations

import re

from .irrealis import unrealised
from .patternwords import NAME
from .projects import PROJECT
from .relationrecord import Relation


#: A state that ends one without naming it or a successor: retired or between jobs (the
#: employer), reporting to nobody (the manager), nobody leading a project, a deadline dropped.
_ENDED = (
    ("employer", re.compile(r"\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?retired\b"
                            r"|(?:^|[.;!]\s+)(?:just\s+|finally\s+|officially\s+)?retired\s+(?:at|in|on|last|this|from|after|today|yesterday)\b"
                            r"|\bI(?:['’]m|\s+am)\s+(?:now\s+|officially\s+)?(?:retired|between\s+jobs|unemployed|out\s+of\s+work)\b"
                            # "I got let go on friday", "they let go of the whole QA dept, me included"
                            r"|\bI\s+(?:was|got|have\s+been|['’]ve\s+been)\s+(?:just\s+)?(?:let\s+go|laid\s+off|made\s+redundant)"
                            r"(?=\s*(?:[.,;!]|$)|\s+(?:on|last|this|yesterday|today|in|along|with)\b)"
                            r"|\blet\s+go\s+of\b[^.;!?]{0,70}?,?\s+(?:me|myself)\s+included\b"
                            r"|\blaid\s+off\b[^.;!?]{0,70}?,?\s+(?:me|myself)\s+included\b", re.I)),
    ("manager", re.compile(r"\bI\s+(?:don['’]t|do\s+not|no\s+longer)\s+(?:technically\s+|really\s+|actually\s+)?report\s+to\s+"
                           r"(?:anyone|anybody|a\s+manager|a\s+boss)\b|\bI\s+(?:have|['’]ve)\s+no\s+(?:manager|boss)\b", re.I)),
    ("deadline", re.compile(r"\b(?:dropped|removed|scrapped|lifted|cancell?ed)\s+the\s+deadline\b"
                            r"|\bno\s+(?:hard\s+|fixed\s+)?deadline\s+(?:any\s*more|now)\b", re.I)),
)
_NOBODY_LEADS = re.compile(r"\b(?:nobody|no\s+one|no-one)(?:['’]s|\s+is)\s+(?:leading|running|heading)\s+(?:the\s+)?(?P<s>(?-i:" + NAME + r"))", re.I)
#: "the Orchard app doesn't have a lead right now", "Vesper has no owner any more"
_HAS_NO_LEAD = re.compile(r"(?P<s>" + PROJECT + r")\s+(?:doesn['’]t|does\s+not|no\s+longer)\s+(?:have|has)\s+(?:a|an|any)\s+"
                          r"(?:lead|leader|owner|project\s+lead)\b|(?P<s2>" + PROJECT + r")\s+has\s+no\s+"
                          r"(?:lead|leader|owner|project\s+lead)\b", re.I)


_BACK_THEN = re.compile(r"\b(?:in|back\s+in|since)\s+(?:19|20)\d\d\b|\byears\s+ago\b|\bback\s+then\b", re.I)


def ended(sentence: str) -> list[Relation]:
    """Values the speaker says are over, with no successor (:data:`_ENDED`)."""
    out = [Relation("", attr, "", "end", "deadline|" if attr == "deadline" else "", True)
           for attr, rx in _ENDED if (m := rx.search(sentence)) and not unrealised(sentence, m.start())
           # "I was laid off in 2009": a life's history, not today's end
           and not (attr == "employer" and _BACK_THEN.search(sentence))]
    out += [Relation(m.group("s"), "lead", "", "end", "", True) for m in _NOBODY_LEADS.finditer(sentence)
            if not unrealised(sentence, m.start())]
    out += [Relation(m.group("s") or m.group("s2"), "lead", "", "end", "", True) for m in _HAS_NO_LEAD.finditer(sentence)
            if not unrealised(sentence, m.start())]
    return out
