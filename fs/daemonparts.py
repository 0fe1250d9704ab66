"""What the daemon's parts (:class:`~brainfs.fs.relisting.Relisting`,
:class:`~brainfs.fs.backgroundjobs.BackgroundJobs`) read of the daemon they make up: declared
once here, set by :class:`~brainfs.fs.daemon.Daemon`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trio

    from brainfs.backend.config import Config
    from brainfs.backend.store import ObjectStore
    from brainfs.cache.local.workingset import WorkingSet

    from .ops import Ops
    from .recall import RecallService


class DaemonParts:
    """The attributes of the daemon every part of it uses."""

    cfg: Config
    store: ObjectStore
    cache_dir: Path
    ws: WorkingSet | None
    ops: Ops | None
    recall: RecallService | None
    _nursery: trio.Nursery | None
