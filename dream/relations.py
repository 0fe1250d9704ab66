"""Attributes and relations stated in one sentence: who works where, who manages whom, where
someone lives, which project, which pet, which preference, which number or deadline.

A :class:`Relation` is (subject, attribute, value) with how it was said: ``op`` ``set`` (the
value holds from now on), ``end`` (the value stops holding: "I left X") or ``add`` (one more
value of a many-valued attribute: a second pet). The subject of a first-person statement is
the speaker. The attribute names the *meaning*, so different phrasings of the same change
compare: "I work at X", "my new job is at X", "I joined X" are all ``employer``; a newer
``set`` of the same (subject, attribute) supersedes the older value (see :mod:`.pages`).

Numbers and deadlines are keyed by their head noun and its modifiers ("alert threshold",
"audit deadline"): two statements share a key when the heads match and the modifiers of
one are among the other's (or one has none), so "the fall-risk score threshold is 45" and
"the fall-risk threshold is 40, not 45" are the same quantity, and "the CPU alert threshold"
and "the memory alert threshold" two. A name the quantity's phrase holds, or one the sentence
puts in front ("For the Harbour Survey the depth tolerance is …"), keys it too.

Nothing stated inside a condition, a supposition or a wish holds ("If I moved to Oslo …").

Pure regular expressions over the sentence: no model, reproducible.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace

from .channels import channels
from .formats import format_values

#: A name: capitalised words ("Tessellate Labs", "St Aldric Hospital", "AORC"), allowing
#: "of"/"the"/"for"/"&" inside ("Royal College of Nursing").
NAME = (r"(?:[A-ZÀ-ÖØ-Þ][\w'’\-]*|[A-Z]{2,})(?:\s+(?:(?:of|the|for|and|de|&|von|van|der|den|da|di|du|del|dos|le|ter)\s+)?"
        r"(?:(?!I['’][a-z])[A-ZÀ-ÖØ-Þ][\w'’\-]*|\d+))*")
_N = rf"(?P<v>(?-i:{NAME}))"
_THE = r"(?:the\s+)?"
_NOW = r"(?:now\s+|currently\s+|still\s+|also\s+|just\s+|officially\s+)?"
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
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
#: A date as said; a weekday before a day of a month ("friday 14 August") is part of it, so
#: the day, not the weekday, is the value (:func:`_deadlines` drops the weekday).
DATE = (rf"(?:(?:{_WEEKDAY},?\s+(?:the\s+)?)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:\s+\d{{4}})?"
        rf"|(?:{_WEEKDAY},?\s+)?(?:{_MONTHS})\s+\d{{1,2}}"
        rf"(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|(?:monday|tuesday|wednesday|"
        rf"thursday|friday|saturday|sunday)|end of (?:{_MONTHS}))")

_WEEKDAY_BEFORE = re.compile(rf"^{_WEEKDAY},?\s+(?:the\s+)?(?=\d|[a-z]+\s+\d)", re.I)

_PET = (r"dog|dogs|cat|cats|puppy|kitten|rabbit|bunny|hamster|parrot|bird|horse|pony|"
        r"tortoise|turtle|guinea pig|ferret|fish|goldfish|lizard|snake|beagle|collie|terrier|"
        r"labrador|poodle|retriever|spaniel|tabby|husky|dachshund|pug|bulldog|corgi")
_PET_WORDS = frozenset(_PET.split("|"))


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


def _clean_value(v: str) -> str:
    v = " ".join(v.split()).strip(" ,.;:!?'\"“”")
    return re.sub(r"['’]s$", "", v)


# (attr, regex, op, event, value type). Group ``v`` is the value, ``s`` (optional) a
# third-person subject; without ``s`` the subject is the speaker.
_FIRST: list[tuple[str, re.Pattern[str], str, bool, str]] = []
_THIRD: list[tuple[str, re.Pattern[str], str, bool, str]] = []


def _f(attr: str, rx: str, op: str = "set", event: bool = False, vtype: str = "") -> None:
    _FIRST.append((attr, re.compile(rx, re.I if not rx.startswith("(?-i)") else 0), op, event, vtype))


def _t(attr: str, rx: str, op: str = "set", event: bool = False, vtype: str = "") -> None:
    _THIRD.append((attr, re.compile(rx), op, event, vtype))


_I = r"\b(?:I|we)(?:['’]ve|\s+have)?\s+"
_IM = r"\b(?:I'm|I’m|I am|we're|we are)\s+"
_MY = r"\b(?:my|our)\s+"
_NEW = r"(?:new\s+|current\s+)?"
# employer
_f("employer", _I + _NOW + r"(?:work|am working|'m working|have been working|'ve been working|been working)\s+(?:at|for|with)\s+" + _THE + _N, vtype="organization")
_f("employer", _IM + r"(?:now\s+)?(?:at|with|employed (?:at|by))\s+" + _THE + _N + r"(?=\s+(?:now|as|since)|[.,;!]|$)", vtype="organization")
_f("employer", _MY + _NEW + r"(?:job|position|employer|workplace|role)\s+is\s+(?:at|with)\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", _MY + _NEW + r"employer\s+is\s+" + _THE + _N, vtype="organization")
# "my new company Sundera Freight use SAP", "my new employer, Halden Group, …"
_f("employer", _MY + r"new\s+(?:company|employer|firm|workplace)\s*,?\s+(?:is\s+)?" + _THE + _N, event=True, vtype="organization")
# "first week at St Columba's High done", "my first day at Orbital Foods"
_f("employer", r"(?:^|[.;!]\s+|\bmy\s+)(?:first|1st)\s+(?:day|week|month)\s+(?:at|with)\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", _I + _NOW + r"(?:joined|have joined|'ve joined|started at|started working (?:at|for)|got (?:a|the) (?:new )?job (?:at|with)|accepted (?:a|an|the) (?:new )?(?:offer|job|position|role|post|contract) (?:from|at|with))\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", _I + r"(?:left|quit|resigned from|have left|'ve left|no longer work (?:at|for))\s+" + _THE + _N, op="end", event=True, vtype="organization")
_f("employer", _IM + r"(?:leaving|no longer (?:at|with|working (?:at|for)))\s+" + _THE + _N, op="end", event=True, vtype="organization")
_f("employer", _MY + r"last\s+day\s+(?:at|with)\s+" + _THE + _N, op="end", event=True, vtype="organization")
# losing a job is its end as much as leaving it: "I was made redundant at X", "we got laid off
# from X", "I lost my job at X"
_f("employer", _I + r"(?:was|were|got|have\s+been|'ve\s+been|been|just\s+got)\s+(?:made\s+redundant|laid\s+off|let\s+go|fired|sacked)\s+(?:at|from|by)\s+" + _THE + _N, op="end", event=True, vtype="organization")
_f("employer", _I + r"(?:lost)\s+my\s+(?:job|position|role)\s+(?:at|with)\s+" + _THE + _N, op="end", event=True, vtype="organization")
_f("employer", _I + r"(?:quit|left|resigned from)\s+my\s+(?:job|position|role)\s+(?:at|with)\s+" + _THE + _N, op="end", event=True, vtype="organization")
_f("employer", _I + r"(?:got\s+hired|was\s+hired|have\s+been\s+hired)\s+(?:by|at)\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", _IM + r"(?:starting|start)\s+(?:a\s+new\s+job\s+)?at\s+" + _THE + _N, event=True, vtype="organization")
# "I resume at X on Monday" (West African English for starting a job), "starting at X on the
# 13th" with the subject left out, as chat does
_f("employer", _I + r"(?:will\s+)?(?:resume|resumed|start|started)\s+(?:work\s+|my\s+new\s+job\s+)?at\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", r"(?:^|[.;!]\s+)(?:starting|started|start)\s+(?:work\s+|a\s+new\s+job\s+)?at\s+" + _THE + _N, event=True, vtype="organization")
# "I've signed with X", "I'm Jonas Weber, backend developer at X" (no article after a name)
_f("employer", _I + r"(?:just\s+)?signed\s+(?:on\s+)?(?:with|a\s+contract\s+with)\s+" + _THE + _N, event=True, vtype="organization")
_f("employer", _IM + r"(?-i:[A-Z][\w\-]+)(?:\s+(?-i:[A-Z][\w\-]+)){0,2}\s*,\s*(?:an?\s+)?[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?\s+(?:at|for|with)\s+" + _THE + _N, vtype="organization")
# a chat self-introduction: "hey. darnell whitfield here, finish carpenter at X"
_f("employer", r"^(?:(?:hey|hi|hello|hiya)\s*[.,!]?\s+)?(?:[\w'’\-]+\s+){1,2}here\s*,\s*(?:an?\s+|the\s+)?[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,2}?\s+(?:at|for|with)\s+" + _THE + _N, vtype="organization")
# "I teach chemistry at X"
_f("employer", _I + _NOW + r"(?:teach|lecture|tutor|nurse)\s+(?:[a-z]+\s+){0,2}?(?:at|for)\s+" + _THE + _N, vtype="organization")
# "I handed in my notice at X", "I gave my notice to X"
_f("employer", _I + r"(?:handed\s+in|gave|given|turned\s+in|submitted|put\s+in)\s+(?:my\s+)?(?:notice|resignation)\s+(?:at|to|with)\s+" + _THE + _N, op="end", event=True, vtype="organization")
# "I'm a hydrographer at X", "I'm Tove Eriksen, a hydrographer at X"
_SELF = r"(?:(?-i:[A-Z][\w\-]+)(?:\s+(?-i:[A-Z][\w\-]+)){0,2}\s*,\s*)?"
_f("employer", _IM + _SELF + _NOW + r"an?\s+[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?\s+(?:at|for|with)\s+" + _THE + _N, vtype="organization")
#: Occupations a title ends in ("senior designer", "head of sales", "chief operating
#: officer"): a pattern that reads a title without a workplace beside it ("I'm a senior
#: designer now") takes only these, so "I'm a vegetarian now" or "a morning person" is no role.
_JOB_WORDS = frozenset("""
engineer designer developer manager director analyst scientist chef cook nurse doctor teacher
lecturer professor officer lead head consultant architect accountant lawyer solicitor barrister
paralegal editor writer reporter journalist producer coordinator administrator admin assistant
associate specialist technician tech researcher intern apprentice trainee supervisor foreman
forewoman welder electrician plumber carpenter joiner mechanic driver dispatcher pilot librarian
pharmacist therapist physiotherapist paramedic midwife surgeon dentist vet veterinarian
receptionist clerk cashier barista waiter waitress server bartender baker butcher farmer
gardener cleaner caretaker janitor planner strategist marketer salesperson representative rep
agent broker banker trader auditor inspector surveyor geologist biologist chemist physicist
statistician economist programmer tester owner founder co-founder partner executive president
vp ceo cto cfo coo cmo principal headteacher dean chair chairman chairwoman secretary treasurer
curator archivist translator interpreter tutor instructor trainer coach counsellor counselor
psychologist psychiatrist worker operator controller estimator buyer stylist photographer
illustrator animator artist musician hydrographer cartographer typesetter printer machinist
fitter labourer laborer steward stewardess attendant guard officer sergeant lieutenant captain
commander detective constable firefighter paramedic dietitian nutritionist optician optometrist
radiographer sonographer phlebotomist carer caregiver housekeeper concierge manager-in-training
fellow postdoc lecturer scholar chief sommelier pastry recruiter negotiator underwriter actuary
""".split())
_JOB_SUFFIX = re.compile(r"(?:ologist|ician|grapher|eer)$")


def is_job(title: str) -> bool:
    """Does ``title`` name an occupation (its last word, or the word before "of": "head of
    sales")?"""
    words = title.lower().split()
    if not words:
        return False
    heads = [words[-1]] + [words[k - 1] for k, w in enumerate(words) if w == "of" and k > 0]
    return any(h in _JOB_WORDS or _JOB_SUFFIX.search(h) for h in heads)


def _a_job(m: re.Match[str], v: str, op: str = "set") -> bool:
    """Does the title a match read (group ``j``, else its value) name an occupation, and
    more than a word too vague alone ("I'm the head of the queue"; a role that ended may be
    one word: "I stepped down as chair")?"""
    title = (m.groupdict().get("j") or v).strip().lower()
    return is_job(title) and (op == "end" or title not in _VAGUE_TITLES)


#: Patterns whose value must pass :func:`is_job` (the title in group ``j`` when there is one).
_JOB_ONLY: set[re.Pattern[str]] = set()
#: Employer patterns of a verb of moving ("gone to X", "left for X", "X poached me"): a job
#: only when X is an organisation (``detail`` "move", checked where pages are known).
_MOVES: set[re.Pattern[str]] = set()

# role (lower-case job title)
#: (never a participle that starts what follows: "a pharmacist based in Accra")
_ROLE = r"(?P<v>[a-z][a-z\-]+(?:\s+(?!(?:based|living|working|located)\b)[a-z][a-z\-]+){0,3}?)"
_f("role", _IM + _SELF + _NOW + r"(?:working\s+as\s+)?an?\s+" + _ROLE + r"\s+(?:at|for|with|in)\s+(?:the\s+)?[A-Z]")
_f("role", _I + _NOW + r"(?:work|am working|'m working|started|joined \S+(?: \S+)?)\s+as\s+an?\s+" + _ROLE + r"(?=[.,;!]|\s+(?:at|for|in|and|on|since)\b|$)")
_f("role", _I + r"(?:now\s+)?work\s+at\s+(?-i:" + NAME + r")\s+as\s+an?\s+" + _ROLE + r"(?=[.,;!]|\s+(?:at|for|in|and|on|since)\b|$)")
_f("role", _IM + r"now\s+(?:officially\s+)?an?\s+" + _ROLE + r"(?=[.,;!]|\s+(?:at|for|in|and|on|since)\b|$)")
_f("role", _MY + _NEW + r"(?:role|title|job title|position)\s+is\s+(?:now\s+)?(?:an?\s+)?" + _ROLE + r"(?=\s*[.,;!(]|\s+(?:at|for|in|and|on|since|so|now)\b|$)")
# "Since my promotion to ward manager I have to do the rotas"
_f("role", _MY + r"(?:recent\s+)?promotion\s+to\s+(?:an?\s+)?" + _ROLE + r"(?=\s*[.,;!(]|\s+(?:at|for|in|and|on|I|we|last|this|the|my|our|it|everything)\b|$)", event=True)
_f("role", _I + r"(?:was|have been|got|'ve been)\s+promoted\s+to\s+(?:an?\s+)?" + _ROLE + r"(?=[.,;!]|\s+(?:at|for|in|and|on|since|this|last|today|yesterday)\b|$)", event=True)
# "I'm a senior designer now", "As of this month I'm a staff engineer again" (not "I'm also a
# union rep now": one more role, not another one): only a title
# whose last word names an occupation (:func:`is_job`: "I'm a vegetarian now" is none)
_f("role", _IM + r"an?\s+" + _ROLE + r"\s+(?:now|again|these\s+days|nowadays|from\s+now\s+on)\b")
_JOB_ONLY.add(_FIRST[-1][1])
# chat leaves the subject out: "Got promoted to head chef last Friday!!"
_f("role", r"(?:^|[.;!]\s+)(?:just\s+|finally\s+)?(?:got|been|was)\s+promoted\s+to\s+(?:an?\s+)?" + _ROLE + r"(?=[.,;!]|\s+(?:at|for|in|and|on|since|this|last|today|yesterday)\b|$)", event=True)
# manager
_MANAGER = (r"(?:manager|boss|supervisor|line manager|team lead|lead|director|head of department|"
            r"foreman|forewoman|principal|head ?teacher|charge nurse|matron|PI)")
_f("manager", _MY + _NEW + _MANAGER + r"\s+(?:is|will be|is now)\s+(?:now\s+)?" + _N, vtype="person")
# "my foreman Gary Pelletier set the schedule", "my boss, Priya Nair, …"
_f("manager", _MY + _NEW + _MANAGER + r"\s*,?\s+(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))", vtype="person")
_f("manager", _I + _NOW + r"(?:report|am reporting|'m reporting)\s+(?:directly\s+)?to\s+" + _N, vtype="person")
_f("manager", _IM + _NOW + r"(?:reporting|going to report)\s+(?:directly\s+)?to\s+" + _N, vtype="person")
# "I've got a new line manager, Samuel Owusu", "we have a new boss: Dana Levi"
_f("manager", _I + r"(?:now\s+)?(?:got|have|have\s+got)\s+an?\s+new\s+" + _MANAGER + r"\s*[,:–—-]?\s+(?:called\s+|named\s+)?(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))", vtype="person")
_f("manager", r"(?P<v>(?-i:[A-Z][\w'’\-]*(?:\s+(?:de\s+|van\s+|von\s+)?[A-Z][\w'’\-]*)*))\s+(?:is|has become|became|will be)\s+(?:now\s+)?my\s+(?:new\s+)?(?:manager|boss|supervisor|line manager|team lead|PI)\b", vtype="person")
# partner and family: "my husband Tunde", "my wife, Ana"; the sentence usually says more
# ("my sister Lena lives in Boston"), so it stays on the timeline too (event)
_KIN = (r"husband|wife|partner|fianc[eé]e?|spouse|boyfriend|girlfriend|son|daughter|sister|brother|"
        r"mother|father|mum|mom|dad|grandmother|grandfather|cousin|aunt|uncle|niece|nephew")
_f("family", _MY + r"(?:late\s+|little\s+|older\s+|younger\s+|big\s+)?(?P<d>" + _KIN + r")\s*,?\s+(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))", op="add", event=True, vtype="person")
# project
_f("project", _IM + _NOW + r"(?:working on|leading|running|building|developing|on)\s+" + _THE + _N + r"(?=[.,;!]|\s+(?:now|project|team|as|since|from|with|for|at|in|until)\b|$)", vtype="project")
_f("project", r"\bfrom (?:today|now on|this week|monday)\s*,?\s*(?:I'm|I am|we're|we are)\s+(?:on|working on)\s+" + _THE + _N, event=True, vtype="project")
_f("project", _MY + _NEW + r"(?:main\s+|thesis\s+|current\s+|research\s+|side\s+)?project\s+is\s+" + _THE + _N, vtype="project")
_f("project", _I + r"(?:moved|switched|was moved|got moved)\s+(?:over\s+)?to\s+(?:the\s+)?" + _N + r"\s+project", event=True, vtype="project")
# home
_f("home", _I + _NOW + r"(?:live|am living|'m living|reside)\s+in\s+" + _N, vtype="place")
_f("home", _I + r"(?:have\s+|'ve\s+|just\s+|finally\s+)*(?:moved|relocated)\s+(?:back\s+)?to\s+" + _N, event=True, vtype="place")
_f("home", _MY + _NEW + r"(?:home|flat|apartment|house)\s+is\s+in\s+" + _N, vtype="place")
_f("home", _I + r"(?:have\s+|'ve\s+|just\s+)*moved\s+into\s+(?:a|an|our|my|the)\s+(?:new\s+)?(?:flat|house|apartment|place|home)\s+in\s+" + _N, event=True, vtype="place")
_f("home", _IM + _NOW + r"based\s+in\s+" + _N, vtype="place")
# pets: "my dog Max", "a cat named Pimenta", "two dogs, Biscuit and Juno"
_f("pet", _MY + r"(?:new\s+|little\s+|old\s+)?(?P<d>" + _PET + r")\s*,?\s+(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+))\b", op="add", vtype="pet")
_f("pet", r"\b(?:a|an|our|my)\s+(?:new\s+|little\s+)?(?P<d>" + _PET + r")\s+(?:named|called)\s+(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+))\b", op="add", vtype="pet")
_f("pet", r"\b(?:I|we)\s+(?:have|own|adopted|got)\s+(?:\w+\s+)?(?P<d>" + _PET + r")\s*,\s*(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:,?\s+(?:and\s+)?[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)*))", op="add", vtype="pet")
_f("pet", r"\b(?:his|her|its|their)\s+name\s+is\s+(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+))\b(?=.*\b(?P<d>" + _PET + r")\b)", op="add", vtype="pet")
_f("pet", r"(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)),\s+(?:my|our)\s+(?:[\w\-]+\s+){0,2}(?P<d>" + _PET + r")\b", op="add", vtype="pet")
# people around the speaker
_f("friend", _MY + r"(?:best\s+|old\s+|close\s+)?friend\s*,?\s+(?-i:(?P<v>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:\s+[A-ZÀ-ÖØ-Þ][\w\-]+)?))", op="add", vtype="person")
_f("contact", _MY + r"(?:main\s+)?contact\s+(?:there|at\s+(?:the\s+)?(?P<k>(?-i:" + NAME + r")))\s+is\s+" + _N, vtype="person")
# "my contact at the council is X", "the council contact for the park volunteers is X";
# "X is no longer my contact". Keyed by where or what the contact is for ("council",
# "clinic"): a contact at the council and one at the clinic are two people, not a change.
_f("contact", _MY + r"(?:main\s+)?contact\s+(?:at|in|with)\s+(?:the\s+)?(?P<k>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+is\s+(?:now\s+)?" + _N, vtype="person")
_f("contact", r"\b(?:the|my|our)\s+(?P<k>[a-z][\w\-]*)\s+contact\s+(?:for\s+[\w\- ]{1,40}?\s+)?is\s+(?:now\s+)?" + _N, vtype="person")
_f("contact", r"(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))\s+is\s+no\s+longer\s+(?:my|our)\s+contact\b", op="end", vtype="person")
# preferences: "I prefer X (over Y)", "I now prefer X, not Y", "my favourite X is Y"
# "I prefer R for the statistics": the topic after "for" keys the preference
_f("preference", _I + _NOW + r"(?:really\s+|actually\s+)?(?:prefer|would rather use|like to use)\s+(?P<v>(?-i:[A-Z][\w\-+#]*|[a-z][\w\-]*))\s+for\s+(?:the\s+|my\s+|our\s+)?(?P<k>[a-z][\w\- ]{1,40}?)(?=\s+(?:now|because|these days)\b|[.,;!]|$)")
_f("preference", _I + _NOW + r"(?:really\s+|actually\s+)?(?:prefer|would rather have|like to have|like to get|like to receive|want to get)\s+(?:the\s+)?(?P<v>(?-i:[a-z][\w\-]*|[A-Z]{2,6})(?:[\w\- ]{0,55}?))(?=\s+(?:over|to|rather than|instead of|now|for|because|from now on|going forward|from today|in future|,|\.)|[.,;!]|$)")
# a standing request for how things come, in a form that is no file format (those are
# ``format``): "Please send the monthly reports as Word documents" is a preference of the
# monthly reports, as "I prefer the monthly reports as PDF" is
_f("preference", r"(?:^|[.;!]\s+)(?:please\s+|always\s+|from now on\s*,?\s+)*(?:send|email|deliver|share|give)\s+(?:me\s+|us\s+)?(?:the\s+|all\s+|my\s+|our\s+)(?P<v>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}\s+as\s+(?:an?\s+)?(?-i:(?![A-Z]{2,5}\b)[A-Z][a-z]+\s+(?:documents?|docs?|files?|sheets?|spreadsheets?)|(?:paper|printed|hard)\s+cop(?:y|ies)|printouts?))(?=\s*(?:[.,;!]|$)|\s+(?:please|from now on|going forward)\b)")
# "I'd rather mark scripts in the evening, not in the morning"; what one likes to receive and
# how: "I like getting invoices by email" (a channel is required: "I love getting lost in
# fantasy stories" is no preference of this kind)
_f("preference", r"\b(?:I|we)(?:['’]d|\s+would)\s+(?:much\s+|now\s+)?rather\s+(?:(?P<obj>have|get|use)\s+)?(?P<v>[a-z][\w\-]*(?:[\w\- ]{0,55}?))(?=\s+(?:than|over|instead of|because|now)\b|[.,;!]|$)")
_f("preference", _I + _NOW + r"(?:really\s+)?(?:like|prefer)\s+(?:getting|receiving)\s+(?P<v>(?-i:(?!(?:lost|stuck|caught|carried|them|it|up|out|into|away|back)\b)[a-z][\w\-]*(?<!ed)|[A-Z]{2,6})(?:[\w\- ]{0,40}?)\s+(?:by|via|over|through|on|as)\s+(?:an?\s+)?[\w\-]+)(?=\s+(?:over|rather than|instead of|now|because|so|,|\.)|[.,;!]|$)")
# "Code reviews in the afternoon work better for me now, not in the morning"
_f("preference", r"(?:^|[.;:!]\s+)(?P<v>[\w][\w\- ]{2,50}?)\s+(?:work|works|suit|suits)\s+(?:much\s+|a\s+lot\s+)?better\s+for\s+(?:me|us)\b")
# a standing instruction of the same kind: "from now on just text me the supplier invoices"
_f("preference", r"\b(?:from now on|going forward|from today|in future)\s*,?\s*(?:please\s+|just\s+)*(?P<how>text|email|e-mail|call|phone|message|whatsapp|slack|post)\s+me\s+(?:the\s+|all\s+|any\s+|my\s+)?(?P<v>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,3}?)(?=[.,;!]|\s+(?:instead|from now|please|too)\b|$)")
# what the speaker habitually has, and what they went off or took up instead: "I always have
# Earl Grey when I write letters", "I've gone off Earl Grey", "It's rooibos for me these days"
# (a name only when one follows the verb directly and a clause or the sentence ends there:
# "I always have Callum over" is no preference)
_f("preference", _I + r"(?:always|usually|normally|generally)\s+(?:have|drink|take|order)\s+(?-i:(?P<v>"
   + NAME + r"))(?=\s+(?:when|whenever|before|after|while)\b|[.,;!]|$)")
# the same in lower case, when a time of day or an occasion follows ("I always have green tea
# in the afternoon"): "I always have trouble sleeping" says no such thing
_f("preference", _I + r"(?:always|usually|normally|generally)\s+(?:have|drink|take|order)\s+(?-i:(?P<v>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?))"
   r"(?=\s+(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+(?:night|lunch|breakfast|work)|with\s+(?:breakfast|lunch|dinner)|after\s+(?:lunch|dinner|work)|before\s+(?:bed|work))\b)")
_f("preference", r"\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:completely\s+|totally\s+|rather\s+|a\s+bit\s+)?gone\s+off\s+"
   r"(?P<v>(?-i:" + NAME + r")|[a-z][\w\-]*(?:\s+[a-z][\w\-]*)??)(?=\s*(?:[.,;!]|$)|\s+(?:to be honest|lately|recently|now)\b)",
   op="end")
_f("preference", r"\bit['’]s\s+(?:all\s+|just\s+)?(?P<v>(?-i:" + NAME + r")|[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+for\s+me\s+"
   r"(?:these\s+days|nowadays|now)\b")
_f("favorite", _MY + r"(?:new\s+)?fav(?:ou?rite)\s+(?P<k>[a-z][a-z ]{1,30}?)\s+(?:is|are)\s+(?:now\s+)?(?P<v>[\w'’ \-]{2,40}?)(?=[.,;!]|\s+(?:now|because)\b|$)")
# formats and tools a person wants: "export charts as SVG", "send it as a PDF"
#: File formats by name: "Charts should be SVG from now on" (not "should be OK").
_FILE_FORMATS = (r"PDF|PNG|SVG|JPE?G|GIF|TIFF?|CSV|TSV|XLSX?|DOCX?|PPTX?|HTML|TXT|EPS|WEBP|JSON|XML|ODT|ODS|RTF|"
                 r"MP3|MP4|WAV|FLAC|EPUB|HEIC|Markdown|Word|Excel")
_f("format", r"(?:^|[.;!:,]\s+|\b(?:the|all|my|our|future)\s+)(?P<k>[a-z]+?)s?\s+(?:should|must|need\s+to|have\s+to|can|will|are\s+to)\s+(?:always\s+)?be\s+(?:in\s+|saved\s+as\s+|exported\s+as\s+|sent\s+as\s+)?(?:an?\s+)?(?P<v>(?-i:" + _FILE_FORMATS + r"))\b")
_f("format", r"\b(?:export|send|save|share|deliver|submit)\s+(?:the\s+|all\s+|my\s+|our\s+|future\s+)?(?:[\w\-]+\s+){0,2}?(?P<k>[a-z]+?)s?\s+(?:files?\s+)?as\s+(?:an?\s+)?(?P<v>[A-Z]{2,5}|[A-Za-z]+ files)\b")

# third person: "Hana Ito works at the Royal College of Nursing", "Elena Sokolova leads Project Lantern"
_S = rf"(?P<s>(?-i:{NAME}))"
_t("employer", _S + r"\s+(?:now\s+|still\s+)?(?:works|is working)\s+(?:at|for)\s+" + _THE + _N, vtype="organization")
_t("employer", _S + r"\s+(?:joined|moved to|started at)\s+" + _THE + _N, event=True, vtype="organization")
_t("employer", _S + r"\s+(?:left|quit)\s+" + _THE + _N, op="end", event=True, vtype="organization")
_t("employer", _S + r"(?:['’]s|\s+is)\s+(?:now\s+)?(?P<d>with)\s+" + _THE + _N + r"(?=\s+(?:now|these\s+days)\b)", vtype="organization")
_t("manager", _S + r"['’]s\s+(?:new\s+)?(?:manager|boss|supervisor|line manager)\s+is\s+(?:now\s+)?" + _N, vtype="person")
_t("employer", _S + r"['’]s\s+(?:new\s+)?(?:job|employer|workplace)\s+is\s+(?:at\s+|with\s+)?" + _THE + _N, vtype="organization")
_t("home", _S + r"['’]s\s+(?:new\s+)?(?:home|flat|apartment|house)\s+is\s+in\s+" + _N, vtype="place")
# who leads a project is the project's attribute ("lead"): a handover replaces the lead,
# and one person leading two projects replaces nothing. Group ``s`` is the project here.
_N_P = rf"(?P<s>(?-i:{NAME}))"
_V_P = rf"(?P<v>(?-i:{NAME}))"
_t("lead", _V_P + r"\s+(?:now\s+)?(?:leads|runs|heads|manages|is leading|is running|will lead|will be leading|agreed to lead|has taken over)\s+" + _THE + _N_P, vtype="person")
_t("lead", r"\b(?:For|On)\s+(?:the\s+)?" + _N_P + r"\s*,\s*" + _V_P + r"\s+is\s+(?:now\s+)?the\s+lead\b", vtype="person")
_t("lead", _V_P + r"\s+(?:is|has become|became)\s+(?:now\s+)?the\s+(?:new\s+)?lead\s+(?:of|on|for)\s+" + _THE + _N_P, vtype="person")
_t("lead", _V_P + r"\s+(?:took|has taken|is taking)\s+over\s+(?:the\s+lead\s+(?:of|on|for)\s+)?" + _THE + _N_P + r"\s+from\s+(?-i:" + NAME + r")", event=True, vtype="person")
_t("lead", _V_P + r"\s+(?:took|has taken|is taking)\s+over\s+the\s+lead\s+(?:of|on|for)\s+" + _THE + _N_P, event=True, vtype="person")
# "Change on P: X handed the lead over to Y" (the project named before the colon, or in
# "the lead of P")
_t("lead", r"(?:\b(?:[Oo]n|[Ff]or|of|about)\s+(?:the\s+)?" + _N_P + r"\s*[:,;]\s*(?-i:" + NAME + r")|(?-i:" + NAME + r"))\s+"
   r"(?:has\s+)?(?:handed|passed|gave|has given|handed over|passed on)\s+(?:over\s+|on\s+)?the\s+lead(?:\s+(?:of|on|for)\s+(?:the\s+)?(?P<s2>(?-i:" + NAME + r")))?\s+(?:over\s+|on\s+)?to\s+" + _V_P, event=True, vtype="person")
# a person's job: "Aiko Mori is a program officer at Kobe City Digital Office" names the
# employer as well as the role; "she moved from A to B as program officer"; "X left A and
# is now a designer at B"
_JOB = r"[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?"
_t("employer", _S + r"\s+is\s+(?:now\s+)?(?:an?|the)\s+" + _JOB + r"\s+(?:at|for|with)\s+" + _THE + _N + r"(?=\s*(?:[.,;!]|$|\s+(?:now|since|from|as|in|and|on)\b))", vtype="organization")
_t("home", _S + r"\s+(?:has\s+)?moved\s+from\s+(?:the\s+)?(?-i:" + NAME + r")\s+to\s+" + _THE + _N, event=True, vtype="place")
_t("role", _S + r"\s+(?:has\s+)?(?:moved|switched|went|gone|joined|started)\b[^.;]*?\s+(?:at|to)\s+(?:the\s+)?(?-i:" + NAME + r")\s*,?\s+as\s+(?:an?\s+|the\s+)?(?P<v>" + _JOB + r")(?=[.,;!]|\s+(?:on|since|from|in|at|now)\b|$)", event=True)
_t("role", _S + r"\s+(?:now\s+)?works\s+(?:at|for)\s+(?:the\s+)?(?-i:" + NAME + r")\s+as\s+(?:an?\s+|the\s+)?(?P<v>" + _JOB + r")(?=[.,;!]|\s+(?:on|since|from|in|now)\b|$)")
_t("role", _S + r"\s+(?:left|quit)\s+[^.;]*?\s+and\s+is\s+now\s+(?:an?|the)\s+(?P<v>" + _JOB + r")\s+(?:at|for|with)\s+[A-Z]", event=True)
_t("employer", _S + r"\s+(?:left|quit)\s+[^.;]*?\s+and\s+(?:is\s+now|now\s+works)\s+(?:an?\s+" + _JOB + r"\s+)?(?:at|for|with)\s+" + _THE + _N, event=True, vtype="organization")
_t("home", _S + r"\s+(?:now\s+)?lives\s+in\s+" + _N, vtype="place")
_t("home", _S + r"\s+(?:has\s+)?moved\s+to\s+" + _N, event=True, vtype="place")
_t("role", _S + r"\s+is\s+(?:now\s+)?(?:an?|the)\s+(?P<v>[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?)\s+(?:at|of|for|in)\s+[A-Z]")
_t("species", _S + r"\s+is\s+(?:an?\s+)?(?:\w+\s+)?(?P<d>" + _PET + r")\b", vtype="pet")
# a title without an article ("Lucia Ferreira is head of sales at X"), or one someone became
# ("X became chief operating officer at Y", "X was promoted to head chef"): an occupation only
_BECAME = (r"(?:is\s+(?:now\s+)?(?!an?\s|the\s)|became\s+|has\s+become\s+|(?:was|got|has\s+been)\s+(?:promoted\s+to|made|named|appointed)\s+)")
_t("role", _S + r"\s+" + _BECAME + r"(?:an?\s+|the\s+)?(?P<v>" + _JOB + r")\s+(?:at|of|for|with|in)\s+[A-Z]", event=True)
_JOB_ONLY.add(_THIRD[-1][1])
_t("role", _S + r"\s+(?:was|got|has\s+been)\s+promoted\s+to\s+(?:an?\s+|the\s+)?(?P<v>" + _JOB + r")(?=[.,;!]|\s+(?:on|since|from|in|at|last|this|today|yesterday)\b|$)", event=True)
_JOB_ONLY.add(_THIRD[-1][1])
_t("employer", _S + r"\s+" + _BECAME + r"(?:an?\s+|the\s+)?" + _JOB + r"\s+(?:at|for|with)\s+" + _THE + _N + r"(?=\s*(?:[.,;!]|$|\s+(?:now|since|from|as|in|and|on)\b))", vtype="organization")
# an introduction without a verb: "Bjorn Halvorsen, welder at Skagen Shipyard." (at the
# sentence's start, after a greeting at most: the name and what they do at where)
_INTRO = r"^(?i:(?:hi|hey|hello|hiya)\s*[.,!]?\s+)?(?i:(?:this\s+is|it['’]s)\s+)?(?!I\b|I['’])" + _S + r"\s*[,–—-]\s*(?:an?\s+|the\s+)?"
_t("employer", _INTRO + _JOB + r"\s+(?:at|for|with)\s+" + _THE + _N + r"(?=\s*(?:[.,;!]|$))", vtype="organization")
_t("role", _INTRO + r"(?P<v>" + _JOB + r")\s+(?:at|for|with)\s+(?:the\s+)?[A-Z]")
_JOB_ONLY.add(_THIRD[-1][1])
# "The lead on the Onboarding Revamp is Chidi Okeke"
_t("lead", r"\b(?:[Tt]he)\s+(?:new\s+)?(?:lead|owner|project\s+lead)\s+(?:on|of|for)\s+(?:the\s+)?" + _N_P + r"\s+is\s+(?:now\s+)?" + _V_P, vtype="person")
# the speaker leads it: "I'm the lead on the Onboarding Revamp now", "I took over the
# Billing Rewrite from Ravi" (the value is the speaker, :data:`SELF`)
_t("lead", r"\b(?:I['’]m|I\s+am)\s+(?:now\s+)?the\s+(?:new\s+)?(?:lead|owner)\s+(?:on|of|for)\s+(?:the\s+)?" + _N_P + r"(?P<self>)", vtype="person")
_t("lead", r"\bI\s+(?:have\s+|['’]ve\s+)?(?:took|taken)\s+over\s+(?:the\s+lead\s+(?:of|on|for)\s+)?(?:the\s+)?" + _N_P + r"\s+from\s+(?-i:" + NAME + r")(?P<self>)", event=True, vtype="person")

# ---- change of state by verb class ---------------------------------------------------
# The rules above name a slot by its wording; these read it by what the words do: a title
# that names an occupation (:func:`is_job`) wherever a person is said to be it, an
# organisation someone went to by any verb of moving (the value must be an organisation:
# ``detail`` "move", checked by the page layer), a role or job that ended, a project or
# lead handed on, a home one is based or living in. Each was written against sentences of
# other wordings than the labelled sets' (tests/dream/test_dream_supersession_rules.py).

#: A title as said, "of" a field included ("head of design"), never a participle that
#: starts what follows it ("a pharmacist based in Accra").
_NOT_TITLE = (r"(?!(?:based|living|working|located|from|no|not|never|also|still|just|going|leaving|done|back|off|on|in|"
              r"at|now|so|very|really|sure|afraid|glad|happy|sorry|retiring|joining|becoming|starting|stepping|"
              r"moving|getting|being|as|to|by|with|and|or|but|the|my|our)\b)")
_TITLE = (r"(?:(?:new|current)\s+)?(?P<v>" + _NOT_TITLE + r"[a-z][a-z\-]+(?:\s+" + _NOT_TITLE + r"[a-z][a-z\-]+){0,3}?"
          r"(?:\s+of\s+(?!(?:the|a|an|my|our|his|her|their)\b)[a-z][a-z\-]+)?)")
#: What may follow a title: the clause's end, a workplace, a time.
_AFTER_TITLE = (r"(?=\s*(?:[.,;!:)]|$)|\s+(?:at|for|with|in|on|of|now|again|since|from|these|nowadays|effective|as\s+of|"
                r"based|living|working|last|this|yesterday|today|earlier|after|before|when|because|and|but|so)\b)")
#: Titles too vague alone to be anyone's job ("I'm the head of the queue", "I'm the lead").
_VAGUE_TITLES = frozenset("head lead chief owner partner member principal chair fellow associate rep agent".split())
# a self-introduction at a sentence's start, the name in lower case as chat writes it
# ("ravi sethi, support engineer", "nadia el-amin. data engineer at X", "hiya im jess tandy,
# barista at X"): the speaker's job (capitalised names are read as third person, _INTRO)
_SELF_INTRO = (r"^(?:(?:hi|hey|hello|hiya|morning|evening)\s*[.,!]*\s+)?(?:(?:i['’]m|im|i\s+am|this\s+is|it['’]s)\s+)?"
               r"(?!(?:my|our|his|her|their|your|the|a|an|ok|okay|so|and|but|thanks|thank|yes|no|well|sorry|sure)\b)"
               r"(?-i:[a-z][\w'’\-]+(?:\s+[a-z][\w'’\-]+){0,2})(?:\s+here)?\s*[,.–—:-]\s*(?:(?:i['’]m|im)\s+)?(?:an?\s+|the\s+)?")
_f("role", _SELF_INTRO + _TITLE + _AFTER_TITLE)
_JOB_ONLY.add(_FIRST[-1][1])
_f("employer", _SELF_INTRO + r"(?P<j>[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,3}?)\s+(?:at|for|with)\s+" + _THE + _N, vtype="organization")
_JOB_ONLY.add(_FIRST[-1][1])
# the speaker is a title, with an article or without ("I'm deputy head at X", "I'm now acting
# headteacher", "Since the reorg I'm the platform architect", "I'm a staff nurse on the
# cardiac ward"); "also" adds a role rather than replacing one, so it is left out
_f("role", _IM + _SELF + r"(?:now\s+|currently\s+|officially\s+)?(?:working\s+as\s+)?(?:an?\s+|the\s+)?" + _TITLE + _AFTER_TITLE)
_JOB_ONLY.add(_FIRST[-1][1])
# a role that ended: "I stepped down as treasurer", "I'm no longer release manager", "I'm not
# the team lead any more", "I retired as head of sales"
_f("role", _I + r"(?:have\s+|'ve\s+|just\s+|finally\s+)*(?:stepped\s+down|resigned|retired|stood\s+down|quit)\s+as\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, op="end", event=True)
_JOB_ONLY.add(_FIRST[-1][1])
_f("role", _IM + r"no\s+longer\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, op="end", event=True)
_JOB_ONLY.add(_FIRST[-1][1])
_f("role", _IM + r"not\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + r"\s+(?:any\s*more|now)\b", op="end", event=True)
_JOB_ONLY.add(_FIRST[-1][1])
_f("role", _I + r"(?:was|were|have\s+been|'ve\s+been|been|got|just\s+got|finally\s+got)\s+(?:made|named|appointed)\s+(?:an?\s+|the\s+)?" + _TITLE + _AFTER_TITLE, event=True)
_JOB_ONLY.add(_FIRST[-1][1])
# promoted to is a title by the verb ("ward sister", "staff sergeant"), whatever its words
_f("role", _I + r"(?:was|were|have\s+been|'ve\s+been|been|got|just\s+got|finally\s+got)\s+(?:promoted|bumped\s+up)\s+to\s+(?:an?\s+|the\s+)?" + _TITLE + _AFTER_TITLE, event=True)
# working somewhere, in every tense and as contractor ("I'm contracting at X", "workin at X
# since last wk" with the subject left out, as chat does)
_f("employer", _IM + _NOW + r"(?:contracting|freelancing|consulting|temping|interning|working|employed)\s+(?:at|for|with|by)\s+" + _THE + _N, vtype="organization")
_f("employer", r"(?:^|[.;!:]\s+)(?:now\s+|currently\s+)?(?:working|workin['’]?|employed)\s+(?:at|for)\s+" + _THE + _N + r"(?=\s+(?:now|since|these\s+days|from)\b|\s*[.,;!]|$)", vtype="organization")
# a job that ended: "my contract at X ended in May", "my placement with X is over"
_f("employer", _MY + r"(?:contract|job|position|role|placement|secondment|internship|time)\s+(?:at|with)\s+" + _THE + _N + r"\s+(?:has\s+|had\s+)?(?:ended|finished|ends|is\s+over|was\s+over|came\s+to\s+an\s+end|was\s+terminated|wasn['’]t\s+renewed)", op="end", event=True, vtype="organization")
# moving to an organisation by any verb of moving ("I moved to X", "I've gone over to X",
# "left A for X", "switched to X"): a job only when X is an organisation (detail "move")
_f("employer", _I + r"(?:just\s+|finally\s+)?(?:moved|gone|went|switched|jumped\s+ship|defected)\s+(?:over\s+)?to\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_FIRST[-1][1])
_f("employer", r"(?:\b(?:I|we)(?:['’]ve|\s+have)?\s+|(?:^|[.;!:]\s+)(?:finally\s+|just\s+)?)left\s+(?:[\w&'’\- ]{1,40}?\s+)?for\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_FIRST[-1][1])
# the organisation as the one acting: "Threadline poached me", "X hired me", "X took me on"
_f("employer", r"(?:^|[.;!:,]\s+|\bso\s+)(?P<v>(?-i:" + NAME + r"))\s+(?:have\s+|has\s+|just\s+|finally\s+)?(?:poached|hired|recruited|headhunted|took\s+on|signed)\s+me\b", event=True, vtype="organization")
_MOVES.add(_FIRST[-1][1])
# someone else moving: "X has gone to Y", "X left for Y", "X was poached by Y", "X signed with Y"
_t("employer", _S + r"\s+(?:has\s+|have\s+|just\s+|finally\s+)*(?:gone|went|moved|switched|jumped\s+ship)\s+(?:over\s+)?to\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_THIRD[-1][1])
_t("employer", _S + r"\s+(?:has\s+|just\s+)*left\s+(?:[\w&'’\- ]{1,40}?\s+)?for\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_THIRD[-1][1])
_t("employer", _S + r"\s+(?:has\s+been|was|got|has|just\s+got)\s+(?:poached|hired|recruited|headhunted|snapped\s+up)\s+by\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_THIRD[-1][1])
_t("employer", _S + r"\s+(?:has\s+|just\s+)*signed\s+(?:on\s+)?with\s+" + _THE + _N, event=True, vtype="organization")
_MOVES.add(_THIRD[-1][1])
# someone else's title, with a phrase between name and verb ("Chloe Abbott on my team is a
# junior designer", "Omar from accounts is now the finance lead")
_BETWEEN = r"(?:\s+(?:on|in|from|at)\s+(?:my|our|the|his|her|their)\s+[a-z]+|\s+from\s+[a-z]+)?"
_t("role", _S + _BETWEEN + r"\s+is\s+(?:now\s+)?(?:an?\s+|the\s+)" + _TITLE + r"(?=\s*(?:[.,;!]|$)|\s+(?:now|since|these\s+days|again)\b)")
_JOB_ONLY.add(_THIRD[-1][1])
_t("role", _S + r"\s+(?:has\s+)?(?:stepped\s+down|resigned|retired|stood\s+down)\s+as\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, op="end", event=True)
_JOB_ONLY.add(_THIRD[-1][1])
_t("role", _S + r"\s+is\s+no\s+longer\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, op="end", event=True)
_JOB_ONLY.add(_THIRD[-1][1])
# an introduction of title alone ("Tobias Wirth, product manager."), the speaker's or another's
_t("role", _INTRO + r"(?P<v>" + _JOB + r")(?=\s*(?:[.;!]|$)|\s*,\s*(?:living|based|mostly|working)\b)")
_JOB_ONLY.add(_THIRD[-1][1])
# someone else's manager: "Pete Lindqvist on my team reports to X", "X now reports to Y"
_t("manager", _S + _BETWEEN + r"\s+(?:now\s+|still\s+)?(?:reports|is\s+reporting)\s+(?:directly\s+)?to\s+" + _N, vtype="person")
# the speaker's, as a clause of a sentence about them ("I started at X on Monday, reporting to Y")
_f("manager", r"^(?:I|we)\b[^.;]*?,\s+(?:now\s+)?reporting\s+(?:directly\s+)?to\s+" + _N, vtype="person")
# a project handed on or run by someone, in the passive and the active: "P is led by X",
# "X handed P over to Y", "X owns P", "owner of P: X", "P owner -> X", "… stepping back from
# P; Y runs it"
_t("lead", _N_P + r"\s+(?:is|was)\s+(?:now\s+)?(?:led|run|owned|headed|managed|coordinated)\s+by\s+" + _V_P, vtype="person")
_t("lead", _V_P + r"\s+(?:now\s+)?(?:owns|coordinates)\s+" + _THE + _N_P, vtype="person")
_t("lead", r"(?-i:" + NAME + r")\s+(?:has\s+)?(?:handed|passed)\s+(?:over\s+|on\s+)?(?:the\s+)?" + _N_P + r"\s+(?:over\s+|on\s+)?to\s+" + _V_P, event=True, vtype="person")
_t("lead", _V_P + r"\s+(?:took|has\s+taken|is\s+taking|takes)\s+over\s+(?:the\s+)?" + _N_P + r"(?=\s*(?:[.,;!]|$)|\s+(?:now|this|last|on|since|as|from)\b)", event=True, vtype="person")
_t("lead", r"\b(?i:lead|owner|project\s+lead|tech\s+lead|product\s+owner)\s+(?:of|on|for)\s+(?:the\s+)?" + _N_P + r"\s*(?::|=|->|→|=>|–|—)\s*(?:now\s+)?" + _V_P, vtype="person")
_t("lead", _N_P + r"\s+(?i:lead|owner|project\s+lead|tech\s+lead)\s*(?::|=|->|→|=>|is\s+now|is)\s*(?:now\s+)?" + _V_P, vtype="person")
_t("lead", r"\b(?i:from|off|on|of|leaving|left|quitting)\s+(?:the\s+)?" + _N_P + r"\b[^.;]{0,60}?[;,]\s*(?:and\s+|so\s+)?" + _V_P + r"\s+(?:now\s+)?(?:runs|leads|owns|heads|is\s+running|is\s+leading|has)\s+it\b", vtype="person")
# a home one is based or living in ("I'm a pharmacist based in Accra", "Pablo Herrera,
# product designer, living in Valencia"), moved to with the subject left out ("Big month:
# moved to Madrid")
_f("home", _IM + r"(?:an?\s+[a-z][a-z\- ]{1,40}?\s+)?(?:based|living)\s+(?:in|out\s+of)\s+" + _N, vtype="place")
_f("home", _SELF_INTRO + r"(?:[a-z][\w\- ]{1,40}?,\s*)?(?:based|living)\s+in\s+" + _N, vtype="place")
_t("home", _INTRO + r"(?:[a-z][\w\- ]{1,40}?,\s*)?(?:based|living)\s+in\s+" + _N, vtype="place")
_f("home", r"(?:^|[.;!:]\s+)(?:just\s+|finally\s+|we\s+|I\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+" + _N + r"(?=\s*(?:[.,;!]|$)|\s+(?:on|in|last|this|and|with|from)\b)", event=True, vtype="place")
# a project one was moved onto: "they moved me off A onto B", "I've been put on B"
_f("project", r"\b(?:moved|put|switched|reassigned|transferred|shifted|pulled)\s+me\s+(?:off\s+(?:the\s+)?(?-i:" + NAME + r")\s+)?(?:on|onto|on\s+to|over\s+to)\s+(?:the\s+)?" + _N, event=True, vtype="project")
_f("project", _I + r"(?:was|have\s+been|'ve\s+been|been|got)\s+(?:moved|put|switched|reassigned|transferred|shifted)\s+(?:off\s+(?:the\s+)?(?-i:" + NAME + r")\s+)?(?:onto|on\s+to|over\s+to)\s+(?:the\s+)?" + _N, event=True, vtype="project")
# a contact someone assigned: "Brookside have switched me to Callum Reid as my contact"
_f("contact", r"(?-i:(?P<k>" + NAME + r"))\s+(?:have\s+|has\s+)?(?:switched|moved|assigned|reassigned|passed|handed)\s+me\s+(?:over\s+)?to\s+" + _N + r"\s+as\s+(?:my|our)\s+(?:new\s+)?(?:main\s+)?contact\b", vtype="person")
_f("contact", _N + r"\s+is\s+(?:now\s+)?(?:my|our)\s+(?:new\s+)?(?:main\s+)?contact\s+(?:at|with|in)\s+(?:the\s+)?(?P<k>(?-i:" + NAME + r"))", vtype="person")

# more of the same classes, in the wordings they are also said in
# a role taken or left: "I've taken over as head of sales", "I became a team lead", "I'm
# retiring as head teacher", "Promoted to staff engineer last week" (no subject)
_f("role", _I + r"(?:have\s+|'ve\s+|just\s+)*(?:taken|took)\s+over\s+as\s+(?:the\s+|an?\s+)?" + _TITLE + _AFTER_TITLE, event=True)
_f("role", _I + r"(?:have\s+|'ve\s+|just\s+)*(?:became|become)\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, event=True)
_JOB_ONLY.add(_FIRST[-1][1])
_f("role", _IM + r"(?:retiring|stepping\s+down|resigning|standing\s+down)\s+as\s+(?:the\s+|an?\s+|our\s+)?" + _TITLE + _AFTER_TITLE, op="end", event=True)
_JOB_ONLY.add(_FIRST[-1][1])
_f("role", r"(?:^|[.;!:]\s+)(?:just\s+|finally\s+)?(?:got\s+|been\s+|was\s+)?promoted\s+to\s+(?:an?\s+|the\s+)?" + _TITLE + _AFTER_TITLE, event=True)
_f("employer", r"(?:^|[.;!:]\s+)(?:just\s+|finally\s+|recently\s+)?joined\s+" + _THE + _N, event=True, vtype="organization")
# someone else's title after "our/my/the new" or "became" at a clause's end ("X is our new
# finance director", "X became head of research")
_t("role", _S + r"\s+(?:is\s+(?:now\s+)?(?:(?:our|their)\s+(?:new\s+)?(?!(?:[a-z]+\s+)?(?:manager|boss|supervisor|lead|contact)\b)|(?:the|an?)\s+(?:new\s+)?)|(?:has\s+)?become\s+(?:our\s+|the\s+|an?\s+)?(?:new\s+)?|became\s+(?:our\s+|the\s+|an?\s+)?(?:new\s+)?)" + _TITLE + r"(?=\s*(?:[.,;!]|$)|\s+(?:now|since|from|in|last|this|on)\b)", event=True)
_JOB_ONLY.add(_THIRD[-1][1])
# one person replacing another: "Ruth Obi replaced Tom Hale as my manager", "… as lead on P"
_f("manager", _N + r"\s+(?:has\s+)?(?:replaced|took\s+over\s+from|succeeded)\s+(?-i:" + NAME + r")\s+as\s+my\s+(?:new\s+)?" + _MANAGER + r"\b", vtype="person")
_t("lead", _V_P + r"\s+(?:has\s+)?(?:replaced|took\s+over\s+from|succeeded)\s+(?-i:" + NAME + r")\s+as\s+(?:the\s+)?(?:lead|owner|project\s+lead)\s+(?:of|on|for)\s+(?:the\s+)?" + _N_P, event=True, vtype="person")
_t("lead", _N_P + r"\s*:\s*" + _V_P + r"\s+is\s+(?:now\s+)?(?:the\s+)?(?:new\s+)?(?:lead|owner)\b", vtype="person")
# a home said as what it is ("Home is Leeds now", "we call Leeds home"), someone's move
_f("home", r"(?:^|[.;!:]\s+|\b(?:my|our)\s+)(?:new\s+)?home\s+is\s+(?:now\s+)?(?:in\s+)?" + _N + r"(?=\s*(?:[.,;!]|$)|\s+(?:now|these\s+days|since)\b)", vtype="place")
_t("home", _S + r"\s+(?:has\s+)?relocated\s+to\s+" + _N, event=True, vtype="place")
# a project one was moved to, when it is named as one ("I've been moved to Project Heron")
_f("project", _I + r"(?:was|have\s+been|'ve\s+been|been|got)\s+(?:moved|put|switched|reassigned|transferred)\s+(?:over\s+)?to\s+(?:the\s+)?(?P<v>(?-i:Project\s+" + NAME + r"))", event=True, vtype="project")

# numbers and deadlines, keyed by their head noun
_QTY_HEADS = (r"threshold|limit|budget|target|cap|quota|minimum|maximum|max|min|rate|score|size|"
              r"count|number|price|fee|salary|rent|deposit|goal|distance|height|width|length|"
              r"depth|weight|temperature|interval|timeout|dose|dosage|headcount|sample size|tolerance|margin|"
              r"capacity|duration|point|level|frequency|ratio|speed|ceiling|floor|setpoint|buffer|allowance|"
              r"reserve|retention|concentration")
_QTY = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+|its\s+)?(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?P<head>{_QTY_HEADS})"
    rf"(?:\s+(?:for|of|on|in)\s+(?P<of>[\w\- ]{{2,40}}?))?\s+(?:is|are|was changed to|has changed to|"
    rf"changed to|moved to|went up to|went down to|is now|will be|should be|of|"
    rf"(?:moved|went|changed|went up|went down|dropped|rose|fell)\s+from\s+{NUMBER}{UNIT}\s+to|"
    # terse: "batch size up to 128 now", "the reorder point raised to 36"
    rf"(?:(?:is|are|was|has\s+been|have\s+been|got)\s+)?(?:now\s+)?(?:up|down|back|raised|lowered|increased|decreased|reduced|"
    rf"bumped(?:\s+up|\s+down)?|cut|dropped|fell|rose|climbed|jumped|went\s+up|went\s+down|moved|changed)\s+to|"
    # "Alert threshold: 85% now", "max batch size = 64"
    rf"\s*(?::|=|->|→|=>))\s+(?:now\s+|set to\s+|at\s+)?"
    rf"(?P<v>{NUMBER}{UNIT})(?![\w-])", re.I)
_DEADLINE = re.compile(
    rf"\b(?:the\s+|our\s+|my\s+)?(?P<mods>(?:[\w\-]+\s+){{0,4}}?)(?:(?P<head>deadline|due date)\s+"
    rf"(?:(?:for|of|on)\s+(?:the\s+)?(?P<of>[\w\-]+(?:\s+[\w\-]+){{0,3}}?)\s+)?"
    rf"(?:is|was|has|will be|moved|was moved|has been moved|changed|got moved|is now|:|=|->|→)\s*(?:now\s+)?"
    rf"(?:moved\s+|pushed\s+|changed\s+|back\s+)?(?:from\s+(?:the\s+)?{DATE}\s+)?(?:to\s+|on\s+|for\s+)?|(?P<head2>is|are)\s+(?:now\s+)?due\s+"
    rf"(?:on\s+|by\s+)?|(?:be\s+)?(?P<head3>live|ready|done|finished|submitted|delivered)\s+by\s+|"
    rf"(?<=[a-z]\s)(?P<head4>due)\s+(?:on\s+|by\s+)?|(?<=[a-z]\s)(?P<head5>date)\s+(?:is|was|has\s+been|will\s+be)\s+(?:now\s+)?(?:moved\s+to\s+|set\s+for\s+)?)"
    rf"(?:the\s+)?(?P<v>{DATE})\b", re.I)
_QTY_VERB = re.compile(
    rf"\b(?:lowered|raised|increased|decreased|reduced|changed|set|moved|bumped|dropped|cut|updated|adjusted|"
    rf"lower|raise|increase|decrease|reduce|change|bump|drop|update|adjust)\s+"
    rf"(?:the\s+|our\s+|my\s+)?(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?P<head>{_QTY_HEADS})"
    rf"(?:\s+(?:for|of|on|in)\s+(?P<of>[\w\- ]{{2,40}}?))?(?:\s+(?:up|down|back))?\s+(?:from\s+{NUMBER}{UNIT}\s+)?to\s+"
    rf"(?P<v>{NUMBER}{UNIT})(?![\w-])", re.I)
_DEADLINE_VERB = re.compile(
    rf"\b(?:pushed|moved|postponed|brought forward|extended|changed)\s+(?:the\s+|our\s+|my\s+)?"
    rf"(?P<mods>(?:[\w\-]+\s+){{0,3}}?)(?:deadline|due date)\s+(?:back\s+)?to\s+(?:the\s+)?(?P<v>{DATE})\b", re.I)
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
_NEGATED = re.compile(rf",?\s+(?:and\s+)?not\s+(?:the\s+)?(?P<old>{NUMBER}{UNIT}|{DATE}|{NAME}|[\w\-]+(?:\s+[\w\-]+)?)", re.I)
_STOP_MODS = frozenset("the a an our my its this that new old current now also for it them".split())


def _mods(s: str) -> str:
    # "s" alone is what a possessive leaves ("the report's deadline"): no modifier
    words = [w.lower() for w in re.findall(r"[\w\-]+", s or "") if w.lower() not in _STOP_MODS and w.lower() != "s"]
    return " ".join(words)


#: Who owns a quantity or a date by a possessive before its name.
_OWNER_RE = re.compile(r"(?:\b(?P<p>his|her|their|your)\s+|(?P<w>[A-Za-z][\w\-]*)['’](?:s\s+)?)$")
_TIME_OWNERS = frozenset("today tonight tomorrow yesterday week month year weekend quarter season "
                         "monday tuesday wednesday thursday friday saturday sunday".split())
_KIN_WORDS = frozenset(_KIN.split("|")) | frozenset("kid kids child children colleague friend boss manager "
                                                    "neighbour neighbor flatmate roommate client".split())


_POSSESSOR_RE = re.compile(r"(?<![\w\-])(?P<n>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)+)['’](?:s\s+)?$")


_NOT_POSSESSORS = frozenset("the my our his her their your its this that these those a an".split())
#: Days named like people ("New Year's Eve party budget").
_OCCASIONS = frozenset({"new year", "new years", "christmas eve", "chinese new"})


def _possessor(sentence: str, at: int) -> str:
    """The full name (two words or more) that owns what is named from ``at``
    ("Gwendolyn Sefton-Ali's Fairbourne report deadline"): the quantity or date is that
    person's (or organisation's), which the pages resolve; "" when none is named so."""
    m = _POSSESSOR_RE.search(sentence[:at])
    if m is None:
        return ""
    words = m.group("n").split()
    # "The New Year's party budget", "My Mother's Day plans": no one's name
    if words[0].lower() in _NOT_POSSESSORS or " ".join(words[-2:]).lower() in _OCCASIONS:
        return ""
    return m.group("n")


def _owner(sentence: str, at: int) -> str | None:
    """Whose is the quantity or date named from ``at``: "" for the speaker's or nobody's in
    particular, a word to key it by for a thing's ("the project's deadline" → "project"), None
    for another person's ("his step goal", "my daughter's deadline", "Tom's budget")."""
    m = _OWNER_RE.search(sentence[:at])
    if m is None:
        return ""
    if m.group("p"):
        return None
    w = m.group("w")
    if w.lower() in _TIME_OWNERS:
        return ""
    if w.lower() in _KIN_WORDS or w[:1].isupper():
        return None
    return w.lower()


#: A verb right after a value "X and Y": Y starts a new clause ("I work at Sora City Lab and
#: Tidepool is my project"), so the value is X alone.
_NEXT_CLAUSE_RE = re.compile(r"\s+(?:is|are|was|were|has|have|had|will|would|can|said|says)\b")


#: What may follow a name in the possessive that is still the name ("McDonald's now").
_AFTER_POSSESSIVE = re.compile(r"\s+(?!(?:now|since|as|these|in|on|at|for|and|but|so|too|again|from|until|then|"
                               r"anymore|any|today|yesterday|last|this|with)\b)[a-z]")


def _possessive(sentence: str, m: re.Match[str], group: str) -> bool:
    """Is the value a name in the possessive before what it owns ("I left Argent Media's party
    early": the party, not Argent Media)?"""
    return bool(re.search(r"['’]s$", m.group(group))) and bool(_AFTER_POSSESSIVE.match(sentence, m.end(group)))


def _own_value(sentence: str, m: re.Match[str], group: str) -> str:
    """The value a match captured, without a second conjunct that is another clause's subject."""
    v = m.group(group)
    if " and " in v and _NEXT_CLAUSE_RE.match(sentence, m.end(group)):
        v = v.rsplit(" and ", 1)[0]
    return v


#: "so he's my boss now", "She is my boss from now on": who "he"/"she" is comes from
#: before (:func:`needs_antecedent`; the extraction records it as a fact's ``antecedent``).
_PRONOUN_MANAGER = re.compile(r"\b(?:he|she)(?:['’]s|\s+is|\s+will\s+be|\s+has\s+become|\s+became)\s+"
                              r"(?:now\s+|officially\s+)?my\s+(?:new\s+)?" + _MANAGER + r"\b(?!['’]s)", re.I)


#: What a "he"/"she" is said to do for a living, the person named before it ("Sanne de Vries
#: left Ortelius Maps. She's with Baltic Freight Analytics now."; "Our rep is Tomasz Nowak,
#: he works for Gridline Systems"): (attr, pattern, op, event), the value in group ``v``.
_HE = r"\b(?:he|she)"
_PRONOUN_RELS: list[tuple[str, re.Pattern[str], str, bool]] = [
    # "with" an organisation now is a job; "at" one is where someone is ("she's at Heathrow now")
    ("employer", re.compile(_HE + r"(?:['’]s|\s+is)\s+(?:now\s+)?(?P<d>with)\s+" + _THE + _N
                            + r"(?=\s+(?:now|these\s+days)\b)", re.I), "set", False),
    ("employer", re.compile(_HE + r"(?:['’]s|\s+is)\s+now\s+(?:(?P<d>with)|working\s+(?:at|for))\s+" + _THE + _N
                            + r"(?=\s*(?:[.,;!]|$))", re.I), "set", False),
    ("employer", re.compile(_HE + r"\s+(?:now\s+|still\s+)?(?:works|is\s+working)\s+(?:at|for)\s+" + _THE + _N,
                            re.I), "set", False),
    ("employer", re.compile(_HE + r"(?:['’]s|\s+has)?\s+(?:just\s+)?(?:joined|started\s+at)\s+" + _THE + _N,
                            re.I), "set", True),
    ("employer", re.compile(_HE + r"(?:['’]s|\s+has)?\s+(?:just\s+)?(?:left|quit)\s+" + _THE + _N, re.I),
     "end", True),
]
#: A noun phrase of its own before the pronoun ("My sister changed jobs, she's at …"): the
#: pronoun is that person, not a name said earlier.
_OWN_NP = re.compile(r"\b(?:my|our|his|their|your)\s+[a-z]", re.I)
_CAP_WORD = re.compile(r"(?<=\s)(?!I\b|I['’])[A-Z][\w'’\-]*")


def _pronoun_rels(sentence: str) -> list[tuple[str, re.Match[str], str, bool]]:
    """The :data:`_PRONOUN_RELS` matches of ``sentence`` whose pronoun may stand for a name
    said before it (not in a hypothetical, not after a noun phrase of its own)."""
    out = []
    for attr, rx, op, event in _PRONOUN_RELS:
        for m in rx.finditer(sentence):
            prefix = sentence[:m.start()]
            nps = [x.start() for x in _OWN_NP.finditer(prefix)]
            names = [x.start() for x in _CAP_WORD.finditer(prefix)]
            if nps and (not names or names[-1] < nps[-1]):
                continue
            if _hypothetical(sentence, m.start()):
                continue
            out.append((attr, m, op, event))
    return out


def needs_antecedent(sentence: str) -> int | None:
    """Where a pronoun that stands for a person named before it stands in ``sentence`` (the
    speaker's manager, someone's employer), or None."""
    at = [m.start() for m in [_PRONOUN_MANAGER.search(sentence)] if m]
    at += [m.start() for _a, m, _o, _e in _pronoun_rels(sentence)]
    return min(at) if at else None


#: Chat's spellings of the first person ("im at X now", "ive joined X", "i work at X").
_CHAT_SPELLING = [(re.compile(r"(?<=\w):\s+"), " : "),  # "Alert threshold: 85%" reads as "threshold : 85%"
                  (re.compile(r"(?<=[a-z])['’]s\s+(?=(?:due|now|still|up|down|back|off|cancelled|canceled|set|at\s+\d|\d))"), " is "),
                  (re.compile(r"\b[Ii]m\b"), "I'm"), (re.compile(r"\b[Ii]ve\b"), "I've"),
                  (re.compile(r"\bi(?=\s|['’])"), "I"), (re.compile(r"\bIm\b"), "I'm"),
                  # the article mistyped ("im teh team lead now")
                  (re.compile(r"\b(?:teh|hte)\b"), "the")]
#: Words that open a role's phrase without being part of the title ("staying senior
#: technician", "still paralegal")
_NOT_TITLE = frozenset("staying remaining still being currently".split())


def _chat_spelling(sentence: str) -> str:
    """``sentence`` with chat's first person written out ("im" → "I'm", "the report's due" →
    "the report is due") and a colon spaced, so every rule reads it."""
    for rx, rep in _CHAT_SPELLING:
        sentence = rx.sub(rep, sentence)
    return sentence


#: A sentence about a person by their full name, the way a correction is written ("Hamza
#: Qureshi's audit report deadline is now 14 October", "Nomvula Dlamini wants American
#: spelling now"): the name, then a possessive or a verb of stating.
_NAMED_SPEAKER = re.compile(
    r"^\s*(?P<name>[A-ZÀ-ÖØ-Þ][\w'’\-]+(?:\s+(?:(?:de|da|van|von|der|den|di|du|del|dos|das|al|el|bin|ter|le)\s+)?"
    r"[A-ZÀ-ÖØ-Þ][\w'’\-]+)+?)(?P<link>['’]s\s+|\s+(?:is|was|has|wants|works|lives|prefers|uses|likes|reports|"
    r"moved|needs)\b)")
_AS_FIRST = {"is": "I am", "was": "I was", "has": "I have", "wants": "I want", "works": "I work",
             "lives": "I live", "prefers": "I prefer", "uses": "I use", "likes": "I like",
             "reports": "I report", "moved": "I moved", "needs": "I need"}
_THIRD_PRONOUNS = re.compile(r"\b(?:her|his|their)\b")


_SPELLED = re.compile(r"(?:written|spelled|spelt|listed|shown|abbreviated|printed|typed)\b", re.I)


def _as_first_person(sentence: str) -> tuple[str, str] | None:
    """(name, the sentence as that person would say it) for a sentence that states
    something of a person by their full name ("Lucía Benavides Ortega's email is now X" →
    "my email is now X"), so the speaker's own patterns read it; None otherwise."""
    m = _NAMED_SPEAKER.match(sentence)
    if not m or len(m.group("name").split()) < 2 or any(
            w.lower() in _NOT_SUBJECT_WORDS or w.lower() in _BAD_VALUES for w in m.group("name").split()):
        return None
    link = m.group("link").strip()
    said = "my " if link[:1] in "'’" else _AS_FIRST[link] + " "
    rest = _THIRD_PRONOUNS.sub("my", sentence[m.end():])
    return m.group("name"), (said + rest).strip()


def _named_first_person(sentence: str, out: list[Relation]) -> list[Relation]:
    """What a sentence states of a person named in full, read by the speaker's own patterns
    (:func:`_as_first_person`), for the attributes nothing else read of that name."""
    got = _as_first_person(sentence)
    if got is None:
        return []
    name, said = got
    have = {r.attr for r in out if r.subject == name}
    rels = (_first_person(said) + _quantities(said) + _bounds(said) + _deadlines(said) + _trips(said)
            + _channels(said))
    rels += [r for r in _dimensions(said) if not any((o.attr, o.key) == (r.attr, r.key) for o in rels)]
    known = {v.casefold() for _f, v, _s, _e in format_values(said)}
    if known:
        rels = [r for r in rels if not (r.attr == "format" and r.value.casefold() in known)] + _formats(said)
    # a project is read of a named person by the third-person patterns, with its lead
    # ("Kenji Watanabe is leading Tactile Transit Maps" is the lead, not one more project)
    return [replace(r, subject=name) for r in rels if not r.subject and r.attr not in have and r.attr != "project"]


def extract(sentence: str, antecedent: str = "") -> list[Relation]:
    """Every relation stated in ``sentence`` (first-person subjects are ``""``);
    ``antecedent``: the person a "he"/"she" of the sentence stands for."""
    in_lower_case = sentence == sentence.lower()
    sentence = _chat_spelling(sentence)
    out = (_first_person(sentence) + _third_person(sentence) + _quantities(sentence)
           + _bounds(sentence) + _deadlines(sentence) + _trips(sentence) + _channels(sentence) + _ended(sentence)
           + (_lower_case_people(sentence) if in_lower_case else []))
    dims = [r for r in _dimensions(sentence) if not any((o.attr, o.key) == (r.attr, r.key) for o in out)]
    # "I prefer a casual tone": the dimension's value, not a taste for "a casual"
    out = [r for r in out if not (r.attr == "preference" and any(
        re.sub(r"^(?:an?|the)\s+", "", r.value.lower()) in d.value.lower() for d in dims))] + dims
    known = {v.casefold() for _f, v, _s, _e in format_values(sentence)}
    if known:
        # a format of the vocabulary is read by _formats alone (keyed by what it formats or
        # its family), whichever wording the patterns found it in: a one-off stays one
        chosen = _formats(sentence)
        # a choice the preference patterns already read whole ("monthly reports as Word
        # documents") stays theirs
        chosen = [c for c in chosen if not any(r.attr == "preference" and c.value.casefold() in r.value.casefold()
                                               for r in out)]
        out = [r for r in out if not (r.attr == "format" and r.value.casefold() in known)] + chosen
    out += _named_first_person(sentence, out)
    # "my title is written Sr. UX Researcher": how a value is spelled, not a new one
    out = [r for r in out if not (r.attr in ("role", "employer", "manager") and _SPELLED.match(r.value))]
    # "my new number is 07700 900555": the number is a phone's, not a quantity of 07700
    phones = [re.sub(r"\D", "", r.value) for r in out if r.key == "contact phone"]
    out = [r for r in out if not (r.attr == "number" and phones and re.sub(r"\D", "", r.value)
                                  and any(re.sub(r"\D", "", r.value) in p for p in phones))]
    # a setting for once ("for today's run only, set the batch size to 32") changes no
    # standing value; a quantity someone else owns ("my husband set his step goal to 7000")
    # is not the speaker's
    if _TEMPORARY.search(sentence):
        out = [r for r in out if r.attr not in _SETTINGS]
    if _COVER.search(sentence):
        out = [r for r in out if r.attr not in _STATES]
    out = [r for r in out if not (r.attr in ("number", "deadline") and _OTHERS_RE.search(r.phrase or ""))]
    out = [plain_title(r) for r in out]
    if antecedent and _PRONOUN_MANAGER.search(sentence):
        out.append(Relation("", "manager", antecedent, "set", "", False, "person"))
    if antecedent:
        for attr, m, op, event in _pronoun_rels(sentence):
            v = _clean_value(_own_value(sentence, m, "v"))
            if v and v.lower() not in _BAD_VALUES and v != antecedent:
                out.append(Relation(antecedent, attr, v, op, "", event, "organization",
                                    (m.groupdict().get("d") or "").lower(), inferred=True))
    return out


def plain_title(r: Relation) -> Relation:
    """A role without the words that only open its phrase ("staying senior technician" is
    the title "senior technician")."""
    if r.attr != "role":
        return r
    words = r.value.split()
    while len(words) > 1 and words[0].lower() in _NOT_TITLE:
        words.pop(0)
    return r if len(words) == len(r.value.split()) else dataclasses.replace(r, value=" ".join(words))


def read_as(sentence: str) -> str:
    """``sentence`` as :func:`extract` reads it (chat's spellings of the first person made
    plain: "im at X" → "I'm at X")."""
    return _chat_spelling(sentence)


def stands_in(sentence: str) -> bool:
    """Whether someone stands in for someone else in ``sentence`` (cover, an acting role):
    nothing it says of a job is the person's own."""
    return bool(_COVER.search(sentence))


#: A condition, a supposition or a wish governs what follows it in its sentence ("If I moved
#: to Oslo I'd be closer to my sister", "I wish I worked at X"): nothing stated there holds.
_IRREALIS = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|whether|in\s+case|wish|wished)\b[^.;!?]*$",
                       re.I)


#: Closed sets of values of one dimension of how a person wants things (a standing choice
#: among them): a newer choice in the same dimension replaces the older, whatever the verb
#: ("I use British spelling" → "Actually I prefer American spelling now"; "Give me
#: temperatures in Fahrenheit" → "Switch to Celsius please"). (dimension, pattern, canonical
#: spellings of one value).
_DIMENSIONS: list[tuple[str, re.Pattern[str], dict[str, str]]] = [
    ("spelling", re.compile(r"\b(?P<v>(?:British|American|UK|US|Australian|Canadian|Oxford)\s+(?:English\s+)?spelling)\b"),
     {"uk": "British", "us": "American"}),
    ("temperature unit", re.compile(r"\b(?:degrees\s+)?(?P<v>Celsius|Fahrenheit|centigrade|celsius|fahrenheit)\b"),
     {"centigrade": "Celsius", "celsius": "Celsius", "fahrenheit": "Fahrenheit"}),
    ("units", re.compile(r"\b(?P<v>metric|imperial)(?:\s+units|\s+measurements)?\b", re.I), {}),
    ("layout", re.compile(r"\b(?P<v>(?:(?:full|short|proper|longer|plain)\s+)?paragraphs|(?:full|complete|short)\s+sentences|prose|bullet(?:ed)?\s+(?:points|lists?)|bullets|"
                          r"numbered\s+lists?|tables)\b", re.I),
     {"bullets": "bullet points", "bullet list": "bullet points", "bulleted list": "bullet points",
      "bullet lists": "bullet points", "bulleted lists": "bullet points", "bullet points": "bullet points"}),
    ("time format", re.compile(r"\b(?P<v>(?:24|12)[- ]hour\s+(?:clock|time|format))\b", re.I), {}),
    ("tone", re.compile(r"\b(?P<v>formal|informal|casual|chatty|friendly)(?:\s+(?:tone|style|register|language))?\b", re.I),
     {"formal": "formal tone", "informal": "casual tone", "casual": "casual tone", "chatty": "casual tone",
      "friendly": "friendly tone"}),
    ("language", re.compile(r"\bin\s+(?P<v>(?-i:English|Portuguese|Spanish|French|German|Italian|Dutch|Polish|Japanese|"
                            r"Chinese|Mandarin|Korean|Arabic|Hindi|Turkish|Swedish|Norwegian|Danish|Finnish|Greek|"
                            r"Russian|Ukrainian|Indonesian|Vietnamese|Thai|Czech|Romanian|Hungarian|Hebrew))\b", re.I), {}),
]
#: What makes a value of a dimension the speaker's standing choice: their own stance ("I
#: prefer", "I use", "I like replies as …"), a switch ("switch to X", "I've gone back to X"),
#: or an instruction opening the sentence ("Give me temperatures in X", "From now on write to
#: me in X"); a stance that ends ("I don't need bullet points anymore") ends it.
_DIM_TRIGGER = re.compile(
    r"\b(?:I|we)(?:['’]d|\s+would)?\s+(?:(?:now|really|actually|mostly|always|usually|still|much|generally)\s+)*(?P<stance>prefer|use|like|want|"
    r"write\s+in|work\s+in|think\s+in|rather\s+have)\b"
    r"|(?:^|[.;!:]\s+|\b(?:I|we)(?:['’]ve|\s+have|['’]ll|\s+will)?\s+(?:just\s+|now\s+)?|\bplease\s+|\blet['’]s\s+)(?P<switch>switch|switched|"
    r"change|changed|go\s+back|gone\s+back|went\s+back|move|moved|stick|stay)(?:\s+(?:over|back))?(?:\s+from\s+[^.;!?]{1,40}?)?\s+(?:to|with)\b"
    r"|^(?:please\s+)?(?P<marker>from\s+now\s+on|going\s+forward|in\s+future|from\s+today)\b"
    r"|^(?:(?:please|always|from\s+now\s+on|going\s+forward|in\s+future|from\s+today)\s*,?\s+)*(?:just\s+)?(?P<order>give|send|write|reply|"
    r"answer|format|put|show|keep|do|use|list|express|set\s+out)\b"
    r"|\b(?:I|we)\s+(?:don['’]t|do\s+not|no\s+longer|won['’]t)\s+(?P<stop>want|need|use|like)\b"
    r"|^(?:please\s+)?(?P<stop2>no\s+more)\b", re.I)
#: Words between an instruction and its value that make it about one thing, not a standing
#: choice ("Write this in bullet points", "give me today's forecast in Celsius").
_ONE_OFF = re.compile(r"\b(?:this|that|these|those|it|today['’]s|tonight['’]s|the\s+(?:last|attached|above|following))\b", re.I)
#: One thing named before the value ("Write the summary in bullet points", "give me the
#: answer in Celsius"): a singular noun after a determiner. Plural things ("the monthly
#: reports as PDF", "temperatures in °F") are a kind of thing, asked for every time.
_ONE_THING = re.compile(r"\b(?:the|this|that|my|your|our)\s+(?:[\w\-]+\s+){0,2}(?P<n>[\w\-]+)\s+(?:in|as|to|into|using|with)\s*$", re.I)
_STANDING_MARK = re.compile(r"\b(?:from\s+now\s+on|going\s+forward|in\s+future|from\s+today|always|every\s+time|anymore|any\s+more)\b", re.I)


def _for_once(before: str, sentence: str) -> bool:
    """Is an instruction about one thing, not a standing choice (see :data:`_ONE_OFF`,
    :data:`_ONE_THING`; "from now on", "always" make it standing)?"""
    if _STANDING_MARK.search(sentence):
        return False
    if _ONE_OFF.search(before):
        return True
    m = _ONE_THING.search(before)
    return bool(m) and not m.group("n").lower().endswith("s")


_NOT_CHOSEN = re.compile(r"(?:\bnot|\brather\s+than|\binstead\s+of|\bover|\bfrom|\bthan|\bno\s+more)\s+(?:in\s+|as\s+)?$", re.I)


def _dimensions(sentence: str) -> list[Relation]:
    """The speaker's standing choices of a :data:`_DIMENSIONS` value (see there)."""
    out: list[Relation] = []
    for t in _DIM_TRIGGER.finditer(sentence):
        if _unrealised(sentence, t.start()):
            continue
        end = re.search(r"[.;!?]|\s+but\b", sentence[t.end():])
        clause = sentence[t.end():t.end() + end.start()] if end else sentence[t.end():]
        for dim, rx, canon in _DIMENSIONS:
            for m in rx.finditer(clause):
                if _NOT_CHOSEN.search(clause[:m.start()]) or (
                        (t.group("order") or t.group("switch")) and _for_once(clause[:m.start()], sentence)):
                    continue
                v = m.group("v")
                v = canon.get(v.lower(), v)
                if dim == "spelling":
                    first, rest = v.split(None, 1)
                    v = f"{canon.get(first.lower(), first)} {rest}"
                op = "end" if t.group("stop") or t.group("stop2") else "set"
                if not any(r.key == f"preference {dim}" for r in out):
                    out.append(Relation("", "preference", v, op, f"preference {dim}"))
                break
    # the mark of a standing choice after its value ("casual is fine from now on", "metric
    # from now on please"): the value in the marked clause
    for c in _MARKED_CLAUSE.finditer(sentence):
        if _unrealised(sentence, c.start()):
            continue
        for dim, rx, canon in _DIMENSIONS:
            if any(r.key == f"preference {dim}" for r in out):
                continue
            m = rx.search(c.group(0))
            if m and not _NOT_CHOSEN.search(c.group(0)[:m.start()]):
                v = canon.get(m.group("v").lower(), m.group("v"))
                out.append(Relation("", "preference", v, "set", f"preference {dim}"))
    return out


_MARKED_CLAUSE = re.compile(r"[^.;!?,]*\b(?:from\s+now\s+on|going\s+forward|from\s+today)\b[^.;!?,]*", re.I)


#: A day of a month, as a trip is dated (a weekday alone names a day of any week).
DAY_MONTH = (rf"(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{{1,2}}(?:st|nd|rd|th)?)?\s+(?:{_MONTHS})(?:\s+\d{{4}})?"
             rf"|(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?)")
#: A trip: where to and when, keyed by where ("I'm flying to Lisbon on 3 May" → "now I'm
#: flying to Lisbon on 10 May instead"; "Crete's off, we cancelled it" ends it). A trip
#: there said after the last one's day is another trip, not a change (:mod:`.pages`).
_TRIP = re.compile(
    rf"\b(?:I|we)(?:['’]m|['’]re|\s+am|\s+are|['’]ll\s+be|\s+will\s+be)\s+(?:now\s+|still\s+)?(?:flying|going|travelling|traveling|"
    rf"heading|driving|sailing|off)\s+(?:back\s+)?to\s+(?P<dest>(?-i:{NAME}))\s+(?:for\s+(?:an?\s+|the\s+|my\s+)?[a-z]+(?:\s+[a-z]+)?\s+)?"
    rf"(?:(?:on|from)\s+)?(?:the\s+)?(?P<date>{DAY_MONTH})\b"
    # "Family trip to Accra 12-19 July", "our holiday to Crete from 3 May"
    rf"|(?:^|\b(?:my|our|a|the|family)\s+)(?:family\s+)?(?:trip|holiday|vacation)\s+to\s+(?P<dest4>(?-i:{NAME}))\s+"
    rf"(?:(?:on|from)\s+)?(?:the\s+)?(?P<date4>{DAY_MONTH})\b", re.I)
_TRIP_MOVED = re.compile(
    rf"\b(?:our|my|the)\s+(?:trip|holiday|flight)\s+to\s+(?P<dest>(?-i:{NAME}))\s+is\s+(?:now\s+)?(?:on|from)\s+(?:the\s+)?(?P<date>{DAY_MONTH})\b"
    rf"|\b(?:our|my|the)\s+(?P<dest3>(?-i:{NAME}))\s+(?:trip|holiday|flight|visit)\s+is\s+(?:now\s+)?(?:on\s+|from\s+)?(?:the\s+)?"
    rf"(?P<date3>{DAY_MONTH})\b"
    rf"|\b(?:move|moved|push|pushed|change|changed|rebook|rebooked|shift|shifted|postpone|postponed|put\s+back|"
    rf"brought\s+forward|bring\s+forward)\s+(?:the|our|my)\s+(?P<dest2>(?-i:{NAME}))\s+"
    rf"(?:trip|holiday|flight|visit)\s+(?:back\s+)?to\s+(?:the\s+)?(?P<date2>{DAY_MONTH})\b", re.I)
_TRIP_OFF = re.compile(
    rf"(?:^|[.;!:,]\s+)(?:the\s+|our\s+|my\s+)?(?P<dest>(?-i:{NAME}))(?:\s+trip|\s+holiday)?(?:['’]s|\s+is)\s+(?:now\s+)?(?:off|cancelled|canceled)\b"
    rf"|\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:had\s+to\s+)?(?:cancelled|canceled|cancel|called\s+off|call\s+off)\s+(?:the|our|my)\s+"
    rf"(?:(?P<dest2>(?-i:{NAME}))\s+(?:trip|holiday|flight)|(?:trip|holiday|flight)\s+to\s+(?P<dest3>(?-i:{NAME})))",
    re.I)


#: Words that make a format named in a sentence a standing choice without an instruction
#: verb ("xlsx from now pls", "as of March …", "I meant SVG").
_FORMAT_STANDING = re.compile(r"\b(?:whenever|as\s+of|now|for\s+everything|all\s+(?:my|the|our)|every|each|default|meant)\b", re.I)
#: The thing a format is for, right before it ("export the figures as PDF", "summaries in
#: Markdown"), its plural "s" dropped as the format patterns key it.
_FORMATTED = re.compile(r"\b(?P<k>[a-z]+?)s?\s+(?:files?\s+)?(?:(?:should|must|need\s+to|have\s+to|can|will|are\s+to)\s+"
                        r"(?:always\s+)?be\s+(?:in\s+|saved\s+as\s+|exported\s+as\s+|sent\s+as\s+)?|as\s+|in\s+|into\s+)"
                        r"(?:an?\s+)?$", re.I)
_NOT_FORMATTED = frozenset("them it this that everything anything stuff thing me us everyone one all "
                           "be".split())
#: A format is what is asked for where a word of choosing leads to it ("as PDF", "should be
#: SVG", "always SVG", "formatted for PowerPoint", "insists on Chicago") or a word of standing
#: follows it ("xlsx from now pls"); "the PNGs blur in print" names one, and asks nothing.
_CHOSEN_BEFORE = re.compile(r"(?:^|\b(?:as|in|into|to|be|meant|use|using|prefer|want|always|only|just|on|for|with))"
                            r"\s*(?:an?\s+|the\s+)?(?:\w+\s+)?$", re.I)
_CHOSEN_AFTER = re.compile(r"\s*(?:from\s+now|now|please|pls|going\s+forward|for\s+everything|only|from\s+today)\b",
                           re.I)
#: An instruction anywhere in the sentence ("… so give me slide stuff in Google Slides").
_FORMAT_ORDER = re.compile(r"\b(?:give|send|export|save|use|format|make|keep|switch|put|write|deliver|share)\b", re.I)
#: A format named as what was, not what is wanted ("PowerPoint is gone for us", "I wrote PNG
#: yesterday").
_FORMAT_GONE = re.compile(r"^\s*(?:is|are|was|were)\s+(?:gone|dead|out|over|history|no\s+more|banned)\b"
                          r"|^\s*(?:yesterday|before|earlier|last\s+time)\b", re.I)


def _formats(sentence: str) -> list[Relation]:
    """The speaker's standing choice of a format (:mod:`.formats`), one per family: the
    last one the sentence wants, not one it turns down ("xlsx from now, not csv")."""
    found = format_values(sentence)
    if not found:
        return []
    ordered = any(not (t.group("stop") or t.group("stop2")) for t in _DIM_TRIGGER.finditer(sentence)) \
        or bool(_FORMAT_ORDER.search(sentence))
    strong = bool(_STANDING_MARK.search(sentence))
    standing = strong or bool(_FORMAT_STANDING.search(sentence))
    if not (ordered or strong or (standing and re.search(r"\b(?:I|we|my|me|our|us|pls|please)\b", sentence, re.I))):
        return []
    last: dict[str, str] = {}
    for family, value, start, end in found:
        clause = re.split(r"[.;:!,]\s+", sentence[:start])[-1]
        # a modal is how a format is asked for ("charts should be SVG"): only a condition,
        # a wish or a time gone by keeps it from holding
        if _hypothetical(sentence, start) or _NOT_CHOSEN.search(sentence[:start]) or _FORMAT_GONE.search(sentence[end:]) \
                or (not standing and _for_once(clause, sentence)) \
                or not (_CHOSEN_BEFORE.search(sentence[:start]) or _CHOSEN_AFTER.match(sentence[end:])):
            continue
        # what is formatted, where the sentence names it ("the figures as SVG"): a figure's
        # format and a report's are two choices; else the family stands for the thing
        thing = _FORMATTED.search(sentence[:start])
        noun = thing.group("k").lower() if thing and thing.group("k").lower() not in _NOT_FORMATTED else ""
        last[f"format of {noun}" if noun else f"format {family}"] = value
    return [Relation("", "format", v, "set", key) for key, v in last.items()]


def _trips(sentence: str) -> list[Relation]:
    """Trips the speaker is making or called off (see :data:`_TRIP`)."""
    out: list[Relation] = []
    for m in _TRIP.finditer(sentence):
        dest, day = m.group("dest") or m.group("dest4"), m.group("date") or m.group("date4")
        if not _unrealised(sentence, m.start()) and dest.split()[0].lower() not in _BAD_VALUES:
            out.append(Relation("", "trip", f"{dest} on {day}", "set", "trip|" + dest.lower(), event=True))
    for m in _TRIP_MOVED.finditer(sentence):
        dest = m.group("dest") or m.group("dest2") or m.group("dest3")
        day = m.group("date") or m.group("date2") or m.group("date3")
        if not _unrealised(sentence, m.start()) and dest.split()[0].lower() not in _BAD_VALUES:
            out.append(Relation("", "trip", f"{dest} on {day}", "set", "trip|" + dest.lower(), event=True))
    for m in _TRIP_OFF.finditer(sentence):
        dest = m.group("dest") or m.group("dest2") or m.group("dest3")
        if not _unrealised(sentence, m.start()) and dest.split()[0].lower() not in _BAD_VALUES:
            out.append(Relation("", "trip", "", "end", "trip|" + dest.lower(), event=True))
    return out


#: A state that ends one without naming it or a successor: retired or between jobs (the
#: employer), reporting to nobody (the manager), nobody leading a project, a deadline dropped.
_ENDED = (
    ("employer", re.compile(r"\b(?:I|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?retired\b"
                            r"|(?:^|[.;!]\s+)(?:just\s+|finally\s+|officially\s+)?retired\s+(?:at|in|on|last|this|from|after|today|yesterday)\b"
                            r"|\bI(?:['’]m|\s+am)\s+(?:now\s+|officially\s+)?(?:retired|between\s+jobs|unemployed|out\s+of\s+work)\b", re.I)),
    ("manager", re.compile(r"\bI\s+(?:don['’]t|do\s+not|no\s+longer)\s+(?:technically\s+|really\s+|actually\s+)?report\s+to\s+"
                           r"(?:anyone|anybody|a\s+manager|a\s+boss)\b|\bI\s+(?:have|['’]ve)\s+no\s+(?:manager|boss)\b", re.I)),
    ("deadline", re.compile(r"\b(?:dropped|removed|scrapped|lifted|cancell?ed)\s+the\s+deadline\b"
                            r"|\bno\s+(?:hard\s+|fixed\s+)?deadline\s+(?:any\s*more|now)\b", re.I)),
)
_NOBODY_LEADS = re.compile(r"\b(?:nobody|no\s+one|no-one)(?:['’]s|\s+is)\s+(?:leading|running|heading)\s+(?:the\s+)?(?P<s>(?-i:" + NAME + r"))", re.I)


def _ended(sentence: str) -> list[Relation]:
    """Values the speaker says are over, with no successor (:data:`_ENDED`)."""
    out = [Relation("", attr, "", "end", "deadline|" if attr == "deadline" else "", True)
           for attr, rx in _ENDED if (m := rx.search(sentence)) and not _unrealised(sentence, m.start())]
    out += [Relation(m.group("s"), "lead", "", "end", "", True) for m in _NOBODY_LEADS.finditer(sentence)
            if not _unrealised(sentence, m.start())]
    return out


def _channels(sentence: str) -> list[Relation]:
    """The speaker's email addresses, numbers and handles (:mod:`.channels`), unless said in
    a condition, a plan or of a time gone by."""
    return [Relation("", "contact", value, op, key, event=op == "end")
            for key, value, op, at in channels(sentence) if not _unrealised(sentence, at)]


#: Someone named in lower case where a person is the value ("my line manager is tariq aziz"),
#: in a sentence written all in lower case (a writer who capitalises nothing): two words
#: that are no common word of chat, nor read as an adjective, adverb or participle.
_LOWER_PERSON = re.compile(r"\bmy\s+(?:new\s+)?(?:line\s+manager|manager|boss|supervisor|team\s+lead)(?:\s+is|['’]s)\s+(?:now\s+)?"
                           r"(?P<v>[a-z]{2,}\s+[a-z]{2,})(?=\s*(?:[,.;!]|$)|\s+now\b)")
_NOT_NAME_WORDS = frozenset("""
a an the my our his her their your this that it is was be on off in out at to of for and or but so
very really super pretty quite kinda sorta so too rather bit lot much more most less least not no
new old nice great good bad fine ok okay cool chill strict lovely awesome terrible awful busy sick
ill away back here there now today tomorrow yesterday still also just leave holiday vacation gone
leaving retiring moving great amazing brilliant decent fair hard tough kind mean rude lazy sound
the best worst same different another someone somebody nobody everyone younger older tiny huge
""".split())
_NOT_NAME_END = re.compile(r"(?:ly|ing|ed|ful|ous|ive|ic|able|ible|less|est)$")


def _lower_case_people(sentence: str) -> list[Relation]:
    """The speaker's manager named in lower case (see :data:`_LOWER_PERSON`), of a sentence
    written in lower case."""
    out = []
    for m in _LOWER_PERSON.finditer(sentence):
        words = m.group("v").split()
        if _hypothetical(sentence, m.start()) or any(w in _NOT_NAME_WORDS or _NOT_NAME_END.search(w) for w in words):
            continue
        out.append(Relation("", "manager", " ".join(w.capitalize() for w in words), "set", "", False, "person"))
    return out


#: What holds for once or for a while, not from now on.
_TEMPORARY = re.compile(r"\b(?:(?:only|just)\s+for\s+(?:today|tonight|now|this\s+(?:once|run|time|test|one|week|batch))"
                        r"|for\s+(?:today|tonight|now|this\s+(?:once|run|time|test|one))\s+only"
                        r"|for\s+(?:today|tonight|this\s+week)['’]s\s+[\w\- ]{1,30}?\s+only"
                        r"|temporar(?:y|ily)|one[- ]off|this\s+once|for\s+the\s+time\s+being|just\s+this\s+(?:once|time|run))\b",
                        re.I)
#: Attributes a one-off leaves as they were (a job said "for now" is still a job).
_SETTINGS = frozenset("number deadline preference format".split())
#: A state that stands in for another for a while ("Temporarily I report to X", "While Tom
#: is away, X is my manager", "My manager is on leave, so I report to X"): it replaces
#: nothing. Not "acting" or "interim", which are titles ("acting headteacher").
_COVER = re.compile(r"\b(?:temporar(?:y|ily)|for\s+the\s+time\s+being|covering\s+(?:for|as)|cover(?:ing)?\s+for"
                    # an acting title, a stint with its end in sight ("acting head chef for
                    # the next month …, then back to deputy")
                    r"|for\s+the\s+next\s+(?:few\s+|couple\s+of\s+|\w+\s+)?(?:days?|weeks?|months?|fortnight)"
                    r"|then\s+back\s+to"
                    r"|while\s+(?:he|she|they|[A-Z][\w\-]+)(?:['’]s|\s+is|\s+are)\s+(?:away|off|out|on\s+leave|sick|in\s+hospital)"
                    r"|until\s+(?:he|she|they|[A-Z][\w\-]+)\s+(?:is|gets|comes|returns)(?:\s+back)?"
                    r"|(?:is|['’]s|are)\s+(?:on\s+(?:leave|holiday|vacation|sabbatical|maternity\s+leave|paternity\s+leave)|off\s+sick))\b",
                    re.I)
_STATES = frozenset("employer role manager project home contact lead".split())
#: A quantity's name that says whose it is, when that is someone else's.
_OTHERS_RE = re.compile(r"^(?:his|her|their|your)\b", re.I)


#: A modal or an intention right before a verb of change: it may happen, it has not ("I might
#: raise the pager threshold to 800", "we're thinking of moving the launch to May").
_MODAL_BEFORE = re.compile(r"\b(?:might|may|could|would|should|maybe|perhaps|probably|possibly|"
                           r"want(?:s|ed)?\s+to|plan(?:s|ning|ned)?\s+to|going\s+to|gonna|hope\s+to|"
                           r"thinking\s+(?:of|about)|considering|wondering\s+(?:if|whether)|if)"
                           r"(?:\s+[\w'’]+){0,2}\s*$", re.I)


def _unrealised(sentence: str, at: int) -> bool:
    """Is what starts at ``at`` hypothetical (:func:`_hypothetical`) or only possible, meant or
    planned (a modal right before it)?"""
    return _hypothetical(sentence, at) or bool(_MODAL_BEFORE.search(sentence[:at]))


#: A time gone by governs what follows it: "When I was at Argent Media, we had a budget of
#: 5000" (the rest of the sentence); "I used to …", "back in 2019 …" (the rest of the clause).
_PAST_FRAME = re.compile(r"\b(?:when|while)\s+(?:I|we)\s+(?:was|were)\b[^.;!?]*$"
                         r"|\b(?:used\s+to|back\s+in\s+\d{4}|back\s+then|in\s+my\s+(?:old|last|previous)\s+job)\b[^.;!?,]*$", re.I)


def _hypothetical(sentence: str, at: int) -> bool:
    """Is the text at ``at`` inside a condition, supposition or wish of ``sentence``, or in a
    time gone by?"""
    return bool(_IRREALIS.search(sentence[:at]) or _PAST_FRAME.search(sentence[:at]))


def _first_person(sentence: str) -> list[Relation]:
    """What the speaker states of themselves ("my manager is X", "I prefer X for Y")."""
    out: list[Relation] = []
    seen: set[tuple[str, str]] = set()
    for attr, rx, op, event, vtype in _FIRST:
        for m in rx.finditer(sentence):
            v = _clean_value(_own_value(sentence, m, "v"))
            if not v or v.lower() in _BAD_VALUES or _hypothetical(sentence, m.end()) or _possessive(sentence, m, "v"):
                continue
            if rx in _JOB_ONLY and not _a_job(m, v, op):
                continue
            key = ""
            a = attr
            if attr == "favorite":
                a, key = "preference", "favorite " + m.group("k").strip().lower()
            elif attr == "preference":
                topic = m.groupdict().get("k")
                key = "preference " + topic.split()[-1].lower() if topic else _pref_key(v)
                if topic:
                    v = f"{v} for {topic}"
                if "rather" in m.group(0).lower() and not m.groupdict().get("obj"):
                    v = "to " + v  # "I'd rather mark scripts …": a verb follows "rather"
                if m.groupdict().get("how"):
                    v = f"{v} by {m.group('how').lower()}"
            elif attr == "format":
                key = "format of " + m.group("k").lower().rstrip("s")
            elif attr == "contact" and m.groupdict().get("k"):
                key = "contact " + _mods(m.group("k"))
            detail = "move" if rx in _MOVES else (m.groupdict().get("d") or "").lower()
            if attr == "family" and v.lower() in _PET_WORDS:
                continue
            if attr == "preference" and v[:1].isupper() and not v.split()[0].isupper() and \
                    re.search(r"(?:^|[.;:!])\s*$", sentence[:m.start("v")]):
                v = v[0].lower() + v[1:]  # a value that opened the sentence ("Code reviews …")
            if attr == "pet":
                for name in re.split(r",\s*|\s+and\s+", v):
                    name = name.strip()
                    if name and (a, name) not in seen:
                        seen.add((a, name))
                        out.append(Relation("", a, name, op, key, event, vtype, _singular(detail)))
                continue
            if (a, key or v) in seen:
                continue
            seen.add((a, key or v))
            # a verb of moving says nothing of its place's type ("gone to Lisbon"): no type
            # evidence, the page layer asks the place to be an organisation already
            out.append(Relation("", a, v, op, key, event, "" if rx in _MOVES else vtype, detail))
    return out


#: "Update on X: she …", "News about X: they're …" — the pronoun opening the clause is X.
_UPDATE_ON = re.compile(rf"\b(?:[Uu]pdate|[Nn]ews|[Cc]hange|[Cc]orrection|[Nn]ote)\s+(?:on|about|re|from)\s+"
                        rf"((?-i:{NAME}))\s*:\s*(?:she|he|they)(?:['’](?:s|re)|\b)")


def _third_person(sentence: str) -> list[Relation]:
    """What it states of someone or something named ("Leila works at X", "Juno is a cat")."""
    out: list[Relation] = []
    # "Update on Amara Mensah: she moved …": the pronoun is the name before the colon
    sentence = _UPDATE_ON.sub(lambda m: f"{m.group(1)}: {m.group(1)}", sentence)
    for attr, rx, op, event, vtype in _THIRD:
        for m in rx.finditer(sentence):
            if _hypothetical(sentence, m.end()):
                continue
            s = _clean_value(m.group("s") or m.groupdict().get("s2") or "")
            if set(s.lower().split()) & _NOT_SUBJECT_WORDS:
                continue  # "If I moved to Oslo": a conjunction and "I" are nobody's name
            if m.groupdict().get("v") and _possessive(sentence, m, "v"):
                continue
            if m.groupdict().get("self") is not None:
                v = SELF  # "I'm the lead on P": the speaker
            else:
                v = _clean_value(_own_value(sentence, m, "v")) if m.groupdict().get("v") else ""
            if rx in _JOB_ONLY and not _a_job(m, v, op):
                continue
            detail = "move" if rx in _MOVES else (m.groupdict().get("d") or "").lower()
            if attr == "species":
                v = detail = _singular(detail)
            if not s or s.split()[0].lower() in _BAD_VALUES or (v and v.lower() in _BAD_VALUES):
                continue
            rel = Relation(s, attr, v, op, "", event, "" if rx in _MOVES else vtype, detail)
            if not any((o.subject, o.attr, o.value, o.op) == (s, attr, v, op) for o in out):
                out.append(rel)
    return out


#: "Correction on step-free routing: …", "Update for the atlas: …" — what the rest is about.
_TOPIC_RE = re.compile(r"^\W*(?:correction|update|note|change|reminder)\s+(?:on|for|about|re)\s+(?:the\s+)?"
                       r"(?P<t>[\w\- ]{2,40}?)\s*:", re.I)


#: "For the Harbour Survey the depth tolerance is 10 cm": a name put in front says whose
#: quantity it is (see :func:`_names_key`), so the River Survey's tolerance is another one.
_FRONT_RE = re.compile(rf"^\W*(?i:for|on|in|at|with|about)\s+(?:the\s+)?(?P<n>{NAME})\s*,?\s+")
_CALENDAR = frozenset(_MONTHS.split("|")) | frozenset(
    "monday tuesday wednesday thursday friday saturday sunday".split())


def _with_front(key: str, sentence: str, at: int) -> str:
    """``key`` with the name a sentence puts in front of the quantity at ``at``, if any."""
    m = _FRONT_RE.match(sentence)
    if not m or m.end() > at or m.group("n").lower().split()[0] in _CALENDAR:
        return key
    base, _, names = key.partition("@")
    got = set(filter(None, names.split(";"))) | {m.group("n").lower()}
    return base + "@" + ";".join(sorted(got))


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
            if drug in _NOT_DRUGS or _unrealised(sentence, m.start()):
                continue
            rel = Relation(m.groupdict().get("s") or "", "number", _clean_value(m.group("v")), "set",
                           f"dose|{drug}", False, "", phrase=f"{drug} dose")
            if rel not in out:
                out.append(rel)
    return out


def _quantities(sentence: str) -> list[Relation]:
    """Named quantities ("the QC spike threshold is 40 cm"), keyed by head and modifiers."""
    out: list[Relation] = _doses(sentence)
    for m in _QTY_MINMAX.finditer(sentence):
        if _unrealised(sentence, m.start()):
            continue
        head = _head(m.group("head"))
        what = " ".join(x for x in (m.group("noun"), m.group("of")) if x)
        phrase = f"{'maximum' if head == 'max' else 'minimum'} {m.group('noun')}" + (
            f" for {m.group('of')}" if m.group("of") else "")
        out.append(Relation("", "number", _clean_value(m.group("v")), "set",
                            _with_front(f"{head}|{_mods(what)}", sentence, m.start("v")), False, "",
                            phrase=phrase))
    topic = _TOPIC_RE.match(sentence)
    for m in list(_QTY.finditer(sentence)) + list(_QTY_VERB.finditer(sentence)):
        start = _after_determiner(sentence, m.start("mods"), m.start("head"))
        mods = _mods(sentence[start:m.start("head")] + " " + (m.group("of") or ""))
        if not mods and topic and topic.end() <= m.start():
            mods = _mods(topic.group("t"))  # "Correction on step-free routing: the threshold is …"
        phrase = " ".join(sentence[start:m.end("of") if m.group("of") else m.end("head")].split())
        span = sentence[start:m.end("of") if m.group("of") else m.start("head")]
        if _unrealised(sentence, m.start()):
            continue
        owner = _owner(sentence, m.start("mods"))
        whose = _possessor(sentence, m.start("mods")) if owner is None else ""
        if owner is None and not whose:
            continue  # "my son's budget": someone else's
        mods = ((owner or "") + " " + mods).strip()
        if _head(m.group("head")) in ("dose", "dosage") and any(r.key == f"dose|{mods}" for r in out):
            continue  # "my sertraline dose is 100 mg", read as a dose already
        out.append(Relation(whose, "number", _clean_value(m.group("v")), "set",
                            _with_front(f"{_head(m.group('head'))}|{mods}" + _names_key(span, start),
                                        sentence, m.start("v")), False, "", phrase=phrase))
    return out


_KEY_NAME_RE = re.compile(r"(?<![\w\-])[A-Z][\w\-]*(?:\s+(?:of\s+|the\s+|for\s+)?[A-Z][\w\-]*)*")


def _names_key(span: str, at: int) -> str:
    """The names a quantity's or deadline's name holds ("the conference submission for Ramp
    Ledger" → "@ramp ledger"), the sentence's first word left out: two quantities that name
    different things (Ramp Ledger's and Haptic Crosswalk's submissions) are two."""
    names = []
    for m in _KEY_NAME_RE.finditer(span):
        run = m.group(0)
        if at + m.start() == 0:  # the sentence's capitalised first word
            run = run.split(None, 1)[1] if " " in run else ""
        if run:
            names.append(run.lower())
    return "@" + ";".join(sorted(set(names))) if names else ""


def _head(h: str) -> str:
    h = h.lower()
    return {"maximum": "max", "minimum": "min"}.get(h, h)


def _bounds(sentence: str) -> list[Relation]:
    """Upper and lower bounds (see ``_QTY_BOUND``)."""
    out: list[Relation] = []
    for m in _QTY_BOUND.finditer(sentence):
        start = _after_determiner(sentence, m.start("mods"), m.end("mods"))
        what = " ".join(sentence[start:m.end("mods")].split())
        noun = (m.group("what") or "").lower()
        if noun in _STOP_MODS or noun in ("before", "after", "when", "and", "or", "by", "until"):
            noun = ""
        head = "min" if m.group("dir").lower() in _LOWER_BOUND else "max"
        phrase = " ".join(x for x in ("maximum" if head == "max" else "minimum", noun,
                                      f"for the {what}" if what else "") if x)
        out.append(Relation("", "number", _clean_value(m.group("v")), "set",
                            _with_front(f"{head}|{_mods(what + ' ' + noun)}", sentence, m.start("v")),
                            False, "", phrase=phrase))
    for m in _QTY_SIZE.finditer(sentence):
        head = m.group("head").lower()
        if head in _STOP_MODS or re.fullmatch(_QTY_HEADS, head) or re.search(
                rf"\b(?:{_QTY_HEADS})\s+(?:for|of|on|in)\s+$", sentence[:m.start()], re.I):
            continue  # "the limit (for the harbour) is 40 cm": a named quantity, read by _QTY
        what = " ".join(x for x in (m.group("mods").strip(), head) if x)
        out.append(Relation("", "number", _clean_value(m.group("v")), "set",
                            _with_front(f"size|{_mods(what)}", sentence, m.start("v")),
                            False, "", phrase=f"{what} size"))
    for m in _QTY_AFTER.finditer(sentence):
        head = _head(m.group("head"))
        out.append(Relation("", "number", _clean_value(m.group("v")), "set",
                            _with_front(f"{head}|{_mods(m.group('of'))}", sentence, m.start("v")), False, "",
                            phrase=f"{'maximum' if head == 'max' else 'minimum'} for the {m.group('of')}"))
    return out


_MODAL_TAIL = re.compile(r"(?:\s+(?:has|have|needs?|must|should|will|is|are|to|got))+\s*$", re.I)


def _deadlines(sentence: str) -> list[Relation]:
    """Deadlines ("the atlas report deadline is 3 May", "the grant report is due 3 May")."""
    out: list[Relation] = []
    for m in _DEADLINE.finditer(sentence):
        head = (m.group("head") or m.group("head2") or m.group("head3") or "").lower()
        start = _after_determiner(sentence, m.start("mods"), m.end("mods"))
        # "the Lakeview Cottage has to be done by April 30": the thing due, not its modal
        end = start + len(_MODAL_TAIL.sub("", sentence[start:m.end("mods")]))
        mods = _mods(sentence[start:end] + " " + (m.group("of") or ""))
        owner = _owner(sentence, m.start("mods"))
        whose = _possessor(sentence, m.start("mods")) if owner is None else ""
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
        out.append(Relation(whose, "deadline", _clean_value(_WEEKDAY_BEFORE.sub("", m.group("v"))), "set",
                            _with_front(f"deadline|{mods}" + _names_key(span, start), sentence, m.start("v")),
                            False, "", phrase=(f"deadline for {what}" if what else "deadline")))
    for m in _DEADLINE_SLIP.finditer(sentence):
        start = _after_determiner(sentence, m.start("mods"), m.end("mods"))
        what = " ".join(sentence[start:m.end("mods")].split())
        mods = _mods(what)
        if not mods or set(mods.split()) & _NOT_DUE or _unrealised(sentence, m.start()):
            continue
        out.append(Relation("", "deadline", _clean_value(m.group("v")), "set",
                            f"deadline|{mods}" + _names_key(sentence[start:m.end("mods")], start), False, "",
                            phrase=f"deadline for {what}"))
    for m in _DEADLINE_VERB.finditer(sentence):
        if _unrealised(sentence, m.start()):
            continue
        what = " ".join(m.group("mods").split())
        out.append(Relation("", "deadline", _clean_value(m.group("v")), "set",
                            f"deadline|{_mods(what)}", False, "",
                            phrase=(f"deadline for {what}" if what else "deadline")))
    return out


def _after_determiner(sentence: str, start: int, end: int) -> int:
    """Where a quantity's name starts: after the last article or possessive before its head
    ("Actually the sampling rate" → "sampling rate")."""
    last = start
    for m in re.finditer(r"\b(?:the|a|an|our|my|its|their|this|that)\s+", sentence[start:end], re.I):
        last = start + m.end()
    return last


def negated_values(sentence: str) -> list[str]:
    """What a sentence says is no longer so: "12 percent now, not 15 percent" → ["15 percent"]."""
    return [_clean_value(m.group("old")) for m in _NEGATED.finditer(sentence)]


def without_negations(sentence: str) -> str:
    """``sentence`` without its ", not X" clauses ("SVG, not PDF." → "SVG.")."""
    return _NEGATED.sub("", sentence).strip()


def _singular(w: str) -> str:
    return w[:-1] if w.endswith("s") and w[:-1] in _PET_WORDS else w


def _pref_key(v: str) -> str:
    """A preference's topic: the last content word of its value before a preposition
    ("afternoon meetings" → "meetings", "status updates on Slack" → "updates"), so "I now
    prefer afternoon meetings" replaces "I prefer morning meetings"."""
    head = re.split(r"\s+(?:on|by|in|for|over|via|with|from|at|through|as)\s+", v.lower())[0]
    words = [w for w in re.findall(r"[a-z][\w\-]*", head) if w not in _STOP_MODS]
    return "preference " + (words[-1] if words else v.lower())


def same_key(a: str, b: str) -> bool:
    """Do two quantity keys ("threshold|alert", "threshold|fall-risk score") name the same
    quantity: same head, and the modifiers of one among the other's (or one without any)?"""
    if "|" not in a or "|" not in b:
        return a == b
    a, _, na = a.partition("@")
    b, _, nb = b.partition("@")
    if na and nb and not (set(na.split(";")) <= set(nb.split(";")) or set(nb.split(";")) <= set(na.split(";"))):
        return False  # the submission for Ramp Ledger is not Haptic Crosswalk's
    ha, ma = a.split("|", 1)
    hb, mb = b.split("|", 1)
    if ha != hb:
        return False
    # "fall-risk score" / "fall-risk" are one quantity, "CPU alert" / "memory alert" two:
    # a word each has and the other lacks names another thing
    sa, sb = set(ma.split()), set(mb.split())
    return sa <= sb or sb <= sa


#: Words a capitalised run at a sentence's start holds that are never part of a subject's name.
_NOT_SUBJECT_WORDS = frozenset("if when unless so but and because once since while though although "
                               "whether after before as maybe i i'm i’m i'd i’d i've i’ve i'll i’ll "
                               # adverbs that open a sentence whose subject is left out ("Just
                               # joined X", "Finally moved to Y")
                               "just finally also now then today yesterday recently actually well oh ok "
                               "okay anyway btw still already officially we we've we’ve we're we’re we'd we’d "
                               "we'll we’ll they they're they’re you".split())

#: Words the value patterns catch that are never a value ("I'm on it", "my manager is away").
_BAD_VALUES = frozenset("""
it this that there here them him her they we you me i my our your his its their now then
today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday the a an
he she leave holiday vacation away sick call board track time fire break lunch one ones
same only other first last best next main right key part
""".split())
