"""What counts as a subject's name: the words that never are one (speaker roles, salutations,
titles, file formats, degrees, chat's common words), a mention cleaned into the name it stands
for, "A and B" runs that are one name, and speaker names that are roles.

Rule 1 of :mod:`.subjects` ("Clean each name")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .text import CONNECTORS, NOT_SUBJECT


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


def inside(part: str, whole: str) -> bool:
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
            if " and " in r or any(inside(r, c) for c in here):
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


def after_connectors(toks: list[str]) -> str:
    while toks and toks[0].lower() in CONNECTORS:
        toks = toks[1:]
    return " ".join(toks)


def is_role(name: str) -> bool:
    """A speaker name that is a role, not a person ("Assistant", "User")."""
    return name.strip().lower() in ROLE_NAMES


def is_assistant(name: str) -> bool:
    """A speaker that is the assistant (or another non-human role): its turns state no facts."""
    return is_role(name) and name.strip().lower() not in USER_ROLES
