"""What a sentence states without it holding: inside a condition, a supposition or a wish,
or in a time gone by (:func:`hypothetical`), or only possible, meant or planned
(:func:`unrealised`). Every module of relation patterns asks these before it keeps a match."""

from __future__ import annotations

import re


#: A condition, a supposition or a wish governs what follows it in its sentence ("If I moved
#: to Oslo I'd be closer to my sister", "I wish I worked at X"): nothing stated there holds.
_IRREALIS = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|whether|in\s+case|wish|wished)\b[^.;!?]*$",
                       re.I)


#: A time gone by governs what follows it: "When I was at Argent Media, we had a budget of
#: 5000" (the rest of the sentence); "I used to …", "back in 2019 …" (the rest of the clause).
_PAST_FRAME = re.compile(r"\b(?:when|while)\s+(?:I|we)\s+(?:was|were)\b[^.;!?]*$"
                         r"|\b(?:used\s+to|back\s+in\s+\d{4}|back\s+then|in\s+my\s+(?:old|last|previous)\s+job)\b[^.;!?,]*$", re.I)


def hypothetical(sentence: str, at: int) -> bool:
    """Is the text at ``at`` inside a condition, supposition or wish of ``sentence``, or in a
    time gone by?"""
    return bool(_IRREALIS.search(sentence[:at]) or _PAST_FRAME.search(sentence[:at]))


#: A modal or an intention right before a verb of change: it may happen, it has not ("I might
#: raise the pager threshold to 800", "we're thinking of moving the launch to May").
_MODAL_BEFORE = re.compile(r"\b(?:might|may|could|would|should|maybe|perhaps|probably|possibly|"
                           r"want(?:s|ed)?\s+to|plan(?:s|ning|ned)?\s+to|going\s+to|gonna|hope\s+to|"
                           r"thinking\s+(?:of|about)|considering|wondering\s+(?:if|whether)|if)"
                           r"(?:\s+[\w'’]+){0,2}\s*$", re.I)


def unrealised(sentence: str, at: int) -> bool:
    """Is what starts at ``at`` hypothetical (:func:`hypothetical`) or only possible, meant or
    planned (a modal right before it)?"""
    return hypothetical(sentence, at) or bool(_MODAL_BEFORE.search(sentence[:at]))
