"""Corpus paths as the working set reads them: parents and ancestors, directory markers, a
name's other form (plain or symbolic link), and the check that a name can be stored.

Pure functions of strings, no state: every part of the working set shares them.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable

from brainfs.backend.keys import DIR_MARKER, is_internal, is_link, link_name, link_of, path_problem

from .blobs import content_hash
from .errors import CacheError, NameTooLong

#: Hash of empty content (a created file that was never written, a directory marker).
EMPTY_HASH = content_hash(b"")


def marker_of(d: str) -> str:
    """The marker object's path of directory ``d``."""
    return f"{d}/{DIR_MARKER}"


def is_marker(path: str) -> bool:
    """Whether ``path`` is a directory marker."""
    return posixpath.basename(path) == DIR_MARKER


def other_form(path: str) -> str:
    """The path a name would have as the other kind: a file's or directory's link object,
    a link object's plain name. A name is one or the other; two mounts racing can make
    both, and then the plain one is what the name shows (see :meth:`WorkingSet.resolve`)."""
    return link_name(path) if is_link(path) else link_of(path)


def parent_of(path: str) -> str:
    """Parent directory path ('' is the root)."""
    return posixpath.dirname(path)


def ancestors(path: str) -> Iterable[str]:
    """Proper ancestor directories of ``path``, nearest first, ending with ''."""
    p = parent_of(path)
    while True:
        yield p
        if p == "":
            return
        p = parent_of(p)


def check_name(path: str) -> None:
    """Raise unless ``path`` is a name the corpus can store (NameTooLong past the limits)."""
    problem = path_problem(path)
    if problem in ("path too long", "name longer than 255 bytes"):
        raise NameTooLong(f"refused name {path[:80]!r}…: {problem}")
    if problem or is_internal(path):
        raise CacheError(f"refused name {path!r}: {problem or 'reserved'}")


def md5_hex(data: bytes) -> str:
    """The MD5 of ``data`` in hex: the ETag S3 gives a single-part object of these bytes."""
    return hashlib.md5(data).hexdigest()
