"""What type a subject is (rule 3 of :mod:`.subjects`): head words read from the name itself
("… Hospital", "Project …"), cues from how sentences speak of a name ("the workshop in X",
"the X pilot", "aboard X"), the names a first-person sentence relates to its speaker, and
:func:`type_of`, which weighs that evidence, strongest first."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from .subjectnames import clean_name
from .text import ORG_CUES

#: Head words: a name's last word (or, for a project, its first) that says what it is.
ORG_HEADS = frozenset(ORG_CUES) | {"hospital", "clinic", "labs", "analytics", "maritime",
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
PROJECT_HEADS = frozenset("project program programme initiative pilot study survey campaign "
                          "app dashboard atlas forecast platform tool plugin model report "
                          "book podcast series corpus dataset database archive thesis "
                          "index toolkit prototype".split())
PLACE_HEADS = frozenset("street road avenue park river lake mountain city town village "
                        "island bay beach square county province region station terminal "
                        "market mall hall harbor harbour port airport bridge tower garden "
                        "gardens temple shrine castle plaza district ward".split())
EVENT_HEADS = frozenset("marathon festival conference summit workshop meetup expo fair race "
                        "tournament cup games symposium hackathon retreat".split())


def head_type(name: str) -> str | None:
    """A type read from the name itself ("St Aldric Hospital" → organization; "University of
    Ibadan", "Ontario Guild of Furniture Makers": the head stands before "of")."""
    toks = name.lower().split()
    if "of" in toks[1:-1] and toks[toks.index("of") - 1] in ORG_HEADS:
        return "organization"
    if toks[0] in ("project", "operation", "programme", "program") and len(toks) > 1:
        return "project"
    if toks[0] in _PLACE_OPENERS and len(toks) > 1:  # "Café Hitsuji", "Mount Rainier"
        return "place"
    if toks[-1] in ORG_HEADS:
        return "organization"
    if len(toks) > 1 and toks[-1] in PROJECT_HEADS:
        return "project"
    if len(toks) > 1 and toks[-1] in PLACE_HEADS:
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
    word and stronger than the extractor's label (see :func:`type_of`)."""
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


def type_of(c: str, members: list[str], votes: dict[str, Counter],
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
