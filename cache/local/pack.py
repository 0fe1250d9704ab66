"""The packed preload object: a mount's starting working set as one S3 object.

Fetching 2,000 small files costs 2,000 GETs (and boto3 spends about a millisecond of CPU on
each); the same files in one object cost one GET. ``brainfs import``, ``brainfs index`` and
dream rebuild ``.brainfs/preload.pack`` from the default preload rules; a mount takes from
it every entry whose ETag still equals the object's in the listing and fetches the rest one
by one, so a stale pack is never served.

Layout: ``MAGIC`` (8 bytes), the manifest length (8 bytes, big-endian), the manifest (JSON
list of ``[path, etag, size]``), then the bodies in manifest order.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import struct
from collections.abc import Iterable, Iterator

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError, Corrupt, NoSuchKey
from brainfs.backend.keys import PACK_KEY, is_internal, is_link
from brainfs.backend.store import ObjectStore, is_md5
from brainfs.cache.layout import SESSIONS

from .catalog import FileRow

log = logging.getLogger(__name__)

MAGIC = b"BFSPACK1"


def encode(entries: list[tuple[str, str, bytes]]) -> bytes:
    """Serialise (path, etag, content) entries."""
    manifest = json.dumps([[p, e, len(d)] for p, e, d in entries]).encode()
    return b"".join([MAGIC, struct.pack(">Q", len(manifest)), manifest, *(d for _, _, d in entries)])


def index(blob: bytes) -> dict[str, tuple[str, int, int]]:
    """Where each entry of a pack lies: path -> (etag, start, end). Raises Corrupt on a
    malformed pack."""
    if blob[:8] != MAGIC or len(blob) < 16:
        raise Corrupt("preload pack: bad header")
    (mlen,) = struct.unpack(">Q", blob[8:16])
    try:
        manifest = json.loads(blob[16 : 16 + mlen])
        off = 16 + mlen
        out: dict[str, tuple[str, int, int]] = {}
        for path, etag, size in manifest:
            if int(size) < 0:
                raise ValueError("negative size")
            out[str(path)] = (str(etag), off, off + int(size))
            off += int(size)
    except (ValueError, TypeError):
        raise Corrupt("preload pack: bad manifest") from None
    if off != len(blob):
        raise Corrupt("preload pack: sizes do not add up")
    return out


class PackView:
    """A downloaded pack held in memory, answering for its entries by path until the
    mount has unpacked them to disk. Immutable, so worker threads read it without locks."""

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._at = index(blob)

    def __len__(self) -> int:
        return len(self._at)

    def __contains__(self, path: object) -> bool:
        return path in self._at

    def __iter__(self) -> Iterator[tuple[str, str, bytes]]:
        """Every entry: (path, etag, content)."""
        for path, (etag, start, end) in self._at.items():
            yield path, etag, self._blob[start:end]

    def holds(self, path: str, etag: str) -> bool:
        """Whether the pack holds ``path`` at exactly ``etag`` (a stale entry is never
        served)."""
        at = self._at.get(path)
        return at is not None and bool(etag) and at[0] == etag

    def get(self, path: str, etag: str) -> bytes | None:
        """The entry's bytes when the pack :meth:`holds` ``path`` at ``etag`` and they
        match it, else None (the caller then GETs the file). Bytes are checked against an
        MD5 ETag as a whole-object GET is: a pack damaged in a way its layout does not
        show (a flipped byte in a body) is never served."""
        if not self.holds(path, etag):
            return None
        _, start, end = self._at[path]
        data = self._blob[start:end]
        if is_md5(etag) and hashlib.md5(data).hexdigest() != etag.lower():
            log.warning("preload pack: %s does not match its ETag; fetching it instead", path)
            return None
        return data


class UnpackRetry:
    """When the unpacking tries again the files it could not write (a full cache disk),
    and when to say so: once, at the first failure — not at every try.

    A try follows as soon as the cache's disk has gained room for the smallest file left
    (the caller looks every few seconds: a ``statvfs``, nothing written, nothing logged),
    and at the latest after a pause that doubles from ``first`` to ``longest`` seconds
    (a failure that is not for want of room: a damaged catalog, a disk gone read-only)."""

    def __init__(self, first: float, longest: float) -> None:
        self.first, self.longest = first, longest
        #: failed tries so far
        self.failures = 0
        self._pause = first
        self._next_at = 0.0
        self._free_at_failure = 0

    def failed(self, now: float, free_bytes: int) -> bool:
        """A try left files unwritten at ``now`` with ``free_bytes`` on the cache's disk;
        returns whether this is the first (the one to log)."""
        self.failures += 1
        self._next_at = now + self._pause
        self._pause = min(self._pause * 2, self.longest)
        self._free_at_failure = free_bytes
        return self.failures == 1

    def due(self, now: float, free_bytes: int, smallest: int) -> bool:
        """Whether to try again now: the disk gained room for the smallest file left
        (``smallest`` bytes, with a margin for the catalog), or the pause is over."""
        room = free_bytes > self._free_at_failure and free_bytes >= smallest + ROOM_MARGIN
        return room or now >= self._next_at


#: Room a file needs on the cache's disk beyond its size: its catalog row, the journal.
ROOM_MARGIN = 64 * 1024


def load_pack(store: ObjectStore) -> PackView | None:
    """The bucket's pack, or None when there is none (blocking; raises BackendError)."""
    try:
        blob, _ = store.get(PACK_KEY)
    except NoSuchKey:
        return None
    return PackView(blob)


def read_pack(store: ObjectStore) -> list[tuple[str, str, bytes]] | None:
    """The bucket's pack as (path, etag, content) entries, or None when there is none
    (blocking)."""
    pack = load_pack(store)
    return None if pack is None else list(pack)


def select_preload(rows: Iterable[FileRow], cfg: Config) -> list[str]:
    """The working set a mount starts with: symbolic links, files matching the preload
    globs, then the newest transcripts, while they fit in the preload budget (local or
    not)."""
    chosen: list[str] = []
    budget = cfg.cache.preload_budget_bytes
    ordered = sorted(rows, key=lambda r: r.path)
    picked: set[str] = set()

    def take(row: FileRow) -> None:
        nonlocal budget
        picked.add(row.path)
        if row.size > cfg.cache.preload_max_file_bytes or row.size > budget:
            return
        budget -= row.size
        chosen.append(row.path)

    # Symbolic links first: a few bytes each, and the shape of the tree a user made.
    for row in ordered:
        if is_link(row.path):
            take(row)
    for pattern in cfg.cache.preload_globs:
        for row in ordered:
            if row.path not in picked and fnmatch.fnmatchcase(row.path, pattern):
                take(row)
    transcripts = [r for r in ordered
                   if r.path.startswith(SESSIONS) and r.path.endswith("/transcript.md")]
    # Session ids start with their date, so path order is time order; mtime breaks ties
    # for ids that do not.
    transcripts.sort(key=lambda r: (r.path, r.mtime), reverse=True)
    for row in transcripts[: cfg.cache.preload_recent_transcripts]:
        if row.path not in picked:
            take(row)
    return chosen


def build_pack(store: ObjectStore, cfg: Config) -> dict:
    """Rebuild the pack from the corpus and the preload rules of ``cfg`` (blocking)."""
    blob, stats = pack_blob(store, cfg)
    store.put(PACK_KEY, blob)
    return stats


def pack_blob(store: ObjectStore, cfg: Config) -> tuple[bytes, dict]:
    """The pack :func:`build_pack` uploads, and its stats, without uploading it (``brainfs
    index`` reads the files while the model embeds and uploads once the index is done)."""
    rows = [FileRow(o.path, o.size, o.mtime, o.etag) for o in store.list()
            if not is_internal(o.path)]
    chosen = select_preload(rows, cfg)
    got: dict[str, tuple[str, bytes]] = {}
    failed = 0

    def done(path: str, data: bytes | None, etag: str, err: BackendError | None) -> None:
        nonlocal failed
        if data is None:
            failed += 1
        else:
            got[path] = (etag, data)

    store.get_many(chosen, done)
    entries = [(p, got[p][0], got[p][1]) for p in chosen if p in got]
    blob = encode(entries)
    return blob, {"files": len(entries), "bytes": len(blob), "failed": failed}
