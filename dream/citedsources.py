"""What a citation names, as the run's verification reads it (:class:`CitedSources`): a
transcript turn with what it implies, a hand line, a card with its date."""

from __future__ import annotations

import re

from brainfs.cache.layout import CARDS_DIR, TRANSCRIPT_RE
from brainfs.cache.search.chunker import human_date, split_frontmatter

from . import edits
from .run import Run
from .text import parse_transcript, relative_dates, resolve_relative_dates, sentences


class CitedSources:
    """What a citation names, as verification reads it: a transcript turn with what it
    implies (the session's date, resolved relative dates, the aliases' full names), a hand
    line, a card with its date."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.turn_cache: dict[str, dict[str, str] | None] = {}
        self.day_of: dict[str, str | None] = {}
        self.turn_day: dict[tuple[str, str], str] = {}
        subs = run.info.subjects
        user_sub = subs.user()
        self.user_title = user_sub.title if user_sub else ""
        self.aliases = {n: subs.by_slug[s].title for n, s in subs.alias_of.items()
                        if s in subs.by_slug and n != subs.by_slug[s].title}

    def turns_of(self, tpath: str) -> dict[str, str] | None:
        """anchor → "Speaker: text": a synthesizer that paraphrases ("Mara adopted a dog")
        names the speaker, which the turn's text alone does not contain."""
        if tpath not in self.turn_cache:
            txt = self.run.tree.read(tpath) if tpath in self.run.listing else None
            tr = parse_transcript(tpath, txt) if txt is not None else None
            self.turn_cache[tpath] = None if tr is None else {
                t.anchor: f"{t.speaker}: {t.text}" for t in tr.turns}
            self.day_of[tpath] = tr.date if tr is not None else None
            # a talk that runs past midnight: a turn's own day, where the source gave one
            self.turn_day.update({(tpath, t.anchor): t.day for t in tr.turns if t.day} if tr else {})
        return self.turn_cache[tpath]

    def derived(self, tpath: str, text: str, anchor: str = "") -> str:
        """What a turn implies beyond its words, for verification: its day (the turn's own,
        else the session's), its relative dates resolved, and the full names of the aliases
        it uses. Each sentence's dates are read in that sentence's tense, as extraction reads
        them ("handed it over on Monday. She's leading it now": the last Monday, not the
        next), so a line dated from its sentence is supported by it."""
        day = self.turn_day.get((tpath, anchor)) or self.day_of.get(tpath)
        extra = []
        if day:
            extra.append(f"session date {day} ({human_date(day)})")
            parts = sentences(text) or [text]
            res = " ".join(resolve_relative_dates(p, day) for p in parts)
            if res != " ".join(parts):
                extra.append(res)
                # a resolved day as a page writes it ("until 6 April 2026")
                extra += [human_date(m) for p in parts for _e, m in relative_dates(p, day)
                          if re.fullmatch(r"\d{4}-\d{2}-\d{2}", m)]
        spk = text.split(":", 1)[0]
        renamed, subs = self.run.info.renamed, self.run.info.subjects
        if spk in renamed:  # "User: …" is the user speaking, by the name the sessions give
            who = subs.slug_for(renamed[spk])
            extra.append(f"{spk} = {renamed[spk]}" + (
                f" = {subs.by_slug[who].title}" if who in subs.by_slug else ""))
        extra += [f"{a} = {t}" for a, t in self.aliases.items() if a in text]
        return text + (" [" + "; ".join(extra) + "]" if extra else "")

    def text(self, ref: str) -> str | None:
        """The source text a citation names (None: it names nothing)."""
        path, _, anchor = ref.partition("#")
        if anchor.startswith("hand-"):
            # a hand line's source is the person's edit, kept in the state
            line = next((x["text"] for x in self.run.state.hand.get(path, {}).get("lines", [])
                         if x["id"] == anchor[5:]), None)
            return edits.hand_text(line) if line is not None else None
        if TRANSCRIPT_RE.match(path):
            ts = self.turns_of(path)
            txt = ts.get(anchor) if ts else None
            return self.derived(path, txt, anchor) if txt is not None else None
        files, listing = self.run.files, self.run.listing
        txt = files.get(path) or (self.run.tree.read(path) if path in listing else None)
        if txt is None:
            return None
        meta, body, _bad = split_frontmatter(txt)
        # a card's date is part of what it says (a correction line names when it was made)
        when = [str(meta.get(k))[:10] for k in ("created", "updated") if meta and meta.get(k)]
        # a correction is the user's own statement about their memory
        who = [f"by {self.user_title}"] if self.user_title and path.startswith(CARDS_DIR) else []
        tail = "; ".join([f"dated {', '.join(when)}"] * bool(when) + who)
        return body + (f" [{tail}]" if tail else "")

