"""Tests for benchmarks/s3proxy.py: a latency / fault-injection proxy in front of a real S3 server.

The server is a real ``rclone serve s3`` over a temporary directory; the client is boto3
with retries disabled, so every fault the proxy injects surfaces as the client-side error a
brainfs component would have to handle. A few framing tests use a tiny in-process HTTP/1.1
server instead, because they need things rclone does not send on demand (chunked request
bodies, chunked responses).
"""

from __future__ import annotations

import hashlib
import http.client
import http.server
import io
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

import pytest

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    IncompleteReadError,
    ReadTimeoutError,
    ResponseStreamingError,
)

from benchmarks.s3proxy import FaultPlan, S3Proxy  # repo root is on sys.path (pyproject)
from brainfs.backend.config import Config as BrainfsConfig
from brainfs.backend.server import LocalS3

pytestmark = pytest.mark.s3

ACCESS, SECRET = "brainfstestaccess", "brainfstestsecret"  # rclone rejects very short keys
BUCKET = "bkt"
SMALL = b"hello brainfs\n"
@pytest.fixture(scope="module")
def rclone_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real ``rclone serve s3`` (the project's LocalS3) on a free loopback port, with this
    module's key pair; stopped by PID in teardown."""
    root = tmp_path_factory.mktemp("s3root")
    (root / BUCKET).mkdir()  # first-level folders are buckets
    server = LocalS3(root, cfg=BrainfsConfig().override(access_key=ACCESS, secret_key=SECRET)).start()
    try:
        yield (server.host, server.port)
    finally:
        server.stop()


def _client(url: str, read_timeout: float = 10.0, pool: int = 10):
    cfg = Config(
        response_checksum_validation="when_required",
        request_checksum_calculation="when_required",
        # NB: botocore's legacy ``max_attempts`` counts *retries* (max_attempts=1 means two
        # attempts); total_max_attempts=1 really sends each call exactly once, so a
        # forced fault is seen by the test instead of being retried away.
        retries={"total_max_attempts": 1},
        s3={"addressing_style": "path"},
        connect_timeout=5,
        read_timeout=read_timeout,
        max_pool_connections=pool,
    )
    return boto3.client(
        "s3", endpoint_url=url, region_name="us-east-1",
        aws_access_key_id=ACCESS, aws_secret_access_key=SECRET, config=cfg,
    )


@pytest.fixture
def proxy(rclone_server: tuple[str, int]) -> Iterator[S3Proxy]:
    p = S3Proxy(rclone_server, delay=0.020)
    p.start()
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture
def s3(proxy: S3Proxy):
    return _client(proxy.url)


@pytest.fixture(scope="module")
def direct(rclone_server: tuple[str, int]):
    return _client(f"http://{rclone_server[0]}:{rclone_server[1]}")


@pytest.fixture(scope="module")
def objects(direct) -> dict[str, bytes]:
    """Objects the fault tests read, written directly (not through any proxy)."""
    data = {
        "small.txt": SMALL,
        "medium.bin": os.urandom(100_000),
        "big.bin": os.urandom(5 << 20),
    }
    for key, body in data.items():
        direct.put_object(Bucket=BUCKET, Key=key, Body=body)
    return data


def _median_ms(fn: Callable[[], object], n: int = 10) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


# ----------------------------------------------------------------------------- plain S3


def test_crud_through_proxy(s3, proxy: S3Proxy) -> None:
    s3.put_object(Bucket=BUCKET, Key="crud/a.txt", Body=b"alpha")
    # A file-like body makes botocore send ``Expect: 100-continue``.
    big = os.urandom(3 << 20)
    s3.put_object(Bucket=BUCKET, Key="crud/b.bin", Body=io.BytesIO(big))
    assert s3.get_object(Bucket=BUCKET, Key="crud/a.txt")["Body"].read() == b"alpha"
    assert hashlib.sha256(s3.get_object(Bucket=BUCKET, Key="crud/b.bin")["Body"].read()).digest() == \
        hashlib.sha256(big).digest()
    assert s3.head_object(Bucket=BUCKET, Key="crud/b.bin")["ContentLength"] == len(big)
    # Enough keys that the listing is large (Go switches to chunked responses past 4 KB).
    for i in range(40):
        s3.put_object(Bucket=BUCKET, Key=f"crud/many/{i:03d}-{'x' * 60}", Body=b"")
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix="crud/")
    assert listed["KeyCount"] == 42
    s3.delete_object(Bucket=BUCKET, Key="crud/a.txt")
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=BUCKET, Key="crud/a.txt")
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    # A 404 to HEAD has no body; the next request on the same connection must still work.
    assert s3.get_object(Bucket=BUCKET, Key="crud/b.bin", Range="bytes=0-9")["Body"].read() == big[:10]
    assert proxy.stats["requests"] >= 49
    assert sum(proxy.stats["faults"].values()) == 0


def test_delay_is_per_request(s3, direct, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    small = lambda c: c.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read()  # noqa: E731
    big = lambda c: c.get_object(Bucket=BUCKET, Key="big.bin")["Body"].read()  # noqa: E731
    small(s3), small(direct), big(s3), big(direct)  # warm connections and page cache
    direct_ms, proxied_ms = _median_ms(lambda: small(direct)), _median_ms(lambda: small(s3))
    print(f"small GET median: direct {direct_ms:.2f} ms, through 20 ms proxy {proxied_ms:.2f} ms")
    assert proxied_ms >= 20.0
    assert proxied_ms < direct_ms + 20.0 + 30.0  # generous slack for a loaded CI box

    direct_big, proxied_big = _median_ms(lambda: big(direct), 3), _median_ms(lambda: big(s3), 3)
    print(f"5 MB GET median: direct {direct_big:.1f} ms, through proxy {proxied_big:.1f} ms")
    # Per-chunk delay would be >= 20 blocks of 256 KB x 20 ms = 400 ms extra.
    assert proxied_big < direct_big + 20.0 + 150.0

    proxy.set_delay(0.060)
    assert _median_ms(lambda: small(s3), 3) >= 60.0


def test_concurrent_connections(rclone_server: tuple[str, int], proxy: S3Proxy,
                                objects: dict[str, bytes]) -> None:
    # Connections are served at once, shown without a clock (a timed run fails on a busy
    # machine): 16 GETs are all held by the proxy together (a forced stall holds each for
    # 30 s), a count one connection at a time could only reach after 7 minutes.
    n = 16
    outcomes: list[BaseException | None] = []

    def held_get(s3) -> None:
        try:
            s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read()
            outcomes.append(None)
        except Exception as e:  # noqa: BLE001 - the stall ends in a closed connection
            outcomes.append(e)

    with S3Proxy(rclone_server, delay=0.0) as held:
        held.force("stall", count=n, methods={"GET"})
        s3 = _client(held.url, read_timeout=120, pool=n)
        threads = [threading.Thread(target=held_get, args=(s3,), daemon=True) for _ in range(n)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 25
        while held.stats["faults"].get("stall", 0) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert held.stats["faults"].get("stall", 0) == n, held.stats
        assert outcomes == [], "a stalled GET came back while the others were still held"
    for t in threads:  # stop() ended the stalls: every GET fails, none hangs
        t.join(timeout=30)
    assert len(outcomes) == n and all(e is not None for e in outcomes), outcomes

    # Many concurrent GETs through the delaying proxy each get their own object's bytes.
    s3 = _client(proxy.url, pool=32)
    keys = ["small.txt", "medium.bin"] * 48
    s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read()
    before = proxy.stats["requests"]
    with ThreadPoolExecutor(32) as pool:
        bodies = list(pool.map(lambda k: s3.get_object(Bucket=BUCKET, Key=k)["Body"].read(), keys))
    assert bodies == [objects[k] for k in keys]
    assert proxy.stats["requests"] - before == len(keys)


# ----------------------------------------------------------------------------- faults


@pytest.mark.parametrize("kind,status,code", [("error", 500, "InternalError"), ("slowdown", 503, "SlowDown")])
def test_error_faults(s3, proxy: S3Proxy, objects: dict[str, bytes], kind: str, status: int, code: str) -> None:
    proxy.force(kind, methods={"GET"})
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=BUCKET, Key="small.txt")
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert err.value.response["Error"]["Code"] == code
    # Forced once: the next GET on the (kept-alive) connection goes through.
    assert s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read() == SMALL
    # On a PUT with Expect: 100-continue the body is never sent and the write is not applied.
    proxy.force(kind, methods={"PUT"})
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=BUCKET, Key="faulty-put.bin", Body=io.BytesIO(b"x" * 100_000))
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    s3.put_object(Bucket=BUCKET, Key="faulty-put.bin", Body=io.BytesIO(b"y" * 100_000))
    assert s3.get_object(Bucket=BUCKET, Key="faulty-put.bin")["Body"].read() == b"y" * 100_000
    assert proxy.stats["faults"][kind] == 2


def test_reset_fault(s3, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read()  # an established connection
    proxy.force("reset")
    with pytest.raises((ConnectionClosedError, EndpointConnectionError)):
        s3.get_object(Bucket=BUCKET, Key="small.txt")
    assert s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read() == SMALL
    assert proxy.stats["faults"]["reset"] == 1


def test_stall_fault(proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    proxy.set_faults(FaultPlan(stall_seconds=5.0))
    s3 = _client(proxy.url, read_timeout=0.5)
    proxy.force("stall", methods={"GET"})
    t = time.perf_counter()
    with pytest.raises(ReadTimeoutError):
        s3.get_object(Bucket=BUCKET, Key="small.txt")
    assert time.perf_counter() - t < 3.0
    assert s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read() == SMALL
    assert proxy.stats["faults"]["stall"] == 1
    # stop() (fixture teardown) must not wait out the remaining stall: checked here.
    t = time.perf_counter()
    proxy.stop()
    assert time.perf_counter() - t < 2.0


def test_truncate_fault(s3, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    proxy.force("truncate", methods={"GET"}, key_pattern=r"medium\.bin$")
    resp = s3.get_object(Bucket=BUCKET, Key="medium.bin")
    assert resp["ContentLength"] == len(objects["medium.bin"])  # headers promise it all
    with pytest.raises((IncompleteReadError, ResponseStreamingError)):
        resp["Body"].read()
    # A response without a body (HEAD) is truncated inside its head instead.
    proxy.force("truncate", methods={"HEAD"})
    with pytest.raises((ConnectionClosedError, EndpointConnectionError)):
        s3.head_object(Bucket=BUCKET, Key="medium.bin")
    assert s3.get_object(Bucket=BUCKET, Key="medium.bin")["Body"].read() == objects["medium.bin"]
    assert proxy.stats["faults"]["truncate"] == 2


def test_corrupt_fault(s3, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    proxy.force("corrupt", methods={"GET"})
    got = s3.get_object(Bucket=BUCKET, Key="medium.bin")["Body"].read()
    want = objects["medium.bin"]
    assert len(got) == len(want) and got != want
    assert 1 <= sum(a != b for a, b in zip(got, want)) <= 4
    assert s3.get_object(Bucket=BUCKET, Key="medium.bin")["Body"].read() == want
    assert proxy.stats["faults"]["corrupt"] == 1


def test_force_filters(s3, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    proxy.force("error", count=2, methods={"GET"}, key_pattern=r"/medium")
    assert s3.get_object(Bucket=BUCKET, Key="small.txt")["Body"].read() == SMALL  # no match
    s3.head_object(Bucket=BUCKET, Key="medium.bin")  # wrong method
    for _ in range(2):
        with pytest.raises(ClientError):
            s3.get_object(Bucket=BUCKET, Key="medium.bin")
    assert s3.get_object(Bucket=BUCKET, Key="medium.bin")["Body"].read() == objects["medium.bin"]
    assert proxy.stats["faults"]["error"] == 2


def _run_plan(proxy: S3Proxy, s3, plan: FaultPlan, want: bytes, n: int) -> tuple[list[str], list[tuple[int, str]]]:
    """Run ``n`` sequential GETs of ``want`` under ``plan``; return the outcomes and fault log."""
    proxy.set_faults(plan)  # restarts the plan's RNG from its seed
    proxy.reset_stats()
    outcomes = []
    for _ in range(n):
        try:
            body = s3.get_object(Bucket=BUCKET, Key="medium.bin")["Body"].read()
            outcomes.append("ok" if body == want else "short" if len(body) != len(want) else "corrupt")
        except ClientError as exc:
            outcomes.append(str(exc.response["ResponseMetadata"]["HTTPStatusCode"]))
        except Exception as exc:  # noqa: BLE001 - the exception type *is* the outcome
            outcomes.append(type(exc).__name__)
    return outcomes, [(num, kind) for num, _, _, kind in proxy.fault_log]


def test_same_seed_same_faults(s3, proxy: S3Proxy, objects: dict[str, bytes]) -> None:
    proxy.set_delay(0.0)  # 120 requests: the delay is not what this test is about
    want = objects["medium.bin"]
    plan = lambda seed: FaultPlan(  # noqa: E731
        seed=seed, error_rate=0.15, reset_rate=0.1, truncate_rate=0.1, corrupt_rate=0.1, methods=frozenset({"GET"})
    )
    first, log1 = _run_plan(proxy, s3, plan(1234), want, 40)
    second, log2 = _run_plan(proxy, s3, plan(1234), want, 40)
    _, log3 = _run_plan(proxy, s3, plan(99), want, 40)
    print("seed 1234:", first)
    assert first == second and log1 == log2
    assert log1 != log3
    assert len(log1) >= 5 and {"ok", "corrupt", "500", "ConnectionClosedError"} <= set(first)
    assert proxy.stats["requests"] == 40


# ----------------------------------------------------------------------------- framing


class _EchoHandler(http.server.BaseHTTPRequestHandler):
    """HTTP/1.1 upstream: echoes request bodies back chunked; records connections."""

    protocol_version = "HTTP/1.1"
    connections: list[int] = []

    def setup(self) -> None:
        super().setup()
        type(self).connections.append(self.client_address[1])

    def log_message(self, *args: object) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def do_PUT(self) -> None:
        body = self._body()
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(body), 1000):
            part = body[i:i + 1000]
            self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "12345")
        self.end_headers()


@pytest.fixture
def echo_proxy() -> Iterator[tuple[S3Proxy, type[_EchoHandler]]]:
    handler = type("Echo", (_EchoHandler,), {"connections": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    p = S3Proxy(server.server_address[:2], delay=0.0)
    p.start()
    try:
        yield p, handler
    finally:
        p.stop()
        server.shutdown()
        server.server_close()


def test_chunked_both_ways_and_keepalive(echo_proxy: tuple[S3Proxy, type[_EchoHandler]]) -> None:
    proxy, handler = echo_proxy
    conn = http.client.HTTPConnection(*proxy.address, timeout=5)
    payload = os.urandom(10_000)
    # A chunked request body (no Content-Length) and a chunked response with extensions
    # and a trailer, twice on one connection, then a HEAD whose Content-Length has no body.
    for _ in range(2):
        conn.request("PUT", "/x", body=iter([payload[:3000], payload[3000:]]), encode_chunked=True)
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == payload
    conn.request("HEAD", "/x")
    resp = conn.getresponse()
    assert resp.getheader("Content-Length") == "12345" and resp.read() == b""
    conn.request("PUT", "/x", body=b"tail", headers={"Expect": "100-continue"})
    assert conn.getresponse().read() == b"tail"
    conn.close()
    assert len(handler.connections) == 1  # keep-alive preserved end to end
    assert proxy.stats["requests"] == 4


def test_corrupt_chunked_keeps_framing(echo_proxy: tuple[S3Proxy, type[_EchoHandler]]) -> None:
    proxy, _ = echo_proxy
    proxy.force("corrupt")
    conn = http.client.HTTPConnection(*proxy.address, timeout=5)
    payload = bytes(5000)
    conn.request("PUT", "/x", body=payload)
    got = conn.getresponse().read()
    assert len(got) == len(payload) and got != payload
    conn.close()
