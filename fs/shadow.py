"""A file being written: its private shadow copy, and who may commit it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .process import tgid


@dataclass
class Shadow:
    """A file being written: a private copy that becomes the content on commit."""

    tmp: str
    fd: int
    dirty: bool = False
    #: monotonic time of the last change (no-open mode commits idle shadows)
    touched: float = 0.0
    #: a write that failed (ENOSPC): the shadow is incomplete and must never be committed
    failed: OSError | None = None
    #: the remote version (ETag) the write started from: the base of its upload, whatever
    #: a relist learns meanwhile
    base: str = ""
    #: pids that wrote or truncated it (no-open mode: only their close commits it)
    writers: set[int] = field(default_factory=set)
    #: it got a write(), not only truncations: only a close or fsync commits it then
    written: bool = False


def writers_close(pid: int, writers: set[int], written: bool) -> bool:
    """Whether a close by ``pid`` (the closing thread, as FUSE reports it) is a writer's:
    a thread that wrote or truncated it, or, once data was written, another thread of the
    same process (a program may close from another thread than it wrote from). A thread
    of the same process that only read does not commit a truncation its writer has not
    filled yet (the idle commit takes a truncation no one fills)."""
    if not writers or pid in writers:
        return True
    if not written:
        return False
    group = tgid(pid)
    return group is not None and any(tgid(w) == group for w in writers)


def unlink_quiet(p: str) -> None:
    """Remove the file ``p`` if it is still there."""
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass
