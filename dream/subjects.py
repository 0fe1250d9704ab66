"""Which subjects get a page, under which title, type and aliases.

Input: the facts of every session (each with the names found in its sentence and the
extractor's types) and the speakers. Output: :class:`Subjects`, one entry per page-worthy
subject, and a map from every alias to its page.

Rules, in order (general, not fitted to any corpus's names):

1. **Clean** each name: salutations and titles are stripped ("Dear Amara" → "Amara",
   "Dr. Elena Sokolova" → "Elena Sokolova"); a name that is a speaker *role* ("Assistant",
   "User", "AI"), a file format or unit ("PDF", "SVG", "CSV"), a pronoun, a greeting or a
   common word ("That", "Sure", "Thanks") is no subject.
2. **Merge aliases** into one subject: a single word that is a word of exactly one longer
   name ("Leila" → "Leila Haddad", "Lantern" → "Project Lantern"), an acronym of exactly one
   longer name's initials ("AORC" → "Atlantic Ocean Research Council", "RCN" → "Royal College
   of Nursing"), a shorter name that is the start or end of exactly one longer one; the
   longest (most complete) form is the title.
3. **Type** by evidence, strongest first: a relation that names the value's type ("works at
   X" → organization, "my manager is X" → person, "my dog X" → pet, "moved to X" → place,
   "working on X" → project), head words ("… Hospital", "… Labs" → organization, "Project …"
   → project), speakers (person), then the extractor's majority label.
4. **Enough mentions**: a subject needs ``min_mentions`` turns (default 2) in ``min_sessions``
   sessions (default 1); the user (the human speaker who talks most) always has a page.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .settings import Settings
from .text import CONNECTORS, NOT_SUBJECT, ORG_CUES, slugify

#: Names a chat gives its non-human or generic participants: never a subject.
ROLE_NAMES = frozenset("""
assistant ai bot chatbot system user human agent model narrator moderator host guest speaker
gpt chatgpt claude copilot gemini bard llm you me
""".split())
#: Of those, the ones that stand for the person whose memory it is: their turns are facts,
#: and their name is learned from the conversation ("my name is Mara", "Nice to meet you, Mara").
USER_ROLES = frozenset("user human me you guest".split())
#: Words that open a letter or a greeting and are stripped from the front of a name.
SALUTATIONS = frozenset("""
dear hi hello hey hiya greetings morning evening afternoon good thanks thank cheers best
regards kind warm warmest sincerely yours love congrats congratulations welcome bye goodbye
to attn attention re fwd fw cc from ps p.s note reminder update noting fyi heads quick btw
""".split())
_TITLES = frozenset("dr dr. mr mr. mrs mrs. ms ms. prof prof. sir madam miss".split())
#: File formats, units and tech acronyms that capitalisation makes look like organisations.
FORMATS = frozenset("""
pdf svg png jpg jpeg gif bmp tif tiff heic webp csv tsv json xml yaml yml html htm css md txt
rtf doc docx xls xlsx ppt pptx odt ods zip tar gz mp3 mp4 wav mov avi mkv api apis url urls
uri http https ui ux id ids faq qa qc ok pm am usb hdmi wifi gps sms tv pc cpu gpu ram ssd
os ios eta asap fyi tbd tba diy rsvp aka etc vs cm mm km kg mg ml gb mb tb kb utc gmt bst cet
pst est dpi px ai ml llm sql ocr pr
""".split())
#: Academic degrees and stages ("a PhD student", "her MSc"): what someone is or holds, never
#: a subject of its own.
DEGREES = frozenset("""
phd ph.d ph.d. dphil msc m.sc mphil mres ma mba bsc b.sc ba bs ms md jd edd postdoc
""".split())
#: Capitalised words of chat that are not names (beyond text._NOT_SUBJECT).
COMMON = frozenset("""
that this these those there here sure best thanks thank kind regards yes no okay ok great
good nice cool fine perfect awesome amazing wonderful lovely noted done right correct
correction update quick big small new old first last next one two three also maybe please
of course absolutely happy glad sorry oh wow yay hmm well so and but or if then when while
after before because since although though however meanwhile also still just only really
let here's there's that's it's what's how's who's i'd i'll i'm i've you're we're they're
should could would will can may might must shall got get go going done sounds looks seems
together everyone everybody someone something anyone anything nobody nothing team family
friends mom dad yesterday today tomorrow morning evening night weekend week month year
big news update congratulations yes no put set add use make take send check keep move get
give call ask tell book plan draft write share save export change remember schedule confirm
cancel spent noted still something mon tue tues wed thu thur thurs fri sat sun jan feb mar apr
jun jul aug sep sept oct nov dec
""".split())
_ORG_HEADS = frozenset(ORG_CUES) | {"hospital", "clinic", "labs", "analytics", "maritime",
                                       "council", "press", "media", "partners", "systems",
                                       "solutions", "technologies", "consulting", "ventures",
                                       "health", "bank", "trust", "services", "institute",
                                       "office", "corporation", "gmbh", "ag", "sa", "plc",
                                       "authority", "commission", "bureau", "board", "collective",
                                       "alliance", "consortium", "coalition", "federation",
                                       "academy", "guild", "polytechnic", "seminary", "friends",
                                       # utilities and public bodies ("Vattenfall Power",
                                       # "Coastal Water Service", "Met Office Observatory")
                                       "power", "energy", "utility", "utilities", "electric",
                                       "service", "administration", "directorate",
                                       "observatory", "lab", "agency", "foundation",
                                       "university", "institut", "universität", "université",
                                       # trades named in the plural or by their industry
                                       # ("Fernhill Networks", "Solent Games", "Copperline Print")
                                       "networks", "games", "studios", "foods", "robotics",
                                       "diagnostics", "logistics", "industries", "holdings",
                                       "pharma", "pharmaceuticals", "biotech", "insurance",
                                       "shipping", "freight", "airlines", "airways", "motors",
                                       "software", "shipyard", "print", "printing", "couriers",
                                       "brewery", "bakery", "group", "consultancy", "associates",
                                       # firms named by their trade ("Ostrander Legal", "Ochre
                                       # Records", "Orrin Mutual", "Caldera Ports")
                                       "legal", "law", "llp", "records", "mutual", "ports",
                                       "publishing", "architects", "engineering", "construction",
                                       "builders", "accountants", "lettings", "estates", "dental",
                                       "pharmacy", "roasters", "coffee", "kitchen", "kitchens"}
_PROJECT_HEADS = frozenset("project program programme initiative pilot study survey campaign "
                           "app dashboard atlas forecast platform tool plugin model report "
                           "book podcast series corpus dataset database archive thesis "
                           "index toolkit prototype".split())
_PLACE_HEADS = frozenset("street road avenue park river lake mountain city town village "
                         "island bay beach square county province region station terminal "
                         "market mall hall harbor harbour port airport bridge tower garden "
                         "gardens temple shrine castle plaza district ward".split())
_EVENT_HEADS = frozenset("marathon festival conference summit workshop meetup expo fair race "
                         "tournament cup games symposium hackathon retreat".split())


def clean_name(name: str) -> str | None:
    """The name a mention stands for, or None when it is not a subject at all."""
    words = name.replace("’", "'").split()
    while words and (words[0].lower().strip(",.:;!") in SALUTATIONS
                     or words[0].lower() in _TITLES):
        words.pop(0)
    # "Marisol Ekwueme, Giles left": a comma inside a run ends the name (the extractor may
    # join two names across it)
    cut = next((i for i, w in enumerate(words[:-1]) if w.endswith((",", ";"))), None)
    if cut is not None:
        words = words[:cut + 1]
    words = [w.strip(",.:;!?\"'()") for w in words]
    words = [w for w in words if w]
    if not words:
        return None
    out = " ".join(words)
    low = out.lower()
    if low in ROLE_NAMES or low in FORMATS or low in COMMON or low in DEGREES or low in NOT_SUBJECT:
        return None
    if all(w.lower() in COMMON or w.lower() in NOT_SUBJECT or w.lower() in FORMATS
           for w in words):
        return None
    if len(out) < 2 or out.isdigit() or not out[0].isupper():
        return None
    if re.fullmatch(r"[A-Z]{1,4}-?\d{1,3}[a-z]?", out):
        return None  # a code, a class or a size ("SS2", "JSS3", "A4", "B12"), not a subject
    if re.search(r"n't$|['’](?:re|ll|ve|d|m|t)$", low) or re.fullmatch(
            r"(?:mon|tues|wednes|thurs|fri|satur|sun)days", low):
        return None  # "Don't", "Fridays"
    # "The Office", "Our Team": a name does not start with an article or a possessive
    if words[0].lower() in ("the", "our", "my", "your", "a", "an") and len(words) == 1:
        return None
    return out


def names_in(raw: str, joined: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The cleaned names a capitalised run stands for: "Biscuit and Juno" is two names,
    unless the run is one of ``joined`` ("Kings and Queens Academy", see :func:`joined_names`)."""
    if " and " in raw and raw not in joined:
        parts = re.split(r"\s+and\s+", raw)
    else:
        parts = [raw]
    return [n for n in (clean_name(p) for p in parts) if n]


def _inside(part: str, whole: str) -> bool:
    return part != whole and f" {part} " in f" {whole} "


def joined_names(facts: list[dict], people: Iterable[str] = ()) -> set[str]:
    """Capitalised runs "A and B" that are one name ("Kings and Queens Academy", "Birch and
    Bevel Woodworks", "Lantern Books and Coffee"): no part of them is ever mentioned on its
    own anywhere in the corpus, nor is a speaker. "Biscuit and Juno" is two names, because
    "Biscuit ate a sock" names Biscuit alone. Measured per corpus, not listed."""
    alone: Counter = Counter(people)
    conj: set[str] = set()
    for f in facts:
        raws = list(f.get("subjects", {})) + f.get("names", []) + f.get("lead", [])
        here = [r for r in raws if " and " in r]
        conj.update(here)
        for r in raws:
            if " and " in r or any(_inside(r, c) for c in here):
                continue
            c = clean_name(r)
            if c:
                alone[c] += 1
    out = set()
    for c in conj:
        parts = [clean_name(p) for p in re.split(r"\s+and\s+", c)]
        if all(parts) and not any(alone[p] for p in parts if p):
            out.add(c)
    return out


def _after_connectors(toks: list[str]) -> str:
    while toks and toks[0].lower() in CONNECTORS:
        toks = toks[1:]
    return " ".join(toks)


def is_role(name: str) -> bool:
    """A speaker name that is a role, not a person ("Assistant", "User")."""
    return name.strip().lower() in ROLE_NAMES


def is_assistant(name: str) -> bool:
    """A speaker that is the assistant (or another non-human role): its turns state no facts."""
    return is_role(name) and name.strip().lower() not in USER_ROLES


_SERVICE_RE = re.compile(r"^(?:sure|of course|certainly|noted|got it|understood|okay,? (?:saved|noted|done)|"
                         r"here(?:'s| is| are)|happy to help|i can|i'll|i will|done|absolutely|"
                         r"great question|no problem|will do|updated|saved)\b", re.I)


def service_counts(turns: list[tuple[str, str]]) -> dict[str, list[int]]:
    """Per speaker: [turns, turns opening like a service reply ("Sure, noted.", "Here is …")]."""
    out: dict[str, list[int]] = {}
    for spk, text in turns:
        c = out.setdefault(spk, [0, 0])
        c[0] += 1
        c[1] += bool(_SERVICE_RE.match(text.strip()))
    return out


def named_assistants(counts: dict[str, list[int]]) -> set[str]:
    """Speakers with a person's name who act as the assistant ("Aria: Sure, noted."): at
    least 3 turns, at least half of them opening like a service reply, and someone else to
    serve. Their turns state no facts; their name gets no page."""
    if len(counts) < 2:
        return set()
    return {spk for spk, (n, k) in counts.items() if not is_role(spk) and n >= 3 and 2 * k >= n}


_SELF_NAME_RE = re.compile(r"\b(?:my name is|I'm|I am|call me|this is)\s+((?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\b", re.I)
_GREETED_RE = re.compile(r"\b(?:nice to meet you|hi|hello|hey|welcome(?: back)?|thanks|thank you|good (?:morning|afternoon|evening)),?\s+"
                         r"((?-i:[A-Z][a-z]+))\b(?!\s+[A-Z])", re.I)
#: The assistant addressing someone at the end of a sentence of its own ("Happy to help,
#: Darnell."); a sentence with a colon quotes a draft ("Sure: Hi Gail, … Cheers, Darnell").
_SIGNED_RE = re.compile(r"\b(?i:best|cheers|regards|best wishes|all the best|thanks|yours faithfully|"
                        r"yours sincerely|yours|sincerely|warmly|love),\s+((?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))\s*[.!]?$")
_VOCATIVE_RE = re.compile(r"^[^:\"“]*?,\s+((?-i:[A-Z][a-z]+))\s*[.!]$")


#: A self-introduction written in lower case: "mateo ruiz here", "i'm mateo ruiz", "im mateo
#: ruiz", "this is mateo ruiz", "mateo ruiz, welder".
_W = r"[a-z][a-z'’\-]+"
_LOWER_SELF_RE = re.compile(
    rf"(?:(?:^|[.,!:;]\s*|\b(?i:hi|hey|hello|hiya)\b[\s,.!]*)(?P<first>{_W})\s+(?P<last>{_W})\s+here\b"
    rf"|\b(?:[Ii]['’]?m|[Ii]\s+am|[Mm]y\s+name\s+is|[Tt]his\s+is)\s+(?P<first2>{_W})\s+(?P<last2>{_W})(?=\s*[.,!]|\s*$)"
    # the name alone opening what the speaker says, then what they do ("ravi sethi, support
    # engineer", "nadia el-amin. data engineer at X")
    rf"|^(?:(?i:hi|hey|hello|hiya)\b[\s,.!]*)?(?P<first3>{_W})\s+(?P<last3>{_W})(?=\s*[.,:;!–—]))")
#: Words that follow a name without being a surname ("mateo again here", "mateo from x").
_NOT_SURNAME = frozenset("""
again here back from also just still now too and or but the a an at in on with of is was
""".split())


def self_names(turns: list[tuple[str, str]], common: set[str]) -> dict[str, str]:
    """Role speaker ("User") → the name the conversation gives them: what they call themselves
    ("my name is Mara Lind", "I'm Mara"), else what the assistant calls them ("Nice to meet
    you, Mara"); a speaker with one name ("Mateo") → the full name they write in lower case
    ("hi, mateo ruiz here"). ``turns``: (speaker, sentence); ``common``: words the session writes in
    lower case ("I'm Happy" is no name)."""
    out: dict[str, str] = {}
    for spk, sent in turns:
        # a speaker known by one name who writes their full name in lower case ("hi, mateo
        # ruiz here", "i'm mateo ruiz"): the words after their own name are their surname
        if spk in out or is_role(spk) or " " in spk.strip():
            continue
        for m in _LOWER_SELF_RE.finditer(sent):
            first = m.group("first") or m.group("first2") or m.group("first3")
            last = m.group("last") or m.group("last2") or m.group("last3")
            if first.lower() == spk.strip().lower() and last not in common and \
                    last not in _NOT_SURNAME and clean_name(last.capitalize()):
                out[spk] = f"{spk.strip()} {last.capitalize()}"
                break
    users = {s for s, _t in turns if s.strip().lower() in USER_ROLES}
    if not users:
        return out
    for spk, sent in turns:
        if spk in users and spk not in out:
            m = _SELF_NAME_RE.search(sent)
            if m and clean_name(m.group(1)) and m.group(1).split()[0].lower() not in common:
                out[spk] = m.group(1)
    if len(users) == 1:
        (u,) = users
        for spk, sent in turns:
            if u not in out and is_assistant(spk):
                # a greeting that opens the assistant's own sentence, not one inside a letter
                # it drafts ("Sure: Hi Gail, …" greets Gail, not the user)
                m = _GREETED_RE.match(sent)
                if m and clean_name(m.group(1)) and m.group(1).lower() not in common:
                    out[u] = m.group(1)
                    continue
                # a user who writes their own name in lower case ("darnell here") still
                # is "Darnell" to the assistant: a vocative is not checked against case
                m = _VOCATIVE_RE.match(sent)
                if m and clean_name(m.group(1)):
                    out[u] = m.group(1)
        # a draft the assistant writes for the user is signed with the user's name
        # ("… All the best, Darnell Whitfield"): the longest such signature names them
        signed = [m.group(1) for spk, sent in turns if is_assistant(spk)
                  for m in [_SIGNED_RE.search(sent)] if m and clean_name(m.group(1))]
        first = out.get(u, "").split()[:1]
        signed = [n for n in signed if not first or n.split()[0] == first[0]]
        if signed:
            best = max(signed, key=lambda n: (len(n.split()), n))
            if len(best.split()) > len(out.get(u, "").split()):
                out[u] = best
    return out


def _initials(name: str, connectors: bool = False) -> str:
    return "".join(w[0] for w in name.split()
                   if (connectors or w.lower() not in CONNECTORS) and w[0].isalpha()).upper()


@dataclass
class Subject:
    """One page-worthy subject."""

    slug: str
    title: str
    type: str
    aliases: list[str] = field(default_factory=list)
    turns: set = field(default_factory=set)       # (session, anchor)
    sessions: set = field(default_factory=set)
    is_user: bool = False


@dataclass
class Subjects:
    """The subjects of a wiki and how names map onto them."""

    by_slug: dict[str, Subject]
    alias_of: dict[str, str]            # name as written → slug
    lower_alias: dict[str, str] = field(default_factory=dict)  # "the atlas" → slug

    def slug_for(self, name: str) -> str | None:
        """The page of ``name`` (an alias, a title, or a cleaned form of either)."""
        s = self.alias_of.get(name)
        if s is None:
            c = clean_name(name)
            s = self.alias_of.get(c) if c else None
        return s

    def slugs_for(self, name: str) -> list[str]:
        """The pages a mention names ("Biscuit and Juno" names two)."""
        s = self.slug_for(name)
        if s:
            return [s]
        return [x for n in names_in(name) if (x := self.alias_of.get(n))]

    def user(self) -> Subject | None:
        return next((s for s in self.by_slug.values() if s.is_user), None)


def _majority(c: Counter | None) -> str | None:
    if not c:
        return None
    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _kind_allows(n: str, m: str, kinds: dict[str, str | None], placey: set[str]) -> bool:
    """May the one word ``n`` stand for the longer name ``m``, by their types? Not when the
    extractor types them apart ("Kyoto" is a place, not "Kyoto University"), except that the
    small model calls an unknown one-word name a person or a city where the longer name's
    head word says what it is ("Greenfield" → "Greenfield College of Science", "Ridgeline" →
    "Ridgeline Timber Co."), unless the corpus speaks of the word as a place ``placey``."""
    kn, hm = kinds.get(n), head_type(m)
    if kn in (None, kinds.get(m) or kn) or kn == (hm or kn):
        return True
    return hm in ("organization", "project") and n not in placey and (
        kn == "person" or m.split()[-1].lower() in _LEGAL_SUFFIXES)


def _place_in_place(n: str, m: str, kinds: dict[str, str | None], placey: set[str],
                    people: set[str]) -> bool:
    """Is the one word ``n`` a place and ``m`` a longer name that starts or ends with it
    with no head word to say what it is ("Sapporo" and "Sapporo Chikagai", a mall in it)?
    A city and a site in it are two subjects: a statement about the city ("I moved to
    Sapporo") must not land on the site's page. A person's name is the exception ("Paris"
    may stand for "Paris Okafor" when the extractor, a relation or a cue makes the longer
    name a person, ``people``)."""
    # the corpus must speak of it as a place ("moved to X", "the workshop in X"): the small
    # model calls many a first name a city
    if n not in placey:
        return False
    low = [t.lower() for t in m.split()]
    heads = _ORG_HEADS | _PROJECT_HEADS | _PLACE_HEADS | _LEGAL_SUFFIXES | {"operation", "programme", "program"}
    if any(t in heads or t in CONNECTORS for t in low):
        return False  # a head word says what it is ("Ridgeline Timber Co."): see _distinctive
    return kinds.get(m) != "person" and m not in people


def _first_name_of(n: str, m: str, kinds: dict[str, str | None], people: set[str]) -> bool:
    """Is the person ``n`` the first name of ``m``, known as a person's full name whatever its
    head word says ("Zoe" for the speaker's "Zoe Park", "Ana" for "Ana Hill")?"""
    return (kinds.get(n) == "person" or n in people) and m in people and len(m.split()) == 2 \
        and m.split()[0] == n


def merge_map(counts: Counter, kinds: dict[str, str | None] | None = None,
              speakers: set[str] | frozenset[str] = frozenset(),
              placey: set[str] | frozenset[str] = frozenset(),
              people: set[str] | frozenset[str] = frozenset()) -> dict[str, str]:
    """Alias → canonical name for every name in ``counts`` (name → mentions). ``kinds``: the
    extractor's majority type per name; a word typed as a place is not merged into an
    organisation or a person ("Kyoto" is not "Kyoto University"); ``placey``: names a
    relation or a cue makes a place (see :func:`_kind_allows`); ``people``: names a relation
    or a cue makes a person."""
    kinds = kinds or {}
    placey = set(placey)
    people = set(people) | set(speakers)
    names = sorted(counts, key=lambda n: (-len(n.split()), -counts[n], n))
    canon: dict[str, str] = {}
    multi = [n for n in names if len(n.split()) > 1]
    for n in names:
        if n in canon:
            continue
        toks = n.split()
        targets: list[str] = []
        if len(toks) == 1 and n.isupper() and 2 <= len(n) <= 6:
            # "AORC" (connectors left out) or "FODP" for Friends of Duthie Park (kept in)
            targets = [m for m in multi if n in (_initials(m), _initials(m, True))]
        if not targets:
            low = [t.lower() for t in toks]
            for m in multi:
                if m == n or len(m.split()) <= len(toks):
                    continue
                ml = [t.lower() for t in m.split()]
                if len(toks) > 1 and (ml[:len(low)] == low or ml[-len(low):] == low):
                    targets.append(m)  # "St Aldric" → "St Aldric Hospital"
                elif len(toks) == 1 and ((low[0] in _distinctive(m) and _kind_allows(n, m, kinds, placey))
                                         or _first_name_of(n, m, kinds, people)) \
                        and not _place_in_place(n, m, kinds, placey, people):
                    targets.append(m)
        if not targets and len(toks) == 1:
            # "Atlas" or "ATLAS" for "Atlas.ti", "NASA" for "NASA-TLX": the first part of one compound
            # word, cut off at its full stop or hyphen, is that name, not a second subject
            # (unless it is also mentioned more often than the compound on its own)
            targets = [m for m in names if len(m.split()) == 1 and len(m) > len(n) + 1
                       and m[len(n)] in ".-" and m[:len(n)].lower() == n.lower()
                       and counts[m] >= counts[n]
                       and m[len(n) + 1:].replace("-", "").replace(".", "").isalnum()]
        if not targets and len(toks) == 1 and len(n) >= 2 and not n.isupper():
            # "Mel" for the speaker "Melanie", "Jo" for "Joanna": the start of one speaker's name
            targets = [m for m in speakers if m != n and m.startswith(n) and " " not in m]
        # the most complete form each target itself merges into
        roots = {canon.get(t, t) for t in targets}
        if len(roots) == 1:
            canon[n] = roots.pop()
        else:
            canon[n] = n
    # follow chains
    for n in list(canon):
        seen = {n}
        while canon[canon[n]] != canon[n] and canon[n] not in seen:
            seen.add(canon[n])
            canon[n] = canon[canon[n]]
    return canon


def _distinctive(name: str) -> set[str]:
    """The words of ``name`` that can stand for it alone: a person-like name's first or last
    word ("Leila" for "Leila Haddad"); a project's or organisation's name without its head
    words when one word is left ("Lantern" for "Project Lantern", "Tidewater" for "Tidewater
    Forecast"). Never a word of a longer place or organisation ("Kyoto" is not "Kyoto
    Animal Shelter")."""
    toks = name.split()
    low = [t.lower() for t in toks]
    if "of" in low[1:-1]:
        # "University of Ibadan": what follows "of" is what it is of (a place, a field),
        # never its short name; "Greenfield College of Science" → "Greenfield"
        k = low.index("of")
        toks, low = toks[:k], low[:k]
    if low[-1] in _PLACE_HEADS or low[-1] in _EVENT_HEADS:
        return set()  # "Kyoto Station" is not "Kyoto", "Okayama Marathon" not "Okayama"
    heads = _ORG_HEADS | _PROJECT_HEADS | {"operation", "programme", "program"}
    rest = [t for t in low if t not in heads and t not in CONNECTORS]
    if len(rest) < len(low):
        if len(rest) == 1:
            return set(rest)
        if rest and low[-1] in _LEGAL_SUFFIXES and toks[0][:1].isupper():
            return {rest[0]}  # "Ridgeline" for "Ridgeline Timber Co."
        return set()
    if 2 <= len(toks) <= 3 and all(t[:1].isupper() and t.replace("-", "").isalpha() for t in toks):
        return {low[0], low[-1]}
    return set()


#: A company's legal form at the end of its name: its first word can stand for it.
_LEGAL_SUFFIXES = frozenset("co co. inc inc. ltd ltd. llc llp plc gmbh ag sa corp corp.".split())


def head_type(name: str) -> str | None:
    """A type read from the name itself ("St Aldric Hospital" → organization; "University of
    Ibadan", "Ontario Guild of Furniture Makers": the head stands before "of")."""
    toks = name.lower().split()
    if "of" in toks[1:-1] and toks[toks.index("of") - 1] in _ORG_HEADS:
        return "organization"
    if toks[0] in ("project", "operation", "programme", "program") and len(toks) > 1:
        return "project"
    if toks[0] in _PLACE_OPENERS and len(toks) > 1:  # "Café Hitsuji", "Mount Rainier"
        return "place"
    if toks[-1] in _ORG_HEADS:
        return "organization"
    if len(toks) > 1 and toks[-1] in _PROJECT_HEADS:
        return "project"
    if len(toks) > 1 and toks[-1] in _PLACE_HEADS:
        return "place"
    return None


_NAME = r"(?<![\w\-])((?:[A-Z][\w\-]+(?:\.[a-z][\w\-]*)?)(?:\s+(?:of\s+|the\s+)?[A-Z][\w\-]+)*)"
#: The same, with "and" inside ("Lantern Books and Coffee"), for cues that name one place.
_NAME_AND = r"(?<![\w\-])((?:[A-Z][\w\-]+)(?:\s+(?:of\s+|the\s+|and\s+)?[A-Z][\w\-]+)*)"
#: A name followed by what one says of a piece of work ("the Haptic Crosswalk pilot",
#: "Signbridge progress", "the Ramp Ledger study"): a project.
_PROJECT_CUE_RE = re.compile(_NAME + r"\s+(?:project|pilot|prototype|study|progress|proposal|"
                             r"rollout|budget|milestones?|deliverables?|kick-?off|recruitment|"
                             r"demo|launch|release|beta|roadmap|backlog|sprint|repo|codebase|"
                             r"consent wording|poster|field notes|fieldwork|camera-ready)\b")
#: Work done on or for it ("Decision for Signbridge", "two hours for analysis on X").
_PROJECT_ON_RE = re.compile(r"\b(?i:analysis|work|session|decision|progress|update|win|"
                            r"partnering with us|collaborating)\s+(?:on|for)\s+" + _NAME)
#: What is done in a place ("the workshop in Kumamoto", "the Kumamoto site"), and a name said
#: to be a kind of place ("Café Hitsuji is a quiet café").
_PLACE_CUE_RES = (
    re.compile(r"\b(?:workshop|meeting|conference|office|interviews?|fieldwork|site visits?|"
               r"trip|stay|hotel|flat|apartment)\s+(?:in|at)\s+" + _NAME),
    re.compile(r"\b(?i:the)\s+" + _NAME + r"\s+(?:site|office|branch|campus)\b"),
    # a room or a day there, a trip back from it (a sentence's opener too: "Back from X")
    re.compile(r"\b(?:rooms?|venue|entrance|lifts?|elevators?|toilets?|platforms?|exits?)\s+at\s+"
               + _NAME),
    re.compile(r"\b(?i:spent)\s+(?:[\w\-]+\s+){1,2}at\s+" + _NAME),
    re.compile(r"(?:^|[.:;]\s+)(?:Back from|Went to|Arrived in|Visited)\s+" + _NAME),
    re.compile(_NAME + r"\s+is\s+the\s+one\s+in\s+[A-Z]"),
    # "The quiet café near Kyoto Station is Lantern Books and Coffee"
    re.compile(r"\b(?i:caf[eé]|restaurant|bakery|bar|pub|tea room|tea house|coffee shop|bookshop|"
               r"shop|store)\s+(?:near|in|at|by|on|off)\s+[^.;:!?]{1,40}?\bis\s+" + _NAME_AND),
    re.compile(_NAME_AND + r"\s+is\s+(?:a|an|the)\s+(?:[a-z\-]+\s+){0,2}(?:caf[eé]|restaurant|bar|"
               r"pub|bakery|shop|store|park|station|market|museum|hall|mall|street|"
               r"neighbou?rhood|district|city|town|village|island|beach|venue)\b"),
)
#: A tool, said as one ("we'll use Figma instead of Sketch", "why we dropped Zotero", "I
#: write papers in LaTeX"): a topic, the wiki's type for tools and languages.
_TOOL_CUE_RES = (
    re.compile(r"\b(?i:use|using|used|switch(?:ed)? to|go(?:es)? with|went with|stick with|"
               r"adopt(?:ed)?|chose|choose|pick(?:ed)?)\s+" + _NAME + r"\s+(?:instead of|over|rather than)\s+"
               + _NAME),
    re.compile(r"\b(?i:dropped|ditched|abandoned|commit to|committed to|instead of)\s+" + _NAME),
    re.compile(r"\b(?i:write|writes|wrote|written|writing|analysis|analyses|transcribe[sd]?|coding)"
               r"\s+(?:[a-z]+\s+){0,2}in\s+" + _NAME + r"(?:\s+on\s+" + _NAME + ")?"),
    # a thing of a named kind ("the Okabe-Ito palette", "the Likert scale", "the APA style")
    re.compile(r"\b(?i:the|a|an|our|my|your)\s+" + _NAME + r"\s+(?:palette|colou?r scheme|font|typeface|"
               r"scale|questionnaire|template|style(?: guide)?|method|framework|library|package|"
               r"plugin|notation|format)\b"),
    # what a device runs ("my laptop runs Windows", "it only runs on Linux"): software
    re.compile(r"\b(?i:(?:laptop|computer|pc|phone|machine|server|tablet|device)s?\s+(?:runs|run|running)"
               r"(?:\s+on)?|runs\s+on|running\s+on)\s+" + _NAME),
    # where a cited paper appeared ("Inoue et al. at CHI 2022", "Tanaka and colleagues
    # (W4A 2023)"): a publication venue, spoken of like a field's fixture, not an employer
    re.compile(r"\b(?:et al\.?,?\s+(?:at\s+|in\s+)?|colleagues\s*\(\s*)" + _NAME + r",?\s+(?:19|20)\d{2}\b"),
)
#: A ship or a boat, named as one ("the survey ship Nordstjernan", "aboard Nordstjernan",
#: "Nordstjernan docked in Gothenburg", "RV Aurora"): a vessel, neither an organisation nor
#: a place, whatever the extractor calls it.
_VESSEL_CUE_RES = (
    re.compile(r"\b(?i:ship|vessel|boat|ferry|yacht|trawler|icebreaker|tanker|schooner|"
               r"sailboat|barge|tug|cutter)\s+" + _NAME),
    re.compile(r"\b(?i:aboard|on board(?: the)?|onboard)\s+" + _NAME),
    re.compile(_NAME + r"\s+(?:sails|sailed|sailing|docks|docked|docking|moored|anchored|"
               r"berthed|set sail|ran aground|capsized)\b"),
    re.compile(r"\b(?:RV|R/V|MV|M/V|HMS|USS|SS|MS|FV)\s+" + _NAME),
)
#: A name said to be finished by a date ("the Lakeview Cottage has to be done by April 30"):
#: a piece of work.
_PROJECT_DUE_RE = re.compile(_NAME + r"\s+(?:has|have|needs?|must|should)\s+(?:to\s+)?be\s+"
                             r"(?:done|finished|ready|completed|delivered|built|installed|shipped)\s+by\b")
#: Who stands beside "I" ("Renée and I are still in Sudbury"), or a sentence's subject that a
#: "she"/"he" of the same sentence takes up ("Gail Hendricks sent photos …, she loves it"): a person.
_PERSON_CUE_RES = (
    re.compile(_NAME + r"\s+and\s+(?:I|me)\b"),
    re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+" + _NAME),
    re.compile(r"^" + _NAME + r"\s+[a-z][^.;:!?]*?(?:,|\band)\s+(?:she|he)\b"),
)
_PLACE_OPENERS = frozenset("café cafe restaurant hotel mount lake cape port fort".split())


def cue_types(facts: list[dict]) -> dict[str, Counter]:
    """Name → type votes from how a sentence speaks of it, weaker than a relation or a head
    word and stronger than the extractor's label (see :func:`_type_of`)."""
    return sentence_cues(f["text"] for f in facts)


def sentence_cues(texts: Iterable[str]) -> dict[str, Counter]:
    """:func:`cue_types` over plain sentences: dream counts them over every sentence of a
    session, not only the ones kept as facts ("For the workshop in Kumamoto, reserve a
    quiet room" types Kumamoto even when no fact says so)."""
    out: dict[str, Counter] = defaultdict(Counter)
    for text in texts:
        for rx, typ in [(_PROJECT_CUE_RE, "project"), (_PROJECT_ON_RE, "project"),
                        (_PROJECT_DUE_RE, "project")] + [(rx, "person") for rx in _PERSON_CUE_RES] + [
                (rx, "place") for rx in _PLACE_CUE_RES] + [(rx, "topic") for rx in _TOOL_CUE_RES] + [
                (rx, "vessel") for rx in _VESSEL_CUE_RES]:
            for m in rx.finditer(text):
                for g in m.groups():
                    name = re.sub(r"^(?:The|A|An|This|That|Our|My)\s+", "", g or "")
                    if name[:1].isupper():
                        out[name][typ] += 1
    return out


#: Someone or something the speaker stands in a relation to, said once: works with, met,
#: visits, partners with, reports to, is hosted by ("I met Ilse Brandt at the workshop", "We
#: partner with Vattenfall Power", "I'm working on the atlas with Kenji Sato from the Baltic
#: Marine Institute", "Lund University hosts the summer school I teach at").
_RELATED_RES = (
    re.compile(r"\b(?i:I|we|I'm|we're|I've|we've)\s+(?:(?:also|often|still|now|just|recently|"
               r"regularly|finally|first|already|been|am|are|have|had|will)\s+)*"
               r"(?:work(?:ed|ing)?\s+(?:closely\s+)?with|met(?:\s+up)?(?:\s+with)?|meet(?:ing)?(?:\s+with)?|"
               r"visit(?:ed|ing)?|partner(?:ed|ing)?\s+with|collaborat(?:e|ed|ing)\s+with|"
               r"team(?:ed)?\s+up\s+with|consult(?:ed|ing)?\s+for|report(?:ed|ing)?\s+to|"
               r"(?:am|'m|was)\s+hosted\s+by|hosted\s+by|stay(?:ed|ing)?\s+with|"
               r"(?:had|have)\s+(?:a\s+)?(?:call|meeting|lunch|dinner|coffee)\s+with)\s+"
               r"(?:the\s+)?" + _NAME + r"(?:\s+(?:from|of|at)\s+(?:the\s+)?" + _NAME + r")?"),
    re.compile(r"\b(?i:I|we|I'm|we're)\b[^.;:!?]*?\bwith\s+(?:the\s+)?" + _NAME
               + r"(?:\s+(?:from|of|at)\s+(?:the\s+)?" + _NAME + r")?"),
    re.compile(r"^(?:The\s+)?" + _NAME + r"\s+(?:hosts|hosted|is hosting|will host|funds|funded|"
               r"sponsors|sponsored)\b[^.;:!?]*\b(?:I|me|us|we|my|our)\b"),
)


def related_names(texts: Iterable[str]) -> set[str]:
    """Names a first-person sentence puts in a relation to its speaker (:data:`_RELATED_RES`),
    cleaned: one mention of such a person or organisation is enough for a page."""
    out: set[str] = set()
    for text in texts:
        for rx in _RELATED_RES:
            for m in rx.finditer(text):
                for g in m.groups():
                    n = clean_name(g) if g else None
                    if n:
                        out.add(n)
    return out


class _Namer:
    """Names as this corpus writes them: which capitalised words are common words (written
    in lower case at least as often), which names occur mid-sentence somewhere, and the
    clean names a raw mention holds."""

    def __init__(self, facts: list[dict], human: list[str], extra_names: Counter | None,
                 case: dict[str, list[int]] | None) -> None:
        # words the corpus writes in lower case are common words, not names ("Add it to the
        # notes", "Decision for Tactile Transit Maps"): measured, not listed
        self.lower: Counter = Counter()
        self.capital: Counter = Counter()
        if case:
            for w, (lo, up) in case.items():
                self.lower[w] += lo
                self.capital[w] += up
        else:  # an older state without per-session counts: the facts' words
            for f in facts:
                for w in re.findall(r"[A-Za-z][\w'’\-]*", f["text"])[1:]:
                    (self.lower if w[0].islower() else self.capital)[w.lower()] += 1
        # names written mid-sentence somewhere, as they are: what "known elsewhere" means below
        self.joined = joined_names(facts, human)
        self.seen: Counter = Counter(set(human) | set(extra_names or {}))
        for f in facts:
            for raw in list(f.get("subjects", {})) + f.get("names", []):
                self.seen.update(names_in(raw, self.joined))

    def within_joined(self, raw: str, text: str) -> bool:
        """Is ``raw`` a piece of a one-name "A and B" run of ``text`` (spaCy's "Kings" and
        "Queens Academy" in "Kings and Queens Academy")?"""
        return any(_inside(raw, j) and j in text for j in self.joined)

    def common(self, w: str) -> bool:
        return self.lower[w.lower()] > 0 and self.lower[w.lower()] >= self.capital[w.lower()]

    def norm(self, raw: str) -> list[str]:
        """The clean names in a raw mention."""
        seen, common = self.seen, self.common
        out = []
        for n in names_in(raw, self.joined):
            if raw in self.joined:
                out.append(n)
                continue
            toks = n.split()
            # "North Sea Tide Atlas the QC": a known name, a connector, more capitals — two runs
            for k in range(1, len(toks) - 1):
                if toks[k].lower() in CONNECTORS and seen[" ".join(toks[:k])] and \
                        toks[k - 1].lower() not in _ORG_HEADS:
                    out += self.norm(" ".join(toks[:k])) + self.norm(_after_connectors(toks[k:]))
                    toks = []
                    break
            if not toks:
                continue
            # a common word in front of a name is not part of it: "Decision for Tactile
            # Transit Maps", "Use Nagoya" (but "Screen Reader Latency Study" stays whole)
            while len(toks) > 1 and toks[0].lower() not in _ORG_HEADS and (
                    (toks[1].lower() in CONNECTORS and (common(toks[0]) or seen[_after_connectors(toks[1:])]))
                    or (common(toks[0]) and seen[" ".join(toks[1:])] > seen[" ".join(toks)])):
                toks.pop(0)
                while len(toks) > 1 and toks[0].lower() in CONNECTORS:
                    toks.pop(0)
            n = clean_name(" ".join(toks)) if toks else None
            if n and not (len(toks) == 1 and common(n)):
                out.append(n)
        return out


class _Mentions(NamedTuple):
    """The names each fact mentions, with the extractor's type votes and mention counts."""

    per_fact: dict[int, set[str]]       # id(fact) → clean names
    votes: dict[str, Counter]           # name → extractor type votes
    counts: Counter                     # name → facts mentioning it (+ names seen elsewhere)


class _TypeEvidence(NamedTuple):
    """What :func:`_type_of` weighs, strongest first."""

    speakers: set[str]
    strong: dict[str, Counter]
    cues: dict[str, Counter]
    votes: dict[str, Counter]


def build(facts: list[dict], speakers: set[str], settings: Settings,
          strong_types: dict[str, Counter] | None = None, extra_names: Counter | None = None,
          anchored: set[str] | None = None, case: dict[str, list[int]] | None = None,
          exclude: set[str] | None = None, cues: dict[str, Counter] | None = None,
          related: set[str] | None = None) -> Subjects:
    """The wiki's subjects from all facts (see the module docstring).

    ``strong_types``: name → type votes from relations ("works at X" → organization);
    ``extra_names``: names seen outside facts (a speaker's full name); ``anchored``: names a
    speaker has a lasting relation to, which need one mention only; ``case``: word → [times
    written in lower case, times capitalised mid-sentence] over whole sessions; ``exclude``:
    names that are no subject (a named assistant); ``cues``: :func:`sentence_cues` over
    every sentence of the sessions (default: over the facts alone); ``related``: names a
    speaker states a relation to (:func:`related_names`, default: over the facts), which
    need one mention when they are a person or an organisation."""
    human = [s for s in speakers if not is_role(s)]
    namer = _Namer(facts, human, extra_names, case)
    men = _mentions(facts, namer, human, extra_names, exclude or set())
    evidence = _TypeEvidence(speakers, strong_types or {}, cue_types(facts) if cues is None else cues,
                             men.votes)
    placey = {n for n in men.counts if (evidence.strong.get(n) or {}).get("place")
              or (evidence.cues.get(n) or {}).get("place")}
    # a speaker's full name is a person's whatever its head word ("Zoe Park", "Ana Hill")
    people = {n for n in men.counts if (evidence.strong.get(n) or {}).get("person")
              or (evidence.cues.get(n) or {}).get("person")} | set(extra_names or {})
    canon = merge_map(men.counts, {n: _majority(men.votes.get(n)) for n in men.counts}, set(human),
                      placey, people)
    if related is None:
        related = related_names(f["text"] for f in facts)
    by_slug = _pages(facts, canon, _turns(facts, men.per_fact, canon), human, anchored or set(),
                     settings, men.counts, evidence, related)
    alias_of: dict[str, str] = {}
    for slug, s in by_slug.items():
        for n in [s.title, *s.aliases]:
            alias_of.setdefault(n, slug)
    lower_alias = _lower_aliases(by_slug, facts)
    # every way a fact wrote a subject's name leads to its page
    for f in facts:
        for raw in list(f.get("subjects", {})) + f.get("names", []) + f.get("lead", []):
            if raw not in alias_of:
                hits = {alias_of[canon[n]] for n in namer.norm(raw) if n in canon and canon[n] in alias_of}
                if len(hits) == 1:
                    alias_of[raw] = hits.pop()
    # speakers are known by their name even when it was never extracted as an entity
    return Subjects(by_slug, alias_of, lower_alias)


def _mentions(facts: list[dict], namer: _Namer, human: list[str], extra_names: Counter | None,
              exclude: set[str]) -> _Mentions:
    """Every fact's names (subjects and mid-sentence names; a sentence opener only when the
    corpus knows it from elsewhere), with type votes and counts."""
    counts: Counter = Counter(extra_names or {})
    votes: dict[str, Counter] = defaultdict(Counter)
    per_fact: dict[int, set[str]] = {}
    for f in facts:
        found: set[str] = set()
        for raw, typ in list(f.get("subjects", {}).items()) + [(n, "") for n in f.get("names", [])]:
            if namer.within_joined(raw, f["text"]):
                continue
            for n in namer.norm(raw):
                if n in exclude:
                    continue
                found.add(n)
                if typ and typ != "entity":
                    votes[n][typ] += 1
        per_fact[id(f)] = found
    known = {n for ns in per_fact.values() for n in ns} | set(human) | set(extra_names or {})
    for f in facts:
        # a sentence opener counts only as a name the corpus knows from elsewhere
        per_fact[id(f)] |= {n for raw in f.get("lead", []) if not namer.within_joined(raw, f["text"])
                            for n in namer.norm(raw) if n in known and n not in exclude}
        counts.update(per_fact[id(f)])
    for s in human:
        counts[s] += 1
    return _Mentions(per_fact, votes, counts)


def _turns(facts: list[dict], per_fact: dict[int, set[str]], canon: dict[str, str]) -> dict[str, set]:
    """Canonical name → the (session, anchor) turns that mention it."""
    turns: dict[str, set] = defaultdict(set)
    for f in facts:
        for n in per_fact[id(f)]:
            turns[canon[n]].add((f["session"], f["anchor"]))
        # the speaker's own first-person statements are about them
        if f.get("about_speaker") and f["speaker"] in canon:
            turns[canon[f["speaker"]]].add((f["session"], f["anchor"]))
    return turns


def _pages(facts: list[dict], canon: dict[str, str], turns: dict[str, set], human: list[str],
           anchored: set[str], settings: Settings, counts: Counter,
           evidence: _TypeEvidence, related: set[str] = frozenset()) -> dict[str, Subject]:
    """slug → subject, for every canonical name with enough mentions (the user always)."""
    # the user: the human speaker with the most turns
    spoken = Counter(f["speaker"] for f in facts if f["speaker"] in human)
    user = spoken.most_common(1)[0][0] if spoken else None
    min_m = settings.min_mentions
    min_s = settings.min_sessions
    by_slug: dict[str, Subject] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for n, c in canon.items():
        groups[c].append(n)
    for c, members in sorted(groups.items()):
        ts = turns.get(c, set())
        sess = {s for s, _a in ts}
        is_user = user is not None and (c == user or canon.get(user) == c)
        typ = _type_of(c, members, evidence.votes, evidence.strong, evidence.speakers, evidence.cues)
        # a person or organisation the speaker works with, met, partners with: one mention
        once = any(m in anchored for m in members) or (
            typ in ("person", "organization") and any(m in related for m in members))
        need_m, need_s = (1, 1) if once else (min_m, min_s)
        if not is_user and (len(ts) < need_m or len(sess) < need_s):
            continue
        slug = slugify(c)
        if slug == "index":
            slug = "index-subject"
        if slug in by_slug:  # two names with one slug ("Sora-City" / "Sora City"): keep the bigger
            if len(by_slug[slug].turns) >= len(ts):
                continue
        aliases = sorted({m for m in members if m != c}, key=lambda m: (-counts[m], m))
        by_slug[slug] = Subject(slug, c, typ, aliases, ts, sess, is_user)
    return by_slug


def _lower_aliases(by_slug: dict[str, Subject], facts: list[dict]) -> dict[str, str]:
    """"the atlas" for "Baltic Surge Atlas": a project's head noun with "the", when one
    project has that head (said in lower case, so no extractor sees it); the turns that
    say it join the subject's."""
    heads: dict[str, list[str]] = defaultdict(list)
    for slug, sub in by_slug.items():
        toks = sub.title.lower().split()
        if sub.type == "project" and len(toks) > 1 and toks[-1] in _PROJECT_HEADS | {"map", "maps"}:
            heads[toks[-1]].append(slug)
    lower_alias = {f"the {h}": ss[0] for h, ss in heads.items() if len(ss) == 1}
    for phrase, slug in lower_alias.items():
        rx = re.compile(rf"\b{phrase}\b")
        hit = False
        for f in facts:
            if rx.search(f["text"]):
                by_slug[slug].turns.add((f["session"], f["anchor"]))
                by_slug[slug].sessions.add(f["session"])
                hit = True
        if hit and phrase not in by_slug[slug].aliases:
            by_slug[slug].aliases.append(phrase)
    return {p: s for p, s in lower_alias.items() if p in by_slug[s].aliases}


def _type_of(c: str, members: list[str], votes: dict[str, Counter],
             strong: dict[str, Counter], speakers: set[str],
             cues: dict[str, Counter] | None = None) -> str:
    """Strongest evidence first: a speaker, a relation, a head word, how sentences speak of
    it (:func:`cue_types`), the extractor's majority label; else a topic."""
    sv: Counter = Counter()
    for m in members:
        sv.update(strong.get(m, {}))
    if c in speakers or any(m in speakers for m in members):
        return "pet" if sv.get("pet") else "person"
    if sv:
        return sorted(sv.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    h = head_type(c)
    if h:
        return h
    cv: Counter = Counter()
    for m in members:
        cv.update((cues or {}).get(m, {}))
    # A place is often named like a piece of work ("the Kanazawa pilot": the pilot run
    # there), but a project is not spoken of as a location ("the workshop in Signbridge"):
    # a locative cue counts twice.
    cv["place"] *= 2
    cv = +cv
    if cv:
        return sorted(cv.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    v: Counter = Counter()
    for m in members:
        # the part of a compound before its hyphen ("NASA" of "NASA-TLX") names something
        # else to the extractor: its label is not the compound's
        if " " not in c and len(c) > len(m) and c[len(m)] in ".-" and c[:len(m)].lower() == m.lower():
            continue
        v.update(votes.get(m, {}))
    v.pop("date", None)
    if v:
        return sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return "topic"  # a recurring name with no other evidence: a tool, a language, a theme
