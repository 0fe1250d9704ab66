"""Phase 4 of a dream run: every managed file rendered from the state — session summaries
and their index, one page per subject, correction and preference cards, ``knowledge/INDEX.md``
— with forget requests, corrections and contradictions applied."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from brainfs.cache.search.forget import norm

from . import edits as E
from . import pages as P
from . import reach
from . import relations as R
from . import subjects as S
from . import text as T
from .cards import preference_cards, rule_cards
from .contradict import clause_frames, contradiction, frames_contradict
from .corrections import render_card, subjects_in
from .state import DreamState
from .subjects import is_role
from .synth import Claim, PageSpec, Synthesizer
from .threads import threads
from .validate import INDEX_PATH, estimate_tokens

SESSIONS_INDEX = "sessions/index.md"


def _quote(s: str) -> str:
    s = s.replace("“", "'").replace("”", "'").replace('"', "'")
    return f"“{s}”"



def forgotten_by(text: str, phrases: list[tuple[str, str]]) -> str | None:
    """The forget request (its path) one of whose phrases ``text`` contains, if any."""
    n = f" {norm(text)} "
    for path, ph in phrases:
        if f" {ph} " in n:
            return path
    return None


_NEGATED_RE = re.compile(r"\b(?:not|no longer|isn't|wasn't|aren't|instead of|rather than|never)\s+"
                         r"(?:a |an |the |in |at |to |called |named )?([\w'\-]+(?:\s+[A-Z][\w\-]+)*)", re.I)


@dataclass
class WikiInfo:
    """What :func:`build_wiki` learned besides the files it rendered."""

    subjects: S.Subjects
    titles: dict[str, str]              # slug → title of every page
    by_slug: dict[str, list[dict]]      # slug → the page's facts, in date order
    renamed: dict[str, str]             # a role speaker ("User") → the name the sessions give
    pages: int = 0
    facts: int = 0
    superseded: int = 0
    corrected: int = 0
    contradictions: int = 0
    forgotten: dict[str, int] = field(default_factory=dict)  # forget request → facts dropped


def build_wiki(state: DreamState, phrases: list[tuple[str, str]], settings: dict,
               synth: Synthesizer) -> tuple[dict[str, str], dict[str, list[str]], WikiInfo]:
    """Render every managed file from the state. Returns (files, reasons, info)."""
    reasons: dict[str, list[str]] = defaultdict(list)
    files: dict[str, str] = {}
    sessions = state.sessions
    order = sorted(sessions, key=lambda s: (sessions[s].get("date") or "", s))
    forgotten_count: Counter = Counter()

    # summaries + sessions/index.md
    idx_lines = ["# Sessions", ""]
    for sid in order:
        ss = sessions[sid]
        claims = []
        for anchor, speaker, sent in ss["summary"]:
            req = forgotten_by(sent, phrases)
            if req:
                forgotten_count[req] += 1
                continue
            claims.append(Claim(f"{speaker}: {_quote(sent)}",
                                f"sessions/{sid}/transcript.md#{anchor}", ss.get("date"), "Facts"))
        title = ss["title"]
        if forgotten_by(title, phrases):
            title = " & ".join(ss["participants"]) or "Session"
        idx_lines.append(f"- {sid} | {ss.get('date') or 'undated'} | {title}")
        if not ss.get("date"):
            continue  # a summary is dated: the transcript's missing date is reported on it
        files[f"sessions/{sid}/summary.md"] = synth.summary(sid, ss.get("date"), title,
                                                            ss["participants"], ss["turns"], claims)
    files[SESSIONS_INDEX] = "\n".join(idx_lines) + "\n"

    # facts, minus forgotten ones
    # a named assistant ("Aria"), judged over all sessions: its turns are no facts
    service: dict[str, list[int]] = {}
    for sid in order:
        for spk, (n, k) in (sessions[sid].get("service") or {}).items():
            c = service.setdefault(spk, [0, 0])
            c[0] += n
            c[1] += k
    helpers = S.named_assistants(service)
    # a role speaker that stands for the user ("User") takes the name the sessions give it
    role_name: dict[str, Counter] = defaultdict(Counter)
    for sid in order:
        for spk, name in (sessions[sid].get("full_names") or {}).items():
            if is_role(spk):
                role_name[spk][name] += 1
    renamed = {r: sorted(c.items(), key=lambda kv: (-len(kv[0].split()), -kv[1], kv[0]))[0][0]
               for r, c in role_name.items()}
    facts = []
    for sid in order:
        for f in sessions[sid]["facts"]:
            if f["speaker"] in helpers:
                continue
            if f["speaker"] in renamed:
                f = {**f, "speaker": renamed[f["speaker"]],
                     "subjects": {(renamed[f["speaker"]] if n == f["speaker"] else n): t
                                  for n, t in f["subjects"].items()}}
            req = forgotten_by(f["text"], phrases) or next(
                (r for s in f["subjects"] if (r := forgotten_by(s, phrases))), None)
            if req:
                forgotten_count[req] += 1
                continue
            facts.append(f)

    speakers = {f["speaker"] for f in facts} | {p for sid in order for p in sessions[sid].get("participants", [])}
    speakers |= set(renamed.values())
    speakers -= helpers
    rel_cache: dict[int, list] = {}
    full_names: Counter = Counter()
    for sid in order:
        full_names.update(n for spk, n in (sessions[sid].get("full_names") or {}).items()
                          if not is_role(spk))
    strong, anchored = strong_types(facts, rel_cache)
    case: dict[str, list[int]] = {}
    for sid in order:
        for w, (lo, up) in (sessions[sid].get("case") or {}).items():
            c = case.setdefault(w, [0, 0])
            c[0] += lo
            c[1] += up
    subs = S.build(facts, speakers, settings, strong, extra_names=full_names, anchored=anchored,
                   case=case, exclude=helpers)
    hand = state.hand
    # a page a person deleted retires its subject (see edits.py)
    qualifying = [s for s in subs.by_slug if not hand.get(f"knowledge/{s}.md", {}).get("deleted")]
    qualifying.sort(key=lambda s: (-len(subs.by_slug[s].turns), s))
    qualifying = qualifying[: int(settings.get("max_pages", 2000))]
    qset = set(qualifying)
    for s in list(subs.by_slug):
        if s not in qset:
            subs.by_slug.pop(s)
    subs.alias_of = {n: s for n, s in subs.alias_of.items() if s in qset}
    titles = {s: subs.by_slug[s].title for s in qualifying}
    by_slug: dict[str, list[dict]] = defaultdict(list)
    for f in facts:
        for slug in P.fact_slugs(f, subs):
            by_slug[slug].append(f)

    co: dict[str, Counter] = defaultdict(Counter)
    for f in facts:
        slugs = sorted(P.fact_slugs(f, subs))
        for a in slugs:
            for b in slugs:
                if a != b:
                    co[a][b] += 1

    # general contradictions on each page: same speaker, same predicate frame, a different
    # object or the opposite polarity (see contradict.py); the newer statement wins
    contra = page_contradictions(by_slug, qualifying, {})
    for (_fid, slug), (_new, why) in contra.items():
        reasons[f"knowledge/{slug}.md"].append(f"newer statement supersedes an older one ({why})")

    # corrections → cards, and what they correct
    cards = state.cards
    card_files = {}
    live_cards: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    card_facts: list[dict] = []
    user = subs.user()
    for cp, card in sorted(cards.items()):
        if forgotten_by(card["text"], phrases):
            forgotten_count[forgotten_by(card["text"], phrases)] += 1
            continue
        card_files[cp] = render_card(cp, card)
        if not card.get("superseded_by"):
            card_facts.append({"text": card["text"], "ref": cp, "date": card["created"][:10],
                               # a correction is the user's statement about their memory
                               "speaker": user.title if user is not None else "",
                               "session": "", "anchor": cp, "order": 0, "subjects": {},
                               "names": [n for n, _p in T.capitalised_runs(card["text"])],
                               "about_speaker": True, "when": []})
            for s in set(card["subjects"]) | set(subjects_in(card["text"], titles)):
                s = subs.slug_for(s) or s
                if s in qset:
                    live_cards[s].append((cp, card))
    # a subject with nothing to say (a speaker whose turns state no fact, no card about it)
    # gets no page: a page is its cited lines, and one without any has no sources to cite
    empty = {s for s in qualifying if not by_slug[s] and not live_cards.get(s)}
    if empty:
        qualifying = [s for s in qualifying if s not in empty]
        qset -= empty
        titles = {s: t for s, t in titles.items() if s not in empty}
    corrected: dict[tuple[int, str], tuple[str, dict]] = {}
    for slug, lst in live_cards.items():
        for cp, card in lst:
            negs = [norm(m.group(1)) for m in _NEGATED_RE.finditer(card["text"])]
            for f in by_slug[slug]:
                n = f" {norm(f['text'])} "
                # "not X" names what it corrects; otherwise the general check, reading the
                # subject's name in the card as the fact's speaker when the page is theirs
                if any(neg and f" {neg} " in n for neg in negs) or contradiction(
                        f["text"], card["text"], f["speaker"],
                        f["speaker"] if subs.slug_for(f["speaker"]) == slug else None):
                    corrected[(id(f), slug)] = (cp, card)
                    reasons[f"knowledge/{slug}.md"].append(f"correction {cp} supersedes a fact")
    # "…, not X" reaches every page that states X in the same context, named in it or not
    for cp, card in sorted(cards.items()):
        if card.get("superseded_by") or cp not in card_files:
            continue
        for new_v, old_v in reach.pairs(card["text"]):
            for slug in qualifying:
                for f in by_slug[slug]:
                    if (id(f), slug) not in corrected and (f.get("date") or "") <= card["created"][:10] \
                            and reach.states_old_value(f["text"], card["text"], old_v, new_v):
                        corrected[(id(f), slug)] = (cp, card)
                        reasons[f"knowledge/{slug}.md"].append(f"correction {cp} supersedes a fact")
    retired: dict[tuple[int, str], tuple[str, str]] = {}
    for (fid, slug), (new, why) in contra.items():
        # what changed ("num: 47 → 52") names the old value too, which the newer statement
        # (the one this part cites) does not say: the reason goes to the commit message
        retired[(fid, slug)] = (f"— contradicted on {new['date']}: {P.statement(new, subs)}",
                                P.ref_of(new))
    for (fid, slug), (cp, card) in corrected.items():
        retired[(fid, slug)] = (f"— corrected {card['created'][:10]}: {card['text']}", cp)
    models, n_replaced, groups = P.build_models(facts, subs, settings, card_facts, retired, rel_cache)
    # cards from sessions: the user's preferences and standing rules (cards.py)
    user_title = user.title if user else ""
    learned = preference_cards(groups, user.slug if user else None, user_title, P.now_text, P.ref_of)
    said_rules = []
    for sid in order:
        for anchor, speaker, sent in sessions[sid].get("rules", []):
            if not forgotten_by(sent, phrases):
                said_rules.append(({"session": sid, "anchor": anchor, "date": sessions[sid].get("date")},
                                   sent))
    learned.update(rule_cards(said_rules, user.slug if user else None, P.ref_of))
    learned = {p: t for p, t in learned.items() if not forgotten_by(t, phrases)}
    replaced_facts = {id(st.fact) for m in models.values() for st in m.replaced_facts}
    thread_claims = threads(by_slug, qualifying, titles, facts,
                            lambda f, slug: (id(f), slug) in retired or id(f) in replaced_facts,
                            lambda f: P.statement(f, subs), P.ref_of, settings)

    pages: dict[str, str] = {}
    specs: dict[str, PageSpec] = {}
    card_of = {card["source"]: cp for cp, card in cards.items() if cp in card_files}
    last_day = max((f["date"] for f in facts if f.get("date")), default=None)
    for slug in qualifying:
        page_hand = hand.get(f"knowledge/{slug}.md")
        m = models.get(slug) or P.PageModel()
        claims: list[Claim] = []
        # claims a person deleted from this page are not re-added

        def keep(c: Claim, page_hand: dict | None = page_hand) -> bool:
            return not E.forgot(page_hand, _as_fact(c))

        claims += [Claim(c.text, c.source, None, "Now") for c in m.now if keep(c)]
        for cp, card in live_cards.get(slug, []):
            if card.get("hand_page") == f"knowledge/{slug}.md":
                continue  # the hand line citing it stays where the person put it
            # what is true now, without the replaced value ("…, not PDF"): that one is
            # under Superseded, and the current part of a page never states it
            claims.append(Claim(f"Correction: {R.without_negations(card['text'])}", cp,
                                card["created"][:10], "Corrections"))
        claims += [c for c in m.timeline if keep(c)]
        claims += [Claim(c.text, c.source, None, "Superseded", c.extra, c.extra_source)
                   for c in m.superseded if keep(c)]
        claims += [c for c in thread_claims.get(slug, []) if keep(c)]
        claims = P.fit(claims, int(settings.get("max_page_chars", 64000)))
        # a page dated by its facts, or by its cards when a correction is all it holds
        dates = sorted(d for d in (f["date"] for f in by_slug[slug]) if d) or sorted(
            c.date for c in claims if c.date)
        related = sorted(co[slug].items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        sub = subs.by_slug[slug]
        spec = PageSpec(slug, sub.title, sub.type, claims, related, len(sub.turns),
                        len(sub.sessions), dates[0] if dates else None,
                        dates[-1] if dates else None, titles=titles, aliases=list(sub.aliases),
                        is_user=sub.is_user, gist=P.gist(slug, m),
                        importance=importance(sub, by_slug[slug], last_day,
                                              float(settings.get("index_half_life_days", 120))))
        specs[slug] = spec
        pages[f"knowledge/{slug}.md"] = E.merge(synth.page(spec), f"knowledge/{slug}.md",
                                                page_hand, card_of, qset,
                                                lambda ln: forgotten_by(ln, phrases))
    files.update(pages)
    files.update(card_files)
    files.update(learned)
    files[INDEX_PATH] = render_index(specs, synth, int(settings.get("index_cap_tokens", 2000)))
    info = WikiInfo(subs, titles, by_slug, renamed, pages=len(pages), facts=len(facts),
                    superseded=n_replaced, corrected=len(corrected), contradictions=len(contra),
                    forgotten=dict(forgotten_count))
    return files, reasons, info


def strong_types(facts: list[dict], rel_cache: dict[int, list]) -> tuple[dict[str, Counter], set[str]]:
    """Name → type votes from relations ("works at X" → organization, "my dog X" → pet); and
    the names a speaker states a lasting relation to (employer, manager, home, project, pet,
    friend, contact): those are no passing mention, one is enough for a page."""
    out: dict[str, Counter] = defaultdict(Counter)
    anchored: set[str] = set()
    for f in facts:
        # one goes to, visits or travels to a place
        for m in _TRAVEL_RE.finditer(f["text"]):
            out[m.group(1)]["place"] += 1
    for f in facts:
        rels = rel_cache.get(id(f))
        if rels is None:
            rels = rel_cache[id(f)] = R.extract(f["text"])
        for r in rels:
            if r.value_type and r.value:
                out[r.value][r.value_type] += 1
            if r.attr == "species" and r.subject:
                out[r.subject]["pet"] += 1
            if r.subject and (r.attr in ("employer", "manager") or (
                    r.attr == "role" and _JOB_RE.search(r.value))):
                out[r.subject]["person"] += 1
            if not r.subject and r.value_type and r.attr in _ANCHORS:
                anchored.add(r.value)
    return out, anchored


_TRAVEL_RE = re.compile(r"\b(?:travel(?:l)?ing to|travel(?:l)?ed to|went to|going to|flew to|flying to|"
                        r"trip to|visited|visiting|back from|moved to|arrived in|based in)\s+"
                        r"((?:[A-Z][\w\-]+)(?:\s+[A-Z][\w\-]+)*)")
#: A job title's last word ("grant manager", "hardware engineer", "audiologist").
_JOB_RE = re.compile(r"(?:er|or|ist|ian|ant|ent|eer|officer|manager|lead|head|chair|nurse|"
                     r"doctor|student|intern|advisor|adviser|organizer|organiser|coordinator)$")
_ANCHORS = frozenset("employer manager home project pet friend contact".split())


def _as_fact(c: Claim) -> dict:
    """The turn a claim cites, as edits.forgot reads a fact (session, anchor, text)."""
    path, _, anchor = c.source.partition("#")
    parts = path.split("/")
    return {"session": parts[1] if parts[0] == "sessions" and len(parts) > 2 else "",
            "anchor": anchor, "text": c.text}


def importance(sub: S.Subject, facts: list[dict], last_day: str | None, half_life: float) -> float:
    """A page's rank in INDEX.md: the user first; then mentions weighted by recency (a
    mention ``half_life`` days before the newest session counts half)."""
    if sub.is_user:
        return 1e9
    end = T.parse_day(last_day)
    score = 0.0
    for f in facts:
        d = T.parse_day(f.get("date"))
        age = (end - d).days if end and d else 0
        score += 0.5 ** (max(0, age) / half_life)
    return round(score, 6)


def page_contradictions(by_slug: dict[str, list[dict]], slugs: list[str],
                        already: dict[int, Any]) -> dict[tuple[int, str], tuple[dict, str]]:
    """(id(old fact), slug) → (newer fact, why) for statements on one page that a later one
    by the same speaker contradicts. Only identical clause frames can contradict, so the
    clauses are bucketed by frame: linear in the page's facts."""
    out: dict[tuple[int, str], tuple[dict, str]] = {}
    frames: dict[int, list] = {}
    for slug in slugs:
        buckets: dict[tuple, list[tuple[dict, Any]]] = defaultdict(list)
        for f in by_slug[slug]:  # chronological
            if id(f) in already:
                continue
            if id(f) not in frames:
                frames[id(f)] = [fr for fr in clause_frames(f["text"], f["speaker"]) if fr.stative]
            for fr in frames[id(f)]:
                buckets[(f["speaker"], fr.tokens)].append((f, fr))
        for entries in buckets.values():
            for i, (old, a) in enumerate(entries[:-1]):
                if (id(old), slug) in out:
                    continue
                # The newest statement of the frame decides: one restating the old value
                # keeps it live (Osaka → Kyoto → Osaka), one contradicting it supersedes it.
                for new, b in reversed(entries[i + 1:]):
                    if new is old or (b.slots, b.negated) == (a.slots, a.negated):
                        break
                    why = frames_contradict(a, b)
                    if why:
                        out[(id(old), slug)] = (new, why)
                        break
    return out


def render_index(specs: dict[str, PageSpec], synth: Synthesizer, cap_tokens: int) -> str:
    """``knowledge/INDEX.md``: one line per page, the user first, then by importance
    (mentions weighted by recency, :func:`importance`; ties by slug), each with a one-line
    current summary. Cut rule: when the next line would take the file over ``cap_tokens``
    (≈ chars / 4), stop and end with one line saying how many pages are not listed."""
    ranked = sorted(specs.values(), key=lambda s: (-s.importance, -s.mentions, s.slug))
    head = (f"# Knowledge index\n\n{len(ranked)} pages, the user first, then by recent "
            "relevance. Open `knowledge/<slug>.md` for the cited facts.\n\n")
    lines: list[str] = []
    size = len(head)
    reserve = 120  # room for the footer
    for i, spec in enumerate(ranked):
        line = synth.index_line(spec) + "\n"
        if estimate_tokens("x" * (size + len(line) + reserve)) > cap_tokens:
            rest = len(ranked) - i
            lines.append(f"\n… {rest} more page{'s' if rest != 1 else ''} with fewer mentions "
                         f"not listed (cap {cap_tokens} tokens); `ls knowledge/` shows all.\n")
            break
        lines.append(line)
        size += len(line)
    return head + "".join(lines)
