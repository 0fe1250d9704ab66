"""Split memory-tree files into search chunks.

Four forms, chosen by path first and content second:

* **Transcripts** (``sessions/<id>/transcript.md``): frontmatter ``session``, ``date``
  (ISO 8601), ``participants``; every turn is a paragraph that starts with its anchor and
  speaker — ``[D3:7] Mara: I adopted a dog.`` One chunk per turn; the anchor is the turn id
  (so a hit cites ``sessions/<id>/transcript.md#D3:7``), the session date is kept as the
  chunk's created/updated date, and the chunk text is prefixed with speaker and date so
  both BM25 and the embedding see who said it and when.
* **Markdown pages and notes**: frontmatter (title, type, scope, confidence, created,
  updated), then split by heading and, inside a section, by paragraph under a size cap.
  The anchor is the heading's GitHub-style slug. A chunk's ``[cite:N]`` markers are
  resolved through the frontmatter ``sources:`` into ``Chunk.cites`` (the chunk alone
  does not say which turn a line restates; recall needs to know).
* **Fact records** (``knowledge/.facts.jsonl``, ``cache.facts.records``): one chunk per
  record, kind ``fact``, anchored by its id, dated from when it held.
* **Anything else**: plain paragraphs, anchored by their first line (``L12``) so an agent
  can jump there with ``sed -n``.

Malformed frontmatter never raises: the file is chunked as plain text and the chunks carry
``malformed_frontmatter=True`` (and a warning is logged) so the problem stays visible.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from brainfs.cache.facts.records import FACTS_PATH, FactFormatError, FactRecord
from brainfs.cache.layout import KNOWLEDGE, NOTES

# yaml (14 ms) is imported when a frontmatter block is parsed: the mount's daemon imports
# this module at start, and needs yaml only once a file with frontmatter is chunked.

log = logging.getLogger(__name__)

#: Soft cap on a page/text chunk, in characters. ~1,200 chars ≈ 250–300 MiniLM tokens: the
#: model truncates at 256 word pieces, so a longer chunk would be embedded only in part.
CHUNK_CHARS = 1200

#: Cap on a piece of a cited claim list (``- claim [cite:N]`` items), in characters: about
#: a transcript turn (LoCoMo turns average ~45 MiniLM word pieces ≈ 200 characters), so a
#: wiki hit and a turn hit are compared at equal size. A longer single claim stays whole
#: up to CHUNK_CHARS.
CLAIM_CHARS = 220

#: Frontmatter larger than this is treated as malformed: a memory file's header is a few
#: hundred bytes, and a huge one is more likely a mistake (or hostile) than metadata.
MAX_FRONTMATTER_CHARS = 64_000

#: Default confidence by kind, used when the frontmatter gives none.
#: A transcript turn is a verbatim record (what was said is certain, though it may be
#: superseded later); guide instructions are standing truth; pages and notes are distilled
#: and cited; summaries are lossy; untyped text and indexes are weakest.
DEFAULT_CONFIDENCE: dict[str, float] = {
    "guide": 1.0,
    "turn": 0.9,
    "page": 0.8,
    "note": 0.8,
    "summary": 0.7,
    "text": 0.6,
    "index": 0.5,
}

#: Words a frontmatter ``confidence`` may use instead of a number.
_CONFIDENCE_WORDS = {
    "certain": 1.0, "very high": 0.95, "high": 0.9, "medium": 0.6, "moderate": 0.6,
    "low": 0.3, "very low": 0.15, "unknown": 0.5,
}


@dataclass
class Chunk:
    """One retrievable passage of a memory file.

    ``anchor`` is what follows ``#`` in a citation (a turn id, a heading slug, ``L<line>``,
    or ``""`` for a file's preamble); ``ordinal`` is the chunk's position in its file and
    makes (path, ordinal) unique even when several chunks share a heading anchor.
    """

    path: str
    anchor: str
    kind: str
    scope: str | None
    confidence: float
    created: str | None
    updated: str | None
    title: str | None
    speaker: str | None
    text: str
    ordinal: int
    heading: str | None = None
    malformed_frontmatter: bool = field(default=False, compare=False)
    #: the sources the chunk's ``[cite:N]`` markers name, resolved through its file's
    #: frontmatter ``sources:`` ({N: ``sessions/s3/transcript.md#D3:6``}): recall leaves a
    #: wiki line to the turns it cites when it returns them too (``restated``)
    cites: dict[int, str] = field(default_factory=dict, compare=False)

    @property
    def ref(self) -> str:
        """The citation form ``path#anchor`` (just ``path`` for an empty anchor)."""
        return f"{self.path}#{self.anchor}" if self.anchor else self.path

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


# --------------------------------------------------------------------------- helpers

_TRANSCRIPT_RE = re.compile(r"(?:^|/)sessions/[^/]+/transcript\.md$")
#: A transcript turn's first line, ``[anchor] Speaker: text`` (cache/FORMAT.md *Turns*): the
#: grammar every reader and writer of transcripts shares.
TURN_RE = re.compile(r"^\[(?P<anchor>[^\]\s]{1,64})\]\s*(?P<speaker>[^:\n\]]{1,80}?)\s*:\s?(?P<text>.*)$")
_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_BULLET_RE = re.compile(r"^\s{0,3}[-*+]\s+\S")
_CLAIM_CITE_RE = re.compile(r"\[cite:\s*[0-9][0-9,\s]*\]", re.I)
_CITE_NUMBERS_RE = re.compile(r"\[cite:\s*([0-9][0-9,\s]*)\]", re.I)


def cite_numbers(text: str) -> list[int]:
    """The ``[cite:N]`` (and ``[cite:1,2]``) numbers in a text, in order, without duplicates."""
    out: list[int] = []
    for m in _CITE_NUMBERS_RE.finditer(text or ""):
        for n in re.findall(r"\d+", m.group(1)):
            if int(n) not in out:
                out.append(int(n))
    return out


def _source_target(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("path", "source", "ref", "target", "file", "url"):
            if isinstance(item.get(key), str):
                return item[key]
    return None


def source_table(meta: dict[str, Any] | None) -> dict[int, str]:
    """Frontmatter ``sources`` → {cite number: ref}. Accepts a list (1-based, items may be
    strings — optionally "[3] path" — or dicts with an ``id``/``n`` and a ``path``/
    ``source``) or a mapping keyed by number. Never raises."""
    sources = (meta or {}).get("sources")
    if isinstance(sources, list):
        items: list[tuple[Any, Any]] = list(enumerate(sources, 1))
    elif isinstance(sources, dict):
        items = list(sources.items())
    else:
        return {}
    table: dict[int, str] = {}
    for key, item in items:
        num: Any = key
        if isinstance(item, dict):
            for kk in ("id", "n", "num", "cite"):
                if isinstance(item.get(kk), int):
                    num = item[kk]
                    break
        elif isinstance(item, str):
            m = re.match(r"^\s*\[(\d+)\][:.)]?\s+(\S.*)$", item)
            if m:
                num, item = int(m.group(1)), m.group(2)
        target = _source_target(item)
        try:
            num = int(str(num).strip("[] "))
        except ValueError:
            continue
        if target and target.strip():
            table.setdefault(num, target.strip())
    return table


def path_kind(path: str) -> str:
    """The kind a path implies in the memory tree (before frontmatter is read)."""
    p = path.replace("\\", "/").lstrip("/")
    name = p.rsplit("/", 1)[-1].lower()
    if _TRANSCRIPT_RE.search(p):
        return "turn"
    if re.search(r"(?:^|/)sessions/[^/]+/summary\.md$", p):
        return "summary"
    if name in ("index.md",):
        return "index"
    if name == "guide.md":
        return "guide"
    if p.startswith(KNOWLEDGE) or "/" + KNOWLEDGE in p:
        return "page"
    if p.startswith(NOTES) or "/" + NOTES in p:
        return "note"
    return "text"


def decode(data: bytes | str) -> str:
    """Bytes → str, never raising: UTF-8 with replacement characters, BOM dropped, NULs
    removed (SQLite and the tokenizer treat NUL as end of string)."""
    if isinstance(data, bytes):
        text = data.decode("utf-8", errors="replace")
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")


def slugify(heading: str) -> str:
    """GitHub-style heading slug: lower case, punctuation dropped, spaces → hyphens."""
    # Not text.slug_words: an anchor keeps non-ASCII letters, "_" and every hyphen, as Markdown
    # renderers make the #fragment of a heading; slug_words folds to ASCII for file names.
    s = unicodedata.normalize("NFKC", heading).strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    s = s.replace(" ", "-")
    return s or "section"


def normalize_date(value: Any) -> str | None:
    """A frontmatter date (str, date, datetime, epoch number) → ISO 8601 string, or None.

    Unparseable strings are kept verbatim when they at least look like a date prefix,
    because showing the author's date beats dropping it.
    """
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return _dt.datetime.fromtimestamp(float(value), _dt.timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    s = str(value).strip()[:64]
    try:
        return _dt.datetime.fromisoformat(s.replace("Z", "+00:00")).isoformat()
    except ValueError:
        pass
    m = re.match(r"(\d{4}-\d{2}-\d{2})", s)
    if m:
        try:
            return _dt.date.fromisoformat(m.group(1)).isoformat()
        except ValueError:
            return None
    return None


def human_date(iso: str | None) -> str | None:
    """"2023-05-08T13:56:00" → "8 May 2023" (None if not a date).

    Used in the searchable prefix of a turn: people ask "what did she do in May 2023?",
    and the unicode61 tokenizer cannot find a month name inside "2023-05-08".
    """
    if not iso:
        return None
    try:
        d = _dt.date.fromisoformat(iso[:10])
    except ValueError:
        return None
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def parse_confidence(value: Any, default: float) -> float:
    """Frontmatter confidence (0..1, a percentage, "85%", or a word) → float in [0, 1]."""
    if value is None or isinstance(value, bool):
        return default
    try:
        if isinstance(value, str):
            v = value.strip().lower()
            if v in _CONFIDENCE_WORDS:
                return _CONFIDENCE_WORDS[v]
            pct = v.endswith("%")
            f = float(v.rstrip("%").strip())
            if pct:
                f /= 100.0
        else:
            f = float(value)
    except (TypeError, ValueError):
        return default
    if f != f:  # NaN
        return default
    if f > 1.0:  # "85" means 85 %
        f /= 100.0
    return min(1.0, max(0.0, f))


def _scalar(value: Any, limit: int = 200) -> str | None:
    """A frontmatter value shown as a short string (lists joined), or None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value[:20] if v is not None)
    elif isinstance(value, dict):
        return None
    s = str(value).strip()
    return s[:limit] or None


def split_frontmatter(text: str) -> tuple[dict[str, Any] | None, str, bool]:
    """Split ``---``-delimited YAML frontmatter from a document.

    Returns ``(meta, body, malformed)``: ``meta`` is None when there is no frontmatter;
    ``malformed`` is True when a block was opened but could not be read as a YAML mapping,
    in which case ``body`` is the whole text. Never raises.
    """
    if not text.startswith("---"):
        return None, text, False
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return None, text, False
    # The block ends at the next line that is exactly '---' or '...'.
    m = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M).search(text, first_nl + 1)
    if not m:
        return None, text, True
    block = text[first_nl + 1 : m.start()]
    body = text[m.end() :].lstrip("\n")
    if len(block) > MAX_FRONTMATTER_CHARS:
        return None, text, True
    if not block.strip():
        return {}, body, False
    try:
        import yaml  # PyYAML, a dependency of python-frontmatter

        # libyaml's loader where PyYAML was built with it: the same safe subset, and
        # reading every page's frontmatter was half of an incremental dream run.
        meta = yaml.load(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # noqa: BLE001 - any YAML failure (scanner, recursion, …) = malformed
        return None, text, True
    if meta is None:
        return {}, body, False
    if not isinstance(meta, dict):
        return None, text, True
    return {str(k): v for k, v in meta.items()}, body, False


def _split_long(text: str, cap: int) -> list[str]:
    """Split a too-long paragraph at sentence ends, else at spaces, else hard."""
    out: list[str] = []
    rest = text
    while len(rest) > cap:
        window = rest[:cap]
        cut = max(window.rfind(". "), window.rfind("! "), window.rfind("? "), window.rfind("\n"))
        if cut < cap // 3:
            cut = window.rfind(" ")
        if cut < cap // 3:
            cut = cap - 1
        out.append(rest[: cut + 1].strip())
        rest = rest[cut + 1 :].lstrip()
    if rest.strip():
        out.append(rest.strip())
    return out


def _pack_paragraphs(paragraphs: list[tuple[int, str]], cap: int) -> list[tuple[int, str]]:
    """Greedily pack (line, paragraph) pairs into pieces of at most ``cap`` chars.

    Keeps the first line number of each piece (the ``L<line>`` anchor of plain text).
    """
    pieces: list[tuple[int, str]] = []
    cur: list[str] = []
    cur_line = 0
    cur_len = 0
    for line, para in paragraphs:
        if len(para) > cap:
            if cur:
                pieces.append((cur_line, "\n\n".join(cur)))
                cur, cur_len = [], 0
            for part in _split_long(para, cap):
                pieces.append((line, part))
            continue
        if cur and cur_len + 2 + len(para) > cap:
            pieces.append((cur_line, "\n\n".join(cur)))
            cur, cur_len = [], 0
        if not cur:
            cur_line = line
        cur.append(para)
        cur_len += len(para) + (2 if cur_len else 0)
    if cur:
        pieces.append((cur_line, "\n\n".join(cur)))
    return pieces


def _claims(paragraph: str) -> list[str] | None:
    """The items of a bullet list whose every item carries its own ``[cite:N]`` (a list of
    claims, as dream writes them), else None."""
    items: list[str] = []
    for line in paragraph.split("\n"):
        if _BULLET_RE.match(line):
            items.append(line.strip())
        elif items and line.strip():
            items[-1] += " " + line.strip()  # a wrapped item continues
        else:
            return None
    if not items or not all(_CLAIM_CITE_RE.search(it) for it in items):
        return None
    return items


def _pack_sections(paras: list[tuple[int, str]], cap: int) -> list[tuple[int, str]]:
    """:func:`_pack_paragraphs`, except that a list of cited claims is packed under
    ``CLAIM_CHARS`` and never with prose: a claim is an atomic, sourced statement, and a hit
    on one should be about as long as a transcript turn — not a page section of a dozen
    claims that outweighs a turn passage by its size alone."""
    out: list[tuple[int, str]] = []
    prose: list[tuple[int, str]] = []
    claims: list[tuple[int, str]] = []

    def flush() -> None:
        out.extend(_pack_paragraphs(prose, cap))
        prose.clear()
        cur: list[str] = []
        first = 0
        for n, item in claims:
            if cur and sum(len(c) + 1 for c in cur) + len(item) > CLAIM_CHARS:
                out.append((first, "\n".join(cur)))  # one newline: the piece is still a list
                cur = []
            if not cur:
                first = n
            if len(item) > cap:  # only a claim longer than a whole chunk is cut
                out.extend((n, part) for part in _split_long(item, cap))
                continue
            cur.append(item)
        if cur:
            out.append((first, "\n".join(cur)))
        claims.clear()

    for line, para in paras:
        items = _claims(para)
        if items is None:
            if claims:
                flush()
            prose.append((line, para))
        else:
            if prose:
                flush()
            claims.extend((line, it) for it in items)
    flush()
    return out


def _paragraphs(lines: list[str], first_line: int) -> list[tuple[int, str]]:
    """Blank-line separated paragraphs with their 1-based starting line numbers.

    Fenced code blocks are kept whole (blank lines inside them do not split).
    """
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = first_line
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if buf:
                out.append((start, "\n".join(buf).strip()))
                buf = []
            continue
        if not buf:
            start = first_line + i
        buf.append(line)
    if buf:
        out.append((start, "\n".join(buf).strip()))
    return [(n, p) for n, p in out if p]


# --------------------------------------------------------------------------- forms

def _chunk_transcript(path: str, meta: dict[str, Any], body: str, malformed: bool) -> list[Chunk]:
    session = _scalar(meta.get("session")) or path.replace("\\", "/").split("/")[-2]
    date = normalize_date(meta.get("date"))
    day = human_date(date)
    title = f"Session {session}" + (f" ({date[:10]})" if date else "")
    conf = DEFAULT_CONFIDENCE["turn"]
    chunks: list[Chunk] = []

    # a turn's own time, where the source gave one (cache/FORMAT.md, ``turn_times``)
    times = meta.get("turn_times") if isinstance(meta.get("turn_times"), dict) else {}

    def add(anchor: str, speaker: str | None, text: str, kind: str = "turn") -> None:
        text = text.strip()
        if not text:
            return
        when = normalize_date(times.get(anchor)) or date if times else date
        said = human_date(when) if when != date else day
        if speaker:
            shown = f"{speaker} ({said}): {text}" if said else f"{speaker}: {text}"
        else:
            shown = text
        chunks.append(Chunk(path=path, anchor=anchor, kind=kind, scope=None, confidence=conf,
                            created=when, updated=when, title=title, speaker=speaker,
                            text=shown, ordinal=len(chunks), malformed_frontmatter=malformed))

    # A new turn starts at any line that opens with "[anchor] Speaker:"; other lines continue
    # the current turn (multi-line turns) or, before any turn, form free text paragraphs.
    cur: tuple[str, str, list[str]] | None = None
    loose: list[tuple[int, str]] = []
    lines = body.split("\n")
    for lineno, line in enumerate(lines, 1):
        m = TURN_RE.match(line.strip())
        if not m and _HEADING_RE.match(line.strip()):
            continue  # "# Session 3" style headings are layout, not content
        if m:
            if cur:
                add(cur[0], cur[1], "\n".join(cur[2]))
            cur = (m.group("anchor"), m.group("speaker").strip(), [m.group("text")])
        elif cur is not None:
            if line.strip() or (cur[2] and cur[2][-1].strip()):
                # A blank line ends the turn's paragraph; text after it (before the next
                # anchor) is still kept with the turn rather than silently dropped.
                cur[2].append(line)
        elif line.strip():
            loose.append((lineno, line.strip()))
    if cur:
        add(cur[0], cur[1], "\n".join(cur[2]).strip())
    for lineno, text in loose:
        add(f"L{lineno}", None, text, kind="text")
    # What cache/FORMAT.md does not allow is still indexed (never lost), but said once per
    # file and process, naming the file and the fix: dream and recall would otherwise see a
    # session of 0 turns, or an undated one, without a word.
    if loose and not any(c.kind == "turn" for c in chunks):
        _warn_once(path, "no-turns", "%s: a transcript without turns (paragraphs '[D1:1] Speaker: "
                   "text', see cache/FORMAT.md); its lines are indexed as plain text (brainfs "
                   "import-sessions FILE s3://B/P writes 'Speaker:' lines as turns)", path)
    elif chunks and date is None:
        _warn_once(path, "no-date", "%s: transcript frontmatter has no 'date' (ISO 8601, see "
                   "cache/FORMAT.md); its turns are indexed undated", path)
    return chunks


#: (path, problem) already warned about in this process (a file is chunked more than once
#: by dream: one warning is enough).
_WARNED: set[tuple[str, str]] = set()


def _warn_once(path: str, what: str, msg: str, *args: Any) -> None:
    if (path, what) not in _WARNED:
        _WARNED.add((path, what))
        log.warning(msg, *args)


def _chunk_markdown(path: str, meta: dict[str, Any], body: str, body_line: int,
                    base_kind: str, cap: int) -> list[Chunk]:
    fm_type = _scalar(meta.get("type"), 40)
    kind = fm_type.lower() if fm_type else base_kind
    default_conf = DEFAULT_CONFIDENCE.get(base_kind, DEFAULT_CONFIDENCE["text"])
    confidence = parse_confidence(meta.get("confidence"), default_conf)
    scope = _scalar(meta.get("scope"), 80)
    created = normalize_date(meta.get("created") or meta.get("date"))
    updated = normalize_date(meta.get("updated")) or created
    title = _scalar(meta.get("title"), 200)

    lines = body.split("\n")
    # Sections: (heading text or None, first line index, lines); fenced code can hold '#'.
    sections: list[tuple[str | None, int, list[str]]] = [(None, 0, [])]
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING_RE.match(line)
        if m:
            sections.append((m.group(2).strip(), i + 1, []))
        else:
            sections[-1][2].append(line)
    # A page without a frontmatter title takes its first level-1 heading as title.
    if not title:
        for line in lines:
            m = _HEADING_RE.match(line)
            if m and len(m.group(1)) == 1:
                title = m.group(2).strip()[:200]
                break
    if not title:
        title = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]

    sources = source_table(meta)
    chunks: list[Chunk] = []
    seen_slugs: dict[str, int] = {}
    for heading, start, sec_lines in sections:
        if heading is None:
            anchor = ""
        else:
            base = slugify(heading)
            n = seen_slugs.get(base, 0)
            seen_slugs[base] = n + 1
            anchor = base if n == 0 else f"{base}-{n}"
        paras = _paragraphs(sec_lines, body_line + start)
        for _line, piece in _pack_sections(paras, cap):
            chunks.append(Chunk(path=path, anchor=anchor, kind=kind, scope=scope,
                                confidence=confidence, created=created, updated=updated,
                                title=title, speaker=None, text=piece, ordinal=len(chunks),
                                heading=heading,
                                cites={n: sources[n] for n in cite_numbers(piece) if n in sources}))
        if heading is not None and not paras and heading != title:
            # A heading with no body still names a subject worth finding.
            chunks.append(Chunk(path=path, anchor=anchor, kind=kind, scope=scope,
                                confidence=confidence, created=created, updated=updated,
                                title=title, speaker=None, text=heading, ordinal=len(chunks),
                                heading=heading))
    return chunks


def _chunk_facts(path: str, text: str) -> list[Chunk]:
    """The fact records (``knowledge/.facts.jsonl``): one chunk per record, kind ``fact``,
    anchored by its id (a hit cites ``knowledge/.facts.jsonl#f-…``), dated from when it
    held; a line that is not a record is left out (the records' reader names it)."""
    chunks: list[Chunk] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = FactRecord.from_dict(json.loads(line))
        except (ValueError, TypeError, AttributeError, FactFormatError):
            _warn_once(path, "record", "%s: a line is not a fact record; left out of the index", path)
            continue
        chunks.append(Chunk(path=path, anchor=rec.id, kind="fact", scope=rec.scope or None,
                            confidence=rec.confidence, created=rec.valid_from,
                            updated=rec.recorded_at or rec.valid_from,
                            title=rec.subject.replace("-", " "), speaker=None, text=rec.text,
                            ordinal=len(chunks), heading=rec.attribute))
    return chunks


def _chunk_plain(path: str, text: str, base_kind: str, cap: int, malformed: bool) -> list[Chunk]:
    conf = DEFAULT_CONFIDENCE.get(base_kind, DEFAULT_CONFIDENCE["text"])
    title = path.replace("\\", "/").rsplit("/", 1)[-1]
    paras = _paragraphs(text.split("\n"), 1)
    return [
        Chunk(path=path, anchor=f"L{line}", kind=base_kind, scope=None, confidence=conf,
              created=None, updated=None, title=title, speaker=None, text=piece, ordinal=i,
              malformed_frontmatter=malformed)
        for i, (line, piece) in enumerate(_pack_paragraphs(paras, cap))
    ]


def chunk_file(path: str, text: str | bytes, cap: int = CHUNK_CHARS) -> list[Chunk]:
    """Split one memory file into chunks (see the module docstring for the three forms).

    ``text`` may be bytes (decoded as UTF-8 with replacement). Never raises on malformed
    input; returns ``[]`` for an empty file.
    """
    try:
        return _chunk_file(path, decode(text), cap)
    except Exception:  # noqa: BLE001 - last resort: a chunker bug must not stop indexing
        log.exception("chunker failed on %s; indexing it as plain text", path)
        try:
            return _chunk_plain(path, decode(text), "text", cap, False)
        except Exception:  # noqa: BLE001
            return []


def _chunk_file(path: str, text: str, cap: int) -> list[Chunk]:
    if not text.strip():
        return []
    if path == FACTS_PATH:
        return _chunk_facts(path, text)
    base_kind = path_kind(path)
    is_md = path.lower().endswith((".md", ".markdown"))
    meta, body, malformed = split_frontmatter(text)
    if malformed:
        log.warning("%s: malformed frontmatter; indexed as plain text", path)
        if base_kind == "turn":
            # A transcript keeps its turns even when its header is broken; a closed but
            # unreadable header block is dropped rather than indexed as loose text.
            m = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M).search(text, text.find("\n") + 1)
            return _chunk_transcript(path, {}, text[m.end():] if m else text, True)
        return _chunk_plain(path, text, base_kind, cap, True)
    if base_kind == "turn":
        return _chunk_transcript(path, meta or {}, body, False)
    if is_md or meta is not None:
        body_line = text[: len(text) - len(body)].count("\n") + 1
        if base_kind == "text" and meta:
            base_kind = "page"  # a Markdown file with frontmatter is a page wherever it is
        return _chunk_markdown(path, meta or {}, body, body_line, base_kind, cap)
    return _chunk_plain(path, text, base_kind, cap, False)


def embed_text(chunk: Chunk | dict[str, Any], previous: str | None = None) -> str:
    """The string given to the embedding model for a chunk.

    Turns carry speaker and date in their text already; a turn is embedded *with the turn
    it answers* appended as context — "Where did you find it?" or "Yesterday I took the
    kids there" mean little alone. Its own words come first so that, at the model's
    256-piece limit, the context is what gets cut. (On LoCoMo this lifted dense
    turn recall@5 from 0.45 to 0.50; putting the context first instead made it worse,
    0.35, because the hit then resembles the previous turn more than itself.) Pages get
    their title and heading in front so a section is embedded with its subject.
    """
    get = chunk.get if isinstance(chunk, dict) else lambda k: getattr(chunk, k)
    text = get("text") or ""
    if get("kind") == "turn" or get("speaker"):
        return f"{text}\n(in reply to: {previous})" if previous else text
    head = " — ".join(x for x in (get("title"), get("heading")) if x)
    return f"{head}\n{text}" if head and head != text else text


def embed_texts(chunks: list[Chunk]) -> list[str]:
    """:func:`embed_text` for a file's chunks, giving each turn the previous turn of the
    same file as context."""
    out = []
    for i, c in enumerate(chunks):
        prev = chunks[i - 1] if i > 0 else None
        ctx = prev.text if (prev is not None and c.kind == "turn" and prev.kind == "turn"
                            and prev.path == c.path) else None
        out.append(embed_text(c, ctx))
    return out
