"""Carrying out the upload journal against the bucket: the blocking half of a write.

An :class:`Uploader` reads a journal row's content from the cache, PUTs or DELETEs it
conditionally on the version the change was based on, and says what happened in an
:class:`UploadResult`. It touches no in-memory state of the working set (only the catalog,
which has its own lock), so the mount runs it in a worker thread; the working set records
the outcome on its owning thread (``WorkingSet.apply_upload``). A write that loses a race
with another writer is kept as a visible conflict copy (:func:`conflict_name`).
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass

import xxhash

from brainfs.backend.config import Config
from brainfs.backend.errors import BackendError, NoSuchKey, PreconditionFailed, Unavailable
from brainfs.backend.keys import CONFLICT_MARK, NAME_MAX, PATH_MAX
from brainfs.backend.store import HASH_META, STAMP_META, ObjectInfo, ObjectStore, multipart_etag

from .blobs import Blobs, content_hash
from .catalog import Catalog, JournalRow
from .faults import crash_point
from .paths import is_marker, md5_hex

log = logging.getLogger(__name__)


@dataclass
class UploadResult:
    """The outcome of carrying out one journal row."""

    row: JournalRow
    etag: str = ""
    conflict_path: str | None = None
    remote_etag: str = ""
    #: size of that remote version (what the original path holds after a conflict)
    remote_size: int = 0
    error: BackendError | OSError | None = None
    #: a delete not carried out: the object is another writer's newer version
    refused: bool = False
    #: the stamp the PUT went out with (see Catalog.sent_add)
    stamp: str = ""


def conflict_name(path: str, when: float | None = None) -> str:
    """Name of the visible copy kept when an upload loses a race with another writer."""
    t = time.time() if when is None else when
    # Milliseconds: two conflicts on one path within a second must not overwrite each other.
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f"{int(t * 1000) % 1000:03d}"
    host = socket.gethostname().split(".")[0][:20] or "host"
    head, name = posixpath.split(path)
    root, ext = posixpath.splitext(name)
    if len(ext.encode("utf-8")) > 16:
        root, ext = name, ""  # not a file type: part of the name
    suffix = f"{CONFLICT_MARK}{stamp}-{host}{ext}".encode("utf-8")
    # The copy must be a name the bucket and every mount accept, or its upload fails for
    # ever and the loser's edit stays in one cache: cut the stem, never the suffix.
    room = min(NAME_MAX, PATH_MAX - len(head.encode("utf-8")) - 1) - len(suffix)
    if room < 1:
        # Folders too deep to hold the suffix: the copy goes to the top, named by a hash
        # of the whole path (the log names both).
        digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:16]
        return f"{digest}{suffix.decode('utf-8')}"
    stem = root.encode("utf-8")[:room].decode("utf-8", "ignore") or "_"
    return posixpath.join(head, stem + suffix.decode("utf-8"))


class Uploader:
    """Sends journal rows to the bucket (blocking; run in a worker thread)."""

    def __init__(self, store: ObjectStore | None, catalog: Catalog, blobs: Blobs,
                 cfg: Config) -> None:
        #: the backend (None offline) and the settings: the working set keeps them current
        self.store = store
        self.catalog = catalog
        self.blobs = blobs
        self.cfg = cfg

    def ready(self, busy: Iterable[str] = ()) -> list[JournalRow]:
        """The journal rows to carry out now: not those of ``busy`` paths (being written:
        their next commit replaces the row, so one version per path is in flight), nor a
        rename's delete whose new name has not landed yet."""
        rows = self.catalog.journal()
        skip = set(busy)
        puts = {j.path for j in rows if j.op == "put"}
        return [j for j in rows if j.path not in skip
                and not (j.op == "delete" and j.wait_for and j.wait_for in puts)]

    def _sender(self, row: JournalRow):
        """How to send the content of ``row``: (send(target, stamp, **conditions) -> ETag,
        the ETags the server may give it), or (None, []) when the content no longer hashes
        to the row's (rewritten since). Small files go as one PUT from memory; big ones in
        parts streamed from the cache file (the ETag is then the multipart one, or the
        whole MD5, as rclone reports it)."""
        assert self.store is not None
        store = self.store
        def meta(stamp: str) -> dict[str, str]:
            return {HASH_META: row.hash, STAMP_META: stamp}

        if is_marker(row.path):
            return (lambda target, stamp, **c: store.put(target, b"", metadata=meta(stamp), **c)), [md5_hex(b"")]
        loc = self.blobs.location(row.path)
        part = self.cfg.cache.multipart_part_bytes
        if loc.stat().st_size < self.cfg.cache.multipart_threshold_bytes:
            data = loc.read_bytes()
            if content_hash(data) != row.hash:
                return None, []
            return (lambda target, stamp, **c: store.put(target, data, metadata=meta(stamp), **c)), [md5_hex(data)]
        whole, xh, parts = hashlib.md5(), xxhash.xxh3_128(), []
        # One open file for hashing and sending: a commit that replaces the blob meanwhile
        # cannot make us send other bytes than the ones whose ETags were recorded.
        f = open(loc, "rb")  # noqa: SIM115 - closed by the caller through send.close
        while chunk := f.read(part):
            whole.update(chunk)
            xh.update(chunk)
            parts.append(hashlib.md5(chunk).digest())
        if xh.hexdigest() != row.hash:
            f.close()
            return None, []

        def send(target: str, stamp: str, **c) -> str:
            f.seek(0)
            store.put_file(target, f, part, metadata=meta(stamp), **c)
            # The canonical ETag, as listings will show it (rclone lists the whole MD5).
            return self.head(target).etag

        send.close = f.close  # type: ignore[attr-defined]
        return send, [whole.hexdigest(), multipart_etag(parts)]

    def head(self, path: str) -> ObjectInfo:
        """HEAD of ``path`` for deciding whose version the bucket holds. An object with no
        ETag is no version yet (the embedded server answers so for a PUT cut off midway,
        whose GET fails): taken for another writer's, it made a conflict copy of identical
        bytes; it is a temporary failure instead, and the row is tried again."""
        assert self.store is not None
        info = self.store.head(path)
        if not info.etag:
            raise Unavailable(f"head {path}: the server gives no ETag (an upload in progress "
                              f"or cut off); trying again later")
        return info

    def is_ours(self, path: str, remote: ObjectInfo, base: str, sending: str = "") -> bool:
        """Whether the remote object is the version a change was based on, or one this
        cache put there (a PUT whose outcome a crash kept us from recording, or our own
        last upload, landed while the change was being written): replacing it loses
        nothing of another writer's. An older version of ours back in the bucket is not
        ours: another writer restored it.

        Bytes one of our PUTs sent are judged by the PUT's stamp, not the ETag alone:
        another writer who wrote the same bytes since (an empty file, say) made a new
        version that a delete or overwrite from here must not take for ours. A directory
        marker is everyone's: all are empty and mean the same directory. ``sending``: the
        stamp of the PUT being decided, recorded before it goes out, so not yet any
        object's (counted, it made every rewrite of the bytes another mount had put — an
        empty file truncated, a file saved unchanged — a conflict copy)."""
        if is_marker(path):
            return True
        stamps = self.catalog.sent_stamps(path, remote.etag)
        if stamps and not (not remote.stamp or "" in stamps or remote.stamp in stamps):
            # Another stamp: another writer's, unless the only PUT of these bytes we have
            # is the one being decided (then it is the version the change was based on,
            # or not, as for any object).
            return stamps == {sending} and remote.etag == base
        return bool(stamps) or remote.etag == base

    def upload(self, row: JournalRow) -> UploadResult:
        """Carry out one journal row against the backend (blocking, no shared state but
        the catalog, which has its own lock).

        Puts and deletes are conditional on the version the change was based on: the
        server's conditional write is used where it is honoured, else the remote ETag is
        compared first (a HEAD). On a mismatch a put goes to a visible conflict copy beside
        the original, and a delete is not done. A remote ETag that this cache sent is ours,
        never a conflict: the PUT's ETag is recorded before the request goes out.
        """
        assert self.store is not None
        closer = None
        try:
            if row.op == "delete":
                return self._delete(row)
            send, md5s = self._sender(row)
            closer = getattr(send, "close", None)
            if send is None:
                # Rewritten since this row was read: a newer row will carry it.
                return UploadResult(row, error=OSError("content changed during upload"))
            stamp = self.catalog.sent_add(row.path, md5s)
            target = row.path
            remote, remote_size = "", 0
            if not self.store.conditional_writes():
                with self.store.cas_section(row.path):
                    try:
                        info = self.head(row.path)
                        remote, remote_size = info.etag, info.size
                    except NoSuchKey:
                        info = None
                    if info is not None and not self.is_ours(row.path, info, row.base, stamp):
                        target = conflict_name(row.path, row.created)
                    crash_point("upload-before-put")
                    etag = send(target, stamp)
            else:
                try:
                    etag = send(target, stamp, if_match=row.base or None,
                                if_none_match=not row.base)
                except PreconditionFailed:
                    try:
                        info = self.head(row.path)
                        remote, remote_size = info.etag, info.size
                    except NoSuchKey:
                        info = None
                    if info is None:
                        # Deleted by another writer since: ours is the only version left.
                        etag = send(target, stamp, if_none_match=True)
                    elif self.is_ours(row.path, info, row.base, stamp):
                        etag = send(target, stamp, if_match=remote)
                    else:
                        target = conflict_name(row.path, row.created)
                        etag = send(target, stamp)
            crash_point("upload-after-put")
            if target != row.path:
                log.warning("upload conflict on %s: the bucket holds version %s, this write "
                            "was based on %s; kept ours as %s", row.path, remote or "(none)",
                            row.base or "(none)", target)
                return UploadResult(row, etag, conflict_path=target, remote_etag=remote,
                                    remote_size=remote_size, stamp=stamp)
            return UploadResult(row, etag, stamp=stamp)
        except (BackendError, OSError) as e:
            return UploadResult(row, error=e)
        finally:
            if closer is not None:
                closer()

    def _delete(self, row: JournalRow) -> UploadResult:
        store = self.store
        assert store is not None
        with store.cas_section(row.path):
            try:
                info = self.head(row.path)
            except NoSuchKey:
                return UploadResult(row)  # already gone
            remote = info.etag
            if not is_marker(row.path) and not self.is_ours(row.path, info, row.base):
                # Another writer's newer version: deleting it would lose it silently. It
                # stays, and comes back into the listing at the next relist.
                log.warning("not deleting %s: it changed in the bucket since this mount saw "
                            "it (another writer's version is kept)", row.path)
                return UploadResult(row, refused=True, remote_etag=remote)
            store.delete(row.path)
        crash_point("delete-after-request")
        return UploadResult(row)
