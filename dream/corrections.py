"""Corrections: ``brainfs correct`` and contradicting hand lines write correction events
(``corrections/*.md``); dream turns each into a card (``notes/corrections/*.md``) that may
supersede an older card. See dream/README.md, *Corrections*."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from brainfs.cache.layout import CARDS_DIR, CORRECTIONS_DIR, slug_of
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.forget import norm

from .state import DreamState
from .synth import frontmatter
from .text import attribute_of, capitalised_runs, content_words, md5_hex, slugify


def correction_event(text: str, scope: str = "global", now: _dt.datetime | None = None) -> tuple[str, str]:
    """The corpus path and content of a correction event (what ``brainfs correct`` writes)."""
    now = (now or _dt.datetime.now(_dt.timezone.utc)).replace(microsecond=0)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    path = f"{CORRECTIONS_DIR}{stamp}-{md5_hex(text)[:8]}.md"
    meta = {"type": "correction-event", "created": now.isoformat().replace("+00:00", "Z"),
            "scope": scope}
    return path, frontmatter(meta) + "\n" + " ".join(text.split()) + "\n"


def card_path(created: str, text: str, taken: set[str]) -> str:
    words = content_words(text)[:6]
    base = f"{CARDS_DIR}{created[:10]}-{slugify(' '.join(words) or 'correction')[:50]}"
    path, n = f"{base}.md", 2
    while path in taken:
        path, n = f"{base}-{n}.md", n + 1
    return path


def subjects_in(text: str, titles: dict[str, str]) -> list[str]:
    """Slugs of known subjects named in ``text`` (whole-word, case-insensitive)."""
    low = f" {norm(text)} "
    return sorted(slug for slug, title in titles.items() if f" {norm(title)} " in low)


def process_corrections(read: Callable[[str], str | None], listing: dict[str, str], state: DreamState,
                        titles: dict[str, str], extra: dict[str, str] | None = None) -> list[str]:
    """New correction events → cards in ``state.cards``; returns the new card paths.
    ``read``: the tree's reader; ``extra``: events this run writes itself (hand-edit
    conflicts), path → content."""
    seen = state.corrections
    cards = state.cards
    extra = extra or {}
    etags = {**listing, **{p: md5_hex(t) for p, t in extra.items()}}
    events = []
    for p in sorted(etags):
        if p.startswith(CORRECTIONS_DIR) and p.endswith(".md") and seen.get(p) != etags[p]:
            meta, body, _bad = split_frontmatter(extra.get(p) or read(p) or "")
            meta = meta or {}
            text = " ".join(body.split())
            if not text:
                seen[p] = etags[p]
                continue
            created = str(meta.get("created") or "")
            page = str(meta.get("page") or "") if meta.get("origin") == "hand-edit" else ""
            events.append((created, p, text, str(meta.get("scope") or "global"),
                           meta.get("confidence", 0.9), page))
    new = []
    for created, p, text, scope, conf, page in sorted(events):
        seen[p] = etags[p]
        twin = same_correction(cards, text, scope, page)
        if twin is not None:
            # the same correction recorded again (a retry, a second agent): the card that
            # says it stands, confirmed now, rather than a "-2" twin superseding it
            cards[twin]["updated"] = max(str(cards[twin]["updated"]), created)
            cards[twin].setdefault("also_sources", []).append(p)
            continue
        subj = subjects_in(text, titles)
        if page:  # a hand line's subject is its page's, named or not
            subj.append(slug_of(page))
        for name, _pos in capitalised_runs(text):
            if slugify(name) not in subj:
                subj.append(slugify(name))
        words = set(content_words(text))
        attr = attribute_of(text)
        best = None
        for cp, card in sorted(cards.items(), key=lambda kv: kv[1]["created"]):
            if card.get("superseded_by") or card.get("source") == p:
                continue
            shared = set(card["subjects"]) & set(subj)
            cw = set(content_words(card["text"]))
            jacc = len(cw & words) / max(1, len(cw | words))
            same_attr = attr and card.get("attr") and card["attr"][0] == attr[0]
            if (shared and (same_attr or jacc >= 0.25)) or jacc >= 0.5:
                best = cp
        path = card_path(created, text, set(cards))
        cards[path] = {"text": text, "scope": scope, "created": created, "updated": created,
                       "confidence": conf, "subjects": sorted(set(subj)), "source": p,
                       "attr": list(attr) if attr else None, "supersedes": best,
                       "superseded_by": None, **({"hand_page": page} if page else {})}
        if best:
            cards[best]["superseded_by"] = path
            cards[best]["updated"] = created
        new.append(path)
    return new


def same_correction(cards: dict[str, dict], text: str, scope: str, page: str = "") -> str | None:
    """The standing card (not superseded) that says ``text`` already, in the same scope (and
    of the same hand-edited page), compared without case, spacing or end punctuation."""
    key = norm(text).rstrip(" .!")
    for cp, card in cards.items():
        if (not card.get("superseded_by") and card.get("scope", "global") == scope
                and card.get("hand_page", "") == page and norm(card["text"]).rstrip(" .!") == key):
            return cp
    return None


def _twin_key(card: dict) -> tuple[str, str, str]:
    return (norm(card["text"]).rstrip(" .!"), card.get("scope", "global"), card.get("hand_page", ""))


def twins(cards: dict[str, dict]) -> list[tuple[str, str]]:
    """(twin, first) pairs: a card that supersedes one saying the same (a "-2" twin the
    same correction recorded twice made before :func:`same_correction` merged them)."""
    return sorted((cp, c["supersedes"]) for cp, c in cards.items()
                  if c.get("supersedes") in cards and _twin_key(c) == _twin_key(cards[c["supersedes"]]))


def merge_twins(cards: dict[str, dict]) -> list[tuple[str, str]]:
    """Fold every twin (:func:`twins`) into the card it superseded, which stands again in
    its place (confirmed when the twin was, superseded by what superseded the twin, its
    sources and reach joined); returns the (twin, kept card) pairs, the twins removed."""
    done = []
    while pairs := twins(cards):
        twin, first = pairs[0]
        t, f = cards.pop(twin), cards[first]
        f["updated"] = max(str(f["updated"]), str(t["updated"]))
        f["superseded_by"] = t.get("superseded_by")
        f.setdefault("also_sources", [])
        for src in [t["source"], *t.get("also_sources", [])]:
            if src not in f["also_sources"] and src != f["source"]:
                f["also_sources"].append(src)
        for note in t.get("supersedes_notes", []):
            f.setdefault("supersedes_notes", [])
            if note not in f["supersedes_notes"]:
                f["supersedes_notes"].append(note)
        for c in cards.values():
            if c.get("supersedes") == twin:
                c["supersedes"] = first
            if c.get("superseded_by") == twin:
                c["superseded_by"] = first
        done.append((twin, first))
    return done


def render_card(card: dict, closes: list[str] | None = None) -> str:
    """A correction card as its file says it (frontmatter with its confidence and what it
    supersedes, then the corrected statement). ``closes``: the fact records
    (``knowledge/.facts.jsonl`` ids) the correction closed, as ``closes: [id, …]``."""
    meta = {"type": "correction", "scope": card["scope"],
            "confidence": 0.3 if card.get("superseded_by") else card.get("confidence", 0.9),
            "created": card["created"], "updated": card["updated"]}
    sup = ([card["supersedes"]] if card.get("supersedes") else []) + list(card.get("supersedes_notes", []))
    if sup:
        # one path stays a string (the usual case); the user's cards it reached make a list
        meta["supersedes"] = sup[0] if len(sup) == 1 else sup
    if card.get("superseded_by"):
        meta["superseded_by"] = card["superseded_by"]
        meta["status"] = "superseded"
    if closes:
        meta["closes"] = sorted(closes)
    meta["subjects"] = card["subjects"]
    meta["source"] = card["source"]
    body = card["text"]
    if card.get("superseded_by"):
        body += f"\n\n(Superseded by {card['superseded_by']}.)"
    return frontmatter(meta) + "\n" + body + "\n"
