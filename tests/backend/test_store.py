"""``backend/store.py`` (ObjectStore) against a real ``rclone serve s3`` on loopback, and
through ``benchmarks/s3proxy.py`` for the faults a real network produces (corrupted and
truncated bodies, 503s, stalls).

The server, the config and a fresh corpus per test come from ``conftest.py``. The config
there has ``max_attempts=2`` (botocore ``total_max_attempts``: one try and one retry),
``read_timeout=3`` and ``connect_timeout=1``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import boto3
import botocore.config
import pytest

from brainfs.backend.config import Config
from brainfs.backend.errors import (
    AccessDenied,
    BackendError,
    Corrupt,
    InvalidKey,
    NoSuchBucket,
    NoSuchKey,
    Unavailable,
)
from brainfs.backend.keys import CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore

from benchmarks.s3proxy import FaultPlan, S3Proxy

pytestmark = pytest.mark.s3

DATA = bytes(range(256)) * 40  # 10,240 bytes, every byte value
ANY = {"GET"}


def raw_client(cfg: Config):
    """A plain boto3 client on the same server (to place objects the store would never)."""
    access, secret, _ = cfg.credentials()
    return boto3.client(
        "s3", endpoint_url=cfg.endpoint_url, region_name=cfg.region,
        aws_access_key_id=access, aws_secret_access_key=secret,
        config=botocore.config.Config(s3={"addressing_style": "path"},
                                      response_checksum_validation="when_required",
                                      request_checksum_calculation="when_required"),
    )


def count_requests(store: ObjectStore) -> list[str]:
    """Record every HTTP request the store's client sends (one entry per attempt)."""
    sent: list[str] = []
    store._client.meta.events.register(
        "before-send.s3.*", lambda request, **kw: sent.append(f"{request.method} {request.url}"))
    return sent


@pytest.fixture
def proxy(s3_server: LocalS3) -> Iterator[S3Proxy]:
    """A fault-injection proxy in front of the session's server (no added delay)."""
    p = S3Proxy((s3_server.host, s3_server.port), delay=0.0)
    p.start()
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture
def pstore(proxy: S3Proxy, store: ObjectStore, corpus: CorpusURL, cfg: Config) -> Iterator[ObjectStore]:
    """A store on the same corpus, through the proxy; DATA is stored as ``f.bin``."""
    store.put("f.bin", DATA)
    s = ObjectStore(corpus, cfg.override(endpoint_url=proxy.url))
    yield s
    s.close()


# ----------------------------------------------------------------------------- objects


def test_put_head_get_delete_round_trip(store: ObjectStore, corpus: CorpusURL, cfg: Config) -> None:
    etag = store.put("knowledge/kyoto.md", DATA, metadata={"brainfs-xxh3": "abc123"})
    assert etag == hashlib.md5(DATA).hexdigest()  # single-part upload: the ETag is the MD5
    info = store.head("knowledge/kyoto.md")
    assert (info.path, info.size, info.etag) == ("knowledge/kyoto.md", len(DATA), etag)
    assert abs(info.mtime - time.time()) < 120
    body, got_etag = store.get("knowledge/kyoto.md")
    assert body == DATA and got_etag == etag
    # The object lies under the corpus prefix, with its metadata (rclone capitalises
    # metadata names, "Brainfs-Xxh3"; AWS returns them in lower case).
    r = raw_client(cfg).get_object(Bucket=corpus.bucket, Key="users/a/knowledge/kyoto.md")
    assert r["Body"].read() == DATA
    assert {k.lower(): v for k, v in r["Metadata"].items()} == {"brainfs-xxh3": "abc123"}

    # Overwrite: new content, new ETag.
    etag2 = store.put("knowledge/kyoto.md", b"v2")
    assert etag2 != etag
    assert store.get("knowledge/kyoto.md") == (b"v2", etag2)

    # Empty object.
    store.put("empty.md", b"")
    assert store.get("empty.md")[0] == b""
    assert store.head("empty.md").size == 0

    store.delete("knowledge/kyoto.md")
    with pytest.raises(NoSuchKey):
        store.get("knowledge/kyoto.md")
    with pytest.raises(NoSuchKey):
        store.head("knowledge/kyoto.md")
    store.delete("knowledge/kyoto.md")  # already gone: no error


def test_ranged_get(store: ObjectStore) -> None:
    etag = store.put("f.bin", DATA)
    for start, end in [(0, 1), (10, 20), (255, 513), (0, len(DATA)), (len(DATA) - 3, len(DATA))]:
        body, got = store.get("f.bin", (start, end))
        assert body == DATA[start:end], (start, end)
        assert got == etag
    # A range running past the end gives what there is.
    assert store.get("f.bin", (len(DATA) - 5, len(DATA) + 100))[0] == DATA[-5:]
    # An empty range needs no request.
    assert store.get("f.bin", (7, 7)) == (b"", "")
    assert store.get("f.bin", (9, 3)) == (b"", "")


def test_ranged_get_at_or_past_eof_is_empty(store: ObjectStore) -> None:
    """A read at the end of a file (every reader's last read; what the naive mount sends
    under direct_io) must return b'' like pread(2), not fail: S3 answers such a range with
    416 InvalidRange, which must not become Unavailable (EIO)."""
    store.put("f.bin", DATA)
    assert store.get("f.bin", (len(DATA), len(DATA) + 4096))[0] == b""
    assert store.get("f.bin", (len(DATA) + 10, len(DATA) + 20))[0] == b""


def test_get_many_reports_each_path_once(store: ObjectStore) -> None:
    files = {f"notes/t{i}.md": f"card {i}\n".encode() * (i + 1) for i in range(40)}
    with ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda kv: store.put(*kv), files.items()))
    got: dict[str, tuple[bytes | None, str, BackendError | None]] = {}
    calls: list[str] = []

    def on_result(path: str, data: bytes | None, etag: str, err: BackendError | None) -> None:
        calls.append(path)
        got[path] = (data, etag, err)

    wanted = [*files, "notes/missing.md", "../escape.md"]
    store.get_many(wanted, on_result)
    assert sorted(calls) == sorted(wanted)  # once each
    for p, content in files.items():
        data, etag, err = got[p]
        assert err is None and data == content and etag == hashlib.md5(content).hexdigest()
    assert isinstance(got["notes/missing.md"][2], NoSuchKey)
    assert got["notes/missing.md"][0] is None
    assert isinstance(got["../escape.md"][2], InvalidKey)


# ----------------------------------------------------------------------------- listing


def test_list_more_than_one_page(store: ObjectStore) -> None:
    """S3 pages listings at 1,000 keys: 1,050 objects need two pages, all of them listed."""
    names = [f"sessions/s{i // 100:02d}/n{i:04d}.md" for i in range(1050)]
    with ThreadPoolExecutor(32) as ex:
        list(ex.map(lambda n: store.put(n, n.encode()), names))
    pages = []
    store._client.meta.events.register("before-call.s3.ListObjectsV2",
                                       lambda **kw: pages.append(1))
    listed = list(store.list())
    assert len(pages) >= 2, "expected a paginated listing"
    assert sorted(o.path for o in listed) == sorted(names)
    by_path = {o.path: o for o in listed}
    n = names[1037]
    assert by_path[n].size == len(n) and by_path[n].etag == hashlib.md5(n.encode()).hexdigest()
    # list(under) keeps to the subtree, also across pages.
    sub = list(store.list("sessions/s10"))
    assert sorted(o.path for o in sub) == sorted(x for x in names if x.startswith("sessions/s10/"))
    assert len(sub) == 50


def test_list_never_shows_keys_outside_the_prefix(store: ObjectStore, corpus: CorpusURL,
                                                  cfg: Config) -> None:
    store.put("GUIDE.md", b"mine")
    raw = raw_client(cfg)
    for key in ["users/b/GUIDE.md", "users/ab/GUIDE.md", "users/aGUIDE.md", "GUIDE.md",
                "other/users/a/GUIDE.md"]:
        raw.put_object(Bucket=corpus.bucket, Key=key, Body=b"not yours")
    assert [o.path for o in store.list()] == ["GUIDE.md"]
    dirs, files = store.list_dir("")
    assert dirs == [] and [f.path for f in files] == ["GUIDE.md"]
    # And users/b's store sees only its own.
    other = ObjectStore(CorpusURL(corpus.bucket, "users/b"), cfg)
    try:
        assert [o.path for o in other.list()] == ["GUIDE.md"]
        assert other.get("GUIDE.md")[0] == b"not yours"
        assert store.get("GUIDE.md")[0] == b"mine"
    finally:
        other.close()


def test_list_skips_keys_that_are_not_valid_paths(store: ObjectStore, corpus: CorpusURL,
                                                  cfg: Config) -> None:
    store.put("ok.md", b"1")
    raw = raw_client(cfg)
    raw.put_object(Bucket=corpus.bucket, Key="users/a/tab\there.md", Body=b"2")
    raw.put_object(Bucket=corpus.bucket, Key="users/a/del\x7f.md", Body=b"3")
    raw.put_object(Bucket=corpus.bucket, Key="users/a/d/esc\x1b.md", Body=b"4")
    assert [o.path for o in store.list()] == ["ok.md"]


def test_list_dir_one_level(store: ObjectStore) -> None:
    for p in ["GUIDE.md", "knowledge/a.md", "knowledge/b.md", "notes/t/c.md"]:
        store.put(p, p.encode())
    dirs, files = store.list_dir("")
    assert sorted(dirs) == ["knowledge", "notes"]
    assert [f.path for f in files] == ["GUIDE.md"]
    dirs, files = store.list_dir("knowledge")
    assert dirs == [] and sorted(f.path for f in files) == ["knowledge/a.md", "knowledge/b.md"]
    assert store.list_dir("notes") == (["t"], [])


# ----------------------------------------------------------------------------- errors


def test_invalid_paths_raise_before_any_request(store: ObjectStore) -> None:
    sent = count_requests(store)
    for bad in ["../users/b/GUIDE.md", "a/../../b", "/etc/passwd", "", "a//b", "a/./b", "a\x00b",
                "a\nb", "x" * 256, "ok/\ud800.md"]:
        calls = [lambda: store.get(bad), lambda: store.get(bad, (0, 10)),
                 lambda: store.head(bad), lambda: store.put(bad, b"x"),
                 lambda: store.delete(bad)]
        if bad.strip("/") == bad and bad:  # list() trims slashes; list("") is the corpus
            calls.append(lambda: list(store.list(bad)))
        for i, call in enumerate(calls):
            try:
                call()
            except InvalidKey:
                continue
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"call {i} with {bad!r} raised {type(e).__name__}: {e}")
            pytest.fail(f"call {i} with {bad!r} was accepted")
    assert sent == []


def test_no_such_bucket(s3_server: LocalS3, cfg: Config) -> None:
    s = ObjectStore(CorpusURL.parse("s3://no-such-bucket-here/users/a"), cfg)
    try:
        with pytest.raises(NoSuchBucket, match="no-such-bucket-here"):
            s.check()
        with pytest.raises(NoSuchBucket):
            list(s.list())
        with pytest.raises(NoSuchBucket):
            s.get("GUIDE.md")
        with pytest.raises(NoSuchBucket):
            s.put("GUIDE.md", b"x")
    finally:
        s.close()


def test_wrong_credentials_are_access_denied(store: ObjectStore, corpus: CorpusURL,
                                             cfg: Config) -> None:
    store.put("GUIDE.md", b"x")
    s = ObjectStore(corpus, cfg.override(access_key="intruder", secret_key="not-the-secret"))
    try:
        with pytest.raises(AccessDenied):
            s.get("GUIDE.md")
        with pytest.raises(AccessDenied):
            list(s.list())
    finally:
        s.close()


def test_unreachable_endpoint_is_unavailable_quickly(corpus: CorpusURL, cfg: Config) -> None:
    s = ObjectStore(corpus, cfg.override(endpoint_url="http://127.0.0.1:1"))
    try:
        for call in (s.check, lambda: s.get("GUIDE.md"), lambda: s.head("GUIDE.md"),
                     lambda: list(s.list()), lambda: s.put("GUIDE.md", b"x")):
            t0 = time.monotonic()
            with pytest.raises(Unavailable, match="127.0.0.1:1"):
                call()
            assert time.monotonic() - t0 < 5.0
    finally:
        s.close()


def test_conditional_writes_probe_on_rclone(store: ObjectStore, corpus: CorpusURL,
                                            cfg: Config) -> None:
    """rclone ignores If-None-Match: the probe must say so, and leave nothing behind."""
    assert store.conditional_writes() is False
    sent = count_requests(store)
    assert store.conditional_writes() is False  # probed once, then remembered
    assert sent == []
    left = raw_client(cfg).list_objects_v2(Bucket=corpus.bucket, Prefix=corpus.prefix + "/")
    assert left.get("KeyCount", 0) == 0, left.get("Contents")


# ----------------------------------------------------------------------------- faults


def test_corrupted_body_is_retried_once_then_corrupt(pstore: ObjectStore, proxy: S3Proxy) -> None:
    proxy.force("corrupt", count=1, methods=ANY)
    body, etag = pstore.get("f.bin")
    assert body == DATA and etag == hashlib.md5(DATA).hexdigest()
    assert proxy.stats["faults"]["corrupt"] == 1
    assert proxy.stats["requests"] == 2
    # Corrupted on the retry too: Corrupt, never wrong bytes.
    proxy.reset_stats()
    proxy.force("corrupt", count=2, methods=ANY)
    with pytest.raises(Corrupt):
        pstore.get("f.bin")
    # The proxy counts a corrupt fault after its last byte is sent, which can be after
    # the client has already judged the body: give its thread a moment.
    deadline = time.monotonic() + 5
    while proxy.stats["faults"]["corrupt"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proxy.stats["faults"]["corrupt"] == 2
    # The next read is clean again.
    assert pstore.get("f.bin")[0] == DATA


def test_truncated_body_is_retried_once(pstore: ObjectStore, proxy: S3Proxy) -> None:
    """get(): 'a mismatch or a short body is retried once, then Corrupt'. A connection cut
    in the middle of the body is a short body."""
    proxy.force("truncate", count=1, methods=ANY)
    try:
        body, _ = pstore.get("f.bin")
    except BackendError as e:
        pytest.fail(f"one truncated body was not retried: {type(e).__name__}: {e}")
    assert body == DATA
    assert proxy.stats["faults"]["truncate"] == 1


def test_truncated_twice_is_corrupt(pstore: ObjectStore, proxy: S3Proxy) -> None:
    proxy.force("truncate", count=2, methods=ANY)
    with pytest.raises(BackendError) as ei:
        pstore.get("f.bin")
    assert isinstance(ei.value, Corrupt), f"got {type(ei.value).__name__}: {ei.value}"


def test_transient_failures_are_retried_by_botocore(pstore: ObjectStore, proxy: S3Proxy) -> None:
    for kind in ("slowdown", "error", "reset"):  # 503 SlowDown, 500, connection reset
        proxy.reset_stats()
        proxy.force(kind, count=1, methods=ANY)
        assert pstore.get("f.bin")[0] == DATA, kind
        assert proxy.stats["faults"][kind] == 1, kind
        assert proxy.stats["requests"] == 2, kind


def test_persistent_503_is_unavailable_after_max_attempts(pstore: ObjectStore, proxy: S3Proxy,
                                                          cfg: Config) -> None:
    proxy.force("slowdown", count=10, methods=ANY)
    with pytest.raises(Unavailable, match="503"):
        pstore.get("f.bin")
    # total_max_attempts: exactly cfg.max_attempts requests, no more.
    assert proxy.stats["requests"] == cfg.max_attempts


def test_503_on_put_is_retried(pstore: ObjectStore, proxy: S3Proxy, store: ObjectStore) -> None:
    proxy.force("slowdown", count=1, methods={"PUT"})
    etag = pstore.put("p.md", b"payload")
    assert store.get("p.md") == (b"payload", etag)


def test_stall_becomes_unavailable_within_bound(proxy: S3Proxy, store: ObjectStore,
                                                corpus: CorpusURL, cfg: Config) -> None:
    store.put("f.bin", DATA)
    fast = cfg.override(endpoint_url=proxy.url, read_timeout=1.0, max_attempts=2)
    s = ObjectStore(corpus, fast)
    proxy.set_faults(FaultPlan(stall_seconds=6.0))  # only sets how long a forced stall lasts
    proxy.force("stall", count=10, methods=ANY)
    slack = 1.5
    try:
        t0 = time.monotonic()
        with pytest.raises(Unavailable, match="timed out"):
            s.get("f.bin")
        elapsed = time.monotonic() - t0
    finally:
        s.close()
        proxy.clear_forced()
    assert elapsed >= fast.read_timeout * 0.9  # it did wait for the timeout
    assert elapsed < fast.max_attempts * (fast.read_timeout + slack), elapsed
    assert proxy.stats["faults"]["stall"] == fast.max_attempts


def _put_all(store: ObjectStore, names: list[str]) -> None:
    with ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda n: store.put(n, n.encode()), names))


def test_list_in_parallel_ranges_equals_one_pass(store: ObjectStore, corpus: CorpusURL, cfg: Config,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With hints, the listing is cut into ranges listed at once; whatever the hints (exact,
    stale, invented, none in the bucket), every object is listed exactly once and in the
    server's order. Names outside ASCII (accents, CJK, a full-width letter, an emoji beyond
    the BMP) check that Python's order of str is the server's byte order."""
    import brainfs.backend.store as store_mod

    monkeypatch.setattr(store_mod, "LIST_RANGE_KEYS", 4)
    monkeypatch.setattr(store_mod, "LIST_PAGE_KEYS", 4)
    odd = ["notes/café.md", "notes/caf\u00e9s/x.md", "notes/中文.md", "notes/\uff21.md",
           "notes/\U0001f600.md", "notes/z.md", "notes/Z.md", "notes/-a.md", "notes/a b.md"]
    names = [f"sessions/s{i:03d}.md" for i in range(40)] + odd + ["GUIDE.md", "knowledge/x.md"]
    _put_all(store, names)
    raw = raw_client(cfg)
    raw.put_object(Bucket=corpus.bucket, Key="users/a/tab\there.md", Body=b"skipped")
    calls: list[int] = []
    store._client.meta.events.register("before-call.s3.ListObjectsV2", lambda **kw: calls.append(1))
    one_pass = [o.path for o in store.list()]
    assert sorted(one_pass) == sorted(names) and len(calls) == 1
    assert store.skipped and store.skipped[0][0] == "users/a/tab\there.md"

    stale = names[::3] + ["sessions/s0155.md", "aaa.md", "zzz/zz.md", "notes/\U0001f601.md"]
    for hints in (names, stale, [f"nothing/{i}" for i in range(30)], [f"x{i}" for i in range(30)]):
        calls.clear()
        listed = [o.path for o in store.list(hints=hints)]
        assert listed == one_pass, f"hints {hints[:3]}…"
        assert len(store.skipped) == 1
    # Exact hints cut the 51 keys into 13 ranges: 13 requests, each one page.
    calls.clear()
    list(store.list(hints=names))
    assert len(calls) == 13

    # Objects added and removed since the hints were taken are listed as they are now.
    store.delete("sessions/s007.md")
    _put_all(store, ["sessions/s007a.md", "aa.md", "zzzz.md", "notes/\U0001f600/x.md"])
    now = [o.path for o in store.list()]
    assert [o.path for o in store.list(hints=names)] == now
    # A subtree listing ignores the hints (it is one prefix, listed in one pass).
    assert [o.path for o in store.list("notes", hints=names)] == [p for p in now if p.startswith("notes/")]


def test_list_falls_back_to_one_pass_when_the_server_ignores_start_after(
        store: ObjectStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A server that answers ranges out of byte order (here: one that ignores StartAfter)
    must not make the listing miss or repeat a key: the ranges are checked and the listing
    is taken again in one pass, with a warning."""
    import brainfs.backend.store as store_mod

    monkeypatch.setattr(store_mod, "LIST_RANGE_KEYS", 3)
    monkeypatch.setattr(store_mod, "LIST_PAGE_KEYS", 3)
    names = [f"n{i:02d}.md" for i in range(20)]
    _put_all(store, names)
    real = store._list_keys

    def ignoring_start_after(prefix, after=None, upto=None):
        return real(prefix, None, upto)

    monkeypatch.setattr(store, "_list_keys", ignoring_start_after)
    with caplog.at_level("WARNING", logger="brainfs.backend.store"):
        listed = [o.path for o in store.list(hints=names)]
    assert listed == names
    assert "out of byte order" in caplog.text


def test_list_asks_first_for_the_ranges_holding_the_first_paths_and_tells_each_range(
        store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """``first`` orders the ranges' requests (the files a mount reads first); ``on_range``
    is told each range's objects as soon as it is in, before the next range is asked for
    (one worker here), and the listing as a whole stays the one-pass listing."""
    import brainfs.backend.store as store_mod

    monkeypatch.setattr(store_mod, "LIST_RANGE_KEYS", 4)
    monkeypatch.setattr(store_mod, "LIST_PAGE_KEYS", 4)
    monkeypatch.setattr(store_mod, "LIST_RANGE_WORKERS", 1)
    names = [f"n{i:02d}.md" for i in range(20)]  # cut after n03, n07, n11, n15 and n19
    _put_all(store, names)
    events: list[tuple[str, str]] = []
    store._client.meta.events.register(
        "before-parameter-build.s3.ListObjectsV2",
        lambda params, **kw: events.append(("ask", params.get("StartAfter", "").rsplit("/", 1)[-1])))
    listed = [o.path for o in store.list(hints=names, first=["n13.md", "n02.md", "n14.md"],
                                         on_range=lambda part: events.append(
                                             ("told", ",".join(o.path for o in part))))]
    assert listed == names

    def told(lo: int, hi: int) -> tuple[str, str]:
        return "told", ",".join(names[lo:hi])

    assert events == [("ask", "n11.md"), told(12, 16), ("ask", ""), told(0, 4),
                      ("ask", "n03.md"), told(4, 8), ("ask", "n07.md"), told(8, 12),
                      ("ask", "n15.md"), told(16, 20), ("ask", "n19.md"), told(0, 0)]
    # With eight workers the first range still goes alone: nothing else is asked for
    # before it is in (at once with the others, it waited for the whole round).
    monkeypatch.setattr(store_mod, "LIST_RANGE_WORKERS", 8)
    events.clear()
    assert [o.path for o in store.list(hints=names, first=["n13.md"], on_range=lambda part: events.append(
        ("told", ",".join(o.path for o in part))))] == names
    assert events[:2] == [("ask", "n11.md"), told(12, 16)] and len(events) == 12
