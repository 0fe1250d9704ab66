"""Making and unmaking names: files, symbolic links, directories, their modes and times.

Each change is written to the catalog first (the row, and the upload or delete it means in
the journal, in one transaction), then to the blobs, then mirrored in the tree, so a crash
leaves the catalog's word, which the start-up check completes. A :class:`Namespace` works
on its working set's state from the owning thread; renames are in ``rename.py``.
"""

from __future__ import annotations

import posixpath
import time
from typing import TYPE_CHECKING

from brainfs.backend.keys import is_link, link_name, link_of, reserved_name

from .blobs import content_hash
from .catalog import Attrs, Catalog, FileRow
from .errors import CacheError, Exists, IsADirectory, NotADirectory, NotEmpty, NotFound
from .paths import EMPTY_HASH, check_name, marker_of, other_form, parent_of

if TYPE_CHECKING:
    from .workingset import WorkingSet


def record_removal(catalog: Catalog, db, row: FileRow, wait_for: str = "") -> None:
    """In the catalog transaction ``db``: ``row``'s file is gone, and its delete in the
    bucket is journaled (conditional on the version it was based on). ``wait_for``: a
    path whose PUT must land first (the name's new object, when a rename replaces it)."""
    catalog.drop_attrs(db, [row.path])
    catalog.delete_files([row.path], db)
    # No base version is not "nothing in the bucket": an upload of ours may have landed
    # since the base was taken (a create's empty object, uploaded while its writer's
    # shadow was open). The delete then removes only a version we sent (Uploader.is_ours).
    if row.etag or catalog.sent_etags(row.path):
        catalog.journal_put(db, row.path, "delete", "", row.etag, wait_for=wait_for)
    else:
        catalog.journal_drop(db, row.path)


def journal_marker(catalog: Catalog, db, d: str, present: bool) -> None:
    """Journal the directory marker of ``d``: an empty directory survives in the
    corpus (a remount, a fresh cache, another machine)."""
    if d == "":
        return
    if present:
        catalog.journal_put(db, marker_of(d), "put", EMPTY_HASH, "")
    else:
        catalog.journal_put(db, marker_of(d), "delete", "", "")


class Namespace:
    """The name operations of one working set (``WorkingSet`` calls them)."""

    def __init__(self, ws: WorkingSet) -> None:
        #: the owner: its ``attrs`` are replaced whole by a rename
        self.ws = ws
        self.tree = ws.tree
        self.catalog = ws.catalog
        self.blobs = ws.blobs

    def check_new_path(self, path: str, link: bool = False) -> None:
        """Raise unless ``path`` can be created (valid name, parent dir, not existing in
        either form). ``link``: ``path`` is the object of a new symbolic link."""
        check_name(path)
        if link and not is_link(path):
            raise CacheError(f"not a symbolic link's object: {path!r}")
        reserved = reserved_name(link_name(path) if link else path)
        if reserved:
            raise CacheError(f"refused name {path!r}: {reserved}")
        if not self.tree.is_dir(parent_of(path)):
            raise NotFound(parent_of(path))
        other = other_form(path)
        tree = self.tree
        if path in tree.files or path in tree.children or other in tree.files or tree.is_dir(other):
            raise Exists(path)

    def base_etag(self, path: str) -> str:
        """The remote version a new write of ``path`` replaces: the ETag of the file we
        have, or of the object a still-pending delete was going to remove ('' = none)."""
        row = self.tree.files.get(path)
        if row is not None:
            return row.etag
        for j in self.catalog.journal():
            if j.path == path and j.op == "delete":
                return j.base
        return ""

    def create(self, path: str, durable: bool = True) -> FileRow:
        """A new, empty file (dirty, nothing uploaded yet).

        ``durable=False``: in memory only until :meth:`persist` or a commit records it, so
        a crash before the creator's first close leaves the path as it was before the
        create (absent), never an empty file that was meant to be written."""
        self.check_new_path(path)
        base = self.base_etag(path)
        open(self.blobs.location(path), "wb").close()
        row = FileRow(path, 0, time.time(), base, content_hash(b""), "dirty", atime=time.time())
        self.tree.insert(row)
        if durable:
            self.persist(path)
        return row

    def symlink(self, path: str, target: bytes) -> str:
        """A new symbolic link ``path`` to ``target``, durable and journaled for upload in
        one transaction. Returns the path of its object (``path.brainfs-link``)."""
        lp = link_of(path)
        self.check_new_path(lp, link=True)
        base = self.base_etag(lp)
        digest = self.blobs.write(lp, target)
        now = time.time()
        row = FileRow(lp, len(target), now, base, digest, "dirty", atime=now)
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)
            self.catalog.journal_put(db, lp, "put", digest, base)
        self.tree.insert(row)
        return lp

    def readlink(self, lp: str) -> bytes:
        """The target of the symbolic link kept at ``lp`` (its content must be local)."""
        if not is_link(lp) or lp not in self.tree.files:
            raise NotFound(lp)
        return self.blobs.location(lp).read_bytes()

    def persist(self, path: str) -> None:
        """Record a file made by ``create(durable=False)`` that no commit has recorded yet
        (its creator closed it without writing): the catalog row and its upload."""
        row = self.tree.files.get(path)
        j = self.catalog.journal_row(path)
        # A pending delete is the unlink of the name's earlier file: this file replaces it.
        if row is None or row.state != "dirty" or (j is not None and j.op == "put"):
            return
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)
            self.catalog.journal_put(db, path, "put", row.hash, row.etag)

    def set_mtime(self, path: str, mtime: float) -> None:
        """Record the mtime ``utimensat(2)`` gave a file with no write in progress (kept
        by this cache: S3 stores the upload time)."""
        row = self.tree.files.get(path)
        if row is None:
            raise NotFound(path)
        row.mtime = mtime
        with self.catalog.transaction() as db:
            self.catalog.put_files([row], db)

    def set_attrs(self, path: str, attrs: Attrs) -> None:
        """Record the mode and owner of a file or directory (chmod, chown, or the mode a
        create or mkdir asked for). The mount's kernel checks who may change them."""
        if path not in self.tree.files and not self.tree.is_dir(path):
            raise NotFound(path)
        with self.catalog.transaction() as db:
            self.catalog.put_attrs(db, path, attrs)
        self.ws.attrs[path] = attrs

    def unlink(self, path: str) -> None:
        """Remove a file locally and journal its deletion in the corpus."""
        row = self.tree.files.get(path)
        if row is None:
            raise IsADirectory(path) if self.tree.is_dir(path) else NotFound(path)
        self.remove(path, keep_parent=True)
        self.blobs.remove(path)
        self.ws.attrs.pop(path, None)
        with self.catalog.transaction() as db:
            record_removal(self.catalog, db, row)

    def remove(self, path: str, keep_parent: bool = False) -> FileRow | None:
        """Take ``path`` out of the tree. ``keep_parent``: the user removed it, so an
        emptied directory stays (as on a local disk) instead of vanishing with its last
        file; a file gone remotely lets its empty directories go."""
        row = self.tree.detach(path)
        if row is None:
            return None
        parent = parent_of(path)
        if (keep_parent and parent != "" and not self.tree.children[parent]
                and parent not in self.tree.local_dirs):
            # Emptied by the user: it stays, as on a local disk, and in the corpus too.
            self.tree.local_dirs.add(parent)
            with self.catalog.transaction() as db:
                self.catalog.set_dir(parent, True, db)
                journal_marker(self.catalog, db, parent, True)
            self.tree.count_dir(parent, +1)
        self.tree.prune(parent)
        return row

    def mkdir(self, path: str) -> None:
        """Create a directory (kept locally until a file lands in it)."""
        self.check_new_path(path)
        with self.catalog.transaction() as db:
            self.catalog.set_dir(path, True, db)
            journal_marker(self.catalog, db, path, True)
        self.tree.local_dirs.add(path)
        self.tree.add_dir(path)
        self.tree.count_dir(path, +1)

    def rmdir(self, path: str) -> None:
        """Remove an empty directory."""
        if path in self.tree.files:
            raise NotADirectory(path)
        if not self.tree.is_dir(path) or path == "":
            raise NotFound(path)
        if self.tree.children.get(path):
            raise NotEmpty(path)
        with self.catalog.transaction() as db:
            self.catalog.set_dir(path, False, db)
            journal_marker(self.catalog, db, path, False)
            self.catalog.drop_attrs(db, [path])
        self.ws.attrs.pop(path, None)
        if path in self.tree.local_dirs:
            self.tree.local_dirs.discard(path)
            self.tree.count_dir(path, -1)
        self.tree.children.pop(path, None)
        parent = parent_of(path)
        self.tree.children[parent].discard(posixpath.basename(path))
        self.tree.prune(parent)
