"""A value said again in other words. Once the memory holds a value of a subject's attribute
(a phone number, a weekly distance, a due date, a trip, a format, a manager), a later
statement that says a change ("now", "new", "moved", "pushed", "instead" …) and names a
value *of the same kind* is that attribute's new value, however the rest is worded: "I'm
bumping my weekly mileage up to 45 km" after "I run about 30 km a week", "journal moved the
deadline to 21 May" after "due by 30 April", "we moved Lisbon to September" after "Lisbon in
May". The kind comes from the value already held, so the reader needs no pattern per wording;
what it must not do — take a plan, a question, a condition or someone else's change — is
checked here (the wording) and by the caller (whose statement it is, and when)."""

from __future__ import annotations

import re

from .facts import same_phone
from .formats import format_values, same_format
from .irrealis import hypothetical, unrealised
from .lowercasenames import NOT_NAME_END, NOT_NAME_WORDS, NOT_PLACES
from .patternwords import MONTHS
from .projects import HEADS as PROJECT_HEADS
from .quantities import NUMBER, WORD_NUMBERS
from .relationrecord import SELF
from .tastes import CHANGE as TASTE_CHANGE
from .tastes import later as later_taste
from .tastes import ended as taste_ended
from .tastes import names_one as names_a_taste
from .trips import DAY_MONTH

#: Words that say something changed (or holds from now on). Without one, a value of the same
#: kind is another thing of that kind ("my sister's number is …", "the launch party is on 3 May").
_CHANGE = re.compile(
    r"\b(?:now|new|newly|instead|no\s+longer|any\s*more|switch\w*|swapp?\w*|chang\w*|mov(?:e|ed|ing)|"
    r"push\w*|pull\w*|bump\w*|rebook\w*|resched\w*|postpon\w*|delay\w*|extend\w*|brought\s+forward|"
    r"took\s+over|tak(?:e|es|ing)\s+over|handed|hands|started|starting|joined|first\s+(?:week|day|month|fortnight)|"
    r"officially|as\s+of|from\s+now\s+on|going\s+forward|updated?|cut|raised|lowered|upped|dropped|reduced|"
    r"increased|only\s+accepts?|replaced|(?:is|are)\s+out|retired|resigned|stepped\s+down|left|quit|promot\w*|"
    r"extension)\b", re.I)

#: What makes the sentence no statement of a change that happened: a plan, a wish, a question
#: put as a statement, what someone else would do.
_NOT_DONE = re.compile(
    r"\b(?:if|unless|whether|might|maybe|perhaps|probably|possibly|thinking\s+(?:of|about)|considering|"
    r"hop(?:e|ing)\s+to|plan(?:s|ning)?\s+to|would|could\s+(?:be|move|switch)|in\s+case|what\s+if|"
    r"wondering|not\s+sure|haven'?t\s+decided|undecided|offered|interview\w*|applied|applying|asked|requested|"
    r"tried\s+to|said\s+no|refused|declined|rejected|turned\s+down|originally|initially|at\s+first|used\s+to|"
    r"still|should|shall|i['’]d|gonna|wants?\s+me\s+to|fingers\s+crossed|jok(?:e|ed|ing)|kidding|not\s+moving|"
    r"nearly|almost|ago|last\s+year|visiting|for\s+the\s+(?:day|weekend|night|afternoon|morning|conference|project)|"
    r"goal\s*:|plan\s*:|wish(?:es|ed)?|for\s+a\s+(?:work\s+)?(?:trip|conference|week|month|weekend|day|holiday|visit)|"
    r"temporar\w*|until\s+(?:she|he|they)['’](?:s|re)\s+back|while\s+(?:she|he|they)['’](?:s|re)\s+(?:away|off|out)|"
    r"covering|cover\s+for|interim|acting|unchanged|the\s+same|same\s+as\s+before|hasn['’]?t\s+changed|stays|"
    r"viewed|viewing|house[-\s]hunting|looking\s+at|in\s+(?:19|20)\d\d|in\s+my\s+(?:dreams|novel|book|story|game)|"
    r"one[-\s]off|back\s+to\s+normal|no\s+change|aim(?:s|ing)?\s+(?:for|to)|no\s+wait|thought\s+(?:about|of)|thinking|"
    r"tempted|consider\w*|contemplat\w*|keeping|but\s+no(?:pe)?|nope|jk|j/k|keep\s+it\s+as\s+is|not\s+me|in\s+the\s+game|"
    r"for\s+the\s+summer|same\s+(?:city|town|area|neighbourhood|neighborhood|building|street))\b", re.I)
#: A request put as a question ("can you redo the form with my new number …?"): a question
#: that says in passing what changed. Any other question states nothing.
_ASKS_TO_DO = re.compile(r"\b(?:can|could|would|will)\s+(?:you|u)\b|\b(?:please|pls|plz)\b", re.I)

#: A change said not to happen ("the deadline can't be moved", "never moved to London").
_NEGATION = re.compile(r"\b(?:never|didn['’]?t|did\s+not|can['’]?t|cannot|couldn['’]?t|won['’]?t|wouldn['’]?t|don['’]?t|"
                       r"doesn['’]?t|isn['’]?t|wasn['’]?t|not)\s+(?:\w+\s+){0,2}$", re.I)

#: The speaker as the one who acts ("so we moved Lisbon"), not as the one who feels ("my
#: brother, who I adore, moved …").
_FIRST_PERSON = re.compile(r"\b(?:I|I['’]m|im|I['’]ve|we|we['’]re|we['’]ve)\b(?!\s+(?:adore|love|like|think|guess|hope|know|"
                           r"miss|admire|trust|mean|said|told)\b)", re.I)

#: Someone else's change, told by the user ("my brother just moved to Bristol", "she's at X
#: now", "Ana's new number …"): no statement of the user's own.
_OTHER = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:(?:new|old|little|big|younger|older|best)\s+)?(?:mum|mom|mother|dad|father|brother|"
    r"sister|flatmate|roommate|housemate|partner|wife|husband|boyfriend|girlfriend|friend|mate|colleague|coworker|"
    r"co-worker|son|daughter|kid|kids|parents|cousin|aunt|uncle|niece|nephew|neighbou?r|student|deskmate|officemate|"
    r"classmate|"
    r"grandma|grandmother|grandpa|grandfather|fianc[eé]e?|team(?:mate)?|landlord|sister-in-law|brother-in-law|"
    r"office|company|firm|department|school|business|ex|dog|cat|doctor|dentist|plumber|(?P<boss>boss|manager|supervisor))\b"
    r"|\b(?-i:[a-z]+)['’]s\s+(?:new\s+)?(?:number|phone|mobile|email|address|job|boss|manager|flat|house|place|trip|"
    r"deadline|title|role)\b"
    r"|(?-i:^(?!(?:It|That|What|There|Here|Finally|Officially|Just|Recently|Also|Totally|Fully|Completely|Now|So|Then|"
    r"Today|Yesterday|Honestly|Basically|Actually|Ok|Okay|Well|Yes|Yeah|Anyway|Sadly|Luckily|Apparently)\b)"
    r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?(?=,|['’]s\s|\s+(?:now|is|has|had|just|moved|got|started|joined|reports|went|switched|swapped|uses|prefers|"
    r"loves|drinks|gave|changed)\b))"
    r"|(?:^|[.;,!]\s*|\b(?:and|so|but)\s+)(?:he|she|they|mum|mom|dad|mother|father)\b(?!\s+\w+\s+me\b)"
    r"|\b(?:my|our)\s+[a-z]+\s+(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+(?!is\s+(?:now\s+)?my\b)"
    r"|(?-i:^(?!(?:i|we|im|ive|just|finally|so|ok|okay|now|also|and|but|then|well|yeah|yes|lol|haha|ugh|officially|"
    r"recently|fully|totally|completely|basically|actually|literally|permanently|properly|"
    r"new|got|started|moved|switched|joined|first|since|from|today|bumped|cut|upped|dropped|booked|pushed|"
    r"pulled|rebooked|changed|sorry|hey|hi|hello|update|quick|big|good|bad|news|trip|deadline|it|this|that|there|the|"
    r"my|our|everything|nothing|plan|meeting|launch|project|team|job|work|rent|budget|goal|number|email|phone|address|"
    r"flight|flights|date|format|title|role|lease|move|wedding|hotel|office|contract|they|he|she|you)\b)[a-z]+\s+(?:moved|started|joined|switched|"
    r"got|is|has|just|went|left|quit)\b)"
    r"|\b(?:congrats|congratulations|kudos|shout-?out)\s+(?:to\s+)?(?-i:[A-Z])"
    r"|(?-i:\b(?!(?:I|It|That|What|There|Here|Let|He|She|Who|Where|Today|Everything|Nothing)['’])[A-Z][a-z]+['’]s\s+"
    r"(?!been\b|got\b|gone\b))", re.I)

_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_PHONE = re.compile(r"\+?\d[\d ()\-]{5,}\d(?![\w])")
_MONTH = re.compile(rf"\b(?:early\s+|mid-?|late\s+|the\s+end\s+of\s+)?(?:{MONTHS})\b", re.I)
_DAY = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})|(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?)\b",
                  re.I)


def _plain_number(n: str) -> str:
    n = n.strip().lower()
    return WORD_NUMBERS.get(n, re.sub(r"[£$€¥,\s]", "", n))


def _negated(text: str, start: int) -> bool:
    """Is the value at ``start`` said not to hold ("…, not 40", "no longer 40", "(was 40)")?"""
    before = text[max(0, start - 14):start].lower()
    wider = text[max(0, start - 30):start].lower()
    return bool(re.search(r"\b(?:not|no\s+longer|was|from|instead\s+of|rather\s+than|than)\s*\(?\s*$", before)
                or re.search(r"\b(?:don['’]?t|never|no\s+more)\s+(?:\w+\s+){0,3}(?:as|in)\s+(?:an?\s+)?$", wider))


def _contact(old: str, text: str) -> str | None:
    if "@" in old:
        found = [m for m in _EMAIL.finditer(text) if m.group(0).lower() != old.lower()]
    else:
        found = [m for m in _PHONE.finditer(text) if sum(c.isdigit() for c in m.group(0)) >= 7
                 and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0)) and not same_phone(m.group(0), old)]
    found = [m for m in found if not _negated(text, m.start()) and not _NOT_A_CONTACT.search(text[max(0, m.start() - 40):m.start()])]
    return found[0].group(0).strip() if len(found) == 1 else None


def _unit(old: str) -> tuple[str, str, str] | None:
    """(number, what it counts, the rest) of a quantity value: "30 km a week" → ("30", "km",
    " a week"), "£300 a month" → ("£300", "£", " a month")."""
    m = re.match(rf"\s*(?P<n>{NUMBER})\s*(?P<u>[^\W\d_]+|%)?(?P<rest>.*)$", old, re.I)
    if not m:
        return None
    n, u = m.group("n"), (m.group("u") or "")
    if n[:1] in "£$€¥":
        return n, n[:1], (u and " " + u) + m.group("rest")
    return (n, u, m.group("rest")) if u else None


_ADVERB = {"day": r"\bdaily\b", "week": r"\bweekly\b", "month": r"\bmonthly\b", "year": r"\b(?:yearly|annual)", "night": r"\bnightly\b"}


def _number(old: str, text: str) -> str | None:
    parts = _unit(old)
    if parts is None:
        return None
    n_old, unit, rest = parts
    period = re.search(r"\b(day|week|month|year|night)", rest, re.I)
    if period and not re.search(rf"\b{period.group(1)}|{_ADVERB.get(period.group(1).lower(), '^$')}", text, re.I):
        return None  # "ran 12 km today" says no weekly distance
    if unit in "£$€¥":
        rx = re.compile(rf"{re.escape(unit)}\s?(\d+(?:[.,]\d+)*k?)(?![\w])")
    else:
        stem = unit.lower().rstrip("s")
        rx = re.compile(rf"(?<![\w.,])({NUMBER})\s*{re.escape(stem)}s?\b", re.I)
    found = [m for m in rx.finditer(text) if _plain_number(m.group(1)) != _plain_number(n_old)
             and not _negated(text, m.start())]
    if len(found) != 1:
        return None
    new = found[0].group(1)
    # the period as the new sentence says it ("$300/week", "15 km a week"), else the old one's
    per = re.match(r"(?:\s*/\s*|\s+(?:a|per|each|every)\s+)(?:day|week|month|year|night)\b", text[found[0].end():], re.I)
    if per and re.match(r"\s*(?:/|a\b|per\b|each\b|every\b)", rest, re.I):
        rest = per.group(0)
    return f"{unit}{new}{rest}" if unit in "£$€¥" else f"{new} {unit}{rest}"


#: A due date of someone else's ("my sister's deadline", "our team's deadline … but mine").
_OTHERS_DUE = re.compile(r"\b\w+['’]s\s+(?:\w+\s+)?deadline\b|\bfor\s+everyone\s+else\b|\bbut\s+mine\b|\bmine\s+(?:stays|didn)"
                         r"|\bmine['’]?s\s+still\b|\bfor\s+(?:his|her|their)\s+(?!own\b)\w+"
                         r"|\b(?:my|our)\s+(?:colleague|sister|brother|friend|partner|wife|husband|son|daughter|flatmate|"
                         r"roommate|classmate|teammate|deskmate|coworker|co-worker)\b"
                         # another thing moved: "the meeting about the deadline moved to 7 May"
                         r"|^\W*(?:so\s+|and\s+)?the\s+(?:meeting|call|appointment|party|event|session|class|interview|review|"
                         r"dinner|flight|webinar|workshop|talk)\b", re.I)
#: A due date moved, said of what is due by a word of its own ("the deadline", "moved it").
_DUE_WORDS = re.compile(r"\b(?:deadline|due\s+date|submission\s+date|hand-?in|extension|"
                        r"(?:moved|pushed|pulled|brought|postponed|delayed|extended)\s+it)\b", re.I)


def _deadline(old: str, text: str) -> str | None:
    found = [m for m in _DAY.finditer(text) if not _negated(text, m.start())
             and " ".join(m.group(0).lower().split()) != " ".join(old.lower().split())]
    return found[0].group(0) if len(found) == 1 and (_DAY.search(old) or re.search(r"\d{4}-\d{2}-\d{2}", old)) else None


#: Things an output comes as: a sentence about one of these is about that one's format.
_OUTPUTS = re.compile(r"\b(?:reports?|drafts?|tables?|charts?|figures?|diagrams?|docs?|documents?|slides?|"
                      r"summar(?:y|ies)|transcripts?|invoices?|minutes|notes|references?|"
                      r"letters?|emails?|files?|exports?|spreadsheets?|sheets?)\b", re.I)


def _format(old: str, text: str) -> str | None:
    # as written ("WebVTT", not the vocabulary's "VTT"): the page's line is checked against it
    # of the old one's family: an image format replaces no document format ("charts as PNG")
    was = {fam for fam, _v, _s, _e in format_values(old)}
    found = [(text[s:e], s) for fam, v, s, e in format_values(text)
             if v.casefold() != old.casefold() and text[s:e].casefold() != old.casefold()
             and not same_format(v, old) and not _negated(text, s) and (not was or fam in was)]
    values = {v.casefold(): v for v, _s in found}
    return next(iter(values.values())) if len(values) == 1 else None


#: Before a trip's new place: "going to naples instead", "trip is Mauritius now", "booked malta".
_TRIP_ELSEWHERE = (r"\b(?:going|go|flying|fly|headed|heading|off|doing|booked|rebooked|switched|changed|swapped)\s+"
                   r"(?:it\s+|the\s+trip\s+)?(?:to\s+|for\s+)?|\btrip\s+(?:is|['’]s)\s+(?:to\s+)?(?:now\s+)?")
_TRIP_AFTER = r"(?=[^.;!?]{0,20}\b(?:instead|now)\b)"


def _moved_to(text: str, m: re.Match[str]) -> bool:
    """Is the date at ``m`` where the trip went ("moved Lisbon to September", "Seoul in April
    instead", "now flying out 21 May")?"""
    return bool(re.search(r"\b(?:to|till|until|into|out)\s+(?:the\s+)?$", text[max(0, m.start() - 12):m.start()], re.I)
                or re.match(r"\s*(?:now|instead)\b", text[m.end():], re.I))


def _trip(old: str, text: str) -> str | None:
    """"Lisbon in May" moved to another month ("we moved Lisbon to September"); a place said
    with a month is left to the trip patterns."""
    m = re.match(rf"(?P<place>.+?)\s+(?:(?:in|on|from|for)\s+)?(?P<when>(?=\d|early|mid|late|{MONTHS}).*(?:{MONTHS}).*)$", old, re.I)
    place = m.group("place") if m else old
    at = re.search(rf"(?<![\w-]){re.escape(place)}(?![\w-])", text, re.I)
    if not at:
        # somewhere else instead ("going to naples instead", "trip is Mauritius now")
        elsewhere = _named(_TRIP_ELSEWHERE, "place", _TRIP_AFTER)(place, text)
        if elsewhere is None:
            return None
        # the place alone: the sentence gives no month, and a page line must say only what its
        # source says ("same dates" keeps the old ones without naming them)
        return elsewhere
    if not m:
        return None
    if not at or re.match(r"\s+(?!(?:trip|holiday|visit|break|getaway|weekend|to|in|for|now|then|instead|is|was|on|and|"
                          r"from|until|till)\b)[a-z]", text[at.end():]):
        return None  # "the Lisbon festival got moved to June": the festival, not the trip
    if re.search(r"\b\d{1,2}(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:" + MONTHS + r"))", text, re.I):
        return None  # "to November, the 8th to the 22nd": the days are the trip patterns' to read
    days = [x for x in re.finditer(DAY_MONTH + r"(?!\d)", text, re.I) if not _negated(text, x.start())
            and _moved_to(text, x)]
    if days:
        got = {x.group(0) for x in days if x.group(0).lower() not in m.group("when").lower()}
        return f"{place} on {got.pop()}" if len(got) == 1 and len(days) == 1 else None
    months = [x for x in _MONTH.finditer(text) if not _negated(text, x.start())
              and x.group(0).lower() not in m.group("when").lower() and _moved_to(text, x)]
    if len(months) != 1:
        return None
    when = months[0].group(0)
    return f"{place} in {when.replace('the end of ', 'late ')}"


#: A name as typed: capitalised words ("Teodor Vasilescu", "Marisol Clinic"), or, in a
#: sentence typed in lower case, the words right after the cue that introduces it.
#: A capitalised name, and the same that may run on into a possessive "'s" ("Ben's").
_CAP_NAME_OPEN = (r"(?:I['’]m(?=\s)|[A-Z][\w\-]+|[A-Z]{2,})(?:\s+(?:of|&|and|de|van|der|da|di|du|del|le)?\s*(?!I\b|I['’])"
                  r"(?:[A-Z][\w\-]+|[A-Z]{2,})){0,3}(?:['’][A-Z][a-z]+)?")
_CAP_NAME = _CAP_NAME_OPEN + r"(?![\w'’])"
_LOW_NAME = r"[a-z][a-z'’\-]{2,}\s+[a-z][a-z'’\-]{2,}"
_NOT_NAME = frozenset("""the a an my our his her their this that it its i me we you he she they now today
tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january february march april
may june july august september october november december week month year team office job work boss
manager lead project everyone nobody someone somebody anyone nothing here there home again too also
and but so for with from on in at to of is was as new old next last first weekend""".split())

#: Before a new manager's name ("my new boss Teodor Vasilescu", "I report to X now").
_MANAGER_BEFORE = (r"(?:\b(?:my|our)\s+|^\W*|[.;!]\s*)new\s+(?:line\s+)?(?:boss|manager|mgr|supervisor|team\s+lead)"
                   r"(?:\s+(?:as\s+of|since|from)\s+(?:last\s+|this\s+)?\w+)?\s*(?:is\s+|will\s+be\s+|[:,-]\s*)?"
                   r"|\b(?:i|i['’]?m|we)\s+(?:now\s+)?report(?:ing)?\s+(?:directly\s+)?to\s+|\b(?:i['’]?m|i\s+am|am)\s+under\s+"
                   r"|(?:\bmy|['’]s)\s+(?:new\s+)?(?:line\s+)?(?:manager|boss|supervisor)\s+is\s+(?:now\s+)?")
#: After a new manager's name ("Priya Shah is my new manager").
_MANAGER_AFTER = r"\s+is\s+(?:now\s+)?my\s+(?:new\s+)?(?:line\s+)?(?:manager|boss|supervisor)\b"
#: Before a project's new lead ("handed Kestrel over to Felipe Rocha", "the new lead is X").
_LEAD_BEFORE = (r"\bhand(?:ed|s|ing)\s+(?:[\w'’\-]+\s+){0,4}?(?:over\s+)?to\s+"
                r"|\bnew\s+(?:project\s+)?(?:lead|owner|head|director|coordinator)\s*(?:is\s+|[:,-]\s*)"
                r"|\b(?:lead|owner|director)\s+is\s+(?:now\s+)?|\b(?:now\s+)?led\s+by\s+")
#: After a project's new lead ("Jonas Lund is running Kingfisher now", "Siobhan Kelly is
#: taking over the garden").
_LEAD_AFTER = (r"\s+(?:is\s+|['’]s\s+|has\s+)?(?:now\s+)?(?:runs|running|run|leads|leading|heads|heading|took\s+over|"
               r"taking\s+over|taken\s+over|is\s+the\s+new\s+(?:[\w\-]+\s+)?(?:lead|owner|head))\b")


def _names_at(text: str, before: str = "", after: str = "") -> list[str]:
    """The names ``text`` gives right after ``before`` or right before ``after``."""
    out = []
    for name_rx in (_CAP_NAME, _LOW_NAME):
        if name_rx is _LOW_NAME and any(w[:1].isupper() for w in re.findall(r"[^\W\d_]+", text)[1:] if w != "I"):
            continue  # a sentence with capitals writes names with them: its lower-case words are none
        rx = rf"(?i:{before})(?P<n>{name_rx})" if before else rf"(?<![\w'’])(?P<n>{name_rx})(?=(?i:{after}))"
        for m in re.finditer(rx, text, 0 if name_rx is _CAP_NAME else re.I):
            name = m.group("n")
            if name_rx is _CAP_NAME and not before and m.start() == 0 and " " not in name:
                continue  # a capital that only opens the sentence
            if name.lower() in ("i", "i'm", "i’m", "im"):
                out.append(name)
                continue
            words_ = [w for w in name.split() if w.lower() not in _NOT_NAME
                      and (name[:1].isupper() or (w not in NOT_NAME_WORDS and not NOT_NAME_END.search(w)))]
            if words_ and len(words_) == len(name.split()):
                out.append(name)
    return out


def _person(before: str, after: str):
    def read(old: str, text: str) -> str | None:
        found = {n for n in _names_at(text, before=before)} | ({n for n in _names_at(text, after=after)} if after else set())
        old_words = {w.lower() for w in old.split()}
        found = {n for n in found if not {w.lower() for w in n.split()} <= old_words}
        if len(found) != 1:
            return None
        name = found.pop()
        if name.lower() in ("i", "i'm", "i’m", "im"):
            return SELF
        return name if name[:1].isupper() else " ".join(w.capitalize() for w in name.split())
    return read


#: Before a new employer's name ("first week at Oxbow Labs", "I joined corvane shipping",
#: "she's at Marisol Clinic now", "moved to Kestrel Motion").
_EMPLOYER_BEFORE = (r"\bfirst\s+(?:week|day|month|fortnight)\s+at\s+|\bjoined\s+|\bstart(?:ed|ing)?\s+at\s+"
                    r"|\bnew\s+job\s+(?:at|with)\s+|\b(?:moved|switched|gone|went)\s+(?:over\s+)?to\s+"
                    r"|\b(?:i['’]?m|i\s+am|she['’]s|he['’]s)\s+(?:now\s+)?at\s+|\bwork(?:ing|s)?\s+(?:at|for)\s+")
#: Before a new home ("moved to Utrecht", "my new flat in utrecht", "I'm in cork now").
_HOME_BEFORE = (r"\b(?:moved|shifted|relocated)\s+(?:back\s+|up\s+|down\s+|over\s+)?to\s+|\b(?:since|after)\s+moving\s+(?:back\s+)?to\s+"

                r"|\bnew\s+(?:flat|place|house|apartment|home)\s+in\s+|\b(?:settled|living|live|lives)\s+in\s+"
                r"|\b(?:i['’]?m|i\s+am|we['’]re|we\s+are|she['’]s|he['’]s)\s+(?:now\s+)?(?:living\s+|based\s+)?in\s+")
_LOW_PLACE = r"[a-z][a-z\-]{2,}(?:\s+[a-z][a-z\-]{3,}(?=\s*(?:[,.;!)]|$|\s+(?:now|is|and|since|with|for|last|this)\b)))?"
#: Where one is without living there: no home.
_NOT_HOMES = frozenset("""hospital bed town class school work office trouble pain charge transit quarantine isolation
love debt shock bits tears person public private""".split())


def _named(before: str, kind: str, after: str = ""):
    """A reader of an organisation or a place named right after ``before`` (and before
    ``after``, a lookahead): capitalised, or one word in a sentence typed in lower case."""
    def read(old: str, text: str) -> str | None:
        found = set()
        for m in re.finditer(rf"(?i:{before})(?:the\s+)?(?P<n>{_CAP_NAME})(?!\s*\d){after}", text):
            found.add(m.group("n"))
        if not any(w[:1].isupper() for w in re.findall(r"[^\W\d_]+", text)[1:] if w != "I"):
            # no "the": "joined the book club", "moved to the suburbs" name no employer, no home
            rx = rf"(?:{before})(?P<n>{_LOW_NAME if kind == 'org' else _LOW_PLACE}){after}"
            for m in re.finditer(rx, text, re.I):
                n = m.group("n")
                if all(w not in _NOT_NAME and w not in NOT_NAME_WORDS and w not in NOT_PLACES and w not in _NOT_HOMES
                       for w in n.split()) \
                        and not NOT_NAME_END.search(n.split()[0]):
                    found.add(" ".join(w.capitalize() for w in n.split()))
        old_l = old.lower()
        found = {n for n in found if n.lower() not in _NOT_NAME and n.lower() not in old_l and old_l not in n.lower()
                 and not _negated(text, text.lower().find(n.lower()))}
        return found.pop() if len(found) == 1 else None
    return read


#: Before a new title ("as the new head of pastry", "starting as data engineer", "I'm
#: senior copywriter now", "promoted to team lead").
_ROLE_BEFORE = (r"(?-i:\b[A-Z][a-z]+)['’]s\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:new\s+)?(?=[a-z][a-z\s]*?\bnow\b)|\bas\s+(?:the\s+|a\s+|an\s+)?new\s+|\bstart(?:ed|ing)?\s+(?:as\s+|my\s+new\s+job\s+as\s+)(?:an?\s+|the\s+)?"
                r"|\bgot\s+the\s+(?=[a-z][a-z\s]*?\s+(?:post|job|role|position)\b)|\bpromoted\s+to\s+(?:an?\s+|the\s+)?|(?:^\W*|\bI\s+(?:just\s+)?)got\s+promoted\W+(?:[^\w\s]+\s*)*(?=[a-z])|\b(?:i['’]?m|i\s+am|she['’]s|he['’]s)\s+(?:now\s+|officially\s+)?(?:an?\s+|the\s+)?(?:new\s+)?")
#: What a title ends in: a word of a trade or of rank.
_ROLE_END = re.compile(r"^(?:manager|engineer|analyst|developer|dev|designer|nurse|teacher|lead|head|director|coordinator|"
                       r"officer|writer|copywriter|editor|principal|chef|cook|consultant|accountant|architect|scientist|"
                       r"researcher|assistant|associate|administrator|admin|specialist|supervisor|technician|planner|"
                       r"producer|reporter|journalist|lawyer|paralegal|solicitor|attorney|pharmacist|therapist|"
                       r"physiotherapist|physio|doctor|surgeon|librarian|instructor|lecturer|professor|tutor|intern|trainee|"
                       r"apprentice|clerk|cashier|receptionist|executive|president|founder|controller|auditor|strategist|"
                       r"marketer|recruiter|agent|advisor|adviser|counsel|chief|dean|fellow|partner|owner|programmer|"
                       r"tester|mechanic|electrician|plumber|carpenter|driver|pilot|paramedic|midwife|caretaker|"
                       r"principal|headteacher|headmaster|headmistress|curator|translator|interpreter|buyer|"
                       r"merchandiser|bookkeeper|economist|statistician|epidemiologist|ecologist|geologist|"
                       r"surveyor|inspector|coach|trainer|captain|sergeant|officer|registrar|resident|"
                       r"postdoc|lecturer|barista|baker|butcher|waiter|waitress|bartender|host|steward|stewardess)s?$")
#: Words that end like a title and are none ("I'm over at X now", "I'm better now").
_NOT_ROLE = frozenset("""over never ever later better together other rather under after either neither whether
sooner faster older younger bigger smaller happier busier earlier closer further super proper sober clever eager
here there where member volunteer parent mother father sister brother partner""".split())
#: Titles that are as often something else ("a dog owner", "the driver for our carpool"):
#: a title only with a word of work in the sentence.
_NOT_ONLY_A_JOB = frozenset("owner driver coach host captain partner trainer agent resident fellow chief steward".split())
_AT_WORK = re.compile(r"\b(?:job|work|role|title|promot\w*|position|hired|company|office|contract|salary|team|"
                      r"manager|boss)\b", re.I)
_ROLE_AFTER = (r"(?=\s*(?:[.,;!:)(]|$|\s+(?:now|as\s+of|from|since|at|on|for|in|starting|today|this|next|i|i['’]m|we|post|"
               r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b))")


#: Titles that alone say who leads a project ("I'm the lead on quokka-billing"), not a job.
_BARE_LEADS = ("lead", "head", "owner")


def _title_words(r: str) -> tuple[list[str], str] | None:
    """The words of ``r`` (lower case) and its head word ("head of innovation" → "head") when
    the head is a word of a trade or of rank, else None."""
    ws = r.split()
    head = ws[ws.index("of") - 1] if "of" in ws else ws[-1]
    ok = _ROLE_END.search(head) and head not in _NOT_ROLE and r not in _BARE_LEADS
    return (ws, head) if ok else None


def _role(old: str, text: str) -> str | None:
    found = set()
    for m in re.finditer(rf"(?:{_ROLE_BEFORE})(?P<r>(?:[a-z][a-z\-]+\s+){{0,2}}?[a-z][a-z\-]+(?:\s+of\s+[a-z][a-z\-]+)?){_ROLE_AFTER}",
                         text, re.I):
        r = m.group("r").lower()
        got = _title_words(r)
        if got is None:
            continue
        ws, head = got
        if (head not in _NOT_ONLY_A_JOB or _AT_WORK.search(text)) \
                and not any(w in _NOT_NAME or w in NOT_NAME_WORDS or w in _NOT_ROLE for w in ws if w not in ("of", head)) \
                and r != old.lower() and not r.endswith(" " + old.lower()):
            found.add(r)
    return found.pop() if len(found) == 1 else None


#: Where the speaker's new project is named: "I'm on the Marlow Street library build now",
#: "the Kingsgate upgrade I'm on now", "moved me off Atlas onto Beacon".
_PROJECT_BEFORE = (r"\b(?:i['’]?m|i\s+am)\s+(?:now\s+)?(?:on|working\s+on)\s+|\bmoved\s+(?:me\s+)?(?:off\s+\S+(?:\s+\S+)?\s+)?"
                   r"(?:on|onto)\s+|\bput\s+me\s+on\s+|\bswitched\s+(?:me\s+)?(?:over\s+)?to\s+")
_PROJECT_AFTER = r"(?=(?:\s+[a-z][a-z\-]+){0,3}(?:\s*\([^)]*\))?\s+(?:(?:that\s+)?i['’]?m\s+on|now|this\s+(?:week|sprint|month)|instead)\b)"


def _project(old: str, text: str) -> str | None:
    names = {m.group("n") for m in re.finditer(rf"(?i:{_PROJECT_BEFORE})(?:the\s+)?(?P<n>{_CAP_NAME}){_PROJECT_AFTER}", text)}
    names |= {m.group("n") for m in re.finditer(rf"(?<![\w'’])(?P<n>{_CAP_NAME})(?=(?:\s+[a-z][a-z\-]+){{0,3}}\s+(?:that\s+)?"
                                                rf"(?i:i['’]?m\s+on\s+now)\b)", text)}
    names = {n for n in names if n.lower() not in _NOT_NAME and n.lower() not in old.lower() and old.lower() not in n.lower()}
    return names.pop() if len(names) == 1 else None


_READERS = {"contact": _contact, "number": _number, "deadline": _deadline, "format": _format, "trip": _trip,
            "manager": _person(_MANAGER_BEFORE, _MANAGER_AFTER), "lead": _person(_LEAD_BEFORE, _LEAD_AFTER),
            "employer": _named(_EMPLOYER_BEFORE, "org"), "home": _named(_HOME_BEFORE, "place"),
            "role": _role, "project": _project, "preference": later_taste}


#: A value of a kind the readers take: an address, a number, a date or month, a name.
_ANY_VALUE = re.compile(rf"@|\d|(?i:\b(?:{MONTHS})\b)|(?<=\s)[A-Z]")


#: Someone else's words the sentence quotes ("proofread this: 'I have moved to Marseille …'").
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘.*?’(?=$|[\s.,;:!?)])|(?:(?<=^)|(?<=[\s:(]))'.*?'(?=$|[\s.,;:!?)])")


#: What the speaker asks to be rendered ("translate to french: I've moved to Marseille"):
#: words written for someone else, not a statement of the speaker's.
_THEIR_WORDS = re.compile(r"\b(?:translate|proofread|draft|rewrite|reword|correct|check|edit|polish)\b[^:]{0,60}:.*$", re.I)


def may_say_a_change(text: str) -> bool:
    """Can ``text``, a request or a question, say in passing that a value changed ("can you
    redo the order form with 055 219 0364, my new number")? Cheap: the words of a change and
    a value of some kind, nothing that makes it a plan."""
    return bool((_CHANGE.search(text) or TASTE_CHANGE.search(text)) and (_ANY_VALUE.search(text) or names_a_taste(text))
                and not _NOT_DONE.search(text))


_GONE = re.compile(r"\s*(?:is\s+|['’]s\s+|has\s+)?(?:out|off|gone|left|leaving|retired|retiring|moved\s+on|quit|resigned|"
                   r"stepped\s+down|on\s+leave)\b", re.I)


def _restated(old: str, text: str) -> bool:
    """Is ``old`` itself said in ``text``, not as what stood before ("not 30 April", "from 30 April")?"""
    at = text.lower().find(old.lower().strip())
    return at >= 0 and not _negated(text, at)


def _in_old(words: str, old: str, rest: str) -> bool:
    """Does a name the sentence opens with belong to the old value ("Clare is out. New line
    manager: Tobias Engel" after Clare Whitfield)?"""
    first = re.sub(r"['’]s$", "", words.strip()).lower()
    return bool(first) and first.split()[0] in old.lower().split() and _GONE.match(rest) is not None


#: What a sentence must speak of for a value of these kinds in it to be the attribute's: a
#: contact its channel, a format an output or how it is wanted, a number its period or goal.
_NEEDS = {
    "contact": re.compile(r"\b(?:number|phone|mobile|cell|e-?mail|address|contact|reach\s+me|whatsapp|signature)\b", re.I),
    "format": re.compile(r"\b(?:send|give|make|want|wants|need|needs|prefer|prefers|export|accepts?|deliver|convert|"
                         r"from\s+now\s+on|going\s+forward|instead\s+of|please|pls|can\s+you|could\s+you)\b", re.I),
    "employer": re.compile(r"\b(?:job|role|position|company|firm|employer|hired|contract|colleagues?|onboarding|boss|"
                           r"manager|salary|redundan\w*|notice|resign\w*|payroll|team|first\s+(?:week|day|month|fortnight)|"
                           r"new\s+place|works?\s+(?:at|for)|working\s+(?:at|for)|offer|work\s+there|linkedin|badge|"
                           r"(?:years?|yrs?|months?)\s+at)\b", re.I),
    "home": re.compile(r"\b(?:live|lives|living|lived|moved|move|moving|flat|house|home|apartment|settled|residents?|rent|"
                       r"lease|left|relocat\w*|shifted|commute|neighbou?rhood|unpack\w*)\b", re.I),
}
#: A channel said to be the speaker's own ("my new number", "reach me at", "new email: …").
_MINE = re.compile(r"\bmy\s+(?:new\s+|work\s+|personal\s+|own\s+)?(?:number|phone|mobile|cell|e-?mail|address|contact|signature)"
                   r"|\b(?:reach|text|call|email|contact)\s+me\b|^\W*(?:ok\W+|so\W+)*(?:new|changed)\s+(?:number|phone|mobile|e-?mail|address)\b", re.I)
#: Numbers that belong to something else than a value kept: an order, a parcel, an account.
_NOT_A_CONTACT = re.compile(r"\b(?:tracking|order|parcel|iban|account|invoice|reference|ref|booking|flight|ticket|isbn|"
                            r"ext|id|sim|serial|pin|client|customer)\s*(?:number|no\.?|#|code|serial|e-?mail)?\s*(?:is\s+|:\s*)?$|\b(?:forward|cc|bcc|send|sent|mail|email)\w*\s+"
                            r"(?:[\w']+\s+){0,4}?to\s*$", re.I)


#: The words of saving and of spending, for a rate keyed "amount saved" / "amount spent".
_MONEY_KIND = {"saved": re.compile(r"\b(?:sav\w*|put\w*\s+(?:away|aside)|set\w*\s+aside|deposit)\b", re.I),
               "spent": re.compile(r"\b(?:spend\w*|spent|budget)\b", re.I)}


def _leads(text: str, name: str, project: str) -> bool:
    """Does ``text`` give ``project`` itself to ``name`` (not its slides, its stand-up or its
    testing workstream): "X is running P now", "P's new lead is X", "handed P over to X",
    "X is the new P lead", "P is now led by X"?"""
    who = r"(?:I['’]m|I|im)" if name == SELF else re.escape(name)
    p = rf"(?:the\s+)?{re.escape(project)}(?:\s+(?:{PROJECT_HEADS}))?(?![\w'’-])(?!\s+(?!(?:project|now|from|as|since|for|instead|too|and|not|over|to|is|was|has|lead|team|this|last|on)\b)[a-z])"
    return any(re.search(rx, text, re.I) for rx in (
        rf"{who}\s+(?:is\s+|['’]s\s+|has\s+|am\s+)?(?:now\s+)?(?:running|runs|run|leads|leading|heads|heading|took\s+over|"
        rf"taking\s+over|taken\s+over)\s+{p}",
        rf"{p}(?:['’]s)?\s*(?:[:,-]\s*)?(?:new\s+)?(?:project\s+)?(?:lead|owner|head|director)\s+(?:is\s+|[:,-]\s*)(?:now\s+)?{who}",
        rf"hand(?:ed|s|ing)\s+(?:{p}|it|the\s+project|the\s+lead)\s+(?:over\s+)?to\s+{who}",
        rf"{who}\s+is\s+(?:now\s+)?the\s+new\s+(?:{re.escape(project)}\s+)?(?:project\s+)?(?:lead|owner|head)",
        rf"{p}\s+is\s+(?:now\s+)?led\s+by\s+{who}"))


def _from_to(attr: str, old: str, text: str) -> str | None:
    """The value after "from OLD to …" ("moved over from account executive to account
    manager", "switched from Trello to Linear", "went from 30 to 45 km a week"): the held
    value named as left, the next one of its kind after "to"."""
    words = [re.escape(w) for w in re.findall(r"[^\W_][\w.@+'’\-]*", old)]
    if not words:
        return None
    whole = r"\s+".join(words) + r"(?![\w'’\-])"
    m = re.search(rf"(?:\b(?:I|I['’]ve|I\s+have|we|we['’]ve|ive|im|I['’]m)\s+|^\W*)(?:(?:just|finally|recently|officially|fully|also|"
                  rf"have|been|got)\s+)*(?:moved|switched|went|changed|transferred|swapped)\s+"
                  rf"(?:over\s+|back\s+|across\s+|jobs\s+|roles\s+)?from\s+(?:the\s+|my\s+|an?\s+)?{whole}(?:\s+[a-z][\w'’\-]*){{0,3}}?"
                  rf"\s+(?:to|into|onto)\s+(?:the\s+|an?\s+)?"
                  rf"(?P<v>[^\s,.;:!?()]+(?:\s+(?!(?:now|last|this|since|in|on|at|for|and|but|so|because|after|which|as|from)\b)"
                  rf"[^\s,.;:!?()]+){{0,3}})", text, re.I)
    if m is None:
        return None
    v = m.group("v")
    if attr == "role":
        head = v.lower().split()[-1]
        return v.lower() if _ROLE_END.search(head) and head not in _NOT_ROLE else None
    if attr in ("employer", "home", "manager", "lead", "project"):
        caps = re.match(rf"(?:{_CAP_NAME})", v)
        return caps.group(0) if caps and caps.group(0).lower() not in _NOT_NAME else None
    if attr == "number":
        return _number(old, v) if re.search(r"\d", v) else None
    if attr == "deadline":
        return _deadline(old, v)
    return None


#: The attributes a later value or an end is read for.
KINDS = frozenset(_READERS)


def later_value(attr: str, old: str, text: str, own: bool = True, about: str = "") -> str | None:
    """The new value of ``attr`` that ``text`` states in place of ``old``: a value of the same
    kind, in a sentence that says a change happened; None when it says none, or more than one
    value of the kind, or only a plan. ``own``: the sentence is read as its speaker's own
    statement (it does not name the subject), so one that tells of somebody else's change
    states nothing. ``about``: what a due date or a format is of ("audit report", "draft"):
    a date moved is that one's when the sentence names it by one of these words, or as "the
    deadline" or "it"; a format is not when the sentence names another output.
    :data:`.SELF` for a lead that is the speaker ("I'm taking over Heron")."""
    read = _READERS.get(attr)
    text = _THEIR_WORDS.sub("", _QUOTED.sub(" ", text))
    if read is None or not old or _NOT_DONE.search(text) or not (any(
            not _NEGATION.search(text[max(0, m.start() - 30):m.start()]) for m in _CHANGE.finditer(text))
            or attr == "preference" and TASTE_CHANGE.search(text)):
        return None
    if attr in _NEEDS and not _NEEDS[attr].search(text) or (own and attr == "contact" and not _MINE.search(text)):
        return None  # "ran 12 km today, new personal best!": no word of a kept rate, an address, an output
    names_it = any(re.search(rf"\b{re.escape(w[:-1] if w.endswith('s') else w)}", text, re.I)
                   for w in about.split() if len(w) > 3)
    if attr == "number" and re.match(r"\s*[£$€¥]", old) and not (names_it or any(
            _MONEY_KIND[w].search(text) for w in about.split() if w in _MONEY_KIND)):
        return None  # "my gym membership is now £40 a month" is no saving of £300 a month
    if attr == "deadline" and (not (_DUE_WORDS.search(text) or names_it) or _OTHERS_DUE.search(text)):
        return None  # "the dentist moved my appointment to 5 May" moves no deadline of mine
    if attr == "format" and about and not names_it and _OUTPUTS.search(text):
        return None  # "reports as PDF now" changes no format of the drafts
    if attr in ("deadline", "contact") and _restated(old, text):
        return None  # "the deadline is 30 April, the kickoff moved to 3 May"
    new = read(old, text) or _from_to(attr, old, text)
    if new is None or (attr == "lead" and about and not _leads(text, new, about)):
        return None
    at = -1 if new == SELF else text.lower().find(new.lower())
    if at < 0 and new != SELF:
        at = text.lower().find(new.lower()[:6])  # a value written otherwise ("Kestrel" of "kestrel pharma")
    if "?" in text[max(at, 0):] and not _ASKS_TO_DO.search(text) and not re.search(r"[:;,]", text[max(at, 0):text.find("?", max(at, 0))]):
        return None  # "should we move Lisbon to July?", "is the deadline moved to 7 May? my prof said so"
    # a trip or a due date is a plan by nature: "is going to Cape Town in December now"
    if at >= 0 and (hypothetical if attr in ("trip", "deadline") else unrealised)(text, at):
        return None
    # a due date is moved by others by nature ("my editor pushed it back", "they moved it"):
    # whose it is, :data:`_OTHERS_DUE` tells
    if own and attr != "deadline" and at >= 0 and any(
            not _FIRST_PERSON.search(text, o.end(), at) for o in _OTHER.finditer(text, 0, at)
            if not (attr == "manager" and o.group("boss")) and not _in_old(o.group(0), old, text[o.end():])):
        return None  # "my brother just moved to Bristol", not "my sister can't, so we moved Lisbon to May"
    return new


# --------------------------------------------------------------------------- a correction
#: The words a quick fix names each attribute by, right before its new value ("manager is Dev
#: now", "update: works at Globex", "Nomvula — moved to the Coastal Wetlands study").
_SLOT = {
    "employer": r"\b(?:works?\s+(?:at|for)|working\s+(?:at|for)|employer(?:\s+is)?|job\s+(?:is\s+)?at|joined|company(?:\s+is)?|"
                r"(?:is|['’]s)\s+(?:now\s+)?at|new\s+job\W*(?:\w+\s+){0,3}?at)",
    "home": r"\b(?:lives?\s+in|living\s+in|home(?:\s+is)?|based\s+in|moved\s+to|relocated\s+to)",
    "manager": r"\b(?:manager|mgr|boss|supervisor|line\s+manager)(?:\s+is)?|\breports?\s+to",
    "lead": r"\b(?:lead|owner|head)(?:\s+is)?|\bled\s+by|\brun\s+by",
    "project": r"\b(?:project(?:\s+is)?|works?\s+on|working\s+on|moved\s+to\s+(?=the\s)|assigned\s+to|on\s+(?=the\s))",
    "number": r"\b(?:goal|target|budget|limit|threshold|cap)(?:\s+is)?",
    "deadline": r"\b(?:deadline|due(?:\s+date)?)(?:\s+is)?(?:\s+(?:extended|moved|pushed|changed)(?:\s+back|\s+out)?(?:\s+\w+){0,3}?\s+to)?",
}
#: Between a slot's words and its value: "is", "now", a colon, an arrow.
_SLOT_GAP = r"\s*(?:(?:is|['’]s|=|:|->|→|now|the|a|an)\s*)*"
#: The held value said to be gone: "not X", "no longer X", "instead of X", "from X to",
#: "X is out", "X anymore", "X -> Y".
_GONE_BEFORE = r"\b(?:not|no\s+longer|no\s+more|instead\s+of|formerly|left|leaving|replaced)\s+(?:at\s+|in\s+|the\s+|a\s+|an\s+)?"
_GONE_AFTER = r"\s*(?:is\s+|['’]s\s+|are\s+)?(?:out|gone|over|done|finished|history|old\s+news|any\s*more|no\s+more|->|→)"
#: A title named in a correction: "Piotr is test lead now", "now a charge nurse".
_FIX_ROLE = re.compile(rf"(?:\b(?:is|['’]s|am|now)\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:new\s+)?|^\W*|[:—–-]\s*|(?:->|→)\s*)"
                       rf"(?P<r>(?-i:[a-z][a-z\-]+\s+){{0,2}}?(?-i:[a-z][a-z\-]+|[A-Z]{{2,5}})(?:\s+of\s+[a-z][a-z\-]+)?){_ROLE_AFTER}", re.I)
_MONTH_DAY = re.compile(rf"^(?:{MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday)$", re.I)
#: Two names of one value, not a change ("Maggie is Margaret Oduya, same person").
_SAME_ONE = re.compile(r"\b(?:same\s+(?:person|one|place|company|thing)|aka|a\.k\.a|also\s+known\s+as|calls?\s+(?:her|him|them|it)|"
                       r"nick-?name|short\s+for|goes\s+by|spelled|spelt|written|typo|misspel\w*)\b", re.I)
#: What a correction may call the subject's own value by ("Ana's manager is …"); any other
#: noun after the subject's possessive is someone or something else ("Ana's sister", "Ana's
#: long run", "Ana's office").
_OWN_SLOTS = frozenset("""new manager boss mgr supervisor job employer company home flat house address project lead title role
deadline due goal target budget limit threshold number phone mobile email contact weekly daily monthly""".split())


_PEOPLE_SLOTS = frozenset("manager boss mgr supervisor lead".split())


def _someone_else(text: str, subject: str, old: str, attr: str) -> bool:
    """Is the correction about someone or something other than the subject's value: another
    person's possessive ("Ben's report"), the subject's relative or thing ("Ana's sister
    moved to York", "Ana's commute is 8 km"), another person opening it ("Ben is team lead
    now, not Ana"; "it's Ben who joined Globex"), the subject named as who it is not ("…,
    not Ana"), or the held value as the one who acts ("Dev Patel now reports to Priya")?"""
    first = subject.split()[0].lower() if subject else ""
    names = {w.lower() for w in subject.split()}
    old_words = {w.lower() for w in re.findall(r"[\w\-]+", old)}
    for m in re.finditer(r"(?-i:\b([A-Z][\w\-]+))['’]s\s+(\w+)(?:\s+(\w+))?", text):
        who, noun = m.group(1).lower(), m.group(2).lower()
        if (m.group(3) or "").lower() in _OWN_SLOTS:
            noun = m.group(3).lower()  # "Ana's running goal"
        if who in old_words and attr in ("manager", "lead"):
            return True  # "Dev Patel's boss is Priya Shah": the held manager's own
        if who in old_words or who in _NOT_NAME or who in ("it", "that", "what", "there", "here", "let"):
            continue
        if who not in names or noun not in _OWN_SLOTS or (attr == "role" and noun in _PEOPLE_SLOTS):
            return True
    if re.search(r"\b(?:manager|boss|supervisor)['’]s\s+(?:manager|boss|supervisor)\b"
                 r"|\b(?:her|his|their)\s+(?:partner|husband|wife|sister|brother|mum|mom|dad|mother|father|son|daughter|"
                 r"friend|colleague|boss|manager|mentor)\b", text, re.I):
        return True
    if first and re.search(rf"\bnot\s+{re.escape(first)}\b", text, re.I):
        return True
    opener = re.match(r"\W*(?:(?:correction|update|fyi|note|actually|ok|so)\W+)*(?:it['’]s\s+)?(?-i:([A-Z][a-z]+))\b(?:\s+[A-Z][a-z]+)?"
                      r"(?=['’]s\s+been|\s+(?:is|was|has|joined|works|moved|lives|reports|got|who|left)\b)", text)
    if opener and opener.group(1).lower() not in names and opener.group(1).lower() not in old_words \
            and opener.group(1).lower() not in _NOT_NAME:
        return True
    if attr in ("manager", "lead") and re.search(rf"(?:{'|'.join(re.escape(w) for w in old_words) or '(?!)'})\W+(?:\w+\W+){{0,2}}?"
                                                 r"(?:now\s+)?(?:reports?|reporting)\s+to\b", text, re.I):
        return True
    return False


def _fix_names(old: str, text: str, subject: str) -> list[tuple[str, int]]:
    """Names a correction gives that are neither the held value's nor its subject's, with
    where each starts."""
    old_words = {w.lower() for w in re.findall(r"[\w\-]+", old)}
    subj = {w.lower() for w in subject.split()}
    out = []
    for m in re.finditer(rf"(?<![\w'’])(?P<n>{_CAP_NAME_OPEN})(?![\w])", text):
        n = re.sub(r"['’]s$", "", m.group("n"))
        words = [w.lower() for w in n.split()]
        if n in ("I", "I'm", "I’m") or all(w in old_words or w in subj or w in _NOT_NAME or _MONTH_DAY.match(w)
                                          for w in words) or _negated(text, m.start()):
            continue
        out.append((n, m.start()))
    return out


def corrected_value(attr: str, old: str, text: str, about: str = "", subject: str = "") -> str | None:
    """The value a correction card ``text`` gives ``attr`` in place of ``old``, read by the
    held value's kind, for the wordings of a quick fix that say no change in words ("Nile
    Crescent is out. Sahel Trust Finance since June", "not Guadalajara — Monterrey since
    April", "weekly km target 40 now", "portfolio: 26 March", "Piotr is test lead now, not QA
    analyst"). A correction is a change by its nature; what it must show is that it is about
    this value: the held value said to be gone (then the one value of the kind it names), or
    the value in the attribute's slot ("manager is Dev now", "goal 2.5 L"). Not: a question, a
    plan, someone else's value ("Ben's manager …"), two names of one value."""
    if attr not in _SLOT and attr != "role" or not old:
        return None
    text = _THEIR_WORDS.sub("", _QUOTED.sub(" ", text))
    if _NOT_DONE.search(text) or _SAME_ONE.search(text) or re.search(r"\bmay\s+(?:be|move|switch|change|join)\b", text, re.I) \
            or ("?" in text and not _ASKS_TO_DO.search(text)):
        return None
    if _someone_else(text, subject, old, attr) or re.search(r"\b(?:also|too|as\s+well|in\s+addition|on\s+the\s+side)\b",
                                                            text, re.I):
        return None
    if attr in ("deadline", "contact") and _restated(old, text) and not re.search(
            rf"{re.escape(old)}\s*(?:->|→|to\b)", text, re.I):
        return None  # "draft due 20 April, final 30 April"
    v = "(?:" + "|".join(re.escape(w) for w in re.findall(r"[^\W_][\w.@+\-]*", old)[:3]) + ")"
    gone = re.search(_GONE_BEFORE + v, text, re.I) or re.search(v + r"\b" + _GONE_AFTER, text, re.I)
    names_it = [w for w in about.split() if len(w) > 3]
    slot = re.compile(rf"(?:{_SLOT[attr]}|{'|'.join(re.escape(w) for w in names_it) or '(?!)'}){_SLOT_GAP}$", re.I) \
        if attr in _SLOT else None

    def in_slot(at: int) -> bool:
        return bool(gone) or (slot is not None and slot.search(text[max(0, at - 40):at]) is not None)

    found: list[str] = []
    if attr in ("employer", "home", "manager", "lead", "project"):
        for n, at in _fix_names(old, text, subject):
            end = at + len(n)
            if not in_slot(at):
                continue
            if attr in ("employer", "home", "project") and re.match(
                    r"(?:\s+[A-Z][\w\-]*)*\s+(?:team|office|branch|department|project|club|society|choir|league|gym|app|board)\b",
                    text[at + len(n):]) and not (attr == "project" and re.match(r"\s+project\b", text[at + len(n):])):
                continue  # "moved to the Manchester team", "joined the Leeds Rowing Club"
            if attr in ("employer", "home", "project") and (
                    re.search(r"\b(?:led|run|managed|headed|owned|supervised|coordinated)\s+by\s+$", text[:at], re.I)
                    or re.match(r"\s+(?:now\s+)?(?:leads|runs|manages|heads|owns|is\s+(?:now\s+)?(?:leading|running|managing|"
                                r"the\s+(?:new\s+)?lead|my\s+(?:new\s+)?(?:manager|boss)))\b", text[end:], re.I)):
                continue  # "Project Heron is led by Mateus Costa now": who leads it, not where or what
            head = re.match(rf"\s+((?:{PROJECT_HEADS})s?)\b", text[end:], re.I) if attr == "project" else None
            if attr == "project" and head is None and re.search(r"\s[a-z][\w\-]+$", old):
                # a name with what it is, as the held one has ("Greenline onboarding" → "Copperleaf pricing")
                head = re.match(r"\s+((?!(?:now|not|since|from|instead|anymore|and|or|with|for|at|in|on|is|was)\b)[a-z][\w\-]+)\b",
                                text[end:])
            found.append(n + (" " + head.group(1) if head else ""))
        if attr == "home":
            found = [n for n in found if len(n.split()) <= 3]
    elif attr == "role":
        if not (gone or re.search(r"\b(?:now|role|title|promoted|position)\b|->|→", text, re.I)):
            return None
        for m in _FIX_ROLE.finditer(text):
            r = m.group("r")
            if r[:1].isupper() and not r.isupper():
                continue  # "manager is Dev now": a name, not the title "dev"
            r = r.lower()
            got = _title_words(r)
            if got is None:
                continue
            ws, head = got
            if r != old.lower() and not _negated(text, m.start("r")) \
                    and not any(w in NOT_NAME_WORDS or w in _NOT_NAME and w not in ("team", "project", "lead", "office")
                                for w in ws if w not in ("of", head)):
                found.append(r)
    elif attr == "number":
        parts = _unit(old)
        if parts:
            n_old, unit, rest = parts
            money = unit in "£$€¥"
            for m in re.finditer(rf"(?<![\w.,])(?P<n>[£$€¥]?{NUMBER})(?P<u>\s*(?:%|(?!(?:a|an|per|now|not|instead|from|since|"
                                 rf"or|and|to|for|each|every)\b)[^\W\d_]+))?", text, re.I):
                n, u = m.group("n"), (m.group("u") or "").strip()
                period = re.search(r"\b(day|week|month|year|night)", rest, re.I)
                said_period = period is not None and re.search(
                    rf"\b{period.group(1)}|{_ADVERB.get(period.group(1).lower(), '^$')}", text, re.I) is not None
                if _plain_number(n) == _plain_number(n_old.lstrip("£$€¥")) or _negated(text, m.start()) \
                        or (n[:1] in "£$€¥") != money or not (in_slot(m.start()) or (u and said_period)):
                    continue
                if u and u.lower().rstrip("s") != unit.lower().rstrip("s") and not (
                        re.fullmatch(r"[a-z]{1,2}|%", u, re.I) and unit.lower()[:1] == u.lower()[:1]):
                    continue  # "£50" or "10000 steps" for "30 km a week": another quantity
                if money:
                    found.append(f"{unit}{n.lstrip('£$€¥')}{rest}")
                elif u and u.lower() != unit.lower():
                    found.append(f"{n} {u}".replace(" %", "%"))
                else:
                    found.append(f"{n}{unit}{rest}" if unit == "%" else f"{n} {unit}{rest}")
    elif attr == "deadline":
        if _OTHERS_DUE.search(text):
            return None
        new = _deadline(old, text)
        found = [new] if new and in_slot(text.find(new)) else []
    distinct = {f.lower() for f in found}
    return found[0] if len(distinct) == 1 else None


#: Words that end a value with nothing in its place, by attribute. ``{v}`` stands for the held
#: value's own words (its first content word), ``{n}`` for the nouns the attribute goes by.
_ENDS = {
    "employer": (r"\b(?:made\s+redundant|laid\s+off|let\s+go|fired|sacked)\b[^.;!?]{0,30}?\b(?:from|at|by)\s+{v}"
                 r"|\b(?:quit|resigned\s+from|left)\s+{v}\b[^.;!?]{0,40}\b(?:no\s+job|not\s+working|job\s+hunting|unemployed|"
                 r"between\s+jobs|taking\s+a\s+break)"
                 # "the hotel restaurant shut for good and they let the whole kitchen go … I'm not working anywhere"
                 r"|\b{v}\b[^.;!?]{0,40}\b(?:shut|closed|went\s+bust|folded|went\s+under|let\s+(?:the\s+whole|everyone|us|me))\b"
                 r".{0,120}?\b(?:not\s+working|no\s+job|between\s+jobs|unemployed|job\s+hunting)"),
    "role": r"\b(?:abolished|scrapped|eliminated|cut)\s+(?:my\s+|the\s+)?(?:[\w\-]+\s+){0,3}?(?:role|title|position)\b|\bwithout\s+a\s+title\b"
            r"|\bno\s+title\b"
            r"|\bno\s+longer\s+(?:a|an|the)\s+{v}\b|\bstepped\s+down\s+as\s+{v}\b",
    "manager": r"\b{v}\b[^.;!?]{0,40}\b(?:left|retired|quit|resigned|moved\s+on|is\s+gone)\b[^.;!?]{0,80}?"
               r"\b(?:report(?:ing)?\s+to\s+(?:nobody|no\s+one)|no\s+(?:manager|boss)|haven['’]t\s+named\s+anyone|not\s+replacing|"
               r"(?:don['’]?t|do\s+not)\s+report\s+to\s+anyone|nobody\s+replaced|frozen\s+(?:her|his|the)\s+post)"
               r"|\b(?:doesn['’]?t|don['’]?t|does\s+not|do\s+not)\s+have\s+a\s+(?:manager|boss)\s+any\s*more\b",
    "lead": r"\b{v}\b[^.;!?]{0,30}\b(?:stepped\s+down|left|quit|resigned)\b[^.;!?]{0,60}?[.;,]?\s*\b(?:no\s+(?:lead|one\s+leads)|"
            r"nobody\s+(?:leads|is\s+leading)|without\s+a\s+lead)",
    "contact": r"\b(?:got\s+rid\s+of|gave\s+up|cancelled|canceled|deleted|closed|no\s+longer\s+have)\s+(?:my\s+)?(?:{n})\b"
               r"|\b(?:deleted|closed|cancelled|canceled|shut\s+down)\s+(?:my\s+|the\s+)?{v}\s+(?:account|address|inbox|email)\b",
    "number": r"\b(?:ditched|dropped|gave\s+up|given\s+up|stopped|quit|scrapped|abandoned)\s+(?:on\s+)?(?:the\s+|my\s+)?(?:\w+\s+)?"
              r"(?:{n}|{v})\b",
    "deadline": r"\bno\s+(?:fixed\s+|firm\s+|hard\s+)?(?:{n})\b|\b(?:{n})\s+(?:is|was|got|has\s+been)\s+(?:dropped|scrapped|removed|"
                r"cancelled|canceled|lifted)",
    "format": r"\bdon['’]?t\s+(?:worry\s+about|need|bother\s+with)\s+{v}\s+any\s*more\b|\bno\s+(?:more\s+|need\s+for\s+)?{v}\b"
              r"[^.;!?]{0,40}\bany\s+format",
    "project": r"\b{v}\b[^.;!?]{0,30}?\b(?:got\s+|was\s+|has\s+been\s+)?(?:cancelled|canceled|scrapped|shelved|killed|canned|"
               r"axed|shut\s+down|is\s+dead|is\s+over)\b",
    "trip": r"\b(?:cancel|cancelled|canceled|called\s+off|scrapped)\s+(?:the\s+|my\s+|our\s+)?{v}\b|\b{v}\s+(?:trip\s+)?(?:is\s+|got\s+)?"
            r"(?:off|cancelled|canceled|called\s+off)\b",
}
#: What each attribute is called ("{n}" above).
_NOUNS = {"contact": r"phone(?:\s+number)?|number|e-?mail(?:\s+address)?|mobile",
          "number": r"goal|target|budget", "deadline": r"deadline|due\s+date|(?:launch|submission)\s+date"}


def ended(attr: str, old: str, text: str, own: bool = True) -> bool:
    """Does ``text`` say that ``old``, ``attr``'s value, ended with nothing in its place ("got
    made redundant from Larkspur last week", "the reorg abolished my product owner role",
    "brenda left … I report to nobody", "cancelled Iceland", "ditched the step goal")? The
    held value's own words or the attribute's nouns must be there, and an ending word; the
    same plans, questions, quotations and other people's changes as :func:`later_value` are
    no ending."""
    text = _THEIR_WORDS.sub("", _QUOTED.sub(" ", text))
    if attr == "preference":
        at = taste_ended(old, text)  # a taste named whole, by tastes.py
    else:
        rx = _ENDS.get(attr)
        words_ = [w for w in re.findall(r"[^\W\d_][\w'’\-]*", old) if w.lower() not in _NOT_NAME and len(w) > 2]
        if rx is None or not (words_ or attr in _NOUNS):
            return False
        # an address by any of its words ("the fjordmail account" of lars.eriksson@fjordmail.no)
        picked = words_ if attr == "contact" else words_[:2]
        v = "(?:" + "|".join(re.escape(w.rstrip("s")) + r"\w*" for w in picked) + ")" if picked else "(?!)"
        m = re.search(rx.replace("{v}", v).replace("{n}", _NOUNS.get(attr, "(?!)")), text, re.I)
        at = m.start() if m else None
    if at is None or _NOT_DONE.search(text) or ("?" in text[at:] and not _ASKS_TO_DO.search(text)):
        return False
    # a job or a title is ended by others by nature ("they abolished the role", "they let the
    # whole kitchen go"): "they" there is the employer, not somebody else's change
    return not (own and any(not _FIRST_PERSON.search(text, o.end(), at) for o in _OTHER.finditer(text, 0, at)
                            if not _in_old(o.group(0), old, text[o.end():])
                            and not (attr in ("role", "employer") and o.group(0).strip(" .,;!").lower() == "they")))
