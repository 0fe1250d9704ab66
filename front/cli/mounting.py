"""Commands about mounts: ``mount`` (foreground or a spawned daemon), ``umount``, ``status``,
``ls`` (the whole corpus, beside a mount's working set) and ``demo``.

The mount options are declared once (``options.MOUNT_OPTIONS``, each naming the config field
it sets). A background mount resolves its config once (file, environment, flags, the cache
directory) and hands the result to the daemon it spawns through a pipe (:func:`daemon_argv`,
``options.send_resolved_config``): the daemon never resolves it again.
"""

from __future__ import annotations

import argparse
import errno
import logging
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainfs.backend.config import Config, ConfigError
from brainfs.backend.errors import BackendError
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import (DIR_MARKER, INTERNAL_PREFIX, LINK_SUFFIX, CorpusURL, is_link, link_name)
from brainfs.cache.local.errors import CacheError
from brainfs.fs.fusectl import abort_connection, in_proc_mounts, proc_mounts
from brainfs.front.usage import STATUS_TIMEOUT
from brainfs.fs.process import pid_alive, processes_using

from . import unmounted
from .common import (
    config_of,
    empty_hint,
    is_empty,
    NoAnswer,
    progress_bar,
    quiet,
    URL_HELP,
    UsageError,
    warn,
)
from .common import command as make_command
from .options import MOUNT_OPTIONS, send_resolved_config

if TYPE_CHECKING:
    from brainfs.backend.store import ObjectInfo

# The API, boto3 (backend.store), the daemon and its mountpoint check, the catalog (sqlite3),
# the naive mount and the demo are imported inside the commands that use them: the parser
# loads this module, and `brainfs --help`, `mount` up to its daemon's start and `status`
# must start without them (tests/front/test_cli_start.py).

log = logging.getLogger("brainfs")


def _status_of(mp: Path, timeout: float = STATUS_TIMEOUT) -> dict[str, Any]:
    """A mount's status (:func:`brainfs.front.api.status_of`)."""
    from brainfs.front.api import status_of  # here, for start-up time: `brainfs mount` rarely asks

    return status_of(mp, timeout=timeout)


def add_mount_options(parser: argparse.ArgumentParser) -> None:
    """Add every mount option to ``parser`` (the ``mount`` command's)."""
    for o in MOUNT_OPTIONS:
        parser.add_argument(*o.flags, **o.kwargs)


def option_flag(name: str) -> tuple[str, bool] | None:
    """mount(8)'s ``-o NAME`` as a ``brainfs mount`` flag: ``("--read-only", False)`` for
    ``read_only`` (the bool: whether it takes a value); None when NAME is no mount option.
    The options between a mount and its daemon are not offered."""
    for o in MOUNT_OPTIONS:
        if o.kwargs.get("help") is argparse.SUPPRESS:
            continue
        if o.dest == name:
            return o.flags[0], not o.is_switch
    return None


def daemon_argv(args: argparse.Namespace, url: CorpusURL, mp: Path, notify_fd: int,
                log_file: Path, config_fd: int) -> list[str]:
    """The daemon's command line: ``mount --foreground`` with the common options, the pipe
    its resolved config waits in, the pipe it reports progress on and its log file, and the
    mount options the user gave that set no setting (``--naive``). Settings never travel
    as flags: the config in the pipe holds them, as the parent resolved them."""
    argv = [sys.executable, "-m", "brainfs.front.cli", "mount", str(url), str(mp), "--foreground",
            "--config-fd", str(config_fd), "--notify-fd", str(notify_fd), "--log-file", str(log_file),
            *["-v"] * args.verbose, *["-q"] * args.quiet, "--log-format", args.log_format]
    for o in MOUNT_OPTIONS:
        value = o.value(args)
        if not o.to_daemon or o.setting is not None or value is None:
            continue
        argv += [o.flags[0]] if o.is_switch else [o.flags[0], str(value)]
    return argv


#: How long a mount whose daemon is not recognised by its command line has to answer a
#: status read before it counts as hung: a live daemon answers in milliseconds.
UNRECOGNISED_STATUS_TIMEOUT = 3.0


def _recover_mountpoint(mp: Path) -> None:
    """A brainfs mount already at ``mp`` whose daemon is gone is detached, its FUSE
    connection aborted first: a daemon killed while one of its threads slept in the kernel
    (fs/fusectl.py) leaves a connection no one answers, where even a ``stat`` of the
    mountpoint would wait for ever. One whose daemon still runs but does not answer is
    refused with the way out. Looked at through /proc only, never by touching ``mp``."""
    target = os.path.abspath(mp)
    kinds = [fstype for where, fstype in proc_mounts() if where == target]
    if not kinds or kinds[-1] != "fuse.brainfs":
        return  # nothing there, or not ours: the usual checks say so
    live = [pid for pid in _daemon_pids(target) if pid_alive(pid)]
    if live:
        try:
            _status_of(mp, timeout=STATUS_TIMEOUT)
        except NoAnswer:
            raise UsageError(f"{mp} is mounted and does not answer (daemon "
                             f"{', '.join(map(str, live))} hung or stopped); `brainfs umount "
                             f"--force {mp}` detaches it") from None
        except UsageError:
            pass  # its connection is gone already: detached below
        else:
            return  # a working mount: "already a mountpoint"
    else:
        # No process we recognise as its daemon (a path given through a symlink, options in
        # another order, a daemon started otherwise): a mount that answers is alive whatever
        # its command line says, and is never aborted; a dead daemon's answers ENOTCONN, a
        # hung one's not at all.
        try:
            _status_of(mp, timeout=UNRECOGNISED_STATUS_TIMEOUT)
        except UsageError:
            pass  # gone or hung: detached below
        else:
            return
    aborted = abort_connection(target)
    subprocess.run(["fusermount3", "-u", "-z", target], check=False, stderr=subprocess.DEVNULL)
    warn(f"{mp}: detached a mount whose daemon had died"
         + (" (its connection hung: aborted)" if aborted else "")
         + "; what it had not uploaded is in its cache and goes up with this mount")


def _check_new_mountpoint(mp: Path) -> None:
    """A mountpoint must exist already, as for mount(8): a typo must not create a
    directory and mount there."""
    try:
        os.stat(mp)
    except OSError as e:
        if e.errno == errno.ENOTCONN:
            raise UsageError(f"{mp}: a mount whose daemon has died is still attached there "
                             f"(transport endpoint is not connected); detach it first: brainfs "
                             f"umount {mp}") from None
    if not mp.exists() and not mp.is_symlink():
        raise UsageError(f"mountpoint {mp} does not exist (create it first: mkdir -p {mp})")


def cmd_mount(args: argparse.Namespace) -> int:
    from brainfs.fs.mountpoint import MountError, check_mountpoint

    cfg = config_of(args)
    url = CorpusURL.parse(args.url)
    mp = Path(args.mountpoint)
    if not args.foreground or args.notify_fd is None:
        # Before anything touches the mountpoint; a daemon spawned below leaves it to us
        # (its parent would look like a live daemon of the mount to it).
        _recover_mountpoint(mp)
    if not args.foreground:
        # The mountpoint is refused here at once. The bucket is not: the daemon checks it
        # and says what is wrong through the pipe (checked here too, a mount paid the
        # checks twice, and waited for this process's S3 client before the daemon began).
        _check_new_mountpoint(mp)
        check_mountpoint(mp)
        return _spawn_daemon(args, cfg, url, mp)
    notify = _notifier(args.notify_fd)
    try:
        _check_new_mountpoint(mp)
        log.debug("mounting %s at %s with %s", url, mp.resolve(), _safe_config(cfg))
        if args.naive:
            from brainfs.tools.naive import run_naive

            check_mountpoint(mp)
            _check_corpus_for_mount(url, cfg, lambda message: notify(f"warn {message}"))
            return run_naive(url, mp, cfg, notify)
        from brainfs.fs.daemon import run_foreground

        return run_foreground(url, mp, cfg, notify)
    except (UsageError, MountError, BackendError, CacheError, ConfigError, OSError) as e:
        notify(f"error {e}")
        raise
    finally:
        notify("stopping")


def _check_corpus_for_mount(url: CorpusURL, cfg: Config, say=warn) -> None:
    """The bucket must exist; an empty prefix mounts (a new memory starts empty, as with
    rclone and mount-s3) but is named, since it is more often a typo (``say``s it)."""
    from brainfs.backend.store import ObjectStore  # here, for start-up time: boto3 is slow to import

    store = ObjectStore(url, cfg)
    try:
        store.check()
        if is_empty(store):
            say(f"{url} holds no files: mounting an empty memory{empty_hint(url, cfg)}")
    finally:
        store.close()


def _safe_config(cfg: Config) -> dict:
    """The settings for a debug line, secrets left out."""
    out = {}
    for name, v in cfg.settings().items():
        if name in ("secret_key", "session_token", "llm_api_key", "access_key"):
            v = "(set)" if v else None
        out[name] = str(v) if isinstance(v, Path) else v
    return out


def _notifier(fd: int | None):
    """Progress/ready/error lines to the parent's pipe (behind ``_spawn_daemon``), and
    readiness to systemd (``Type=notify``: READY=1 once the mount is usable)."""

    stream = os.fdopen(fd, "w", buffering=1) if fd is not None else None

    def say(line: str) -> None:
        kind, _, rest = line.partition(" ")
        if kind == "warn" and stream is None:
            warn(rest)  # started by hand: this process's stderr is the user's
            return
        if kind == "ready":
            sd_notify(f"READY=1\nMAINPID={os.getpid()}\nSTATUS=mounted")
        elif kind == "error":
            sd_notify(f"STATUS=error: {rest.splitlines()[0] if rest else ''}")
        elif kind == "stopping":
            sd_notify("STOPPING=1")
            return
        elif kind == "progress":
            parts = rest.split()
            if len(parts) == 3:
                sd_notify(f"STATUS={parts[0]} {parts[1]}/{parts[2]}")
        if stream is None:
            return
        try:
            stream.write(line.replace("\n", " ") + "\n")
        except OSError:
            pass

    return say


def _spawn_daemon(args: argparse.Namespace, cfg: Config, url: CorpusURL, mp: Path) -> int:
    """Start the daemon in its own session, with the config resolved here; follow its
    progress until it is ready."""
    # The cache directory is settled here, once: the daemon gets it inside its config
    # (absolute, as the daemon's own cwd must not matter) and never derives it again.
    cache_dir = cfg.cache_dir_for(url.bucket, url.prefix).absolute()
    cfg = cfg.replace(cache_dir=cache_dir)
    fresh = not cache_dir.exists()
    cache_dir.mkdir(parents=True, exist_ok=True)
    log_path = cache_dir / "mount.log"
    err_path = cache_dir / "mount.stderr"
    config_r = send_resolved_config(cfg)
    try:
        r, w = os.pipe()
        argv = daemon_argv(args, url, mp, notify_fd=w, log_file=log_path, config_fd=config_r)
        # The log proper is mount.log (rotated by the daemon); what escapes logging (a crash
        # in C code, an interpreter error) lands in mount.stderr, emptied at each start.
        with open(err_path, "wb") as errf:
            child = subprocess.Popen(argv, pass_fds=(w, config_r), stdin=subprocess.DEVNULL,
                                     stdout=errf, stderr=errf, start_new_session=True)
        os.close(w)
    finally:
        os.close(config_r)
    try:
        return _follow_daemon(child, r, url, mp, log_path, err_path)
    except UsageError:
        if fresh and child.poll() is not None:
            # A mount that never started (a mistyped bucket, an unreachable endpoint: the
            # daemon checks them) leaves no cache directory behind; the error was said.
            shutil.rmtree(cache_dir, ignore_errors=True)
        raise
    except KeyboardInterrupt:
        # Ctrl-C while the preload runs: the user no longer wants this mount. The daemon
        # is in its own session (it must outlive this terminal), so stop it here.
        child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if in_proc_mounts(_target(mp)):
            subprocess.run(["fusermount3", "-u", "-z", _target(mp)], check=False)
        print(f"\nbrainfs: mount of {url} at {mp} cancelled", file=sys.stderr)
        return 130


def _follow_daemon(child: subprocess.Popen, r: int, url: CorpusURL, mp: Path, log_path: Path,
                   err_path: Path) -> int:
    """Show the daemon's preload progress until it says ready (0) or fails (UsageError)."""
    bar = None
    with os.fdopen(r) as pipe:
        for line in pipe:
            kind, _, rest = line.strip().partition(" ")
            if kind == "progress":
                _, done, total = rest.split()
                if bar is None:
                    bar = progress_bar(int(total), "preload")
                bar.n = int(done)
                bar.refresh()
            elif kind == "warn":
                warn(rest)
            elif kind == "ready":
                if bar:
                    bar.close()
                t = json.loads(rest or "{}")
                if not quiet():
                    later = t.get("preload_unpacking", 0)
                    n = t.get("preload_files", 0)
                    what = (f"{n} files preloaded in {t.get('preload_s', 0):.2f}s" if n or
                            t.get("preload_deferred") else "the corpus has no file yet"
                            if t.get("corpus_files") == 0 else "the working set was in the cache already")
                    print(f"mounted {url} at {mp} (pid {child.pid}; {what}"
                          + (f", {later} of them being written to the cache" if later else "")
                          + f"; log {log_path})")
                return 0
            elif kind == "error":
                if bar:
                    bar.close()
                child.wait(timeout=30)
                raise UsageError(rest)
    child.wait(timeout=30)
    raise UsageError(f"the mount daemon exited with status {child.returncode}; see {log_path} "
                     f"and {err_path}")



def _target(mp: Path) -> str:
    """The absolute mountpoint path as /proc/mounts spells it, resolving symlinks above it
    but never touching the mountpoint itself (a stat there would hang on a hung mount)."""
    path = os.path.abspath(mp)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _daemon_pids(target: str) -> list[int]:
    """Processes running ``brainfs … mount SOURCE MOUNTPOINT`` for ``target`` (found by
    their command line when the mount cannot say its own PID)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            argv = (d / "cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = os.readlink(d / "cwd")
        except OSError:
            continue
        if "mount" not in argv or not any("brainfs" in a for a in argv[:3]):
            continue
        urls = [i for i, a in enumerate(argv) if a.startswith("s3://")]
        if not urls or urls[0] + 1 >= len(argv):
            continue
        given = os.path.join(cwd, argv[urls[0] + 1])
        if target in (os.path.normpath(given), _target(Path(given))):
            found.append(int(d.name))
    return found


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def _force_unmount(mp: Path, target: str, pids: list[int]) -> None:
    """Detach the mount at once and kill its daemon: the working set and its journal stay
    in the cache, so the next mount of the corpus uploads what was still pending."""
    # First end the FUSE connection: a daemon stuck in the kernel cannot die while it is
    # open, and every request on the mount would wait for it (fusectl.py).
    abort_connection(target)
    subprocess.run(["fusermount3", "-u", "-z", target], check=False, stderr=subprocess.DEVNULL)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _wait_gone(pid, 10)
    print(f"unmounted {mp} by force" + (f" (daemon {', '.join(map(str, pids))} killed)" if pids else "")
          + "; writes still pending are uploaded by the next mount of the corpus")


def cmd_umount(args: argparse.Namespace) -> int:
    mp = Path(args.mountpoint)
    target = _target(mp)
    if not in_proc_mounts(target):
        raise UsageError(f"{mp} is not mounted")
    try:
        st = _status_of(mp, timeout=min(STATUS_TIMEOUT, args.timeout))
        pid = int(st["pid"])
    except NoAnswer:
        pids = _daemon_pids(target)
        if not args.force:
            raise UsageError(f"{mp} does not answer (daemon {', '.join(map(str, pids)) or '?'} hung "
                             f"or stopped); `brainfs umount --force {mp}` detaches it") from None
        _force_unmount(mp, target, pids)
        return 0
    except UsageError:
        # A dead daemon leaves "Transport endpoint is not connected": detach it.
        subprocess.run(["fusermount3", "-u", "-z", target], check=False)
        print(f"unmounted {mp} (no status answered: a --naive mount or a dead daemon)")
        return 0
    if not args.force:
        # The daemon's unmount is lazy: a process still writing there would get ENOTCONN at
        # its next write and lose what it had not written. umount(8) refuses; so do we.
        users = processes_using(target, exclude={pid, os.getpid()})
        if users:
            shown = ", ".join(f"{comm} (pid {p}) has {what}" for p, comm, what in users[:3])
            more = f" and {len(users) - 3} more" if len(users) > 3 else ""
            raise UsageError(f"{mp} is busy: {shown}{more}; stop or leave them, or "
                             f"`brainfs umount --force {mp}` detaches it now")
    cache_dir = st.get("cache_dir")
    # Where the daemon's log stands now: what it writes from here on says how its flush
    # ended, should it end with writes left (unmounted.py).
    log_file = unmounted.daemon_log(pid)
    log_from = unmounted.log_size(log_file)
    os.kill(pid, signal.SIGTERM)
    try:
        with _interruptible():
            gone = _wait_gone(pid, args.timeout)
    except KeyboardInterrupt:
        return _interrupted(mp, target, pid, st)
    if gone:
        print(f"unmounted {mp}")
        left = _pending_writes(Path(cache_dir)) if cache_dir else 0
        if left:
            from brainfs.cache.local.catalog import CATALOG_NAME

            ending = unmounted.how_it_ended(log_file, log_from, Path(cache_dir) / CATALOG_NAME)
            warn(unmounted.pending_message(left, ending, pid, cache_dir, str(st.get("corpus")),
                                           (st.get("backend") or {}).get("last_error")))
            return EXIT_PENDING
        return 0
    if args.force:
        _force_unmount(mp, target, [pid])
        return 0
    if not in_proc_mounts(target):
        # Unmounted already; the daemon is still uploading (a slow S3).
        left = _pending_writes(Path(cache_dir)) if cache_dir else 0
        warn(f"unmounted {mp}, but daemon {pid} is still uploading {left or 'its'} "
             f"write{'s' if left != 1 else ''} after {args.timeout:.0f}s; it stops by itself "
             f"within a minute; `kill {pid}` stops it now and leaves them in {cache_dir} for "
             f"the next mount of {st.get('corpus')} with that cache")
        return EXIT_PENDING
    raise UsageError(f"daemon {pid} did not finish within {args.timeout:.0f}s (uploads pending?); "
                     f"`brainfs umount --force {mp}` stops it now")


class _interruptible:
    """While umount waits for the daemon: SIGTERM (a service manager's stop, `timeout`)
    ends the wait as Ctrl-C does, so that umount says where the unmount stands."""

    def __enter__(self) -> None:
        def stop(signum, frame):  # noqa: ARG001
            raise KeyboardInterrupt

        self.old = signal.signal(signal.SIGTERM, stop)

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGTERM, self.old)


def _interrupted(mp: Path, target: str, pid: int, st: dict) -> int:
    """umount was interrupted while the daemon flushed: the daemon goes on by itself (it
    runs in its own session); say what is still pending and who uploads it."""
    cache_dir = st.get("cache_dir")
    left = _pending_writes(Path(cache_dir)) if cache_dir else 0
    where = "still mounted, being unmounted" if in_proc_mounts(target) else "unmounted"
    if pid_alive(pid):
        state = (f"daemon {pid} goes on uploading {left} pending write{'s' if left != 1 else ''} "
                 f"and exits when done (`kill {pid}` stops it now)")
    else:
        state = f"daemon {pid} has ended, {left} write{'s' if left != 1 else ''} not uploaded"
    print(f"\nbrainfs: umount interrupted: {mp} is {where}; {state}. What is still pending "
          f"stays in {cache_dir}; the next mount of {st.get('corpus')} with that cache "
          "uploads it; do not delete it", file=sys.stderr, flush=True)
    return 130


#: Exit status of `brainfs umount` when the mount is gone but writes still wait in its
#: cache for S3 (EX_TEMPFAIL: a script must not delete the cache or assume the bucket has them).
EXIT_PENDING = 75


def _pending_writes(cache_dir: Path) -> int:
    """Changes the cache still has to upload (its journal), read after the daemon is gone."""
    import sqlite3

    from brainfs.cache.local.catalog import CATALOG_NAME

    db = cache_dir / CATALOG_NAME
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT count(*) FROM journal").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error as e:
        log.debug("cannot read %s: %s", db, e)
        return 0


def cmd_status(args: argparse.Namespace) -> int:
    st = _status_of(Path(args.mountpoint))
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    mb = 1024 * 1024
    print(f"{st['corpus']} at {st['mountpoint']} (pid {st['pid']})")
    print(f"  files:     {st['files']} in corpus, {st['local_files']} local, {st['remote_files']} remote"
          + (f" (ls and find show the local ones; `brainfs ls {args.mountpoint}` lists all)"
             if st.get("remote_files") and st.get("listing_mode") != "corpus" else "")
          + (" (ls and find show them all; a remote one is fetched when read)"
             if st.get("remote_files") and st.get("listing_mode") == "corpus" else "")
          + (f"; {st['unpacking_files']} preloaded, being written to the cache"
             if st.get("unpacking_files") else ""))
    print(f"  cache:     {st['local_bytes'] / mb:.1f} MiB of {st['cache_budget_bytes'] / mb:.0f} MiB in {st['cache_dir']}")
    print(f"  writes:    {st['dirty_files']} dirty, {st['pending_uploads']} pending uploads"
          + (f", {st['uncommitted']} not committed yet (commits when quiet or at fsync)"
             if st.get("commit") == "quiet" else
             f", {st['uncommitted']} not committed yet (commits at its writer's close, fsync, "
             f"or once idle)" if st.get("uncommitted") else ""))
    if st.get("conflict_copies"):
        n = st["conflict_copies"]
        print(f"  conflicts: {n} conflict cop{'ies' if n != 1 else 'y'} (an edit that lost a race "
              f"with another writer, kept beside the file), e.g. {', '.join(st['conflict_examples'])}")
    be = st.get("backend", {})
    print(f"  backend:   {st['endpoint']}; last error: {be.get('last_error') or 'none'}")
    print(f"  recall:    {st.get('recall')}")
    return 0



def _mount_root(path: str) -> str | None:
    """The brainfs mount that holds ``path`` (the longest mountpoint above it), or None."""
    target = _target(Path(path))
    best = None
    for mp, fstype in proc_mounts():
        if fstype != "fuse.brainfs":
            continue
        if (target == mp or target.startswith(mp.rstrip("/") + "/")) and (
                best is None or len(mp) > len(best)):
            best = mp
    return best


def cmd_ls(args: argparse.Namespace) -> int:
    """Every file of the corpus, not only the working set a mount lists."""
    cfg = config_of(args)
    if args.target.startswith("s3://"):
        url = CorpusURL.parse(args.target)
        under, shown = "", ""
    else:
        root = _mount_root(args.target)
        if root is None:
            raise UsageError(f"{args.target} is neither a corpus URL s3://BUCKET/PREFIX nor inside "
                             "a brainfs mount")
        st = _status_of(Path(root))
        url = CorpusURL.parse(st["corpus"])
        if cfg.s3.endpoint_url is None and st.get("endpoint", "aws") != "aws":
            cfg = cfg.override(endpoint_url=st["endpoint"])
        under = os.path.relpath(_target(Path(args.target)), root)
        under = "" if under == "." else under
        shown = args.target.rstrip("/") + "/"
    from brainfs.backend.store import ObjectStore  # here, for start-up time: boto3 is slow to import

    store = ObjectStore(url, cfg)
    try:
        store.check()
        objs = [o for o in store.list(under) if _listed_name(o.path) is not None]
        if not objs and under:
            # ls of a file lists that file, as ls(1) does (a link: its object).
            for key in (under, under + LINK_SUFFIX):
                try:
                    o = store.head(key)
                except NoSuchKey:
                    continue
                _print_entry(o, args.target.rstrip("/"), args.long)
                return 0
            raise UsageError(f"{args.target}: no such file or directory in {url}")
        for o in sorted(objs, key=lambda o: _listed_name(o.path) or o.path):
            path = _listed_name(o.path) or o.path
            _print_entry(o, shown + (path[len(under):].lstrip("/") if under else path), args.long)
    finally:
        store.close()
    return 0


def _print_entry(o: ObjectInfo, name: str, long: bool) -> None:
    if long:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(o.mtime))
        print(f"{'l' if is_link(o.path) else '-'} {o.size:>10}  {when}  {name}")
    else:
        print(name)


def _listed_name(path: str) -> str | None:
    """The name ``brainfs ls`` shows for an object, as a mount shows it: a link under its
    own name, no directory markers, none of brainfs's own objects (under any prefix, for a
    listing of a whole bucket)."""
    if f"/{INTERNAL_PREFIX}/" in f"/{path}/":  # under .brainfs/ at any depth, or it
        return None
    if path.rsplit("/", 1)[-1] == DIR_MARKER:
        return None
    return link_name(path) if is_link(path) else path



def cmd_demo(args: argparse.Namespace) -> int:
    from brainfs.front import demo

    if args.stop:
        return demo.stop(Path(args.mountpoint))
    return demo.run(Path(args.mountpoint), args.port, args.size)




def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the ``brainfs`` parser."""
    command = functools.partial(make_command, common=common)
    mo = command(sub, "mount", "mount a corpus (returns once the working set is preloaded)",
                 ["brainfs mount s3://memory/alice ~/memory",
                  "brainfs mount s3://memory/alice ~/memory --read-only --preload-budget 512M",
                  "brainfs -v mount s3://memory/alice ~/memory --foreground   # logs on stderr",
                  "mount -t fuse.brainfs s3://memory/alice /mnt/memory -o endpoint_url=http://127.0.0.1:9000"],
                 description="Mount a corpus. The mountpoint must exist and be empty. An empty "
                 "prefix is mounted (a new memory starts empty) with a warning. In the background "
                 "(the default) the log is CACHE_DIR/mount.log, rotated; with --foreground it goes "
                 "to stderr and systemd's Type=notify is told when the mount is ready. Ctrl-C "
                 "during the preload cancels the mount.")
    mo.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    mo.add_argument("mountpoint", metavar="MOUNTPOINT", help="an existing, empty directory")
    add_mount_options(mo)
    mo.set_defaults(func=cmd_mount)

    um = command(sub, "umount", "flush pending uploads and unmount",
                 ["brainfs umount ~/memory", "brainfs umount ~/memory --timeout 600",
                  "brainfs umount --force ~/memory   # a hung mount"])
    um.add_argument("mountpoint", metavar="MOUNTPOINT", help="a brainfs mount")
    um.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                    help="how long to wait for pending uploads before giving up")
    um.add_argument("--force", action="store_true",
                    help="a busy or hung mount too: detach it at once and kill a hung daemon (pending "
                    "writes stay journaled in the cache; the next mount uploads them)")
    um.set_defaults(func=cmd_umount)

    st = command(sub, "status", "working set, cache use, dirty files, backend health",
                 ["brainfs status ~/memory", "brainfs status ~/memory --json | jq .dirty_files"])
    st.add_argument("mountpoint", metavar="MOUNTPOINT", help="a running brainfs mount")
    st.add_argument("--json", action="store_true", help="the daemon's whole status as JSON")
    st.set_defaults(func=cmd_status)

    de = command(sub, "demo", "the main job on the embedded default: local S3, sample "
                 "memory, mount at ./memory, a grep, a lazy cat and a recall",
                 ["brainfs demo", "brainfs demo --stop", "brainfs demo /tmp/mem --port 9100 --size 2000"])
    de.add_argument("mountpoint", nargs="?", default="memory", metavar="MOUNTPOINT",
                    help="where to mount the demo memory (created if missing)")
    de.add_argument("--port", type=int, default=9000, help="port of the demo's S3 server")
    de.add_argument("--size", default="demo", help="sample size (demo, 2000, 20000)")
    de.add_argument("--stop", action="store_true", help="unmount and stop the demo's S3 server")
    de.set_defaults(func=cmd_demo)

    ls = command(sub, "ls", "list every file of the corpus (a mount's ls and find show only "
                 "its working set)",
                 ["brainfs ls ~/memory/sessions                # every transcript, local or not",
                  "brainfs ls ~/memory | xargs -d '\\n' grep -l Kyoto   # grep all: each file is fetched on read",
                  "brainfs ls s3://memory/alice --long"])
    ls.add_argument("target", metavar="s3://BUCKET/PREFIX | PATH",
                    help="a corpus, or a directory inside a brainfs mount (paths printed under it)")
    ls.add_argument("-l", "--long", action="store_true", help="size and modification time too")
    ls.set_defaults(func=cmd_ls)


def sd_notify(state: str) -> bool:
    """Send ``state`` (e.g. ``READY=1``) to systemd's notification socket, if any.

    Returns whether a message was sent. Never raises: readiness is a courtesy to the
    service manager, never a reason for a mount to fail.
    """
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr or addr[0] not in "@/":
        return False
    if addr[0] == "@":
        addr = "\0" + addr[1:]  # an abstract socket
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(state.encode())
        return True
    except OSError:
        return False
