"""Attributes and relations stated in one sentence: who works where, who manages whom, where
someone lives, which project, which pet, which preference, which number or deadline.

A :class:`Relation` is (subject, attribute, value) with how it was said: ``op`` ``set`` (the
value holds from now on), ``end`` (the value stops holding: "I left X") or ``add`` (one more
value of a many-valued attribute: a second pet). The subject of a first-person statement is
the speaker. The attribute names the *meaning*, so different phrasings of the same change
compare: "I work at X", "my new job is at X", "I joined X" are all ``employer``; a newer
``set`` of the same (subject, attribute) supersedes the older value (see :mod:`.pages`).

Numbers, doses and bounds are read by :mod:`.quantities`, deadlines by :mod:`.deadlines`
(both keyed as :mod:`.quantitykeys` says), trips by :mod:`.trips`, standing choices of
spelling, units, tone or format by :mod:`.choices`, values that end with no successor by
:mod:`.ended`; :mod:`.rewording` makes chat's spellings plain and reads a named person's
sentence in the first person. The record is :class:`.relationrecord.Relation`.

Nothing stated inside a condition, a supposition or a wish holds ("If I moved to Oslo …").

Pure regular expressions over the sentence: no model, reproducible.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace

from .channels import channels
from .choices import dimensions, formats
from .deadlines import deadlines
from .ended import ended
from .formats import format_values
from .irrealis import hypothetical, unrealised
from .lowercasenames import lower_case_homes, lower_case_managers
from .patternwords import BAD_VALUES, GREETINGS, KIN, NAME, NOT_SUBJECT_WORDS, PARTICLES
from .projects import MEETING, PROJECT, projects
from .quantities import bounds, quantities
from .quantitykeys import STOP_MODS, modifiers
from .relationrecord import SELF, Relation, clean_value
from .rewording import as_first_person, chat_spelling
from .tastes import key_of as taste_key
from .tastes import later as taste_after
from .tastes import stated as tastes
from .trips import trips

_N = rf"(?P<v>(?-i:{NAME}))"
_THE = r"(?:the\s+)?"
_NOW = r"(?:now\s+|currently\s+|still\s+|also\s+|just\s+|officially\s+)?"

_PET = (r"dog|dogs|cat|cats|puppy|kitten|rabbit|bunny|hamster|parrot|bird|horse|pony|"
        r"tortoise|turtle|guinea pig|ferret|fish|goldfish|lizard|snake|beagle|collie|terrier|"
        r"labrador|poodle|retriever|spaniel|tabby|husky|dachshund|pug|bulldog|corgi")
_PET_WORDS = frozenset(_PET.split("|"))


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
_f("employer", r"(?:^|[.;!]\s+|\bmy\s+)(?:first|1st)\s+(?:day|week|fortnight|month)\s+(?:at|with)\s+" + _THE + _N, event=True, vtype="organization")
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
dev sre hygienist organiser organizer advisor adviser nanny
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
#: A person's name as it follows a role word, a particle inside it too ("Pieter de Wit").
_PERSON = r"(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+(?:(?:" + "|".join(sorted(PARTICLES)) + r")\s+)?[A-Z][\w'’\-]+){0,2}))"
_f("manager", _MY + _NEW + _MANAGER + r"(?:\s+(?:today|yesterday|this\s+week)(?:\s+\([\d-]+\))?)?\s*,?\s+" + _PERSON, vtype="person")
# "after the reorg I'm under Giovanni Esposito now"
_f("manager", _IM + _NOW + r"under\s+(?-i:(?P<v>[A-Z][a-z][\w'’\-]*\s+[A-Z][a-z][\w'’\-]*))(?=\s+now\b|\s*[.,;!]|$)", event=True, vtype="person")
_f("manager", _I + _NOW + r"(?:report|am reporting|'m reporting)\s+(?:directly\s+)?to\s+" + _N, vtype="person")
_f("manager", _IM + _NOW + r"(?:reporting|going to report)\s+(?:directly\s+)?to\s+" + _N, vtype="person")
# "I've got a new line manager, Samuel Owusu", "we have a new boss: Dana Levi"
_f("manager", _I + r"(?:now\s+)?(?:got|have|have\s+got)\s+an?\s+new\s+" + _MANAGER + r"\s*[,:–—-]?\s+(?:called\s+|named\s+)?(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))", vtype="person")
_f("manager", r"(?P<v>(?-i:[A-Z][\w'’\-]*(?:\s+(?:de\s+|van\s+|von\s+)?[A-Z][\w'’\-]*)*))\s+(?:is|has become|became|will be)\s+(?:now\s+)?my\s+(?:new\s+)?(?:manager|boss|supervisor|line manager|team lead|PI)\b", vtype="person")
# partner and family: "my husband Tunde", "my wife, Ana"; the sentence usually says more
# ("my sister Lena lives in Boston"), so it stays on the timeline too (event)
_f("family", _MY + r"(?:late\s+|little\s+|older\s+|younger\s+|big\s+)?(?P<d>" + KIN + r")\s*,?\s+(?-i:(?P<v>[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2}))", op="add", event=True, vtype="person")
# project
_f("project", _IM + _NOW + r"(?:working on|leading|running|building|developing|on)\s+" + _THE + _N + r"(?=[.,;!]|\s+(?:now|project|team|as|since|from|with|for|at|in|until)\b|$)", vtype="project")
_f("project", r"\bfrom (?:today|now on|this week|monday)\s*,?\s*(?:I'm|I am|we're|we are)\s+(?:on|working on)\s+" + _THE + _N, event=True, vtype="project")
_f("project", _MY + _NEW + r"(?:main\s+|thesis\s+|current\s+|research\s+|side\s+)?project\s+is\s+" + _THE + _N, vtype="project")
_f("project", _I + r"(?:moved|switched|was moved|got moved)\s+(?:over\s+)?to\s+(?:the\s+)?" + _N + r"\s+project", event=True, vtype="project")
# home
_f("home", _I + _NOW + r"(?:live|am living|'m living|reside)\s+in\s+" + _N, vtype="place")
_f("home", _I + r"(?:have\s+|'ve\s+|just\s+|finally\s+)*(?:moved|relocated)\s+(?:back\s+|up\s+|down\s+|over\s+)?to\s+" + _N, event=True, vtype="place")
_f("home", _MY + _NEW + r"(?:home|flat|apartment|house)\s+is\s+in\s+" + _N, vtype="place")
_f("home", _I + r"(?:have\s+|'ve\s+|just\s+)*moved\s+into\s+(?:a|an|our|my|the)\s+(?:new\s+)?(?:flat|house|apartment|place|home)\s+in\s+" + _N, event=True, vtype="place")
_f("home", _IM + _NOW + r"based\s+in\s+" + _N, vtype="place")
# "finally unpacked in Fukuoka!", "now that I'm a Bengaluru resident"
_f("home", r"(?:^|[.;!:,]\s+|\bI\s+(?:have\s+|['’]ve\s+)?)(?:finally\s+|just\s+|all\s+)?(?:unpacked|moved\s+in|settled)\s+in\s+" + _N, event=True, vtype="place")
_f("home", _IM + r"(?:now\s+|officially\s+)?an?\s+" + _N + r"\s+(?:resident|local)\b", vtype="place")
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
# a tool named for a use ("I use Obsidian for my notes now", "I keep all my notes in Notion")
_f("preference", _I + _NOW + r"use\s+(?P<v>(?-i:[A-Z][\w\-+#]*))\s+for\s+(?:the\s+|my\s+|our\s+|all\s+my\s+)?(?P<k>[a-z][\w\-]*(?:\s+(?!now\b|these\b)[a-z][\w\-]*)?)(?=\s+(?:now|these days)\b|[.,;!]|$)")
_f("preference", _I + _NOW + r"keep\s+(?:all\s+)?(?:my|our)\s+(?P<k>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+(?:in|on)\s+(?P<v>(?-i:[A-Z][\w\-+#]*))(?=\s+(?:now|these days)\b|[.,;!]|$)")
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
#: A project with the lower-case words of what it is ("is leading the Atlas migration"), not a
#: meeting of it ("is running the Ember standups"): :data:`.projects.PROJECT`, :data:`.projects.MEETING`.
_N_PW = rf"(?P<s>{PROJECT})(?![\w'’\-]){MEETING}"
_V_P = rf"(?P<v>(?-i:{NAME}))"
_t("lead", _V_P + r"\s+(?:now\s+)?(?:leads|runs|heads|manages|is leading|is running|will lead|will be leading|agreed to lead|has taken over)\s+" + _THE + _N_PW, vtype="person")
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
_INTRO = r"^(?i:(?:" + GREETINGS + r")\s*[.,!]?\s+)?(?i:(?:this\s+is|it['’]s)\s+)?(?!I\b|I['’])" + _S + r"(?:\s+here)?\s*[,–—-]\s*(?:an?\s+|the\s+)?"
_t("employer", _INTRO + _JOB + r"\s+(?:at|for|with)\s+" + _THE + _N + r"(?=\s*(?:[.,;!]|$))", vtype="organization")
# "Hello, Ingrid Solberg-Haugen, assistant editor at a small publisher in Bergen."
_t("role", _INTRO + r"(?P<v>" + _JOB + r")\s+(?:at|for|with)\s+(?:the\s+|an?\s+)?[A-Za-z]")
_JOB_ONLY.add(_THIRD[-1][1])
# "The lead on the Onboarding Revamp is Chidi Okeke"
_t("lead", r"\b(?:[Tt]he)\s+(?:new\s+)?(?:lead|owner|project\s+lead)\s+(?:on|of|for)\s+(?:the\s+)?" + _N_P + r"\s+is\s+(?:now\s+)?" + _V_P, vtype="person")
# the speaker leads it: "I'm the lead on the Onboarding Revamp now", "I took over the
# Billing Rewrite from Ravi" (the value is the speaker, :data:`SELF`)
_t("lead", r"\b(?:I['’]m|I\s+am)\s+(?:now\s+)?the\s+(?:new\s+)?(?:lead|owner)\s+(?:on|of|for)\s+(?:the\s+)?" + _N_P + r"(?P<self>)", vtype="person")
# "I lead the Condor project at Andina Pagos", "I run Project Kite"
_t("lead", r"\bI\s+(?:now\s+|currently\s+)?(?:lead|run|head|manage)\s+(?:the\s+)?(?:(?P<s>(?-i:" + NAME + r"))\s+project\b"
           r"|(?-i:Project)\s+(?P<s2>(?-i:" + NAME + r")))(?P<self>)", vtype="person")
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
_SELF_INTRO = (r"^(?:(?:" + GREETINGS + r")\s*[.,!]*\s+)?(?:(?:i['’]m|im|i\s+am|this\s+is|it['’]s)\s+)?"
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
_t("lead", _N_PW + r"\s+(?:is|was)\s+(?:now\s+)?(?:led|run|owned|headed|managed|coordinated)\s+by\s+" + _V_P, vtype="person")
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
            if hypothetical(sentence, m.start()):
                continue
            out.append((attr, m, op, event))
    return out


def needs_antecedent(sentence: str) -> int | None:
    """Where a pronoun that stands for a person named before it stands in ``sentence`` (the
    speaker's manager, someone's employer), or None."""
    at = [m.start() for m in [_PRONOUN_MANAGER.search(sentence)] if m]
    at += [m.start() for _a, m, _o, _e in _pronoun_rels(sentence)]
    return min(at) if at else None


#: Words that open a role's phrase without being part of the title ("staying senior
#: technician", "still paralegal")
_NOT_TITLE = frozenset("staying remaining still being currently".split())


_SPELLED = re.compile(r"(?:written|spelled|spelt|listed|shown|abbreviated|printed|typed)\b", re.I)


def _named_first_person(sentence: str, out: list[Relation]) -> list[Relation]:
    """What a sentence states of a person named in full, read by the speaker's own patterns
    (:func:`as_first_person`), for the attributes nothing else read of that name."""
    got = as_first_person(sentence)
    if got is None:
        return []
    name, said = got
    have = {r.attr for r in out if r.subject == name}
    rels = (_first_person(said) + quantities(said) + bounds(said) + deadlines(said) + trips(said)
            + _channels(said))
    rels += [r for r in dimensions(said) if not any((o.attr, o.key) == (r.attr, r.key) for o in rels)]
    known = {v.casefold() for _f, v, _s, _e in format_values(said)}
    if known:
        rels = [r for r in rels if not (r.attr == "format" and r.value.casefold() in known)] + formats(said)
    # a project is read of a named person by the third-person patterns, with its lead
    # ("Kenji Watanabe is leading Tactile Transit Maps" is the lead, not one more project);
    # only the wordings of working on one (:func:`.projects.projects`) are theirs
    rels = [r for r in rels if r.attr != "project"]
    if "project" not in have:
        rels += [r for r in projects(said) if r.attr == "project" and not r.subject]
    return [replace(r, subject=name) for r in rels if not r.subject and r.attr not in have]


def extract(sentence: str, antecedent: str = "") -> list[Relation]:
    """Every relation stated in ``sentence`` (first-person subjects are ``""``);
    ``antecedent``: the person a "he"/"she" of the sentence stands for."""
    in_lower_case = sentence == sentence.lower()
    sentence = chat_spelling(sentence)
    out = (_first_person(sentence) + _third_person(sentence) + quantities(sentence)
           + bounds(sentence) + deadlines(sentence) + trips(sentence) + _channels(sentence) + ended(sentence)
           + (lower_case_managers(sentence) if in_lower_case else []) + lower_case_homes(sentence))
    # a taste by its kind ("I use VS Code for everything", "I'm a tea person"), when no
    # other pattern read the same value
    for v, k in tastes(sentence):
        # a tool "for" its kind's own use read by the older patterns ("Evernote for lesson
        # notes", keyed "preference notes") is the taste itself: kept as the member, the use
        # stays in the sentence on the timeline ("Evernote for recipes" stays a use of its own)
        same = [i for i, r in enumerate(out) if r.attr == "preference" and r.op == "set" and r.key == k
                and r.value.casefold().startswith(v.casefold() + " for ")]
        for i in same:
            out[i] = Relation("", "preference", v, "set", k)
        if not same and not any(r.attr == "preference" and (r.key == k or v.casefold() in r.value.casefold()) for r in out):
            out.append(Relation("", "preference", v, "set", k))
    # "I've gone off Garamond … use Inter for everything now": the end and its successor in
    # one sentence are a new value of the kind, not an end
    for i, r in enumerate(out):
        new = taste_after(r.value, sentence) if r.attr == "preference" and r.op == "end" and not r.subject else None
        if new:
            out[i] = Relation("", "preference", new, "set", taste_key(new, whole=True) or r.key)
    dims = [r for r in dimensions(sentence) if not any((o.attr, o.key) == (r.attr, r.key) for o in out)]
    # "I prefer a casual tone": the dimension's value, not a taste for "a casual"
    out = [r for r in out if not (r.attr == "preference" and any(
        re.sub(r"^(?:an?|the)\s+", "", r.value.lower()) in d.value.lower() for d in dims))] + dims
    known = {v.casefold() for _f, v, _s, _e in format_values(sentence)}
    if known:
        # a format of the vocabulary is read by formats alone (keyed by what it formats or
        # its family), whichever wording the patterns found it in: a one-off stays one
        chosen = formats(sentence)
        # a choice the preference patterns already read whole ("monthly reports as Word
        # documents") stays theirs
        chosen = [c for c in chosen if not any(r.attr == "preference" and c.value.casefold() in r.value.casefold()
                                               for r in out)]
        out = [r for r in out if not (r.attr == "format" and r.value.casefold() in known)] + chosen
    proj = projects(sentence)
    if proj:
        # a project's name with what it is ("Heron onboarding") over the same name cut at its
        # first lower-case word ("Heron")
        out = [r for r in out if not (r.attr == "project" and any(
            p.op == r.op and p.value.startswith(r.value + " ") for p in proj))]
        out += [p for p in proj if not any((o.subject, o.attr, o.value.casefold(), o.op)
                                           == (p.subject, p.attr, p.value.casefold(), p.op) for o in out)]
    out += _named_first_person(sentence, out)
    # "my title is written Sr. UX Researcher": how a value is spelled, not a new one; "I'm the
    # last programmer on Vega": who is left on it, not a title
    out = [r for r in out if not (r.attr in ("role", "employer", "manager") and _SPELLED.match(r.value))
           and not (r.attr == "role" and re.match(r"(?:last|only|sole|other|remaining|lone)\s", r.value, re.I))]
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
            v = clean_value(_own_value(sentence, m, "v"))
            if v and v.lower() not in BAD_VALUES and v != antecedent:
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
    return chat_spelling(sentence)


def stands_in(sentence: str) -> bool:
    """Whether someone stands in for someone else in ``sentence`` (cover, an acting role):
    nothing it says of a job is the person's own."""
    return bool(_COVER.search(sentence))


def _channels(sentence: str) -> list[Relation]:
    """The speaker's email addresses, numbers and handles (:mod:`.channels`), unless said in
    a condition, a plan or of a time gone by."""
    return [Relation("", "contact", value, op, key, event=op == "end")
            for key, value, op, at in channels(sentence) if not unrealised(sentence, at)]


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
                    r"|while\s+(?:he|she|they|[A-Z][\w\-]+)(?:['’]s|\s+is|\s+are)\s+(?:away|off|out|on\s+leave|sick|in\s+hospital"
                    # "while Keiko's at a conference", "while she's on a course"
                    r"|(?:at|on|in)\s+(?:a|an)\s+[a-z]+)"
                    r"|until\s+(?:he|she|they|[A-Z][\w\-]+)\s+(?:is|gets|comes|returns)(?:\s+back)?"
                    r"|(?:is|['’]s|are)\s+(?:on\s+(?:leave|holiday|vacation|sabbatical|maternity\s+leave|paternity\s+leave)|off\s+sick))\b",
                    re.I)
_STATES = frozenset("employer role manager project home contact lead".split())
#: A quantity's name that says whose it is, when that is someone else's.
_OTHERS_RE = re.compile(r"^(?:his|her|their|your)\b", re.I)


def _first_person(sentence: str) -> list[Relation]:
    """What the speaker states of themselves ("my manager is X", "I prefer X for Y")."""
    out: list[Relation] = []
    seen: set[tuple[str, str]] = set()
    for attr, rx, op, event, vtype in _FIRST:
        for m in rx.finditer(sentence):
            v = clean_value(_own_value(sentence, m, "v"))
            if not v or v.lower() in BAD_VALUES or hypothetical(sentence, m.end()) or _possessive(sentence, m, "v"):
                continue
            if rx in _JOB_ONLY and not _a_job(m, v, op):
                continue
            key = ""
            a = attr
            if attr == "favorite":
                a, key = "preference", taste_key(v, whole=True) or "favorite " + m.group("k").strip().lower()
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
                key = "contact " + modifiers(m.group("k"))
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
            if hypothetical(sentence, m.end()):
                continue
            s = clean_value(m.group("s") or m.groupdict().get("s2") or "")
            if attr == "lead":
                # "The Greenroof Pilot is led by …": a sentence's capital on "The" is no name's
                s = re.sub(r"^(?:The|Our|My)\s+(?=[A-Z])", "", s)
            if set(s.lower().split()) & NOT_SUBJECT_WORDS:
                continue  # "If I moved to Oslo": a conjunction and "I" are nobody's name
            if m.groupdict().get("v") and _possessive(sentence, m, "v"):
                continue
            if m.groupdict().get("self") is not None:
                v = SELF  # "I'm the lead on P": the speaker
            else:
                v = clean_value(_own_value(sentence, m, "v")) if m.groupdict().get("v") else ""
            if rx in _JOB_ONLY and not _a_job(m, v, op):
                continue
            detail = "move" if rx in _MOVES else (m.groupdict().get("d") or "").lower()
            if attr == "species":
                v = detail = _singular(detail)
            if not s or s.split()[0].lower() in BAD_VALUES or (v and v.lower() in BAD_VALUES):
                continue
            rel = Relation(s, attr, v, op, "", event, "" if rx in _MOVES else vtype, detail)
            if not any((o.subject, o.attr, o.value, o.op) == (s, attr, v, op) for o in out):
                out.append(rel)
    return out


def _singular(w: str) -> str:
    return w[:-1] if w.endswith("s") and w[:-1] in _PET_WORDS else w


def _pref_key(v: str) -> str:
    """A preference's topic: the last content word of its value before a preposition
    ("afternoon meetings" → "meetings", "status updates on Slack" → "updates"), so "I now
    prefer afternoon meetings" replaces "I prefer morning meetings"."""
    known = taste_key(v, whole=True)
    if known:
        return known  # "I prefer aisle seats" and "I'm a window seat person now": one key
    head = re.split(r"\s+(?:on|by|in|for|over|via|with|from|at|through|as)\s+", v.lower())[0]
    words = [w for w in re.findall(r"[a-z][\w\-]*", head) if w not in STOP_MODS]
    return "preference " + (words[-1] if words else v.lower())
