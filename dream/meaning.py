"""Statements of a job, a title, a manager or a home read by meaning, not by wording.

The patterns of :mod:`.relations` read the wordings someone wrote down; people state these
attributes in endless others ("i do payroll at X", "got poached by X", "X manages me",
"they've made me team lead", "my X contract wrapped up"). A first value missed is a change
missed later, so this module reads a clause in two steps:

1. **Candidates from a light, general grammar**: a clause (a sentence cut at ``;``, a dash,
   or a comma or conjunction before a new subject), its subject (the speaker for "I", "my",
   "me" or a clause with none; a person named at its start), and the spans that could be a
   value: an organisation-like name after a preposition or a verb of joining, a role noun
   phrase whose head names an occupation (:func:`.relations.is_job`), a person's name, a
   place after "in"/"to".
2. **A scorer by meaning**: the clause, its value replaced by a placeholder of the value's
   kind ("I do payroll at the company"), is embedded by the project's local sentence model
   (all-MiniLM-L6-v2 on onnxruntime, fp32: offline and the same vector for the same text)
   and compared with short prototype clauses per attribute, written from general knowledge
   of how people talk about work and home (:data:`PROTOTYPES`), and with prototypes of
   clauses that state none (a purchase at a shop, a meeting with someone, somebody else's
   job, a plan, a visit). A candidate is kept when its attribute's best similarity clears
   :data:`FLOOR` and beats every "none" prototype by :data:`MARGIN`; the ending prototypes
   ("I left", "my contract ended", "I stepped down as") decide whether it sets or ends.

What the grammar cannot see stays out: a clause in a condition, a wish, a plan or a
stand-in period, somebody's relative's job ("my sister works at …"), a clause about the
past ("I used to …"), a question. The records these relations make go through the same
page layer and verification as every other statement (an employer said by a verb of
moving must be an organisation by its head word or page; two people who share a first name
stay apart), so the scorer only decides what a clause is about, never whom.

Without the model (no ONNX export), nothing is read here and the patterns stand alone.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from . import relations as pattern
from .projects import unnamed_lead
from .relationrecord import Relation
from .relations import _VAGUE_TITLES, is_job, needs_antecedent
from .subjectnames import FORMATS
from .subjecttypes import head_type

if TYPE_CHECKING:
    import numpy as np

# The embedder (and numpy with it) is imported when the first clause is scored by meaning:
# dream imports this module at start, and without an ONNX export it reads by pattern only.

log = logging.getLogger(__name__)

__all__ = ["PROTOTYPES", "NONE", "KINDS", "FLOOR", "MARGIN", "Candidate", "available", "clauses", "candidates",
           "score", "decide", "kind_of_name", "relations"]

#: Prototype clauses per (attribute, op), with the value as a placeholder of its kind. Written
#: from general knowledge of how people say where they work, what they do, whom they report to
#: and where they live — not from any labelled set.
PROTOTYPES: dict[tuple[str, str], list[str]] = {
    ("employer", "set"): [
        "I work at X", "I work for X", "she works at X", "he is employed by X", "I joined X",
        "I started my new job at X", "I got a job at X", "she was hired by X", "I'm at X now",
        "he's with X these days", "I do accounting at X", "I'm a nurse at X", "she is a designer at X",
        "I was headhunted by X", "I accepted an offer from X", "today was my first day at X",
        "I moved jobs to X", "I'm contracted to X", "she took a job with X",
        "I've been working for X since spring", "he's over at X now", "I signed with X",
        "engineer at X", "I repair cars for X", "I signed my contract with X", "I teach at X", "I've been at X for six years",
    ],
    ("employer", "end"): [
        "I left X", "I quit my job at X", "my contract with X ended", "I was laid off by X",
        "I resigned from X", "I no longer work at X", "my time at X is over",
        "I finished my placement at X", "she left X last month", "my job at X came to an end",
        "I handed in my notice at X", "my last day at X was Friday",
    ],
    ("role", "set"): [
        "I am a X", "I work as a X", "my job title is X", "I was promoted to X", "she became X",
        "they made me X", "I'm the new X", "my role is X", "he is now the X", "I got the X job",
        "I switched to the X role", "I took over as X", "X, that's my job", "X at a startup",
        "I'm a X by trade", "she was appointed X", "I've been made X", "I've been X since June",
        "X here, in the sales team", "as of this month I'm X",
    ],
    ("role", "end"): [
        "I stepped down as X", "she is no longer the X", "I gave up my role as X", "I resigned as X",
        "I'm not the X any more", "he retired as X", "I quit being X",
    ],
    ("manager", "set"): [
        "my manager is X", "I report to X", "my boss is X", "X manages me", "my new line manager is X",
        "I'm under X now", "X is my supervisor", "I answer to X", "X is my boss now",
        "I now report directly to X", "she reports to X", "he works under X", "X took over as my manager",
        "my team lead is X", "X supervises me",
    ],
    ("home", "set"): [
        "I live in X", "we moved to X", "I'm based in X", "my home is in X", "she relocated to X",
        "I've settled in X", "home is X now", "we've been living in X since spring",
        "we're in X now", "she lives in X",
    ],
}
#: Clauses that name a company, a person, a title or a place and state none of the above.
NONE: list[str] = [
    "I bought a new bike at X", "I'm meeting X for coffee", "I had lunch with X",
    "we went to X for the weekend", "I'm visiting X next week", "I might move to X",
    "I'm thinking about applying to X", "my sister works at X", "my husband is a X", "my friend is a X",
    "I need help with a spreadsheet for X", "can you write an email to X", "the meeting with X is on Monday",
    "I ordered parts from X", "we sent the invoice to X", "X called me about the delivery",
    "I'm working from X this week", "X is covering for my manager while she's away", "I used to work at X",
    "I would love to work at X", "I interviewed at X but turned it down", "I talked to X about the report",
    "X sent me the slides", "thanks X", "X released a new product", "I watched a film about a X",
    "I asked the X for a refund", "I was born in X", "my parents live in X", "I'm flying to X on Friday",
    "the conference is in X", "we stayed in X for a night", "I'm a big fan of X", "our client is X",
    "X is our supplier", "I'm writing a report for X", "I volunteered at X on Saturday",
    "the X said the deadline moved", "I spoke to the X", "we had dinner at X", "I read an article by X",
    "send it to X by Monday", "I'm in X for a conference", "X said the same",
    "I went to X", "I got a parcel from X", "X is a great place", "I met X at a party",
    "X and I went hiking", "I gave the report to X", "I'm working on a project for X",
    "we signed an agreement with X", "we signed a deal with X today", "X signed the contract with us",
    "we bought a holiday cottage in X", "we rent a place in X for the summer",
    "the project is led by X", "X runs the project", "the dashboard is owned by X",
    "Sam handed the project over to X", "the launch is managed by X", "the app was built by X",
]
#: The least similarity to an attribute's best prototype for a clause to state it.
FLOOR = 0.5
#: How far the attribute's best similarity must beat the best "none" prototype.
MARGIN = 0.04
#: Placeholders for a value's kind, as the prototypes write them.
_PLACEHOLDER = "X"
#: A title stands in for a title: what a clause says of a job needs a job in it.
_ROLE_PLACEHOLDER = "manager"


@dataclass(frozen=True)
class Candidate:
    """A clause that may state ``attr`` of ``subject`` (``""``: the speaker) with ``value``."""

    subject: str
    attr: str
    value: str
    masked: str   # the clause with the value as its placeholder, as the scorer reads it
    event: bool   # said as a change (a verb of moving, joining, promotion)
    could_be: frozenset[str] = frozenset()  # every attribute the grammar allows the span
    named: str = ""  # the masked clause with its subject's name, for a named subject


_lock = threading.Lock()
_model: list = []   # [embedder or None] once tried
_protos: dict = {}


def _embedder():
    with _lock:
        if not _model:
            try:
                from brainfs.cache.search.onnx_embedder import OnnxMiniLMEmbedder

                _model.append(OnnxMiniLMEmbedder("fp32", threads=1))
            except Exception as e:  # noqa: BLE001 - no export, no runtime: the patterns stand alone
                log.info("dream reads attributes by pattern only (%s)", e)
                _model.append(None)
        return _model[0]


def available() -> bool:
    """Is the sentence model there to read clauses by meaning?"""
    return _embedder() is not None


def _prototype_vectors():
    emb = _embedder()
    if emb is None:
        return None
    with _lock:
        if not _protos:
            for key, texts in PROTOTYPES.items():
                if key[0] == "role":
                    texts = [re.sub(r"\bX\b", _ROLE_PLACEHOLDER, t) for t in texts]
                _protos[key] = emb.embed(texts)
            _protos["none"] = emb.embed(NONE)
            _protos["none-role"] = emb.embed([re.sub(r"\bX\b", _ROLE_PLACEHOLDER, t) for t in NONE])
        return _protos


#: What a bare name may be, said of it in general words: an organisation's name carries its
#: trade ("… Wholesale", "… Timber", "… Media"), a place's reads as a place.
KINDS: dict[str, list[str]] = {
    "organization": ["a company", "a business", "a firm", "an employer", "a shop", "a factory", "a bank",
                     "a law firm", "a restaurant", "an agency", "a hospital", "a studio", "a school"],
    "place": ["a city", "a town", "a country", "a village", "a region", "an airport", "a neighbourhood",
              "an island", "a capital city"],
    "person": ["a person", "a man", "a woman", "a colleague"],
}
#: How far a name must be nearer one kind than every other to be of it.
KIND_MARGIN = 0.05
_kind_vectors: dict = {}


@lru_cache(maxsize=4096)
def kind_of_name(name: str) -> str | None:
    """The kind a name reads as by its words alone (``"organization"``, ``"place"``,
    ``"person"``), or None when no kind stands out by :data:`KIND_MARGIN` (or without the
    sentence model)."""
    emb = _embedder()
    if emb is None or not name.strip():
        return None
    with _lock:
        if not _kind_vectors:
            _kind_vectors.update({k: emb.embed(v) for k, v in KINDS.items()})
    x = emb.embed([name])[0]
    sims = sorted(((float((v @ x).max()), k) for k, v in _kind_vectors.items()), reverse=True)
    return sims[0][1] if sims[0][0] - sims[1][0] > KIND_MARGIN else None


# ---------------------------------------------------------------------------- the grammar

_CAP = r"(?:[A-Z][\w'’\-]*|[A-Z]{2,})"
#: An organisation-, person- or place-like name: capitalised words, with the small words
#: names carry inside ("Bank of Ireland", "Pellham & Rowe").
_NAMEISH = rf"{_CAP}(?:\s+(?:(?:of|the|and|&|for|de|du|von|van)\s+){{0,2}}{_CAP})*|{_CAP}\s*&\s*{_CAP}"
_NAME_RE = re.compile(rf"(?<![\w'’])(?:{_NAMEISH})")
#: Words that open a clause without being its subject.
_OPENERS = re.compile(
    r"^(?:(?:so|well|yeah|yep|yes|ok|okay|oh|and|but|also|anyway|btw|update|news|heads\s+up|good\s+news|"
    r"big\s+news|fyi|hey|hi|hello|hiya|morning|right|ah|um|uh|lol|haha|honestly|actually|basically|"
    r"quick\s+one|guess\s+what|finally|officially|for\s+context|by\s+the\s+way|for\s+the\s+record|"
    r"just\s+so\s+you\s+know|to\s+be\s+clear|quick\s+update|reminder|note)\b[\s,:!.\-–—]*)+", re.I)
_FIRST_PERSON = re.compile(r"^(?:i|im|i['’]m|i['’]ve|ive|i['’]d|i['’]ll|we|we['’]re|we['’]ve|my|our)\b", re.I)
_ME = re.compile(r"\b(?:me|my)\b", re.I)
_PRONOUN = re.compile(r"^(?:he|she|they|he['’]s|she['’]s|they['’]re|his|her|their|it|it['’]s|this|that|there|you|your)\b", re.I)
#: What only might be, was once, or holds for a while: no standing value.
_NOT_NOW = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|wish|wished|hope|hoping|might|could|would|"
    r"should|maybe|perhaps|considering|thinking\s+(?:of|about)|plan(?:ning)?\s+to|want(?:s|ed)?\s+to|"
    r"going\s+to|gonna|about\s+to|used\s+to|back\s+when|when\s+i\s+was|before\s+i|interview(?:ed|ing)?|"
    r"applied|applying|turned\s+(?:it\s+)?down|declined|covering|cover\s+for|temporar\w*|"
    r"for\s+now|this\s+week|for\s+a\s+(?:week|few\s+days|month)|until\s+\w+\s+(?:is|gets)\s+back|"
    r"while\s+\w+\s+is\s+(?:away|off|out)|['’]d\b|['’]ll\b|will\b|"
    # what did not happen ("we didn't end up moving to Adelaide", "the move fell through")
    r"didn['’]?t|did\s+not|never|fell\s+through|called\s+off"
    # a choice not made, a place kept ("decided not to apply to Delphi, staying at Clontarf")
    r"|not\s+to|decided\s+against|apply|staying|remain(?:ing|s)?)", re.I)
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:;|\.\s+|\s[–—-]\s|:\s+|,\s*(?:and\s+|but\s+|so\s+)?(?=(?:i|im|i['’]m|i['’]ve|ive|we|we['’]re|he|she|they|my|"
    r"he['’]s|she['’]s|they['’]ve|they['’]re)\b)|\s+(?:and|but|so)\s+(?=(?:i|im|i['’]m|i['’]ve|ive|we|he|she|they|"
    r"they['’]ve|they['’]re)\b))\s*", re.I)
#: A preposition or verb that puts an organisation after it.
_ORG_BEFORE = re.compile(
    r"\b(?:at|for|with|by|joined|join|joining|to|left|leaving|quit|quitting)\s+(?:the\s+)?$", re.I)
#: A time that makes a clause one occasion ("taught a class for X last Saturday"), not a
#: standing state — unless the clause says something changed.
_ONE_OCCASION = re.compile(
    r"\b(?:yesterday|tonight|this\s+(?:morning|afternoon|evening)|last\s+(?:night|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|today)\b", re.I)
#: Heads of an institution's name that a "for the …" belongs to ("School for the Blind").
_FOR_HEADS = frozenset("""school institute society centre center foundation association trust fund council museum
league union academy college commission committee agency alliance coalition home hospital""".split())
_PLACE_BEFORE = re.compile(r"\b(?:in|to)\s+$", re.I)
#: A value said right after "my": "my Ridgeway Water contract".
_ORG_OWNED = re.compile(rf"\bmy\s+(?P<v>{_NAMEISH})\s+(?:job|contract|placement|position|role|post|gig)\b")
_ROLE_WORD = r"[a-z][a-z\-]+"
_ROLE_NP = re.compile(
    rf"(?:^|\b(?:a|an|the|as|to|is|am|im|i['’]m|me|became|become|now|new|our|their|into|made|promoted|"
    rf"appointed|named|been|being)\s+)"
    rf"(?P<v>(?:{_ROLE_WORD}\s+){{0,2}}{_ROLE_WORD}(?:\s+of\s+{_ROLE_WORD}(?:\s+{_ROLE_WORD})?)?)"
    rf"(?=\s*(?:[.,;!:)]|$)|\s+(?:at|for|with|in|on|now|again|since|from|as\s+of|instead|these|this|last|"
    rf"role|job|position|post|today|yesterday|effective|starting|and|but|so|too|already|there|here|next|"
    rf"last|over)\b)", re.I)
_LEAD_WORDS = frozenset("to as at for in on by with from of".split())
_NOT_ROLE_WORDS = frozenset("""a an the my our your his her their this that new old current now also just still
really very so not no never been being be is am are was were has have had do does did get got
i me we you he she they it some any more most one two three first last next other same own
job role position post work team""".split())
_TIME_WORDS = frozenset("""monday tuesday wednesday thursday friday saturday sunday january february march
april may june july august september october november december jan feb mar apr jun jul aug sep sept
oct nov dec today tomorrow yesterday christmas easter i i'm im i've the a an my our""".split())


_LEADING_ADVERBIAL = re.compile(
    r"^(?:since|from|as\s+of|after|following|last|this|at|in|on|starting|effective|as|after|with|"
    r"two|three|four|a\s+few|three|next)\b[^,;]{0,40}?,?\s+(?=(?:i|im|i['’]m|i['’]ve|ive|we|we['’]re|we['’]ve)\b)",
    re.I)


#: "my <noun> …": the speaker's own attribute when the noun is one ("my manager is …", "my
#: contract at X ended"), else somebody the speaker knows ("my teammate …").
_MY_NOUN = re.compile(r"^(?:my|our)\s+(?:new\s+|old\s+|current\s+|former\s+|last\s+|first\s+)?(?P<n>(?-i:(?:[a-z][a-z\-]*|[A-Z]{2,})(?:\s+[a-z][a-z\-]*)?))"
                      r"(?=\s|$|['’])", re.I)
_OWN_NOUN = re.compile(
    r"^(?:(?:line\s+)?manager|boss|supervisor|team\s+lead|lead|job|role|title|job\s+title|position|post|contract|"
    r"placement|home|house|flat|place|employer|day|notice|gig|address|apartment)\b", re.I)
#: A clause set between commas that says who someone is ("Lily Chen, who sits next to me,
#: now …"): not part of what the sentence states.
_RELATIVE_CLAUSE = re.compile(r",\s*(?:who|which|whose|whom)\b[^,]*,", re.I)
#: A second job or role beside the first ("freelancing on the side", "also", "as well"):
#: nothing it replaces.
_ADDITION = re.compile(r"\b(?:also|as\s+well|on\s+the\s+side|side\s+(?:gig|job|hustle|project)|in\s+addition|"
                       r"besides|second\s+job|part[-\s]time\s+on|on\s+weekends|at\s+weekends|too)\b", re.I)


#: Capitalised words that open a sentence without naming anyone ("For context, …").
_NOT_NAMES = frozenset("""for as at in on by with from to after before since during until about update news
note reminder correction fyi heads quick same still also just one noting something context please thanks
thank sorry yes no ok okay great good big new the a an this that these those there here what when where
who why how if so but and or then now today""".split())


def _opens_with_title(c: str) -> bool:
    """Does a clause open with a title ("Junior analyst in …", "Senior buyer at …")?"""
    head = re.split(r"\s+(?:at|for|with|in|on)\s+|[,;]", c, maxsplit=1)[0]
    words = re.findall(r"[A-Za-z\-]+", head)[:4]
    return bool(head) and len(head.split()) <= 4 and \
        any(is_job(" ".join(words[:k])) for k in range(1, len(words) + 1))


def _strip_openers(c: str) -> str:
    return _OPENERS.sub("", c).strip(" ,.!?")


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut where a new subject starts (after ``;``, a dash, a colon, or a comma
    or conjunction before a pronoun)."""
    return [c for c in (x.strip(" ,.!?") for x in _CLAUSE_SPLIT.split(sentence)) if c]


def _subject(clause: str, antecedent: str) -> tuple[str, str] | None:
    """(subject, rest) of a clause: the speaker ``""`` for a first person or a clause with no
    subject; a name at its start; the antecedent for he/she; None when it is about somebody
    the clause does not name (a relative, "they", "it")."""
    c = _strip_openers(clause)
    if not c:
        return None
    m = _MY_NOUN.match(c)
    if m and not _OWN_NOUN.match(m.group("n")):
        # "my teammate Jonas Falk got …": the one named; "my neighbour got …": nobody's page
        named = re.match(rf"^(?P<n>{_NAMEISH})\b", c[m.end():].lstrip())
        if named and len(named.group("n").split()) >= 2:
            rest = c[m.end():].lstrip()[named.end():]
            return named.group("n"), rest
        return None
    if _FIRST_PERSON.match(c):
        return "", c
    m = _LEADING_ADVERBIAL.match(c)
    if m:  # "Since June I've been …", "After the reorg I report to …"
        return "", c[m.end():]
    if re.match(r"^(?:he|she)\b|^(?:he|she)['’]s\b", c, re.I):
        return (antecedent, c) if antecedent else None
    if re.match(r"^they(?:['’]ve|\s+have)?\s+(?:\w+\s+)?(?:made|promoted|moved|put|appointed|named|given)\s+me\b", c, re.I):
        return "", c
    if _PRONOUN.match(c):
        return None
    m = re.match(rf"^(?P<n>{_NAMEISH})\b", c)
    if m:
        name = m.group("n")
        first = name.split()[0].lower()
        if first in _TIME_WORDS or first in _NOT_NAMES:
            return None
        rest = c[m.end():]
        if re.match(r"^\s*(?:manages|supervises|is\s+my|['’]s\s+my)\b", rest, re.I):
            return "", c    # "X manages me", "X is my new boss": the speaker's manager
        if len(name.split()) >= 2 and re.match(
                r"^\s*(?:,\s*)?(?:is|was|has|had|['’]s|works|worked|joined|moved|got|left|started|became|"
                r"now|just|runs|leads|went|switched|signed|took|quit|stepped|retired|reports|relocated|lives)\b",
                rest, re.I):
            return name, rest
        if len(name.split()) >= 2 and rest.strip(" ,") == "":
            return None
        # a fragment that opens with a capitalised title ("Junior analyst at X"): the speaker
        if _opens_with_title(c) and not re.search(r"\b(?:is|are|was|were|has|have|had)\b", c):
            return "", c
        if re.match(r"^\s*(?:,\s*)?(?:[a-z]+s|is|was|has|['’]s|joined|moved|got|left|started|became|just|now)\b", rest):
            return name, rest  # "Oluwaseun lives in …": the one named
        return None
    # no subject at all: chat drops the "I" ("got poached by X", "senior analyst as of the 1st")
    if not re.search(r"\b(?:he|she|they|it|you|is|are|was|were)\b", c, re.I):
        return "", c
    return None


def _orgs(c: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _NAME_RE.finditer(c):
        v = m.group(0)
        if re.search(r"['’]s?$", v):
            continue  # "Argent Media's party": whose, not where
        cut = re.search(r"\s+for\s+(?:the\s+)?", v)
        if cut and v[:cut.start()].split()[-1].lower() not in _FOR_HEADS:
            v = v[:cut.start()]  # "Kawartha Lumber for the Ridgeline barn": two names
        v = re.sub(r"\s+(?:and|&)$", "", v)
        if v.lower() in _TIME_WORDS or v.split()[0].lower() in _TIME_WORDS:
            continue
        if _ORG_BEFORE.search(c[:m.start()]) or re.match(
                r"\s+(?:poached|hired|took\s+me|signed\s+me|offered)\b", c[m.end():]):
            out.append((v, m.start(), m.start() + len(v)))
    for m in _ORG_OWNED.finditer(c):
        out.append((m.group("v"), m.start("v"), m.end("v")))
    return out


def _roles(c: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _ROLE_NP.finditer(c):
        words = m.group("v").split()
        # the longest tail of the phrase that is a title ("the pricing team lead" → "team lead"
        # is left to the scorer; a leading word that is no title word is cut)
        while words and (words[0].lower() in _NOT_ROLE_WORDS or words[0].lower() in _LEAD_WORDS):
            words = words[1:]
        if not words or any(w.lower() in _NOT_ROLE_WORDS for w in words) or words[-1].lower() in _LEAD_WORDS:
            continue
        v = " ".join(words)
        if is_job(v):
            out.append((v.lower(), m.end("v") - len(v), m.end("v")))
    return out


#: Where a manager's name stands: after "to", "under", "by", a manager noun, "is"; or before
#: "manages me", "is my …".
_MANAGER_BEFORE = re.compile(r"\b(?:to|under|by|is|['’]s|manager|boss|supervisor|lead|head|PI)\s*[,:]?\s*$", re.I)
_MANAGER_AFTER = re.compile(r"^\s*(?:now\s+)?(?:manages|supervises|is\s+(?:now\s+)?my|['’]s\s+(?:now\s+)?my|became\s+my|"
                            r"has\s+become\s+my|took\s+over\s+as\s+my)\b", re.I)


def _people(c: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _NAME_RE.finditer(c):
        v = m.group(0)
        if len(v.split()) < 2 or v.split()[0].lower() in _TIME_WORDS:
            continue
        if not (_MANAGER_BEFORE.search(c[:m.start()]) or _MANAGER_AFTER.match(c[m.end():])):
            continue
        out.append((v, m.start(), m.end()))
    return out


def _places(c: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _NAME_RE.finditer(c):
        v = m.group(0)
        if v.split()[0].lower() in _TIME_WORDS or v.lower() in FORMATS:
            continue  # "the exports in XLSX now": a format, no place
        if _PLACE_BEFORE.search(c[:m.start()]):
            out.append((v, m.start(), m.end()))
    return out


_EVENT = re.compile(r"\b(?:joined|join|started|start|moved|switched|swapped|promoted|made|became|poached|"
                    r"hired|signed|took\s+over|appointed|new|now|left|quit|first\s+day|since)\b", re.I)


def candidates(sentence: str, antecedent: str = "") -> list[Candidate]:
    """Every (subject, attribute, value) a sentence's grammar allows, before the scorer."""
    if sentence.rstrip().endswith("?") or _NOT_NOW.search(sentence) or _ADDITION.search(sentence):
        return []
    if antecedent and needs_antecedent(sentence) is None:
        antecedent = ""  # the pronoun has a noun phrase of its own sentence ("My sister …, she's …")
    sentence = _RELATIVE_CLAUSE.sub("", sentence)
    out: list[Candidate] = []
    for clause in clauses(sentence):
        got = _subject(clause, antecedent)
        if got is None:
            continue
        subj, c = got
        if subj and head_type(subj) is not None:
            continue  # a job, a manager or a home is a person's (pages.py asks the page's type)
        event = bool(_EVENT.search(c))
        if _ONE_OCCASION.search(c) and not event:
            continue
        # "we" states a team's or a household's doing: a home, never a job ("We signed an
        # agreement with X")
        plural = not subj and bool(re.match(r"^(?:we|we['’]re|we['’]ve|our)\b", c, re.I))
        spans: dict[tuple[int, int], tuple[str, set[str]]] = {}
        for attr, found in (("employer", _orgs(c)), ("role", _roles(c)), ("manager", _people(c)),
                            ("home", _places(c))):
            if plural and attr != "home":
                continue
            for v, a, b in found:
                kind = head_type(v) if attr != "role" else None
                if (attr == "employer" and kind in ("place", "project")) or \
                        (attr in ("manager", "home") and kind == "organization"):
                    continue
                if subj and v.lower() == subj.lower():
                    continue
                spans.setdefault((a, b), (v, set()))[1].add(attr)
        for (a, b), (v, attrs) in spans.items():
            # the clause up to the end of the value's phrase: what follows a comma after it
            # ("…, mostly call-outs", "…, so the reports are mine now") is another thought
            tail = c[b:]
            cut = re.search(r"[,;:.!?]\s", tail + " ")
            ph = _ROLE_PLACEHOLDER if attrs == {"role"} else _PLACEHOLDER
            masked = c[:a] + ph + (tail[:cut.start()] if cut else tail)
            if subj and masked.startswith(subj):
                masked = masked[len(subj):]
            # the scorer reads a named subject as "she" (a name of its own tells it nothing
            # of the attribute) and checks the clause with the name too (what "Marlin
            # Dashboard is led by X" is about needs its name)
            named = f"{subj} {masked.lstrip(' ,')}" if subj else ""
            if subj:
                masked = f"she {masked.lstrip(' ,')}"
            for attr in sorted(attrs):
                out.append(Candidate(subj, attr, v, masked, event, frozenset(attrs), named))
    return out


@lru_cache(maxsize=8192)
def _scores(masked: str) -> tuple[tuple[tuple[str, str] | str, float], ...] | None:
    protos = _prototype_vectors()
    if protos is None:
        return None
    x = _embedder().embed([masked])[0]
    return tuple((k, float((v @ x).max())) for k, v in protos.items())


def score(masked: str) -> dict:
    """Best similarity of a masked clause to each prototype group (``"none"`` included)."""
    got = _scores(masked)
    return dict(got) if got else {}


def decide(cand: Candidate) -> str | None:
    """The op (``"set"``/``"end"``) a candidate states by meaning, or None: the clause's
    nearest prototype group must be of the candidate's attribute, at least :data:`FLOOR`
    alike, and :data:`MARGIN` nearer than any clause that states nothing."""
    sc = score(cand.masked)
    if not sc:
        return None
    none = sc["none-role"] if cand.could_be == {"role"} else sc["none"]
    best_key, best = max(((k, v) for k, v in sc.items() if isinstance(k, tuple) and k[0] in cand.could_be),
                         key=lambda kv: (kv[1], str(kv[0])))
    if best_key[1] == "end" and not _ENDING.search(cand.masked):
        # only a word of ending makes an end ("I'm the office manager there" is none)
        best_key = (best_key[0], "set")
        best = sc.get(best_key, 0.0)
    if best_key[0] != cand.attr or best < FLOOR or best - none < MARGIN:
        return None
    if best_key[1] == "set" and _NEGATION.search(cand.masked):
        return None  # "we're not moving to X after all": nothing set
    if cand.named and cand.attr == "manager":
        sn = score(cand.named)
        if max(v for k, v in sn.items() if isinstance(k, tuple) and k[0] == cand.attr) < sn["none"]:
            return None
    return best_key[1]


_NEGATION = re.compile(r"\b(?:not|never|no|n['’]t|nor|neither)\b", re.I)
#: Words that say something ended: the closed class an ending needs besides its meaning.
_ENDING = re.compile(r"\b(?:left|leaving|leave|quit|quitting|no\s+longer|not|n['’]t|ended|ends|ending|finished|"
                     r"wrapped|wrapping|stepped\s+down|stepping\s+down|resigned|retired|gave\s+up|given\s+up|over|"
                     r"laid\s+off|redundant|fired|sacked|let\s+go|last\s+day|notice|done\s+with|expired|"
                     r"any\s*more|anymore)\b", re.I)


_WHERE_ONE_IS = re.compile(r"(?:\bto\s+(?:the\s+)?|\b(?:i['’]m|im|i\s+am|we['’]re|we\s+are|she|he|she['’]s|he['’]s|is|are|"
                           r"now|still)\s+(?:now\s+)?(?:at|in|with|over\s+at)\s+(?:the\s+)?)X\b", re.I)


def _titled(cand: Candidate, sentence: str, antecedent: str) -> str | None:
    """A title said with the workplace it is held at ("a staff nurse at X", "Junior analyst
    in the pricing team at X"): set when that clause states the employer by meaning."""
    at = cand.masked.find(_ROLE_PLACEHOLDER)
    tail = cand.masked[at + len(_ROLE_PLACEHOLDER):]
    if at < 0 or not re.match(r"^\s+(?:(?:in|on)\s+the\s+[a-z\- ]{2,30}?\s+)?(?:at|for|with)\s+[A-Z]", tail):
        return None
    for other in candidates(sentence, antecedent):
        if other.subject == cand.subject and other.attr == "employer" and other.value in tail \
                and decide(other) == "set":
            return "set"
    return None


def _only_as_a_name(value: str, sentence: str) -> bool:
    """Is ``value`` (of two words or more) written in ``sentence`` only with every word
    capitalised, as a name is ("the Kelp Farm Pilot")?"""
    if len(value.split()) < 2 or sentence == sentence.lower():
        return False
    found = [m.group(0) for m in re.finditer(rf"\b{re.escape(value)}\b", sentence, re.I)]
    return bool(found) and all(all(w[:1].isupper() for w in f.split()) for f in found)


@lru_cache(maxsize=8192)
def _relations(sentence: str, antecedent: str) -> tuple:
    out: list[Relation] = []
    for cand in candidates(sentence, antecedent):
        op = decide(cand)
        v = cand.value
        if op is None and cand.attr == "role":
            op = _titled(cand, sentence, antecedent)
        if op is None:
            continue
        if cand.attr == "role" and op == "set" and v in _VAGUE_TITLES:
            continue
        # "my manager, Bola, wants …" names Bola's place, not the speaker's title; a title
        # ("product owner") is nobody's manager in a sentence that capitalises names
        if cand.attr == "role" and re.search(rf"\b(?:my|our|his|her|their|your)\s+(?:\w+\s+)?{re.escape(v)}\b",
                                             sentence, re.I):
            continue
        if cand.attr == "manager" and v == v.lower() and sentence != sentence.lower():
            continue
        if cand.attr == "role" and _only_as_a_name(v, sentence):
            continue  # "I work on the Kelp Farm Pilot": a project's name, no title
        if cand.attr == "role" and re.search(rf"\bthe\s+(?:last|only|sole|first|other|remaining|lone|main)\s+{re.escape(v)}\b",
                                             sentence, re.I):
            continue  # "I'm the last programmer on Vega": who is left, not a title
        vtype = {"manager": "person", "home": "place"}.get(cand.attr, "organization")
        detail = ""
        if cand.attr == "employer" and _WHERE_ONE_IS.search(cand.masked):
            # where one went or is ("moved over to X", "I'm at X now") may be a place: an
            # organisation by its head word or page only (pages.py), as the patterns ask
            vtype, detail = "", "move"
        out.append(Relation(cand.subject, cand.attr, v, op, "", cand.event or op == "end", vtype, detail,
                            by_meaning=True))
    return tuple(out)


def relations(sentence: str, antecedent: str = "") -> list["Relation"]:
    """The relations a sentence states by meaning (see the module's docstring); [] without
    the sentence model."""
    if not available():
        return []
    return list(_relations(sentence, antecedent))


def extract(sentence: str, antecedent: str = "", project: str = "") -> list["Relation"]:
    """Every relation stated in ``sentence``: what the patterns read
    (:func:`relations.extract`), then what they do not, read by meaning (a job, title,
    manager or home stated in other words) — never a second value beside one the patterns
    read, nothing while someone stands in. ``antecedent``: the person a "he"/"she" of the
    sentence stands for; ``project``: the project its turn named before, which a lead said
    without the project's name leads ("Tamsin Reid is the lead.")."""
    out = pattern.extract(sentence, antecedent)
    if project and not any(r.attr == "lead" for r in out) and (got := unnamed_lead(sentence)):
        out.append(Relation(project, "lead", got[0], "set", "", False, "person"))
    read = pattern.read_as(sentence)
    if not pattern.stands_in(read):
        out += [pattern.plain_title(r) for r in relations(read, antecedent)
                if not any(o.attr == r.attr and (o.subject == r.subject or o.inferred) for o in out)]
    return out
