"""The preload pack while a mount starts: the files it holds are listed at once, as if
local, and served from memory until they are unpacked to disk (mountpoint-s3's prefetch,
for a whole working set at once).

A pack is written beside a listing snapshot, and another writer may have changed a file
since: until a real listing vouches for an entry's ETag (whole, or the key range holding
it), reads of that entry go to the bucket instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError
from brainfs.backend.store import ObjectInfo, ObjectStore

from .pack import PackView, load_pack, select_preload
from .paths import ancestors
from .tree import Tree

log = logging.getLogger(__name__)


def load(store: ObjectStore | None) -> PackView | None:
    """Download the preload pack (blocking; no shared state touched). None when the
    bucket has none or it cannot be read (the files are then fetched one by one)."""
    if store is None:
        return None
    try:
        return load_pack(store)
    except BackendError as e:
        log.warning("preload pack unreadable, fetching files one by one: %s", e)
        return None


class Preload:
    """The pack one working set serves from, and on whose word (owning thread only)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        #: the preload pack, held in memory while its files are unpacked to disk (a mount
        #: is usable before they are: see :meth:`use`)
        self.pack: PackView | None = None
        #: whether a real listing has vouched for the pack's entries since it was taken: a
        #: listing snapshot is a hint, and another writer may have changed a file after it
        #: and the pack were written (both then name the old ETag). Until then
        #: ``WorkingSet.fetch`` GETs instead of serving the pack.
        self.verified = True

    def plan(self, cfg: Config) -> list[str]:
        """Paths to fetch at mount: the globs, then the newest transcripts, within budget."""
        files = self.tree.files
        return [p for p in select_preload(files.values(), cfg)
                if not files[p].is_local and p not in self.tree.packed]

    def listed(self) -> None:
        """A whole real listing is in: every pack entry still listed has the ETag it gives
        its object."""
        self.verified = True
        self.tree.pack_vouched.clear()

    def use(self, pack: PackView, paths: Iterable[str],
            verified: bool = True) -> tuple[list[str], list[str]]:
        """Serve ``paths`` from ``pack`` from now on: each one it holds at the catalog's
        ETag is listed at once, as if local, and unpacked to disk on first use or by
        ``WorkingSet.fetch`` in the background. ``verified=False``: the catalog's ETags
        came from a listing snapshot, so ``fetch`` serves nothing from the pack until a
        real listing (``WorkingSet.sync_listing``) has checked them. Returns (paths the
        pack serves, the rest)."""
        served: list[str] = []
        rest: list[str] = []
        for p in paths:
            row = self.tree.files.get(p)
            if row is None or row.is_local or not pack.holds(p, row.etag):
                rest.append(p)
                continue
            served.append(p)
            if p not in self.tree.packed:
                self.tree.packed.add(p)
                for a in ancestors(p):
                    self.tree.packed_dirs[a] += 1
                    self.tree.mark_changed(a)
        if served:
            self.pack = pack
            self.verified = verified
        return served, rest

    def is_packed(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf (not written to disk yet)."""
        return path in self.tree.packed

    def unchecked(self, path: str) -> bool:
        """Whether ``path`` is listed on the pack's behalf on a listing snapshot's word
        alone: no real listing, whole or the range holding it, has vouched for its ETag."""
        return (path in self.tree.packed and not self.verified
                and path not in self.tree.pack_vouched)

    def vouch(self, objects: Iterable[ObjectInfo]) -> list[str]:
        """Take part of a real listing (one key range of it, in before the rest) as the
        word on the packed files it lists: each one it shows at the ETag the catalog has
        (the pack's) is served from the pack from now on. A packed file listed at another
        ETag, or missing from the part, stays unchecked until ``WorkingSet.sync_listing``
        has the whole listing (which replaces or removes it). Returns the paths vouched
        for."""
        if self.verified or not self.tree.packed:
            return []
        out: list[str] = []
        for o in objects:
            if o.path in self.tree.packed and o.path not in self.tree.pack_vouched and o.etag:
                row = self.tree.files.get(o.path)
                if row is not None and row.etag == o.etag and row.state != "dirty":
                    self.tree.pack_vouched.add(o.path)
                    out.append(o.path)
        return out

    def copy(self, path: str) -> bytes | None:
        """The pack's bytes of ``path`` while it is listed on the pack's behalf and a real
        listing has vouched for the pack (else None: the file is in the bucket only)."""
        row = self.tree.files.get(path)
        if (self.pack is None or row is None or path not in self.tree.packed
                or self.unchecked(path)):
            return None
        return self.pack.get(path, row.etag)

    def drop(self) -> None:
        """Free the pack once its files are unpacked; a file it still holds (its unpacking
        failed) is listed again only once fetched."""
        self.pack = None
        for p in list(self.tree.packed):
            self.tree.unpack(p)
            for a in ancestors(p):
                self.tree.mark_changed(a)
        self.tree.packed_dirs.clear()
