"""Bringing the working set in line with a listing of the bucket: what other writers
added, changed or removed, and which directories their markers make or unmake.

A listing is a snapshot that may predate this cache's own latest changes, so
:class:`ListingSync` remembers when each upload of ours landed, and never lets an older
listing undo it; pending deletes, PUTs in flight and writes in progress are kept too.
It runs on the working set's owning thread (it changes the tree and the catalog).
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from brainfs.backend.keys import is_internal
from brainfs.backend.store import ObjectInfo

from .catalog import FileRow
from .paths import ancestors, is_marker, marker_of, parent_of

if TYPE_CHECKING:
    from .workingset import WorkingSet

log = logging.getLogger(__name__)


class ListingSync:
    """Reconciles one working set with listings of its corpus."""

    def __init__(self, ws: WorkingSet) -> None:
        self.ws = ws
        #: path -> monotonic time its last PUT was applied: a listing taken before then
        #: does not know the object (or shows its old ETag) and must not undo the upload
        self.uploaded_at: dict[str, float] = {}

    def landed(self, path: str) -> None:
        """An upload's outcome for ``path`` was just recorded: a listing taken before now
        does not know it."""
        self.uploaded_at[path] = time.monotonic()

    def sync(self, objects: Iterable[ObjectInfo],
             listed_since: float | None = None,
             writing: Iterable[str] = ()) -> dict[str, int]:
        """Reconcile the catalog with a fresh listing of the corpus.

        New objects become 'remote'; a clean local copy whose ETag changed is dropped
        (refetched on use); objects gone remotely disappear unless they are dirty here.
        ``listed_since``: the monotonic time the listing began; files whose upload was
        applied after it are left as they are (the listing predates them).
        ``writing``: paths with a write in progress (a shadow not committed yet). One
        another writer deleted or renamed away stays: the write is newer than their
        removal and recreates the path when it is committed (its upload finds no object
        and puts it there), as a dirty file gone remotely does.
        """
        ws = self.ws
        writing = set(writing)
        fresh: set[str] = set()
        if listed_since is not None:
            fresh = {p for p, t in self.uploaded_at.items() if t >= listed_since}
            self.uploaded_at = {p: t for p, t in self.uploaded_at.items()
                                if t >= listed_since - 600}
        seen: set[str] = set()
        added = changed = removed = 0
        updates: list[FileRow] = []
        dropped: list[str] = []
        objs = [o for o in objects
                if not is_internal(o.path)]
        # Directory markers make directories, not files (an empty directory of the corpus
        # is shown like one made in this mount).
        # A marker this mount removed (pending, or landed after the listing began) is the
        # listing's past: it must not bring the directory back.
        journal = ws.catalog.journal()  # read once for the whole reconciliation
        deleting = {j.path for j in journal if j.op == "delete"}
        removing = deleting | fresh
        marked = {parent_of(o.path) for o in objs
                  if is_marker(o.path) and o.path not in removing}
        objs = [o for o in objs if not is_marker(o.path)]
        for d in sorted(marked - ws.local_dirs):
            if d == "" or d in ws.files or any(a in ws.files for a in ancestors(d)):
                continue
            ws.local_dirs.add(d)
            ws.catalog.set_dir(d, True)
            ws.tree.add_dir(d)
            ws.tree.count_dir(d, +1)
        # Every directory the listing implies, known before any file is placed, so that a
        # key that is also a prefix (``a`` and ``a/b``) loses to the directory whatever the
        # listing order.
        prefixes = {a for o in objs for a in ancestors(o.path)}
        # A file deleted here but not yet in S3 must not come back from the listing; nor
        # may one whose PUT is in flight (its outcome, not the listing, decides: a file
        # deleted meanwhile has its object removed once the PUT is recorded).
        deleting |= ws.catalog.sent_paths()
        refetch: list[str] = []
        for obj in objs:
            seen.add(obj.path)
            if obj.path in deleting or obj.path in fresh:
                continue
            if not obj.etag:
                # No ETag: not a version yet (a PUT in progress or cut off, whose GET
                # fails). What this cache knows of the path stays until one is listed.
                continue
            row = ws.files.get(obj.path)
            if row is None:
                if self._shape_conflict(obj.path, prefixes):
                    continue
                row = FileRow(obj.path, obj.size, obj.mtime, obj.etag, "", "remote")
                ws.tree.insert(row)
                updates.append(row)
                added += 1
            elif row.state == "dirty":
                continue
            elif row.etag != obj.etag:
                if row.is_local:
                    refetch.append(row.path)
                    ws.blobs.remove(row.path)
                    ws.tree.set_state(row, "remote")
                    row.hash = ""
                elif ws.tree.unpack(row.path):
                    # Another writer's version: the pack's copy is not this file any more.
                    # Listed again once fetched (the relist fetches the preload's files).
                    for a in ancestors(row.path):
                        ws.tree.mark_changed(a)
                row.etag, row.size, row.mtime = obj.etag, obj.size, obj.mtime
                updates.append(row)
                changed += 1
        for path, row in list(ws.files.items()):
            if (path not in seen and row.state != "dirty" and row.etag and path not in fresh
                    and path not in deleting and path not in writing):
                ws.blobs.remove(path)
                ws.tree.remove(path)
                dropped.append(path)
                removed += 1
        self._drop_unmarked_dirs(marked, fresh, {j.path for j in journal})
        with ws.catalog.transaction() as db:
            ws.catalog.put_files(updates, db)
            ws.catalog.delete_files(dropped, db)
        #: what this listing changed, for a mount to invalidate the kernel's view
        ws.last_changes = {"updated": [r.path for r in updates], "removed": dropped,
                           "refetch": refetch}
        if ws.on_remote_changes is not None and (updates or dropped):
            ws.on_remote_changes(ws.last_changes)
        # Every pack entry still listed has the ETag this listing gives its object.
        ws.preload.listed()
        return {"added": added, "changed": changed, "removed": removed, "total": len(ws.files)}

    def _shape_conflict(self, path: str, prefixes: set[str]) -> bool:
        """A key that is also a prefix of other keys (``a`` and ``a/b``): the directory
        wins, the file is skipped with a warning; a file on the way of a path likewise."""
        ws = self.ws
        reason = None
        if path in ws.children or path in prefixes:
            reason = "is also a directory prefix"
        else:
            for a in ancestors(path):
                if a in ws.files:
                    reason = f"its parent {a!r} is a file"
                    break
        if reason:
            ws.skipped.append((path, reason))
            log.warning("skipping object %r: %s", path, reason)
            return True
        return False

    def _drop_unmarked_dirs(self, marked: set[str], fresh: set[str], journaled: set[str]) -> None:
        """An empty directory whose marker the listing no longer has goes: another mount
        removed it, or a listing snapshot that predates the removal taught it to this
        cache. Kept: one whose marker upload is pending or newer than the listing, and any
        directory with something in it. ``journaled``: the paths with a journal row."""
        ws = self.ws
        for d in sorted(ws.local_dirs - marked, reverse=True):  # deepest first
            if (not d or marker_of(d) in journaled or marker_of(d) in fresh
                    or ws.children.get(d)):
                continue
            with ws.catalog.transaction() as db:
                ws.catalog.set_dir(d, False, db)
                ws.catalog.drop_attrs(db, [d])
            ws.attrs.pop(d, None)
            ws.local_dirs.discard(d)
            ws.tree.count_dir(d, -1)
            ws.children.pop(d, None)
            parent = parent_of(d)
            ws.children.get(parent, set()).discard(posixpath.basename(d))
            ws.tree.mark_changed(parent)
            ws.tree.prune(parent)
