"""Corpus URLs and object-key validation.

A corpus is ``s3://BUCKET/PREFIX``. Inside it, every file has a *path* relative to the
prefix (``knowledge/kyoto.md``); its object key is ``PREFIX/path``. Validation happens here,
once, so that no path trick can reach outside the user's prefix.
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
    if len(path.encode("utf-8")) > KEY_MAX - 64:
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
