"""Randomized crash harness (issue 13): kill -9 the mount at random moments and check that
every closed file survives, nothing is torn, nothing deleted comes back, and a second
writer's version is never dropped without a conflict copy.

    python -m benchmarks.crash_harness --cycles 200 --seed 1 --target both \\
        --out benchmarks/results

What one cycle does
-------------------
1. Picks a random operation (seeded) on the workspace ``w/`` of a corpus, through mount A:
   create+write, overwrite (``O_TRUNC``), overwrite as a shell's ``cmd > f`` does it
   (``overwrite_held``: the first descriptor closed after a ``dup``, the write through the
   second 0.05-1.5 s later), append (``O_APPEND``), truncate (``ftruncate``),
   rename of a file (to a free name, or over an existing one: the editor's "write
   ``NAME.tmp``, then rename over ``NAME``"), rename of a directory tree (sometimes with a
   subdirectory), unlink, a write through a shared ``mmap`` with no ``msync`` (a patch in
   place or a rewrite to a new size; the descriptor closed before or after the ``munmap``;
   ``--no-mmap`` leaves it out). Sizes 0 B to ``--max-size`` (5 MB). Every write ends with
   ``fsync`` and ``close``; a rename or unlink with an ``fsync`` of the directory.
   About one cycle in ten works on symbolic links (brainfs only, ``--no-links`` to leave
   them out): make a link (a relative target to an existing file, or dangling), rename a
   link (to a free name, over a file, over another link), rename a file over a link,
   unlink a link; links in a directory go with its tree when it is renamed.
   In a "shared" cycle a second mount B (its own cache dir, never killed) overwrites the
   same file of ``w/s/`` at the same moment as A writes, truncates or unlinks it. In a
   ``removed_open`` cycle B deletes or renames a file A holds open and is writing; A
   writes on until its relist has seen that, then finishes and closes: A's bytes must
   be at the path afterwards, B's renamed file at its new name (fs/SEMANTICS.md).
2. kill -9 of A's daemon (for rclone: of the ``rclone mount`` process) at a random moment:
   half of the cycles while the operation runs, half 0-1.5 s after its last ``close``
   (mostly in the first 150 ms, while its upload is in flight). Then ``fusermount3 -u -z``.
   The mounts reach S3 through a forwarder that holds every reply ``--reply-delay-ms``
   (20 ms): a PUT lands at once and the mount hears of it later, so kills fall between
   an upload landing and the mount recording it, not only before or after both.
3. Remount A with the same cache dir, wait until A and B have no pending uploads
   (brainfs: ``.brainfs/status``; rclone: ``vfs/stats`` over its remote control).
4. Reads the whole workspace through A ("mount" view) and straight from the bucket
   ("bucket" view: what any fresh cache would get); every ``--fresh-every`` cycles (and
   after the last) also through a new mount with an empty cache dir ("fresh" view).
   Each view is judged against the model (below); A's view then becomes the model of the
   next cycle, so one defect is counted once. A link is read with ``lstat`` and
   ``readlink``, never followed; in the bucket it is the object ``NAME.brainfs-link``
   whose bytes are the target.

The model
---------
An operation is a sequence of steps (an atomic save is two: write ``NAME.tmp``, rename it
over ``NAME``); the harness notes which steps returned before the kill was sent. A
completed step must be visible exactly. A step that returned after the kill was sent is in
flight, whatever it returned: it ran on a dying or dead mount (a kill "during" can land
before the mapping writer's process has even started), where a close that sends no FLUSH
(``--commit quiet``) returns 0 although the mapping's pages never reached the daemon. For a step in flight the tree may be as before it or as after it,
never anything else: never an empty or torn file, for a rename the old name or the new
one but never neither (nor both), for a tree rename the whole tree on one side.
A file that a second writer wrote at the same moment may hold either version as long as
the other version is in a visible ``NAME.conflict-<time>-<host>.EXT`` copy.
``--close-only F`` ends that share of the writes with ``close`` alone (no ``fsync``): a close
that returned is a completed step all the same. ``--commit quiet`` mounts brainfs with its
quiet commits (fs/SEMANTICS.md): a write in flight at the kill may then also be kept as far
as it got, as on a local disk after a crash (counted as ``torn_in_flight``, not a defect);
anything else is judged as above. A write through a mapping killed in flight may leave any
mix of old and new pages, in either mode (fs/SEMANTICS.md: a mapping gives no atomic
version; also ``torn_in_flight``); its close that returned before the kill is a completed
step.
The model holds a symbolic link as its target behind a tag (``link_value``) no file the
harness writes can start with, so a link counts like a file: a link missing is lost, a
wrong or older target, or a file where a link should be (or the reverse), is corrupted, a
link back after its unlink is resurrected, and a name that is both a file and a link in
the bucket is a split (the mount shows one of them).

With ``--pack`` (brainfs only) every cycle takes the preload pack's path (issue 17): the
bucket holds ``--pack-files`` more files under ``w/p/`` (the "ballast", part of the model, so
most operations land on them); before each operation mount A is stopped cleanly, the pack is
rebuilt from the bucket, in a share ``--pack-stale`` of the cycles another writer changes one
of the packed files (straight in the bucket, or through mount B) after the pack was built,
the listing snapshot is removed in some cycles (a real LIST then lists the mount), and A
mounts again with an empty cache: its files are listed from the pack and written to the
cache in the background while the operation runs and the kill lands (``kills while
unpacking`` counts the kills that fell before the unpacking ended). The remount after the
kill takes the same cache and unpacks what is left. A packed file another writer changed is
read right after the mount: anything but the new content (or one EIO, then it) is
``stale_served``; an operation on it (half those cycles) must be based on the new content.
Three operations join in this mode: ``recreate`` (unlink a file, then create it anew), a
truncation by path (``truncate(2)``, a setattr with no open), and ``unlink_open`` (open a
file, unlink it, read it whole through the descriptor: anything but its content is an
operation error).

Numbers per target: cycles, files lost, files corrupted (torn, empty, an older version or
wrong bytes), files resurrected (a deleted or renamed-away path back), renames split (a
tree partly under each name), conflict copies without a second writer, second-writer
versions lost without a conflict copy, mount/bucket disagreements after settling, hung
kills, operation errors (an errno other than the kill's ENOTCONN). Every defect is listed
with its cycle, operation, where the kill landed, what each view held, and the log lines
of the two daemons that name the path.

Outputs ``<out>/crash-<cycles>-seed<seed>.md`` and ``.json``. Exit status 0 when every
defect count is 0, 1 when the harness found defects, 2 when the harness itself failed.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import platform
import posixpath
import random
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from brainfs.backend.config import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from brainfs.backend.server import LocalS3, free_port, rclone_binary

from benchmarks.grep_bench import fuse_unmount, is_mounted, mounts_under, stop_pid

try:  # the object that keeps a directory alive in the bucket (brainfs's name; rclone has none)
    from brainfs.cache.local.workingset import DIR_MARKER
except ImportError:
    DIR_MARKER = ".brainfs-dir"
WS = "w"  # the harness's workspace in the corpus
SHARED = f"{WS}/s"  # the files the second writer writes too
SHARED_FILES = tuple(f"{SHARED}/f{i}.md" for i in range(3))
try:  # the suffix of the object that holds a symbolic link (brainfs's name)
    from brainfs.backend.keys import LINK_SUFFIX
except ImportError:
    LINK_SUFFIX = ".brainfs-link"
#: How the model and the views hold a symbolic link: this tag, then the target. Every file
#: the harness writes starts with ``#`` (its header) or is empty or zeros (a truncation),
#: so no file's bytes can equal a link's value.
LINK_TAG = b"\0crash-harness symlink\0"
CONFLICT_RE = re.compile(r"^(?P<root>.*)\.conflict-\d{8}T\d{6,}-[^/.]*(?P<ext>\.[^/]*)?$")
TARGETS = ("brainfs", "rclone")
#: Operations judged as one whole: the touched paths all before or all after.
RENAMES = ("rename", "rename_tree", "atomic_save", "rename_link", "file_over_link")
#: The operations on symbolic links (brainfs only: rclone mount without --links has none).
LINK_OPS = ("symlink", "rename_link", "file_over_link", "unlink_link")
#: The defect counters, in table order (all must be 0).
DEFECTS = ("lost", "corrupted", "resurrected", "renames_split", "conflicts_without_second_writer",
           "other_writer_lost", "mount_bucket_differ", "fresh_differs", "hung_kills",
           "stale_served")
#: --pack: the files only the preload pack brings to a new mount (part of the model)
BALLAST = f"{WS}/p"
#: Counted, not defects: with ``--commit quiet`` a write in flight when the daemon died may
#: be committed as far as it got (a prefix of the new content; for an append, the old content
#: and a prefix of what was appended), as on a local disk after a crash.
INFO = ("torn_in_flight",)
LABELS = {
    "torn_in_flight": "writes in flight kept as far as they got (allowed with --commit quiet; "
                      "through a mapping, in either mode)",
    "lost": "files lost",
    "corrupted": "files corrupted (torn/empty/old/wrong)",
    "resurrected": "files resurrected",
    "renames_split": "renames split or duplicated",
    "conflicts_without_second_writer": "conflict copies without a second writer",
    "other_writer_lost": "two writers: a closed version lost w/o conflict copy",
    "mount_bucket_differ": "mount and bucket disagree after settling",
    "fresh_differs": "fresh cache disagrees with the mount",
    "hung_kills": "kills that left a hung mount",
    "stale_served": "--pack: a packed file another writer changed read old",
}


def _read_from(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def link_value(target: bytes) -> bytes:
    """The model's value of a symbolic link to ``target``."""
    return LINK_TAG + target


def is_link_value(v: bytes | None) -> bool:
    return v is not None and v.startswith(LINK_TAG)


def link_target(v: bytes) -> bytes:
    return v[len(LINK_TAG):]


def show(v: bytes | None) -> str:
    """A value in a report: a file's size, a link's target, or absent."""
    if v is None:
        return "absent"
    if is_link_value(v):
        return f"link -> {link_target(v).decode(errors='replace')!r}"
    return f"{len(v)} B"


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def conflict_base(path: str) -> str | None:
    """The path a conflict copy belongs to (None if ``path`` is not one)."""
    m = CONFLICT_RE.match(path)
    return None if m is None else m.group("root") + (m.group("ext") or "")


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# ============================================================================ reply delay


class ReplyDelay:
    """A TCP forwarder that holds each reply of the S3 server ``delay`` seconds before the
    client gets it. The request reaches the server at once, so a PUT lands and its client
    learns of it only later: a kill in between hits the window where an upload is done in
    the bucket but not yet recorded by the mount (issue 13, item 1), which on loopback
    lasts a millisecond. (``benchmarks.s3proxy`` delays requests, before they land.)"""

    def __init__(self, upstream: tuple[str, int], delay: float) -> None:
        import socket

        self.upstream, self.delay = upstream, delay
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.conns: set = set()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        import socket

        while not self.stopping.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                c.close()
                continue
            u.settimeout(None)
            for s in (c, u):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conns |= {c, u}
            asked = threading.Event()  # a request went up since the last reply began
            threading.Thread(target=self._pump, args=(c, u, asked, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, asked, True), daemon=True).start()

    def _pump(self, src, dst, asked: threading.Event, reply: bool) -> None:
        import socket

        try:
            while True:
                data = src.recv(256 * 1024)
                if not data:
                    break
                if not reply:
                    asked.set()
                elif asked.is_set():  # the first bytes of a reply
                    asked.clear()
                    time.sleep(self.delay)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            src.close()
            self.conns.discard(src)

    def stop(self) -> None:
        self.stopping.set()
        self.sock.close()
        for s in list(self.conns):
            try:
                s.close()
            except OSError:
                pass


# ============================================================================ mounts


@dataclass
class Daemon:
    """One running mount process."""

    proc: subprocess.Popen
    mp: Path
    cache: Path
    log: Path
    log_start: int
    conn: int | None = None  # FUSE connection id (minor of st_dev) for an abort
    rc_port: int | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(self.log_start)
                return f.read().decode(errors="replace")
        except OSError:
            return ""


class Registry:
    """Every process and mount the harness started, stopped by PID in ``close``."""

    def __init__(self) -> None:
        self.daemons: list[Daemon] = []

    def add(self, d: Daemon) -> Daemon:
        self.daemons.append(d)
        return d

    def close(self) -> None:
        for d in self.daemons:
            try:
                if d.alive():
                    d.proc.kill()
                    try:
                        d.proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        abort_connection(d.conn)
            finally:
                fuse_unmount(d.mp)
        self.daemons.clear()


def abort_connection(conn: int | None) -> bool:
    """Abort a FUSE connection whose daemon cannot die (needs the fusectl filesystem)."""
    if conn is None:
        return False
    ctl = Path("/sys/fs/fuse/connections")
    if not (ctl / str(conn)).exists() and os.geteuid() == 0:
        subprocess.run(["mount", "-t", "fusectl", "none", str(ctl)], check=False,
                       stderr=subprocess.DEVNULL)
    try:
        (ctl / str(conn) / "abort").write_text("1")
        return True
    except OSError:
        return False


class Target:
    """How to start, settle and kill one filesystem under test."""

    name = "?"

    def __init__(self, server: LocalS3, endpoint: str, bucket: str, prefix: str, work: Path, args) -> None:
        self.server, self.bucket, self.prefix, self.work, self.args = server, bucket, prefix, work, args
        self.endpoint = endpoint  # what the mounts talk to (the server, or a ReplyDelay)
        self.reg = Registry()

    def version(self) -> str:
        raise NotImplementedError

    def command(self, mp: Path, cache: Path, d_port: int | None) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError

    def start(self, mp: Path, cache: Path, log: Path, timeout: float = 90) -> Daemon:
        mp.mkdir(parents=True, exist_ok=True)
        cache.mkdir(parents=True, exist_ok=True)
        port = free_port() if self.name == "rclone" else None
        cmd, env = self.command(mp, cache, port)
        start = log.stat().st_size if log.exists() else 0
        with open(log, "ab") as lf:
            lf.write(f"\n===== {time.strftime('%H:%M:%S')} start {shlex.join(cmd)}\n".encode())
            lf.flush()
            proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=lf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        d = self.reg.add(Daemon(proc, mp, cache, log, start, rc_port=port))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not d.alive():
                fuse_unmount(mp)
                raise HarnessError(f"{self.name} mount died (rc {proc.returncode}):\n"
                                   f"{d.log_text()[-3000:]}")
            if is_mounted(mp):
                try:
                    d.conn = os.minor(os.stat(mp).st_dev)
                except OSError:
                    pass
                return d
            time.sleep(0.02)
        self.stop(d)
        raise HarnessError(f"{self.name} did not mount in {timeout:.0f}s:\n{d.log_text()[-3000:]}")

    def kill9(self, d: Daemon) -> bool:
        """SIGKILL the daemon by its pid and detach the mount; False if it would not die
        (the mount hung) and had to be aborted."""
        ok = True
        try:
            d.proc.kill()
        except ProcessLookupError:
            pass
        try:
            d.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            ok = False
            abort_connection(d.conn)
            try:
                d.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        fuse_unmount(d.mp)
        if d in self.reg.daemons and not d.alive():
            self.reg.daemons.remove(d)
        return ok

    def stop(self, d: Daemon, timeout: float = 60) -> None:
        """Clean stop: SIGTERM by pid (both flush and unmount on it), then detach."""
        if d.alive():
            stop_pid(d.pid, grace=timeout)
            try:
                d.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                abort_connection(d.conn)
        fuse_unmount(d.mp)
        if d in self.reg.daemons and not d.alive():
            self.reg.daemons.remove(d)

    def pending(self, d: Daemon) -> int | None:
        """Writes not yet uploaded (None if the mount cannot say)."""
        raise NotImplementedError

    def settle(self, d: Daemon, timeout: float) -> bool:
        """Wait until the mount has nothing left to upload (twice in a row)."""
        deadline = time.monotonic() + timeout
        zero = 0
        while time.monotonic() < deadline:
            n = self.pending(d)
            zero = zero + 1 if n == 0 else 0
            if zero >= 2:
                return True
            time.sleep(0.2)
        return False

    def close(self) -> None:
        self.reg.close()


class BrainfsTarget(Target):
    name = "brainfs"

    def version(self) -> str:
        import brainfs.cache

        # resolved: a worktree imported through a shim of links names its own commit
        root = Path(brainfs.cache.__path__[0]).resolve().parent
        r = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"],
                           capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "cache", "fs", "backend"],
                               capture_output=True, text=True).stdout.strip()
        return (r.stdout.strip()[:90] or "unknown commit") + (" (+ uncommitted changes)" if dirty else "") \
            + f" at {root}"

    def command(self, mp: Path, cache: Path, d_port: int | None) -> tuple[list[str], dict[str, str]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
        env.update({
            "AWS_ENDPOINT_URL": self.endpoint,
            "BRAINFS_CONFIG": "/dev/null",
            "BRAINFS_CACHE_DIR": str(cache),
            "BRAINFS_RECALL_WARMUP": "0",
            "BRAINFS_PRELOAD_GLOBS": "*",
            "BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "0",
            "BRAINFS_PRELOAD_BUDGET_BYTES": str(8 * 1024**3),
            "BRAINFS_PRELOAD_MAX_FILE_BYTES": str(1024**3),
            "BRAINFS_CACHE_BUDGET_BYTES": str(8 * 1024**3),
            "BRAINFS_RELIST_SECONDS": str(self.args.relist_seconds),
            "BRAINFS_UPLOAD_RETRY_SECONDS": "1",
            "BRAINFS_CONNECT_TIMEOUT": "2",
            "BRAINFS_READ_TIMEOUT": "10",
            "BRAINFS_MAX_ATTEMPTS": "3",
            "BRAINFS_BUSY_POLL_US": "0",
            "BRAINFS_COMMIT": self.args.commit,
            # Links are judged by their bytes (readlink), never followed; a link moved to
            # a folder where its ``..`` climb out of the mount must still read back.
            "BRAINFS_ALLOW_EXTERNAL_LINKS": "1",
        })
        url = f"s3://{self.bucket}/{self.prefix}"
        return [sys.executable, "-m", "brainfs.front.cli", "mount", url, str(mp), "--foreground"], env

    def pending(self, d: Daemon) -> int | None:
        try:
            st = json.loads((d.mp / ".brainfs" / "status").read_text())
        except (OSError, ValueError):
            return None
        return (int(st.get("pending_uploads", 0)) + int(st.get("dirty_files", 0))
                + int(st.get("uncommitted", 0)))


class RcloneTarget(Target):
    name = "rclone"

    def version(self) -> str:
        r = subprocess.run([rclone_binary(), "version"], capture_output=True, text=True)
        return (r.stdout.splitlines() or ["rclone ?"])[0] + " mount --vfs-cache-mode full"

    def command(self, mp: Path, cache: Path, d_port: int | None) -> tuple[list[str], dict[str, str]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RCLONE_"))}
        env.update({
            "RCLONE_CONFIG_CRASHS3_TYPE": "s3",
            "RCLONE_CONFIG_CRASHS3_PROVIDER": "Other",
            "RCLONE_CONFIG_CRASHS3_ENDPOINT": self.endpoint,
            "RCLONE_CONFIG_CRASHS3_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY,
            "RCLONE_CONFIG_CRASHS3_SECRET_ACCESS_KEY": DEFAULT_SECRET_KEY,
        })
        conf = self.work / "rclone.conf"
        conf.touch()
        return [rclone_binary(), "mount", f"crashs3:{self.bucket}/{self.prefix}", str(mp),
                "--config", str(conf), "--vfs-cache-mode", "full", "--cache-dir", str(cache),
                # upload 1 s after close (default 5 s) and see the other mount's writes
                # within the relist period, as brainfs is configured
                "--vfs-write-back", "1s", "--dir-cache-time", f"{self.args.relist_seconds}s",
                "--rc", "--rc-addr", f"127.0.0.1:{d_port}", "--rc-no-auth",
                "--log-level", "INFO"], env

    def pending(self, d: Daemon) -> int | None:
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{d.rc_port}/vfs/stats", data=b"{}",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=5) as r:
                st = json.loads(r.read())
        except (OSError, ValueError):
            return None
        dc = st.get("diskCache") or {}
        return int(dc.get("uploadsInProgress", 0)) + int(dc.get("uploadsQueued", 0))


class HarnessError(Exception):
    """The harness could not do its job (not a finding about the filesystem)."""


# ============================================================================ the model


#: corpus path -> content
Tree = dict[str, bytes]


@dataclass
class Op:
    """One random operation: steps, and the tree after each (``worlds[0]`` is before)."""

    kind: str
    desc: str
    steps: list[tuple[str, Callable[[int], None]]]
    worlds: list[Tree]
    #: every path the operation touches (for the joint check of renames)
    touched: set[str] = field(default_factory=set)
    #: shared cycle: the path, and B's write
    shared_path: str | None = None
    b_data: bytes | None = None
    #: mount B changed the tree in the operation's own steps (its uploads settle first)
    uses_b: bool = False


@dataclass
class Run:
    """The op thread's record."""

    done: int = 0
    error: str | None = None
    errno: int | None = None
    finished: bool = False
    t_start: float = 0.0
    t_end: float = 0.0
    #: monotonic time at which each step returned
    step_ends: list[float] = field(default_factory=list)

    def done_before(self, kill_at: float) -> int:
        """Steps that returned before the kill was sent (at ``kill_at``): only those are
        complete. A step that returned after it ran while the daemon was dying or dead,
        and a close can return 0 there without its writes having reached the daemon
        (with quiet commits no FLUSH is sent, and the kernel drops a mapping's pages
        written back to a dead connection without an error: fs/SEMANTICS.md)."""
        n = 0
        for t in self.step_ends:
            if t >= kill_at:
                break
            n += 1
        return n


def worlds_at_kill(op: Op, run: Run, kill_at: float) -> list[Tree]:
    """The trees the mount may hold after a kill sent at ``kill_at``: the last one if every
    step returned before it, else as before the step in flight or as after it (a step
    that returned after the kill was sent is in flight: :meth:`Run.done_before`)."""
    done = run.done_before(kill_at)
    if done == len(op.steps) and op.kind != "truncate_path":
        return [op.worlds[-1]]
    if done == len(op.steps):
        # No close commits a truncate(2): it is committed once idle (1 s), so a kill
        # may come before (fs/SEMANTICS.md). Before or after it, never anything else.
        return [op.worlds[0], op.worlds[-1]]
    # the step in flight (killed, or failed by itself): as before it or as after it
    return [op.worlds[done], op.worlds[done + 1]]


def _write_all(fd: int, data: bytes, chunk: int = 256 * 1024) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:chunk])
        view = view[n:]


def write_file(rootfd: int, path: str, data: bytes, flags: int, sync: bool = True) -> None:
    fd = os.open(path, flags, 0o644, dir_fd=rootfd)
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(rootfd: int, d: str) -> None:
    try:
        fd = os.open(d or ".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=rootfd)
    except OSError:
        raise
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.EROFS):
            raise
    finally:
        os.close(fd)


def makedirs_at(rootfd: int, d: str) -> None:
    parts = d.split("/")
    for i in range(1, len(parts) + 1):
        try:
            os.mkdir("/".join(parts[:i]), dir_fd=rootfd)
        except FileExistsError:
            pass



def rename_op(kind: str, label: str, tree: Tree, src: str, dst: str) -> Op:
    """One rename of ``src`` to ``dst`` (whatever either is), fsynced in the new parent."""
    after = dict(tree)
    after[dst] = after.pop(src)
    dparent = dst.rsplit("/", 1)[0]

    def step(rootfd: int) -> None:
        os.rename(src, dst, src_dir_fd=rootfd, dst_dir_fd=rootfd)
        fsync_dir(rootfd, dparent)

    return Op(kind, label, [("rename", step)], [tree, after], {src, dst})


def unlink_op(kind: str, label: str, tree: Tree, path: str) -> Op:
    """One unlink of ``path`` (a file or a link), fsynced in its parent."""
    after = dict(tree)
    del after[path]
    d = path.rsplit("/", 1)[0]

    def step(rootfd: int) -> None:
        os.unlink(path, dir_fd=rootfd)
        fsync_dir(rootfd, d)

    return Op(kind, label, [("unlink", step)], [tree, after], {path})

#: The write through a mapping (``op_mmap``), run as ``python -c MMAP_WRITER ROOTFD PATH
#: OLD_SIZE NEW_SIZE OFFSET CLOSE_FIRST`` with the bytes on stdin; an errno ends it with
#: status MMAP_ERRNO + errno.
MMAP_ERRNO = 64
MMAP_WRITER = f"""
import mmap, os, sys
rootfd, path = int(sys.argv[1]), sys.argv[2]
old, new, off, close_first = (int(a) for a in sys.argv[3:7])
chunk = sys.stdin.buffer.read()
try:
    fd = os.open(path, os.O_RDWR, dir_fd=rootfd)
    if new != old:
        os.ftruncate(fd, new)
    m = mmap.mmap(fd, new, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[off:off + len(chunk)] = chunk   # no msync: the close writes the pages back
    if close_first:
        os.close(fd)
        m.close()
    else:
        m.close()
        os.close(fd)
except OSError as e:
    sys.exit({MMAP_ERRNO} + (e.errno or 0))
"""


class Generator:
    """Random operations on the model (seeded: the same sequence for every target)."""

    def __init__(self, seed: int, max_size: int, shared: bool, links: bool = True,
                 only: frozenset[str] | None = None, close_only: float = 0.0,
                 pack: bool = False, mmap_on: bool = True) -> None:
        self.rng = random.Random(seed)
        #: writes through a shared mapping (``--no-mmap`` leaves them out: the seeds'
        #: sequences from before the operation existed)
        self.mmap_on = mmap_on
        #: --pack: the ballast under BALLAST is left out of the counts that weigh the
        #: operations, and recreate and truncate_path join them
        self.pack = pack
        #: share of writes that end with close(2) alone, no fsync (drawn only when > 0, so
        #: that a seed's sequence is the same as before this option)
        self.close_only = close_only
        self.max_size = max_size
        self.shared = shared
        self.links_on = links
        self.only = only  # draw only these kinds (a debugging aid; None: all)
        self.n = 0
        #: the second mount's root (set by the harness when there is one): ``removed_open``
        #: deletes or renames through it
        self.peer: Path | None = None

    def sync(self) -> bool:
        """Whether the next write ends with fsync (else with close alone)."""
        return self.close_only <= 0 or self.rng.random() >= self.close_only

    def size(self) -> int:
        r = self.rng.random()
        if r < 0.08:
            return 0
        if r < 0.60:
            return self.rng.randint(1, 16 * 1024)
        if r < 0.90:
            return self.rng.randint(16 * 1024, min(self.max_size, 512 * 1024))
        return self.rng.randint(min(self.max_size, 512 * 1024), self.max_size)

    def content(self, tag: str, size: int) -> bytes:
        self.n += 1
        head = f"#{self.n} {tag}\n".encode()
        if size <= len(head):
            return head[:size]
        return head + random.Random(self.rng.random()).randbytes(size - len(head))

    @staticmethod
    def files(tree: Tree, shared: bool = False) -> list[str]:
        """The regular files (not links, not conflict copies) of the workspace."""
        return sorted(p for p, v in tree.items() if p.startswith(SHARED + "/") == shared
                      and conflict_base(p) is None and not is_link_value(v))

    @staticmethod
    def links(tree: Tree) -> list[str]:
        """The symbolic links of the workspace."""
        return sorted(p for p, v in tree.items() if is_link_value(v) and conflict_base(p) is None)

    @staticmethod
    def dirs(tree: Tree) -> list[str]:
        out = {WS}
        for p in tree:
            d = p.rsplit("/", 1)[0]
            while d and d != WS:
                out.add(d)
                d = d.rsplit("/", 1)[0]
        return sorted(d for d in out if d != SHARED and not d.startswith(SHARED + "/"))

    def new_name(self, tree: Tree, d: str, ext: str = ".md") -> str:
        while True:
            p = f"{d}/n{self.rng.randrange(10**6):06d}{ext}"
            if p not in tree and not any(q.startswith(p + "/") for q in tree):
                return p

    def new_dir(self, tree: Tree) -> str:
        parent = self.rng.choice([WS, WS, *self.dirs(tree)])
        while True:
            d = f"{parent}/d{self.rng.randrange(10**5):05d}"
            if not any(q == d or q.startswith(d + "/") for q in tree):
                return d

    def next(self, tree: Tree) -> Op:
        files = self.files(tree)
        kinds = {"create": 20, "overwrite": 14, "overwrite_held": 6, "append": 12, "truncate": 8,
                 "rename": 9, "atomic_save": 10, "rename_tree": 6, "unlink": 11}
        if self.pack:
            kinds.update(recreate=8, truncate_path=6, unlink_open=6)
        if self.mmap_on:
            kinds["mmap"] = 6
        if self.shared:
            kinds["shared"] = 12
            kinds["removed_open"] = 4
        own = [f for f in files if not f.startswith(BALLAST + "/")] if self.pack else files
        if len(own) < 8:
            kinds["create"] += 40
        if len(own) > 40:
            kinds["unlink"] += 30
            kinds["create"] = 2
        if not files:
            for k in ("overwrite", "overwrite_held", "append", "truncate", "rename", "atomic_save",
                      "unlink", "rename_tree", "removed_open", "mmap",
                      "recreate", "truncate_path", "unlink_open"):
                if k in kinds:
                    kinds[k] = 0
        if self.links_on:
            # about a tenth of the cycles: files stay the bulk
            links = self.links(tree)
            kinds["symlink"] = 5 if len(links) < 12 else 1
            kinds["rename_link"] = 3 if links else 0
            kinds["file_over_link"] = 2 if links and files else 0
            kinds["unlink_link"] = 2 if links else 0
        if self.only is not None:
            kinds = {k: (v if k in self.only else 0) for k, v in kinds.items()}
            if not any(kinds.values()):  # none of them possible yet: make something
                kinds = {"create": 1, "symlink": 1 if self.links_on else 0}
        kind = self.rng.choices(list(kinds), weights=list(kinds.values()))[0]
        return getattr(self, "op_" + kind)(tree, files)

    # ----------------------------------------------------------------- operations
    def op_create(self, tree: Tree, files: list[str]) -> Op:
        r = self.rng.random()
        d = self.rng.choice(self.dirs(tree)) if r < 0.7 else self.new_dir(tree)
        if r > 0.9:
            d = f"{d}/sub"
        path = self.new_name(tree, d)
        data = self.content(f"create {path}", self.size())
        after = dict(tree, **{path: data})
        sync = self.sync()

        def step(rootfd: int) -> None:
            makedirs_at(rootfd, d)
            write_file(rootfd, path, data, os.O_CREAT | os.O_EXCL | os.O_WRONLY, sync)

        return Op("create", f"create {path} ({human(len(data))})", [("write", step)], [tree, after], {path})

    def op_overwrite(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(files)
        data = self.content(f"overwrite {path}", self.size())
        sync = self.sync()

        def step(rootfd: int) -> None:
            write_file(rootfd, path, data, os.O_WRONLY | os.O_TRUNC, sync)

        return Op("overwrite", f"overwrite {path} ({human(len(tree[path]))} -> {human(len(data))})",
                  [("write", step)], [tree, dict(tree, **{path: data})], {path})

    def op_overwrite_held(self, tree: Tree, files: list[str]) -> Op:
        """A shell's ``cmd > f``: open with O_TRUNC, hand the descriptor on (dup2), close
        the first one, pause (cmd starts, computes), then write and close. The close of the
        first descriptor is not the last: the file must read old or new at every kill,
        never empty (fs/procfds.py)."""
        path = self.rng.choice(files)
        data = self.content(f"overwrite_held {path}", self.size())
        sync = self.sync()
        pause = self.rng.choice([0.05, 0.3, 1.5])  # 1.5 s outlasts the idle commit's second

        def step(rootfd: int) -> None:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC, dir_fd=rootfd)
            held = os.dup(fd)
            try:
                os.close(fd)
                time.sleep(pause)
                _write_all(held, data)
                if sync:
                    os.fsync(held)
            finally:
                os.close(held)

        return Op("overwrite_held", f"overwrite {path} through a second descriptor after "
                  f"closing the first, {pause:g} s later ({human(len(tree[path]))} -> "
                  f"{human(len(data))})", [("write", step)], [tree, dict(tree, **{path: data})], {path})

    def op_append(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(files)
        extra = self.content(f"append {path}", self.rng.choice([1, 100, 4096, self.size()]) or 1)
        sync = self.sync()

        def step(rootfd: int) -> None:
            write_file(rootfd, path, extra, os.O_WRONLY | os.O_APPEND, sync)

        return Op("append", f"append {human(len(extra))} to {path} ({human(len(tree[path]))})",
                  [("append", step)], [tree, dict(tree, **{path: tree[path] + extra})], {path})

    def op_truncate(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(files)
        old = tree[path]
        n = self.rng.choice([0, len(old) // 2, len(old) + self.rng.randint(1, 5000)])
        new = old[:n] + b"\0" * max(0, n - len(old))

        def step(rootfd: int) -> None:
            fd = os.open(path, os.O_WRONLY, dir_fd=rootfd)
            try:
                os.ftruncate(fd, n)
                os.fsync(fd)
            finally:
                os.close(fd)

        return Op("truncate", f"truncate {path} {human(len(old))} -> {human(n)}",
                  [("truncate", step)], [tree, dict(tree, **{path: new})], {path})

    def op_rename(self, tree: Tree, files: list[str]) -> Op:
        src = self.rng.choice(files)
        over = len(files) > 1 and self.rng.random() < 0.3
        if over:
            dst = self.rng.choice([f for f in files if f != src])
        else:
            dst = self.new_name(tree, self.rng.choice(self.dirs(tree)))
        return rename_op("rename", f"rename {src} -> {dst}{' (over an existing file)' if over else ''}",
                         tree, src, dst)

    def op_atomic_save(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(files)
        tmp = path + ".tmp"
        data = self.content(f"save {path}", self.size())
        mid = dict(tree, **{tmp: data})
        after = dict(mid)
        after[path] = after.pop(tmp)
        d = path.rsplit("/", 1)[0]
        sync = self.sync()

        def write_tmp(rootfd: int) -> None:
            write_file(rootfd, tmp, data, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, sync)

        def rename(rootfd: int) -> None:
            os.rename(tmp, path, src_dir_fd=rootfd, dst_dir_fd=rootfd)
            fsync_dir(rootfd, d)

        return Op("atomic_save", f"atomic save of {path} ({human(len(data))}) via {tmp}",
                  [("write tmp", write_tmp), ("rename over", rename)], [tree, mid, after], {path, tmp})

    def op_rename_tree(self, tree: Tree, files: list[str]) -> Op:
        dirs = [d for d in self.dirs(tree) if d != WS]
        if not dirs:
            return self.op_rename(tree, files)
        src = self.rng.choice(dirs)
        parent = self.rng.choice([d for d in [WS, *dirs] if d != src and not d.startswith(src + "/")])
        dst = f"{parent}/t{self.rng.randrange(10**5):05d}"
        after: Tree = {}
        touched = set()
        for p, v in tree.items():
            if p.startswith(src + "/"):
                q = dst + p[len(src):]
                after[q] = v
                touched |= {p, q}
            else:
                after[p] = v
        moved = len(touched) // 2
        nested = any(p.count("/") > src.count("/") + 1 for p in tree if p.startswith(src + "/"))

        def step(rootfd: int) -> None:
            os.rename(src, dst, src_dir_fd=rootfd, dst_dir_fd=rootfd)
            fsync_dir(rootfd, parent)

        return Op("rename_tree", f"rename tree {src} -> {dst} ({moved} files"
                  f"{', with a subdirectory' if nested else ''})", [("rename", step)], [tree, after], touched)

    def op_unlink(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(files)
        return unlink_op("unlink", f"unlink {path}", tree, path)

    def op_unlink_open(self, tree: Tree, files: list[str]) -> Op:
        """Open a file, unlink it, then read it whole through the descriptor (a packed
        file: maybe before the unpacking wrote it): POSIX keeps it readable until the
        close, and the name gone. A read that differs is an operation error."""
        path = self.rng.choice(files)
        old = tree[path]
        after = dict(tree)
        del after[path]
        d = path.rsplit("/", 1)[0]

        def step(rootfd: int) -> None:
            fd = os.open(path, os.O_RDONLY, dir_fd=rootfd)
            try:
                os.unlink(path, dir_fd=rootfd)
                fsync_dir(rootfd, d)
                got = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
                if got != old:
                    raise AssertionError(f"read {human(len(got))} through the descriptor of the "
                                         f"unlinked file, not its {human(len(old))}")
            finally:
                os.close(fd)

        return Op("unlink_open", f"unlink {path} while open, then read it ({human(len(old))})",
                  [("unlink", step)], [tree, after], {path})

    def op_removed_open(self, tree: Tree, files: list[str]) -> Op:
        """Mount B deletes or renames a file that A holds open and is writing (issue 27):
        A opens it with ``O_TRUNC`` and writes the first half, B removes it, A writes on
        until its relist has seen the removal (B toggles the marker ``w/s/seen.md`` after
        it; A keeps rewriting its last chunk meanwhile, so that no quiet commit takes the
        half), then A writes the rest and closes. A's bytes must be at the path afterwards
        (fs/SEMANTICS.md: the write outlives the removal), B's renamed file at its new
        name. A kill before A's close leaves the path as before or as B left it."""
        path = self.rng.choice(files)
        old = tree[path]
        how = self.rng.choice(["delete", "rename"])
        dst = self.new_name(tree, path.rsplit("/", 1)[0]) if how == "rename" else None
        data = self.content(f"removed_open {path}", max(2, self.size()))
        half = len(data) // 2
        sync = self.sync()
        marker = f"{SHARED}/seen.md"
        mark = None if marker in tree else b"# seen\n"
        removed = dict(tree)
        del removed[path]
        if dst is not None:
            removed[dst] = old
        if mark is None:
            removed.pop(marker)
        else:
            removed[marker] = mark
        gen = self

        def step_remove(rootfd: int) -> None:
            broot = gen.peer
            assert broot is not None, "removed_open needs the second mount"
            # B must hold the version A opens (its relist may not have seen A's last write),
            # or its delete is refused and its rename moves an older version.
            _wait(lambda: _read(broot / path) == old, f"B's view of {path}")
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC, dir_fd=rootfd)
            try:
                chunks = [data[i:i + max(1, half // 8)] for i in range(0, half, max(1, half // 8))]
                off = 0
                for c in chunks:
                    os.pwrite(fd, c, off)
                    off += len(c)
                last = (off - len(chunks[-1]), chunks[-1]) if chunks else (0, b"")
                if dst is None:
                    os.unlink(broot / path)
                else:
                    os.rename(broot / path, broot / dst)
                if mark is None:
                    os.unlink(broot / marker)
                else:
                    (broot / marker).write_bytes(mark)

                def seen() -> bool:
                    if last[1]:
                        os.pwrite(fd, last[1], last[0])  # the same bytes: still being written
                    try:
                        os.stat(marker, dir_fd=rootfd)
                        return mark is not None
                    except FileNotFoundError:
                        return mark is None

                _wait(seen, "A's relist after B's removal")
                step_remove.fd = fd  # type: ignore[attr-defined]
            except BaseException:
                os.close(fd)
                raise

        def step_finish(rootfd: int) -> None:
            fd = step_remove.fd  # type: ignore[attr-defined]
            try:
                os.lseek(fd, half, os.SEEK_SET)
                _write_all(fd, data[half:])
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)

        after = dict(removed, **{path: data})
        touched = {path, marker} | ({dst} if dst else set())
        return Op("removed_open", f"B {how}s {path}{f' to {dst}' if dst else ''} while A writes it "
                  f"({human(len(old))} -> {human(len(data))})",
                  [("write, B removes", step_remove), ("write, close", step_finish)],
                  [tree, removed, after], touched, uses_b=True)

    def op_mmap(self, tree: Tree, files: list[str]) -> Op:
        """Write a file through a shared mapping and no ``msync`` (issue 27): half the time a
        patch in place (the size kept), half a rewrite to a new size (``ftruncate``, then the
        whole mapping written); half the time the descriptor is closed while the mapping
        still holds the dirty pages, then unmapped, else unmapped, then closed. The kernel
        writes the pages back at that close, before its FLUSH (fs/SEMANTICS.md), so a close
        that returned before the kill was sent is a completed step. Killed in flight, the file may hold any mix of
        old and new pages (a mapping gives no atomic version): ``torn_in_flight``."""
        path = self.rng.choice(files)
        old = tree[path]
        patch = bool(old) and self.rng.random() < 0.5
        if patch:
            off = self.rng.randrange(len(old))
            chunk = self.content(f"mmap {path}", self.rng.randint(1, min(64 * 1024, len(old) - off)))
            new = old[:off] + chunk + old[off + len(chunk):]
        else:
            off, new = 0, self.content(f"mmap {path}", max(1, self.size()))
            chunk = new
        close_first = self.rng.random() < 0.5

        def step(rootfd: int) -> None:
            # In a process of its own: a page fault on a mapping whose mount was killed is
            # SIGBUS, which would end the harness.
            p = subprocess.run([sys.executable, "-I", "-S", "-c", MMAP_WRITER, str(rootfd), path,
                                str(len(old)), str(len(new)), str(off), str(int(close_first))],
                               input=chunk, pass_fds=(rootfd,), capture_output=True, timeout=300)
            if p.returncode >= MMAP_ERRNO:
                e = p.returncode - MMAP_ERRNO
                raise OSError(e, os.strerror(e))
            if p.returncode:
                raise RuntimeError(f"the mapping's writer ended with {p.returncode}: "
                                   f"{p.stderr.decode(errors='replace')[-300:]}")

        what = (f"patch {human(len(chunk))} at {off}" if patch
                else f"rewrite {human(len(old))} -> {human(len(new))}")
        return Op("mmap", f"mmap {path}: {what}, no msync, "
                  f"{'close, then munmap' if close_first else 'munmap, then close'}",
                  [("write", step)], [tree, dict(tree, **{path: new})], {path})

    def op_recreate(self, tree: Tree, files: list[str]) -> Op:
        """Unlink a file, then create one of the same name (a packed file: before the
        unpacking reaches it, or while it does)."""
        path = self.rng.choice(files)
        data = self.content(f"recreate {path}", self.size())
        gone = dict(tree)
        del gone[path]
        d = path.rsplit("/", 1)[0]
        sync = self.sync()

        def unlink(rootfd: int) -> None:
            os.unlink(path, dir_fd=rootfd)
            fsync_dir(rootfd, d)

        def create(rootfd: int) -> None:
            write_file(rootfd, path, data, os.O_CREAT | os.O_EXCL | os.O_WRONLY, sync)

        return Op("recreate", f"recreate {path} ({human(len(tree[path]))} -> {human(len(data))})",
                  [("unlink", unlink), ("create", create)], [tree, gone, dict(tree, **{path: data})],
                  {path})

    def op_truncate_path(self, tree: Tree, files: list[str]) -> Op:
        """truncate(2) by path: a setattr with no open (and so no close to commit it)."""
        path = self.rng.choice(files)
        old = tree[path]
        n = self.rng.choice([0, len(old) // 2, len(old) + self.rng.randint(1, 5000)])
        new = old[:n] + b"\0" * max(0, n - len(old))

        def step(rootfd: int) -> None:
            os.truncate(os.path.join(f"/proc/self/fd/{rootfd}", path), n)

        return Op("truncate_path", f"truncate(2) {path} {human(len(old))} -> {human(n)}",
                  [("truncate", step)], [tree, dict(tree, **{path: new})], {path})

    # ----------------------------------------------------------------- symbolic links
    def op_symlink(self, tree: Tree, files: list[str]) -> Op:
        r = self.rng.random()
        d = self.rng.choice(self.dirs(tree)) if r < 0.8 else self.new_dir(tree)
        path = self.new_name(tree, d, ".lnk")
        if files and self.rng.random() < 0.7:
            to = self.rng.choice(files)
            target = posixpath.relpath(to, d)
            what = f"to {to}"
        else:
            target = self.rng.choice(["gone-{}.md", "../nowhere/{}.md", "sub/{}"]).format(
                self.rng.randrange(10**6))
            what = "dangling"
        t = target.encode()

        def step(rootfd: int) -> None:
            makedirs_at(rootfd, d)
            os.symlink(target, path, dir_fd=rootfd)
            fsync_dir(rootfd, d)

        return Op("symlink", f"symlink {path} -> {target} ({what})", [("symlink", step)],
                  [tree, dict(tree, **{path: link_value(t)})], {path})

    def op_rename_link(self, tree: Tree, files: list[str]) -> Op:
        links = self.links(tree)
        src = self.rng.choice(links)
        r = self.rng.random()
        others = [q for q in links if q != src]
        if r < 0.3 and files:
            dst, how = self.rng.choice(files), " (over a file)"
        elif r < 0.6 and others:
            dst, how = self.rng.choice(others), " (over another link)"
        else:
            dst, how = self.new_name(tree, self.rng.choice(self.dirs(tree)), ".lnk"), ""
        return rename_op("rename_link", f"rename link {src} -> {dst}{how}", tree, src, dst)

    def op_file_over_link(self, tree: Tree, files: list[str]) -> Op:
        src = self.rng.choice(files)
        dst = self.rng.choice(self.links(tree))
        return rename_op("file_over_link", f"rename file {src} ({human(len(tree[src]))}) over link {dst}",
                         tree, src, dst)

    def op_unlink_link(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(self.links(tree))
        return unlink_op("unlink_link", f"unlink link {path}", tree, path)

    def op_shared(self, tree: Tree, files: list[str]) -> Op:
        path = self.rng.choice(SHARED_FILES)
        b_data = self.content(f"second writer {path}", self.size())
        old = tree.get(path)
        kind = self.rng.choice(["overwrite", "append", "truncate", "unlink"] if old is not None
                               else ["overwrite"])
        if kind == "overwrite":
            a_data: bytes | None = self.content(f"first writer {path}", self.size())
        elif kind == "append":
            extra = self.content(f"first writer appends {path}", self.rng.choice([100, 4096]))
            a_data = old + extra  # type: ignore[operator]
        elif kind == "truncate":
            a_data = (old or b"")[: len(old or b"") // 2]
        else:
            a_data = None
        after = dict(tree)
        if a_data is None:
            after.pop(path, None)
        else:
            after[path] = a_data

        def step(rootfd: int) -> None:
            makedirs_at(rootfd, SHARED)
            if kind == "overwrite":
                write_file(rootfd, path, a_data, os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
            elif kind == "append":
                write_file(rootfd, path, extra, os.O_WRONLY | os.O_APPEND)
            elif kind == "truncate":
                fd = os.open(path, os.O_WRONLY, dir_fd=rootfd)
                try:
                    os.ftruncate(fd, len(a_data))
                    os.fsync(fd)
                finally:
                    os.close(fd)
            else:
                os.unlink(path, dir_fd=rootfd)
                fsync_dir(rootfd, SHARED)

        return Op("shared", f"shared {path}: A {kind}s ({human(len(a_data or b''))}) while B overwrites "
                  f"({human(len(b_data))})", [(kind, step)], [tree, after], {path},
                  shared_path=path, b_data=b_data)


# ============================================================================ views


def _wait(pred: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll ``pred`` every 50 ms; an operation error after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _read(p: Path) -> bytes | None:
    """A file's bytes, or a symbolic link's ``link_value`` (``lstat`` and ``readlink``: a
    link is never followed); None if the name does not exist, a directory is None too."""
    for attempt in range(3):
        try:
            st = os.lstat(p)
            if stat.S_ISDIR(st.st_mode):
                return None
            if stat.S_ISLNK(st.st_mode):
                return link_value(os.readlink(os.fsencode(p)))
            return p.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            if attempt == 2:
                return f"<unreadable: {e}>".encode()
            time.sleep(0.2)
    return None


def _walk(d: Path):
    """Every non-directory under ``d`` (files and links), never following a link."""
    try:
        entries = list(os.scandir(d))
    except (FileNotFoundError, NotADirectoryError):
        return
    for e in entries:
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            yield from _walk(Path(e.path))
        else:
            yield Path(e.path)


def read_mount(mp: Path, also: set[str] | frozenset[str] = frozenset()) -> Tree:
    """Every file and link under the workspace, read through a mount: what ``readdir``
    lists, and each path of ``also`` by name (a brainfs mount lists only its working set; a
    file that is in the bucket but not local resolves by name, "one ``cat`` away")."""
    out: Tree = {}
    for p in _walk(mp / WS):
        data = _read(p)
        if data is not None:
            out[p.relative_to(mp).as_posix()] = data
    for rel in sorted(set(also) - set(out)):
        data = _read(mp / rel)
        if data is not None:
            out[rel] = data
    return out


class Bucket:
    """The bucket as a fresh cache would see it (boto3, no brainfs filtering)."""

    def __init__(self, server: LocalS3, bucket: str, prefix: str) -> None:
        import boto3
        from botocore.config import Config as BotoConfig

        self.bucket, self.prefix = bucket, prefix.strip("/") + "/"
        self.c = boto3.client("s3", endpoint_url=server.url, aws_access_key_id=DEFAULT_ACCESS_KEY,
                              aws_secret_access_key=DEFAULT_SECRET_KEY, region_name="us-east-1",
                              config=BotoConfig(s3={"addressing_style": "path"},
                                                request_checksum_calculation="when_required",
                                                response_checksum_validation="when_required"))
        self.doubles: Tree = {}
        #: bodies by their MD5 ETag (an object's ETag is its bytes' MD5): only objects
        #: whose ETag is new are read again (--pack keeps hundreds of unchanged files)
        self._bodies: dict[str, bytes] = {}

    def body(self, key: str, etag: str) -> bytes:
        """The object's bytes, from the cache when its ETag is a known MD5."""
        etag = etag.strip('"')
        got = self._bodies.get(etag)
        if got is not None:
            return got
        body = self.c.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        if hashlib.md5(body).hexdigest() == etag:
            self._bodies[etag] = body
        return body

    def put(self, rel: str, data: bytes) -> None:
        """Write one object of the corpus, as another S3 client would."""
        self.c.put_object(Bucket=self.bucket, Key=self.prefix + rel, Body=data)

    def create(self) -> None:
        self.c.create_bucket(Bucket=self.bucket)

    def read(self) -> Tree:
        """The workspace's files, and its links (``NAME.brainfs-link`` objects) under their
        names as ``link_value``s. A name that is both a file and a link shows the file (as
        the mount does); the link is in :attr:`doubles`."""
        out: Tree = {}
        links: Tree = {}
        for page in self.c.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + WS + "/"):
            for o in page.get("Contents", []):
                key = o["Key"]
                rel = key[len(self.prefix):]
                if key.endswith("/") or rel.rsplit("/", 1)[-1] == DIR_MARKER:
                    continue  # a directory marker (empty directories survive a remount)
                body = self.body(key, o.get("ETag", ""))
                name = rel.rsplit("/", 1)[-1]
                if rel.endswith(LINK_SUFFIX) and name != LINK_SUFFIX:
                    links[rel[: -len(LINK_SUFFIX)]] = link_value(body)
                else:
                    out[rel] = body
        #: names held both as a file and as a link: name -> the link's value
        self.doubles = {p: v for p, v in links.items() if p in out}
        out.update({p: v for p, v in links.items() if p not in out})
        return out


# ============================================================================ judging


@dataclass
class Defect:
    cycle: int
    kind: str  # one of DEFECTS
    path: str
    detail: str
    op: str
    landed: str
    view: str
    logs: list[str] = field(default_factory=list)


@dataclass
class TargetResult:
    target: str
    version: str = ""
    cycles: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {k: 0 for k in DEFECTS + INFO})
    defects: list[Defect] = field(default_factory=list)
    ops: dict[str, int] = field(default_factory=dict)
    landed: dict[str, int] = field(default_factory=dict)
    op_errors: list[str] = field(default_factory=list)
    conflict_copies: int = 0
    unsettled: int = 0
    fresh_checks: int = 0
    #: --pack: kills that fell while the mount was still writing the pack to its cache,
    #: stale-pack cycles (another writer changed a packed file first), and reads of such a
    #: file right after the mount that failed with EIO once (allowed: its size changed)
    unpacking_kills: int = 0
    stale_cycles: int = 0
    stale_eio: int = 0
    links: bool = False  # whether the operations included symbolic links
    bytes_written: int = 0
    seconds: float = 0.0
    error: str | None = None
    cycle_log: list[dict[str, Any]] = field(default_factory=list)

    def clean(self) -> bool:
        return self.error is None and all(self.counts.get(k, 0) == 0 for k in DEFECTS)


def classify(got: bytes, want: bytes | None, history: dict[str, set[str]], path: str,
             bucket: bytes | None = None) -> str:
    if got.startswith(b"<unreadable"):
        return "unreadable: " + got.decode(errors="replace")[:120]
    if is_link_value(got) or is_link_value(want):
        if not is_link_value(want):
            return f"a {show(got)} where a file ({show(want)}) should be"
        if not is_link_value(got):
            return f"a file ({show(got)}) where a {show(want)} should be"
        if digest(got) in history.get(path, set()):
            return f"an older target: {show(got)} instead of {show(want)}"
        return f"wrong target: {show(got)} instead of {show(want)}"
    if bucket is not None and bucket != got and bucket.startswith(got):
        return f"cut: the first {len(got)} B of the bucket's {len(bucket)} B version"
    if len(got) == 0 and (want is None or len(want) > 0):
        return "empty" + (f" (want {len(want)} B)" if want is not None else "")
    d = digest(got)
    if d in history.get(path, set()):
        return f"an older version ({len(got)} B) instead of the newest ({len(want or b'')} B)"
    if any(d in h for h in history.values()):
        return f"another file's bytes ({len(got)} B, want {len(want or b'')} B)"
    if want is not None and want.startswith(got):
        return f"torn: a {len(got)} B prefix of the {len(want)} B content"
    return f"wrong bytes ({len(got)} B, want {len(want or b'')} B)"


def partial_write(kind: str, got: bytes | None, before: bytes | None, after: bytes | None) -> bool:
    """Whether ``got`` is a write of kind ``kind`` kept as far as it got: a prefix of the
    new content (for an append: the old content, then a prefix of what was appended)."""
    if got is None or after is None or not after.startswith(got):
        return False
    if kind == "append":
        return before is not None and got.startswith(before)
    return kind in ("create", "overwrite", "overwrite_held", "atomic_save", "removed_open")


def mapped_mix(got: bytes | None, before: bytes | None, after: bytes | None,
               page: int = 4096) -> bool:
    """Whether ``got`` is what a write through a mapping may leave when killed in flight: the
    old size or the new one, and each page either the old bytes (cut or zero-filled to that
    size, as a ``ftruncate`` leaves them) or the new ones (fs/SEMANTICS.md: what was
    written back is committed as it stands)."""
    if got is None or before is None or after is None or len(got) not in (len(before), len(after)):
        return False
    n = len(got)
    olds, news = (x[:n] + b"\0" * (n - len(x[:n])) for x in (before, after))
    return all(got[i:i + page] in (olds[i:i + page], news[i:i + page]) for i in range(0, n, page))


def judge(op: Op, worlds: list[Tree], view: Tree, prev: Tree, ever: set[str],
          history: dict[str, set[str]], b_ok: bool, a_completed: bool,
          alt: dict[str, set[str | None]] | None = None,
          bucket: Tree | None = None, partial_ok: bool = False) -> list[tuple[str, str, str]]:
    """Defects of one view: (kind, path, detail). ``alt``: other contents a path the
    operation does not touch may show, because the views disagreed on it last cycle (that
    was counted then: the model follows the mount, the truth may have been the bucket).
    ``partial_ok`` (``--commit quiet``, the operation killed in flight): a write kept as
    far as it got is ``torn_in_flight``, counted but no defect."""
    out: list[tuple[str, str, str]] = []
    alt = alt or {}
    shared = op.shared_path
    new_conflicts = {p: v for p, v in view.items() if conflict_base(p) is not None and p not in prev}
    skip = set(new_conflicts)
    if shared is not None:
        skip.add(shared)
    # -- plain paths: the view must match one of the acceptable worlds path by path
    paths = set(view) | {p for w in worlds for p in w}
    for p in sorted(paths - skip):
        allowed = [w.get(p) for w in worlds]
        got = view.get(p)
        if any(got == a for a in allowed):
            continue
        if p not in op.touched and digest(got) in alt.get(p, ()):
            continue
        # (removed_open: A's write spans both steps, B's removal in between; a view with one
        # acceptable world has no final one to be part of)
        final = (op.worlds[-1] if op.kind == "removed_open" else worlds[1]) if len(worlds) == 2 else {}
        if (partial_ok and len(worlds) == 2 and p in op.touched
                and partial_write(op.kind, got, worlds[0].get(p), final.get(p))):
            out.append(("torn_in_flight", p, f"{len(got or b'')} B of {len(final[p])} B"))
            continue
        if (op.kind == "mmap" and len(worlds) == 2 and p in op.touched
                and mapped_mix(got, worlds[0].get(p), worlds[1].get(p))):
            # in both commit modes: a mapping's pages are written back as the kernel goes
            out.append(("torn_in_flight", p, f"old and new pages ({len(got or b'')} B)"))
            continue
        if got is None:
            want = next(a for a in allowed if a is not None)
            out.append(("lost", p, f"missing (want {show(want)})"))
        elif all(a is None for a in allowed):
            why = "deleted or renamed away earlier" if p in ever else "never written by the harness"
            out.append(("resurrected", p, f"present ({show(got)}), {why}"))
        else:
            want = [a for a in allowed if a is not None][-1]
            out.append(("corrupted", p, classify(got, want, history, p, (bucket or {}).get(p))))
    # -- a step in flight: the touched paths as a whole must be before or after it
    if len(worlds) == 2 and op.kind in RENAMES and not out:
        t = op.touched
        if not any(all(view.get(p) == w.get(p) for p in t) for w in worlds):
            out.append(("renames_split", ", ".join(sorted(t))[:300],
                        "present: " + ", ".join(sorted(p for p in t if p in view))[:300]))
    # -- conflict copies
    for p, v in sorted(new_conflicts.items()):
        base = conflict_base(p)
        if base != shared:
            out.append(("conflicts_without_second_writer", p,
                        f"{show(v)}; {base} holds " + (show(view[base]) if base in view else "nothing")
                        + ("; the copy has the newest bytes of the original" if any(
                            v == w.get(base) for w in worlds) else "")))
    # -- the shared path: both closed versions must survive, one of them in a conflict copy
    if shared is not None:
        a_data = worlds[-1].get(shared) if a_completed else None
        got = view.get(shared)
        copies = [v for p, v in new_conflicts.items() if conflict_base(p) == shared]
        allowed = {digest(w.get(shared)) for w in worlds}
        allowed |= alt.get(shared, set())
        if b_ok:
            allowed.add(digest(op.b_data))
        else:
            allowed.add(digest(prev.get(shared)))
        for who, data in (("B", op.b_data if b_ok else None), ("A", a_data)):
            if data is None or got == data or data in copies:
                continue
            if who == "B" and data == prev.get(shared):
                # B wrote the bytes the file already held: by ETag (the bytes' MD5) no one
                # can tell that write from none, and "B, then A" explains what A left.
                continue
            if got is not None and bucket is not None and bucket.get(shared) == data and data.startswith(got):
                continue  # intact in the bucket, cut in this mount: counted as corrupted below
            out.append(("other_writer_lost", shared,
                        f"{who}'s closed version ({len(data)} B) is neither at the path "
                        f"({'absent' if got is None else f'{len(got)} B'}) nor in one of "
                        f"{len(copies)} conflict copies"))
        a_kind = op.steps[0][0] if op.steps else ""

        def a_partial(v: bytes | None) -> bool:
            # --commit quiet, A killed in flight: its write kept as far as it got (at the
            # path, or in a conflict copy when B's version landed meanwhile).
            return (partial_ok and not a_completed and v is not None
                    and partial_write(a_kind, v, prev.get(shared), worlds[-1].get(shared)))

        if got is not None and digest(got) not in allowed and a_partial(got):
            out.append(("torn_in_flight", shared, f"{len(got)} B of A's write at the path"))
        elif digest(got) not in allowed:
            if got is None:
                out.append(("lost", shared, "missing, though no closed version allows it"))
            else:
                out.append(("corrupted", shared, classify(got, worlds[-1].get(shared), history, shared,
                                                          (bucket or {}).get(shared))))
        for v in copies:
            if digest(v) in allowed | {digest(a_data), digest(op.b_data), digest(prev.get(shared))}:
                continue
            if a_partial(v):
                out.append(("torn_in_flight", shared + " (conflict copy)",
                            f"{len(v)} B of A's write"))
            else:
                out.append(("corrupted", shared + " (conflict copy)", classify(v, None, history, shared)))
    return out


# ============================================================================ the run


class Harness:
    def __init__(self, target: Target, args, work: Path, res: TargetResult) -> None:
        self.t, self.args, self.work, self.res = target, args, work, res
        self.mp_a, self.mp_b = work / "mnt-a", work / "mnt-b"
        self.cache_a, self.cache_b = work / "cache-a", work / "cache-b"
        self.log_a, self.log_b = work / "a.log", work / "b.log"
        self.bucket = Bucket(target.server, target.bucket, target.prefix)
        res.links = target.name == "brainfs" and not args.no_links
        self.gen = Generator(args.seed, args.max_size, shared=not args.no_second_writer,
                             links=res.links, only=frozenset(args.ops.split(",")) if args.ops else None,
                             close_only=args.close_only, pack=args.pack,
                             mmap_on=not args.no_mmap)
        self.est: dict[str, list[float]] = {}
        self.a: Daemon | None = None
        self.b: Daemon | None = None
        self.ever: set[str] = set()
        self.history: dict[str, set[str]] = {}
        self.fresh_n = 0
        self.reported: set[tuple] = set()
        self.alt: dict[str, set[str | None]] = {}

    def note(self, tree: Tree) -> None:
        for p, v in tree.items():
            self.ever.add(p)
            self.history.setdefault(p, set()).add(digest(v))  # type: ignore[arg-type]

    def setup(self) -> Tree:
        self.bucket.create()
        if self.args.pack:
            self.seed_ballast()
        self.a = self.t.start(self.mp_a, self.cache_a, self.log_a)
        if not self.args.no_second_writer:
            self.b = self.t.start(self.mp_b, self.cache_b, self.log_b)
        (self.mp_a / SHARED).mkdir(parents=True, exist_ok=True)
        if self.b is not None:
            (self.mp_b / SHARED).mkdir(parents=True, exist_ok=True)
            self.gen.peer = self.mp_b
        self.t.settle(self.a, 60)
        return read_mount(self.mp_a)

    # ----------------------------------------------------------------- --pack
    def seed_ballast(self) -> None:
        """The files only the pack brings to a new mount, in a few directories."""
        rng = random.Random(self.args.seed * 31 + 7)
        items = []
        for i in range(self.args.pack_files):
            rel = f"{BALLAST}/d{i % 8}/f{i:05d}.md"
            items.append((rel, f"#ballast {i}\n".encode() + rng.randbytes(rng.randint(100, 4000))))
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: self.bucket.put(*kv), items))

    def pack_store(self):
        """An ObjectStore on the bucket (straight to the server) and the preload rules the
        mounts use (everything)."""
        from brainfs.backend.config import Config
        from brainfs.backend.keys import CorpusURL
        from brainfs.backend.store import ObjectStore

        cfg = Config().override(endpoint_url=self.t.server.url, preload_globs=["*"],
                                preload_recent_transcripts=0, preload_budget_bytes=8 * 1024**3,
                                preload_max_file_bytes=1024**3)
        return ObjectStore(CorpusURL.parse(f"s3://{self.t.bucket}/{self.t.prefix}"), cfg), cfg

    def repack(self, i: int, tree: Tree, rng: random.Random) -> tuple[Tree, str | None]:
        """Before a --pack cycle: stop A, rebuild the pack, maybe let another writer change
        a packed file, maybe drop the listing snapshot, and mount A with an empty cache.
        Returns the model after the other writer, and the file it changed."""
        from brainfs.backend.keys import LISTING_KEY
        from brainfs.cache.local.pack import build_pack

        assert self.a is not None
        self.t.stop(self.a)
        store, cfg = self.pack_store()
        try:
            build_pack(store, cfg)
            stale = None
            files = self.gen.files(tree)
            if files and rng.random() < self.args.pack_stale:
                stale = rng.choice(files)
                data = self.gen.content(f"other writer {stale}", self.gen.size())
                via_b = self.b is not None and rng.random() < 0.5
                if via_b and _read(self.mp_b / stale) != tree[stale]:
                    # B has not relisted since A last changed it: a write through B would
                    # be based on an older version (a conflict copy, rightly). The bucket.
                    via_b = False
                if via_b:
                    assert self.b is not None
                    rootfd = os.open(self.mp_b, os.O_RDONLY | os.O_DIRECTORY)
                    try:
                        write_file(rootfd, stale, data, os.O_WRONLY | os.O_TRUNC)
                    finally:
                        os.close(rootfd)
                    self.t.settle(self.b, self.args.settle_timeout)
                else:
                    self.bucket.put(stale, data)
                tree = dict(tree, **{stale: data})
                self.note({stale: data})
                self.res.stale_cycles += 1
            if rng.random() < 0.3:
                store.delete(LISTING_KEY)  # this mount lists the bucket itself
        finally:
            store.close()
        old = self.cache_a
        self.cache_a = self.work / f"cache-a-{i}"
        shutil.rmtree(old, ignore_errors=True)
        self.a = self.t.start(self.mp_a, self.cache_a, self.log_a)
        return tree, stale

    def read_stale(self, path: str, want: bytes) -> str | None:
        """Read a file another writer changed after the pack was built, right after the
        mount: the new content, or EIO once and then it. Else what was read."""
        for attempt in (1, 2):
            try:
                got = (self.mp_a / path).read_bytes()
            except OSError as e:
                if e.errno == errno.EIO and attempt == 1:
                    self.res.stale_eio += 1
                    continue
                return f"{type(e).__name__}: {e}"
            if got == want:
                return None
            return classify(got, want, self.history, path)
        return None

    def unpacking(self) -> int:
        """How many packed files mount A has still to write to its cache (0 if it cannot
        say)."""
        assert self.a is not None
        try:
            st = json.loads((self.mp_a / ".brainfs" / "status").read_text())
        except (OSError, ValueError):
            return 0
        return int(st.get("unpacking_files", 0))

    def run_op(self, op: Op, rootfd: int, run: Run, barrier: threading.Barrier | None) -> None:
        try:
            if barrier is not None:
                barrier.wait(timeout=30)
            run.t_start = time.monotonic()
            for i, (_name, fn) in enumerate(op.steps):
                fn(rootfd)
                run.step_ends.append(time.monotonic())
                run.done = i + 1
            run.finished = True
        except OSError as e:
            run.error, run.errno = f"{type(e).__name__}: {e}", e.errno
        except Exception as e:  # noqa: BLE001 - recorded, judged by the model
            run.error = f"{type(e).__name__}: {e}"
        finally:
            run.t_end = time.monotonic()

    def b_write(self, op: Op, run: Run, barrier: threading.Barrier) -> None:
        assert self.b is not None and op.shared_path and op.b_data is not None
        try:
            barrier.wait(timeout=30)
            time.sleep(random.Random(len(op.b_data)).random() * 0.05)
            rootfd = os.open(self.mp_b, os.O_RDONLY | os.O_DIRECTORY)
            try:
                makedirs_at(rootfd, SHARED)
                write_file(rootfd, op.shared_path, op.b_data, os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
            finally:
                os.close(rootfd)
            run.done = 1
            run.finished = True
        except Exception as e:  # noqa: BLE001
            run.error = f"{type(e).__name__}: {e}"

    def cycle(self, i: int, tree: Tree, rng: random.Random) -> Tree:
        assert self.a is not None
        stale_found: list[tuple[str, str]] = []
        if self.args.pack:
            tree, stale = self.repack(i, tree, rng)
            # Half the stale cycles: the operation is on that file (an append, a rewrite or
            # a truncation must start from the other writer's version, not the pack's).
            if stale is not None and rng.random() < 0.5:
                kind = rng.choice(["append", "truncate", "truncate_path", "overwrite"])
                op = getattr(self.gen, "op_" + kind)(tree, [stale])
            else:
                op = self.gen.next(tree)
            if stale is not None:
                bad = self.read_stale(stale, tree[stale])
                if bad is not None:
                    stale_found.append((stale, bad))
        else:
            op = self.gen.next(tree)
        self.res.ops[op.kind] = self.res.ops.get(op.kind, 0) + 1
        run, brun = Run(), Run()
        barrier = threading.Barrier(2) if op.shared_path and self.b is not None else None
        rootfd = os.open(self.mp_a, os.O_RDONLY | os.O_DIRECTORY)
        th = threading.Thread(target=self.run_op, args=(op, rootfd, run, barrier), daemon=True)
        bth = None
        if barrier is not None:
            bth = threading.Thread(target=self.b_write, args=(op, brun, barrier), daemon=True)
            bth.start()
        during = rng.random() < 0.5
        est = sorted(self.est.get(op.kind, [0.05]))[len(self.est.get(op.kind, [0.05])) // 2]
        th.start()
        if during:
            time.sleep(rng.random() * est * 1.2)
        else:
            th.join(timeout=120)
            # mostly early, while the upload of what was just closed runs
            time.sleep(rng.random() * (0.15 if rng.random() < 0.6 else 1.5))
        if self.args.pack and self.unpacking():
            self.res.unpacking_kills += 1
        kill_at = time.monotonic()
        cycle_log_start = self.a.log_start
        ok = self.t.kill9(self.a)
        th.join(timeout=30)
        hung = th.is_alive() or not ok
        if hung:
            self.res.counts["hung_kills"] += 1
            abort_connection(self.a.conn)
            th.join(timeout=30)
        try:
            os.close(rootfd)
        except OSError:
            pass
        if bth is not None:
            bth.join(timeout=120)
        if self.b is not None and (op.shared_path or op.uses_b):
            # B's upload first: a mount lists the bucket when it starts, so A's view is
            # then complete without waiting for its next relist.
            self.t.settle(self.b, self.args.settle_timeout)
        if run.finished:
            self.est.setdefault(op.kind, []).append(run.t_end - run.t_start)
            self.est[op.kind] = self.est[op.kind][-30:]
        # A step that returned before the kill was sent is complete; one that returned
        # later (the kill can land before the mapping's writer has even started) is the
        # step in flight, whatever it returned.
        done = run.done_before(kill_at)
        completed = done == len(op.steps)
        late = (f", returned {run.step_ends[done] - kill_at:.3f}s after the kill"
                if len(run.step_ends) > done else "")
        landed = ("after the operation" if completed
                  else f"during step {done + 1}/{len(op.steps)} ({op.steps[min(done, len(op.steps) - 1)][0]}) "
                       f"{kill_at - run.t_start:.3f}s after it began{late}"
                  if run.t_start and run.t_start < kill_at
                  else f"before the operation began{late}")
        self.res.landed["after" if completed else "during"] = \
            self.res.landed.get("after" if completed else "during", 0) + 1
        own_error = run.error is not None and run.t_end < kill_at
        if own_error:
            self.res.op_errors.append(f"cycle {i}: {op.desc}: {run.error}")
        if brun.error:
            self.res.op_errors.append(f"cycle {i}: second writer on {op.shared_path}: {brun.error}")
        worlds = worlds_at_kill(op, run, kill_at)
        for w in op.worlds[1:]:
            self.note(w)
        if op.b_data is not None:
            self.note({op.shared_path: op.b_data})  # type: ignore[dict-item]
        self.res.bytes_written += sum(len(v) - (len(LINK_TAG) if is_link_value(v) else 0)
                                      for p, v in op.worlds[-1].items()
                                      if op.worlds[0].get(p) != v) + len(op.b_data or b"")

        # -- remount with the same cache, settle both mounts
        self.a = self.t.start(self.mp_a, self.cache_a, self.log_a)
        settled = self.t.settle(self.a, self.args.settle_timeout)
        if self.b is not None:
            settled &= self.t.settle(self.b, self.args.settle_timeout)
        if not settled:
            self.res.unsettled += 1
        bucket_view = self.bucket.read()
        doubles = dict(self.bucket.doubles)
        names = set(bucket_view) | set(tree) | {p for w in op.worlds for p in w}
        mount_view = read_mount(self.mp_a, names)
        a_completed = completed or (op.shared_path is not None and done >= 1)
        found: dict[tuple[str, str], tuple[str, str]] = {}
        for view_name, view in (("mount", mount_view), ("bucket", bucket_view)):
            for kind, path, detail in judge(op, worlds, view, tree, self.ever, self.history,
                                            brun.finished, a_completed, self.alt,
                                            bucket_view if view_name == "mount" else None,
                                            partial_ok=self.args.commit == "quiet"
                                            and not completed):
                key = (kind, path)
                if key in found:
                    if view_name not in found[key][0].split("+"):
                        found[key] = (found[key][0] + "+" + view_name, found[key][1])
                else:
                    found[key] = (view_name, detail)
        for p, lv in sorted(doubles.items()):  # one name, two kinds: neither side is gone
            found[("renames_split", p)] = (
                "bucket", f"both a file ({show(bucket_view[p])}) and a {show(lv)} in the bucket")
        for p in sorted(set(mount_view) | set(bucket_view)):
            if mount_view.get(p) != bucket_view.get(p) and not any(k[1] == p for k in found):
                m, b = mount_view.get(p), bucket_view.get(p)
                found[("mount_bucket_differ", p)] = (
                    "mount+bucket", f"mount: {show(m)}, bucket: {show(b)}")
        if self.args.fresh_every and (i + 1) % self.args.fresh_every == 0:
            for p, detail in self.fresh_check(mount_view):
                found[("fresh_differs", p)] = ("fresh", detail)
        for p, detail in stale_found:
            found[("stale_served", p)] = ("mount right after it answered", detail)
        # A divergence that persists (the bucket keeps an old version the mount no longer
        # shows, say) is one defect, not one per cycle: count each (kind, path, what the
        # views held) once.
        views = {"mount": mount_view, "bucket": bucket_view}
        for key in list(found):
            kind, path = key
            held = tuple(digest(views[v].get(path)) if v in views else found[key][1]
                         for v in ("mount", "bucket"))
            if (kind, path, held) in self.reported:
                del found[key]
            else:
                self.reported.add((kind, path, held))
        cyc = {"cycle": i, "op": op.desc, "kind": op.kind, "landed": landed,
               "error": run.error, "b_error": brun.error, "settled": settled,
               "defects": [f"{k}: {p}" for k, p in found]}
        self.res.cycle_log.append(cyc)
        log_text = _read_from(self.log_a, cycle_log_start)
        for (kind, path), (view_name, detail) in sorted(found.items()):
            self.res.counts[kind] += 1
            if kind in INFO:
                continue
            names = {q.rsplit("/", 1)[-1] for q in path.split(", ")}
            if op.shared_path:
                names.add(op.shared_path.rsplit("/", 1)[-1])
            names.discard("")
            lines = [ln for ln in log_text.splitlines()
                     if any(n in ln for n in names) or ln.startswith("=====")]
            if self.b is not None and op.shared_path:
                lines += ["[B] " + ln for ln in self.b.log_text().splitlines()
                          if op.shared_path.rsplit("/", 1)[-1] in ln][-10:]
            self.res.defects.append(Defect(i, kind, path, detail, op.desc, landed, view_name,
                                           lines[-30:]))
        self.res.conflict_copies += sum(1 for p in mount_view if conflict_base(p) and p not in tree)
        self.alt = {p: {digest(bucket_view.get(p))} for p in set(mount_view) | set(bucket_view)
                    if mount_view.get(p) != bucket_view.get(p)}
        self.note(mount_view)
        return mount_view

    def fresh_check(self, mount_view: Tree) -> list[tuple[str, str]]:
        self.fresh_n += 1
        self.res.fresh_checks += 1
        mp, cache = self.work / "mnt-fresh", self.work / f"cache-fresh-{self.fresh_n}"
        d = self.t.start(mp, cache, self.work / "fresh.log")
        try:
            if self.t.name == "rclone":
                time.sleep(0.1)
            view = read_mount(mp, set(mount_view) | set(self.bucket.read()))
        finally:
            self.t.stop(d, timeout=30)
            shutil.rmtree(cache, ignore_errors=True)
        out = []
        for p in sorted(set(view) | set(mount_view)):
            if view.get(p) != mount_view.get(p):
                f, m = view.get(p), mount_view.get(p)
                out.append((p, f"fresh cache: {show(f)}, same cache: {show(m)}"))
        return out

    def run(self, progress: Callable[[str], None]) -> None:
        rng = random.Random(self.args.seed * 7919 + 1)
        t0 = time.monotonic()
        deadline = t0 + self.args.max_minutes * 60 if self.args.max_minutes else None
        try:
            tree = self.setup()
            self.note(tree)
            for i in range(self.args.cycles):
                if deadline and time.monotonic() > deadline:
                    self.res.error = f"stopped by --max-minutes after {i} cycles"
                    break
                tree = self.cycle(i, tree, rng)
                self.res.cycles = i + 1
                self.res.seconds = time.monotonic() - t0
                c = self.res.counts
                progress(f"[{self.t.name}] cycle {i + 1}/{self.args.cycles}  lost {c['lost']}  "
                         f"corrupt {c['corrupted']}  resurrected {c['resurrected']}  "
                         f"split {c['renames_split']}  conflicts {c['conflicts_without_second_writer']}  "
                         f"other-lost {c['other_writer_lost']}  differ {c['mount_bucket_differ']}"
                         f"+{c['fresh_differs']}  hung {c['hung_kills']}  files {len(tree)}")
            if self.res.cycles and self.args.fresh_every and self.res.cycles % self.args.fresh_every:
                for p, detail in self.fresh_check(tree):
                    self.res.counts["fresh_differs"] += 1
                    self.res.defects.append(Defect(self.res.cycles, "fresh_differs", p, detail,
                                                   "final check", "", "fresh"))
        finally:
            self.res.seconds = time.monotonic() - t0
            for d in list(self.t.reg.daemons):
                try:
                    self.t.stop(d, timeout=60)
                except Exception:  # noqa: BLE001
                    pass
            self.t.close()


# ============================================================================ report


def render_md(results: list[TargetResult], meta: dict[str, Any]) -> str:
    lines = [f"# Crash harness: {meta['cycles']} cycles, seed {meta['seed']}", "",
             f"`{meta['command']}`", "",
             f"{meta['date']} on {meta['machine']}. Files up to {human(meta['max_size'])}; "
             f"second writer {'on' if meta['second_writer'] else 'off'}; S3 replies held "
             f"{meta['reply_delay_ms']:g} ms; relist/dir-cache {meta['relist_seconds']:g} s; "
             f"fresh-cache check every {meta['fresh_every']} cycles and after the last; "
             f"brainfs commits at {meta.get('commit', 'close')}"
             + (f", {meta['close_only']:.0%} of writes end with close alone (no fsync)"
                if meta.get("close_only") else "") + ". "
             "The model and the categories are in the module docstring.", ""]
    if meta.get("pack"):
        lines += [f"**Preload pack mode** (`--pack`): {meta['pack_files']} more files under "
                  f"`{BALLAST}/`; before each operation A is stopped, the pack rebuilt, in "
                  f"{meta['pack_stale']:.0%} of the cycles a packed file changed by another writer "
                  "(the bucket or mount B), the listing snapshot dropped in 30 %, and A mounted "
                  "with an empty cache, so the operation and the kill race the background "
                  "unpacking.", ""]
    for r in results:
        lines.append(f"- **{r.target}**: {r.version}")
    lines += ["", "| | " + " | ".join(r.target for r in results) + " |",
              "|---|" + "---:|" * len(results)]
    lines.append("| cycles | " + " | ".join(str(r.cycles) for r in results) + " |")
    for k in DEFECTS + INFO:
        lines.append(f"| {LABELS[k]} | " + " | ".join(str(r.counts.get(k, 0)) for r in results) + " |")
    lines.append("| operation errors (not from the kill) | " + " | ".join(str(len(r.op_errors)) for r in results) + " |")
    lines.append("| cycles not settled in time | " + " | ".join(str(r.unsettled) for r in results) + " |")
    lines.append("| conflict copies made | " + " | ".join(str(r.conflict_copies) for r in results) + " |")
    lines.append("| kills during / after an operation | " + " | ".join(
        f"{r.landed.get('during', 0)} / {r.landed.get('after', 0)}" for r in results) + " |")
    lines.append("| fresh-cache checks | " + " | ".join(str(r.fresh_checks) for r in results) + " |")
    if meta.get("pack"):
        lines.append("| --pack: kills while unpacking | " + " | ".join(
            str(r.unpacking_kills) for r in results) + " |")
        lines.append("| --pack: packed files changed by another writer before the mount (first "
                     "read EIO, allowed) | " + " | ".join(
                         f"{r.stale_cycles} ({r.stale_eio})" for r in results) + " |")
    lines.append("| bytes written | " + " | ".join(human(r.bytes_written) for r in results) + " |")
    lines.append("| minutes | " + " | ".join(f"{r.seconds / 60:.1f}" for r in results) + " |")
    lines.append("")
    ops = sorted({k for r in results for k in r.ops})
    lines.append("Operations: " + "; ".join(
        f"{r.target}: " + ", ".join(f"{k} {r.ops.get(k, 0)}" for k in ops) for r in results) + ".")
    lines.append("")
    for r in results:
        n = sum(r.ops.get(k, 0) for k in LINK_OPS)
        if r.links:
            lines.append(f"Symbolic links ({r.target}): {n} link operations (" + ", ".join(
                f"{k} {r.ops.get(k, 0)}" for k in LINK_OPS) + "), checked with lstat/readlink "
                "through the mount and a fresh cache, and as `NAME.brainfs-link` objects in "
                "the bucket; links also moved with the trees renamed around them.")
        elif r.target.startswith("rclone"):
            lines.append(f"Symbolic links ({r.target}): none (`rclone mount` without `--links` "
                         "has no symbolic links; the link operations are brainfs only).")
    lines.append("")
    for r in results:
        if not r.defects:
            continue
        lines += [f"**{r.target}, where the defects came from** (defect: operation, kill "
                  "during/after it, view: count):", ""]
        kinds: Counter = Counter()
        for d in r.defects:
            what = LABELS[d.kind]
            if d.kind == "corrupted":
                first = re.split(r"[ :(]", d.detail, maxsplit=1)[0]
                what = "file corrupted: " + {"an": "an older version", "another": "another file's bytes",
                                             "wrong": "wrong bytes"}.get(first, first)
            op = next((name for pre, name in (("atomic", "atomic save"), ("shared", "two writers"),
                                              ("rename tree", "rename tree"), ("rename link", "rename link"),
                                              ("rename file", "file over link"),
                                              ("unlink link", "unlink link"))
                       if d.op.startswith(pre)), d.op.split(" ", 1)[0])
            kinds[(what, op, "after" if d.landed.startswith("after") else "during", d.view)] += 1
        for (what, op, when, view), n in sorted(kinds.items(), key=lambda kv: -kv[1]):
            lines.append(f"- {what}: {op}, kill {when}, seen in {view}: {n}")
        lines.append("")
    for r in results:
        if r.error:
            lines += [f"**{r.target} stopped early**: {r.error}", ""]
        if r.defects:
            lines += [f"## {r.target}: defects ({len(r.defects)})", ""]
            for d in r.defects[:60]:
                lines.append(f"- cycle {d.cycle}, {LABELS[d.kind]}: `{d.path}` — {d.detail} "
                             f"[{d.view}; op: {d.op}; kill {d.landed}]")
            if len(r.defects) > 60:
                lines.append(f"- … {len(r.defects) - 60} more in the JSON")
            lines.append("")
        if r.op_errors:
            lines += [f"## {r.target}: operation errors ({len(r.op_errors)})", ""]
            lines += [f"- {e}" for e in r.op_errors[:30]]
            lines.append("")
    return "\n".join(lines) + "\n"


def load_result(d: dict[str, Any]) -> TargetResult:
    r = TargetResult(d["target"])
    for k, v in d.items():
        if k == "defects":
            v = [Defect(**x) for x in v]
        setattr(r, k, v)
    return r


def combine(paths: list[Path], out: Path) -> int:
    """One Markdown + JSON report of several runs (say brainfs and rclone run apart)."""
    metas, results = [], []
    for p in paths:
        d = json.loads(p.read_text())
        metas.append(d["meta"])
        results += [load_result(r) for r in d["results"]]
    names = Counter(r.target for r in results)
    for r in results:
        if names[r.target] > 1:  # the same target at two commits: name them by commit
            r.target = f"{r.target} {r.version.split()[0]}"
    meta = dict(metas[0])
    meta["command"] = " ; ".join(m["command"] for m in metas)
    meta["targets"] = [r.target for r in results]
    meta["cycles"] = " / ".join(f"{r.cycles} ({r.target})" for r in results)
    stem = out / f"crash-seed{meta['seed']}"
    out.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".md").write_text(render_md(results, meta))
    stem.with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "runs": metas, "results": [asdict(r) for r in results]}, indent=1, default=str))
    print(f"wrote {stem}.md and .json", file=sys.stderr)
    return 0 if all(r.clean() for r in results) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cycles", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--target", choices=("brainfs", "rclone", "both"), default="both")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    p.add_argument("--max-size", type=int, default=5 * 1024 * 1024, help="largest file (bytes)")
    p.add_argument("--fresh-every", type=int, default=10,
                   help="check through a new mount with an empty cache every N cycles (0: never)")
    p.add_argument("--settle-timeout", type=float, default=60.0)
    p.add_argument("--relist-seconds", type=float, default=3.0)
    p.add_argument("--no-second-writer", action="store_true")
    p.add_argument("--commit", choices=("close", "quiet"), default="close",
                   help="brainfs's commit mode (BRAINFS_COMMIT); with quiet, a write in flight "
                        "at the kill may be kept as far as it got (counted, not a defect)")
    p.add_argument("--close-only", type=float, default=0.0,
                   help="share of writes that end with close(2) alone, without fsync")
    p.add_argument("--no-mmap", action="store_true",
                   help="leave out the writes through a shared mapping (a seed's operations "
                        "as before they existed)")
    p.add_argument("--no-links", action="store_true",
                   help="no symbolic-link operations (rclone never gets them)")
    p.add_argument("--ops", default="",
                   help="comma-separated operation kinds to draw from only (debugging), "
                        "e.g. create,symlink,rename_link,file_over_link,unlink_link,rename_tree")
    p.add_argument("--reply-delay-ms", type=float, default=20.0,
                   help="hold every S3 reply this long (the request lands at once): widens the "
                        "window between an upload landing and the mount recording it (0: direct)")
    p.add_argument("--pack", action="store_true",
                   help="brainfs only: every cycle mounts A anew with an empty cache from a freshly "
                        "built preload pack, the unpacking running while the operation and the kill "
                        "land (see the module docstring)")
    p.add_argument("--pack-files", type=int, default=600,
                   help="--pack: files under w/p/ that the pack brings (part of the model)")
    p.add_argument("--pack-stale", type=float, default=0.3,
                   help="--pack: share of cycles where another writer changes a packed file "
                        "after the pack was built")
    p.add_argument("--max-minutes", type=float, default=0.0,
                   help="stop a target after this long (0: no limit); the report says so")
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, caches)")
    p.add_argument("--work", type=Path, default=None)
    p.add_argument("--combine", type=Path, nargs="+", metavar="JSON",
                   help="only render one side-by-side report from these result JSONs (runs of "
                        "single targets) into --out")
    args = p.parse_args(argv)
    if args.combine:
        return combine(args.combine, args.out)
    unknown = {k for k in args.ops.split(",") if k} - {
        n[3:] for n in dir(Generator) if n.startswith("op_")}
    if unknown:
        p.error(f"unknown operation kinds in --ops: {', '.join(sorted(unknown))}")
    if shutil.which("fusermount3") is None:
        print("fusermount3 is not installed", file=sys.stderr)
        return 2
    if args.pack and args.target != "brainfs":
        p.error("--pack is brainfs's preload pack: use it with --target brainfs")

    targets = list(TARGETS) if args.target == "both" else [args.target]
    work = Path(tempfile.mkdtemp(prefix="brainfs-crash-", dir=args.work))
    tty = sys.stderr.isatty()
    last = [0.0]

    def progress(msg: str) -> None:
        if tty:
            sys.stderr.write("\r\x1b[K" + msg[:200])
            sys.stderr.flush()
        elif time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            print(msg, file=sys.stderr, flush=True)

    def on_term(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    results: list[TargetResult] = []
    server: LocalS3 | None = None
    delay: ReplyDelay | None = None
    rc = 0
    try:
        saved = os.dup(2)
        try:
            with open(work / "s3server.log", "ab") as lf:
                os.dup2(lf.fileno(), 2)
                server = LocalS3(work / "s3").start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if args.reply_delay_ms > 0:
            delay = ReplyDelay(("127.0.0.1", server.port), args.reply_delay_ms / 1000)
        for name in targets:
            cls = BrainfsTarget if name == "brainfs" else RcloneTarget
            tw = work / name
            tw.mkdir()
            t = cls(server, delay.url if delay else server.url, f"crash-{name}", "mem", tw, args)
            res = TargetResult(name, version=t.version())
            results.append(res)
            try:
                Harness(t, args, tw, res).run(progress)
            except HarnessError as e:
                res.error = str(e)[-2000:]
                rc = 2
            except KeyboardInterrupt:
                res.error = "interrupted"
                raise
            finally:
                t.close()
                if tty:
                    sys.stderr.write("\n")
            print(f"{name}: {res.cycles} cycles, " + ", ".join(
                f"{LABELS[k]} {v}" for k, v in res.counts.items()), file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        rc = 2
    finally:
        if delay is not None:
            delay.stop()
        if server is not None:
            server.stop()
        left = mounts_under(work)
        for mp in left:
            fuse_unmount(Path(mp))
        if results:
            args.out.mkdir(parents=True, exist_ok=True)
            meta = {
                "cycles": args.cycles, "seed": args.seed, "targets": targets,
                "command": "python -m benchmarks.crash_harness " + shlex.join(argv if argv is not None else sys.argv[1:]),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "machine": f"{platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}",
                "max_size": args.max_size, "fresh_every": args.fresh_every,
                "relist_seconds": args.relist_seconds, "second_writer": not args.no_second_writer,
                "reply_delay_ms": args.reply_delay_ms, "ops": args.ops or "all",
                "commit": args.commit, "close_only": args.close_only,
                "pack": args.pack, "pack_files": args.pack_files if args.pack else 0,
                "pack_stale": args.pack_stale if args.pack else 0.0,
                "work": str(work) if args.keep else None,
            }
            stem = args.out / (f"crash-{args.cycles}-seed{args.seed}"
                               + ("" if args.target == "both" else f"-{args.target}")
                               + ("-pack" if args.pack else ""))
            stem.with_suffix(".md").write_text(render_md(results, meta))
            stem.with_suffix(".json").write_text(json.dumps(
                {"meta": meta, "results": [asdict(r) for r in results]}, indent=1, default=str))
            print(f"wrote {stem}.md and .json", file=sys.stderr)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}", file=sys.stderr)
    if rc == 0 and not all(r.clean() for r in results):
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
