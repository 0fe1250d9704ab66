"""Check that the delay proxy costs one round trip per request: a plain boto3 GET.

    python -m benchmarks.proxy_check [--rtt-ms 20] [--n 20] [--size 1024]

Starts the embedded S3 server (``rclone serve s3``), puts one small object, then times
``n`` GETs of it straight to the server and ``n`` through :class:`benchmarks.s3proxy.S3Proxy`
(each client warmed up first, so connection set-up is not counted) and prints the medians.
Proxied minus direct should be about the configured RTT: the proxy adds one delay per
request, not per byte or per packet. Exits non-zero if the added latency is off by more
than ``--tolerance-ms`` (default 5 ms, or 25 % of the RTT if larger).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import boto3
import botocore.config

from brainfs.backend.config import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from brainfs.backend.server import LocalS3

from benchmarks.s3proxy import S3Proxy

BUCKET, KEY = "proxycheck", "small.bin"


def client(endpoint: str):
    cfg = botocore.config.Config(retries={"total_max_attempts": 1},
                                 s3={"addressing_style": "path"},
                                 response_checksum_validation="when_required",
                                 request_checksum_calculation="when_required")
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", config=cfg,
        aws_access_key_id=DEFAULT_ACCESS_KEY, aws_secret_access_key=DEFAULT_SECRET_KEY)


def time_gets(s3, n: int, size: int) -> list[float]:
    for _ in range(3):  # warm-up: TCP connection, botocore's lazy set-up
        s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        body = s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read()
        out.append(time.perf_counter() - t0)
        if len(body) != size:
            raise SystemExit(f"GET returned {len(body)} bytes, expected {size}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.proxy_check",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--rtt-ms", type=float, default=20.0)
    p.add_argument("--n", type=int, default=20, help="GETs per path (default 20)")
    p.add_argument("--size", type=int, default=1024, help="object size in bytes (default 1024)")
    p.add_argument("--tolerance-ms", type=float, default=None)
    args = p.parse_args(argv)
    tolerance = args.tolerance_ms if args.tolerance_ms is not None else max(5.0, 0.25 * args.rtt_ms)

    with tempfile.TemporaryDirectory(prefix="brainfs-proxycheck-") as tmp:
        server = LocalS3(Path(tmp) / "s3").start()
        proxy = S3Proxy(("127.0.0.1", server.port), delay=args.rtt_ms / 1000.0)
        try:
            proxy.start()
            direct = client(server.url)
            direct.create_bucket(Bucket=BUCKET)
            direct.put_object(Bucket=BUCKET, Key=KEY, Body=bytes(range(256)) * (args.size // 256)
                              + b"x" * (args.size % 256))
            d = time_gets(direct, args.n, args.size)
            before = proxy.stats["requests"]
            q = time_gets(client(proxy.url), args.n, args.size)
            requests = proxy.stats["requests"] - before
        finally:
            proxy.stop()
            server.stop()

    dm, qm = statistics.median(d) * 1000, statistics.median(q) * 1000
    added = qm - dm
    print(f"GET of a {args.size}-byte object, median of {args.n} (after 3 warm-up GETs each):")
    print(f"  direct to rclone serve s3 : {dm:7.2f} ms  (min {min(d) * 1000:.2f}, max {max(d) * 1000:.2f})")
    print(f"  through the proxy         : {qm:7.2f} ms  (min {min(q) * 1000:.2f}, max {max(q) * 1000:.2f})")
    print(f"  added by the proxy        : {added:7.2f} ms  (configured RTT {args.rtt_ms:g} ms; "
          f"{requests} requests seen by the proxy for {args.n + 3} GETs)")
    ok = abs(added - args.rtt_ms) <= tolerance and requests == args.n + 3
    print("OK: one GET costs one round trip" if ok else
          f"UNEXPECTED: added latency differs from the RTT by more than {tolerance:g} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
