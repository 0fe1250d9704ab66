"""Hand edits of wiki pages: detected, kept, and turned into dream's inputs.

Dream re-renders every page from its state on every run, so without this module a line a
person (or an agent) added to ``knowledge/<page>.md`` would vanish on the next run, and a
claim they deleted would come back. Here:

* **What dream wrote** is recorded in the state (``written``): per page, the MD5 of the file
  (= its S3 ETag) and a hash of every body line, with the sources the line cites.
* **Detection** (next run): a page whose current content differs from what dream wrote was
  edited by hand. Lines not written by dream are *hand lines*; dream lines that are gone
  are *deleted claims*. A page object that was deleted is a deleted page.
* **Kept**: hand lines are stored in the state (``hand``) and re-inserted on every render,
  after the line they followed (or at the end of their section, or of the page). Each
  cites its source — the human's edit, ``knowledge/<page>.md#hand-<id>`` (its text is kept
  in the state, which is what verification compares it with) — before any citation of its
  own, which is renumbered to the page's new ``sources``.
* **Deleted claims are not re-added**: a forget scoped to that page (the facts citing that
  turn, whose text the deleted line quoted, or every fact of that turn when the line was a
  paraphrase). A deleted page retires the subject: dream does not write it again.
* **Conflicts**: a hand line that contradicts a claim of the page (the general check of
  :mod:`brainfs.dream.contradict`) becomes a correction event ``corrections/…-hand-….md``;
  the existing corrections machinery turns it into a card, which supersedes the facts it
  contradicts, and the hand line cites that card.

Frontmatter edits are not kept (dream owns the frontmatter); nor are edits of INDEX.md,
summaries, ``sessions/index.md``, cards or the fact records, which are derived: the state
keeps the MD5 of what dream wrote in each (``owned``), so the next run notices one that
another writer changed or deleted (:func:`overwritten`), even when nothing else is new, and
writes it again, saying so (edit the page, write a note, or ``brainfs correct`` instead).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

from brainfs.cache.layout import is_page as layout_is_page
from brainfs.cache.layout import slug_of, turn_ref
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.forget import forgotten_by, norm

from .contradict import contradiction
from .corrections import correction_event
from .state import DreamState
from .synth import frontmatter
from .text import md5_hex
from .validate import CITE_ANY_RE, CITE_OK_RE, LINK_RE

_HEADING_RE = re.compile(r"^#{1,6}\s")
_QUOTED_RE = re.compile(r"“([^”]{3,})”")


def is_page(path: str) -> bool:
    """A page whose hand edits are kept (not the INDEX, which is derived)."""
    return layout_is_page(path)


def line_hash(line: str) -> str:
    return md5_hex(" ".join(line.split()))[:12]


def quote_key(text: str) -> str:
    """A short key of a quotation, comparable with a fact's text (quote marks normalized)."""
    return md5_hex(norm(re.sub("['\"‘’“”]", "", text)))[:10]


def strip_cites(line: str) -> str:
    return " ".join(CITE_OK_RE.sub("", line).split())


def _cited_refs(line: str, sources: list) -> list[str]:
    out = []
    for m in CITE_OK_RE.finditer(line):
        for n in (int(x) for x in m.group(1).split(",")):
            if 0 < n <= len(sources) and isinstance(sources[n - 1], str):
                out.append(sources[n - 1])
    return list(dict.fromkeys(out))


def _body_lines(text: str) -> tuple[list, list[str]]:
    meta, body, bad = split_frontmatter(text)
    sources = (meta or {}).get("sources") or [] if not bad else []
    return (sources if isinstance(sources, list) else []), body.split("\n")


# --------------------------------------------------------------------------- what dream wrote


def written_record(text: str, hand_ids: dict[str, str]) -> dict[str, Any]:
    """The state's record of a page dream wrote: its MD5 and, per body line, the sources it
    cites and (for a hand line) the hand line's id."""
    sources, lines = _body_lines(text)
    rec: dict[str, Any] = {}
    for ln in lines:
        if not ln.strip():
            continue
        entry: dict[str, Any] = {"refs": [r for r in _cited_refs(ln, sources) if "#hand-" not in r]}
        q = _QUOTED_RE.search(ln)
        if q and entry["refs"]:
            entry["q"] = quote_key(q.group(1))  # which fact of the turn the line quoted
        hid = hand_ids.get(norm(strip_cites(ln)))
        if hid:
            entry["hand"] = hid
        rec[line_hash(ln)] = entry
    return {"md5": md5_hex(text), "lines": rec}


# --------------------------------------------------------------------------- detection


@dataclass
class Edit:
    """What a person changed in one page since dream wrote it."""

    path: str
    added: list[dict] = field(default_factory=list)    # new hand lines
    removed: list[dict] = field(default_factory=list)  # dream claims deleted: {"refs", "text"}
    dropped_hand: list[str] = field(default_factory=list)  # ids of hand lines deleted again
    deleted_page: bool = False
    #: the page was replaced whole: no frontmatter and none of dream's lines left ("oops",
    #: an empty file), which is no edit of it: its claims stay, its new lines are kept
    replaced: bool = False

    def describe(self) -> str:
        if self.deleted_page:
            return "page deleted by hand: subject retired"
        parts = []
        if self.replaced:
            parts.append("replaced whole without its frontmatter, which deletes no claim (to "
                         "delete one, edit the page or `brainfs correct`): written again")
        if self.added:
            parts.append(f"+{len(self.added)} hand line{'s' if len(self.added) != 1 else ''} kept")
        if self.removed:
            parts.append(f"−{len(self.removed)} claim{'s' if len(self.removed) != 1 else ''} deleted by hand, "
                         "not re-added")
        if self.dropped_hand:
            parts.append(f"−{len(self.dropped_hand)} hand line(s) removed by hand")
        return "hand edit: " + ("; ".join(parts) or "formatting only")


def detect(tree: Any, listing: dict[str, str], written: dict[str, dict]) -> list[Edit]:
    """Pages changed (or deleted) since dream wrote them."""
    edits = []
    for path, rec in sorted(written.items()):
        if path not in listing:
            edits.append(Edit(path, deleted_page=True))
            continue
        if listing[path] == rec["md5"]:
            continue
        text = tree.read(path)
        if text is None or md5_hex(text) == rec["md5"]:
            continue  # a multipart ETag, same bytes
        sources, lines = _body_lines(text)
        edit = Edit(path, replaced=split_frontmatter(text)[0] is None)
        present = set()
        section, prev = None, ""
        for ln in lines:
            if not ln.strip():
                continue
            h = line_hash(ln)
            present.add(h)
            if _HEADING_RE.match(ln):
                section = ln.lstrip("#").strip() if ln.startswith("## ") else section
            if h not in rec["lines"]:
                edit.added.append({"id": h, "text": ln.rstrip(), "after": prev, "section": section,
                                   "refs": _cited_refs(ln, sources)})
            prev = ln.rstrip()
        # "echo oops >" through a mount, a truncated write, another file's text: not an
        # edited copy of the page (the write API refuses it), so its claims are not taken
        # as deleted by hand, which would retire every one of them for good
        edit.replaced = edit.replaced and not present & set(rec["lines"])
        for h, entry in rec["lines"].items():
            if h in present or edit.replaced:
                continue
            if entry.get("hand"):
                edit.dropped_hand.append(entry["hand"])
            elif entry.get("refs"):
                edit.removed.append({"refs": entry["refs"], "q": entry.get("q")})
        if edit.added or edit.removed or edit.dropped_hand or edit.replaced:
            edits.append(edit)
    return edits


def overwritten(tree: Any, listing: dict[str, str], owned: dict[str, str]) -> dict[str, str]:
    """Derived files dream owns (``DreamState.owned``: path → MD5 of what it wrote) that
    another writer changed or deleted since: path → "changed" or "deleted"."""
    out = {}
    for path, md5 in sorted(owned.items()):
        if listing.get(path) == md5:
            continue
        if path not in listing:
            out[path] = "deleted"
            continue
        text = tree.read(path)
        if text is not None and md5_hex(text) == md5:
            continue  # a multipart ETag, same bytes
        out[path] = "changed"
    return out


#: The section a person's own page is kept under once dream writes a page at its path.
ADOPTED_SECTION = "Kept from the page as it was"


def adopt(tree: Any, listing: dict[str, str], written: dict[str, dict], managed: list[str],
          hand: dict[str, dict], phrases: list[str] = ()) -> list[Edit]:
    """Pages a person (or an import) wrote that dream has never written, at paths it writes
    now (``listing``): every statement line is a hand line of that page, kept under :data:`ADOPTED_SECTION`, so that when
    dream writes a page at that path nothing of theirs is lost. They are the person's
    words, not a correction: they never supersede what the sessions say (``event`` is set
    to "checked, no conflict"). Only lines not adopted yet count, so a second run finds
    nothing new."""
    edits = []
    for path in sorted(listing):
        if not is_page(path) or path in written or path in managed:
            continue
        known = {x["id"] for x in (hand.get(path) or {}).get("lines", [])}
        text = tree.read(path)
        if text is None:
            continue
        sources, lines = _body_lines(text)
        edit, prev = Edit(path), ""
        for ln in lines:
            if not ln.strip() or _HEADING_RE.match(ln):
                continue  # headings are the old page's structure, not statements
            if phrases and forgotten_by(ln, list(phrases)):
                continue  # a forget request names it: not kept, not even in the state
            h = line_hash(ln)
            if h not in known:
                # its own citations keep pointing at their evidence
                edit.added.append({"id": h, "text": ln.rstrip(), "after": prev,
                                   "section": ADOPTED_SECTION, "refs": _cited_refs(ln, sources),
                                   "adopted": True})
            prev = ln.rstrip()
        if edit.added:
            edits.append(edit)
    return edits


def record(state: DreamState, edits: list[Edit]) -> None:
    """Fold detected edits into ``state.hand`` (hand lines, page forgets, retired pages)."""
    hand = state.hand
    for e in edits:
        h = hand.setdefault(e.path, {"lines": [], "forget": [], "deleted": False})
        if e.deleted_page:
            h["deleted"] = True
            continue
        ids = {x["id"] for x in h["lines"]}
        h["lines"] = [x for x in h["lines"] if x["id"] not in set(e.dropped_hand)]
        for a in e.added:
            if a["id"] not in ids and strip_cites(a["text"]).strip("-* ").strip():
                # an adopted line is checked already: a person's page is no correction
                h["lines"].append({**a, "event": "" if a.get("adopted") else None})
        for r in e.removed:
            if r not in h["forget"]:
                h["forget"].append(r)


# --------------------------------------------------------------------------- rendering


def forgot(hand: dict | None, fact: dict) -> bool:
    """Did a person delete this fact's claim from this page?"""
    if not hand:
        return False
    ref = turn_ref(fact["session"], fact["anchor"])
    for fg in hand.get("forget", []):
        # the deleted line's first cited source is the claim's own (a Superseded line also
        # cites what superseded it); a quoted line names its fact, a paraphrase (no quote)
        # stood for the whole turn
        if fg["refs"] and fg["refs"][0] == ref and (not fg.get("q") or fg["q"] == quote_key(fact["text"])):
            return True
    return False


def hand_text(line: str) -> str:
    """The statement of a hand line (Markdown, citations and list marker removed)."""
    s = strip_cites(line)
    s = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", s)
    return s.replace("[[", "").replace("]]", "").replace("**", "").strip()


def merge(text: str, path: str, hand: dict | None, card_of: dict[str, str],
          slugs: set[str] | None = None, drop: Any = None) -> str:
    """``text`` (a rendering of the page) with the page's hand lines put back, each citing
    its source first (the correction card its event became, else the hand edit itself).
    A hand line must not make the page invalid (validation would then freeze the page at
    its hand-edited version): a ``[[link]]`` to no page (not in ``slugs``) is unlinked and a
    malformed citation removed. ``drop(text)`` true → the line is left out (a forget
    request names it)."""
    if not hand or not hand.get("lines"):
        return text
    meta, body, bad = split_frontmatter(text)
    if bad or meta is None:
        return text
    sources = list(meta.get("sources") or [])

    def cite(ref: str) -> int:
        if ref not in sources:
            sources.append(ref)
        return sources.index(ref) + 1

    lines = body.rstrip("\n").split("\n")
    for h in hand["lines"]:
        ln = h["text"]
        if drop is not None and drop(ln):
            continue
        ln = CITE_ANY_RE.sub(lambda m: m.group(0) if CITE_OK_RE.fullmatch(m.group(0)) else "", ln)
        if slugs is not None:
            ln = LINK_RE.sub(lambda m: m.group(0) if m.group(1).strip() in slugs else m.group(1).strip(), ln)
        h["shown"] = ln  # as published: how the next run recognizes the line as a hand line
        if not _HEADING_RE.match(ln):
            own = [cite(r) for r in h.get("refs", [])]
            stripped = CITE_OK_RE.sub("", ln).rstrip()
            src = card_of.get(h.get("event") or "") or f"{path}#hand-{h['id']}"
            ln = f"{stripped} [cite:{cite(src)}]" + (f" [cite:{','.join(map(str, own))}]" if own else "")
        pos = _position(lines, h)
        if pos is None:
            # its section is gone from the rendering (its dream claims were deleted): put
            # the section back for it, before Related
            pos = _before_related(lines)
            lines[pos:pos] = ["", f"## {h['section']}", ""]
            pos += 3
        lines.insert(pos, ln)
    meta["sources"] = sources
    return frontmatter(meta) + "\n" + "\n".join(lines) + "\n"


def _position(lines: list[str], h: dict) -> int | None:
    """Where a hand line goes: after the line it followed, else at the end of its section,
    else None (its section is gone), else before ``## Related``."""
    after = h.get("after") or ""
    if after:
        key = norm(strip_cites(after))
        for i, ln in enumerate(lines):
            if key and norm(strip_cites(ln)) == key:
                return i + 1
    sec = h.get("section")
    if sec:
        for i, ln in enumerate(lines):
            if ln.strip() == f"## {sec}":
                j = i + 1
                while j < len(lines) and not lines[j].startswith("## "):
                    j += 1
                while j > i + 1 and not lines[j - 1].strip():
                    j -= 1
                return j
        if not _HEADING_RE.match(h["text"]):
            return None
    return _before_related(lines)


def _before_related(lines: list[str]) -> int:
    related = next((i for i, ln in enumerate(lines) if ln.strip() == "## Related"), None)
    if related is None:
        return len(lines)
    while related > 0 and not lines[related - 1].strip():
        related -= 1
    return related


# --------------------------------------------------------------------------- conflicts


def conflict_events(state: DreamState, facts_of: dict[str, list[dict]], titles: dict[str, str],
                    now: _dt.datetime) -> dict[str, str]:
    """A correction event (path → content) for each new hand line that contradicts a fact
    of its page (live or just deleted by hand): the corrections machinery takes it from
    there. Records the event on the hand line."""
    out = {}
    for path, h in sorted(state.hand.items()):
        slug = slug_of(path)
        title = titles.get(slug)
        for x in h.get("lines", []):
            if x.get("event") is not None or _HEADING_RE.match(x["text"]):
                continue
            stmt = hand_text(x["text"])
            x["event"] = ""  # checked; "" = no conflict
            for f in facts_of.get(slug, []):
                # on the speaker's own page, their name in the hand line is their "I"
                self_name = f["speaker"] if title == f["speaker"] else None
                why = contradiction(f["text"], stmt, f["speaker"], self_name)
                if why:
                    ep, content = correction_event(stmt, scope=path, now=now)
                    ep = ep[:-3] + f"-hand-{x['id'][:6]}.md"
                    content = content.replace("type: correction-event\n",
                                              f"type: correction-event\norigin: hand-edit\npage: {path}\n", 1)
                    x["event"] = ep
                    x["conflict"] = why
                    out[ep] = content
                    break
    return out
