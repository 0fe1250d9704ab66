"""The mount's inode table: corpus path <-> inode number, and the inodes of unlinked files.

An inode number stays assigned to its path for the life of the mount (one small dict entry
per path touched), so a path keeps its inode across lookups and nothing needs freeing at
``forget`` — but the kept content of a file unlinked (or renamed over) while it may be
open: no name can look it up again, so a FORGET means the kernel let go of it.
"""

from __future__ import annotations

import os

import pyfuse3
from brainfs.cache.local.orphans import Orphan
from brainfs.cache.local.errors import NotFound


class InodeTable:
    """Paths and the inode numbers the kernel knows them by."""

    def __init__(self) -> None:
        self.ino_of: dict[str, int] = {"": pyfuse3.ROOT_INODE}
        self.path_of: dict[int, str] = {pyfuse3.ROOT_INODE: ""}
        self._next = pyfuse3.ROOT_INODE + 1
        #: inode -> kept content of a file unlinked (or renamed over) while it may be open:
        #: as on a local disk, its open descriptors read it until the kernel forgets it
        self.unlinked: dict[int, Orphan] = {}

    def ino(self, path: str) -> int:
        """The inode of ``path``, assigned at its first use."""
        ino = self.ino_of.get(path)
        if ino is None:
            ino = self._next
            self._next += 1
            self.ino_of[path] = ino
            self.path_of[ino] = path
        return ino

    def path(self, ino: int) -> str:
        """The path of ``ino``; NotFound (ENOENT) for an inode no name resolves to."""
        try:
            return self.path_of[ino]
        except KeyError:
            raise NotFound(f"inode {ino}") from None

    def child(self, parent_ino: int, name: bytes) -> str:
        """The path of ``name`` in the directory ``parent_ino``."""
        parent = self.path(parent_ino)
        n = os.fsdecode(name)
        return f"{parent}/{n}" if parent else n

    def drop(self, path: str) -> None:
        """``path`` is gone: its inode stops resolving to a path (open handles of the
        removed file keep reading their fd)."""
        ino = self.ino_of.pop(path, None)
        if ino is not None:
            self.path_of.pop(ino, None)

    def move(self, src: str, dst: str) -> None:
        """``src`` (a file, or a directory and everything under it) is now ``dst``; what
        ``dst`` named before is gone."""
        self.drop(dst)
        head = src + "/"
        for p in [p for p in self.ino_of if p == src or p.startswith(head)]:
            ino = self.ino_of.pop(p)
            np = dst + p[len(src):]
            self.ino_of[np] = ino
            self.path_of[ino] = np

    def keep_unlinked(self, path: str, kept: Orphan) -> int | None:
        """The content of ``path``, about to lose its name, is ``kept`` for its inode's
        open descriptors; returns the inode (None if the kernel never had one)."""
        ino = self.ino_of.get(path)
        if ino is not None:
            old = self.unlinked.get(ino)
            if old is not None:
                old.discard()
            self.unlinked[ino] = kept
        return ino

    def forget(self, inodes: list[int]) -> list[Orphan]:
        """The kernel let go of ``inodes``: the kept contents to free now."""
        return [kept for ino in inodes if (kept := self.unlinked.pop(ino, None)) is not None]


__all__ = ["InodeTable"]
