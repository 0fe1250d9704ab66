"""A correction reaches every line that states the old value: pages, cards and GUIDE.md.

A correction event ("Figures are SVG, not PDF") names what it replaces — the value after
"not" — and usually what replaces it (the value of the same kind just before: an all-caps
format for a format, a number for a number, a name for a name). A line *states the old
value* when it contains that value as a whole word and shares at least one other content
word (stemmed) with the correction, so "not PDF" about figures does not touch a line about
invoices as PDF.

* ``GUIDE.md`` lines are rewritten: the old value replaced by the new one, with
  "(corrected <date>; was <old>)" appended. A line that already says so is left alone, which
  makes the rewrite idempotent.
* Cards under ``notes/`` that are not dream's own get ``superseded_by: <correction card>``,
  ``status: superseded`` and a lower confidence in their frontmatter; the correction card
  lists them under ``supersedes``, which is what ``brainfs context`` reads to skip them.
* Pages under ``knowledge/`` that dream does not write (a person's own pages, a sample's)
  get the GUIDE treatment in their current part — the lines before the first ``## Timeline``,
  ``## Superseded`` or ``## History`` heading — so that what such a page says is true now
  is true; its history below is left as written. Dream's own pages are rendered from the
  fact records, and their facts are retired by :mod:`.core` with :func:`states_old_value`.
"""

from __future__ import annotations

import re

import yaml

from brainfs.cache.layout import GUIDE_PATH, LEARNED_DIR, NOTES, in_knowledge
from brainfs.cache.search.chunker import split_frontmatter

from .deadlines import DATE
from .patternwords import MONTHS, NAME
from .quantities import NUMBER, UNIT
from .relationrecord import clean_value
from .text import capitalised_runs, content_words
from .trips import DAY_MONTH

_MARK = "(corrected "


def _stem(w: str) -> str:
    for suf in ("ies", "es", "s"):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


#: Words that stand between a value and its ", not X" without being one.
_NOT_A_VALUE = frozenset("now today anymore instead please then too also again here there on "
                         "from forward onwards going".split())


#: What may follow "not" in a correction, each with what the new value before it looks like:
#: an address, a phone number, a day (or days), a quantity with its unit, then a name or a
#: word (tried in that order: "not 07700 900123" is a number whole, not "07700").
_EMAIL = r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"
_PHONE = r"\+?\d[\d ()\-]{5,}\d(?![\w])"
_DAY = rf"(?:{DAY_MONTH}|{DATE}|\d{{4}}-\d{{2}}-\d{{2}}|(?:{MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?)(?![\w])"
_AMOUNT = rf"{NUMBER}\s?(?!(?:now|today|anymore|instead|please|then|too|also|again|one|ones|number|numbers|is|was|are|and|or)\b)[A-Za-z%][\w]*|{NUMBER}{UNIT}(?![\w])"
_KINDS = (_EMAIL, _PHONE, _DAY, _AMOUNT)
#: Any of them, where a value is read (case aside: "20 june").
_ANY_KIND = "(?i:" + "|".join(_KINDS) + ")"
_NOT_VALUE = re.compile(rf",?\s+(?:and\s+)?not\s+(?:the\s+|a\s+|an\s+)?"
                        rf"(?P<old>{_ANY_KIND}|[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*|[\w\-]+)")


def pairs(text: str) -> list[tuple[str | None, str]]:
    """(new value or None, old value) for each "…, not X" in a correction."""
    out = []
    for m in _NOT_VALUE.finditer(text):
        old = m.group("old").strip()
        before = text[:m.start()]
        kind = next((k for k in _KINDS if re.fullmatch(k, old, re.I)), None)
        if kind is not None:
            cand = [c.group(0) for c in re.finditer(rf"(?<![\w.@+-])(?:{kind})", before, re.I)]
        elif old.isupper():
            cand = re.findall(r"\b[A-Z]{2,}\b", before)
        elif old[:1].isupper():
            cand = [n for n, _p in capitalised_runs(before)]
        else:
            # "as PDF now, not docx": the value, not the word of time after it
            cand = [w for w in re.findall(r"[\w\-]+", before) if w.lower() not in _NOT_A_VALUE]
        new = cand[-1].strip() if cand else None
        out.append((new if new and new.lower() != old.lower() else None, old))
    return out


#: A value a correction says stood before, in other words than ", not X": "he gave up
#: coffee", "promoted from staff nurse", "the 612 448 903 number is no longer hers", "the
#: Riverside mural is finished", "2 coffees a day max now (was 4)".
_CAPS = r"[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*"
_VALUE = rf"(?:{_ANY_KIND}|{_CAPS}|[a-z][\w\-]*(?:\s+(?!to\b)[a-z][\w\-]*){{0,2}})"
_NAMED = rf"(?:{_ANY_KIND}|{_CAPS}(?:\s+[a-z][\w\-]*)?)"
_WAS = (re.compile(rf"\(\s*was\s+(?:an?\s+|the\s+)?(?P<old>{_VALUE})\s*\)"),  # "operations manager (was logistics coordinator)"
        re.compile(rf"\b(?:gave|given|give)\s+up\s+(?:on\s+)?(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+|my\s+)?(?P<old>{_VALUE})(?=\s*(?:[.,;!]|$))"),
        re.compile(rf"\b(?:promoted|moved|switched|changed|transferred)\s+(?:over\s+)?from\s+(?:the\s+|a\s+|an\s+)?(?P<old>{_VALUE})(?=\s*(?:[.,;!]|$)|\s+to\b)"),
        re.compile(rf"(?:^|[;,.]\s+)(?i:the|his|her|their|my)\s+(?:old\s+)?(?P<old>{_NAMED})(?:\s+(?:number|address|email|account|handle|one))?"
                   rf"\s+is\s+(?:no\s+longer\s+(?:his|hers|theirs|mine|in\s+use|used|valid|active|current)|finished|over|closed|done|dead)\b"))


#: A value a sentence says no longer holds (", not 15 percent"): :func:`negated_values`.
# a date before a quantity, and a quantity whole: "not 30 September" is no "30 s" with the
# rest of the month left behind
_NEGATED = re.compile(rf",?\s+(?:and\s+)?not\s+(?:the\s+)?(?P<old>{_EMAIL}|{_PHONE}|{DAY_MONTH}(?![\w])|{DATE}|{NUMBER}{UNIT}(?![\w])|{NAME}|[\w\-]+(?:\s+[\w\-]+)?)", re.I)


def negated_values(sentence: str) -> list[str]:
    """What a sentence says is no longer so: "12 percent now, not 15 percent" → ["15 percent"]."""
    return [clean_value(m.group("old")) for m in _NEGATED.finditer(sentence)]


def without_negations(sentence: str) -> str:
    """``sentence`` without its ", not X" clauses ("SVG, not PDF." → "SVG.")."""
    return _NEGATED.sub("", sentence).strip()


def was_values(text: str) -> list[str]:
    """What a correction says stood before without ", not X" (see :data:`_WAS`)."""
    return [m.group("old").strip() for rx in _WAS for m in rx.finditer(text) if m.group("old").strip()]


def ends_clause(text: str, old: str) -> bool:
    """Is "not ``old``" the whole of what the correction negates (not "not a QA tester", whose
    "QA" is half a title)?"""
    return re.search(rf"\bnot\s+(?:the\s+|a\s+|an\s+)?{re.escape(old)}\s*(?:[.,;!?)]|$)", text) is not None


def states_old_value(line: str, correction: str, old: str, new: str | None = None) -> bool:
    """Does ``line`` state ``old`` in the context of ``correction`` (see module docstring)?"""
    if not re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", line, re.I):
        return False
    skip = {_stem(w) for w in content_words(old)} | {_stem(w) for w in content_words(new or "")}
    ctx = {_stem(w) for w in content_words(correction)} - skip
    mine = {_stem(w) for w in content_words(line)} - skip
    return bool(ctx & mine)


def fix_guide(text: str, cards: list[tuple[str, dict]]) -> tuple[str, list[str]]:
    """GUIDE.md with every line stating a corrected value rewritten; and the card paths used."""
    lines = text.split("\n")
    used: list[str] = []
    for i, line in enumerate(lines):
        if _MARK in line or not line.strip():
            continue
        for cp, card in cards:
            for new, old in pairs(card["text"]):
                if not states_old_value(line, card["text"], old, new):
                    continue
                day = str(card.get("created", ""))[:10]
                if new:
                    fixed = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, line, flags=re.I)
                    lines[i] = f"{fixed.rstrip()} {_MARK}{day}; was {old})"
                else:
                    lines[i] = f"{line.rstrip()} {_MARK}{day}: {card['text']})"
                used.append(cp)
                line = lines[i]
                break
            if _MARK in line:
                break
    return "\n".join(lines), used


#: Headings that end a page's current part (DESIGN: what stands before them is read as now).
_HISTORY_RE = re.compile(r"^##\s+(?:Timeline|Superseded|History)\b", re.I | re.M)


def fix_hand_page(text: str, cards: list[tuple[str, dict]]) -> tuple[str, list[str]]:
    """A hand page with the corrected values of its current part rewritten as in GUIDE.md
    (frontmatter and history untouched); and the card paths used."""
    meta_end = 0
    if text.startswith("---\n"):
        close = text.find("\n---", 4)
        if close != -1:
            meta_end = text.find("\n", close + 4)
            meta_end = len(text) if meta_end == -1 else meta_end + 1
    m = _HISTORY_RE.search(text, meta_end)
    cut = m.start() if m else len(text)
    now, used = fix_guide(text[meta_end:cut], cards)
    return text[:meta_end] + now + text[cut:], used


def is_user_card(path: str, dream_cards: str) -> bool:
    """A card a person (or another tool) wrote: not dream's corrections or learned cards
    (dream re-derives those itself)."""
    return (path.startswith(NOTES) and path.endswith(".md") and not path.startswith(dream_cards)
            and not path.startswith(LEARNED_DIR))


def supersede_card(text: str, card_path: str, card: dict) -> str | None:
    """A user's card stating a corrected value, marked superseded by ``card_path``
    (None when it does not state one, or already says it is superseded)."""
    meta, body, bad = split_frontmatter(text)
    if bad or (meta or {}).get("superseded_by"):
        return None
    if not any(states_old_value(body, card["text"], old, new) for new, old in pairs(card["text"])):
        return None
    meta = dict(meta or {})
    meta["superseded_by"] = card_path
    meta["status"] = "superseded"
    meta["confidence"] = min(0.3, float(meta.get("confidence", 0.3) or 0.3))
    meta["updated"] = str(card.get("created", ""))[:10] or meta.get("updated", "")
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{head}\n---\n" + (body if body.startswith("\n") else "\n" + body)


def apply(read, listing: dict[str, str], cards: list[tuple[str, dict]],
          dream_cards: str, managed: set[str] | frozenset[str] = frozenset()) -> dict[str, str]:
    """path → new text of GUIDE.md, user cards and hand pages (``knowledge/*.md`` not in
    ``managed``, the files dream writes) that the live correction ``cards`` reach. Records,
    in each card, the user cards and hand pages it superseded (``supersedes_notes``)."""
    out: dict[str, str] = {}
    cards = [(cp, c) for cp, c in cards if pairs(c["text"])]
    if not cards:
        return out
    if GUIDE_PATH in listing:
        old = read(GUIDE_PATH) or ""
        new, _used = fix_guide(old, cards)
        if new != old:
            out[GUIDE_PATH] = new
    for p in sorted(listing):
        if not (in_knowledge(p) and p.endswith(".md")) or p in managed:
            continue
        old = read(p) or ""
        new, used = fix_hand_page(old, cards)
        if new != old:
            out[p] = new
            for cp, card in cards:
                if cp in used:
                    card.setdefault("supersedes_notes", [])
                    if p not in card["supersedes_notes"]:
                        card["supersedes_notes"].append(p)
    for p in sorted(listing):
        if not is_user_card(p, dream_cards):
            continue
        text = read(p) or ""
        for cp, card in cards:
            new = supersede_card(text, cp, card)
            if new is not None:
                out[p] = new
                card.setdefault("supersedes_notes", [])
                if p not in card["supersedes_notes"]:
                    card["supersedes_notes"].append(p)
                break
    return out
