"""The consistency check a cache directory gets before a mount serves it (S3QL's fsck,
for one cache): interrupted commits finished, uncommitted writes recovered, damaged copies
dropped for refetch, the journal made to match the catalog, orphan blobs removed.

It runs once, blocking, before anything else uses the working set, so it may touch all of
the working set's state; ``WorkingSet.check`` is its entry point.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .catalog import FileRow
from .paths import EMPTY_HASH, is_marker, parent_of

if TYPE_CHECKING:
    from .workingset import WorkingSet

log = logging.getLogger(__name__)


@dataclass
class CheckReport:
    """What the consistency check at start found and did."""

    temp_files_removed: int = 0
    refetch: list[str] = field(default_factory=list)
    journal_added: list[str] = field(default_factory=list)
    journal_dropped: list[str] = field(default_factory=list)
    orphans_removed: int = 0
    corrupt_dirty: list[str] = field(default_factory=list)
    commits_completed: list[str] = field(default_factory=list)
    #: paths whose PUT may have landed after they were deleted here: their removal is
    #: journaled (carried out only if the object is the one this cache sent)
    deletes_restored: list[str] = field(default_factory=list)
    #: files whose writes a killed daemon had not committed yet (commit = "quiet"),
    #: committed now from their recorded shadows
    writes_recovered: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the log."""
        return (
            f"consistency check: {self.temp_files_removed} temp files removed, "
            f"{len(self.refetch)} damaged copies dropped for refetch, "
            f"{len(self.journal_added)} journal entries restored, "
            f"{len(self.journal_dropped)} stale journal entries dropped, "
            f"{self.orphans_removed} orphan blobs removed, "
            f"{len(self.commits_completed)} interrupted commits completed, "
            f"{len(self.deletes_restored)} interrupted deletes restored, "
            f"{len(self.writes_recovered)} uncommitted writes recovered, "
            f"{len(self.corrupt_dirty)} unrecoverable dirty files"
        )


def check(ws: WorkingSet) -> CheckReport:
    """Consistency check of the cache directory (blocking; run before serving).

    Never serves a damaged copy: a clean file whose bytes do not hash to the catalog's
    value goes back to 'remote' (refetched on next use); a dirty one is reported.
    """
    rep = CheckReport()
    # A crash between a write's journal commit and its rename leaves the sealed shadow
    # in tmp/: finish that commit rather than lose the write.
    # A crash inside a rename leaves the content under the old name's blob, which no
    # row wants any more: the same hash finds it.
    unfinished: dict[str, list[FileRow]] = {}
    for r in ws.files.values():
        if r.state == "dirty" and not ws.blobs.verify(r.path, r.hash, r.size):
            unfinished.setdefault(r.hash, []).append(r)
    if unfinished:
        wanted = {ws.blobs.name(r.path) for r in ws.files.values() if r.is_local}
        found = ws.blobs.orphans(wanted)
        found.update(ws.blobs.sealed_shadows())
        for digest, rows in unfinished.items():
            src = found.get(digest)
            for i, r in enumerate(rows):
                if src is None and digest == EMPTY_HASH:
                    ws.blobs.write(r.path, b"")
                elif src is not None:
                    ws.blobs.adopt(r.path, src, keep=i < len(rows) - 1)
                else:
                    continue
                rep.commits_completed.append(r.path)
    rep.writes_recovered = _recover_shadows(ws)
    rep.temp_files_removed = ws.blobs.sweep()
    journal = {j.path: j for j in ws.catalog.journal()}
    with ws.catalog.transaction() as db:
        for row in list(ws.files.values()):
            if not row.is_local:
                continue
            if ws.blobs.verify(row.path, row.hash, row.size):
                if row.state == "dirty" and row.path not in journal:
                    ws.catalog.journal_put(db, row.path, "put", row.hash, row.etag)
                    rep.journal_added.append(row.path)
                continue
            if row.state == "dirty":
                # The committed bytes are gone or damaged: nothing to upload safely.
                rep.corrupt_dirty.append(row.path)
                log.error("dirty file %s is damaged in the cache; its last write is lost", row.path)
                ws.catalog.journal_drop(db, row.path)
            else:
                rep.refetch.append(row.path)
            ws.blobs.remove(row.path)
            ws.tree.set_state(row, "remote")
            row.hash = ""
            if not row.etag:  # never uploaded and now unreadable: nothing left of it
                ws.tree.remove(row.path)
                ws.catalog.delete_files([row.path], db)
            else:
                ws.catalog.put_files([row], db)
        for path, j in list(journal.items()):
            row = ws.files.get(path)
            if is_marker(path):
                continue
            if j.op == "put" and (row is None or row.state != "dirty" or row.hash != j.hash):
                ws.catalog.journal_drop(db, path)
                rep.journal_dropped.append(path)
                del journal[path]
        # A PUT that may have landed after its file was deleted or renamed away here
        # (a crash before its outcome was recorded): its object must go, but only if
        # it is the one we sent (an empty base: see upload()).
        for path in ws.catalog.sent_paths():
            if is_marker(path) and parent_of(path) in ws.local_dirs:
                continue
            if path not in ws.files and path not in journal:
                ws.catalog.journal_put(db, path, "delete", "", "")
                rep.deletes_restored.append(path)
        # A mode given to a file whose create a crash undid must not pass to the next
        # file of that name.
        stale = [p for p in ws.attrs if p not in ws.files and not ws.is_dir(p)]
        ws.catalog.drop_attrs(db, stale)
        for p in stale:
            del ws.attrs[p]
    wanted = {ws.blobs.name(r.path) for r in ws.files.values() if r.is_local}
    for name in ws.blobs.names() - wanted:
        (ws.blobs.data / name).unlink(missing_ok=True)
        rep.orphans_removed += 1
    return rep


def _recover_shadows(ws: WorkingSet) -> list[str]:
    """Commit every recorded shadow still in tmp/ (blocking; start-up check only): a
    mount that commits when quiet was killed after write(2)s it had not committed, and
    those writes returned to their writers. Returns the paths committed."""
    done: list[str] = []
    for name, path, base in ws.catalog.shadows():
        tmp = ws.blobs.tmp / name
        if path not in ws.files or not tmp.exists():
            # Unlinked, or committed by a rename, after the record: nothing to keep.
            ws.catalog.shadow_drop(name)
            continue
        try:
            size, digest = ws.blobs.seal_shadow(str(tmp))
            ws.apply_commit(path, size, digest, str(tmp), base=base)
        except OSError as e:
            log.error("uncommitted write to %s could not be recovered: %s", path, e)
            ws.catalog.shadow_drop(name)
            continue
        done.append(path)
    return done
