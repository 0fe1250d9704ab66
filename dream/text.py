"""Deterministic text tools for dream: transcripts, sentences, subjects, relative dates.

No model, no network: subjects are found by rules (capitalised runs, speakers, organisation
and place cues), which is what an offline, reproducible maintainer can afford. A synthesizer
with a better extractor (an LLM) can replace these through :mod:`brainfs.dream.synth`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass

from brainfs.cache.layout import turn_ref
from brainfs.cache.search import dates
from brainfs.cache.search.chunker import chunk_file, normalize_date, split_frontmatter
from brainfs.cache.search.queryterms import STOPWORDS
from brainfs.cache.search.text import ASCII_LETTERS, slug_words

# --------------------------------------------------------------------------- transcripts


@dataclass(frozen=True)
class Turn:
    """One transcript turn: ``[D3:7] Mara: text``."""

    session: str
    anchor: str
    speaker: str
    text: str
    ordinal: int
    day: str | None = None  # the turn's own day (``turn_times``) when it is not the session's

    @property
    def ref(self) -> str:
        return turn_ref(self.session, self.anchor)


@dataclass
class Transcript:
    session: str
    date: str | None  # ISO date (YYYY-MM-DD) of the session
    participants: list[str]
    turns: list[Turn]
    title: str | None = None  # the frontmatter's ``title`` (an import's own title), if any


#: A tool call and its result, as importers write them (cache/FORMAT.md): one line of the
#: assistant's, "[tool: Bash] ls -la (312 lines of output: …)". It says what was run, not
#: what anyone said: never a summary sentence or a fact.
TOOL_TURN_RE = re.compile(r"^\[tool: [^\]]*\]")


def is_tool_turn(text: str) -> bool:
    """Whether a turn's text is a tool call (see :data:`TOOL_TURN_RE`)."""
    return bool(TOOL_TURN_RE.match(text))


_IMPERATIVE_RE = re.compile(r"(?:^|[:;]\s+|[.!?]\s+)([A-Z][a-z]+)\s+(?:my|your|our|their|his|her|"
                            r"me|us|them|it|this|these|those|all|every)\b")


def imperative_openers(sentence: str) -> set[str]:
    """Capitalised words that open a clause as a verb ("Still true: Format my citations
    in APA"): followed by a pronoun or a possessive, a clause's first word is an order, not a
    name."""
    return {m.group(1) for m in _IMPERATIVE_RE.finditer(sentence)}


def md5_hex(data: bytes | str) -> str:
    """The S3 single-part ETag of ``data`` (so local and remote state compare)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.md5(data).hexdigest()


def parse_transcript(path: str, text: str) -> Transcript:
    """Parse a transcript with the same rules the search index uses (cache.chunker), so a
    turn dream cites is a turn recall can return."""
    meta, _body, _bad = split_frontmatter(text)
    meta = meta or {}
    session = path.split("/")[-2]  # the path, not the frontmatter, is what citations name
    date = normalize_date(meta.get("date"))
    day = date[:10] if date else None
    parts = meta.get("participants") or []
    if isinstance(parts, str):
        parts = [p.strip() for p in parts.split(",") if p.strip()]
    turns: list[Turn] = []
    for ch in chunk_file(path, text):
        if ch.kind != "turn" or not ch.speaker:
            continue
        # The chunker's searchable prefix ("Mara (8 May 2023): "); the turn's own words
        # follow. Its date is the turn's own where ``turn_times`` gives one, which need not
        # be the session's day (a talk that runs past midnight), so any date is taken off.
        prefix = re.match(re.escape(ch.speaker) + r"(?: \([^()]*\))?: ", ch.text)
        body = ch.text[prefix.end():] if prefix else ch.text
        own = (ch.created or "")[:10] or None
        turns.append(Turn(session, ch.anchor, ch.speaker, body.strip(), len(turns),
                          own if own and own != day else None))
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    title = " ".join(str(meta.get("title") or "").split()) or None
    return Transcript(session, day, [str(p) for p in parts] or speakers, turns, title)


# --------------------------------------------------------------------------- words

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[\"“'(]?[A-Z0-9])")
#: A title's abbreviation ("Dr. Emeka Nwosu", "St. Aldric"): its full stop ends no sentence.
_TITLE_END_RE = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|Prof|Rev|St|Mt|Messrs|Capt|Sgt|Gen|Col|Lt)\.$")


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def content_words(text: str) -> list[str]:
    """Lower-cased words minus stopwords and 1-letter tokens."""
    out = []
    for w in words(text):
        w = w.replace("’", "'")
        if w.endswith("'s"):
            w = w[:-2]
        if len(w) > 1 and w not in STOPWORDS and w not in _CHATTER:
            out.append(w)
    return out


#: A full stop, "!" or "?" before a word in lower case: a sentence ends there too in chat
#: written without capitals ("hi, im yasmin. i report to hana. can you help?"), unless the
#: word before is an abbreviation ("e.g. this", "approx. 5").
_LOWER_SENT_RE = re.compile(r"(?<=[.!?])(?<!\betc\.)(?<!\bvs\.)(?<!\bapprox\.)(?<!\bno\.)(?<!\bmin\.)(?<!\bmax\.)"
                            r"(?<!\bcf\.)(?<!\binc\.)(?<!\bltd\.)(?<!\bcorp\.)(?<!\bco\.)(?<!\.\.\.)"
                            # a letter and a stop before: "p.m.", "e.g.", "U.S.", "Ph.D.", "dr. kim"
                            r"(?<!\w\.\w\.)(?<!(?<![\w.])\w\.)\s+(?=[a-z])")
_CAPITAL_AFTER_STOP_RE = re.compile(r"[.!?]\s+[A-Z]")
#: Titles before a name, in any case ("dr. kim", "mr. jones").
_TITLE_END_ANYCASE_RE = re.compile(_TITLE_END_RE.pattern, re.I)


#: An emoji and the space after it: chat ends a sentence with one as with a full stop ("the
#: app has no lead now 🙃 how do we decide?" is a statement and a question).
_EMOJI = "[\U0001F300-\U0001FAFF\u2600-\u27BF]"
_EMOJI_END_RE = re.compile(f"(?:(?<={_EMOJI})|(?<={_EMOJI}\ufe0f))\\s+(?=\\S)")


def sentences(text: str) -> list[str]:
    """Sentences of a turn (a shared-image caption stays with its sentence)."""
    text = " ".join(text.split())
    out: list[str] = []
    # only a text that never opens a sentence with a capital is cut before a lower-case word
    # (in written prose a stop before one is an abbreviation: "Dr. Kim. She said 5 p.m. on friday")
    lower = text[:1].islower() or not _CAPITAL_AFTER_STOP_RE.search(text)
    for s in (p for chunk in _EMOJI_END_RE.split(text) for part in _SENT_RE.split(chunk)
              for p in (_LOWER_SENT_RE.split(part) if lower else [part])):
        s = s.strip()
        if not s:
            continue
        if out and _TITLE_END_ANYCASE_RE.search(out[-1]):
            out[-1] += " " + s  # "… introduced me to Dr. Emeka Nwosu …" is one sentence
        else:
            out.append(s)
    return out


_OPEN_SINGLE = re.compile(r"(?:(?<=^)|(?<=[\s(:\[]))['‘](?=\S)")
_CLOSE_SINGLE = re.compile(r"(?<=\S)['’](?=$|[\s.,;:!?)\]])")


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` gives someone else's words in quotation marks: straight double quotes
    paired in order, curly ones by their shape, and single quotes that open after a space or
    a colon and close before one (an apostrophe inside a word, "Jo's", is neither)."""
    spans: list[tuple[int, int]] = []
    dq = [m.start() for m in re.finditer(r'"', text)]
    spans += [(a, b) for a, b in zip(dq[::2], dq[1::2])]
    spans += [(m.start(), m.end()) for m in re.finditer(r"“[^”]*”|«[^»]*»", text)]
    at = 0
    while (o := _OPEN_SINGLE.search(text, at)) is not None:
        c = _CLOSE_SINGLE.search(text, o.end())
        if c is None:
            spans.append((o.start(), len(text)))  # a quotation left open runs to the end
            break
        spans.append((o.start(), c.end()))
        at = c.end()
    return spans


def quoted_sentences(text: str, sents: list[str] | None = None) -> list[bool]:
    """For each of :func:`sentences` of ``text`` (``sents`` when the caller has them): does it
    begin inside a quotation, or lie in one for more than half its length (a pasted email,
    'She wrote: "I moved to Leeds."')? Its "I" and "my" are the quoted writer's, not the
    speaker's."""
    flat = " ".join(text.split())
    spans = _quoted_spans(flat)
    out: list[bool] = []
    at = 0
    for s in sentences(text) if sents is None else sents:
        start = flat.find(s, at)
        if start < 0:
            out.append(False)
            continue
        at = start + len(s)
        inside = sum(max(0, min(b, at) - max(a, start)) for a, b in spans)
        out.append(any(a < start < b for a, b in spans) or inside * 2 > len(s))
    return out


def slugify(title: str) -> str:
    """File-name slug of a subject: ASCII-folded (``Aydın Koç`` → ``aydin-koc``), lower
    case, hyphens."""
    s = "-".join(slug_words(title.translate(ASCII_LETTERS)))
    if not s:
        s = "subject-" + md5_hex(title)[:8]
    return s[:80]


# --------------------------------------------------------------------------- subjects

#: Capitalised words that are not subjects (greetings, pronouns, calendar words, fillers).
NOT_SUBJECT = frozenset("""
i i'm i've i'll i'd hey hi hello thanks thank wow yes yeah yep no nope oh ok okay sure great
cool awesome nice good congrats congratulations sorry please well so and but or the a an this
that these those what when where who why how which it it's its my your our their his her he
she we they you me us them there here then now just also really totally absolutely omg lol
haha aww ah um hmm mom dad mum mother father sister brother wife husband son daughter kids
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight
january february march april may june july august september october november december
mr mrs ms dr let let's is are was were do does did have has had can could would should will
shared image love like definitely anyway btw same exactly glad happy take bye see
""".split())

ORG_CUES = ("inc", "ltd", "llc", "corp", "company", "co", "coop", "co-op", "lab", "labs",
             "university", "college", "school", "institute", "foundation", "group", "club",
             "team", "association", "society", "agency", "bank", "studio", "center", "centre",
             "council", "ministry", "department", "network", "org", "organization", "organisation",
             "church", "hospital", "museum", "library", "committee", "union", "shelter")
CONNECTORS = frozenset({"of", "de", "the", "and", "for", "la", "van", "von", "del", "da"})
_CAP_RE = re.compile(r"[A-Z][\w'’\-]*")
_CHATTER = frozenset("really just pretty lot thing things stuff gonna wanna got get going "
                     "yeah know think much also even still time way".split())


def strip_possessive(w: str) -> str:
    for suf in ("'s", "’s", "s'", "s’"):
        if w.endswith(suf) and len(w) > len(suf) + 1:
            return w[: -len(suf)] + ("s" if suf.startswith("s") else "")
    return w.rstrip("'’-")


def _skip(word: str) -> bool:
    # "That's", "Yeah's": judged without the clitic, or "That's" would become a subject "That"
    w = strip_possessive(word).lower()
    return w in NOT_SUBJECT or w in STOPWORDS


def capitalised_runs(sentence: str) -> list[tuple[str, int]]:
    """Runs of capitalised words (allowing "of", "the", … inside): (text, word index)."""
    toks = re.findall(r"\w+(?:['’\-]\w+)*|[^\w\s]", sentence)
    runs: list[tuple[str, int]] = []
    i = 0

    def cap(k: int) -> bool:
        return k < len(toks) and bool(_CAP_RE.fullmatch(toks[k])) and not _skip(toks[k])

    while i < len(toks):
        if cap(i):
            j = i + 1
            parts = [toks[i]]
            while j < len(toks):
                if cap(j):
                    parts.append(toks[j])
                    j += 1
                    continue
                k = j
                while k < len(toks) and toks[k].lower() in CONNECTORS and k - j < 2:
                    k += 1
                if k > j and cap(k):
                    parts.extend(toks[j:k + 1])
                    j = k + 1
                else:
                    break
            parts[-1] = strip_possessive(parts[-1])
            runs.extend(_runs_of(parts, i))
            i = j
        else:
            i += 1
    return runs


def _runs_of(parts: list[str], pos: int) -> list[tuple[str, int]]:
    """One run, or, past six words, its pieces split at the first connector ("Emeka Nwosu
    of the University of Ibadan" → "Emeka Nwosu", "University of Ibadan"): two names side
    by side, not one name of seven words."""
    name = " ".join(parts)
    if len(parts) <= 6:
        return [(name, pos)] if len(name) > 1 and not name.isdigit() else []
    c = next((k for k, w in enumerate(parts) if k and w.lower() in CONNECTORS and w[:1].islower()), None)
    if c is None:
        return []
    r = c
    while r < len(parts) and parts[r].lower() in CONNECTORS:
        r += 1
    return _runs_of(parts[:c], pos) + _runs_of(parts[r:], pos + r)


def subject_type(name: str, sentence: str, speakers: set[str]) -> str:
    """person / organization / place / project / entity, by cue words."""
    if name in speakers:
        return "person"
    last = name.split()[-1].lower()
    if last in ORG_CUES:
        return "organization"
    low = sentence.lower()
    nl = name.lower()
    if re.search(rf"\b(?:project|app|product|book|series|podcast)\s+{re.escape(nl)}\b", low) or \
            re.search(rf"\b{re.escape(nl)}\s+(?:project|app)\b", low):
        return "project"
    if re.search(rf"\b(?:in|to|from|visited|near|at)\s+(?:the\s+)?{re.escape(nl)}\b", low):
        return "place"
    if re.search(rf"\b(?:with|met|told|asked|friend|named|called)\s+{re.escape(nl)}\b", low):
        return "person"
    return "entity"


# --------------------------------------------------------------------------- kinds of facts

_PREF_RE = re.compile(r"\b(?:i|we)\s+(?:really\s+|absolutely\s+|totally\s+)?(?:love|like|enjoy|prefer|adore|hate|"
                      r"can't stand|dislike)\b|\bmy\s+fav(?:ou?rite)?\b|\bfavou?rite\b", re.I)
_DECISION_RE = re.compile(r"\b(?:i|we)(?:'ve| have)?\s+(?:decided|chose|am going to|'m going to|"
                          r"will|'ll|plan to|'m planning|am planning|want to|'m thinking of|"
                          r"signed up|applied|committed)\b|\bdecision\b", re.I)
_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|we|our|we're|we've)\b", re.I)

#: Attribute statements where a newer value supersedes an older one (subject = speaker).
ATTRIBUTES: list[tuple[str, re.Pattern[str]]] = [
    ("lives in", re.compile(r"\bI\s+(?:now\s+|currently\s+|still\s+)?(?:live|am living|'m living|"
                            r"moved|relocated|have moved|'ve moved)\s+(?:back\s+)?(?:in|to)\s+"
                            r"(?P<v>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*)")),
    ("works at", re.compile(r"\bI\s+(?:now\s+|currently\s+)?(?:work|am working|'m working|started working|"
                            r"joined|started at|got a job at|got a new job at)\s+(?:at\s+|for\s+)?"
                            r"(?P<v>[A-Z][\w\-&]*(?:\s+[A-Z][\w\-&]*)*)")),
    ("job", re.compile(r"\bI(?:'m| am)\s+(?:now\s+)?(?:working\s+)?as\s+an?\s+(?P<v>[a-z][\w\- ]{2,40}?)"
                       r"(?=[.,!;]|\s+(?:at|for|in|and)\b|$)")),
    ("favorite", re.compile(r"\bmy\s+favou?rite\s+(?P<a>[a-z][\w ]{1,30}?)\s+(?:is|are)\s+(?P<v>[\w' \-]{2,40}?)"
                            r"(?=[.,!;]|$)", re.I)),
]


def attribute_of(sentence: str) -> tuple[str, str] | None:
    """(attribute, value) when the sentence states a superseding attribute of its speaker."""
    for name, rx in ATTRIBUTES:
        m = rx.search(sentence)
        if m:
            attr = name
            if "a" in rx.groupindex and m.group("a"):
                attr = f"favorite {m.group('a').strip().lower()}"
            return attr, " ".join(m.group("v").split()).strip().lower()
    return None


def fact_kind(sentence: str) -> str:
    if _PREF_RE.search(sentence):
        return "preference"
    if _DECISION_RE.search(sentence):
        return "decision"
    return "event"


def is_first_person(sentence: str) -> bool:
    return bool(_FIRST_PERSON_RE.search(sentence))


# --------------------------------------------------------------------------- relative dates
# The rules live in cache.search.dates (the index reads the same ones); here is dream's
# rendering: the ISO meaning in brackets after the expression, and stripping it again.


def parse_day(day: str | None) -> _dt.date | None:
    """The date of an ISO day or timestamp string (None when absent or unreadable)."""
    if not day:
        return None
    try:
        return _dt.date.fromisoformat(day[:10])
    except ValueError:
        return None


def date_mentions(sentence: str, day: str | None) -> list[dates.Mention]:
    """The relative dates of ``sentence`` said on ``day`` (an ISO day), read in the
    sentence's tense (:func:`dates.is_future`); none without a day."""
    d = parse_day(day)
    return dates.mentions(sentence, d, dates.is_future(sentence)) if d else []


def resolve_relative_dates(sentence: str, day: str | None) -> str:
    """Annotate relative date expressions with their absolute meaning:
    "I adopted a dog last weekend" on 2023-05-08 → "… last weekend (weekend of 2023-05-06)"."""
    out, at = [], 0
    for m in date_mentions(sentence, day):
        out += [sentence[at:m.end], f" ({m.period.iso()})"]
        at = m.end
    return "".join(out) + sentence[at:]


def relative_dates(sentence: str, day: str | None) -> list[list[str]]:
    """``[expression, meaning]`` for each relative date of ``sentence`` said on ``day``."""
    return [[m.text, m.period.iso()] for m in date_mentions(sentence, day)]


def topic_words(text: str) -> set[str]:
    """Words a fact can be threaded by: content words of 4+ letters, without the date
    annotations and calendar words (a thread is about a topic, not about "weekend")."""
    return {w for w in content_words(strip_annotations(text))
            if len(w) >= 4 and w.isalpha() and w not in NOT_SUBJECT and w not in _CALENDAR
            and w not in _VAGUE}


_CALENDAR = frozenset("day days week weeks weekend weekends month months year years morning "
                      "evening night tonight ago last next".split())
#: Frequent verbs and vague nouns of chat: rare enough in one conversation to pass the
#: share filter, never what a thread is about ("make", "life", "feel").
_VAGUE = frozenset("make made makes making feel feels felt life lives thing things people "
                   "help helps helped want wants wanted love loved loves like liked good great "
                   "awesome amazing happy glad nice cool fun sure keep kept came come comes "
                   "went goes doing done take took taking give gave always never every "
                   "lots little more most much many other others something someone".split())


def fragment(text: str, word: str, window: int) -> str:
    """The words of ``text`` within ``window`` words of the first occurrence of ``word``
    (as :func:`content_words` spells it), with "…" where it was cut; the whole text when
    the word is not found or ``window`` is 0."""
    toks = text.split()
    if window <= 0:
        return text
    at = next((i for i, t in enumerate(toks) if word in content_words(t)), None)
    if at is None:
        return text
    lo, hi = max(0, at - window), min(len(toks), at + window + 1)
    return ("…" if lo > 0 else "") + " ".join(toks[lo:hi]) + ("…" if hi < len(toks) else "")


def strip_annotations(text: str) -> str:
    """Remove the date annotations :func:`resolve_relative_dates` adds (for comparison)."""
    return re.sub(r" \((?:weekend of |week of )?[\w\- ]{4,20}\)", "", text)
