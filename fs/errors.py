"""The one table from domain errors to errnos.

Every FUSE handler is wrapped by :func:`fuse_errors`: nothing but a ``FUSEError`` may leave a
handler, because in pyfuse3 any other exception ends the main loop and leaves the mount
dead ("Transport endpoint is not connected").
"""

from __future__ import annotations

import errno
import functools
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pyfuse3

from brainfs.backend import errors as be
from brainfs.cache.local import orphans
from brainfs.cache.local import errors as ce

log = logging.getLogger("brainfs.fs")


class FsError(Exception):
    """A request the mount itself refuses (the working set is never asked)."""


class ReadOnlyEntry(FsError):
    """A change to a magic entry (``.recall/``, ``.brainfs/``, ``.git``): EACCES."""


class NotSupported(FsError):
    """A request this mount does not serve: ENOSYS (in no-open mode the kernel then stops
    sending ``open``/``opendir``/``flush``)."""


class BadHandle(FsError):
    """A write through a handle opened read-only: EBADF."""


class InvalidRequest(FsError):
    """A request with a flag the mount refuses (``RENAME_EXCHANGE``): EINVAL."""


class NotPermitted(FsError):
    """A symbolic link whose target leaves the mount, followed or made (fs/links.py): EPERM."""


#: Most specific class first. Backend failures are EIO (the log line says why);
#: a refused name is EINVAL; the mount's own refusals are the :class:`FsError` kinds.
ERRNO_TABLE: tuple[tuple[type[BaseException], int], ...] = (
    (ce.NotFound, errno.ENOENT),
    (ce.IsADirectory, errno.EISDIR),
    (ce.NotADirectory, errno.ENOTDIR),
    (ce.NotEmpty, errno.ENOTEMPTY),
    (ce.Exists, errno.EEXIST),
    (ce.NoSpace, errno.ENOSPC),
    (ce.NameTooLong, errno.ENAMETOOLONG),
    (orphans.OrphanLost, errno.EIO),
    (ce.CacheError, errno.EINVAL),
    (ReadOnlyEntry, errno.EACCES),
    (NotSupported, errno.ENOSYS),
    (BadHandle, errno.EBADF),
    (InvalidRequest, errno.EINVAL),
    (NotPermitted, errno.EPERM),
    (be.NoSuchKey, errno.ENOENT),
    (be.AccessDenied, errno.EACCES),
    (be.InvalidKey, errno.EINVAL),
    (be.NoSuchBucket, errno.EIO),
    (be.Unavailable, errno.EIO),
    (be.Corrupt, errno.EIO),
    (be.PreconditionFailed, errno.EIO),
    (be.BackendError, errno.EIO),
)


def to_errno(exc: BaseException) -> int:
    """The errno a caller sees for ``exc``."""
    if isinstance(exc, pyfuse3.FUSEError):
        return exc.errno
    if isinstance(exc, sqlite3.OperationalError):
        # The catalog shares the cache's disk: "database or disk is full" is ENOSPC.
        return errno.ENOSPC if "full" in str(exc) else errno.EIO
    for cls, code in ERRNO_TABLE:
        if isinstance(exc, cls):
            return code
    if isinstance(exc, OSError) and exc.errno:
        return exc.errno
    return errno.EIO


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def fuse_errors(fn: F) -> F:
    """Translate any exception from a handler into a FUSEError with the right errno."""

    name = fn.__name__

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        # Requests per handler, for status and benchmarks: what the kernel still asks.
        counts = getattr(args[0], "requests", None)
        if counts is not None:
            counts[name] += 1
        try:
            return await fn(*args, **kwargs)
        except pyfuse3.FUSEError:
            raise
        except (ce.NotFound, be.NoSuchKey):
            raise pyfuse3.FUSEError(errno.ENOENT) from None
        except Exception as e:  # noqa: BLE001 - the whole point: nothing escapes
            code = to_errno(e)
            if code == errno.EIO:
                log.error("%s failed: %s: %s", fn.__name__, type(e).__name__, e,
                          exc_info=not isinstance(e, (be.BackendError, OSError)))
            else:
                log.debug("%s: %s -> %s", fn.__name__, e, errno.errorcode.get(code, code))
            raise pyfuse3.FUSEError(code) from None

    return wrapper  # type: ignore[return-value]
