"""The index's parts between the bucket and a local directory: fetch, refresh, upload, and
the one-off split of an index of earlier versions (one file) into parts.

Local layout (a mount's cache, a command's cache, dream's work directory)::

    <dir>/manifest.json        the manifest last fetched or written
    <dir>/<part>.sqlite        a part (``SearchIndex``)
    <dir>/<part>.md5           the MD5 of the part as last fetched or uploaded: it is current
                               when this equals the manifest's

A part is fetched in ranged GETs of ``PIECE_BYTES``, a few at once, into a temporary file
that is checked against the manifest's MD5 and renamed in — memory stays at a few pieces
however big the part, and a crash leaves the previous copy.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainfs.backend.errors import BackendError, Corrupt, NoSuchKey
from brainfs.backend.keys import INDEX_KEY, INDEX_MANIFEST_KEY
from brainfs.backend.store import ObjectStore

from .index import SearchIndex
from .indexrefresh import TIMING_KEYS
from .indexschema import SCHEMA_VERSION
from .shardmap import DEFAULT_PERIOD, Manifest, ShardInfo, files_digest, phrases_digest, shard_key, shard_of
from .sharded import ShardedIndex

from .embedder import resolve_embedder

if TYPE_CHECKING:
    from .embedder import Embedder, PendingEmbedder

log = logging.getLogger(__name__)

#: Bytes per ranged GET when fetching a part, and how many run at once.
PIECE_BYTES = 8 * 1024 * 1024
PIECE_WORKERS = 4
#: Parts fetched at once: most parts are a piece or two, so a round trip per part would
#: otherwise add up (14 parts at 2,000 files). At most PART_WORKERS × PIECE_WORKERS pieces
#: (64 MiB) are in memory at once.
PART_WORKERS = 2
#: Parts above this size are uploaded by multipart upload (memory stays at one part).
MULTIPART_BYTES = 64 * 1024 * 1024
#: A part is compacted (VACUUM) before its upload when more than this share of its pages
#: is free.
VACUUM_SHARE = 0.02
MANIFEST_NAME = "manifest.json"
#: Name of the local copy of an index of earlier versions (``INDEX_KEY``), read as it is.
LEGACY_NAME = "legacy.sqlite"


def part_path(local: Path, name: str) -> Path:
    """Where the local copy of part ``name`` lives."""
    return local / f"{name}.sqlite"


def _stamp(local: Path, name: str) -> Path:
    return local / f"{name}.md5"


def local_md5(local: Path, name: str) -> str | None:
    """The MD5 of the local copy of a part, as recorded when it was fetched or written."""
    p = _stamp(local, name)
    try:
        return p.read_text().strip() if part_path(local, name).exists() else None
    except OSError:
        return None


def remove_old_copy(local: Path) -> None:
    """Delete the local copy of the one-file index earlier versions kept beside ``local``
    (``<cache>/index.sqlite``, up to the whole index's size): the parts replace it."""
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "index.etag", "index.download"):
        old = local.parent / name
        if old != local and old.is_file():
            old.unlink(missing_ok=True)


def read_manifest(store: ObjectStore) -> Manifest | None:
    """The bucket's manifest, or None when the index has no parts (none, or one file)."""
    try:
        data, _etag = store.get(INDEX_MANIFEST_KEY)
    except NoSuchKey:
        return None
    return Manifest.from_bytes(data)


def local_manifest(local: Path) -> Manifest | None:
    """The manifest last fetched into ``local``, if any."""
    try:
        return Manifest.from_bytes((local / MANIFEST_NAME).read_bytes())
    except (OSError, ValueError):
        return None


def _file_md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _fetch_pieces(store: ObjectStore, key: str, size: int, tmp: Path, etag: str | None = None) -> int:
    """Write object ``key`` of ``size`` bytes into ``tmp`` in ranged GETs of
    ``PIECE_BYTES``, ``PIECE_WORKERS`` at once (never the whole object in memory); with
    ``etag``, a piece of another version raises Corrupt. Returns the bytes written."""
    pieces = [(s, min(s + PIECE_BYTES, size)) for s in range(0, max(size, 1), PIECE_BYTES)]
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        def one(rng: tuple[int, int]) -> int:
            data, got_etag = store.get(key, rng)
            if len(data) != rng[1] - rng[0]:
                raise Corrupt(f"get {key}: short piece ({len(data)} of {rng[1] - rng[0]} bytes)")
            if etag is not None and got_etag != etag:
                raise Corrupt(f"get {key}: rewritten during the download")
            os.pwrite(fd, data, rng[0])
            return len(data)

        with ThreadPoolExecutor(PIECE_WORKERS) as pool:
            got = sum(pool.map(one, pieces))
        os.fsync(fd)
    finally:
        os.close(fd)
    return got


def fetch_part(store: ObjectStore, local: Path, name: str, info: ShardInfo) -> int:
    """Fetch one part unless the local copy is current; returns the bytes downloaded."""
    if local_md5(local, name) == info.md5:
        return 0
    local.mkdir(parents=True, exist_ok=True)
    tmp = local / f"{name}.download"
    got = _fetch_pieces(store, info.key, info.bytes, tmp)
    md5 = _file_md5(tmp)
    if md5 != info.md5:
        tmp.unlink(missing_ok=True)
        # Rewritten since the manifest was read: the next manifest names the new one.
        raise Corrupt(f"index part {name}: content does not match the manifest (rewritten meanwhile?)")
    dest = part_path(local, name)
    for side in ("-wal", "-shm"):
        Path(str(dest) + side).unlink(missing_ok=True)
    os.replace(tmp, dest)
    _stamp(local, name).write_text(md5)
    return got


def fetch_parts(store: ObjectStore, local: Path, manifest: Manifest, names: list[str]) -> int:
    """Fetch the parts ``names`` that are not current locally, ``PART_WORKERS`` at a time
    (each in parallel pieces), and record the manifest; returns the bytes downloaded."""
    local.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(PART_WORKERS) as pool:
        got = sum(pool.map(lambda n: fetch_part(store, local, n, manifest.shards[n]), names))
    (local / MANIFEST_NAME).write_bytes(manifest.to_bytes())
    return got


#: SQLite's page cache per part a mount searches, KiB. SQLite's default (2 MB) times 14
#: parts held 28 MB after ten recalls at 20,000 files; the pages are in the kernel's page
#: cache anyway, so a miss costs a read, not a download (index-shards.md).
PART_CACHE_KIB = 512


def open_part(local: Path, name: str) -> SearchIndex:
    """The local copy of part ``name``, opened for searching (``PART_CACHE_KIB``)."""
    return SearchIndex(part_path(local, name), cache_kib=PART_CACHE_KIB)


def open_parts(local: Path, manifest: Manifest, names: list[str] | None = None) -> ShardedIndex:
    """The parts of ``manifest`` whose local copy is current (or only those of ``names``),
    as one index that knows which parts it lacks."""
    want = list(manifest.shards) if names is None else names
    # A part without a stamp is a copy of the bucket's folder (``brainfs context --dir``) or
    # one a write made locally; one with another stamp is an older version.
    parts = {n: open_part(local, n) for n in want
             if n in manifest.shards and part_path(local, n).is_file()
             and (not _stamp(local, n).exists() or local_md5(local, n) == manifest.shards[n].md5)}
    return ShardedIndex(parts, expected=manifest.shards, period=manifest.period, local=local)


def download_legacy(store: ObjectStore, dest: Path) -> bool:
    """Fetch an index of earlier versions (one file, ``INDEX_KEY``) when it changed; False
    when there is none."""
    stamp = dest.with_suffix(".etag")
    try:
        info = store.head(INDEX_KEY)
    except NoSuchKey:
        return False
    if dest.exists() and stamp.exists() and stamp.read_text() == info.etag:
        return True
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".download")
    # In pieces, as a part: the one file is hundreds of MB at 20,000 files, and one GET
    # held it all in the mount's memory (peak 730 MiB).
    try:
        _fetch_pieces(store, INDEX_KEY, info.size, tmp, info.etag)
        # What a whole-object GET checks: an MD5 ETag (not a multipart upload's) is the
        # content's digest.
        if re.fullmatch(r"[0-9a-f]{32}", info.etag) and _file_md5(tmp) != info.etag:
            raise Corrupt(f"get {INDEX_KEY}: content does not match its ETag")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    for side in ("-wal", "-shm"):
        Path(str(dest) + side).unlink(missing_ok=True)
    os.replace(tmp, dest)
    stamp.write_text(info.etag)
    return True


def download_all(store: ObjectStore, local: Path) -> SearchIndex | ShardedIndex | None:
    """Bring every part (or an older single-file index) up to date in ``local`` and open
    it; None when the bucket has no index. For callers that want complete answers at once
    (the Python API, ``brainfs context``); a mount fetches part by part instead."""
    manifest = read_manifest(store)
    if manifest is not None:
        fetch_parts(store, local, manifest, list(manifest.shards))
        return open_parts(local, manifest)
    legacy = local / LEGACY_NAME
    if download_legacy(store, legacy):
        return SearchIndex(legacy)
    return None


def open_local(local: Path) -> SearchIndex | ShardedIndex | None:
    """The index already in ``local`` (parts named by its manifest, or a single file), or
    None. ``local`` may also be one index file."""
    if local.is_file():
        return SearchIndex(local)
    manifest = local_manifest(local)
    if manifest is not None:
        return open_parts(local, manifest)
    if (local / LEGACY_NAME).is_file():
        return SearchIndex(local / LEGACY_NAME)
    return None


# ---------------------------------------------------------------------- migration

def split_index(src: Path, local: Path, period: str = DEFAULT_PERIOD) -> list[str]:
    """Copy an index of one file into parts in ``local`` (rows and vectors copied as they
    are: nothing is read or embedded again); returns the parts written."""
    with SearchIndex(src) as whole:
        paths = sorted(whole.file_hashes())
        meta = dict(whole.conn.execute("SELECT key, value FROM meta").fetchall())
        has_vec = whole.has_vectors() or whole._table_exists("chunks_vec")
    groups: dict[str, list[str]] = {}
    for p in paths:
        groups.setdefault(shard_of(p, period), []).append(p)
    local.mkdir(parents=True, exist_ok=True)
    for name, members in groups.items():
        dest = part_path(local, name)
        for side in ("", "-wal", "-shm"):
            Path(str(dest) + side).unlink(missing_ok=True)
        _stamp(local, name).unlink(missing_ok=True)
        ix = SearchIndex(dest)
        try:
            _copy_rows(ix, src, members, meta, has_vec)
        finally:
            ix.close()
    return sorted(groups)


def _copy_rows(ix: SearchIndex, src: Path, members: list[str], meta: dict[str, str],
               has_vec: bool) -> None:
    c = ix.conn
    c.execute("ATTACH DATABASE ? AS src", (str(src),))
    try:
        with ix._lock, c:
            c.execute("CREATE TEMP TABLE want(path TEXT PRIMARY KEY)")
            c.executemany("INSERT INTO want(path) VALUES (?)", [(p,) for p in members])
            for k, v in meta.items():
                c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (k, v))
            c.execute("INSERT INTO files SELECT * FROM src.files WHERE path IN (SELECT path FROM want)")
            # a page chunk's cited turns (format 5) go with it; an older source has none
            cols = "id, path, anchor, kind, scope, confidence, created, updated, title, heading, " \
                   "speaker, text, ordinal, vec"
            if "cites" in {r[1] for r in c.execute("PRAGMA src.table_info(chunks)")}:
                cols += ", cites"
            c.execute(f"INSERT INTO chunks({cols}) SELECT {cols} FROM src.chunks "
                      "WHERE path IN (SELECT path FROM want)")
            c.execute("INSERT INTO aliases(path, name) SELECT path, name FROM src.aliases "
                      "WHERE path IN (SELECT path FROM want) ORDER BY rowid")
            c.execute("INSERT INTO files_fts(path, body) SELECT path, body FROM src.files_fts "
                      "WHERE path IN (SELECT path FROM want)")
            if has_vec and meta.get("dim"):
                c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                          f"embedding float[{int(meta['dim'])}] distance_metric=cosine)")
                c.execute("INSERT INTO chunks_vec(rowid, embedding) SELECT v.rowid, v.embedding "
                          "FROM src.chunks_vec v JOIN chunks c ON c.id = v.rowid WHERE c.vec = 1")
            c.execute("DROP TABLE temp.want")
    finally:
        c.execute("DETACH DATABASE src")
    ix._writes += 1


# ---------------------------------------------------------------------- refresh

def refresh_parts(store: ObjectStore, local: Path, listing: list[tuple[str, str]],
                  phrases: list[str], embedder: Embedder | PendingEmbedder | None,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Bring the bucket's index in line with ``listing`` ((path, ETag) of every indexable
    file) and upload what changed (``brainfs index``, dream): only the parts whose files,
    deletion log, format or embedder changed are fetched, refreshed and uploaded; the
    manifest last. Returns the summed refresh stats and totals."""
    t0 = time.perf_counter()
    remove_old_copy(local)
    manifest = read_manifest(store)
    migrated = False
    if manifest is None:
        manifest = Manifest()
        legacy = local / LEGACY_NAME
        if download_legacy(store, legacy):
            # An index of earlier versions: split it once, keeping its vectors.
            split_index(legacy, local, manifest.period)
            migrated = True
    groups: dict[str, list[tuple[str, str]]] = {}
    for path, etag in listing:
        groups.setdefault(shard_of(path, manifest.period), []).append((path, etag))
    forget = phrases_digest(phrases)
    todo = [n for n in sorted(set(groups) | set(manifest.shards))
            if migrated or _stale(manifest.shards.get(n), groups.get(n, []), forget, embedder)]
    total = sum(len(groups.get(n, [])) for n in todo)
    stats: dict[str, Any] = {}
    written: dict[str, bool] = {}  # part → refreshed (False: it has no file left)

    def prepare(name: str, before: _PartFiles | None) -> _PartFiles | None:
        # The next part's files are fetched once the current part's are all here: while
        # the current part is embedded, and at most two parts' files in memory.
        if before is not None:
            before.fetched.wait()
        info = manifest.shards.get(name)
        if info is not None and not migrated:
            fetch_part(store, local, name, info)
        files = groups.get(name, [])
        return _PartFiles(store, SearchIndex(part_path(local, name)), files) if files else None

    # Parts are refreshed one after another, except that the next one starts reading and
    # chunking as soon as the current one has read its last file: the model then goes from
    # the current part's last batch to the next part's first without waiting for the
    # writes, the index's close and the first reads in between (at most two parts at once;
    # one model call at a time, each embedder has its lock).
    counts: dict[str, int] = {}
    counts_lock = threading.Lock()
    inflight: list[tuple[threading.Thread, dict[str, Any]]] = []

    def finish() -> None:
        th, box = inflight.pop(0)
        th.join()
        if "error" in box:
            raise box["error"]
        _add(stats, box["stats"])

    nxt = _Background(prepare, todo[0], None) if todo else None
    try:
        for k, name in enumerate(todo):
            t = time.perf_counter()
            job = nxt.result()  # type: ignore[union-attr]
            stats["fetch_wait_seconds"] = stats.get("fetch_wait_seconds", 0.0) + time.perf_counter() - t
            nxt = _Background(prepare, todo[k + 1], job) if k + 1 < len(todo) else None
            files = groups.get(name, [])
            if job is None:
                written[name] = False
                continue

            def step(i: int, n: int, _name: str = name) -> None:
                if progress:
                    with counts_lock:
                        counts[_name] = i
                        progress(sum(counts.values()), total)

            read_all = threading.Event()
            box: dict[str, Any] = {}
            th = threading.Thread(target=_refresh_part, name=f"brainfs-index-part-{name}",
                                  args=(job, files, phrases, embedder, step, read_all, box),
                                  daemon=True)
            th.start()
            inflight.append((th, box))
            read_all.wait()
            while len(inflight) > 1:
                finish()
            if "error" in box:
                finish()
            written[name] = True
        while inflight:
            finish()
    except BaseException:
        if nxt is not None:  # the next part, once prepared, is closed unused
            nxt.then_close()
        raise
    t_upload = time.perf_counter()
    # Everything local is done before the first upload: an interrupted run uploads nothing.
    uploaded = 0
    for name, refreshed in written.items():
        if not refreshed:
            if name in manifest.shards:
                store.delete(manifest.shards.pop(name).key)
                for p in (part_path(local, name), _stamp(local, name)):
                    p.unlink(missing_ok=True)
            continue
        info = _upload_part(store, local, name, groups[name], forget)
        manifest.shards[name] = info
        uploaded += info.bytes
    if written or migrated:
        store.put(INDEX_MANIFEST_KEY, manifest.to_bytes())
    (local / MANIFEST_NAME).write_bytes(manifest.to_bytes())
    stats["upload_seconds"] = round(time.perf_counter() - t_upload, 3)
    if migrated:
        # The parts replace it; a mount of this version follows the manifest.
        store.delete(INDEX_KEY)
        for p in (local / LEGACY_NAME, (local / LEGACY_NAME).with_suffix(".etag")):
            p.unlink(missing_ok=True)
    # Files of parts found current were not looked at one by one: unchanged too.
    stats["skipped"] = stats.get("skipped", 0) + sum(
        len(fs) for n, fs in groups.items() if n not in written)
    shards = manifest.shards.values()
    stats.update(files=sum(x.files for x in shards), chunks=sum(x.chunks for x in shards),
                 vectors=sum(x.vectors for x in shards), bytes=manifest.total_bytes(),
                 embedder=next((x.embedder for x in shards if x.embedder), None))
    stats.update(seconds=round(time.perf_counter() - t0, 3), parts=len(manifest.shards),
                 parts_refreshed=sorted(n for n, r in written.items() if r),
                 index_bytes=manifest.total_bytes(), uploaded_bytes=uploaded,
                 migrated=migrated, files_listed=len(listing))
    secs = stats["seconds"]
    stats["chunks_per_s"] = round(stats.get("chunks_written", 0) / secs, 1) if secs else 0.0
    return stats


def _refresh_part(job: _PartFiles, files: list[tuple[str, str]], phrases: list[str],
                  embedder: Embedder | PendingEmbedder | None, step: Callable[[int, int], None],
                  read_all: threading.Event, box: dict[str, Any]) -> None:
    """Refresh one part (in a thread of its own): its stats, or the exception it raised,
    go into ``box``; ``read_all`` is set once its files are all read (or it failed)."""
    try:
        forgotten = job.index.forget(phrases)
        st = job.index.refresh(files, job.read, embedder, step, on_read=read_all.set)
        st["forgotten_chunks"] = forgotten
        box["stats"] = st
    except BaseException as e:  # noqa: BLE001 - raised by the caller
        box["error"] = e
    finally:
        try:
            job.close()
        finally:
            read_all.set()


def _stale(info: ShardInfo | None, files: list[tuple[str, str]], forget: str,
           embedder: Embedder | PendingEmbedder | None) -> bool:
    """Whether a part must be refreshed: new, its files changed, the deletion log or the
    index format changed, or vectors are wanted and missing or from another embedder (a
    model still loading is waited for only here, for a part otherwise current)."""
    if info is None:
        return True
    if info.files_digest != files_digest(files) or info.forget_digest != forget:
        return True
    if info.schema_version < SCHEMA_VERSION:
        return True
    emb = resolve_embedder(embedder)
    if emb is not None and (info.embedder != emb.name or info.vectors < info.chunks):
        return True
    return False


class _Background:
    """``fn(*args)`` in a daemon thread (one that never holds up the exit of a command
    interrupted meanwhile); :meth:`result` waits for it and raises what it raised."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._out: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True,
                                        name="brainfs-index-fetch")
        self._thread.start()

    def _run(self, fn: Callable[..., Any], args: tuple) -> None:
        try:
            self._out = fn(*args)
        except BaseException as e:  # noqa: BLE001 - raised by result()
            self._error = e

    def then_close(self) -> None:
        """Close what the function returns, whenever it returns (its result is dropped)."""
        def close() -> None:
            self._thread.join()
            if self._out is not None:
                self._out.close()

        threading.Thread(target=close, daemon=True).start()

    def result(self) -> Any:
        """What the function returned (waiting for it)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


class _PartFiles:
    """One part's index, opened, and the files of it whose ETag changed, fetched in the
    background as ``SearchIndex.refresh`` reads them: the first file is chunked (and the
    model fed) as soon as it arrives instead of after the part's last."""

    def __init__(self, store: ObjectStore, index: SearchIndex, files: list[tuple[str, str]]) -> None:
        self.index = index
        known = index.file_hashes()
        # A part of an earlier format is read whole again (``SearchIndex.refresh`` re-reads
        # every file of it): fetching only the changed files failed the others' reads, and
        # the part stayed in its old format for ever.
        old = int(index.meta("schema_version") or SCHEMA_VERSION) < SCHEMA_VERSION
        # In the order refresh reads them, so that it seldom waits for a file.
        self._wanted = set(p for p, h in files if old or known.get(p) != h)
        self._contents: dict[str, bytes] = {}
        self._errors: dict[str, str] = {}
        self._cond = threading.Condition()
        #: set when every file has arrived or failed
        self.fetched = threading.Event()
        self._thread = threading.Thread(target=self._fetch, args=(store, sorted(self._wanted)),
                                        daemon=True, name="brainfs-index-get")
        self._thread.start()

    def _fetch(self, store: ObjectStore, paths: list[str]) -> None:
        def got(path: str, data: bytes | None, etag: str, err: BackendError | None) -> None:
            with self._cond:
                if data is not None:
                    self._contents[path] = data
                else:
                    log.warning("index: cannot read %s: %s", path, err)
                    self._errors[path] = str(err)
                self._cond.notify_all()

        try:
            store.get_many(paths, got)
        except BaseException as e:  # noqa: BLE001 - the files not fetched fail their read
            with self._cond:
                for p in paths:
                    if p not in self._contents:
                        self._errors.setdefault(p, f"{type(e).__name__}: {e}")
        finally:
            with self._cond:
                self.fetched.set()
                self._cond.notify_all()

    def read(self, path: str) -> bytes:
        """The bytes of ``path`` (waiting for them); OSError when they could not be fetched."""
        with self._cond:
            while (path in self._wanted and path not in self._contents
                   and path not in self._errors and not self.fetched.is_set()):
                self._cond.wait()
            if path in self._contents:
                return self._contents.pop(path)
        raise OSError(f"{path} could not be fetched")

    def close(self) -> None:
        """Close the part's index (what was not read is dropped)."""
        self.index.close()
        with self._cond:
            self._contents.clear()


def _upload_part(store: ObjectStore, local: Path, name: str, files: list[tuple[str, str]],
                 forget: str) -> ShardInfo:
    """Upload a refreshed part and describe it for the manifest."""
    path = part_path(local, name)
    with SearchIndex(path) as ix:
        free, pages = (ix.conn.execute(f"PRAGMA {p}").fetchall()[0][0] for p in ("freelist_count", "page_count"))
        if free > pages * VACUUM_SHARE:
            # A refreshed file leaves its old chunks' pages free (one transcript: 2.7 MB of
            # a 34 MB part at 20,000 files); every mount would download them.
            ix.conn.execute("VACUUM")
        st = ix.stats()
        embedder = ix.embedder_name()
        version = int(ix.meta("schema_version") or SCHEMA_VERSION)
    size = path.stat().st_size
    key = shard_key(name)
    if size > MULTIPART_BYTES:
        with open(path, "rb") as f:
            store.put_file(key, f, PIECE_BYTES)
    else:
        store.put(key, path.read_bytes())
    md5 = _file_md5(path)
    _stamp(local, name).write_text(md5)
    return ShardInfo(key=key, md5=md5, bytes=size, files=st["files"], chunks=st["chunks"],
                     vectors=st["vectors"], files_digest=files_digest(files), forget_digest=forget,
                     embedder=embedder, schema_version=version)


def _add(total: dict[str, Any], part: dict[str, Any]) -> None:
    """Sum one part's refresh stats into the run's."""
    for k in ("files_indexed", "skipped", "removed", "failed", "embedded", "embed_seconds",
              "forgotten_chunks", *TIMING_KEYS):
        total[k] = total.get(k, 0) + (part.get(k) or 0)
    total["chunks_written"] = total.get("chunks_written", 0) + (part.get("chunks") or 0)
    if part.get("embed_error"):
        total["embed_error"] = part["embed_error"]
    if part.get("embed_cache_hits") is not None:
        total["embed_cache_hits"] = total.get("embed_cache_hits", 0) + part["embed_cache_hits"]


__all__ = ["download_all", "fetch_part", "fetch_parts", "open_local", "open_parts",
           "read_manifest", "refresh_parts", "split_index"]
