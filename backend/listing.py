"""The listing snapshot: the corpus's object list as one object (``LISTING_KEY``).

A paginated LIST costs one round trip per 1,000 objects, in series (20 at 20,000 files,
seconds on a slow server); one GET of the snapshot costs one. A mount with an empty cache
starts from the snapshot and takes the real LIST at once in the background; until then a
name the snapshot lacks waits for the real LIST rather than being called absent (see
``fs/relisting.py``). Mounts rewrite the snapshot when their LIST differs from it, at most
once per ``listing_snapshot_seconds``. It is a hint, never the truth: a missing, stale or
damaged snapshot costs at most the LIST it was meant to save.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from collections.abc import Iterable

from .errors import BackendError, NoSuchKey
from .keys import LISTING_KEY
from .store import ObjectInfo, ObjectStore

log = logging.getLogger(__name__)

FORMAT = "brainfs-listing/1"


def _entries(objs: Iterable[ObjectInfo]) -> list[ObjectInfo]:
    return sorted((o for o in objs if o.path != LISTING_KEY), key=lambda o: o.path)


def signature(objs: Iterable[ObjectInfo]) -> str:
    """What a snapshot must agree with: every path and its ETag (sizes and times follow
    from the ETag's version)."""
    h = hashlib.sha1()
    for o in _entries(objs):
        h.update(f"{o.path}\t{o.etag}\n".encode())
    return h.hexdigest()


def encode(objs: Iterable[ObjectInfo]) -> bytes:
    """The snapshot object's bytes (gzipped JSON)."""
    rows = [[o.path, o.size, o.etag, o.mtime] for o in _entries(objs)]
    return gzip.compress(json.dumps({"format": FORMAT, "objects": rows},
                                    separators=(",", ":")).encode(), mtime=0)


def decode(data: bytes) -> list[ObjectInfo]:
    """The objects of a snapshot; ValueError when it is not one."""
    try:
        doc = json.loads(gzip.decompress(data))
    except (OSError, EOFError, ValueError) as e:
        raise ValueError(f"not a listing snapshot: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"not a listing snapshot (format {doc.get('format') if isinstance(doc, dict) else '?'!r})")
    try:
        return [ObjectInfo(str(p), int(s), str(e), float(m)) for p, s, e, m in doc["objects"]]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"damaged listing snapshot: {e}") from None


def read(store: ObjectStore) -> tuple[list[ObjectInfo], str] | None:
    """The snapshot's objects and its ETag, or None when there is none or it is damaged
    (logged: the caller lists instead)."""
    try:
        data, etag = store.get(LISTING_KEY)
    except NoSuchKey:
        return None
    except BackendError as e:
        log.warning("listing snapshot unavailable (%s): listing instead", e)
        return None
    try:
        return decode(data), etag
    except ValueError as e:
        log.warning("%s: listing instead", e)
        return None


def write(store: ObjectStore, objs: Iterable[ObjectInfo]) -> str:
    """Store a snapshot of ``objs``; returns its ETag."""
    return store.put(LISTING_KEY, encode(objs))
