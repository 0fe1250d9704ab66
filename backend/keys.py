"""Corpus URLs, object-key validation, and the keys brainfs keeps for itself.

A corpus is ``s3://BUCKET/PREFIX``. Inside it, every file has a *path* relative to the
prefix (``knowledge/kyoto.md``); its object key is ``PREFIX/path``. Validation happens here,
once, so that no path trick can reach outside the user's prefix.

Beside the memory tree, under ``.brainfs/``, lie the objects brainfs writes for itself (the
search index, the preload pack, the wiki's history, dream's state and lease). Every one of
their paths is named here and nowhere else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InvalidKey

_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
#: A single path segment as a filesystem sees it. 255 bytes is NAME_MAX on Linux.
NAME_MAX = 255
#: S3 caps keys at 1024 bytes; keep room for the prefix.
KEY_MAX = 1024
#: The longest path a corpus holds (the rest of a key is the corpus prefix).
PATH_MAX = KEY_MAX - 64

#: What the name of every conflict copy holds (``NAME.conflict-STAMP-HOST.EXT``): the copy
#: kept when an upload loses a race with another writer. Recall does not index them.
CONFLICT_MARK = ".conflict-"

#: Name of the empty object that keeps a directory in the corpus (S3 has no directories,
#: and the embedded server refuses the usual ``dir/`` marker key). Never listed in a mount;
#: a file of this name cannot be made.
DIR_MARKER = ".brainfs-dir"

#: Suffix of the object that holds a symbolic link: ``NAME.brainfs-link`` holds the target of
#: the link ``NAME`` as its content (S3 has no symlinks; a LIST must tell them from files
#: without a HEAD per object, so the kind is in the key). A file of such a name cannot be
#: made. The suffix counts against the 255 bytes of a name (servers that keep objects as
#: files, the embedded one included, refuse longer ones): a link's name has 242.
LINK_SUFFIX = ".brainfs-link"

#: Corpus prefix holding brainfs's own objects; never part of the memory tree (a mount
#: neither lists nor accepts it, import and ls skip it).
INTERNAL_PREFIX = ".brainfs"
#: The search index of earlier versions: one SQLite file (chunks, FTS5, vectors). Still read
#: where no manifest exists; the next ``brainfs index`` or dream run splits it into parts.
INDEX_KEY = f"{INTERNAL_PREFIX}/index.sqlite"
#: The search index in parts (``cache/search/shardmap.py``): one SQLite file per part under
#: this folder and the manifest naming them, refreshed by ``brainfs index`` and dream,
#: fetched part by part by mounts and ``recall``.
INDEX_DIR = f"{INTERNAL_PREFIX}/index"
INDEX_MANIFEST_KEY = f"{INDEX_DIR}/manifest.json"
#: The packed preload object: a mount's starting working set in one GET (``cache/local/pack.py``).
#: What ``brainfs import`` last wrote, path -> MD5 of the source's bytes: a file deleted in
#: the bucket since it was imported is not brought back by importing the same source again.
IMPORTED_KEY = f"{INTERNAL_PREFIX}/imported.json"
PACK_KEY = f"{INTERNAL_PREFIX}/preload.pack"
#: The wiki's git history as one ``git bundle`` (written by dream, cloned by mounts).
WIKI_BUNDLE_KEY = f"{INTERNAL_PREFIX}/wiki.bundle"
#: What dream's last run saw and extracted (``dream/core.py``).
DREAM_STATE_KEY = f"{INTERNAL_PREFIX}/dream-state.json"
#: One dream run at a time per corpus (``dream/sync.py``).
DREAM_LEASE_KEY = f"{INTERNAL_PREFIX}/dream.lease"
#: A corpus's own standing instructions for dream (frontmatter settings).
DREAM_SKILL_KEY = f"{INTERNAL_PREFIX}/dream-skill.md"
#: A snapshot of the corpus listing, kept current by mounts (``backend/listing.py``): a
#: mount with an empty cache starts from it in one GET instead of a paginated LIST.
LISTING_KEY = f"{INTERNAL_PREFIX}/listing.json.gz"
#: Where the one-off probe of conditional-write support is written and removed.
PROBE_PREFIX = f"{INTERNAL_PREFIX}/probe/"


def is_link(path: str) -> bool:
    """Whether ``path`` is the object of a symbolic link (``NAME.brainfs-link``)."""
    return path.endswith(LINK_SUFFIX) and not path.endswith("/" + LINK_SUFFIX) \
        and path != LINK_SUFFIX


def link_of(path: str) -> str:
    """The object path holding the symbolic link ``path``."""
    return path + LINK_SUFFIX


def link_name(path: str) -> str:
    """The link's own path, from the path of the object holding it."""
    return path[: -len(LINK_SUFFIX)]


def reserved_name(path: str) -> str | None:
    """Why the last name of ``path`` is kept for brainfs's own objects in the tree (a
    directory marker, a symbolic link's object, ``.git`` at the root), or None: a file of
    such a name cannot be made, by a mount, an import or the API."""
    name = path.rsplit("/", 1)[-1]
    if name == DIR_MARKER:
        return "reserved for directory markers"
    if path == ".git":
        # At the root a mount shows the wiki's history there (a gitfile, once dream has
        # written one): a file or directory of that name would hide it, or be hidden.
        return "reserved at the root for the wiki's history"
    if is_link(path):
        return "names ending in .brainfs-link are reserved for symbolic links"
    return None


def is_internal(path: str) -> bool:
    """Whether a corpus path is one of brainfs's own objects (under ``.brainfs/``) rather
    than a file of the memory tree. Only the exact prefix counts: ``.brainfsx.md`` is a
    file like any other."""
    return path == INTERNAL_PREFIX or path.startswith(INTERNAL_PREFIX + "/")


@dataclass(frozen=True)
class CorpusURL:
    """A parsed ``s3://bucket/prefix`` URL; ``prefix`` has no leading or trailing slash."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> "CorpusURL":
        """Parse and validate; raises InvalidKey with a one-line reason."""
        if not url.startswith("s3://"):
            raise InvalidKey(f"not a corpus URL (expected s3://BUCKET/PREFIX): {url!r}")
        rest = url[len("s3://") :]
        bucket, _, prefix = rest.partition("/")
        if not _BUCKET_RE.match(bucket):
            raise InvalidKey(f"invalid bucket name {bucket!r}")
        prefix = prefix.strip("/")
        if prefix:
            validate_path(prefix)
        return cls(bucket, prefix)

    def key(self, path: str) -> str:
        """Object key of a corpus path (validated, and within S3's 1,024-byte key limit)."""
        validate_path(path)
        key = f"{self.prefix}/{path}" if self.prefix else path
        if len(key.encode("utf-8")) > KEY_MAX:
            raise InvalidKey(f"refused path {path!r}: object key longer than {KEY_MAX} bytes")
        return key

    def path(self, key: str) -> str | None:
        """Corpus path of an object key, or None when the key is outside the prefix."""
        if self.prefix:
            head = self.prefix + "/"
            if not key.startswith(head):
                return None
            key = key[len(head) :]
        return key

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a valid corpus path, or None when it is."""
    if not path:
        return "empty path"
    if "\x00" in path:
        return "contains NUL"
    if path.startswith("/"):
        return "absolute path"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: bytes that were not UTF-8 in a file name (os.fsdecode).
        return "not valid UTF-8"
    if len(path.encode("utf-8")) > PATH_MAX:
        return "path too long"
    for seg in path.split("/"):
        if seg == "":
            return "empty path segment"
        if seg in (".", ".."):
            return f"{seg!r} segment"
        if len(seg.encode("utf-8")) > NAME_MAX:
            return "name longer than 255 bytes"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in seg):
            return "control character in name"
    return None


def validate_path(path: str) -> str:
    """Return ``path`` if it is a valid corpus path, else raise InvalidKey."""
    problem = path_problem(path)
    if problem:
        raise InvalidKey(f"refused path {path!r}: {problem}")
    return path
