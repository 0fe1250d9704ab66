"""Renaming a file or a directory tree: the POSIX checks (:func:`plan`) and the move
itself (:func:`rename`), atomic against a crash.

One catalog transaction records every new row, the uploads of the new names and the
deletes of the old ones; the blobs move after it, the tree last. In the bucket each old
name's delete waits for its new name's PUT, so the bucket never holds neither.
"""

from __future__ import annotations

import posixpath
import time

from brainfs.backend.keys import is_link, link_name

from .catalog import FileRow
from .errors import CacheError, Exists, IsADirectory, NotADirectory, NotEmpty, NotFound
from .faults import crash_point
from .namespace import Namespace, journal_marker, record_removal
from .paths import check_name, other_form, parent_of


def plan(names: Namespace, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
    """Check that ``old`` can be renamed to ``new`` (POSIX rules) and return the file
    moves it means: one for a file, one per file beneath a directory. Raises the error
    the caller should see; changes nothing."""
    if old == new:
        return []
    tree = names.tree
    # ``new`` is in ``old``'s form (a link object's path for a link): the same name
    # in the other form is replaced too (a file renamed over a link, or the reverse).
    other = other_form(new)
    new_is_dir = tree.is_dir(link_name(new) if is_link(new) else new)
    target_exists = new in tree.files or other in tree.files or new_is_dir
    if target_exists and noreplace:
        raise Exists(new)
    if old in tree.files:
        if new_is_dir:
            raise IsADirectory(new)
        if not target_exists:
            names.check_new_path(new, link=is_link(old))
        return [(old, new)]
    if old == "" or not tree.is_dir(old):
        raise NotFound(old)
    if new == "" or new.startswith(old + "/"):
        raise CacheError(f"cannot move {old!r} into itself")
    if new in tree.files or other in tree.files:
        raise NotADirectory(new)
    if target_exists and tree.children.get(new):
        raise NotEmpty(new)
    if not target_exists:
        names.check_new_path(new)
    moves = [(p, new + p[len(old):]) for p in tree.files_under(old)]
    for _, dst in moves:
        check_name(dst)
    return moves


def rename(names: Namespace, old: str, new: str, noreplace: bool = False) -> list[tuple[str, str]]:
    """Rename a file or a directory tree, atomically against a crash: one catalog
    transaction records every new row, the uploads of the new names and the deletes of
    the old ones; the local content moves after it (the start-up check finishes the
    moves if a crash falls in between). The content of every file moved must be
    local. Returns the file moves done.

    In the bucket, each old name's delete waits until the new name's PUT has landed,
    so the bucket never holds neither. An editor's atomic save (write ``x.tmp``,
    rename it over ``x``) replaces the target's remote version: not a conflict.
    """
    tree, catalog, ws = names.tree, names.catalog, names.ws
    moves = plan(names, old, new, noreplace)
    if not moves and old == new:
        return []
    for src, _ in moves:
        if not tree.files[src].is_local:
            raise CacheError(f"{src} is not local")
    is_tree = old not in tree.files
    # A file renamed over a link of the same name, or a link over a file: the name's
    # other form goes in the same transaction.
    dropped = None if is_tree else tree.files.get(other_form(new))
    now = time.time()
    moved: list[FileRow] = []
    old_dirs = sorted((d for d in tree.children if d == old or d.startswith(old + "/")),
                      reverse=True) if is_tree else []
    new_dirs = [new + d[len(old):] for d in old_dirs
                if d in tree.local_dirs or d == old]
    # Modes and owners go with their names; a replaced target's go with it.
    renamed = list(moves) + [(d, new + d[len(old):]) for d in old_dirs]
    attrs_after = dict(ws.attrs)
    for _, dst in renamed:
        attrs_after.pop(dst, None)
    if dropped is not None:
        attrs_after.pop(dropped.path, None)
    for src, dst in renamed:
        a = attrs_after.pop(src, None)
        if a is not None:
            attrs_after[dst] = a
    with catalog.transaction() as db:
        catalog.drop_attrs(db, [p for p in ws.attrs if p not in attrs_after])
        for p, a in attrs_after.items():
            if ws.attrs.get(p) != a:
                catalog.put_attrs(db, p, a)
        if dropped is not None:
            # As for the old names: the name's other form goes from the bucket only
            # once its new object is there, so the bucket never holds neither.
            record_removal(catalog, db, dropped, wait_for=new)
        # A write in progress to a replaced name belongs to its writers' descriptors
        # now, not to the name: a crash after this transaction must not apply its
        # recorded shadow over the file moved there (commit = "quiet").
        catalog.shadow_drop_paths([dst for _, dst in moves], db)
        for src, dst in moves:
            row = tree.files[src]
            base = names.base_etag(dst)
            # A rename keeps the file's mtime, as on a local disk.
            m = FileRow(dst, row.size, row.mtime, base, row.hash, "dirty", row.pinned, now)
            moved.append(m)
            catalog.delete_files([src], db)
            catalog.put_files([m], db)
            catalog.journal_put(db, dst, "put", m.hash, base)
            pending = catalog.journal_row(src)
            src_base = row.etag if row.state != "dirty" or pending is None else pending.base
            if src_base or catalog.sent_etags(src):
                catalog.journal_put(db, src, "delete", "", src_base, wait_for=dst)
            else:
                catalog.journal_drop(db, src)
        for d in old_dirs:
            catalog.set_dir(d, False, db)
            if d in tree.local_dirs:
                journal_marker(catalog, db, d, False)
        for d in new_dirs:
            catalog.set_dir(d, True, db)
            journal_marker(catalog, db, d, True)
        if not is_tree:
            parent = parent_of(old)
            if parent and parent != parent_of(new) and parent not in tree.local_dirs \
                    and tree.children.get(parent) == {posixpath.basename(old)}:
                # The renamed file was the last in its directory: the directory stays,
                # as on a local disk.
                catalog.set_dir(parent, True, db)
                journal_marker(catalog, db, parent, True)
    crash_point("rename-after-catalog")
    ws.attrs = attrs_after
    if dropped is not None:
        names.remove(dropped.path, keep_parent=True)
        names.blobs.remove(dropped.path)
    for src, dst in moves:
        names.blobs.move(src, dst)
    # Memory last: it mirrors what the catalog now says.
    for (src, _), m in zip(moves, moved):
        if m.path in tree.files:
            names.remove(m.path)
        tree.insert(m)  # first: a rename within one directory never empties it
        names.remove(src, keep_parent=not is_tree)
    if is_tree:
        for d in old_dirs:
            if d in tree.local_dirs:
                tree.local_dirs.discard(d)
                tree.count_dir(d, -1)
            if d in tree.children and not tree.children[d]:
                tree.children.pop(d, None)
                parent = parent_of(d)
                tree.children.get(parent, set()).discard(posixpath.basename(d))
        tree.prune(parent_of(old))
        for d in sorted(new_dirs):
            if d not in tree.local_dirs:
                tree.local_dirs.add(d)
                tree.add_dir(d)
                tree.count_dir(d, +1)
    return moves
