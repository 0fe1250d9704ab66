"""The speaker's own ways to be reached — an email address, a phone number, a messenger
handle — read by the value's shape, not by the wording around it.

People give these in endless phrasings ("for invoices please use my work mail x@y.de",
"best way to reach me is …", "new handy nr 0176 …", "clients find me on telegram @x"), but
the value itself is unmistakable, so one question is left: is it the speaker's? It is when
the sentence speaks of the speaker (I, me, my) or of a "new" address or number, and names
nobody else's ("her email", "Tom's number", "the office line"). One value per kind: a newer
address replaces the older one ("contact" keyed ``contact email``, ``contact phone``,
``contact telegram``…); a sentence with two of one kind says nothing (which is current?).
"that work email is gone/shut off" ends the address without a successor.

Returns plain tuples so :mod:`.relations` (which owns ``Relation``) can wrap them without a
circular import.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# At least seven digits, grouped as people write them; a date or an amount never has seven.
_PHONE = re.compile(r"(?<![\w/.,£$€-])\+?\(?\d[\d\s().-]{5,}\d(?![\w%])")
_HANDLE = re.compile(r"(?<![\w.@])@[A-Za-z0-9_][A-Za-z0-9_.-]{2,30}[A-Za-z0-9_]")

_PLATFORMS = ("telegram", "instagram", "insta", "twitter", "tiktok", "mastodon", "bluesky",
              "discord", "github", "signal", "threads", "linkedin", "snapchat", "skype")
_PLATFORM_RE = re.compile(r"\b(" + "|".join(_PLATFORMS) + r")\b", re.I)
_PHONE_WORDS = re.compile(r"\b(?:numbers?|nr|no\.|phone|mobile|cell|handy|whats\s?app|call|text|ring|"
                          r"contact|tel|landline|sms)\b", re.I)
# Numbers that are not a line to call: an account, an order, a booking…
_NOT_PHONE = re.compile(r"\b(?:account|iban|order|invoice|ref(?:erence)?|policy|booking|tracking|flight|"
                        r"serial|sort\s+code|card|pin|id|licen[cs]e|passport|case|ticket|postcode|zip)\b"
                        r"[^.;!?]{0,20}$", re.I)
# "use x@y.com for everything now" said to the assistant: the address is the speaker's.
_SPEAKER = re.compile(r"\b(?:my|me|I|I['’]m|I['’]ve|I['’]ll|mine)\b|^\s*(?:please\s+)?use\b|\bnew\s+(?:\w+\s+){0,2}"
                      r"(?:e-?mail|mail|address|number|nr|phone|mobile|cell|handy|handle|account|one)\b", re.I)
# Somebody else's address or number, or one that is not a person's own line.
_OTHERS = re.compile(r"\b(?:his|her|their|your|its)\s+(?:\w+\s+){0,2}(?:e-?mails?|mail|address|numbers?|phone|"
                     r"mobile|cell|handle|account)\b|\b[A-Z][\w-]+['’]s\s+(?:\w+\s+){0,2}(?:e-?mails?|mail|"
                     r"address|numbers?|phone|mobile|cell|handle|account)\b|\b(?:colleague|boss|manager|"
                     r"wife|husband|partner|mum|mom|dad|sister|brother|son|daughter|friend|landlord|landlady|client|"
                     r"office|reception|front\s+desk|support|helpdesk|hotline|team)\b[^.;!?]{0,25}$"
                     # "my landlady is Rosa Jiménez, phone +34 …": the number of the one named
                     r"|\b(?:landlord|landlady|neighbou?r|doctor|dentist|agent|accountant|lawyer|plumber|tutor|"
                     r"colleague|boss|manager|client|contact)\s+(?:is\s+)?(?:[A-Z][\w-]+\s*){1,3},\s*(?:\w+\s+){0,2}$"
                     # "Rosa has a new mobile, +34 …": a sentence about someone named first
                     r"|^\s*(?-i:[A-Z][\w-]+)(?:\s+(?-i:[A-Z][\w-]+))?\s+(?:has|got|gave\s+me|changed|switched)\b[^.;!?]*$"
                     # "my colleague Ilyas got a new phone number, +971 …": the news is his
                     r"|\b(?:colleague|boss|manager|wife|husband|partner|mum|mom|dad|sister|brother|son|daughter|"
                     r"friend|neighbou?r|landlord|client)\s+(?:[A-Z][\w-]+\s+){0,2}(?:got|has|gave|changed|"
                     r"switched|shared|sent|is\s+on)\b[^.;!?]*$", re.I)
_EMAIL_GONE = re.compile(r"\b(?:that|my|the|our)\s+(?:old\s+)?(?:(?:work|personal|school|uni|university|"
                         r"office|private)\s+)?(?:e-?mail|mail|address|inbox)(?:\s+address)?\s+"
                         r"(?:is\s+(?:gone|dead|closed|no\s+more)|(?:has\s+been\s+|was\s+|got\s+|is\s+)?"
                         r"(?:shut(?:\s+(?:off|down))?|closed|deactivated|deleted|cancell?ed|switched\s+off))\b",
                         re.I)


# A second address or number beside the first ("a second address just for newsletters"):
# one more, not a replacement.
_ANOTHER = re.compile(r"\b(?:second|another|extra|additional|spare|separate|backup|alternative|2nd)\s+"
                      r"(?:\w+\s+){0,2}(?:e-?mail|mail|address|inbox|number|nr|phone|mobile|line|sim|handle|account)\b", re.I)


_NEGATED_BEFORE = re.compile(r"\b(?:not|no\s+longer|instead\s+of|rather\s+than|replacing|in\s+place\s+of)\s+"
                             r"(?:the\s+|my\s+|old\s+|\w+\s+){0,2}$", re.I)


# "the 612 448 903 number is no longer hers": the value said gone, after it
_NEGATED_AFTER = re.compile(r"^\s*(?:(?:number|address|e-?mail|one|account|handle)\s+)?(?:is|was|has\s+been)\s+"
                            r"(?:no\s+longer|closed|gone|dead|cancell?ed|deactivated|switched\s+off)\b", re.I)


def _quoted(before: str) -> bool:
    """Whether a value after ``before`` stands in someone else's words, whose I and me are
    not the speaker's ("she wrote: 'reach me at x@y'"): after an open
    quotation mark (an odd count of straight quotes, or an opening curly one not closed) or
    a "wrote:" / "signature" that passes another's text on."""
    if before.count('"') % 2 == 1 or before.count("“") > before.count("”") or before.count("«") > before.count("»"):
        return True
    return bool(re.search(r"\b(?:wrote|writes|signature|signed(?:\s+off)?|forwarded|fwd|pasted|copied|quoting)\b",
                          before, re.I))


def _kind_values(sentence: str) -> list[tuple[str, str, int]]:
    """(kind, value, start) of every address, number and handle in ``sentence``."""
    found: list[tuple[str, str, int]] = []
    emails = list(_EMAIL.finditer(sentence))
    for m in emails:
        found.append(("email", m.group(0).lower(), m.start()))
    masked = _EMAIL.sub(lambda m: " " * len(m.group(0)), sentence)
    if _PHONE_WORDS.search(masked) or re.search(r"\bnew\s+one\b", masked, re.I):
        for m in _PHONE.finditer(masked):
            digits = re.sub(r"\D", "", m.group(0))
            if 7 <= len(digits) <= 15 and not _NOT_PHONE.search(masked[:m.start()]):
                found.append(("phone", " ".join(m.group(0).split()), m.start()))
    platform = _PLATFORM_RE.search(masked)
    for m in _HANDLE.finditer(masked):
        kind = platform.group(1).lower() if platform else "handle"
        found.append(("insta" == kind and "instagram" or kind, m.group(0), m.start()))
    return found


def channels(sentence: str) -> list[tuple[str, str, str, int]]:
    """(key, value, op, start) for each way to reach the speaker ``sentence`` gives (op
    ``set``), or takes away (op ``end``, value ``""``)."""
    out: list[tuple[str, str, str, int]] = []
    if any(not re.search(r"\b(?:no|not|never|without)\b|n['’]t\b", sentence[max(0, m.start() - 20):m.start()], re.I)
           for m in _ANOTHER.finditer(sentence)):
        return out
    # "my email is now x@new, not x@old": the value after "not" is the one it replaces,
    # said to name it, and no second value of its kind
    found = [(k, v, at) for k, v, at in _kind_values(sentence)
             if not _NEGATED_BEFORE.search(sentence[max(0, at - 24):at])
             and not _NEGATED_AFTER.match(sentence[at + len(v):])]
    kinds = [k for k, _v, _s in found]
    for kind, value, start in found:
        before = sentence[:start]
        if kinds.count(kind) > 1 or not _SPEAKER.search(sentence) or _OTHERS.search(before) \
                or _quoted(before):
            continue
        out.append((f"contact {kind}", value, "set", start))
    if not any(k == "email" for k in kinds):
        m = _EMAIL_GONE.search(sentence)
        if m and not _OTHERS.search(sentence[:m.start()]) and re.search(r"\b(?:my|that|our)\b", m.group(0), re.I):
            out.append(("contact email", "", "end", m.start()))
    return out
