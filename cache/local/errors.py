"""What the working set refuses, as exceptions: one class per errno the mount answers.

The mount's one table from error to errno (``fs/errors.py``) reads these classes; the
working set and its helpers raise them. Each message is one line, fit for the log.
"""

from __future__ import annotations


class CacheError(Exception):
    """A working-set operation that cannot be done (message is one line)."""


class NotFound(CacheError):
    """No such file or directory in the corpus."""


class IsADirectory(CacheError):
    """A file operation on a directory."""


class NotADirectory(CacheError):
    """A directory operation on a file."""


class NotEmpty(CacheError):
    """rmdir of a directory that has entries."""


class Exists(CacheError):
    """Creating something that exists."""


class NoSpace(CacheError):
    """The cache cannot hold the content (budget or disk full)."""


class NameTooLong(CacheError):
    """A name longer than 255 bytes, or a path longer than the object store allows."""


class WrongCorpus(CacheError):
    """The cache directory belongs to another corpus."""


__all__ = ["CacheError", "NotFound", "IsADirectory", "NotADirectory", "NotEmpty", "Exists",
           "NoSpace", "NameTooLong", "WrongCorpus"]
