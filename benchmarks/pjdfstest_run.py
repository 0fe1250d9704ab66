"""pjdfstest on a brainfs mount beside ``rclone mount --vfs-cache-mode full``, as root.

    sudo .venv/bin/python benchmarks/pjdfstest_run.py --pjdfstest /tmp/pjdfstest --out DIR \\
        [--groups chmod,open] [--systems brainfs,rclone] [--timeout-per-file 300]

``--pjdfstest`` is a pjdfstest source checkout (https://github.com/pjd/pjdfstest; nothing is
downloaded here): when its ``pjdfstest`` binary is missing it is built in place
(``autoreconf -ifs && ./configure && make pjdfstest``). The run starts the embedded S3 server
(``brainfs s3 serve``), imports a one-file seed tree into ``s3://pjd/brainfs``, mounts it
with ``brainfs mount --allow-other`` and mounts ``s3://pjd/rclone`` of the same server with
``rclone mount --vfs-cache-mode full --allow-other``; then, per group, it runs
``prove -v FILE`` from inside each mount's root, one test file at a time, brainfs first and
rclone second, never both at once. Each file's output goes to OUT/SYSTEM/GROUP/N.log; the
counts go to OUT/pjdfstest.md and OUT/pjdfstest.json. Everything it started is stopped by
PID and its temporary directories removed, also on Ctrl-C, SIGTERM or an error; a run cut
short still writes the counts of the files that finished, marked as incomplete.

Counting is prove's: a test passes when its line is ``ok`` (``# SKIP`` included) or
``not ok # TODO``; a ``not ok`` without ``# TODO`` fails, and so does every test the plan
(``1..N``) announces that never ran (a bail-out, a crash, the per-file timeout).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Callable

SYSTEMS = ("brainfs", "rclone")
#: Debian's names for what the build and the run need (``prove`` is in perl).
APT_PACKAGES = "autoconf automake libtool make gcc perl"
BUILD_TOOLS = ("autoreconf", "automake", "libtoolize", "make", "gcc")
REPO = Path(__file__).resolve().parents[1]
BUCKET = "pjd"


# --------------------------------------------------------------------------- counting

_PLAN = re.compile(r"^(?:\S.*\.t \.\. ?)?1\.\.(\d+)\s*(?:#.*)?$")
_TEST = re.compile(r"^(?:\S.*\.t \.\. ?)?(not )?ok\s+(\d+)\b(.*)$")
_TODO = re.compile(r"#\s*TODO\b", re.IGNORECASE)


@dataclass
class FileResult:
    """One test file's outcome, counted as prove counts it."""

    planned: int | None          # N of the plan 1..N; None when no plan was printed
    passed: int
    total: int                   # the plan, or the highest test number seen without one
    failed: list[int] = field(default_factory=list)  # numbers of failing or never-run tests
    extra: int = 0               # test lines numbered beyond the plan (not counted)
    bailed_out: bool = False
    timed_out: bool = False
    seconds: float = 0.0
    ran_up_to: int = 0           # highest test number seen

    def anomalies(self) -> list[str]:
        """What makes this file's count less than a normal run's, in words."""
        out = []
        if self.timed_out:
            out.append("timed out")
        if self.planned is None:
            out.append("no plan (total = highest test number seen)")
        if self.bailed_out:
            out.append("bailed out")
        if self.extra:
            out.append(f"{self.extra} tests beyond the plan")
        never = [n for n in self.failed if n > self.ran_up_to]
        if never and self.planned is not None:
            out.append(f"{len(never)} planned tests never ran")
        return out


def parse_prove_log(text: str) -> FileResult:
    """Count a ``prove -v FILE`` log: the plan, each numbered ``ok``/``not ok`` line.

    prove's own verdict line (a bare ``ok``, or ``Failed 2/10 subtests``) carries no test
    number and is not a test. A number reported twice passes only if every line passes.
    """
    planned: int | None = None
    verdicts: dict[int, bool] = {}
    bailed = False
    for line in text.splitlines():
        line = line.rstrip()
        if line.startswith("Bail out!"):
            bailed = True
            continue
        m = _PLAN.match(line)
        if m and planned is None:
            planned = int(m.group(1))
            continue
        m = _TEST.match(line)
        if m:
            n = int(m.group(2))
            ok = m.group(1) is None or bool(_TODO.search(m.group(3)))
            verdicts[n] = verdicts.get(n, True) and ok
    seen_max = max(verdicts, default=0)
    total = planned if planned is not None else seen_max
    failed = [n for n in range(1, total + 1) if not verdicts.get(n, False)]
    extra = sum(1 for n in verdicts if n > total)
    return FileResult(planned=planned, passed=total - len(failed), total=total, failed=failed,
                      extra=extra, bailed_out=bailed, ran_up_to=seen_max)


# --------------------------------------------------------------------------- report

@dataclass
class Run:
    """Everything the report says: where, what, and each file's count."""

    command: str
    brainfs_commit: str
    brainfs_dirty: list[str]
    rclone_version: str
    pjdfstest: str
    pjdfstest_dir: str
    timeout_per_file: float
    systems: list[str]
    groups: list[str]
    host: str = ""
    started: str = ""
    finished: str = ""
    seconds: float = 0.0
    status: str = "complete"
    exit_statuses: dict[str, int | None] = field(default_factory=dict)
    # results[group][system][file stem]
    results: dict[str, dict[str, dict[str, FileResult]]] = field(default_factory=dict)

    def add(self, group: str, system: str, stem: str, res: FileResult) -> None:
        self.results.setdefault(group, {}).setdefault(system, {})[stem] = res

    def group_count(self, group: str, system: str) -> tuple[int, int, float]:
        """(passed, total, seconds) of one system on one group."""
        files = self.results.get(group, {}).get(system, {})
        return (sum(f.passed for f in files.values()), sum(f.total for f in files.values()),
                sum(f.seconds for f in files.values()))

    def totals(self, system: str) -> tuple[int, int]:
        """(passed, total) of one system over every group run."""
        counts = [self.group_count(g, system) for g in self.results]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def to_json(self) -> dict:
        """The report's numbers as plain data."""
        groups = {}
        for g, per_sys in self.results.items():
            groups[g] = {}
            for s, files in per_sys.items():
                p, t, secs = self.group_count(g, s)
                groups[g][s] = {"passed": p, "total": t, "seconds": round(secs, 1),
                                "files": {k: asdict(v) for k, v in files.items()}}
        head = {k: v for k, v in asdict(self).items() if k not in ("results", "groups")}
        totals = {s: dict(zip(("passed", "total"), self.totals(s))) for s in self.systems}
        return {**head, "groups_asked": self.groups, "groups": groups, "totals": totals}

    def to_markdown(self) -> str:
        """The report: per group passed/total for each system, totals, provenance."""
        dirty = (f"; uncommitted changes in the mount's code: {', '.join(self.brainfs_dirty)}"
                 if self.brainfs_dirty else "")
        lines = [
            "# pjdfstest: brainfs beside `rclone mount --vfs-cache-mode full`",
            "",
            f"Run {self.started} – {self.finished.split(' ', 1)[-1] if self.finished[:10] == self.started[:10] else self.finished} ({self.seconds / 60:.1f} min), {self.host}, as root.",
            f"brainfs `{self.brainfs_commit}`{dirty}; {self.rclone_version}; "
            f"pjdfstest {self.pjdfstest} ({self.pjdfstest_dir}).",
            "Both mounts at once against one `brainfs s3 serve`, `--allow-other` on both; "
            "`prove -v FILE` from each mount's root, one test file at a time, brainfs then "
            f"rclone per group, {self.timeout_per_file:.0f} s per file at most.",
            "",
            f"Status: **{self.status}**.",
            "",
            "```sh",
            self.command,
            "```",
            "",
        ]
        head = "| group |" + "".join(f" {s} passed / total |" for s in self.systems)
        head += "".join(f" {s} s |" for s in self.systems)
        lines += [head, "|---|" + "---:|" * (2 * len(self.systems))]
        for g in self.results:
            counts = [self.group_count(g, s) if s in self.results[g] else None for s in self.systems]
            row = f"| {g} |" + "".join(f" {c[0]} / {c[1]} |" if c else " — |" for c in counts)
            row += "".join(f" {c[2]:.0f} |" if c else " — |" for c in counts)
            lines.append(row)
        tot = [self.totals(s) for s in self.systems]
        lines.append("| **total** |" + "".join(f" **{p} / {t}** |" for p, t in tot)
                     + " |" * len(self.systems))
        lines += ["", "Counting (prove's): `ok` (with or without `# SKIP`) and `not ok # TODO` pass; "
                  "`not ok` without `# TODO` fails, and so does a test the plan `1..N` announces "
                  "that never ran. The total is the sum of the plans.", ""]
        odd = [f"- {s} {g}/{stem}: {', '.join(r.anomalies())}"
               for g, per_sys in self.results.items() for s, files in per_sys.items()
               for stem, r in files.items() if r.anomalies()]
        lines += ["Files that did not run to their plan's end:", ""] + (odd or ["- none"])
        if self.exit_statuses:
            lines += ["", "Exit statuses after the unmounts (negative: ended by that signal): "
                      + ", ".join(f"{k} {v}" for k, v in self.exit_statuses.items()) + "."]
        lines += ["", "Each file's output: `SYSTEM/GROUP/N.log` beside this report; the mounts' "
                  "and the server's logs: `brainfs/mount.log`, `rclone/mount.log`, `s3-server.log`.", ""]
        return "\n".join(lines)


def write_report(run: Run, out: Path) -> None:
    """OUT/pjdfstest.md and OUT/pjdfstest.json, written whole (temp file + rename)."""
    for name, text in (("pjdfstest.md", run.to_markdown()),
                       ("pjdfstest.json", json.dumps(run.to_json(), indent=1) + "\n")):
        tmp = out / (name + ".tmp")
        tmp.write_text(text)
        tmp.replace(out / name)


# --------------------------------------------------------------------------- processes

class Stopped(Exception):
    """The run was asked to stop (SIGTERM)."""


def is_mounted(mp: Path) -> bool:
    """Whether ``mp`` is a mount point now (per /proc/mounts)."""
    target = os.path.realpath(mp)
    with open("/proc/mounts") as f:
        return any(len(p) > 1 and p[1] == target for p in (line.split() for line in f))


def stop_process(proc: subprocess.Popen, name: str, grace: float | None) -> None:
    """Stop one child we started, by its PID: wait ``grace`` s for it to exit on its own
    (None: send SIGTERM at once), then SIGTERM, then SIGKILL."""
    steps = [(signal.SIGTERM, 90.0), (signal.SIGKILL, 10.0)]
    if grace is not None:
        steps.insert(0, (None, grace))
    for i, (sig, wait) in enumerate(steps):
        if proc.poll() is not None:
            return
        if sig is not None:
            if i:
                print(f"  {name} (pid {proc.pid}) still running: sending {sig.name}", file=sys.stderr)
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass


def unmount(mp: Path, proc: subprocess.Popen, name: str) -> None:
    """``fusermount3 -u``, then the mount's process is waited for by PID (brainfs uploads
    what is pending before it exits); a busy or dead mount is detached lazily at the end."""
    if is_mounted(mp):
        r = subprocess.run(["fusermount3", "-u", str(mp)], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"  fusermount3 -u {mp}: {r.stderr.strip()}", file=sys.stderr)
    # Unmounted: brainfs now uploads what is pending (up to 60 s) and exits. Still mounted
    # (busy): its process gets SIGTERM after a short wait, and unmounts itself.
    stop_process(proc, name, grace=5.0 if is_mounted(mp) else 120.0)
    if is_mounted(mp):
        subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)


def wait_for_mount(mp: Path, proc: subprocess.Popen, name: str, log: Path, timeout: float = 120) -> None:
    """Block until ``mp`` is mounted; fail with the log's tail if ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with status {proc.returncode} before mounting; "
                               f"its log {log}:\n{log.read_text(errors='replace')[-3000:]}")
        if is_mounted(mp):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not mount {mp} in {timeout:.0f} s; its log: {log}")


def group_members(pgid: int) -> list[int]:
    """PIDs of the live processes of process group ``pgid`` (from /proc)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        # Fields after the command (in parentheses, may hold spaces): state ppid pgrp ...
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(d.name))
    return pids


def end_prove(proc: subprocess.Popen) -> None:
    """Stop a ``prove`` we started and every process of the group it leads.

    The test's processes go first: prove then sees its input end and prints the TAP it
    holds in its output buffer (killed itself, it would lose it) with its verdict; prove
    goes last, with the whole group, only if it does not exit on its own.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in group_members(proc.pid):
            if pid != proc.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def run_prove(test: Path, cwd: Path, log: Path, timeout: float) -> FileResult:
    """``prove -v TEST`` from ``cwd``, its output and the test's stderr to ``log``; stopped
    after ``timeout`` s (and on Ctrl-C or SIGTERM), the tests it did not run counted failed.

    Only prove's stdout is counted. Both streams reach the log whole line by line: written
    to one file by two writers, a stderr line could land inside a buffered ``not ok`` line.
    """
    t0 = time.monotonic()
    timed_out = False
    tap: list[str] = []
    with open(log, "w") as lf:
        # Its own process group, so that everything it starts can be found and stopped.
        proc = subprocess.Popen(["prove", "-v", str(test)], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        lock = threading.Lock()

        def pump(stream: IO[bytes], keep: list[str] | None) -> None:
            for raw in stream:
                line = raw.decode(errors="replace").rstrip("\n") + "\n"
                with lock:
                    lf.write(line)
                if keep is not None:
                    keep.append(line)

        pumps = [threading.Thread(target=pump, args=(proc.stdout, tap), daemon=True),
                 threading.Thread(target=pump, args=(proc.stderr, None), daemon=True)]
        for t in pumps:
            t.start()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.poll() is None:
                end_prove(proc)
            for t in pumps:
                t.join(timeout=10)
        if timed_out:
            lf.write(f"\n# pjdfstest_run: stopped after {timeout:.0f} s\n")
    res = parse_prove_log("".join(tap))
    res.timed_out = timed_out
    res.seconds = time.monotonic() - t0
    return res


def child_env(**extra: str) -> dict[str, str]:
    """This environment without the user's S3 and brainfs settings, plus ``extra``: the run
    must use the embedded server's default key pair and no config file."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "BRAINFS_", "RCLONE_"))}
    env.update(BRAINFS_CONFIG="/dev/null", **extra)
    return env


def brainfs_cmd(*args: str) -> list[str]:
    """The brainfs command line of this interpreter's install."""
    return [sys.executable, "-m", "brainfs.front.cli", *args]


# --------------------------------------------------------------------------- set-up checks

class SetupError(Exception):
    """Something the run needs is missing: one message for the user, exit status 2."""


def ensure_built(src: Path, out: Path) -> Path:
    """The pjdfstest binary of the checkout ``src``, built in place when missing."""
    if not (src / "tests").is_dir() or not (src / "configure.ac").is_file():
        raise SetupError(f"{src} is not a pjdfstest source checkout (no tests/ or configure.ac)")
    binary = src / "pjdfstest"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    missing = [t for t in BUILD_TOOLS if shutil.which(t) is None]
    if missing:
        raise SetupError(f"cannot build {binary}: {', '.join(missing)} not found; "
                         f"install them with: apt-get install -y {APT_PACKAGES}")
    log = out / "build.log"
    print(f"building {binary} (log: {log})", file=sys.stderr)
    with open(log, "wb") as lf:
        for step in (["autoreconf", "-ifs"], ["./configure"], ["make", "pjdfstest"]):
            lf.write(f"$ {shlex.join(step)}\n".encode())
            lf.flush()
            r = subprocess.run(step, cwd=src, stdout=lf, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                raise SetupError(f"building pjdfstest failed at `{shlex.join(step)}` (exit "
                                 f"{r.returncode}); see {log}. The build needs: apt-get install "
                                 f"-y {APT_PACKAGES}")
    if not binary.is_file():
        raise SetupError(f"the build finished but left no {binary}; see {log}")
    return binary


def list_groups(src: Path) -> list[str]:
    """The test groups of a checkout: the folders of tests/ that hold ``*.t`` files."""
    return sorted(d.name for d in (src / "tests").iterdir() if d.is_dir() and any(d.glob("*.t")))


def git_out(args: list[str], cwd: Path) -> str:
    """A git command's output, or '' when it fails (not a checkout, no git)."""
    try:
        r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    # Only the line ends go: porcelain lines start with a meaningful space.
    return r.stdout.rstrip("\n") if r.returncode == 0 else ""


def describe_pjdfstest(src: Path) -> str:
    """Its commit, and the files it has changed locally (a misc.sh edited to trace)."""
    commit = git_out(["rev-parse", "--short", "HEAD"], src) or "(not a git checkout)"
    changed = [line[3:] for line in git_out(["status", "--porcelain", "--untracked-files=no"],
                                            src).splitlines()]
    return commit + (f" with local changes to {', '.join(changed)}" if changed else "")


# --------------------------------------------------------------------------- the run

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Run as root: pjdfstest changes owners and runs steps as "
                                "other users.")
    p.add_argument("--pjdfstest", required=True, type=Path, metavar="DIR",
                   help="a pjdfstest source checkout (built in place when DIR/pjdfstest is missing)")
    p.add_argument("--groups", default="", help="comma-separated groups of DIR/tests (default: all)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="where the logs and the report go (must be empty or new)")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="brainfs, rclone or both (default)")
    p.add_argument("--commit", choices=("close", "quiet"), default="close",
                   help="brainfs's commit mode (BRAINFS_COMMIT; see fs/SEMANTICS.md)")
    p.add_argument("--timeout-per-file", type=float, default=300.0, metavar="SECONDS",
                   help="a test file still running after this is killed; its unrun tests fail")
    return p.parse_args(argv)


def check_args(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """(groups, systems), or SetupError naming what is wrong."""
    systems = [s for s in args.systems.split(",") if s]
    bad = [s for s in systems if s not in SYSTEMS]
    if bad or not systems:
        raise SetupError(f"--systems: {', '.join(bad) or 'none given'}; choose from {', '.join(SYSTEMS)}")
    src = args.pjdfstest
    if not (src / "tests").is_dir():
        raise SetupError(f"{src} is not a pjdfstest source checkout (no tests/ folder)")
    known = list_groups(src)
    groups = [g for g in args.groups.split(",") if g] or known
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise SetupError(f"--groups: no such group {', '.join(unknown)} in {src}/tests; "
                         f"the groups are {', '.join(known)}")
    if args.timeout_per_file <= 0:
        raise SetupError("--timeout-per-file must be positive")
    earlier = [n for n in ("pjdfstest.md", "pjdfstest.json", *SYSTEMS) if (args.out / n).exists()]
    if earlier:
        raise SetupError(f"--out {args.out} holds an earlier run ({', '.join(earlier)}): choose "
                         "a new directory (a run's logs are never overwritten)")
    for tool in ("prove", "fusermount3"):
        if shutil.which(tool) is None:
            raise SetupError(f"{tool} not found (apt-get install -y "
                             f"{'perl' if tool == 'prove' else 'fuse3'})")
    return groups, systems


class Children:
    """The long-running processes of a run (server, mounts), stopped by PID in reverse order."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        self.mountpoints: dict[str, Path] = {}
        self._stops: list[tuple[str, Callable[[], None]]] = []

    def start(self, name: str, cmd: list[str], log: Path, env: dict[str, str],
              mountpoint: Path | None = None) -> subprocess.Popen:
        """Start ``cmd`` in its own session (Ctrl-C reaches only this script, which then
        stops the children in order), output appended to ``log``."""
        with open(log, "ab") as lf:
            proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=lf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = proc
        if mountpoint is None:
            self._stops.append((name, lambda: stop_process(proc, name, None)))
        else:
            self.mountpoints[name] = mountpoint
            self._stops.append((name, lambda: unmount(mountpoint, proc, name)))
        return proc

    def alive(self, name: str) -> bool:
        """Whether the process is running and, for a mount, still mounted."""
        mp = self.mountpoints.get(name)
        return self.procs[name].poll() is None and (mp is None or is_mounted(mp))

    def stop_all(self) -> None:
        """Unmount and stop everything, last started first; one failing step does not stop
        the others."""
        while self._stops:
            name, stop = self._stops.pop()
            try:
                stop()
            except Exception as e:  # noqa: BLE001 - clean-up goes on whatever one step raised
                print(f"  stopping {name}: {e}", file=sys.stderr)

    def exit_statuses(self) -> dict[str, int | None]:
        """Each process's exit status (negative: the signal that ended it; None: running)."""
        return {name: proc.poll() for name, proc in self.procs.items()}


def setup_mounts(systems: list[str], tmp: Path, out: Path, children: Children,
                 commit: str = "close") -> dict[str, Path]:
    """Start the server, import the seed, mount each system; {system: mountpoint}."""
    from brainfs.backend.config import Config
    from brainfs.backend.server import free_port, rclone_binary, wait_for_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = child_env(AWS_ENDPOINT_URL=url,
                    # pjdfstest never recalls: no embedding model loaded in the daemon.
                    BRAINFS_RECALL_WARMUP="0", BRAINFS_COMMIT=commit)
    server = children.start("s3 server", brainfs_cmd("s3", "serve", "--root", str(tmp / "s3"),
                                                     "--port", str(port)),
                            out / "s3-server.log", env)
    wait_for_port("127.0.0.1", port, 30, server)
    seed = tmp / "seed"
    seed.mkdir()
    (seed / "README.md").write_text("pjdfstest runs in this mount's root.\n")
    r = subprocess.run(brainfs_cmd("-q", "import", str(seed), f"s3://{BUCKET}/brainfs"), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"brainfs import of the seed failed: {r.stderr.strip() or r.stdout.strip()}")
    mounts: dict[str, Path] = {}
    for system in systems:
        mp = tmp / f"{system}-mnt"
        mp.mkdir()
        (out / system).mkdir(exist_ok=True)
        log = out / system / "mount.log"
        if system == "brainfs":
            cmd = brainfs_cmd("mount", f"s3://{BUCKET}/brainfs", str(mp), "--allow-other",
                              "--cache-dir", str(tmp / "brainfs-cache"), "--foreground")
            menv = env
        else:
            access, secret, _ = Config().credentials()
            (tmp / "rclone.conf").write_text("")
            cmd = [rclone_binary(), "mount", f"pjds3:{BUCKET}/rclone", str(mp),
                   "--config", str(tmp / "rclone.conf"), "--vfs-cache-mode", "full",
                   "--allow-other", "--cache-dir", str(tmp / "rclone-cache")]
            # The remote is defined by the environment, so no secret is on a command line.
            menv = child_env(RCLONE_CONFIG_PJDS3_TYPE="s3", RCLONE_CONFIG_PJDS3_PROVIDER="Other",
                             RCLONE_CONFIG_PJDS3_ENDPOINT=url,
                             RCLONE_CONFIG_PJDS3_ACCESS_KEY_ID=access,
                             RCLONE_CONFIG_PJDS3_SECRET_ACCESS_KEY=secret)
        proc = children.start(system, cmd, log, menv, mountpoint=mp)
        wait_for_mount(mp, proc, system, log)
        mounts[system] = mp
    return mounts


def run_groups(run: Run, src: Path, mounts: dict[str, Path], out: Path, timeout: float,
               children: Children) -> None:
    """Every file of every group, brainfs then rclone per group, one file at a time."""
    for group in run.groups:
        tests = sorted((src / "tests" / group).glob("*.t"))
        for system in run.systems:
            gdir = out / system / group
            gdir.mkdir(parents=True, exist_ok=True)
            t0 = time.monotonic()
            for test in tests:
                if not children.alive(system):
                    raise RuntimeError(f"the {system} mount is gone (before {group}/{test.name}); "
                                       f"see {out / system / 'mount.log'}")
                res = run_prove(test, mounts[system], gdir / f"{test.stem}.log", timeout)
                run.add(group, system, test.stem, res)
            p, t, _ = run.group_count(group, system)
            print(f"{group:16} {system:8} {p:5} / {t:<5} {time.monotonic() - t0:6.0f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("pjdfstest_run: must run as root (pjdfstest changes owners and runs steps as other "
              "users; try: sudo .venv/bin/python benchmarks/pjdfstest_run.py ...)", file=sys.stderr)
        return 2
    try:
        groups, systems = check_args(args)
        args.out.mkdir(parents=True, exist_ok=True)
        ensure_built(args.pjdfstest.resolve(), args.out)
    except SetupError as e:
        print(f"pjdfstest_run: {e}", file=sys.stderr)
        return 2
    from brainfs.backend.server import rclone_binary

    src = args.pjdfstest.resolve()
    out = args.out.resolve()
    version = subprocess.run([rclone_binary(), "version"], capture_output=True, text=True)
    run = Run(
        command=shlex.join([sys.executable, *(sys.argv if argv is None else [__file__, *argv])]),
        brainfs_commit=git_out(["rev-parse", "--short", "HEAD"], REPO) or "(unknown)",
        brainfs_dirty=[line[3:] for line in git_out(
            ["status", "--porcelain", "--untracked-files=no", "--", "fs", "cache", "backend"],
            REPO).splitlines()],
        rclone_version=(version.stdout.splitlines() or ["rclone (version unknown)"])[0],
        pjdfstest=describe_pjdfstest(src), pjdfstest_dir=str(src),
        timeout_per_file=args.timeout_per_file, systems=systems, groups=groups,
        host=f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs",
    )

    def on_sigterm(signum: int, _frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    # Ctrl-C raises KeyboardInterrupt even when started with SIGINT ignored (`cmd &`).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    old_term = signal.signal(signal.SIGTERM, on_sigterm)
    t0 = time.monotonic()
    run.started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    children = Children()
    tmp = Path(tempfile.mkdtemp(prefix="pjdfstest-run-"))
    rc = 0
    try:
        try:
            # Steps run as uid 65534 from inside the mounts: their parents must be searchable.
            tmp.chmod(0o755)
            mounts = setup_mounts(systems, tmp, out, children, args.commit)
            run_groups(run, src, mounts, out, args.timeout_per_file, children)
        except (KeyboardInterrupt, Stopped) as e:
            why = "SIGINT" if isinstance(e, KeyboardInterrupt) else str(e)
            run.status = f"interrupted ({why}); only the files counted below ran"
            print(f"pjdfstest_run: {run.status}", file=sys.stderr)
            rc = 130
        except Exception as e:  # noqa: BLE001 - said, then the partial counts are written
            run.status = "stopped by an error: " + (str(e).splitlines() or [type(e).__name__])[0]
            print(f"pjdfstest_run: {e}", file=sys.stderr)
            rc = 1
    finally:
        _ignore_signals_while_cleaning()
        print("pjdfstest_run: unmounting and stopping what it started", file=sys.stderr)
        children.stop_all()
        left = [str(mp) for mp in children.mountpoints.values() if is_mounted(mp)]
        if left:
            # Never delete through a live mount: that would delete the bucket's files.
            print(f"pjdfstest_run: {', '.join(left)} still mounted: {tmp} is left in place",
                  file=sys.stderr)
            rc = rc or 1
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        run.exit_statuses = children.exit_statuses()
        run.finished = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        run.seconds = time.monotonic() - t0
        # Also for a run stopped before its first file finished: the status says so.
        write_report(run, out)
        print(f"pjdfstest_run: report in {out / 'pjdfstest.md'} ({run.seconds / 60:.1f} min)",
              file=sys.stderr)
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    return rc


def _ignore_signals_while_cleaning() -> None:
    """Clean-up runs to its end: a second Ctrl-C or SIGTERM only says so (every wait in it
    is bounded)."""
    def note(signum: int, _frame: object) -> None:
        print("pjdfstest_run: still cleaning up (unmounting, stopping by PID); please wait",
              file=sys.stderr)
    signal.signal(signal.SIGINT, note)
    signal.signal(signal.SIGTERM, note)


if __name__ == "__main__":
    sys.exit(main())
