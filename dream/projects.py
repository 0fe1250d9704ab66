"""The speaker's project and who leads a project, in the wordings the rules of
:mod:`.relations` leave out.

A project's name is often a capitalised word and the lower-case words of what it is ("the
Falcon billing service", "Heron onboarding", "the Riverside clinic website"): a name read up
to its first capital only ("Heron") is another value than the one said next time. So a
project's name here runs on over at most three lower-case words, when the phrase ends right
after them (punctuation, "project", "now", "since", …): "I work on Falcon billing, the
invoicing service" → "Falcon billing"; "I work on Northwind with the ops team" → "Northwind".

Read here:

- the speaker's project: "I work on X", "I'm on the X project", "I'm building the X", "I'm a
  junior iOS dev on the X app", "they put me on X";
- a project that ended: "X got cancelled", "X was scrapped" (the speaker's project, when it is
  that value: :func:`projects` gives it as an ``end`` of X), "I'm on the bench" (no project);
- a lead said without the project's name in the sentence ("Tamsin Reid is the lead.", "The
  leader is Lucia Herrera.", "the lead is chinedu"): :func:`unnamed_lead` gives the person,
  and the extraction takes the project from what the turn said before
  (:func:`last_project_named`).

Pure regular expressions over the sentence: no model, reproducible.
"""

from __future__ import annotations

import re

from .irrealis import unrealised
from .patternwords import BAD_VALUES, NAME
from .relationrecord import Relation, clean_value

#: Lower-case words that are no word of a project's name.
_STOP = (r"a|an|the|and|or|but|so|as|at|in|on|of|for|to|with|from|by|into|onto|now|since|until|"
         r"this|that|these|those|last|next|is|are|was|were|be|been|has|have|had|do|does|did|"
         r"it|its|we|i|you|he|she|they|my|our|your|their|his|her|which|who|where|when|while|"
         r"because|though|if|then|than|there|here|too|also|still|just|only|again|already|"
         r"yesterday|today|tomorrow|week|month|year|team|project|instead|anymore|any|all|some|"
         r"not|no|very|really|right|lol|haha|btw|pls|please|got|gets|over|off|after|before|full|part")
#: What a project is, the last word of the lower-case words that go with its name ("the Atlas
#: migration", "Falcon billing", "the Riverside clinic website"); a name followed by other
#: words is the name alone ("the Ember standups", "Signbridge day to day").
HEADS = ("initiative|pilot|study|survey|campaign|app|dashboard|platform|tool|"
          "plugin|model|report|book|podcast|series|corpus|dataset|database|archive|thesis|index|toolkit|"
          "prototype|migration|redesign|rewrite|revamp|website|site|portal|service|pipeline|system|"
          "integration|rollout|upgrade|refresh|billing|onboarding|scheduler|engine|api|sdk|library|game|"
          "novel|documentary|film|album|exhibition|grant|proposal|renovation|retrofit|extension|audit|"
          "module|feature|release|overhaul|expansion|build|map|atlas|guide|course|curriculum|rebrand|relaunch|"
          "trial|refurb|refurbishment|fit-out|merger|bid|tender|programme")
#: A project's name: a capitalised name and up to three lower-case words of what it is.
PROJECT = (rf"(?-i:{NAME})(?:(?:\s+(?!(?:{_STOP})\b)(?-i:[a-z][a-z\-]+)){{0,2}}\s+(?-i:(?:{HEADS})s?)\b)?")
#: What follows a project's name when it names a meeting of the project, not the project
#: ("Pablo is running the Ember standups this week").
MEETING = (r"(?!\s+(?:stand-?ups?|meetings?|calls?|syncs?|retros?|retrospectives?|demos?|reviews?|workshops?|"
           r"sessions?|check-?ins?|huddles?|planning|training|onboarding\s+sessions?)\b)")
#: Where a project's name may end.
_END = (r"(?=\s*(?:[.,;:!?()]|$|—|–|-\s)|\s+(?:project|now|since|last|this|for|with|from|so|and|but|"
        r"until|as|at|in|which|where|these|full|part|again|anymore|instead|is|was|has|had|will|got|gets|"
        r"or|to|from|by|of|on|over|off|because|after|before|when|while|if|then)\b)")
_V = rf"(?P<v>{PROJECT}){_END}"
_I = r"\b(?:I|we)(?:['’]ve|\s+have)?\s+"
_IM = r"\b(?:I['’]m|I\s+am|we['’]re|we\s+are)\s+"
_NOW = r"(?:now\s+|currently\s+|still\s+|mostly\s+|mainly\s+|just\s+)?"

_SETS = tuple(re.compile(rx, re.I) for rx in (
    # "I work on Falcon billing", "I've been working on the Halla dashboards"
    _I + _NOW + r"(?:work|am\s+working|been\s+working|worked)\s+on\s+(?:the\s+)?" + _V,
    # "I work in Bogota in the project Puente Digital"
    _I + _NOW + r"work\b[^.;]{0,40}?\s+(?:in|on|for)\s+the\s+project\s+" + _V,
    # "I'm on the Lumen dashboard project", "I'm building the Riverside clinic website"
    _IM + _NOW + r"(?:working\s+on|building|developing|on)\s+(?:the\s+)?" + _V,
    # "I'm a junior iOS dev on the Orchard app (farm shop ordering)"
    # (not "I'm the lead on X": that is who leads it, read by relations.py)
    _IM + r"an?\s+(?:[\w\-]+\s+){0,3}?(?:dev|developer|engineer|designer|tester|analyst|"
          r"writer|researcher|illustrator|coordinator|consultant|scientist|member)\s+"
          r"(?:on|for)\s+(?:the\s+)?" + _V,
    # "I build the Halla dashboards (sales reporting)", "I run the Saturday repair café"
    _I + _NOW + r"(?:build|develop|maintain)\s+the\s+" + _V,
    # "since they put me on Northwind", "I got moved onto Heron onboarding last week"
    r"\b(?:moved|put|switched|reassigned|transferred|shifted|pulled)\s+me\s+(?:on|onto|on\s+to|over\s+to)\s+(?:the\s+)?" + _V,
    _I + r"(?:was|have\s+been|['’]ve\s+been|been|got|get)\s+(?:moved|put|switched|reassigned|transferred|shifted)\s+"
         r"(?:on|onto|on\s+to|over\s+to)\s+(?:the\s+)?" + _V,
))
#: A project of one's own named by what it is, in lower case: "I'm writing a crime novel",
#: "I'm building a budgeting app for students", "currently running the Cedar Close community
#: garden", "my supervisor put me on a seagrass restoration project". Only these heads: a
#: report or a letter one is writing is a task, not a project.
_OWNHEADS = (r"novel|book|memoir|podcast|app|game|website|blog|newsletter|mural|garden|thesis|dissertation|"
              r"documentary|film|album|startup|shop|caf[eé]|renovation|extension|project|campaign|zine|comic|"
              r"exhibition|channel")
_OWN = (rf"(?P<v>(?:(?:(?-i:[A-Z][\w'’\-]*)|(?!(?:{_STOP})\b)(?-i:[a-z][\w\-]*))\s+){{1,3}}?(?-i:(?:{_OWNHEADS})))"
        rf"(?=\s*(?:[.,;:!?()]|$)|\s+(?:for|about|on|in|with|at|now|since|so|and|but|which|that|set|called|instead|"
        rf"again|these|this|last|next|today|yesterday|(?:mon|tues|wednes|thurs|fri|satur|sun)day|at\s+the\s+moment)\b)")
#: In an end, the head alone names the project ("I've shelved the novel").
_OWN_END = _OWN.replace("{1,3}?", "{0,3}?", 1)
#: A day's errand is no project ("I'm running the shop for my dad today").
_ONE_DAY = r"(?![^.;!?]*\b(?:today|tonight|this\s+(?:weekend|morning|afternoon|evening)|for\s+(?:my|a)\s+(?:dad|mum|mom|friend|sister|brother|neighbou?r)))"
_OWN_SETS = tuple(re.compile(rx, re.I) for rx in (
    r"(?:" + _IM + _NOW + r"|(?:^|[,;]\s+)(?:currently|now)\s+)(?:writing|building|making|painting|running|developing|"
    r"designing|recording|organi[sz]ing|setting\s+up|working\s+on|starting)\s+(?:a|an|the|my|our)\s+" + _OWN + _ONE_DAY,
    r"\b(?:put|moved|switched|reassigned|transferred)\s+me\s+(?:on|onto|on\s+to|over\s+to)\s+(?:a|an|the)\s+" + _OWN,
    _I + r"(?:just\s+)?(?:started|began)\s+(?:on|work\s+on|working\s+on)\s+(?:a|an|the)\s+" + _OWN,
    # "all my evenings go into setting up a repair café now"
    r"\b(?:all\s+)?my\s+(?:evenings|weekends|mornings|nights|time|free\s+time|spare\s+time)\s+(?:go|goes|are\s+going|now\s+go)\s+"
    r"in\s?to\s+(?:setting\s+up\s+|building\s+|making\s+|writing\s+|recording\s+|running\s+)?(?:a|an|the|my)\s+" + _OWN_END,
    # "On the Harbourview renovation at the moment"
    r"(?:^|[.,;!]\s+)(?:I['’]m\s+|we['’]re\s+)?(?:currently\s+|still\s+)?on\s+the\s+" + _OWN
    + r"\s+(?:at\s+the\s+moment|right\s+now|these\s+days|for\s+now)\b",
))
#: Such a project that ended: "I've shelved the novel", "killed the budgeting app", "the
#: garden's been handed over to the council".
_OWN_ENDS = (
    re.compile(r"(?:\b(?:I|we)(?:['’]ve|\s+have)?\s+|^\s*|[.;!:,]\s+)(?:just\s+|finally\s+)?(?:shelved|killed|abandoned|"
               r"scrapped|cancell?ed|wrapped\s+up|shut\s+down|handed\s+over)\s+(?:the|my|our)\s+" + _OWN_END, re.I),
    re.compile(r"(?:^|[.;!:,]\s+|\b(?:that|now\s+that|since|and|but|so)\s+)(?:the|my|our)\s+" + _OWN_END.replace("(?=", "(?=['’]s|", 1)
               + r"(?:['’]s|\s+is|\s+has|\s+was)\s+(?:been\s+|now\s+|officially\s+)?(?:handed\s+over|finished|done|wrapped\s+up|"
               r"signed\s+off|shelved|cancell?ed|scrapped|over)\b", re.I),
)
#: "Lumen dashboard got cancelled", "the Vesper project was scrapped": it ends, whoever's it was.
_ENDS = re.compile(
    r"(?:^|[.;!:,]\s+|\b(?:and|but|so)\s+)(?:the\s+|our\s+|my\s+)?(?:project\s+)?(?P<v>" + PROJECT + r")(?:\s+project)?\s+"
    r"(?:got|was|has\s+been|have\s+been|is|just\s+got)\s+(?:officially\s+)?(?:cancell?ed|canceled|scrapped|shelved|axed|"
    r"killed|canned|shut\s+down|wound\s+down|dropped)\b", re.I)
#: No project at all now: "I'm on the bench", "I'm between projects".
_NONE = re.compile(_IM + r"(?:now\s+)?(?:on\s+the\s+bench|between\s+projects|not\s+on\s+any\s+project)\b", re.I)

#: Who leads, said without the project: "Tamsin Reid is the lead", "The leader is Lucia
#: Herrera", "the project lead is now Omar Haddad", "Now the responsible of Puente Digital is
#: Marco Ferri" (the project then named, read as is).
_WHO = rf"(?P<who>(?-i:{NAME}))"
_LEAD_WORD = r"(?:project\s+)?(?:lead|leader|owner|coordinator|manager)"
_UNNAMED_LEAD = tuple(re.compile(rx, re.I) for rx in (
    rf"(?:^|[.;!:,]\s+|\b(?:and|but|so)\s+){_WHO}\s+(?:is|['’]s)\s+(?:now\s+)?(?:the|our)\s+(?:new\s+)?{_LEAD_WORD}"
    rf"(?=\s*(?:[.,;!]|$)|\s+(?:now|here|there|and|but|so)\b)",
    rf"\b(?:the|our)\s+(?:new\s+)?{_LEAD_WORD}\s+(?:is|['’]s)\s+(?:now\s+)?{_WHO}(?=\s*(?:[.,;!(]|$)|\s+(?:now|and|but|so|who)\b)",
    # "Sven Ekdahl leads it.", "Yasmin Kaur is leading it and Tobias Richter is doing the visuals"
    # (opening its sentence: after a clause, "it" is that clause's thing: "The Friday walk is
    # nice, Maria Lopez leads it")
    rf"^\W*(?P<it>(?-i:[A-Z][a-z][\w'’\-]*\s+[A-Z][a-z][\w'’\-]*))\s+(?:now\s+)?(?:leads|heads|"
    rf"is\s+(?:now\s+)?(?:leading|heading|in\s+charge\s+of))\s+it\b",
))
#: "the responsible of X is Y", a learner's "the responsible": the project is named.
_RESPONSIBLE = re.compile(
    rf"\b(?:the\s+)?(?:responsible|person\s+responsible|in\s+charge)\s+(?:of|for)\s+(?:the\s+)?(?P<s>{PROJECT})\s+"
    rf"(?:is|['’]s)\s+(?:now\s+)?{_WHO}", re.I)
#: "Proj Bluebell (new claims portal) is led by Ravi Menon": a gloss between the project and
#: its lead.
_LED_BY = re.compile(
    rf"(?:\b[Pp]roj(?:ect)?\.?\s+)?(?P<s>{PROJECT})(?:\s+project)?\s*\([^()]{{1,60}}\)\s*(?:is|was)\s+(?:now\s+)?"
    rf"(?:led|run|owned|headed|managed|coordinated)\s+by\s+{_WHO}", re.I)
#: A project named in passing: "Project Bluebell", "Proj Bluebell", "the Orchard app
#: (farm shop ordering)", "in the project Puente Digital", "on the Greenway survey project".
_NAMED = re.compile(
    rf"\b(?:[Pp]roject|[Pp]roj\.?)\s+(?P<a>(?-i:{NAME}))"
    rf"|\b(?:on|in|for|of|with|doing)\s+(?:the\s+)?(?P<b>{PROJECT})(?=\s*\(|\s+project\b|\s*[,.;]\s|\s+for\s)",
    re.I)


def _fine(v: str) -> bool:
    words = v.split()
    return bool(words) and words[0].lower() not in BAD_VALUES and len(v) <= 60


def projects(sentence: str) -> list[Relation]:
    """The speaker's project set, or ended, in ``sentence`` (see the module's list)."""
    out: list[Relation] = []
    for m in (m for rx in _SETS for m in rx.finditer(sentence)):
        v = clean_value(m.group("v"))
        if v and _fine(v) and not unrealised(sentence, m.start()):
            out.append(Relation("", "project", v, "set", "", False, "project"))
    for m in _ENDS.finditer(sentence):
        v = clean_value(m.group("v"))
        if v and _fine(v) and not unrealised(sentence, m.start("v")):
            out.append(Relation("", "project", v, "end", "", True, "project"))
    named = {r.value.casefold() for r in out}
    for m in (m for rx in _OWN_SETS for m in rx.finditer(sentence)):
        v = clean_value(m.group("v"))
        if v and _fine(v) and v.casefold() not in named and not unrealised(sentence, m.start()):
            out.append(Relation("", "project", v, "set", "", False, "project"))
    for m in (m for rx in _OWN_ENDS for m in rx.finditer(sentence)):
        v = clean_value(m.group("v"))
        if v and _fine(v) and not unrealised(sentence, m.start("v")):
            out.append(Relation("", "project", v, "end", "", True, "project"))
    if (m := _NONE.search(sentence)) and not unrealised(sentence, m.start()):
        out.append(Relation("", "project", "", "end", "", True))
    for m in [*_RESPONSIBLE.finditer(sentence), *_LED_BY.finditer(sentence)]:
        s, who = clean_value(m.group("s")), clean_value(m.group("who"))
        if s and who and _fine(s) and _fine(who) and not unrealised(sentence, m.start()):
            out.append(Relation(s, "lead", who, "set", "", False, "person"))
    return out


def unnamed_lead(sentence: str) -> tuple[str, int] | None:
    """The person said to lead a project the sentence does not name, and where the phrase
    starts ("Tamsin Reid is the lead." → ("Tamsin Reid", 0)); None when there is none."""
    for m in (m for rx in _UNNAMED_LEAD for m in rx.finditer(sentence)):
        who = clean_value(m.groupdict().get("who") or m.groupdict().get("it") or "")
        if who and _fine(who) and not unrealised(sentence, m.start()):
            return who, m.start()
    return None


def last_project_named(text: str) -> str | None:
    """The last project ``text`` names in passing (see :data:`_NAMED`), or None."""
    found = None
    for m in _NAMED.finditer(text):
        v = clean_value(m.group("a") or m.group("b") or "")
        if v and _fine(v):
            found = v
    return found
