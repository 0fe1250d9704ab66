"""``brainfs demo``: the main job end to end on the embedded default.

Starts a local S3 server (rclone serve s3, in the background, its PID in ``.demo/s3.pid``),
writes the sample memory, imports and indexes it, mounts it at ``./memory`` and shows an
``ls``, a ``grep -r``, a ``cat`` of a path that was not local yet, and a recall.
``brainfs demo --stop`` unmounts and stops the server by its PID.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.server import serve_command, serve_env, wait_for_port
from brainfs.fs.fusectl import is_mountpoint
from brainfs.fs.process import pid_alive

# The sample generator (tools/) is imported when the demo runs, never when the product loads
# (tests/test_layout.py); _try_index imports the search stack only to learn that it is there.

STATE = Path(".demo")
CORPUS = "s3://memory/demo"


def _show(cmd: str, cwd: Path | None = None) -> None:
    print(f"\n$ {cmd}", flush=True)
    subprocess.run(cmd, shell=True, cwd=cwd, check=False)


def _typed(args: tuple[str, ...]) -> str:
    """The command as the user would type it."""
    return shlex.join(["brainfs", *args])


def _brainfs(*args: str, show: bool = True, check: bool = True) -> int:
    """Run ``brainfs ARGS`` with this interpreter (the command may not be on $PATH) and
    show it as the user would type it."""
    if show:
        print(f"\n$ {_typed(args)}", flush=True)
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], check=False)
    if check and r.returncode != 0:
        raise SystemExit(r.returncode)
    return r.returncode


def start_server(port: int) -> None:
    """Start (or reuse) the demo's S3 server."""
    pidfile = STATE / "s3.pid"
    if pidfile.exists() and pid_alive(int(pidfile.read_text())):
        return
    try:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
    except OSError as e:
        raise SystemExit(f"brainfs: error: port {port} is busy ({e.strerror}); run "
                         f"`brainfs demo --port OTHER`") from None
    STATE.mkdir(exist_ok=True)
    log = open(STATE / "s3.log", "ab")
    cfg = Config.load()
    proc = subprocess.Popen(serve_command(STATE / "s3", "127.0.0.1", port, cfg),
                            env=serve_env(cfg), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            start_new_session=True)
    (STATE / "s3").mkdir(exist_ok=True)
    pidfile.write_text(str(proc.pid))
    wait_for_port("127.0.0.1", port, 15.0, proc)
    print(f"started the embedded S3 server (rclone serve s3, pid {proc.pid}) on port {port}")


def stop(mountpoint: Path) -> int:
    """Unmount the demo mount (the one the demo made, wherever it is, and ``mountpoint``)
    and stop the demo's S3 server by its PID."""
    did = False
    made = STATE / "mountpoint"
    mps = [mountpoint] + ([Path(made.read_text())] if made.exists() else [])
    for mp in dict.fromkeys(p.resolve() for p in mps):
        if is_mountpoint(mp):
            code = _brainfs("umount", str(mp), show=False, check=False)
            if code not in (0, 75):
                # Still mounted (busy, or its daemon hung): the server it reads must stay.
                raise SystemExit(code)
            did = True
    made.unlink(missing_ok=True)
    pidfile = STATE / "s3.pid"
    if pidfile.exists():
        pid = int(pidfile.read_text())
        if pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            for _ in range(200):
                if not pid_alive(pid):
                    break
                time.sleep(0.05)
            if pid_alive(pid):
                print(f"brainfs: error: the S3 server (pid {pid}) did not stop", file=sys.stderr)
                return 1
            print(f"stopped the S3 server (pid {pid})")
            did = True
        pidfile.unlink()
    if not did:
        print(f"no demo running here ({STATE.resolve()}): nothing to stop")
    return 0


def run(mountpoint: Path, port: int, size: str) -> int:
    """The whole demo."""
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    os.environ.setdefault("BRAINFS_CACHE_DIR", str((STATE / "cache").resolve()))
    mounted = is_mountpoint(mountpoint)
    if not mounted and mountpoint.is_dir() and any(mountpoint.iterdir()):
        # Said before anything starts: the mount would refuse it after all the work.
        raise SystemExit(f"brainfs: error: {mountpoint} is not empty; give the demo another "
                         f"directory: brainfs demo DIR")
    start_server(port)  # before unmounting: a busy port must not leave the user without a mount
    if mounted:
        _brainfs("umount", str(mountpoint), show=False)
    print(f"\n$ export AWS_ENDPOINT_URL=http://127.0.0.1:{port}    # the embedded S3 server",
          flush=True)
    sample = STATE / f"sample-{size}"
    if not sample.exists():
        _brainfs("sample", str(sample), "--size", size)
    _brainfs("import", str(sample), CORPUS)
    has_index = _try_index()
    if not mountpoint.exists():
        print(f"\n$ mkdir {shlex.quote(str(mountpoint))}", flush=True)
        mountpoint.mkdir(parents=True)
    _brainfs("mount", CORPUS, str(mountpoint))
    (STATE / "mountpoint").write_text(str(mountpoint.resolve()))  # what --stop unmounts
    mp = shlex.quote(str(mountpoint))
    _show(f"ls {mp} {mp}/knowledge | head -20")
    from brainfs.tools.sample import RARE_WORD

    _show(f"grep -rl {RARE_WORD} {mp} | head -5")
    old = _oldest_transcript(sample)
    _show(f"ls {mp}/{old.rsplit('/', 1)[0]}    # not in the working set yet")
    _show(f"head -5 {mp}/{old}    # materialized on the spot")
    _show(f"ls {mp}/{old.rsplit('/', 1)[0]}")
    if has_index:
        _show(f"cat {mp}/'.recall/which organizations did I meet in Kyoto' | head -30")
    _brainfs("status", str(mountpoint), check=False)
    print(f"\nThe memory stays mounted at {mountpoint}; `brainfs demo --stop` unmounts it and "
          f"stops the S3 server.")
    return 0


def _try_index() -> bool:
    try:
        import brainfs.cache.search.index  # noqa: F401
    except ImportError:
        return False
    return _brainfs("index", CORPUS, check=False) == 0


def _oldest_transcript(sample: Path) -> str:
    transcripts = sorted(p.relative_to(sample).as_posix()
                         for p in (sample / "sessions").glob("*/transcript.md"))
    return transcripts[0]
