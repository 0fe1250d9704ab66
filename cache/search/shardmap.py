"""Which part ("shard") of the search index a corpus file belongs to, and the manifest that
lists the parts.

The bucket's index is split by time so that a mount can answer its first recall from the
parts it fetched first instead of downloading the whole history (issue 17;
``benchmarks/results/index-shards.md`` has the measurements behind the choices here):

- ``core``: everything that is not a transcript — the wiki (``knowledge/``), cards
  (``notes/``), ``GUIDE.md``, rules, corrections, ``sessions/index.md`` and every
  session's ``summary.md``. It is the map of the whole history (a summary names its
  session's facts with their turns; a page cites turns of every period), about an eighth of
  the chunks, and always fetched first.
- one part per calendar quarter of transcripts, ``YYYY-Qn``, from the session id's leading
  date (``sessions/2025-07-14-.../transcript.md`` → ``2025-Q3``): session ids begin with
  their day (``tools/sample.py``, ``cache/sessions/sessionfile.py``), so the part is known
  from the path alone, without reading the file.
- ``undated``: transcripts (and other session files) whose id has no date.

The manifest (``INDEX_MANIFEST_KEY``) is one small JSON object: per part its object key,
MD5, size, file and chunk counts and a digest of the (path, ETag) pairs it indexed — so that
a refresh sees which parts a changed listing touches without downloading the others.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from brainfs.backend.keys import INDEX_DIR
from brainfs.cache.layout import SESSIONS

#: Name of the part holding everything but transcripts.
CORE = "core"
#: Name of the part holding session files whose id carries no date.
UNDATED = "undated"
#: The manifest's format; a reader refuses a manifest of a newer format.
MANIFEST_FORMAT = 1
#: Calendar periods a transcript part may span. "quarter" is the default. Measured on the
#: 20,000-file sample's index (655 MB, split in-process, 2 CPUs shared): months give 37
#: parts of ~17 MB, quarters 13 of ~48 MB; before its first recall a mount fetches core
#: (69 MB) and the newest part either way (87 against 103 MB), while every recall runs once
#: per part (warm recall 56-74 ms with months, 59-63 ms with quarters, 25-32 ms from one
#: file, same top 10). Quarters: fewer parts for 16 MB more at the first recall.
PERIODS = ("quarter", "month", "year")
DEFAULT_PERIOD = "quarter"

_DATED = re.compile(r"^sessions/(\d{4})-(\d{2})-\d{2}[^/]*/")


def shard_of(path: str, period: str = DEFAULT_PERIOD) -> str:
    """The part of the index that holds ``path``'s chunks (see the module docstring)."""
    if not path.startswith(SESSIONS) or path.count("/") < 2 or path.endswith("/summary.md"):
        return CORE
    m = _DATED.match(path)
    if m is None:
        return UNDATED
    year, month = m.group(1), int(m.group(2))
    if not 1 <= month <= 12:
        return UNDATED
    if period == "month":
        return f"{year}-{month:02d}"
    if period == "year":
        return year
    return f"{year}-Q{(month - 1) // 3 + 1}"


def shard_key(name: str) -> str:
    """The object key of part ``name``."""
    return f"{INDEX_DIR}/{name}.sqlite"


def newest_first(names: Iterable[str]) -> list[str]:
    """Part names in the order a mount fetches them: core, then dated parts newest first,
    then undated ones."""
    names = list(names)
    dated = sorted((n for n in names if n not in (CORE, UNDATED)), reverse=True)
    return ([CORE] if CORE in names else []) + dated + ([UNDATED] if UNDATED in names else [])


def files_digest(files: Iterable[tuple[str, str]]) -> str:
    """A digest of (path, ETag) pairs: equal digests mean a part indexes the same files in
    the same versions."""
    h = hashlib.sha256()
    for path, etag in sorted(files):
        h.update(f"{path}\0{etag}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def phrases_digest(phrases: Iterable[str]) -> str:
    """A digest of the deletion log's phrases a part was cleaned with."""
    return hashlib.sha256("\n".join(sorted(phrases)).encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class ShardInfo:
    """One part as the manifest describes it."""

    key: str
    md5: str
    bytes: int
    files: int
    chunks: int
    vectors: int
    files_digest: str
    forget_digest: str
    embedder: str | None = None
    schema_version: int = 0


@dataclass
class Manifest:
    """The list of the index's parts (``INDEX_MANIFEST_KEY``)."""

    period: str = DEFAULT_PERIOD
    shards: dict[str, ShardInfo] = field(default_factory=dict)
    format: int = MANIFEST_FORMAT

    def to_bytes(self) -> bytes:
        """The manifest as stored."""
        doc = {"format": self.format, "period": self.period,
               "shards": {n: asdict(s) for n, s in sorted(self.shards.items())}}
        return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        """Parse a stored manifest; ValueError for one this version cannot read."""
        try:
            doc: dict[str, Any] = json.loads(data)
            fmt = int(doc.get("format", 0))
            if fmt > MANIFEST_FORMAT:
                raise ValueError(f"index manifest format {fmt} is newer than this brainfs "
                                 f"reads ({MANIFEST_FORMAT}): upgrade brainfs")
            period = doc.get("period", DEFAULT_PERIOD)
            if period not in PERIODS:
                raise ValueError(f"unknown index period {period!r}")
            shards = {str(n): ShardInfo(**s) for n, s in doc.get("shards", {}).items()}
        except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as e:
            raise ValueError(f"unreadable index manifest: {e}") from None
        return cls(period=period, shards=shards, format=fmt)

    def total_bytes(self) -> int:
        """The size of every part together."""
        return sum(s.bytes for s in self.shards.values())

    def first_parts(self, budget_bytes: int) -> list[str]:
        """The parts a mount fetches before its first recall: all of them if they fit in
        ``budget_bytes``; else core and the newest other part (dated, else undated), then
        the next ones, newer first, while the total stays within ``budget_bytes``."""
        order = newest_first(self.shards)
        if self.total_bytes() <= budget_bytes:
            return order
        out: list[str] = []
        total = 0
        for name in order:
            size = self.shards[name].bytes
            if name == CORE or not any(n != CORE for n in out) or total + size <= budget_bytes:
                out.append(name)
                total += size
            else:
                break
        return out
