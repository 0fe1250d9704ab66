"""Typed backend errors. Every layer above maps these (and only these) to errnos."""

from __future__ import annotations


class BackendError(Exception):
    """Base of every error the backend raises; the message is one human-readable line."""


class InvalidKey(BackendError):
    """A path that must never become an object key (``..``, absolute, NUL, outside prefix)."""


class NoSuchKey(BackendError):
    """The object does not exist."""


class NoSuchBucket(BackendError):
    """The bucket does not exist."""


class AccessDenied(BackendError):
    """The credentials are refused for this request."""


class Unavailable(BackendError):
    """The endpoint cannot be reached, timed out, or kept failing after retries."""


class Corrupt(BackendError):
    """The bytes received do not match what the server says it stored."""


class PreconditionFailed(BackendError):
    """A conditional write lost: the object changed since it was read."""
