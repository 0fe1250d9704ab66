"""The run's wiki phase: every managed file rendered from the state, then what the
corrections reach (cards, pages, GUIDE.md, the user's own cards) and what the forget
requests redact at the source, and the wiki rendered again with them."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable

from brainfs.cache.layout import CARDS_DIR, GUIDE_PATH, KNOWLEDGE, LEARNED_DIR, TRANSCRIPT_RE, page_path
from brainfs.cache.search.chunker import split_frontmatter

from . import edits, reach, redact
from .corrections import process_corrections
from .extract import extract_session
from .run import Run, forget_phrases
from .text import md5_hex, parse_transcript, slugify
from .threads import page_topics
from .trees import Tree
from .wiki import build_wiki, forgotten_by


def write_wiki(run: Run) -> None:
    """Render every managed file; then corrections (to cards, pages, GUIDE.md and the
    user's cards) and forget requests (redacted at the source), and render again."""
    tree, listing, state, reasons = run.tree, run.listing, run.state, run.reasons
    run.prog.phase("writing the wiki")
    run.phrases = phrases = forget_phrases(tree, listing)
    topics_of = _published_topics(tree, listing)
    owner_texts = _owner_texts(tree, listing)
    files, rs, info = _build(run, phrases, topics_of, owner_texts)
    # a page a person wrote where dream now writes one: its lines are kept in dream's page
    adopted = edits.adopt(tree, {p: listing[p] for p in files if p in listing}, run.prev.written,
                          run.prev.managed, state.hand, [ph for _p, ph in phrases])
    if adopted:
        edits.record(state, adopted)
        for e in adopted:
            reasons[e.path].append(f"the page that was there is kept: {len(e.added)} line(s) under "
                                   f"'{edits.ADOPTED_SECTION}'")
        files, rs, info = _build(run, phrases, topics_of, owner_texts)
    for e in run.hand_edits:
        reasons[e.path].append(e.describe())
    # a hand line contradicting its page becomes a correction event, written by this run
    run.hand_events = edits.conflict_events(state, info.by_slug, info.titles,
                                            run.now or _dt.datetime.now(_dt.timezone.utc))
    new_cards = process_corrections(tree.read, listing, state, info.titles, extra=run.hand_events)
    # a correction reaches GUIDE.md, the user's own cards and hand pages that state the old value
    live = [(cp, c) for cp, c in sorted(state.cards.items())
            if not c.get("superseded_by") and not forgotten_by(c["text"], phrases)]
    external = reach.apply(tree.read, listing, live, CARDS_DIR,
                           managed=set(files) | set(run.prev.managed))
    # a forget request reaches the transcripts and the user's cards too (redact.py)
    corrected = set(external)
    run.redacted = redact.apply(lambda q: external.get(q) or tree.read(q), listing,
                                [ph for _p, ph in phrases], (CARDS_DIR, LEARNED_DIR),
                                set(files) | set(run.prev.managed))
    for rp, txt in run.redacted.items():
        external[rp] = txt
        reasons[rp].append("forget request: phrase redacted")
        m = TRANSCRIPT_RE.match(rp)
        if m and m.group(1) in state.sessions:
            # what the state holds for it is what the redacted transcript says (and its ETag,
            # so the next run does not read it again)
            ex = extract_session(parse_transcript(rp, txt), run.cfg, run.extractor)
            ex["etag"] = md5_hex(txt)
            state.sessions[m.group(1)] = ex
    for ep in corrected:
        reasons[ep].append("a correction supersedes what it stated: " + ", ".join(
            cp for cp, c in live if ep == GUIDE_PATH or ep in c.get("supersedes_notes", [])))
    if new_cards or external:
        files, rs, info = _build(run, phrases, topics_of, owner_texts)
        for cp in new_cards:
            card = state.cards[cp]
            reasons[cp].append(f"correction {card['source']}" + (
                f", supersedes {card['supersedes']}" if card.get("supersedes") else ""))
            if card.get("supersedes"):
                reasons[card["supersedes"]].append(f"superseded by {cp}")
            for s in card["subjects"]:
                reasons[page_path(s)].append(f"correction {cp}")
    for k, v in rs.items():
        reasons[k].extend(v)
    for ep, content in run.hand_events.items():
        meta = split_frontmatter(content)[0] or {}
        files[ep] = content
        reasons[ep].append(f"hand edit of {meta.get('page')} contradicts a claim of the page")
    run.files, run.info, run.external = files, info, external


def _build(run: Run, phrases, topics_of, owner_texts):
    """Render every managed file; a synthesizer that queued prompts (a model's) asks them
    now, several at once, and the wiki is rendered again with the answers (the second
    rendering of an unchanged page is a cache hit)."""
    got = build_wiki(run.state, phrases, run.cfg, run.synth, topics_of, owner_texts)
    if run.synth.ask_pending(run.prog):
        run.prog.phase("writing the wiki")
        got = build_wiki(run.state, phrases, run.cfg, run.synth, topics_of, owner_texts)
    return got


def _published_topics(tree: Tree, listing: dict[str, str]) -> Callable[[str], list[str]]:
    """slug → the thread topics of its page as the tree has it, in order (threads.py keeps
    that order, so a page is not rewritten for whole-wiki counts that moved a little)."""
    seen: dict[str, list[str]] = {}

    def topics(slug: str) -> list[str]:
        if slug not in seen:
            p = page_path(slug)
            seen[slug] = page_topics(tree.read(p)) if p in listing else []
        return seen[slug]
    return topics


def _owner_texts(tree: Tree, listing: dict[str, str]) -> Callable[[str], list[str]]:
    """The user's one-word speaker name → texts of the tree that may give their full name:
    GUIDE.md ("You are assisting Nadia Rahman, …") and the titles of the pages under
    knowledge/ whose slug starts with that name (a person's page someone already keeps)."""
    def texts(first: str) -> list[str]:
        out = []
        if GUIDE_PATH in listing:
            out.append(tree.read(GUIDE_PATH) or "")
        prefix = f"{KNOWLEDGE}{slugify(first)}-"
        for p in sorted(listing):
            if p.startswith(prefix) and p.endswith(".md") and p.count("/") == 1:
                m = re.search(r"^title:\s*['\"]?(.+?)['\"]?\s*$", tree.read(p) or "", re.M)
                if m:
                    out.append(m.group(1))
        return out
    return texts

