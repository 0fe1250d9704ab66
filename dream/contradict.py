"""A general contradiction check between two statements about the same subject.

Two statements contradict when they say the same thing about the same thing — the same
*predicate frame* — but with a different value in an object slot, or with the opposite
polarity. The frame is the statement with its object slots masked:

* slots: numbers ("two", "3"), dates (month names, years, ISO dates, weekdays) and proper
  nouns (capitalised words inside the sentence); the speaker's own name and "I/me/my" are
  the subject, not a slot;
* normalized: "is/am/are/'m" → be, "has" → have, a plural or 3rd-person "s" dropped,
  fillers ("now", "currently", "really", …) removed, "not/never/no longer/n't" removed and
  recorded as polarity.

Precision comes first (a false supersession destroys memory), so the rules are narrow:

* frames must be **identical** after normalization (lexical identity of the masked claim;
  no fuzzy similarity: "I have two dogs" and "I have two cats" differ in a frame word);
* the statement must be a **present-tense state** (be, have, live, work, like, …) — a past
  event is additive ("I went to Paris" and "I went to Rome" are both true) and so is a
  plan;
* a changed slot supersedes only with a **functional** predicate (be, have + a number,
  live, work, own + a number): "I love Paris" and "I love Rome" can both hold;
* a polarity flip of the same state supersedes ("I like sushi" → "I don't like sushi").

The newer statement wins; the caller orders them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from brainfs.cache.search.queryterms import STOPWORDS

from .text import strip_annotations

_TOKEN_RE = re.compile(r"\d{4}-\d{2}-\d{2}|\d+(?:[.,]\d+)?|[A-Za-z]+(?:['’][A-Za-z]+)?|[.,!?:;]")
_PUNCT = set(".,!?:;")
_CLAUSE_END = set(".!?:;")
#: Subjects of reactions, not of facts ("That's awesome, Caro!").
_NOT_SUBJECT = {"that", "it", "this", "there", "what", "wow", "how", "which", "these", "those"}
#: "Speaker (date): " as some transcripts repeat it inside the turn.
_PREFIX_RE = re.compile(r"^\s*[A-Z][\w .'-]{0,40}\([^)]{4,40}\):\s*")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12, "both": 2,
                      "single": 1, "twice": 2})
_MONTHS = set("january february march april may june july august september october november "
              "december jan feb mar apr jun jul aug sep sept oct nov dec".split())
_WEEKDAYS = set("monday tuesday wednesday thursday friday saturday sunday".split())
_SELF = {"i": "<self>", "me": "<self>", "my": "<self's>", "mine": "<self's>", "myself": "<self>"}
_BE = {"am", "is", "are", "'m", "’m", "be"}
_NEG = {"not", "never", "no", "n't", "nt"}
_FILLERS = set("""now currently still actually really just also so well too anymore any
more again already totally definitely very pretty quite yet oh yeah hey honestly basically
literally seriously longer right""".split())
_CONTRACTIONS = {"i'm": ["i", "am"], "i've": ["i", "have"], "don't": ["not"],
                 "doesn't": ["not"], "didn't": ["did", "not"], "isn't": ["is", "not"],
                 "aren't": ["are", "not"], "wasn't": ["was", "not"], "weren't": ["were", "not"],
                 "haven't": ["have", "not"], "hasn't": ["have", "not"], "can't": ["can", "not"],
                 "won't": ["will", "not"], "i'd": ["i", "would"], "i'll": ["i", "will"],
                 "we're": ["we", "are"], "it's": ["it", "is"], "he's": ["he", "is"],
                 "she's": ["she", "is"], "that's": ["that", "is"], "there's": ["there", "is"]}
#: Present-tense states (after normalization).
_STATIVE = {"be", "have", "own", "live", "work", "like", "love", "hate", "prefer", "enjoy",
            "want", "need", "know", "believe", "eat", "drink", "play", "speak", "use", "study",
            "dislike", "named", "called"}
#: Predicates that hold one value at a time: a different value replaces the old one.
_FUNCTIONAL = {"be", "live", "work", "named", "called"}
_FUNCTIONAL_IF_NUMBER = {"have", "own"}
#: Markers of a past event or a plan: such a statement adds to the record, never replaces.
_NOT_STATE = set("""was were had did went got made took saw met visited bought started
finished moved joined used will would going plan planning planned wanted tried yesterday
ago last tomorrow next today tonight until soon if when whether unless maybe might could
should""".split())
_MONTH_NUM = {m: i for i, m in enumerate("january february march april may june july august "
                                         "september october november december".split(), 1)}
_MONTH_ALT = "|".join(sorted(_MONTH_NUM, key=len, reverse=True))
_DAY_MONTH_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})(?:,?\s+(\d{{4}}))?\b", re.I)
_MONTH_DAY_RE = re.compile(rf"\b({_MONTH_ALT})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)


def _iso_dates(text: str) -> str:
    """"26 February 2026" / "February 26" → one ISO-like token, so a date is one slot."""
    def dm(m: re.Match[str]) -> str:
        return f"{m.group(3) or '0000'}-{_MONTH_NUM[m.group(2).lower()]:02d}-{int(m.group(1)):02d}"

    def md(m: re.Match[str]) -> str:
        return f"{m.group(3) or '0000'}-{_MONTH_NUM[m.group(1).lower()]:02d}-{int(m.group(2)):02d}"

    return _MONTH_DAY_RE.sub(md, _DAY_MONTH_RE.sub(dm, text))


@dataclass(frozen=True)
class Frame:
    """A statement reduced to its predicate frame, its object slots and its polarity."""

    tokens: tuple[str, ...]               # normalized, slots as <num>/<date>/<name>/<weekday>
    slots: tuple[tuple[str, str], ...]    # (kind, value) in order
    slot_pos: tuple[int, ...]             # token index of each slot
    verb: int                             # token index of the main (first stative) verb, -1
    negated: bool
    stative: bool
    functional: bool
    number_functional: bool

    @property
    def content(self) -> list[str]:
        return [t for t in self.tokens if not t.startswith("<") and t not in STOPWORDS and t != "be"]


def _norm_word(w: str) -> str:
    if w in _BE:
        return "be"
    if w == "has":
        return "have"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def frame_of(text: str, self_name: str | None = None) -> Frame:
    """The frame of one statement; ``self_name`` (the speaker, or the page's subject) is
    read as the subject like "I"."""
    raw = _TOKEN_RE.findall(_plain(text))
    self_parts = self_name.split() if self_name else []
    out = _Tokens()
    i = 0
    while i < len(raw):
        i = _read_token(raw, i, self_name, self_parts, out)
    return _frame(out)


def _plain(text: str) -> str:
    """The statement without what carries no meaning for its frame: annotations, quotes,
    idioms with "no" that negate nothing, "right now", do-support."""
    text = _PREFIX_RE.sub("", text.replace("“", " ").replace("”", " ").strip())
    text = _iso_dates(strip_annotations(text).replace("’", "'"))
    # idioms with "no" that negate nothing
    text = re.sub(r"\bno (?:matter|doubt|problem|wonder|worries|way)\b", " ", text, flags=re.I)
    text = re.sub(r"\bno longer\b", "not", text, flags=re.I)
    text = re.sub(r"\b(?:these days|nowadays|at the moment|right now|for now)\b", " ", text, flags=re.I)
    # present-tense do-support carries no meaning of its own ("I do not like" = "I like" negated)
    return re.sub(r"\b(?:do|does)\s+not\b", "not", text, flags=re.I)


@dataclass
class _Tokens:
    """A statement's normalized tokens as they are read (see :class:`Frame`)."""

    toks: list[str] = field(default_factory=list)
    slots: list[tuple[str, str]] = field(default_factory=list)
    slot_pos: list[int] = field(default_factory=list)
    negated: bool = False

    def slot(self, kind: str, value: str) -> None:
        self.slot_pos.append(len(self.toks))
        self.toks.append(f"<{kind}>")
        self.slots.append((kind, value))


def _read_token(raw: list[str], i: int, self_name: str | None, self_parts: list[str],
                out: _Tokens) -> int:
    """Read the token at ``raw[i]`` (with what belongs to it) into ``out``; the index of
    the next one."""
    w = raw[i]
    low = w.lower()
    if w in _PUNCT:
        return i + 1
    prev = next((raw[k] for k in range(i - 1, -1, -1)), None)
    if self_parts and raw[i:i + len(self_parts)] == self_parts:
        nxt = raw[i + len(self_parts)].lower() if i + len(self_parts) < len(raw) else ""
        out.toks.append("<self's>" if nxt == "s" else "<self>")
        return i + len(self_parts) + (1 if nxt == "s" else 0)
    if low.endswith("'s") and self_parts and w[:-2] == self_name:
        out.toks.append("<self's>")
        return i + 1
    parts = _CONTRACTIONS.get(low)
    if parts is None and low.endswith("n't"):
        parts = [low[:-3], "not"]
    for p in parts or [low]:
        if _read_word(p, w, out):
            continue
        if w[0].isupper() and prev is not None and prev not in _CLAUSE_END and not parts:
            i = _read_name(raw, i, prev, out)
        else:
            out.toks.append(_norm_word(p))
    return i + 1


def _read_word(p: str, w: str, out: _Tokens) -> bool:
    """A pronoun of the subject, a negation, a filler or a slot other than a name (a
    weekday, a date, a number) into ``out``; False when ``p`` is none of them."""
    if p in _SELF:
        out.toks.append(_SELF[p])
    elif p in _NEG:
        out.negated = True
    elif p in _FILLERS:
        pass
    elif p in _WEEKDAYS:
        # relative to the week it was said in: "ready for Friday" is no lasting value
        out.slot("weekday", p)
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", p) or (p in _MONTHS and w[0].isupper()) or \
            re.fullmatch(r"(?:19|20)\d\d", p):  # "may" the verb is no month
        out.slot("date", p)
    elif p[0].isdigit() or p in _NUMBER_WORDS:
        out.slot("num", str(_NUMBER_WORDS.get(p, p.replace(",", ""))))
    else:
        return False
    return True


def _read_name(raw: list[str], i: int, prev: str, out: _Tokens) -> int:
    """A proper noun inside the sentence (a run of them is one slot) into ``out``; the
    index of its last token (one more for a vocative, skipped with its punctuation)."""
    # Not a clause opener ("…: Wow", see the caller), and not a vocative ("Thanks,
    # Caroline!"): a name addressed is not a value of the statement.
    name = [raw[i]]
    while i + 1 < len(raw) and raw[i + 1][0].isupper() and raw[i + 1].lower() not in _SELF:
        i += 1
        name.append(raw[i])
    nxt = raw[i + 1] if i + 1 < len(raw) else None
    if prev == "," and (nxt is None or nxt in _PUNCT):
        return i + 1
    value = " ".join(name)
    if value.endswith("'s"):
        value = value[:-2]
    out.slot("name", value.lower())
    return i


def _frame(t: _Tokens) -> Frame:
    """The frame of the tokens read: its main verb, and whether it is a present state and
    a functional one (one value at a time)."""
    toks = t.toks
    verbs = {x for x in toks if x in _STATIVE}
    verb = next((k for k, x in enumerate(toks) if x in _STATIVE), -1)
    main = toks[verb] if verb >= 0 else ""
    # "-ed" marks a past event, except after "be" (a state: "I'm swamped", "is named")
    past_or_plan = any(x in _NOT_STATE or (x.endswith("ed") and x != "need" and (k == 0 or toks[k - 1] != "be"))
                       for k, x in enumerate(toks))
    stative = bool(verbs) and not past_or_plan
    progressive = any(x == "be" and k + 1 < len(toks) and toks[k + 1].endswith("ing")
                      for k, x in enumerate(toks))
    # A verb right after "that/which/who/to" heads a subordinate or infinitive clause
    # ("questions that work with NVDA", "to be ready"): no main predicate to decide on.
    if verb > 0 and toks[verb - 1] in ("that", "which", "who", "to"):
        main = ""
    # the main verb decides: "I need to be ready" is about needing, not being
    return Frame(tuple(toks), tuple(t.slots), tuple(t.slot_pos), verb, t.negated, stative,
                 stative and main in _FUNCTIONAL and not progressive,
                 stative and main in _FUNCTIONAL_IF_NUMBER)


_CLAUSE_RE = re.compile(r"\s*(?:[;:!?]|,|\.\s|\s[-–—]\s|\b(?:and|but|so|because|while|though|although|since|whereas)\b)\s*",
                        re.I)


def clause_frames(text: str, self_name: str | None = None) -> list[Frame]:
    """Frames of the statement's clauses (a conversational sentence rarely repeats whole:
    "I live in Osaka now, but I go to Kyoto every month" → "I live in Osaka now", …).
    Clauses too short to carry a predicate frame are left out."""
    text = _PREFIX_RE.sub("", text.replace("“", " ").replace("”", " ").strip())
    out = []
    for part in _CLAUSE_RE.split(strip_annotations(text)):
        if part and len(part.split()) >= 3:
            fr = frame_of(part, self_name)
            if len(fr.tokens) >= 3:
                out.append(fr)
    return out


def contradiction(old: str, new: str, old_self: str | None = None,
                  new_self: str | None = None) -> str | None:
    """Why ``new`` contradicts ``old`` (e.g. "name: osaka → kyoto", "polarity"), or None:
    some clause of ``new`` has the frame of a clause of ``old`` and contradicts it."""
    for a in clause_frames(old, old_self):
        for b in clause_frames(new, new_self):
            why = frames_contradict(a, b)
            if why:
                return why
    return None


def frames_contradict(a: Frame, b: Frame) -> str | None:
    """The rule of :func:`contradiction` on two frames (see the module docstring)."""
    if a.tokens != b.tokens or not (a.stative and b.stative):
        return None
    # A frame must say something: a content word, or "<self> be <num>" (an age).
    if not a.content and not (a.tokens[:1] == ("<self>",) and "<num>" in a.tokens):
        return None
    if len(a.tokens) < 3 or a.tokens[0] in _NOT_SUBJECT:
        return None
    if a.negated != b.negated:
        return "polarity" if a.slots == b.slots else None
    diff = [k for k, (x, y) in enumerate(zip(a.slots, b.slots)) if x != y]
    if len(diff) != 1 or a.negated:  # "I don't live in Paris" / "… in Rome": both can hold
        return None
    # One value changed, in object position (after the main verb): a changed slot before it
    # is another subject ("Priya is a student" / "Mateo is a student"), two changed slots
    # another thing ("my contact at X is A" / "… at Y is B").
    k = diff[0]
    (kind, old), new = a.slots[k], b.slots[k][1]
    if kind == "weekday" or a.slot_pos[k] < a.verb:
        return None
    if "to" in a.tokens[a.verb + 1:a.slot_pos[k]]:
        return None  # the value belongs to an infinitive ("an option is to run 2 sessions")
    if a.functional or (a.number_functional and kind == "num"):
        return f"{kind}: {old} → {new}"
    return None
