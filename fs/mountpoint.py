"""The checks a mountpoint gets before a mount: light enough for the ``brainfs mount``
command to run before it starts the daemon (importing nothing of FUSE or trio), so that a
busy or wrong mountpoint is refused at once."""

from __future__ import annotations

from pathlib import Path

from .fusectl import is_mountpoint


class MountError(Exception):
    """The mount cannot start (one line for the user)."""


def check_mountpoint(mp: Path) -> None:
    """Refuse a mountpoint that is a file, not empty, or already mounted; create it if
    missing."""
    if is_mountpoint(mp):
        raise MountError(f"{mp} is already a mountpoint (unmount it first: brainfs umount {mp})")
    if mp.exists() and not mp.is_dir():
        raise MountError(f"{mp} is not a directory")
    if mp.exists() and any(mp.iterdir()):
        raise MountError(f"{mp} is not empty")
    mp.mkdir(parents=True, exist_ok=True)
