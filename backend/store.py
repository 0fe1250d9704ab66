"""Object access for one corpus: list, head, get, put, delete, batch get.

Blocking (boto3); callers on the trio loop go through a worker thread. One boto3 client
per store, created up front: clients are thread-safe, sessions are not.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

import boto3
import botocore.config
import botocore.exceptions
import urllib3.exceptions

from . import listparse
from .caslock import CasLock
from .config import Config
from .errors import (
    AccessDenied,
    BackendError,
    Corrupt,
    InvalidKey,
    NoSuchBucket,
    NoSuchKey,
    PreconditionFailed,
    Unavailable,
)
from .keys import PROBE_PREFIX, CorpusURL, path_problem

log = logging.getLogger(__name__)

#: What botocore/urllib3 raise when a response body ends before its Content-Length.
_SHORT_BODY: tuple[type[BaseException], ...] = (
    botocore.exceptions.ResponseStreamingError,
    botocore.exceptions.IncompleteReadError,
    urllib3.exceptions.ProtocolError,
)

#: A parallel listing cuts the key space every this many known keys: one page (1,000 keys)
#: then holds a range with room for keys added since, so each range is one round trip.
LIST_RANGE_KEYS = 900
#: Keys per page of a listing (S3's maximum): fewer known keys are listed in one pass.
LIST_PAGE_KEYS = 1000
#: Ranges listed at once (a 20,000-key corpus is 23 ranges: three rounds of requests).
LIST_RANGE_WORKERS = 8

#: Object metadata key carrying the xxh3-128 of the content, written by brainfs on put.
HASH_META = "brainfs-xxh3"
#: Object metadata key carrying the MD5 of the source file ``brainfs import`` wrote: an
#: object still holding it is import's copy, which a newer source may replace; any other
#: writer's PUT drops it.
IMPORT_META = "brainfs-import-md5"
#: Object metadata key carrying the random stamp of the PUT that wrote the object: two
#: writers' identical bytes share an ETag, not a stamp.
STAMP_META = "brainfs-stamp"


@dataclass(frozen=True)
class ObjectInfo:
    """What a listing or HEAD tells about one object."""

    path: str
    size: int
    etag: str
    mtime: float
    #: The brainfs PUT stamp (HEAD only; '' from a listing or another tool's object).
    stamp: str = ""
    #: MD5 of the source ``brainfs import`` wrote this object from (HEAD only; '' when
    #: another writer wrote it).
    imported: str = ""


def _meta(response: dict[str, Any], key: str) -> str:
    """A user metadata value of a HEAD/GET response. Header names are case-insensitive,
    and some servers (rclone) return them capitalised."""
    for k, v in (response.get("Metadata") or {}).items():
        if k.lower() == key:
            return str(v)
    return ""


def _etag(raw: str | None) -> str:
    return (raw or "").strip('"')


class ObjectStore:
    """The objects of one corpus (``s3://bucket/prefix``), addressed by corpus path."""

    def __init__(self, url: CorpusURL, cfg: Config) -> None:
        self.url = url
        self.cfg = cfg
        access, secret, token = cfg.credentials()
        use_default_chain = cfg.s3.endpoint_url is None and not cfg.s3.access_key
        bc = botocore.config.Config(
            connect_timeout=cfg.s3.connect_timeout,
            read_timeout=cfg.s3.read_timeout,
            retries={"total_max_attempts": cfg.s3.max_attempts, "mode": "standard"},
            max_pool_connections=max(10, cfg.s3.max_workers + 4),
            s3={"addressing_style": "path"},
            # Non-AWS servers (rclone serve s3) send a whole-object checksum on ranged GETs,
            # which fails botocore's default validation; we verify content ourselves.
            response_checksum_validation="when_required",
            request_checksum_calculation="when_required",
        )
        kwargs: dict[str, Any] = {"config": bc, "region_name": cfg.s3.region}
        if cfg.s3.endpoint_url:
            kwargs["endpoint_url"] = cfg.s3.endpoint_url
        if not use_default_chain:
            kwargs.update(
                aws_access_key_id=access, aws_secret_access_key=secret, aws_session_token=token
            )
        self._client = boto3.session.Session().client("s3", **kwargs)
        listparse.install(self._client)
        self._pool = ThreadPoolExecutor(max_workers=cfg.s3.max_workers, thread_name_prefix="s3")
        self._cond_put: bool | None = None
        self._lock = threading.Lock()
        self._cas: CasLock | None = None
        self.skipped: list[tuple[str, str]] = []

    # -- errors ----------------------------------------------------------------------
    def _map(self, e: Exception, what: str) -> BackendError:
        """Translate boto3/botocore exceptions into our typed errors (one place)."""
        if isinstance(e, BackendError):
            return e
        if isinstance(e, botocore.exceptions.ClientError):
            code = str(e.response.get("Error", {}).get("Code", ""))
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if code in ("NoSuchKey", "404", "NotFound") or status == 404 and code != "NoSuchBucket":
                return NoSuchKey(f"{what}: no such object")
            if code == "NoSuchBucket":
                return NoSuchBucket(f"bucket {self.url.bucket!r} does not exist")
            if code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403"):
                return AccessDenied(f"{what}: access denied ({code}); check AWS_ACCESS_KEY_ID and "
                                    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE")
            if code in ("PreconditionFailed", "412", "ConditionalRequestConflict") or status in (
                409,
                412,
            ):
                return PreconditionFailed(f"{what}: object changed concurrently")
            return Unavailable(f"{what}: server error {status} {code}")
        endpoint = self.cfg.s3.endpoint_url or "AWS S3"
        if isinstance(e, botocore.exceptions.SSLError):
            text = str(e)
            if "WRONG_VERSION_NUMBER" in text or "record layer failure" in text:
                return Unavailable(f"{what}: {endpoint} does not speak TLS; if it is a plain HTTP "
                                   "server, use http:// in AWS_ENDPOINT_URL")
            if "CERTIFICATE_VERIFY_FAILED" in text:
                return Unavailable(f"{what}: the certificate of {endpoint} is not trusted (name "
                                   "its CA file in AWS_CA_BUNDLE)")
            return Unavailable(f"{what}: TLS with {endpoint} failed; check https:// in "
                               "AWS_ENDPOINT_URL")
        if isinstance(e, botocore.exceptions.EndpointConnectionError):
            hint = ("is the S3 server running there? (AWS_ENDPOINT_URL)" if self.cfg.s3.endpoint_url
                    else "is the network up?")
            return Unavailable(f"{what}: cannot reach {endpoint}; {hint}")
        if isinstance(e, (botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectTimeoutError)):
            return Unavailable(f"{what}: {endpoint} timed out")
        if isinstance(e, botocore.exceptions.NoCredentialsError):
            if not self.cfg.s3.endpoint_url:
                # The usual cause is not AWS at all: a local or other S3 service whose
                # endpoint was not given, so the request went to Amazon S3.
                return AccessDenied(f"{self.url}: no AWS credentials found: with no endpoint "
                                    "given, brainfs tried Amazon S3 itself. For another S3 "
                                    "service (`brainfs s3 serve`, MinIO, R2) set AWS_ENDPOINT_URL="
                                    "http://HOST:PORT (or endpoint_url in the config file, "
                                    "--config FILE); for AWS set AWS_ACCESS_KEY_ID and "
                                    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE")
            return AccessDenied(f"no credentials found for {endpoint} (set AWS_ACCESS_KEY_ID and "
                                "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)")
        if isinstance(e, botocore.exceptions.BotoCoreError):
            return Unavailable(f"{what}: {e}")
        if isinstance(e, OSError):
            return Unavailable(f"{what}: {e.strerror or e}")
        return Unavailable(f"{what}: {e or 'unexpected failure'}")

    def _key(self, path: str) -> str:
        return self.url.key(path)

    # -- listing ---------------------------------------------------------------------
    def list(self, under: str = "", hints: Iterable[str] = (), first: Iterable[str] = (),
             on_range: Callable[[list[ObjectInfo]], None] | None = None) -> Iterator[ObjectInfo]:
        """Every object under the prefix (paginated). Keys that are not valid corpus paths
        are skipped with a warning: they cannot be represented safely in a filesystem.

        ``hints``: corpus paths believed to exist (the last listing, a listing snapshot).
        With more than a page of them, the key space is cut at every
        :data:`LIST_RANGE_KEYS`-th hint and the ranges are listed in parallel, one round
        trip each instead of one per 1,000 keys in a row. The hints only choose where to
        cut: every key in the bucket falls in exactly one range, whatever the hints say.
        ``first``: paths whose ranges are asked for before the others, in this order (the
        files a mount's first reads want). ``on_range``: told each range's objects as soon
        as that range is in (from a worker thread), before the whole listing is.
        """
        prefix = self.url.key(under.strip("/")) + "/" if under else (
            self.url.prefix + "/" if self.url.prefix else ""
        )
        skipped: list[tuple[str, str]] = []
        #: keys the last full listing could not represent (reported by ``brainfs status``)
        self.skipped = skipped
        try:
            bounds = self._range_bounds(hints, prefix) if self.cfg.s3.list_ranges and not under else []
            told = None if on_range is None else (
                lambda part: on_range([i for o in part if (i := self._info(o)) is not None]))
            keys = self._list_ranges(prefix, bounds, first, told) if bounds else self._list_keys(prefix)
            for obj in keys:
                info = self._info(obj, skipped)
                if info is not None:
                    yield info
        except Exception as e:  # noqa: BLE001 - mapped to a typed error
            raise self._map(e, f"list {self.url}") from None

    def _info(self, obj: dict[str, Any],
              skipped: list[tuple[str, str]] | None = None) -> ObjectInfo | None:
        """A raw listing entry as an object of the corpus; None for a key that is not a
        valid corpus path (logged and added to ``skipped`` when given)."""
        path = self.url.path(obj["Key"])
        if path is None:
            return None
        problem = path_problem(path)
        if problem:
            if skipped is not None:
                log.warning("skipping object %r: %s", obj["Key"], problem)
                skipped.append((obj["Key"], problem))
            return None
        return ObjectInfo(path, int(obj["Size"]), _etag(obj.get("ETag")),
                          obj["LastModified"].timestamp())

    def _list_keys(self, prefix: str, after: str | None = None,
                   upto: str | None = None) -> Iterator[dict[str, Any]]:
        """The raw entries with ``after < key <= upto`` (either end open when None), in
        the server's order; stops asking for pages once past ``upto``."""
        kwargs: dict[str, Any] = {"Bucket": self.url.bucket, "Prefix": prefix}
        if after is not None:
            kwargs["StartAfter"] = after
        for page in self._client.get_paginator("list_objects_v2").paginate(**kwargs):
            for obj in page.get("Contents", []):
                if upto is not None and obj["Key"] > upto:
                    return
                yield obj

    def _range_bounds(self, hints: Iterable[str], prefix: str) -> list[str]:
        """Keys to cut the listing at: every :data:`LIST_RANGE_KEYS`-th hinted key, so
        that one page of 1,000 holds a range and a few hundred keys added since."""
        keys = sorted(k for k in (self.url.key(h) for h in hints) if k.startswith(prefix))
        return keys[LIST_RANGE_KEYS - 1 :: LIST_RANGE_KEYS] if len(keys) > LIST_PAGE_KEYS else []

    def _list_ranges(self, prefix: str, bounds: list[str], first: Iterable[str] = (),
                     on_range: Callable[[list[dict[str, Any]]], None] | None = None,
                     ) -> list[dict[str, Any]]:
        """List the ranges ``(None, b1], (b1, b2], …, (bn, None)`` in parallel and join
        them in order; those holding the paths ``first`` are asked for first, in that
        order, and ``on_range`` is told each range as it comes in. S3 lists keys in UTF-8
        byte order, which is Python's order of str; a server that answers out of that
        order would make ranges overlap or miss keys, so each range is checked and the
        whole listing is taken in one pass instead (what ``on_range`` was told stays
        true: each object it got was listed at that ETag)."""
        edges = [None, *bounds, None]
        ranges = list(zip(edges[:-1], edges[1:]))
        # Range i holds the keys k with bounds[i-1] < k <= bounds[i].
        rank: dict[int, int] = {}
        for n, p in enumerate(first):
            rank.setdefault(bisect.bisect_left(bounds, self._key(p)), n)
        order = sorted(range(len(ranges)), key=lambda i: (i not in rank, rank.get(i, i)))

        def one(r: tuple[str | None, str | None]) -> list[dict[str, Any]]:
            part = list(self._list_keys(prefix, *r))
            if on_range is not None:
                on_range(part)
            return part

        workers = max(1, min(LIST_RANGE_WORKERS, self.cfg.s3.max_workers, len(ranges)))
        done: dict[int, list[dict[str, Any]]] = {}
        if rank:
            # The range the first read wants goes alone, then the rest: at once with seven
            # others it shares the server and this process's parsing with them, and that
            # read waits as long as the whole first round (seconds on a busy machine). The
            # cost is one round trip on the whole listing.
            done[order[0]] = one(ranges[order[0]])
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="s3-list") as pool:
            # The pool takes its work in the order it is given.
            futures = {i: pool.submit(one, ranges[i]) for i in order if i not in done}
            parts = [done[i] if i in done else futures[i].result() for i in range(len(ranges))]
        out: list[dict[str, Any]] = []
        last: str | None = None
        for (after, _), part in zip(ranges, parts):
            for obj in part:
                key = obj["Key"]
                if (after is not None and key <= after) or (last is not None and key <= last):
                    log.warning("the server lists keys out of byte order (%r after %r); "
                                "listing in one pass instead", key, last or after)
                    return list(self._list_keys(prefix))
                out.append(obj)
                last = key
        return out

    def check(self) -> None:
        """Fail fast with a clear error when the bucket or endpoint is unusable."""
        try:
            self._client.head_bucket(Bucket=self.url.bucket)
        except botocore.exceptions.ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if status == 404:
                raise NoSuchBucket(f"bucket {self.url.bucket!r} does not exist at "
                                   f"{self.cfg.s3.endpoint_url or 'AWS S3'} (check the URL; "
                                   "`brainfs import` creates it)") from None
            raise self._map(e, f"bucket {self.url.bucket}") from None
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"bucket {self.url.bucket}") from None

    def create_bucket(self) -> None:
        """Create the bucket (for the embedded server and first imports)."""
        try:
            self._client.create_bucket(Bucket=self.url.bucket)
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"create bucket {self.url.bucket}") from None

    def list_dir(self, under: str) -> tuple[list[str], list[ObjectInfo]]:
        """One level of the tree under corpus path ``under`` ('' = root): (subdirectory
        names, files). Used only by the naive (no-cache) mode."""
        base = self.url.key(under) + "/" if under else (self.url.prefix + "/" if self.url.prefix else "")
        dirs: list[str] = []
        files: list[ObjectInfo] = []
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.url.bucket, Prefix=base, Delimiter="/"
            ):
                for cp in page.get("CommonPrefixes", []):
                    dirs.append(cp["Prefix"][len(base):].rstrip("/"))
                for obj in page.get("Contents", []):
                    name = obj["Key"][len(base):]
                    if name and not path_problem(name):
                        files.append(ObjectInfo(
                            (under + "/" + name) if under else name, int(obj["Size"]),
                            _etag(obj.get("ETag")), obj["LastModified"].timestamp()))
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"list {under or '/'}") from None
        return dirs, files

    # -- objects ---------------------------------------------------------------------
    def head(self, path: str) -> ObjectInfo:
        """Size, ETag and mtime of one object."""
        try:
            r = self._client.head_object(Bucket=self.url.bucket, Key=self._key(path))
        except InvalidKey:
            raise
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"head {path}") from None
        return ObjectInfo(path, int(r["ContentLength"]), _etag(r.get("ETag")),
                          r["LastModified"].timestamp(),
                          _meta(r, STAMP_META), _meta(r, IMPORT_META))

    def get(self, path: str, byte_range: tuple[int, int] | None = None) -> tuple[bytes, str]:
        """Content (or bytes [start, end) of it) and ETag.

        A whole-object GET is checked against the server's MD5 ETag when it is one (a
        single-part upload); a mismatch or a short body is retried once, then Corrupt.
        """
        kwargs: dict[str, Any] = {"Bucket": self.url.bucket, "Key": self._key(path)}
        if byte_range is not None:
            start, end = byte_range
            if end <= start:
                return b"", ""
            kwargs["Range"] = f"bytes={start}-{end - 1}"
        last: BackendError | None = None
        for _attempt in range(2):
            try:
                r = self._client.get_object(**kwargs)
                etag = _etag(r.get("ETag"))
                try:
                    body = r["Body"].read()
                except _SHORT_BODY:
                    last = Corrupt(f"get {path}: body cut short (the connection ended early)")
                    continue
            except botocore.exceptions.ClientError as e:
                if byte_range is not None and e.response.get("Error", {}).get("Code") == "InvalidRange":
                    return b"", ""  # a range starting at or past the end: nothing to read
                raise self._map(e, f"get {path}") from None
            except Exception as e:  # noqa: BLE001
                raise self._map(e, f"get {path}") from None
            expected = int(r.get("ContentLength", len(body)))
            if len(body) != expected:
                last = Corrupt(f"get {path}: short body ({len(body)} of {expected} bytes)")
                continue
            if byte_range is None and is_md5(etag) and hashlib.md5(body).hexdigest() != etag:
                last = Corrupt(f"get {path}: content does not match its ETag")
                continue
            return body, etag
        assert last is not None
        log.warning("%s", last)
        raise last

    def put(
        self,
        path: str,
        data: bytes,
        if_match: str | None = None,
        if_none_match: bool = False,
        metadata: dict[str, str] | None = None,
    ) -> str:
        """Store ``data``; returns the new ETag. ``if_match``/``if_none_match`` make the
        write conditional where the server honours it (see :meth:`conditional_writes`)."""
        kwargs: dict[str, Any] = {
            "Bucket": self.url.bucket,
            "Key": self._key(path),
            "Body": data,
            "ContentMD5": _b64md5(data),
        }
        if metadata:
            kwargs["Metadata"] = metadata
        if if_match:
            kwargs["IfMatch"] = f'"{if_match}"'
        elif if_none_match:
            kwargs["IfNoneMatch"] = "*"
        try:
            r = self._client.put_object(**kwargs)
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"put {path}") from None
        return _etag(r.get("ETag"))

    def put_file(
        self,
        path: str,
        src: BinaryIO,
        part_bytes: int,
        if_match: str | None = None,
        if_none_match: bool = False,
        metadata: dict[str, str] | None = None,
    ) -> str:
        """Store the open file ``src`` (read from where it stands) by multipart upload,
        ``part_bytes`` at a time (memory stays
        at one part; no 5 GiB single-PUT wall). Returns the ETag of the completed upload.
        The conditions apply at completion, where the server honours them."""
        key = self._key(path)
        kwargs: dict[str, Any] = {"Bucket": self.url.bucket, "Key": key}
        try:
            up = self._client.create_multipart_upload(**kwargs, **({"Metadata": metadata} if metadata else {}))
        except Exception as e:  # noqa: BLE001
            raise self._map(e, f"put {path}") from None
        upload_id = up["UploadId"]
        try:
            parts = []
            n = 0
            while True:
                chunk = src.read(part_bytes)
                if not chunk and n:
                    break
                n += 1
                r = self._client.upload_part(**kwargs, UploadId=upload_id, PartNumber=n,
                                             Body=chunk, ContentMD5=_b64md5(chunk))
                parts.append({"ETag": r["ETag"], "PartNumber": n})
                if len(chunk) < part_bytes:
                    break
            cond: dict[str, Any] = {}
            if if_match:
                cond["IfMatch"] = f'"{if_match}"'
            elif if_none_match:
                cond["IfNoneMatch"] = "*"
            r = self._client.complete_multipart_upload(
                **kwargs, UploadId=upload_id, MultipartUpload={"Parts": parts}, **cond)
        except Exception as e:  # noqa: BLE001
            try:
                self._client.abort_multipart_upload(**kwargs, UploadId=upload_id)
            except Exception:  # noqa: BLE001 - the lifecycle rules of the bucket clean up
                pass
            if isinstance(e, OSError) and not isinstance(e, botocore.exceptions.BotoCoreError):
                raise
            raise self._map(e, f"put {path}") from None
        return _etag(r.get("ETag"))

    def delete(self, path: str) -> None:
        """Remove one object (no error if it is already gone)."""
        try:
            self._client.delete_object(Bucket=self.url.bucket, Key=self._key(path))
        except Exception as e:  # noqa: BLE001
            err = self._map(e, f"delete {path}")
            if not isinstance(err, NoSuchKey):
                raise err from None

    def get_many(
        self,
        paths: Iterable[str],
        on_result: Callable[[str, Any, str, BackendError | None], None],
        work: Callable[[str, bytes], Any] | None = None,
    ) -> None:
        """Fetch many objects in parallel (bounded by ``max_workers``).

        ``work(path, data)``, when given, runs in the worker thread right after the GET (so
        per-file work such as writing to disk runs in parallel too) and its result replaces
        the bytes. ``on_result(path, data_or_work_result, etag, error)`` is called once per
        path from the calling thread, as results complete, so the caller records them
        without locks.
        """

        def one(p: str) -> tuple[Any, str]:
            data, etag = self.get(p)
            return (work(p, data) if work else data), etag

        futures = {self._pool.submit(one, p): p for p in paths}
        for fut in as_completed(futures):
            p = futures[fut]
            try:
                out, etag = fut.result()
            except BackendError as e:
                on_result(p, None, "", e)
            except OSError as e:
                on_result(p, None, "", e)  # type: ignore[arg-type]
            else:
                on_result(p, out, etag, None)

    def conditional_writes(self) -> bool:
        """Whether the server honours If-None-Match / If-Match on PUT (probed once).

        rclone serve s3 accepts and ignores them; AWS and MinIO honour them. Callers that
        need compare-and-swap fall back to a local lock when this is False.
        """
        with self._lock:
            if self._cond_put is None:
                probe = f"{PROBE_PREFIX}{uuid.uuid4().hex}"
                try:
                    self.put(probe, b"1", if_none_match=True)
                    try:
                        self.put(probe, b"2", if_none_match=True)
                        self._cond_put = False
                    except PreconditionFailed:
                        self._cond_put = True
                finally:
                    try:
                        self.delete(probe)
                    except BackendError:
                        pass
            return self._cond_put

    @contextmanager
    def cas_section(self, path: str) -> Iterator[None]:
        """Hold what makes a HEAD-compare-then-write of ``path`` atomic: nothing where the
        server honours conditional writes (they do it), else a lock shared by every mount
        of this corpus on this machine (see ``caslock.py``)."""
        if self.conditional_writes():
            yield
            return
        with self._lock:
            if self._cas is None:
                self._cas = CasLock(f"{self.cfg.s3.endpoint_url or 'aws'} {self.url}")
        with self._cas.hold(self._key(path)):
            yield

    def close(self) -> None:
        """Stop the worker pool."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._cas is not None:
            self._cas.close()
            self._cas = None


def is_md5(etag: str) -> bool:
    """Whether ``etag`` is a plain MD5 (a single-part upload's) that bytes can be checked
    against (a multipart ETag cannot)."""
    return len(etag) == 32 and all(c in "0123456789abcdef" for c in etag.lower())


def multipart_etag(part_md5s: list[bytes]) -> str:
    """The ETag S3 gives a multipart upload: MD5 of the parts' MD5s, dash, part count."""
    return hashlib.md5(b"".join(part_md5s)).hexdigest() + f"-{len(part_md5s)}"


def _b64md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()
