"""The corpus's names in memory: which files and directories there are, which of them are
local, and what a directory listing shows (the working set, not the whole bucket).

A :class:`Tree` does no I/O: the working set writes the catalog first and then mirrors the
change here. Like everything the working set holds in memory, it belongs to the owning
thread (the trio loop in a mount). It also records which directories' listings changed,
for a mount that lets the kernel cache them.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable

from brainfs.backend.keys import link_of

from .catalog import FileRow
from .errors import NotFound
from .paths import ancestors, parent_of


class Tree:
    """Files, directories and listing counts of one corpus, in memory."""

    def __init__(self, listing_all: bool, local_dirs: Iterable[str]) -> None:
        #: list every corpus file, not only the local ones (``listing = "corpus"``)
        self.listing_all = listing_all
        self.files: dict[str, FileRow] = {}
        #: dir path -> names of its children (files and dirs, local or remote)
        self.children: dict[str, set[str]] = {"": set()}
        #: directories created in the mount that may have no file yet
        self.local_dirs: set[str] = set(local_dirs)
        #: dir path -> number of local files and explicit dirs beneath it (readdir shows a
        #: directory only when this is > 0: the listing is the working set)
        self.vis: Counter[str] = Counter()
        #: directories whose listing (the working-set entries) may have changed since a
        #: reader last consumed this mark: a mount that lets the kernel cache listings
        #: re-reads exactly these. A superset is harmless; a missing entry is a stale `ls`.
        self.listing_changed: set[str] = set()
        #: called with each such directory as it changes (a mount that must tell the kernel
        #: at once, rather than at the directory's next open, sets it)
        self.on_listing_change: Callable[[str], None] | None = None
        #: bytes of the local copies (what the cache budget counts)
        self.local_bytes = 0
        #: non-local files listed because the preload pack holds them, and how many of them
        #: each directory has beneath it (they count as local for readdir)
        self.packed: set[str] = set()
        self.packed_dirs: Counter[str] = Counter()
        #: packed paths a part of the real listing has vouched for before the whole of it
        #: is in (``WorkingSet.vouch_packed``): served from the pack although the pack is
        #: not verified yet
        self.pack_vouched: set[str] = set()

    # ------------------------------------------------------------------ changes
    def add_dir(self, d: str) -> None:
        """Make sure directory ``d`` and its ancestors exist in the tree (no counting)."""
        if d in self.children:
            return
        self.children[d] = set()
        if d != "":
            parent = parent_of(d)
            self.add_dir(parent)  # depth is bounded by the key length (< 1,024 bytes)
            self.children[parent].add(posixpath.basename(d))
            if self.listing_all:
                self.mark_changed(parent)

    def count_dir(self, d: str, sign: int) -> None:
        """A locally created directory makes its ancestors visible, exactly once."""
        for a in ancestors(d):
            self.vis[a] += sign
            self.mark_changed(a)

    def mark_changed(self, d: str) -> None:
        """Note that the listing of directory ``d`` may have changed."""
        self.listing_changed.add(d)
        if self.on_listing_change is not None:
            self.on_listing_change(d)

    def insert(self, row: FileRow) -> None:
        """Add the file ``row`` (its directories too)."""
        parent = parent_of(row.path)
        if parent not in self.children:
            self.add_dir(parent)
        self.children[parent].add(posixpath.basename(row.path))
        self.files[row.path] = row
        if row.is_local:
            self.count_local(row, +1)
        elif self.listing_all:
            self.mark_changed(parent)

    def count_local(self, row: FileRow, sign: int) -> None:
        """Count ``row``'s local copy in (+1) or out (-1) of the budget and the listings."""
        self.local_bytes += sign * row.size
        # A packed file unpacked was listed already: its directories' listings stay.
        listed = sign > 0 and self.unpack(row.path)
        for a in ancestors(row.path):
            self.vis[a] += sign
            if not listed:
                self.mark_changed(a)

    def unpack(self, path: str) -> bool:
        """Stop listing ``path`` on the pack's behalf; whether it was."""
        if path not in self.packed:
            return False
        self.packed.discard(path)
        self.pack_vouched.discard(path)
        for a in ancestors(path):
            self.packed_dirs[a] -= 1
        return True

    def detach(self, path: str) -> FileRow | None:
        """Take the file ``path`` out of its directory (which stays, even if empty: see
        :meth:`prune`); its row, or None when there is no such file."""
        row = self.files.pop(path, None)
        if row is None:
            return None
        if row.is_local:
            self.count_local(row, -1)
        elif self.unpack(path):
            for a in ancestors(path):
                self.mark_changed(a)
        parent = parent_of(path)
        self.children[parent].discard(posixpath.basename(path))
        if self.listing_all:
            self.mark_changed(parent)
        return row

    def remove(self, path: str) -> FileRow | None:
        """Take the file ``path`` out of the tree; directories it leaves empty go too,
        unless created locally (a file gone remotely)."""
        row = self.detach(path)
        if row is not None:
            self.prune(parent_of(path))
        return row

    def prune(self, d: str) -> None:
        """Drop directories left with no children that were never created locally."""
        while d != "" and not self.children.get(d) and d not in self.local_dirs:
            self.children.pop(d, None)
            parent = parent_of(d)
            self.children[parent].discard(posixpath.basename(d))
            if self.listing_all:
                self.mark_changed(parent)
            d = parent

    def set_state(self, row: FileRow, state: str, size: int | None = None) -> None:
        """Move ``row`` to ``state`` (and ``size``), keeping the local counts right."""
        if row.is_local:
            self.count_local(row, -1)
        row.state = state
        if size is not None:
            row.size = size
        if row.is_local:
            self.count_local(row, +1)

    # ------------------------------------------------------------------ queries
    def is_dir(self, path: str) -> bool:
        """True for the root and any directory of the corpus or created locally."""
        return path in self.children and path not in self.files

    def has_children(self, path: str) -> bool:
        """Whether the directory ``path`` holds anything, remote files included."""
        return bool(self.children.get(path))

    def subdir_count(self, path: str) -> int:
        """How many subdirectories the directory ``path`` holds (its st_nlink is 2 more)."""
        prefix = path + "/" if path else ""
        return sum(1 for n in self.children.get(path, ()) if self.is_dir(prefix + n))

    def files_under(self, d: str) -> list[str]:
        """Every file path beneath directory ``d``."""
        head = d + "/"
        return [p for p in self.files if p.startswith(head)]

    def take_listing_change(self, path: str) -> bool:
        """Whether the listing of ``path`` changed since this was last asked (see
        ``listing_changed``); the mark is cleared."""
        changed = path in self.listing_changed
        self.listing_changed.discard(path)
        return changed

    def resolve(self, path: str) -> str | None:
        """Where the name ``path`` is kept: ``path`` itself for a file or a directory, its
        link object for a symbolic link, None when the name does not exist. A plain file or
        directory wins over a link of the same name (only two mounts racing make both)."""
        if path in self.files or self.is_dir(path):
            return path
        lp = link_of(path)
        return lp if lp in self.files else None

    def visible_dir(self, path: str) -> bool:
        """Whether readdir shows this directory (it holds part of the working set)."""
        return (path == "" or self.vis[path] > 0 or path in self.local_dirs
                or (self.listing_all and path in self.children) or self.packed_dirs[path] > 0)

    def listdir(self, path: str) -> list[tuple[str, bool]]:
        """The working-set entries of a directory: sorted (name, is_dir) pairs."""
        names = self.children.get(path)
        if names is None:
            raise NotFound(path)
        out = []
        for name in sorted(names):
            child = f"{path}/{name}" if path else name
            row = self.files.get(child)
            if row is not None:
                if row.is_local or self.listing_all or child in self.packed:
                    out.append((name, False))
            elif self.visible_dir(child):
                out.append((name, True))
        return out
