"""Deadlines a sentence states ("the atlas report deadline is 3 May", "the grant report is
due 3 May", "launch slipped to 23 September"), and the shape of a date as said
(:data:`DATE`). Each is keyed as :mod:`.quantitykeys` says.
"""

from __future__ import annotations

import re

from .irrealis import unrealised
from .patternwords import MONTHS
from .quantitykeys import after_determiner, modifiers, names_key, owner_of, possessor, with_front
from .relationrecord import Relation, clean_value


_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
#: A date as said; a weekday before a day of a month ("friday 14 August") is part of it, so
#: the day, not the weekday, is the value (:func:`deadlines` drops the weekday).
DATE = (rf"(?:(?:{_WEEKDAY},?\s+(?:the\s+)?)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})(?:\s+\d{{4}})?"
        rf"|(?:{_WEEKDAY},?\s+)?(?:{MONTHS})\s+\d{{1,2}}"
        rf"(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|(?:monday|tuesday|wednesday|"
        rf"thursday|friday|saturday|sunday)|end of (?:{MONTHS}))")

_WEEKDAY_BEFORE = re.compile(rf"^{_WEEKDAY},?\s+(?:the\s+)?(?=\d|[a-z]+\s+\d)", re.I)
_DEADLINE = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+)?(?P<mods>(?:[\w\-]+\s+){{0,4}}?)(?:(?P<head>deadline|due date)\s+"
    rf"(?:(?:for|of|on)\s+(?:the\s+)?(?P<of>[\w\-]+(?:\s+[\w\-]+){{0,3}}?)\s+)?"
    rf"(?:is|was|has|will be|moved|was moved|has been moved|changed|got moved|is now|:|=|->|→)\s*(?:now\s+)?"
    rf"(?:moved\s+|pushed\s+|changed\s+|back\s+)?(?:from\s+(?:the\s+)?{DATE}\s+)?(?:to\s+|on\s+|for\s+)?|(?P<head2>is|are)\s+(?:now\s+)?due\s+"
    rf"(?:on\s+|by\s+)?|(?:be\s+)?(?P<head3>live|ready|done|finished|submitted|delivered)\s+by\s+|"
    rf"(?<=[a-z]\s)(?P<head4>due)\s+(?:on\s+|by\s+)?|(?<=[a-z]\s)(?P<head5>date)\s+(?:is|was|has\s+been|will\s+be)\s+(?:now\s+)?(?:moved\s+to\s+|set\s+for\s+)?)"
    rf"(?:the\s+)?(?P<v>{DATE})\b", re.I)
#: What has a date of its own to keep: "our app launch is 15 May", "we pushed the launch to 12 June".
_DATED = r"(?:launch|release|go-live|go\s+live|submission|handover|hand-in|opening|premiere|kickoff|kick-off)"
_DEADLINE_VERB = re.compile(
    rf"\b(?:pushed|moved|postponed|brought forward|extended|changed)\s+(?:the\s+|our\s+|my\s+)?"
    rf"(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?:deadline|due date)\s+(?:back\s+)?to\s+(?:the\s+)?(?P<v>{DATE})\b"
    # "they brought the portfolio deadline forward to 13 January", "we pushed the launch to 12 June"
    rf"|\b(?:pushed|moved|postponed|brought|delayed|bumped|shifted|rescheduled)\s+(?:the\s+|our\s+|my\s+)"
    rf"(?P<mods2>(?:[\w\-]+\s+){{0,2}}?(?:(?:deadline|due date)|{_DATED}))\s+(?:back\s+|forward\s+|out\s+)?to\s+"
    rf"(?:the\s+)?(?P<v2>{DATE})\b", re.I)
#: "Our app launch is 15 May": the date of something dated by its name.
_DATED_IS = re.compile(
    rf"(?:^|\b(?:the|our|my)\s+)(?P<mods>(?:[\w\-]+\s+){{0,2}}?{_DATED})\s+(?:date\s+)?(?:is|was|will\s+be|is\s+now)\s+"
    rf"(?:on\s+|set\s+for\s+)?(?:the\s+)?(?P<v>{DATE})\b", re.I)
#: A date that moved, by the verb of moving ("launch slipped to 23 September", "the review got
#: pushed back to Friday", "the handover date has been moved to 3 May"): keyed by what moved.
_DEADLINE_SLIP = re.compile(
    rf"(?:^|\b(?:the|our|my|their)\s+|[.;:!,]\s+)(?P<mods>(?:[\w\-]+\s+){{0,2}}?[\w\-]+)\s+(?:date\s+|deadline\s+)?"
    rf"(?:(?:has|have|had|was|were|is|got|been|just)\s+)*(?:slipped|slips|pushed(?:\s+back|\s+out)?|postponed|delayed|"
    rf"put\s+back|brought\s+forward|bumped|shifted|moved(?:\s+back|\s+out)?|rescheduled)\s+(?:back\s+|out\s+)?to\s+"
    rf"(?:the\s+)?(?P<v>{DATE})\b", re.I)
#: Words that are no name of something due (a subject pronoun, a verb left in front).
_NOT_DUE = frozenset("i we you he she they it this that which who what there here me us him her them "
                     "is are was were be been has have had get got just also when if".split())


_MODAL_TAIL = re.compile(r"(?:\s+(?:has|have|needs?|must|should|will|is|are|to|got))+\s*$", re.I)


#: The thing due before "for the X" / "to the X" ("my annual report for the regional council").
_NOT_THING = r"(?!(?:the|a|an|my|our|his|her|their|your|i|we|you|he|she|they|it|is|are|was|need|needs|have|has)\b)"
_THING_FOR = re.compile(rf"(?:\b(?:my|our|the|his|her|their|your)\s+)?(?P<np>(?:{_NOT_THING}[\w\-]+\s+){{0,3}}"
                        rf"{_NOT_THING}[\w\-]+)\s+for\s+(?:the\s+|an?\s+)?$", re.I)


def deadlines(sentence: str) -> list[Relation]:
    """Deadlines ("the atlas report deadline is 3 May", "the grant report is due 3 May")."""
    out: list[Relation] = []
    for m in _DEADLINE.finditer(sentence):
        head = (m.group("head") or m.group("head2") or m.group("head3") or "").lower()
        start = after_determiner(sentence, m.start("mods"), m.end("mods"))
        if thing := _THING_FOR.search(sentence[:start]):
            # "my water quality report for the regional council is due 9 October": the report
            # is due, for the council (its key holds both: "report deadline" names it too)
            start = thing.start("np")
        # "the Lakeview Cottage has to be done by April 30": the thing due, not its modal
        end = start + len(_MODAL_TAIL.sub("", sentence[start:m.end("mods")]))
        mods = modifiers(sentence[start:end] + " " + (m.group("of") or ""))
        owner = owner_of(sentence, m.start("mods"))
        whose = possessor(sentence, m.start("mods")) if owner is None else ""
        if owner is None and not whose:
            continue  # "my daughter's deadline": someone else's
        mods = ((owner or "") + " " + mods).strip()
        if m.group("head4") or m.group("head5"):
            # "thesis draft due 1 june", "our launch date is 9 September": what is due must
            # be named ("due 3 May" alone, "the date is …" name nothing)
            if not mods or set(mods.split()) & _NOT_DUE:
                continue
            head = "deadline"
        if head in ("is", "are"):
            head = "deadline"
        elif head not in ("deadline", "due date"):
            mods = (mods + " " + head).strip()
            head = "deadline"
        what = " ".join(sentence[start:end].split())
        span = sentence[start:end] + (" " + m.group("of") if m.group("of") else "")
        out.append(Relation(whose, "deadline", clean_value(_WEEKDAY_BEFORE.sub("", m.group("v"))), "set",
                            with_front(f"deadline|{mods}" + names_key(span, start), sentence, m.start("v")),
                            False, "", phrase=(f"deadline for {what}" if what else "deadline")))
    for m in _DEADLINE_SLIP.finditer(sentence):
        start = after_determiner(sentence, m.start("mods"), m.end("mods"))
        what = " ".join(sentence[start:m.end("mods")].split())
        mods = modifiers(what)
        if not mods or set(mods.split()) & _NOT_DUE or unrealised(sentence, m.start()):
            continue
        out.append(Relation("", "deadline", clean_value(m.group("v")), "set",
                            f"deadline|{mods}" + names_key(sentence[start:m.end("mods")], start), False, "",
                            phrase=f"deadline for {what}"))
    for m in [*_DEADLINE_VERB.finditer(sentence), *_DATED_IS.finditer(sentence)]:
        if unrealised(sentence, m.start()):
            continue
        what = " ".join((m.group("mods") or m.groupdict().get("mods2") or "").split())
        what = re.sub(r"\s*\b(?:deadline|due date)$", "", what)
        if any(r.value == clean_value(m.group("v") or m.groupdict().get("v2") or "") for r in out):
            continue  # read already by the patterns above
        out.append(Relation("", "deadline", clean_value(m.group("v") or m.groupdict().get("v2") or ""), "set",
                            f"deadline|{modifiers(what)}", False, "",
                            phrase=(f"deadline for {what}" if what else "deadline")))
    return out
