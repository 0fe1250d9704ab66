"""An HTTP/1.1 proxy for S3 traffic on loopback: per-request latency and fault injection.

Why it exists
-------------
This machine's kernel has no ``netem``, so a loopback S3 server answers in well under a
millisecond and a benchmark against it says nothing about a real bucket. The proxy sits
between an S3 client and an S3 server and adds one configurable round trip *per request*
(not per byte, not per TCP segment), which is what a client talking to a remote S3 service
actually pays. Reliability tests use the same proxy to inject faults: S3 error responses,
connection resets, stalls, truncated and corrupted bodies, either at random from a seeded
RNG (reproducible) or forced for the next N matching requests.

How it works
------------
One thread per client connection, one upstream connection per client connection (opened
lazily and reused while both sides keep the connection alive), so keep-alive, pipelining
order and connection counts on the server side mirror the client's. The proxy parses just
enough HTTP/1.1 to find message boundaries -- ``Content-Length``, ``Transfer-Encoding:
chunked``, read-until-close, HEAD/1xx/204/304 responses without a body -- and forwards the
bytes unchanged otherwise (header order and ``Host`` are preserved, so SigV4 signatures
stay valid). Bodies are streamed in bounded blocks, never buffered whole. ``Expect:
100-continue`` is passed through: the server's ``100 Continue`` reaches the client, and if
the server answers early with a final status the body is never sent and both connections
are closed afterwards (the body framing on them is then unknowable).

Usage::

    proxy = S3Proxy(("127.0.0.1", 9000), delay=0.020, faults=FaultPlan(seed=1, error_rate=0.05))
    proxy.start()
    s3 = boto3.client("s3", endpoint_url=proxy.url, ...)
    proxy.force("reset", count=2, methods={"GET"})
    ...
    proxy.stop()

or from a shell::

    python -m benchmarks.s3proxy --upstream 127.0.0.1:9000 --listen 127.0.0.1:9100 --delay-ms 20
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator
from urllib.parse import unquote, urlsplit

__all__ = ["FaultPlan", "S3Proxy", "FAULT_KINDS", "main"]

log = logging.getLogger("benchmarks.s3proxy")

#: Every fault kind the proxy knows, in the order the random draw tests them.
FAULT_KINDS: tuple[str, ...] = ("error", "slowdown", "reset", "stall", "truncate", "corrupt",
                                 "no_etag")

_BLOCK = 256 * 1024  # streaming block: large enough for throughput, small enough for memory
_MAX_HEAD = 64 * 1024  # S3 heads are small; a larger one is a protocol error, not a request
_CONNECT_TIMEOUT = 10.0


@dataclass
class FaultPlan:
    """Random fault injection, reproducible from ``seed``.

    Each eligible request draws from ``random.Random(seed)`` the same number of times
    whatever happens to it, so the i-th eligible request always gets the same fault for a
    given seed (with concurrent clients, which request is "i-th" is up to the scheduler).
    The rates are per-request probabilities and must sum to at most 1. ``error_rate``
    covers both 500 InternalError and 503 SlowDown (half each).
    """

    seed: int = 0
    error_rate: float = 0.0  # 500/503
    reset_rate: float = 0.0
    stall_rate: float = 0.0
    stall_seconds: float = 30.0
    truncate_rate: float = 0.0
    corrupt_rate: float = 0.0
    methods: frozenset[str] | None = None  # only these HTTP methods are eligible (None = all)
    key_pattern: str | None = None  # regex searched in the request path; None = all

    def __post_init__(self) -> None:
        rates = (self.error_rate, self.reset_rate, self.stall_rate, self.truncate_rate, self.corrupt_rate)
        if any(r < 0 for r in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be >= 0 and sum to <= 1, got {rates}")
        if self.methods is not None:
            self.methods = frozenset(m.upper() for m in self.methods)


# --------------------------------------------------------------------------- HTTP plumbing


class _ProtocolError(Exception):
    """The peer sent something that is not HTTP/1.1 we can frame."""


class _PeerClosed(Exception):
    """The peer closed its side in the middle of a message."""


class _Truncated(Exception):
    """A truncate fault cut the response; the connection must be closed."""


class _Reader:
    """A minimal buffered reader over a socket.

    ``io.BufferedReader`` hides how much it has buffered, and the ``Expect: 100-continue``
    logic must know whether the client already sent body bytes before it ``select()``s.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def buffered(self) -> int:
        return len(self.buf)

    def _fill(self) -> bool:
        data = self.sock.recv(_BLOCK)
        if not data:
            return False
        self.buf += data
        return True

    def read_head(self) -> bytes | None:
        """Read one message head (start line + headers + blank line).

        Returns None on a clean EOF before any byte (the peer closed an idle keep-alive
        connection); raises ``_PeerClosed`` on EOF in the middle of a head.
        """
        start = 0
        while True:
            # Tolerate stray CRLFs between messages (RFC 9112 section 2.2).
            while self.buf[:2] == b"\r\n":
                del self.buf[:2]
            end = self.buf.find(b"\r\n\r\n", max(0, start - 3))
            if end >= 0:
                head = bytes(self.buf[: end + 4])
                del self.buf[: end + 4]
                return head
            if len(self.buf) > _MAX_HEAD:
                raise _ProtocolError("message head too large")
            start = len(self.buf)
            if not self._fill():
                if self.buf:
                    raise _PeerClosed("EOF inside a message head")
                return None

    def read_line(self) -> bytes:
        """Read one CRLF-terminated line (chunk sizes, trailers), CRLF included."""
        start = 0
        while True:
            end = self.buf.find(b"\n", start)
            if end >= 0:
                line = bytes(self.buf[: end + 1])
                del self.buf[: end + 1]
                return line
            if len(self.buf) > _MAX_HEAD:
                raise _ProtocolError("line too long")
            start = len(self.buf)
            if not self._fill():
                raise _PeerClosed("EOF inside a line")

    def read_some(self, limit: int) -> bytes:
        """Return between 1 and ``limit`` bytes; raise ``_PeerClosed`` on EOF."""
        if self.buf:
            data = bytes(self.buf[:limit])
            del self.buf[:limit]
            return data
        data = self.sock.recv(min(limit, _BLOCK))  # straight from the socket: no copy
        if not data:
            raise _PeerClosed("EOF inside a body")
        return data

    def read_to_eof(self) -> Iterator[bytes]:
        if self.buf:
            data = bytes(self.buf)
            self.buf.clear()
            yield data
        while True:
            data = self.sock.recv(_BLOCK)
            if not data:
                return
            yield data


@dataclass
class _Head:
    """A parsed request or response head; ``raw`` is forwarded byte for byte."""

    raw: bytes
    start: str
    version: str
    headers: list[tuple[str, str]]

    @classmethod
    def parse(cls, raw: bytes) -> "_Head":
        lines = raw.decode("latin-1").split("\r\n")
        start = lines[0]
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise _ProtocolError(f"bad header line {line!r}")
            headers.append((name.strip().lower(), value.strip()))
        version = start.split(" ", 1)[0] if start.startswith("HTTP/") else start.rsplit(" ", 1)[-1]
        return cls(raw, start, version.upper(), headers)

    def get(self, name: str) -> str | None:
        value = None
        for k, v in self.headers:
            if k == name:
                value = v if value is None else f"{value}, {v}"
        return value

    def tokens(self, name: str) -> list[str]:
        value = self.get(name)
        return [t.strip().lower() for t in value.split(",")] if value else []

    def chunked(self) -> bool:
        te = self.tokens("transfer-encoding")
        return bool(te) and te[-1] == "chunked"

    def content_length(self) -> int | None:
        value = self.get("content-length")
        if value is None:
            return None
        # Duplicate identical Content-Length values arrive joined as "n, n".
        values = {v.strip() for v in value.split(",")}
        if len(values) != 1 or not next(iter(values)).isdigit():
            raise _ProtocolError(f"bad Content-Length {value!r}")
        return int(values.pop())

    def keep_alive(self) -> bool:
        conn = self.tokens("connection")
        if self.version == "HTTP/1.0":
            return "keep-alive" in conn
        return "close" not in conn


def _pump_body(
    src: _Reader,
    head: _Head,
    has_body: bool,
    framing: Callable[[bytes], None],
    payload: Callable[[bytes], None],
    until_close_ok: bool,
) -> bool:
    """Stream one message body from ``src``; return False if it was delimited by EOF.

    Chunk-size lines and trailers go to ``framing``, data bytes to ``payload``, so a
    corruption fault flips only data and a chunked body keeps valid framing.
    """
    if not has_body:
        return True
    if head.chunked():
        while True:
            line = src.read_line()
            framing(line)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError as exc:
                raise _ProtocolError(f"bad chunk size line {line!r}") from exc
            if size == 0:
                while True:  # trailers, ended by an empty line
                    trailer = src.read_line()
                    framing(trailer)
                    if trailer in (b"\r\n", b"\n"):
                        return True
            remaining = size
            while remaining:
                data = src.read_some(min(remaining, _BLOCK))
                remaining -= len(data)
                payload(data)
            crlf = src.read_line()
            framing(crlf)
    length = head.content_length()
    if length is not None:
        remaining = length
        while remaining:
            data = src.read_some(min(remaining, _BLOCK))
            remaining -= len(data)
            payload(data)
        return True
    if not until_close_ok:  # a request without length has no body (RFC 9112 6.3)
        return True
    for data in src.read_to_eof():
        payload(data)
    return False


def _request_has_body(head: _Head) -> bool:
    return head.chunked() or bool(head.content_length())


def _s3_error(status: int, code: str, message: str, resource: str, close: bool, head_only: bool) -> bytes:
    """An S3-shaped XML error response, so SDKs parse the error code (and retry on 503)."""
    request_id = uuid.uuid4().hex[:16].upper()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<Resource>{_xml_escape(resource)}</Resource><RequestId>{request_id}</RequestId></Error>"
    ).encode()
    reason = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/xml\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"x-amz-request-id: {request_id}\r\n"
        f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime())}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    ).encode()
    return head if head_only else head + body


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_ERRORS = {
    "error": (500, "InternalError", "We encountered an internal error. Please try again."),
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
}


# --------------------------------------------------------------------------- fault choice


@dataclass
class _Forced:
    kind: str
    remaining: int
    methods: frozenset[str] | None
    pattern: re.Pattern[str] | None
    query: re.Pattern[str] | None = None

    def matches(self, method: str, path: str, query: str = "") -> bool:
        return (self.methods is None or method in self.methods) and (
            self.pattern is None or self.pattern.search(path) is not None
        ) and (self.query is None or self.query.search(query) is not None)


@dataclass
class _Decision:
    kind: str | None
    rng: random.Random  # per-request RNG for the fault's details (which bytes, ...)
    stall_seconds: float = 30.0
    number: int = 0  # the request's sequence number, for the fault log


@dataclass
class _Stats:
    requests: int = 0
    #: requests by kind: the method, or ``LIST`` for a GET that lists (``list-type=``)
    by_kind: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=lambda: {k: 0 for k in FAULT_KINDS})


# --------------------------------------------------------------------------- the proxy


class S3Proxy:
    """A threaded HTTP/1.1 proxy adding per-request delay and injected faults.

    ``delay`` is the whole round trip added to each request, slept once when the request
    head has arrived and before it is forwarded (a real network spends it half on the way
    in, half on the way out; the client cannot tell the difference for one request).
    """

    def __init__(
        self,
        upstream: tuple[str, int],
        delay: float = 0.020,
        faults: FaultPlan | None = None,
        listen: tuple[str, int] = ("127.0.0.1", 0),
    ) -> None:
        self.upstream = (upstream[0], int(upstream[1]))
        self._delay = float(delay)
        self._listen_addr = listen
        self._lock = threading.Lock()
        self._plan: FaultPlan | None = None
        self._plan_rng = random.Random(0)
        self._plan_pattern: re.Pattern[str] | None = None
        self._forced: list[_Forced] = []
        self._forced_serial = 0
        self._stats = _Stats()
        #: One entry per fault actually injected: (request number, method, path, kind).
        self.fault_log: list[tuple[int, str, str, str]] = []
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._conns: set[_Connection] = set()
        self._threads: set[threading.Thread] = set()
        self.set_faults(faults)

    # ----------------------------------------------------------------- public API

    def start(self) -> None:
        """Bind, listen and serve in background threads; return once listening."""
        if self._listener is not None:
            raise RuntimeError("proxy already started")
        self._stop.clear()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(self._listen_addr)
        listener.listen(512)
        self._listener = listener
        self._accept_thread = threading.Thread(target=self._accept_loop, name="s3proxy-accept", daemon=True)
        self._accept_thread.start()
        log.info("s3proxy listening on %s -> %s:%d", self.url, *self.upstream)

    @property
    def address(self) -> tuple[str, int]:
        if self._listener is None:
            raise RuntimeError("proxy not started")
        host, port = self._listener.getsockname()[:2]
        return host, port

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    @property
    def delay(self) -> float:
        return self._delay

    def set_delay(self, seconds: float) -> None:
        """Change the per-request round trip; applies to requests arriving from now on."""
        if seconds < 0:
            raise ValueError("delay must be >= 0")
        self._delay = float(seconds)

    def set_faults(self, plan: FaultPlan | None) -> None:
        """Replace the random fault plan and restart its RNG from ``plan.seed``."""
        with self._lock:
            self._plan = plan
            self._plan_rng = random.Random(plan.seed if plan else 0)
            self._plan_pattern = re.compile(plan.key_pattern) if plan and plan.key_pattern else None

    def force(
        self,
        kind: str,
        count: int = 1,
        methods: Iterable[str] | None = None,
        key_pattern: str | None = None,
        query_pattern: str | None = None,
    ) -> None:
        """Give fault ``kind`` to the next ``count`` requests matching ``methods``/``key_pattern``
        (searched in the request's path) and ``query_pattern`` (in its raw query string:
        ``start-after=`` picks one key range of a LIST).

        The filters are this call's own (None = any request), independent of the random
        plan's. Forced faults take precedence over the random plan and are consumed in
        the order they were forced. A forced stall lasts the plan's ``stall_seconds``
        (30 s without a plan). A forced ``corrupt`` that meets an empty response body
        is used up without effect and not counted in ``stats``; force it on GETs. A forced
        ``no_etag`` forwards the response with its ETag header empty (force it on HEADs).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        if count <= 0:
            return
        forced = _Forced(
            kind,
            count,
            frozenset(m.upper() for m in methods) if methods is not None else None,
            re.compile(key_pattern) if key_pattern else None,
            re.compile(query_pattern) if query_pattern else None,
        )
        with self._lock:
            self._forced.append(forced)

    def clear_forced(self) -> None:
        """Drop every pending forced fault."""
        with self._lock:
            self._forced.clear()

    @property
    def stats(self) -> dict:
        """A snapshot: ``{"requests": n, "faults": {"error": n, ...}, "by_kind": {"LIST": n, "GET": n, ...}}``."""
        with self._lock:
            return {"requests": self._stats.requests, "faults": dict(self._stats.faults),
                    "by_kind": dict(self._stats.by_kind)}

    def reset_stats(self) -> None:
        with self._lock:
            self._stats = _Stats()
            self.fault_log = []

    def stop(self) -> None:
        """Close the listener and every connection, and join all threads."""
        self._stop.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
            except OSError:
                pass
            listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
            self._accept_thread = None
        with self._lock:
            conns = list(self._conns)
            threads = list(self._threads)
        for conn in conns:
            conn.abort()
        for thread in threads:
            thread.join(timeout=5)

    def __enter__(self) -> "S3Proxy":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- internals

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._stop.is_set():
            try:
                sock, _ = listener.accept()
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.01)  # EMFILE and friends: don't spin
                continue
            conn = _Connection(self, sock)
            thread = threading.Thread(target=self._run_conn, args=(conn,), name="s3proxy-conn", daemon=True)
            with self._lock:
                if self._stop.is_set():
                    sock.close()
                    return
                self._conns.add(conn)
                self._threads.add(thread)
            thread.start()

    def _run_conn(self, conn: "_Connection") -> None:
        try:
            conn.run()
        finally:
            with self._lock:
                self._conns.discard(conn)
                self._threads.discard(threading.current_thread())

    def _decide(self, method: str, path: str, query: str = "") -> _Decision:
        """Count the request and pick its fault (or None) under the lock."""
        with self._lock:
            self._stats.requests += 1
            number = self._stats.requests
            kind_of = "LIST" if method == "GET" and "list-type=" in query else method
            self._stats.by_kind[kind_of] = self._stats.by_kind.get(kind_of, 0) + 1
            plan = self._plan
            kind: str | None = None
            detail_seed: int | None = None
            if plan is not None and (plan.methods is None or method in plan.methods) and (
                self._plan_pattern is None or self._plan_pattern.search(path) is not None
            ):
                # Always three draws per eligible request, so the sequence for a seed does
                # not depend on which faults were chosen or forced.
                u, half, detail_seed = self._plan_rng.random(), self._plan_rng.random(), self._plan_rng.getrandbits(64)
                edge = 0.0
                for name, rate in (
                    ("error", plan.error_rate),
                    ("reset", plan.reset_rate),
                    ("stall", plan.stall_rate),
                    ("truncate", plan.truncate_rate),
                    ("corrupt", plan.corrupt_rate),
                ):
                    edge += rate
                    if u < edge:
                        kind = name
                        break
                if kind == "error" and half >= 0.5:
                    kind = "slowdown"
            for forced in self._forced:
                if forced.matches(method, path, query):
                    kind = forced.kind
                    forced.remaining -= 1
                    if forced.remaining == 0:
                        self._forced.remove(forced)
                    break
            if detail_seed is None:
                self._forced_serial += 1
                detail_seed = self._forced_serial
            if kind is not None and kind != "corrupt":  # corrupt is counted once bytes flip
                self._record(number, method, path, kind)
            stall = plan.stall_seconds if plan is not None else FaultPlan.stall_seconds
            return _Decision(kind, random.Random(detail_seed), stall, number)

    def _record(self, number: int, method: str, path: str, kind: str) -> None:
        # Caller holds the lock, or takes it (corrupt is recorded from a connection thread).
        self._stats.faults[kind] += 1
        self.fault_log.append((number, method, path, kind))

    def _record_locked(self, number: int, method: str, path: str, kind: str) -> None:
        with self._lock:
            self._record(number, method, path, kind)


class _Connection:
    """One client connection and its (lazily opened) upstream connection."""

    def __init__(self, proxy: S3Proxy, sock: socket.socket) -> None:
        self.proxy = proxy
        self.csock = sock
        # Without NODELAY, a head and its body sent in two writes meet the peer's delayed
        # ACK and cost 40 ms -- more than the latency we are trying to simulate.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.creader = _Reader(sock)
        self.usock: socket.socket | None = None
        self.ureader: _Reader | None = None
        self._aborted = False

    # ----------------------------------------------------------------- lifecycle

    def abort(self) -> None:
        """Called from ``stop()``: unblock this connection's thread wherever it waits."""
        self._aborted = True
        for sock in (self.csock, self.usock):
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _close_upstream(self) -> None:
        if self.usock is not None:
            try:
                self.usock.close()
            except OSError:
                pass
        self.usock = self.ureader = None

    def _close(self) -> None:
        self._close_upstream()
        try:
            self.csock.close()
        except OSError:
            pass

    def _reset(self) -> None:
        """Close the client socket abruptly: SO_LINGER 0 makes close() send a RST."""
        try:
            self.csock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self._close()

    def run(self) -> None:
        try:
            while not self.proxy._stop.is_set():
                if not self._one_request():
                    break
        except (OSError, _PeerClosed, _Truncated) as exc:
            if not self._aborted:
                log.debug("connection ended: %r", exc)
        except _ProtocolError as exc:
            log.warning("protocol error, closing connection: %s", exc)
        except Exception:  # a bug here must not kill the proxy, only this connection
            log.exception("s3proxy connection failed")
        finally:
            self._close()

    # ----------------------------------------------------------------- one exchange

    def _one_request(self) -> bool:
        """Serve one request; return whether the client connection stays open."""
        raw = self.creader.read_head()
        if raw is None:
            return False
        req = _Head.parse(raw)
        parts = req.start.split(" ")
        if len(parts) != 3:
            raise _ProtocolError(f"bad request line {req.start!r}")
        method, target = parts[0].upper(), parts[1]
        path = unquote(urlsplit(target).path)
        decision = self.proxy._decide(method, path, urlsplit(target).query)
        kind = decision.kind

        if self.proxy._stop.wait(self.proxy.delay):  # the per-request round trip
            return False

        if kind in ("error", "slowdown"):
            return self._reply_error(req, method, path, kind)
        if kind == "reset":
            self._reset()
            return False
        if kind == "stall":
            # Hold the request without answering; the client's read timeout should fire
            # first. stop() cuts the wait short.
            self.proxy._stop.wait(decision.stall_seconds)
            return False
        return self._forward(req, method, path, decision)

    def _reply_error(self, req: _Head, method: str, path: str, kind: str) -> bool:
        status, code, message = _ERRORS[kind]
        expect = "100-continue" in req.tokens("expect") and _request_has_body(req)
        # With Expect: 100-continue the client waits for our answer and never sends the
        # body, so the body framing on this connection is unknown: close it. Otherwise
        # read and drop the body to keep the keep-alive connection usable.
        keep = req.keep_alive() and not expect
        if not expect:
            _pump_body(self.creader, req, _request_has_body(req), _drop, _drop, until_close_ok=False)
        self.csock.sendall(_s3_error(status, code, message, path, close=not keep, head_only=method == "HEAD"))
        return keep

    def _connect_upstream(self) -> None:
        sock = socket.create_connection(self.proxy.upstream, timeout=_CONNECT_TIMEOUT)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.usock, self.ureader = sock, _Reader(sock)

    def _upstream_is_stale(self) -> bool:
        """An idle upstream connection that is readable was closed by the server."""
        assert self.usock is not None and self.ureader is not None
        if self.ureader.buffered():
            return True
        readable, _, _ = select.select([self.usock], [], [], 0)
        return bool(readable)

    def _forward(self, req: _Head, method: str, path: str, decision: _Decision) -> bool:
        has_body = _request_has_body(req)
        expect = "100-continue" in req.tokens("expect") and has_body

        # Send the head, reconnecting once if a reused keep-alive connection turned out
        # to be dead (the server may close idle connections at any time).
        for attempt in (0, 1):
            if self.usock is not None and self._upstream_is_stale():
                self._close_upstream()
            fresh = self.usock is None
            try:
                if fresh:
                    self._connect_upstream()
                assert self.usock is not None
                self.usock.sendall(req.raw)
                break
            except OSError as exc:
                self._close_upstream()
                if fresh or attempt == 1:
                    return self._bad_gateway(req, method, path, f"upstream unreachable: {exc}")
        reused = not fresh
        usock, ureader = self.usock, self.ureader
        assert usock is not None and ureader is not None

        body_sent = not has_body
        if has_body and not expect:
            self._pump_request_body(req)
            body_sent = True

        # Read the response, forwarding interim (1xx) responses. With Expect, the client
        # may also give up waiting for 100 Continue and send the body unasked.
        while True:
            if not body_sent and not ureader.buffered():
                if self.creader.buffered():
                    self._pump_request_body(req)
                    body_sent = True
                    continue
                readable, _, _ = select.select([self.csock, usock], [], [])
                if usock not in readable:
                    self._pump_request_body(req)
                    body_sent = True
                    continue
            try:
                raw = ureader.read_head()
            except (OSError, _PeerClosed):
                raw = None
            if raw is None:
                if reused and not has_body:
                    # The server dropped the idle connection just as we reused it; a
                    # request without a body can safely be sent again on a new one.
                    reused = False
                    self._close_upstream()
                    try:
                        self._connect_upstream()
                        assert self.usock is not None and self.ureader is not None
                        self.usock.sendall(req.raw)
                    except OSError as exc:
                        return self._bad_gateway(req, method, path, f"upstream unreachable: {exc}")
                    usock, ureader = self.usock, self.ureader
                    continue
                return self._bad_gateway(req, method, path, "upstream closed the connection")
            resp = _Head.parse(raw)
            try:
                status = int(resp.start.split(" ", 2)[1])
            except (IndexError, ValueError) as exc:
                raise _ProtocolError(f"bad status line {resp.start!r}") from exc
            if 100 <= status < 200:
                if status == 101:
                    raise _ProtocolError("protocol upgrades are not supported")
                self.csock.sendall(raw)
                if status == 100 and not body_sent:
                    self._pump_request_body(req)
                    body_sent = True
                continue
            break

        resp_has_body = method != "HEAD" and status not in (204, 304)
        keep_up = resp.keep_alive() and body_sent
        keep_client = req.keep_alive() and resp.keep_alive() and body_sent
        if resp_has_body and not resp.chunked() and resp.content_length() is None:
            keep_up = keep_client = False  # body delimited by EOF

        out = _ResponseWriter(self, decision, method, path, resp)
        try:
            out.head(raw, resp_has_body)
            _pump_body(ureader, resp, resp_has_body, out.framing, out.payload, until_close_ok=True)
            out.finish()
        except _Truncated:
            self._close()  # the rest of the upstream response is unread: drop it too
            raise
        if not keep_up:
            self._close_upstream()
        return keep_client

    def _pump_request_body(self, req: _Head) -> None:
        usock = self.usock
        assert usock is not None
        _pump_body(self.creader, req, True, usock.sendall, usock.sendall, until_close_ok=False)

    def _bad_gateway(self, req: _Head, method: str, path: str, why: str) -> bool:
        log.warning("502 for %s %s: %s", method, path, why)
        self._close_upstream()
        self.csock.sendall(
            _s3_error(502, "BadGateway", _xml_escape(why), path, close=True, head_only=method == "HEAD")
        )
        return False


def _drop(_: bytes) -> None:
    pass


class _ResponseWriter:
    """Sends one response to the client, applying a truncate or corrupt fault."""

    def __init__(self, conn: _Connection, decision: _Decision, method: str, path: str, resp: _Head) -> None:
        self.conn = conn
        self.sock = conn.csock
        self.kind = decision.kind if decision.kind in ("truncate", "corrupt", "no_etag") else None
        self.rng = decision.rng
        self.number = decision.number
        self.method, self.path = method, path
        self.offset = 0  # payload bytes seen so far
        length = resp.content_length() if not resp.chunked() else None
        self.length = length
        # truncate: deliver half the body (so 0 < sent < length whenever length >= 2).
        self.cut_at: int | None = length // 2 if (self.kind == "truncate" and length) else None
        # corrupt: up to 4 distinct offsets; for bodies of unknown length they are picked
        # inside the first payload block when it arrives.
        self.flips: set[int] | None = None
        if self.kind == "corrupt" and length:
            self.flips = set(self.rng.sample(range(length), min(4, length)))
        self.flipped = 0

    def head(self, raw: bytes, has_body: bool) -> None:
        body_expected = has_body and (self.length is None or self.length > 0)
        if self.kind == "truncate" and not body_expected:
            # No body to cut (HEAD, empty PUT response): cut the head itself instead,
            # inside the status line -- clients (http.client among them) take EOF between
            # header lines as the end of a complete head, so a later cut goes unnoticed.
            self.sock.sendall(raw[: raw.index(b"\r\n") // 2])
            raise _Truncated("head cut")
        if self.kind == "no_etag":
            # What the embedded server answers for an object whose PUT was cut off: the
            # object is there, its ETag empty (forced only: not part of the random plan).
            raw = re.sub(rb"(?im)^etag:[^\r\n]*\r\n", b"ETag: \r\n", raw)
        self.sock.sendall(raw)

    def framing(self, data: bytes) -> None:
        self.sock.sendall(data)

    def payload(self, data: bytes) -> None:
        start, n = self.offset, len(data)
        self.offset += n
        if self.kind == "truncate":
            cut = self.cut_at if self.cut_at is not None else start + n // 2
            if start + n > cut:
                if cut > start:
                    self.sock.sendall(data[: cut - start])
                raise _Truncated(f"body cut at {cut}")
        elif self.kind == "corrupt" and n:
            if self.flips is None:
                self.flips = {start + i for i in self.rng.sample(range(n), min(4, n))}
            hits = [p - start for p in self.flips if start <= p < start + n]
            if hits:
                buf = bytearray(data)
                for i in hits:
                    buf[i] ^= 0xFF  # always changes the byte
                data = bytes(buf)
                self.flipped += len(hits)
        self.sock.sendall(data)

    def finish(self) -> None:
        if self.kind == "corrupt" and self.flipped:
            self.conn.proxy._record_locked(self.number, self.method, self.path, "corrupt")
        # A corrupt fault on an empty body changes nothing and is not counted.


# --------------------------------------------------------------------------- CLI


def _hostport(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> int:
    """Run the proxy in the foreground until SIGINT/SIGTERM; print stats on exit."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.s3proxy", description=__doc__.split("\n\n")[0])
    p.add_argument("--upstream", type=_hostport, required=True, help="S3 server HOST:PORT")
    p.add_argument("--listen", type=_hostport, default=("127.0.0.1", 0), help="HOST:PORT (default: free port)")
    p.add_argument("--delay-ms", type=float, default=20.0, help="round trip added per request (default 20)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--error-rate", type=float, default=0.0, help="500 InternalError / 503 SlowDown")
    p.add_argument("--reset-rate", type=float, default=0.0)
    p.add_argument("--stall-rate", type=float, default=0.0)
    p.add_argument("--stall-seconds", type=float, default=30.0)
    p.add_argument("--truncate-rate", type=float, default=0.0)
    p.add_argument("--corrupt-rate", type=float, default=0.0)
    p.add_argument("--methods", help="comma-separated HTTP methods eligible for faults (default all)")
    p.add_argument("--key-pattern", help="regex on the request path eligible for faults (default all)")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(message)s")

    rates = (args.error_rate, args.reset_rate, args.stall_rate, args.truncate_rate, args.corrupt_rate)
    plan = None
    if any(rates):
        plan = FaultPlan(
            seed=args.seed,
            error_rate=args.error_rate,
            reset_rate=args.reset_rate,
            stall_rate=args.stall_rate,
            stall_seconds=args.stall_seconds,
            truncate_rate=args.truncate_rate,
            corrupt_rate=args.corrupt_rate,
            methods=frozenset(m.strip() for m in args.methods.split(",")) if args.methods else None,
            key_pattern=args.key_pattern,
        )
    proxy = S3Proxy(args.upstream, delay=args.delay_ms / 1000.0, faults=plan, listen=args.listen)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    proxy.start()
    print(f"s3proxy {proxy.url} -> {args.upstream[0]}:{args.upstream[1]} delay {args.delay_ms} ms", flush=True)
    while not done.wait(0.5):  # short waits keep the main thread responsive to signals
        pass
    proxy.stop()
    print(f"s3proxy stats: {proxy.stats}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
