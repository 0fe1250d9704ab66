"""Named quantities, doses and bounds a sentence states: "the QC spike threshold is 40 cm",
"I take 100 mcg of levothyroxine", "the white oak has to be under 9 percent moisture", "the
allotment is 200 square metres"; and the shapes of a number and its unit (:data:`NUMBER`,
:data:`UNIT`) other modules match values with. Each is keyed as :mod:`.quantitykeys` says.
"""

from __future__ import annotations

import re

from .irrealis import unrealised
from .quantitykeys import STOP_MODS, after_determiner, modifiers, names_key, owner_of, possessor, with_front
from .relationrecord import Relation, clean_value

#: A number as said: with a currency sign before it ("£600", "$ 45"), thousands grouped
#: ("8,000"), "k" for thousands ("22k"), or in words.
NUMBER = (r"(?:(?:[£$€¥]\s?)?\d+(?:[.,]\d+)*(?:k(?![\w-]))?|one|two|three|four|five|six|seven|eight|nine|ten|"
          r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred)")
UNIT = (r"(?:\s+[a-z]{3,}s\s+(?:per|a|an|each)\s+(?:second|minute|hour|day|week|month|year)|\s*(?:%|percent|per\s*cent|(?:centi|milli|kilo)?met(?:re|er)s?|feet|foot|inch(?:es)?|miles?|tonnes?|kilos?|(?:milli)?lit(?:re|er)s?|cm|mm|m|km|kg|g|mg|mcg|µg|ml|l|iu|units?|tablets?|hours?|h|minutes?|min|days?|"
         r"weeks?|months?|years?|seconds?|s|points?|euros?|eur|dollars?|usd|gbp|pounds?|people|"
         r"nurses|beds|pages|words|items|users|mb|gb|tb|kb|ms|px|dpi|°c|°f|degrees|hz|khz|mhz|ghz|"
         r"kbps|mbps|fps|bpm|mph|kph|km/h|calories|kcal|steps|participants|samples|ppm|ppb|mmol|mg/l)"
         # a count of anything, by its plural noun ("36 cartons", "12 pallets")
         r"|\s+(?!(?:this|was|has|his|its|is|us|yes|plus|minus|less|across|towards|unless|thus|as|always|"
         r"perhaps|sometimes|besides|whereas|afterwards|says|does|goes|gets|makes|seems|looks)\b)[a-z]{3,}(?<!ss)s(?![\w-]))?")

#: The head nouns a named quantity is keyed by.
_QTY_HEADS = (r"threshold|limit|budget|target|cap|quota|minimum|maximum|max|min|rate|score|size|"
              r"count|number|price|fee|salary|rent|deposit|goal|distance|height|width|length|"
              r"depth|weight|temperature|interval|timeout|dose|dosage|headcount|sample size|tolerance|margin|"
              r"capacity|duration|point|level|frequency|ratio|speed|ceiling|floor|setpoint|buffer|allowance|"
              r"reserve|retention|concentration")
_QTY = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+|its\s+)?(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?P<head>{_QTY_HEADS})"
    rf"(?:\s+(?:for|of|on|in)\s+(?P<of>[\w\- ]{{2,40}}?))?(?:\s+(?:this|for\s+the|for\s+this)\s+(?:year|month|week|term|season))?"
    rf"\s+(?:is|are|was changed to|has changed to|"
    rf"changed to|moved to|went up to|went down to|is now|will be|should be|of|"
    rf"(?:moved|went|changed|went up|went down|dropped|rose|fell)\s+from\s+{NUMBER}{UNIT}\s+to|"
    # terse: "batch size up to 128 now", "the reorder point raised to 36"
    rf"(?:(?:is|are|was|has\s+been|have\s+been|got)\s+)?(?:now\s+)?(?:up|down|back|raised|lowered|increased|decreased|reduced|"
    rf"bumped(?:\s+up|\s+down)?|cut|dropped|fell|rose|climbed|jumped|went\s+up|went\s+down|moved|changed)\s+to|"
    # "Alert threshold: 85% now", "max batch size = 64"
    rf"\s*(?::|=|->|→|=>))\s+(?:now\s+|set to\s+|at\s+)?"
    rf"(?P<v>{NUMBER}{UNIT})(?![\w-])", re.I)
_QTY_VERB = re.compile(
    rf"\b(?:lowered|raised|increased|decreased|reduced|changed|set|moved|bumped|dropped|cut|updated|adjusted|"
    rf"lower|raise|increase|decrease|reduce|change|bump|drop|update|adjust)\s+"
    rf"(?:the\s+|our\s+|my\s+)?(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?P<head>{_QTY_HEADS})"
    rf"(?:\s+(?:for|of|on|in)\s+(?P<of>[\w\- ]{{2,40}}?))?(?:\s+(?:up|down|back))?\s+(?:from\s+{NUMBER}{UNIT}\s+)?to\s+"
    rf"(?P<v>{NUMBER}{UNIT})(?![\w-])", re.I)
#: A bound stated as one ("the white oak has to be under 9 percent moisture") and a bound
#: named after its value ("it's 7 percent max for the oak, not 9"): keyed max/min + what it
#: bounds, so the two are one quantity.
_QTY_BOUND = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+|its\s+)?(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?:has|have|needs?|must|should)\s+"
    rf"(?:to\s+)?(?:be|stay|remain|keep)\s+(?P<dir>under|below|less than|at most|no more than|over|above|"
    rf"more than|at least|no less than)\s+(?P<v>{NUMBER}{UNIT})(?![\w-])(?:\s+(?P<what>[a-z][\w\-]*))?", re.I)
_QTY_AFTER = re.compile(
    rf"\b(?P<v>{NUMBER}{UNIT})\s+(?P<head>max|maximum|min|minimum)\s+(?:for|of|on|in)\s+"
    rf"(?:the\s+|our\s+|my\s+)?(?P<of>[\w\-]+(?:\s+[\w\-]+){{0,3}}?)(?=[,.;!]|\s+(?:now|not)\b|$)", re.I)
#: A thing's size in a unit of measure ("the allotment is 200 square metres, not 250"):
#: keyed by the thing.
_MEASURE = (r"(?:square\s+(?:metres|meters|feet|foot|miles|kilometres|kilometers)|sq\.?\s*(?:m|ft)|m2|m²|"
            r"acres?|hectares?|metres|meters|centimetres|centimeters|feet|foot|inches|miles|"
            r"kilometres|kilometers|km|cm|mm|kg|kilos|tonnes|litres|liters)")
_QTY_SIZE = re.compile(
    rf"\b(?:the|my|our|their|his|her)\s+(?P<mods>(?-i:(?:[a-z][\w\-]*\s+){{0,2}}?))(?P<head>(?-i:[a-z][\w\-]*))\s+"
    rf"(?:is|are|measures|measure)\s+(?:now\s+|only\s+|about\s+|roughly\s+|around\s+|actually\s+)*"
    rf"(?P<v>{NUMBER}\s*{_MEASURE})(?![\w-])", re.I)
_LOWER_BOUND = ("over", "above", "more than", "at least", "no less than")


#: "Correction on step-free routing: …", "Update for the atlas: …" — what the rest is about.
_TOPIC_RE = re.compile(r"^\W*(?:correction|update|note|change|reminder)\s+(?:on|for|about|re)\s+(?:the\s+)?"
                       r"(?P<t>[\w\- ]{2,40}?)\s*:", re.I)


#: "The minimum order for wholesale is 50 metres": a bound named by what it bounds, keyed
#: min/max + that noun (a head noun of its own, "the maximum temperature", is read by _QTY).
_QTY_MINMAX = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+|its\s+)?(?P<head>minimum|maximum|min|max)\s+(?!(?:{_QTY_HEADS})\b)(?P<noun>[a-z][\w\-]*)"
    rf"(?:\s+(?:for|of|on|in)\s+(?:the\s+)?(?P<of>[\w\- ]{{2,40}}?))?\s+(?:is|are|is\s+now|will\s+be)\s+(?:now\s+)?"
    rf"(?P<v>{NUMBER}{UNIT})(?![\w-])", re.I)


_DOSE_UNIT = r"(?:mg|mcg|µg|micrograms?|milligrams?|g|ml|iu|units?)"
_DOSE_VALUE = rf"(?P<v>{NUMBER}\s*{_DOSE_UNIT})(?![\w-])"
#: A medicine's dose, keyed by the medicine: "I take 100 mcg of levothyroxine", "I'm on
#: 20 mg citalopram", "the GP dropped my levothyroxine to 75 mcg", "my sertraline dose is
#: now 100 mg". The speaker's own only ("my", "I"): "Dad's metformin" is someone else's.
_DOSES = (
    re.compile(rf"\bI(?:['’]m|\s+am)?\s+(?:now\s+|still\s+)?(?:take|on|taking)\s+{_DOSE_VALUE}\s+(?:of\s+)?"
               rf"(?P<drug>[a-z][a-z\-]{{3,}})\b", re.I),
    re.compile(rf"\b(?:dropped|lowered|raised|upped|increased|reduced|decreased|cut|changed|put|moved|bumped)\s+"
               rf"(?:me\s+)?(?:my\s+|me\s+on\s+)(?P<drug>[a-z][a-z\-]{{3,}})(?:\s+dose)?\s+(?:up\s+|down\s+)?to\s+"
               rf"{_DOSE_VALUE}", re.I),
    re.compile(rf"\bmy\s+(?P<drug>[a-z][a-z\-]{{3,}})\s+(?:dose\s+)?(?:is|was)\s+(?:now\s+|changed\s+to\s+)?"
               rf"{_DOSE_VALUE}", re.I),
    # a person named in full ("Agnieszka Holloway takes 10 mg citalopram now")
    re.compile(rf"(?P<s>(?-i:[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)+))\s+(?:now\s+|still\s+)?(?:takes|is\s+on|is\s+taking)\s+"
               rf"{_DOSE_VALUE}\s+(?:of\s+)?(?P<drug>[a-z][a-z\-]{{3,}})\b", re.I),
)
_NOT_DRUGS = frozenset("dose dosage daily each every morning night tablet tablets pill pills".split())


def _doses(sentence: str) -> list[Relation]:
    """The speaker's doses (:data:`_DOSES`), keyed ``dose|<medicine>``."""
    out: list[Relation] = []
    for rx in _DOSES:
        for m in rx.finditer(sentence):
            drug = m.group("drug").lower()
            if drug in _NOT_DRUGS or unrealised(sentence, m.start()):
                continue
            rel = Relation(m.groupdict().get("s") or "", "number", clean_value(m.group("v")), "set",
                           f"dose|{drug}", False, "", phrase=f"{drug} dose")
            if rel not in out:
                out.append(rel)
    return out


#: A rate the speaker keeps to, said of themselves: "I run about 25 km per week", "I'm saving
#: $250 a week", "I'm trying to hit 10,000 steps a day", "I drink four coffees a day", "I read
#: 52 books a year". Keyed by what is counted and over what; a later value in other words
#: ("bumping my weekly mileage up to 45 km") is :mod:`.retold`'s to read.
_RATE = re.compile(
    rf"\b(?:I|I['’]m|im|I\s+am|we|we['’]re)\s+(?:(?:usually|normally|currently|now|still|already|typically|"
    rf"generally|try(?:ing)?\s+to|aim(?:ing)?\s+(?:to|for)|want\s+to|at|on|do|doing|about|around|roughly)\s+)*"
    rf"(?P<verb>run|running|walk|walking|cycle|cycling|ride|riding|swim|swimming|save|saving|spend|spending|"
    rf"put\s+away|putting\s+away|put\s+aside|putting\s+aside|set\s+aside|drink|drinking|have|having|read|reading|"
    rf"write|writing|do|doing|hit|hitting|get|getting|work|working|sleep|sleeping|practi[cs]e|practi[cs]ing|"
    rf"train|training|study|studying|smoke|smoking|eat|eating|budget|make|making|earn|earning|log|logging)\s+"
    rf"(?:about\s+|around\s+|roughly\s+|approximately\s+|up\s+to\s+|at\s+least\s+|maybe\s+)?"
    rf"(?P<v>{NUMBER}\s*(?P<u>%|[a-z]+(?:\s+of\s+[a-z]+)?)?)\s*(?P<c>a|per|each|every|/)\s*"
    rf"(?P<p>day|week|month|year|night|morning|weekday|workday)\b", re.I)
#: A count said in words, in digits (the words :data:`NUMBER` reads): one value however said.
WORD_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
WORD_NUMBERS.update({"fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50"})
_SAVE = re.compile(r"sav|put|set", re.I)
_LENGTHS = frozenset("km kms k miles mile metres meters m".split())


def rates(sentence: str) -> list[Relation]:
    """The speaker's own rates (:data:`_RATE`), keyed ``rate|<what> <period>``."""
    out: list[Relation] = []
    for m in _RATE.finditer(sentence):
        if unrealised(sentence, m.start()) or re.search(r"\b(?:used\s+to|would|back\s+when)\b", sentence[:m.start()], re.I):
            continue
        value, unit, per = m.group("v"), (m.group("u") or "").lower(), m.group("p").lower()
        if value[:1] in "£$€¥":
            what = "amount saved" if _SAVE.match(m.group("verb")) else "amount spent" if m.group("verb").lower().startswith(
                "spend") else "amount"
        elif unit in _LENGTHS:
            what = "distance"
        elif unit in ("%", "percent"):
            continue
        elif unit and unit not in STOP_MODS:
            what = f"number of {unit}"
        else:
            continue
        # a count in words as a number ("four coffees a day" → "4 coffees a day"): one value however said
        value = re.sub(r"^[a-z]+", lambda w: WORD_NUMBERS.get(w.group(0).lower(), w.group(0)), value, flags=re.I)
        said = f"{value}/{per}" if m.group("c") == "/" else f"{value} {m.group('c').lower()} {per}"
        out.append(Relation("", "number", clean_value(said), "set", f"rate|{what} {per}", False, "",
                            phrase=f"{what} a {per}"))
    return out


def quantities(sentence: str) -> list[Relation]:
    """Named quantities ("the QC spike threshold is 40 cm"), keyed by head and modifiers."""
    out: list[Relation] = _doses(sentence) + rates(sentence)
    for m in _QTY_MINMAX.finditer(sentence):
        if unrealised(sentence, m.start()):
            continue
        head = _head(m.group("head"))
        what = " ".join(x for x in (m.group("noun"), m.group("of")) if x)
        phrase = f"{'maximum' if head == 'max' else 'minimum'} {m.group('noun')}" + (
            f" for {m.group('of')}" if m.group("of") else "")
        out.append(Relation("", "number", clean_value(m.group("v")), "set",
                            with_front(f"{head}|{modifiers(what)}", sentence, m.start("v")), False, "",
                            phrase=phrase))
    topic = _TOPIC_RE.match(sentence)
    for m in list(_QTY.finditer(sentence)) + list(_QTY_VERB.finditer(sentence)):
        start = after_determiner(sentence, m.start("mods"), m.start("head"))
        mods = modifiers(sentence[start:m.start("head")] + " " + (m.group("of") or ""))
        if not mods and topic and topic.end() <= m.start():
            mods = modifiers(topic.group("t"))  # "Correction on step-free routing: the threshold is …"
        phrase = " ".join(sentence[start:m.end("of") if m.group("of") else m.end("head")].split())
        span = sentence[start:m.end("of") if m.group("of") else m.start("head")]
        if unrealised(sentence, m.start()):
            continue
        owner = owner_of(sentence, m.start("mods"))
        whose = possessor(sentence, m.start("mods")) if owner is None else ""
        if owner is None and not whose:
            continue  # "my son's budget": someone else's
        mods = ((owner or "") + " " + mods).strip()
        if _head(m.group("head")) in ("dose", "dosage") and any(r.key == f"dose|{mods}" for r in out):
            continue  # "my sertraline dose is 100 mg", read as a dose already
        out.append(Relation(whose, "number", clean_value(m.group("v")), "set",
                            with_front(f"{_head(m.group('head'))}|{mods}" + names_key(span, start),
                                       sentence, m.start("v")), False, "", phrase=phrase))
    return out


def _head(h: str) -> str:
    h = h.lower()
    return {"maximum": "max", "minimum": "min"}.get(h, h)


def bounds(sentence: str) -> list[Relation]:
    """Upper and lower bounds (see ``_QTY_BOUND``)."""
    out: list[Relation] = []
    for m in _QTY_BOUND.finditer(sentence):
        start = after_determiner(sentence, m.start("mods"), m.end("mods"))
        what = " ".join(sentence[start:m.end("mods")].split())
        noun = (m.group("what") or "").lower()
        if noun in STOP_MODS or noun in ("before", "after", "when", "and", "or", "by", "until"):
            noun = ""
        head = "min" if m.group("dir").lower() in _LOWER_BOUND else "max"
        phrase = " ".join(x for x in ("maximum" if head == "max" else "minimum", noun,
                                      f"for the {what}" if what else "") if x)
        out.append(Relation("", "number", clean_value(m.group("v")), "set",
                            with_front(f"{head}|{modifiers(what + ' ' + noun)}", sentence, m.start("v")),
                            False, "", phrase=phrase))
    for m in _QTY_SIZE.finditer(sentence):
        head = m.group("head").lower()
        if head in STOP_MODS or re.fullmatch(_QTY_HEADS, head) or re.search(
                rf"\b(?:{_QTY_HEADS})\s+(?:for|of|on|in)\s+$", sentence[:m.start()], re.I):
            continue  # "the limit (for the harbour) is 40 cm": a named quantity, read by _QTY
        what = " ".join(x for x in (m.group("mods").strip(), head) if x)
        out.append(Relation("", "number", clean_value(m.group("v")), "set",
                            with_front(f"size|{modifiers(what)}", sentence, m.start("v")),
                            False, "", phrase=f"{what} size"))
    for m in _QTY_AFTER.finditer(sentence):
        head = _head(m.group("head"))
        out.append(Relation("", "number", clean_value(m.group("v")), "set",
                            with_front(f"{head}|{modifiers(m.group('of'))}", sentence, m.start("v")), False, "",
                            phrase=f"{'maximum' if head == 'max' else 'minimum'} for the {m.group('of')}"))
    return out
