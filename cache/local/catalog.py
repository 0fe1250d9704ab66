"""The SQLite catalog: every corpus path, its state, and the journal of pending uploads.

One connection, WAL with ``synchronous=NORMAL``: a committed transaction survives a kill
of the process (it is in the WAL, in the OS page cache); only a power loss may lose the
last ones. The journal is what makes a closed file survive a daemon crash before its
upload: the content is fsynced into the blob store *before* the journal row commits.

A lock serialises access so bulk work can run in a worker thread while the FUSE loop
does point updates.
"""

from __future__ import annotations

import sqlite3
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: 2: journal.wait_for, the sent table, meta.corpus; 3: sent.stamp, the attrs table; 4: the
#: shadows table (older caches are upgraded in place).
SCHEMA_VERSION = 4
#: The catalog's file in a cache directory (the working set opens it; `brainfs umount` reads
#: its journal once the daemon is gone).
CATALOG_NAME = "catalog.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per corpus path known locally or remotely.
--   state:  'remote' = in the corpus, no local copy;
--           'local'  = local copy equal to the remote object with ETag `etag`;
--           'dirty'  = local copy newer than the remote (a journal row says what to do).
--   etag:   ETag of the remote object the local copy is based on; '' = never uploaded.
--   hash:   xxh3-128 of the local copy; '' when state = 'remote'.
--   atime:  last access (unix seconds), for LRU eviction.
CREATE TABLE IF NOT EXISTS files (
    path   TEXT PRIMARY KEY,
    size   INTEGER NOT NULL,
    mtime  REAL NOT NULL,
    etag   TEXT NOT NULL DEFAULT '',
    hash   TEXT NOT NULL DEFAULT '',
    state  TEXT NOT NULL CHECK (state IN ('remote', 'local', 'dirty')),
    pinned INTEGER NOT NULL DEFAULT 0,
    atime  REAL NOT NULL DEFAULT 0
);
-- Directories created in the mount that have no file yet (S3 has no directories).
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY);
-- Pending remote operations, at most one per path (the latest intent wins).
--   op: 'put' = upload the local copy whose hash is `hash`; 'delete' = remove the object.
CREATE TABLE IF NOT EXISTS journal (
    path    TEXT PRIMARY KEY,
    op      TEXT NOT NULL CHECK (op IN ('put', 'delete')),
    hash    TEXT NOT NULL DEFAULT '',
    base    TEXT NOT NULL DEFAULT '',   -- ETag the change was based on ('' = new object)
    created REAL NOT NULL,
    -- a delete made by a rename waits until the put of the new name has landed, so that
    -- the bucket always holds the old name or the new one, never neither
    wait_for TEXT NOT NULL DEFAULT ''
);
"""

# The versions of a path this cache has PUT and not seen superseded, by ETag (MD5 of the
# bytes), committed *before* the request goes out. landed = 0: the outcome is not
# recorded yet (in flight, or lost to a crash); landed = 1: the last version of ours
# that landed (one row: an older one of ours back in the bucket is another writer's
# restore, not ours). A remote object with one of these ETags is ours, never a conflict:
# after a crash between a PUT and its record, or when our own upload landed while the
# next version was being written. A path with a landed = 0 row but no file and no journal
# row may hold an object we must remove.
#   stamp: a random id sent with the PUT as object metadata. Identical bytes have one ETag
#          whoever writes them; the stamp tells our object from another writer's copy of
#          the same bytes ('' = unknown: a row from before schema 3).
_SENT_TABLE = """
CREATE TABLE IF NOT EXISTS sent (
    path    TEXT NOT NULL,
    etag    TEXT NOT NULL,
    created REAL NOT NULL,
    landed  INTEGER NOT NULL DEFAULT 0,
    stamp   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (path, etag, stamp)
)"""

_SCHEMA += _SENT_TABLE + """;
-- Modes and owners given in the mount (create/mkdir's mode, chmod, chown), by path; a path
-- without a row has the defaults (0644 files, 0755 directories, the mounting user). Kept by
-- this cache only: S3 stores none (ctime: when they last changed, unix seconds).
CREATE TABLE IF NOT EXISTS attrs (
    path  TEXT PRIMARY KEY,
    mode  INTEGER NOT NULL,
    uid   INTEGER NOT NULL,
    gid   INTEGER NOT NULL,
    ctime REAL NOT NULL
);
-- Writes not committed yet, when commits wait for a quiet moment (commit = "quiet"): the
-- temp file (in tmp/) that holds the file's new content, and the remote version the write
-- started from. A start after a crash commits each one still there, so a write(2) that
-- returned is never lost with the daemon.
CREATE TABLE IF NOT EXISTS shadows (
    tmp   TEXT PRIMARY KEY,
    path  TEXT NOT NULL,
    base  TEXT NOT NULL DEFAULT ''
);
"""


@dataclass
class FileRow:
    """One catalog row (the in-memory copy the working set keeps)."""

    path: str
    size: int
    mtime: float
    etag: str = ""
    hash: str = ""
    state: str = "remote"
    pinned: bool = False
    atime: float = 0.0

    @property
    def is_local(self) -> bool:
        """True when the content is on local disk (clean or dirty)."""
        return self.state != "remote"


@dataclass(frozen=True)
class Attrs:
    """A mode and owner set in the mount (see the attrs table)."""

    mode: int
    uid: int
    gid: int
    ctime: float


@dataclass
class JournalRow:
    """One pending remote operation."""

    path: str
    op: str
    hash: str
    base: str
    created: float
    wait_for: str = ""


class Catalog:
    """Persistent state of one corpus's cache directory."""

    def __init__(self, db_path: Path) -> None:
        self._db = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        cols = {r[1] for r in self._db.execute("PRAGMA table_info(journal)")}
        if "wait_for" not in cols:  # a version-1 cache: upgrade in place
            self._db.execute("ALTER TABLE journal ADD COLUMN wait_for TEXT NOT NULL DEFAULT ''")
        if "stamp" not in {r[1] for r in self._db.execute("PRAGMA table_info(sent)")}:
            # A version-2 cache: the key changes, so the (small) table is rebuilt; its rows
            # keep an unknown stamp and are judged by ETag alone, as before.
            with self.transaction() as db:
                db.execute("ALTER TABLE sent RENAME TO sent_v2")
                db.execute(_SENT_TABLE)
                db.execute("INSERT INTO sent (path, etag, created, landed) "
                           "SELECT path, etag, created, landed FROM sent_v2")
                db.execute("DROP TABLE sent_v2")
        self._db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )

    # -- meta ------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value of the meta table, or None."""
        with self._lock:
            r = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return r[0] if r else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the meta table."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (nestable only through the lock, not SQL savepoints)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- files -----------------------------------------------------------------------
    def all_files(self) -> list[FileRow]:
        """Every row, for loading the in-memory view at start."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, size, mtime, etag, hash, state, pinned, atime FROM files"
            ).fetchall()
        return [FileRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7]) for r in rows]

    def put_files(self, rows: Iterable[FileRow], db: sqlite3.Connection | None = None) -> None:
        """Insert or replace rows (inside a transaction when ``db`` is given)."""
        data = [(r.path, r.size, r.mtime, r.etag, r.hash, r.state, int(r.pinned), r.atime) for r in rows]
        with self._lock:
            (db or self._db).executemany(
                "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)", data
            )

    def delete_files(self, paths: Iterable[str], db: sqlite3.Connection | None = None) -> None:
        """Forget rows."""
        with self._lock:
            (db or self._db).executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    # -- dirs ------------------------------------------------------------------------
    def all_dirs(self) -> list[str]:
        """Directories created locally."""
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM dirs")]

    def set_dir(self, path: str, present: bool, db: sqlite3.Connection | None = None) -> None:
        """Remember or forget a locally created directory (inside a transaction when
        ``db`` is given)."""
        with self._lock:
            if present:
                (db or self._db).execute("INSERT OR IGNORE INTO dirs VALUES (?)", (path,))
            else:
                (db or self._db).execute("DELETE FROM dirs WHERE path = ?", (path,))

    # -- journal ---------------------------------------------------------------------
    def journal(self) -> list[JournalRow]:
        """Pending operations, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, op, hash, base, created, wait_for FROM journal ORDER BY created"
            ).fetchall()
        return [JournalRow(*r) for r in rows]

    def journal_row(self, path: str) -> JournalRow | None:
        """The pending operation of ``path``, if any."""
        with self._lock:
            r = self._db.execute(
                "SELECT path, op, hash, base, created, wait_for FROM journal WHERE path = ?", (path,)
            ).fetchone()
        return JournalRow(*r) if r else None

    def journal_put(self, db: sqlite3.Connection, path: str, op: str, hash_: str, base: str,
                    wait_for: str = "") -> None:
        """Record the latest intent for ``path`` (inside a transaction)."""
        db.execute(
            "INSERT OR REPLACE INTO journal VALUES (?,?,?,?,?,?)",
            (path, op, hash_, base, time.time(), wait_for),
        )

    def journal_done(self, db: sqlite3.Connection, path: str, op: str, hash_: str) -> bool:
        """Remove the entry if it is still the one that was carried out; True if removed."""
        cur = db.execute(
            "DELETE FROM journal WHERE path = ? AND op = ? AND hash = ?", (path, op, hash_)
        )
        return cur.rowcount > 0

    def journal_drop(self, db: sqlite3.Connection, path: str) -> None:
        """Forget whatever is pending for ``path``."""
        db.execute("DELETE FROM journal WHERE path = ?", (path,))

    # -- attrs -----------------------------------------------------------------------
    def all_attrs(self) -> dict[str, Attrs]:
        """Every mode and owner set in the mount, by path."""
        with self._lock:
            return {r[0]: Attrs(*r[1:]) for r in self._db.execute(
                "SELECT path, mode, uid, gid, ctime FROM attrs")}

    def put_attrs(self, db: sqlite3.Connection, path: str, a: Attrs) -> None:
        """Record the mode and owner of ``path`` (inside a transaction)."""
        db.execute("INSERT OR REPLACE INTO attrs VALUES (?,?,?,?,?)",
                   (path, a.mode, a.uid, a.gid, a.ctime))

    def drop_attrs(self, db: sqlite3.Connection, paths: Iterable[str]) -> None:
        """Forget the modes and owners of ``paths`` (inside a transaction)."""
        db.executemany("DELETE FROM attrs WHERE path = ?", [(p,) for p in paths])

    # -- sent ------------------------------------------------------------------------
    def sent_add(self, path: str, etags: Iterable[str]) -> str:
        """Record, durably, that a PUT of ``path`` that the server will give one of
        ``etags`` is about to start; returns the stamp to send with it. A retry of the same
        bytes whose earlier attempt's outcome is unknown reuses that attempt's stamp, so
        that whichever attempt landed is recognised."""
        etags = list(etags)
        with self.transaction() as db:
            marks = "?" * len(etags)
            r = db.execute(
                f"SELECT stamp FROM sent WHERE path = ? AND landed = 0 AND stamp != '' "
                f"AND etag IN ({','.join(marks)}) LIMIT 1", (path, *etags)).fetchone()
            stamp = r[0] if r else secrets.token_hex(12)
            now = time.time()
            db.executemany("INSERT OR IGNORE INTO sent VALUES (?,?,?,0,?)",
                           [(path, e, now, stamp) for e in etags])
        return stamp

    def sent_etags(self, path: str) -> set[str]:
        """ETags of ``path`` that are ours: PUTs in flight or lost to a crash, and the last
        one that landed."""
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT etag FROM sent WHERE path = ?", (path,))}

    def sent_stamps(self, path: str, etag: str) -> set[str]:
        """The stamps our PUTs of ``path`` with ``etag`` went out with ('' = unknown)."""
        with self._lock:
            return {r[0] for r in self._db.execute(
                "SELECT stamp FROM sent WHERE path = ? AND etag = ?", (path, etag))}

    def sent_paths(self) -> set[str]:
        """Every path with a PUT started and its outcome not recorded."""
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT DISTINCT path FROM sent WHERE landed = 0")}

    def sent_landed(self, db: sqlite3.Connection, path: str, etag: str, stamp: str) -> None:
        """Our PUT of ``path`` landed as ``etag`` with ``stamp`` (inside a transaction): it
        is the one version of ours remembered from now on."""
        db.execute("DELETE FROM sent WHERE path = ?", (path,))
        db.execute("INSERT INTO sent VALUES (?,?,?,1,?)", (path, etag, time.time(), stamp))

    def sent_clear(self, db: sqlite3.Connection, path: str) -> None:
        """Forget the history of ``path`` (its object is gone; inside a transaction)."""
        db.execute("DELETE FROM sent WHERE path = ?", (path,))

    # -- shadows ---------------------------------------------------------------------
    def shadow_add(self, tmp: str, path: str, base: str) -> None:
        """Record the temp file ``tmp`` (a name in tmp/) as the uncommitted new content of
        ``path``, based on the remote version ``base``."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO shadows VALUES (?, ?, ?)", (tmp, path, base))

    def shadow_drop(self, tmp: str, db: sqlite3.Connection | None = None) -> None:
        """Forget the shadow ``tmp`` (committed, or discarded)."""
        with self._lock:
            (db or self._db).execute("DELETE FROM shadows WHERE tmp = ?", (tmp,))

    def shadow_drop_paths(self, paths: list[str], db: sqlite3.Connection | None = None) -> None:
        """Forget the shadows recorded for ``paths`` (their names were replaced)."""
        with self._lock:
            (db or self._db).executemany("DELETE FROM shadows WHERE path = ?", [(p,) for p in paths])

    def shadows(self) -> list[tuple[str, str, str]]:
        """(tmp, path, base) of every recorded shadow."""
        with self._lock:
            return list(self._db.execute("SELECT tmp, path, base FROM shadows"))

    def close(self) -> None:
        """Close the database (checkpointing the WAL)."""
        with self._lock:
            self._db.close()
