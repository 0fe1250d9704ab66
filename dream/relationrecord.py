"""The record a relation is (:class:`Relation`), the value that stands for the speaker
(:data:`SELF`) and how a captured value is tidied (:func:`clean_value`).

:mod:`.relations` reads sentences into these records, and so do the modules it reads
quantities, deadlines, trips, standing choices and ended values with; the record sits below
all of them and imports nothing of dream's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Relation:
    """One attribute statement: ``subject``'s ``attr`` is ``value``."""

    subject: str            # a name, or "" for the speaker
    attr: str               # employer, role, manager, project, home, pet, friend, contact, ...
    value: str
    op: str = "set"         # set / end / add
    key: str = ""           # numbers and deadlines: the quantity's head noun + modifiers
    event: bool = False     # the sentence reports a change (joined, left, moved): a Timeline event
    value_type: str = ""    # the value's subject type when it is a name (organization, person, …)
    detail: str = ""        # e.g. a pet's species; "with" for an employer said as "she's with X now"
    phrase: str = ""        # a quantity as the sentence names it ("QC spike threshold for the atlas")
    inferred: bool = False  # the subject is a "he"/"she" of the sentence, named before it
    by_meaning: bool = False  # read by meaning (meaning.py): a named subject must be a person


#: The value of a relation whose value is the speaker ("I'm the lead on P now"): the page
#: layer puts the speaker's name in its place.
SELF = "\x00self"


def clean_value(v: str) -> str:
    """``v`` as a value: its spaces made single, punctuation and quotes trimmed from its ends,
    a final possessive "'s" dropped."""
    v = " ".join(v.split()).strip(" ,.;:!?'\"“”")
    return re.sub(r"['’]s$", "", v)
