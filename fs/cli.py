"""The ``brainfs`` command line (a contract: scripts, tests and users rely on it).

Every command exits non-zero with one human-readable line on bad input. Long work shows a
progress bar on a terminal and stays quiet otherwise. ``-v``/``-q`` and ``--log-format``
are accepted before or after the command and reach the mount daemon.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from brainfs.backend.config import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_SECRET_KEY,
    Config,
    ConfigError,
    parse_size,
)
from brainfs.backend.errors import BackendError, NoSuchBucket, NoSuchKey
from brainfs.backend.keys import INDEX_KEY, INTERNAL_PREFIX, PACK_KEY, CorpusURL, is_internal, path_problem
from brainfs.backend.store import ObjectStore
from brainfs.cache.workingset import CacheError

from . import logfmt

log = logging.getLogger("brainfs")


class UsageError(Exception):
    """Bad input from the user (one line)."""


#: Set from -q: no progress bars, no warnings (errors only).
_QUIET = False


def version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("brainfs")
    except PackageNotFoundError:
        return "unknown"


def _warn(message: str) -> None:
    """One warning line on stderr (silenced by -q)."""
    if not _QUIET:
        print(f"brainfs: warning: {message}", file=sys.stderr, flush=True)


def _progress(total: int, desc: str):
    """A tqdm bar on a terminal, a silent stand-in otherwise (and with -q)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="file", leave=False,
                disable=_QUIET or not sys.stderr.isatty())


def _config(args: argparse.Namespace) -> Config:
    cfg = Config.load(Path(args.config) if getattr(args, "config", None) else None)
    return cfg.override(
        cache_dir=getattr(args, "cache_dir", None),
        preload_budget_bytes=getattr(args, "preload_budget", None),
        preload_in_background=True if getattr(args, "preload_background", False) else None,
        allow_other=True if getattr(args, "allow_other", False) else None,
        read_only=True if getattr(args, "read_only", False) else None,
        listing=getattr(args, "listing", None),
    )


def _open_corpus(args: argparse.Namespace) -> tuple[Config, CorpusURL, ObjectStore]:
    """Config, parsed ``args.url`` and a store checked to be reachable (one-line errors)."""
    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    store.check()
    return cfg, url, store


def _is_empty(store: ObjectStore) -> bool:
    """True when the corpus holds no object at all (one LIST page at most)."""
    return next(iter(store.list()), None) is None


def _refuse_empty(store: ObjectStore, url: CorpusURL, cfg: Config, what: str) -> None:
    """Commands that write into a corpus refuse an empty prefix (likely a typo) before
    writing anything there."""
    if _is_empty(store):
        raise UsageError(f"{url} holds no files: {what} (import a memory first: brainfs import "
                         f"DIR {url}){_empty_hint(url, cfg)}")


def _neighbours(url: CorpusURL, cfg: Config) -> list[str]:
    """The prefixes beside ``url``'s in its bucket (for a "did you mean" hint)."""
    parent = url.prefix.rsplit("/", 1)[0] if "/" in url.prefix else ""
    try:
        st = ObjectStore(CorpusURL.parse(f"s3://{url.bucket}/{parent}"), cfg)
        try:
            dirs, _ = st.list_dir("")
        finally:
            st.close()
    except BackendError:
        return []
    return [f"s3://{url.bucket}/{parent + '/' if parent else ''}{d}" for d in dirs if d != INTERNAL_PREFIX]


def _empty_hint(url: CorpusURL, cfg: Config) -> str:
    import difflib

    near = _neighbours(url, cfg)
    if not near:
        return ""
    close = difflib.get_close_matches(str(url), near, n=3, cutoff=0.5)
    shown = close or near[:5]
    return f"; {'did you mean' if close else 'the bucket holds'} {', '.join(shown)}" + ("?" if close else "")


# ---------------------------------------------------------------------------- s3 serve
def cmd_s3_serve(args: argparse.Namespace) -> int:
    import socket

    from brainfs.backend.server import serve_foreground

    cfg = _config(args)
    # rclone would fail to bind and exit with a Go log line; and a server already listening
    # there would pass for ours. Say it before starting anything.
    try:
        with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as rclone (Go) binds
            s.bind((args.host, args.port))
    except OSError as e:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e} "
                         "(another server there? choose one with --port)") from None
    return serve_foreground(Path(args.root), args.port, args.host, cfg)


# ---------------------------------------------------------------------------- import
def cmd_import(args: argparse.Namespace) -> int:
    src = Path(args.src)
    if not src.is_dir():
        raise UsageError(f"{src} is not a directory")
    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    try:
        store.check()
    except NoSuchBucket:
        store.create_bucket()
        print(f"created bucket {url.bucket}", file=sys.stderr)
    remote = {o.path: o.etag for o in store.list()}
    todo: list[tuple[str, Path]] = []
    skipped_bad = 0
    for p in sorted(src.rglob("*")):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(src).as_posix()
        problem = path_problem(rel)
        if problem or rel.startswith((INTERNAL_PREFIX + "/", ".git/")):
            if problem:
                _warn(f"skipping {rel!r}: {problem}")
                skipped_bad += 1
            continue
        todo.append((rel, p))
    uploaded = unchanged = 0
    # Ctrl-C stops the workers: files not started yet are left for the next run, the
    # uploads in flight finish (a second Ctrl-C abandons them).
    stop = threading.Event()

    def put(rel: str, p: Path) -> bool | None:
        if stop.is_set():
            return None
        data = p.read_bytes()
        if remote.get(rel) == hashlib.md5(data).hexdigest():
            return False
        store.put(rel, data)
        return True

    def on_sigint(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nbrainfs: stopping: letting the uploads in flight finish (Ctrl-C again to "
              "abandon them)", file=sys.stderr, flush=True)

    bar = _progress(len(todo), "import")
    old_handler = signal.signal(signal.SIGINT, on_sigint)
    try:
        with ThreadPoolExecutor(max_workers=cfg.max_workers) as pool:
            futures = [pool.submit(put, rel, p) for rel, p in todo]
            for f in as_completed(futures):
                # After Ctrl-C the queued tasks return None at once (cancelling them
                # instead would leave as_completed waiting for them forever).
                r = f.result()
                if r is True:
                    uploaded += 1
                elif r is False:
                    unchanged += 1
                bar.update(1)
    finally:
        signal.signal(signal.SIGINT, old_handler)
        bar.close()
    if stop.is_set():
        left = len(todo) - uploaded - unchanged
        print(f"import of {src} into {url} interrupted: {uploaded} uploaded, {unchanged} "
              f"unchanged, {left} not done; run the same command again to finish (the preload "
              f"pack is built then)", file=sys.stderr)
        return 130
    print(f"imported {src} into {url}: {uploaded} uploaded, {unchanged} unchanged"
          + (f", {skipped_bad} refused names" if skipped_bad else ""))
    if uploaded or not _pack_is_current(store, cfg):
        from brainfs.cache.pack import build_pack

        stats = build_pack(store, cfg)
        print(f"preload pack: {stats['files']} files, {stats['bytes'] / 1e6:.1f} MB")
    return 0


def cmd_import_sessions(args: argparse.Namespace) -> int:
    """Sessions people already have (agent logs, chat exports) -> transcripts in the corpus."""
    from brainfs.cache.importers import ImportInputError
    from brainfs.cache.sessionfile import import_sessions

    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    try:
        store.check()
    except NoSuchBucket:
        store.create_bucket()
        print(f"created bucket {url.bucket}", file=sys.stderr)
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = _progress(total, "import-sessions")
        bar.n = done
        bar.refresh()

    try:
        rep = import_sessions(Path(args.src), store, args.format, progress, cfg.max_workers)
    except ImportInputError as e:
        raise UsageError(f"{e}; nothing imported") from None
    except KeyboardInterrupt:
        print(f"\nimport-sessions into {url} interrupted: the transcripts written are whole; run "
              "the same command again to finish", file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
    if rep.skipped:
        _warn(f"skipped {len(rep.skipped)} file(s) of no known session format: "
              + ", ".join(rep.skipped[:3]) + (", …" if len(rep.skipped) > 3 else ""))
    for path in rep.rewritten:
        _warn(f"{path}: turns already imported differ from the source's (edited in the source or "
              "in the transcript); the transcript's stay, the source's versions were appended as new turns")
    print(rep.line(str(url)))
    if rep.paths:
        from brainfs.cache.pack import build_pack

        build_pack(store, cfg)  # the newest transcripts are in the preload pack
        print(f"next: brainfs index {url} (search), brainfs dream {url} (summaries and the wiki)")
    return 0


def _pack_is_current(store: ObjectStore, cfg: Config) -> bool:
    """Whether ``.brainfs/preload.pack`` holds exactly what the preload rules pick from the
    corpus as listed now (its manifest read with two ranged GETs, never the bodies)."""
    from brainfs.cache.catalog import FileRow
    from brainfs.cache.pack import MAGIC
    from brainfs.cache.workingset import select_preload

    rows = [FileRow(o.path, o.size, o.mtime, o.etag) for o in store.list()
            if not is_internal(o.path)]
    chosen = select_preload(rows, cfg)
    try:
        head, _ = store.get(PACK_KEY, (0, 16))
    except NoSuchKey:
        return not chosen
    if len(head) < 16 or head[:8] != MAGIC:
        return False
    (mlen,) = struct.unpack(">Q", head[8:16])
    try:
        manifest = json.loads(store.get(PACK_KEY, (16, 16 + mlen))[0])
    except ValueError:
        return False
    etags = {r.path: r.etag for r in rows}
    return [(p, e) for p, e, _ in manifest] == [(p, etags[p]) for p in chosen]


# ---------------------------------------------------------------------------- sample
def cmd_sample(args: argparse.Namespace) -> int:
    from brainfs.tools.sample import SIZES, generate

    files = SIZES.get(args.size) if args.size in SIZES else None
    if files is None:
        try:
            files = int(args.size)
        except ValueError:
            raise UsageError(f"--size must be one of {', '.join(SIZES)} or a number") from None
    try:
        stats = generate(Path(args.dest), files=files, seed=args.seed)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"wrote {stats['files']} files ({stats['bytes'] / 1e6:.1f} MB, "
          f"{stats['sessions']} sessions) to {args.dest}")
    return 0


# ---------------------------------------------------------------------------- mount
def _check_new_mountpoint(mp: Path) -> None:
    """A mountpoint must exist already, as for mount(8): a typo must not create a
    directory and mount there."""
    if not mp.exists() and not mp.is_symlink():
        raise UsageError(f"mountpoint {mp} does not exist (create it first: mkdir -p {mp})")


def cmd_mount(args: argparse.Namespace) -> int:
    from brainfs.fs.daemon import MountError, check_mountpoint, run_foreground

    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    mp = Path(args.mountpoint)
    if not args.foreground:
        # The daemon re-checks all of this; checking here gives the error at once.
        _check_new_mountpoint(mp)
        check_mountpoint(mp)
        _check_corpus_for_mount(url, cfg)
        return _spawn_daemon(args, cfg, url, mp)
    notify = _notifier(args.notify_fd)
    try:
        _check_new_mountpoint(mp)
        if args.notify_fd is None:
            # Started in the foreground by hand (or by systemd): warn here. Behind
            # _spawn_daemon the parent has warned already.
            _check_corpus_for_mount(url, cfg)
        log.debug("mounting %s at %s with %s", url, mp.resolve(), _safe_config(cfg))
        if args.naive:
            from brainfs.tools.naive import run_naive

            check_mountpoint(mp)
            return run_naive(url, mp, cfg, notify)
        return run_foreground(url, mp, cfg, notify)
    except (UsageError, MountError, BackendError, CacheError, ConfigError, OSError) as e:
        notify(f"error {e}")
        raise
    finally:
        notify("stopping")


def _check_corpus_for_mount(url: CorpusURL, cfg: Config) -> None:
    """The bucket must exist; an empty prefix mounts (a new memory starts empty, as with
    rclone and mount-s3) but is named, since it is more often a typo."""
    store = ObjectStore(url, cfg)
    try:
        store.check()
        if _is_empty(store):
            _warn(f"{url} holds no files: mounting an empty memory{_empty_hint(url, cfg)}")
    finally:
        store.close()


def _safe_config(cfg: Config) -> dict:
    """The settings for a debug line, secrets left out."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if f.name in ("secret_key", "session_token", "llm_api_key", "access_key"):
            v = "(set)" if v else None
        out[f.name] = str(v) if isinstance(v, Path) else v
    return out


def _notifier(fd: int | None):
    """Progress/ready/error lines to the parent's pipe (behind ``_spawn_daemon``), and
    readiness to systemd (``Type=notify``: READY=1 once the mount is usable)."""
    from brainfs.fs.mounthelper import sd_notify

    stream = os.fdopen(fd, "w", buffering=1) if fd is not None else None

    def say(line: str) -> None:
        kind, _, rest = line.partition(" ")
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
    """Start the daemon in its own session; follow its progress until it is ready."""
    cache_dir = cfg.cache_dir_for(url.bucket, url.prefix)
    cache_dir.mkdir(parents=True, exist_ok=True)
    log_path = cache_dir / "mount.log"
    err_path = cache_dir / "mount.stderr"
    r, w = os.pipe()
    argv = [sys.executable, "-m", "brainfs.fs.cli", "mount", str(url), str(mp), "--foreground",
            "--notify-fd", str(w), "--log-file", str(log_path), "--log-format", args.log_format]
    if args.verbose:
        argv.append("-" + "v" * args.verbose)
    if args.quiet:
        argv.append("-q")
    for flag, value in (("--cache-dir", args.cache_dir), ("--preload-budget", args.preload_budget),
                        ("--config", args.config)):
        if value is not None:
            argv += [flag, str(value)]
    if args.naive:
        argv.append("--naive")
    if args.allow_other:
        argv.append("--allow-other")
    if args.read_only:
        argv.append("--read-only")
    if args.listing:
        argv += ["--listing", args.listing]
    if args.preload_background:
        argv.append("--preload-background")
    # The log proper is mount.log (rotated by the daemon); what escapes logging (a crash
    # in C code, an interpreter error) lands in mount.stderr, emptied at each start.
    with open(err_path, "wb") as errf:
        child = subprocess.Popen(argv, pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=errf,
                                 stderr=errf, start_new_session=True)
    os.close(w)
    try:
        return _follow_daemon(child, r, url, mp, log_path, err_path)
    except KeyboardInterrupt:
        # Ctrl-C while the preload runs: the user no longer wants this mount. The daemon
        # is in its own session (it must outlive this terminal), so stop it here.
        child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if _mounted(_target(mp)):
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
                    bar = _progress(int(total), "preload")
                bar.n = int(done)
                bar.refresh()
            elif kind == "ready":
                if bar:
                    bar.close()
                t = json.loads(rest or "{}")
                if not _QUIET:
                    print(f"mounted {url} at {mp} (pid {child.pid}; {t.get('preload_files', 0)} "
                          f"files preloaded in {t.get('preload_s', 0):.2f}s; log {log_path})")
                return 0
            elif kind == "error":
                if bar:
                    bar.close()
                child.wait(timeout=30)
                raise UsageError(rest)
    child.wait(timeout=30)
    raise UsageError(f"the mount daemon exited with status {child.returncode}; see {log_path} "
                     f"and {err_path}")


class NoAnswer(UsageError):
    """The mount did not answer within the time given (a hung or stopped daemon)."""


#: How long `status` and `umount` wait for a mount's status file: a live daemon answers in
#: milliseconds; a stopped or hung one never does.
STATUS_TIMEOUT = 10.0


def _status_of(mp: Path, timeout: float = STATUS_TIMEOUT) -> dict:
    """The daemon's status (``MP/.brainfs/status``), read in a helper thread so that a
    hung mount cannot hang the command."""
    box: dict[str, object] = {}

    def read() -> None:
        try:
            box["text"] = (mp / INTERNAL_PREFIX / "status").read_text()
        except OSError as e:
            box["error"] = e

    t = threading.Thread(target=read, daemon=True, name="status")
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise NoAnswer(f"{mp} does not answer (its daemon is hung or stopped)")
    if "error" in box:
        e = box["error"]
        raise UsageError(f"{mp} is not a running brainfs mount "
                         f"({getattr(e, 'strerror', None) or 'no status'})")
    try:
        return json.loads(str(box["text"]))
    except ValueError:
        raise UsageError(f"{mp} is not a running brainfs mount (its status is not JSON)") from None


def _target(mp: Path) -> str:
    """The absolute mountpoint path as /proc/mounts spells it, resolving symlinks above it
    but never touching the mountpoint itself (a stat there would hang on a hung mount)."""
    path = os.path.abspath(mp)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _mounted(target: str) -> bool:
    from .fusectl import in_proc_mounts

    return in_proc_mounts(target)


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
        if os.path.normpath(os.path.join(cwd, argv[urls[0] + 1])) == target:
            found.append(int(d.name))
    return found


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            return True
        time.sleep(0.05)
    return False


def _force_unmount(mp: Path, target: str, pids: list[int]) -> None:
    """Detach the mount at once and kill its daemon: the working set and its journal stay
    in the cache, so the next mount of the corpus uploads what was still pending."""
    from .fusectl import abort_connection

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
    if not _mounted(target):
        raise UsageError(f"{mp} is not mounted")
    try:
        pid = int(_status_of(mp, timeout=min(STATUS_TIMEOUT, args.timeout))["pid"])
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
    os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, args.timeout):
        print(f"unmounted {mp}")
        return 0
    if args.force:
        _force_unmount(mp, target, [pid])
        return 0
    raise UsageError(f"daemon {pid} did not finish within {args.timeout:.0f}s (uploads pending?); "
                     f"`brainfs umount --force {mp}` stops it now")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def cmd_status(args: argparse.Namespace) -> int:
    st = _status_of(Path(args.mountpoint))
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    mb = 1024 * 1024
    print(f"{st['corpus']} at {st['mountpoint']} (pid {st['pid']})")
    print(f"  files:     {st['files']} in corpus, {st['local_files']} local, {st['remote_files']} remote"
          + (f" (ls and find show the local ones; `brainfs ls {args.mountpoint}` lists all)"
             if st.get("remote_files") else ""))
    print(f"  cache:     {st['local_bytes'] / mb:.1f} MiB of {st['cache_budget_bytes'] / mb:.0f} MiB in {st['cache_dir']}")
    print(f"  writes:    {st['dirty_files']} dirty, {st['pending_uploads']} pending uploads")
    be = st.get("backend", {})
    print(f"  backend:   {st['endpoint']}; last error: {be.get('last_error') or 'none'}")
    print(f"  recall:    {st.get('recall')}")
    return 0


# ---------------------------------------------------------------------------- index / recall
def _embedder_or_none(cfg: Config, quiet: bool = False):
    from brainfs.cache.embedder import EmbedderUnavailable, load_embedder

    try:
        return load_embedder(cfg.embedder)
    except EmbedderUnavailable as e:
        if not quiet:
            _warn(f"{e}; building keyword (BM25) search only")
        return None


def cmd_index(args: argparse.Namespace) -> int:
    from brainfs.cache.recaller import build_index, local_index_path

    cfg, url, store = _open_corpus(args)
    _refuse_empty(store, url, cfg, "nothing to index")
    embedder = None if args.no_embed else _embedder_or_none(cfg)
    local = local_index_path(cfg.cache_dir_for(url.bucket, url.prefix))
    local.parent.mkdir(parents=True, exist_ok=True)
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = _progress(total, "index")
        bar.n = done
        bar.refresh()

    try:
        stats = build_index(store, local, embedder, progress, cfg=cfg)
    except KeyboardInterrupt:
        # The fetches not started yet are dropped (closing the store cancels them); the
        # ones in flight end within the request timeouts.
        store.close()
        if bar is not None:
            bar.close()
        print(f"\nindex of {url} interrupted: nothing uploaded, the bucket's index is "
              f"unchanged; run the same command again to finish", file=sys.stderr)
        return 130
    if bar is not None:
        bar.close()
    print(f"indexed {url}: {stats.get('files_indexed', 0)} files (re)indexed, "
          f"{stats.get('skipped', 0)} unchanged, {stats.get('removed', 0)} removed; "
          f"{stats.get('chunks_total', stats.get('chunks', 0))} chunks, "
          f"{stats['index_bytes'] / 1e6:.1f} MB, {stats.get('seconds', 0):.1f}s"
          + ("" if embedder else " (no vectors)"))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise UsageError('empty query: give the question to recall, e.g. brainfs recall "where did I meet Ana"')
    if args.mount and args.url:
        raise UsageError("give either --mount MOUNTPOINT or a corpus URL, not both")
    if args.mount:
        return _recall_through_mount(args)
    if not args.url:
        raise UsageError("give --mount MOUNTPOINT or a corpus URL s3://BUCKET/PREFIX")
    from brainfs.cache.recaller import Recaller, download_index, local_index_path
    from brainfs.cache.retrieval import render_synthesis

    cfg, url, store = _open_corpus(args)
    local = local_index_path(cfg.cache_dir_for(url.bucket, url.prefix))
    local.parent.mkdir(parents=True, exist_ok=True)
    if not download_index(store, local):
        raise UsageError(f"{url} has no search index: run `brainfs index {url}`")
    rec = Recaller(local, cfg)
    try:
        result = rec.search(args.query, args.k)
    finally:
        rec.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        sys.stdout.write(render_synthesis(result, []))
    return 0


def _recall_through_mount(args: argparse.Namespace) -> int:
    """Ask the mount's ``.recall/<question>.json`` (the mount materializes the files behind
    the hits) and print the first ``-k`` cards, as JSON or as the same synthesis text."""
    from brainfs.cache.retrieval import Card, RecallResult, render_synthesis

    # A file name cannot hold "/": it travels as U+2215 and the daemon turns it back.
    name = args.query.replace("/", "\u2215")
    if len(name.encode()) + len(".json") > 255:
        raise UsageError("query too long for a file name (250 bytes); pass the corpus URL instead")
    mp = Path(args.mount)
    _status_of(mp)  # "not a running brainfs mount" rather than a bare ENOENT
    target = mp / ".recall" / (name + ".json")
    try:
        data = json.loads(target.read_text())
    except OSError as e:
        raise UsageError(f"recall through {mp} failed: {e.strerror or e}") from None
    except ValueError:
        raise UsageError(f"recall through {mp} failed: the mount's answer is not JSON") from None
    if "error" in data and "cards" not in data:
        raise UsageError(f"recall through {mp}: {data['error']}")
    if args.k:
        got = len(data.get("cards", []))
        if got < args.k and got >= _config(args).recall_k:
            # The magic file answers with the mount's recall_k passages; say so rather
            # than return fewer than asked in silence.
            _warn(f"the mount answers with at most {got} passages (its recall_k); for {args.k}, "
                  f"ask the corpus: brainfs recall QUERY {data.get('corpus') or _status_of(mp)['corpus']} "
                  f"-k {args.k}")
        data["cards"] = data.get("cards", [])[: args.k]
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    fields = set(Card.__dataclass_fields__)
    cards = [Card(**{k: v for k, v in c.items() if k in fields}) for c in data.get("cards", [])]
    result = RecallResult(query=data.get("query", args.query), mode=data.get("mode", ""),
                          cards=cards, timings=data.get("timings", {}), why=data.get("why", ""),
                          terms=data.get("terms", []))
    text = render_synthesis(result, data.get("materialized", []))
    if data.get("failed"):
        text += "\n\nCould not fetch: " + ", ".join(sorted(data["failed"])) + "\n"
    sys.stdout.write(text)
    return 0


def cmd_eval_locomo(args: argparse.Namespace) -> int:
    from brainfs.cache.locomo import LocomoInputError, evaluate, read_samples

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: {'not a file' if path.exists() else 'no such file'} "
                         "(expected LoCoMo JSON)")
    try:
        read_samples(path)  # a malformed file fails here, before any model loads
    except LocomoInputError as e:
        raise UsageError(str(e)) from None
    extra = {}
    if not args.no_wiki:
        # The ablation of the seed: the same hybrid retrieval plus the wiki dream builds
        # from the same sessions (a wiki passage counts for the turns its claims cite).
        from brainfs.cache.locomo import wiki_retriever
        from brainfs.dream.locomo import build_wiki

        extra["hybrid+wiki"] = wiki_retriever(build_wiki)
    try:
        result = evaluate(path, limit_conversations=args.conversations,
                          limit_questions=args.questions,
                          progress=sys.stderr.isatty() and not args.json and not _QUIET,
                          extra_retrievers=extra)
    except LocomoInputError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['questions']} questions")
    for name, r in result["retrievers"].items():
        t, s = r["turn"], r["session"]
        print(f"{name:12s} turn  " + "  ".join(f"{k} {v:.3f}" for k, v in t.items())
              + "   session  " + "  ".join(f"{k} {v:.3f}" for k, v in s.items()))
    return 0


# ---------------------------------------------------------------------------- ls
def _mount_root(path: str) -> str | None:
    """The brainfs mount that holds ``path`` (the longest mountpoint above it), or None."""
    target = _target(Path(path))
    best = None
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[2] != "fuse.brainfs":
                continue
            mp = parts[1].encode().decode("unicode_escape")
            if (target == mp or target.startswith(mp.rstrip("/") + "/")) and (
                    best is None or len(mp) > len(best)):
                best = mp
    return best


def cmd_ls(args: argparse.Namespace) -> int:
    """Every file of the corpus, not only the working set a mount lists."""
    cfg = _config(args)
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
        if cfg.endpoint_url is None and st.get("endpoint", "aws") != "aws":
            cfg = cfg.override(endpoint_url=st["endpoint"])
        under = os.path.relpath(_target(Path(args.target)), root)
        under = "" if under == "." else under
        shown = args.target.rstrip("/") + "/"
    store = ObjectStore(url, cfg)
    try:
        store.check()
        n = 0
        for o in sorted(store.list(under), key=lambda o: o.path):
            if is_internal(o.path):
                continue
            rel = o.path[len(under):].lstrip("/") if under else o.path
            name = shown + rel
            if args.long:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(o.mtime))
                print(f"{o.size:>10}  {when}  {name}")
            else:
                print(name)
            n += 1
    finally:
        store.close()
    if n == 0 and under:
        raise UsageError(f"{args.target}: no such directory in {url}")
    return 0


# ---------------------------------------------------------------------------- dream / correct / graph
def cmd_dream(args: argparse.Namespace) -> int:
    from brainfs.backend.config import ConfigError
    from brainfs.dream.llm import synthesizer_from_config
    from brainfs.dream.sync import LeaseHeld, run_s3

    cfg, url, store = _open_corpus(args)
    _refuse_empty(store, url, cfg, "nothing to dream about")
    try:
        synth = synthesizer_from_config(cfg, args.synth)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    embedder = None if args.no_embed else _embedder_or_none(cfg, quiet=True)
    workdir = cfg.cache_dir_for(url.bucket, url.prefix) / "dream"
    try:
        rep = run_s3(store, workdir, dry_run=args.dry_run, wait=args.wait, embedder=embedder,
                     reindex=not args.no_index, index_embedder=embedder, force=args.force,
                     synthesizer=synth)
    except LeaseHeld as e:
        raise UsageError(str(e)) from None
    res = rep.result
    if res.nothing_new:
        print(f"dream {url}: nothing new since the last run; nothing changed")
        return 0
    st = res.stats
    if args.dry_run:
        sys.stdout.write(res.diff())
        print(f"dry run: {len(res.changes)} change(s) would be made; nothing written")
    else:
        for c in res.changes:
            print(c)
        print(f"commit {rep.commit[:12] if rep.commit else '(none: wiki unchanged)'}; "
              f"{len(rep.uploaded)} uploaded, {len(rep.deleted)} deleted"
              + (f", {len(rep.conflicts)} conflict(s) kept the other version: {', '.join(rep.conflicts)}"
                 if rep.conflicts else ""))
    print(f"sessions read {st['sessions_read']}/{st['sessions_total']}"
          + (f" ({st['sessions_deferred']} deferred by budget)" if st["sessions_deferred"] else "")
          + f"; pages {st['pages']}; claims {st['claims']}, rejected by verification "
          f"{st['rejected']} ({st['verify_method']}); citations valid {st['share_valid_citations']:.1%}; "
          f"{rep.seconds:.1f}s")
    if st.get("synth_note"):
        print(st["synth_note"])
    for pr in res.problems:
        print(f"  {pr}", file=sys.stderr)
    return 0


def cmd_correct(args: argparse.Namespace) -> int:
    from brainfs.dream.core import correction_event

    if not args.text.strip():
        raise UsageError("empty correction")
    cfg, url, store = _open_corpus(args)
    _refuse_empty(store, url, cfg, "nothing to correct")
    path, content = correction_event(args.text, scope=args.scope)
    store.put(path, content.encode("utf-8"), if_none_match=True)
    print(f"recorded {url}/{path}; the next `brainfs dream {url}` turns it into a memory card")
    return 0


#: What matplotlib writes for ``brainfs graph --out`` (by the file's suffix).
GRAPH_FORMATS = (".png", ".svg", ".pdf")


def cmd_graph(args: argparse.Namespace) -> int:
    from brainfs.dream.graph import render_graph

    out = Path(args.out)
    if out.suffix.lower() not in GRAPH_FORMATS:
        raise UsageError(f"--out {out}: the graph is drawn as {', '.join(GRAPH_FORMATS)} "
                         "(chosen by the file's suffix)")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: directory {out.parent} does not exist")
    cfg, url, store = _open_corpus(args)
    paths = [o.path for o in store.list("knowledge") if o.path.endswith(".md")]
    if not paths:
        raise UsageError(f"{url} has no knowledge/ pages yet: run `brainfs dream {url}`")
    files: dict[str, str] = {}

    def got(path: str, data, etag: str, err) -> None:
        if data is not None:
            files[path] = data.decode("utf-8", errors="replace")

    store.get_many(paths, got)
    counts = render_graph(files, out, title=str(url))
    print(f"wrote {out}: {counts['pages']} pages, {counts['links']} links, "
          f"{counts['cite_edges']} citation edges")
    return 0


# ---------------------------------------------------------------------------- context
#: The answer's room when --reserve is not given: a quarter of the budget, at most 2,000
#: tokens (an answer does not grow with the context: 8,000 → 2,000, 2,000 → 500).
RESERVE_SHARE = 0.25
RESERVE_MAX = 2000


def default_reserve(budget: int) -> int:
    """The reserve used when the user gives none."""
    return min(RESERVE_MAX, int(budget * RESERVE_SHARE))


def cmd_context(args: argparse.Namespace) -> int:
    """Assemble the context for one turn: lanes under a token budget, with reasons."""
    from brainfs.cache.context import MemorySource, StoreSource, assemble
    from brainfs.cache.index import SearchIndex
    from brainfs.cache.recaller import local_index_path

    given = [x for x in (args.mount, args.dir, args.url) if x]
    if len(given) != 1:
        raise UsageError("give exactly one of --mount MOUNTPOINT, --dir DIR or s3://BUCKET/PREFIX")
    if not args.task.strip():
        raise UsageError("empty task")
    if args.budget <= 0:
        raise UsageError(f"--budget must be a positive number of tokens (got {args.budget})")
    if args.reserve is None:
        args.reserve = default_reserve(args.budget)
    elif args.reserve < 0 or args.reserve >= args.budget:
        raise UsageError(f"--reserve must be at least 0 and below the budget {args.budget} (got {args.reserve})")
    cfg = _config(args)
    spec = cfg.embedder or "auto"
    index_path: Path | None = Path(args.index) if args.index else None
    if args.index and not index_path.is_file():
        raise UsageError(f"{args.index}: no such index file")
    if args.mount:
        mp = Path(args.mount)
        st = _status_of(mp)
        if index_path is None and st.get("cache_dir"):
            index_path = local_index_path(Path(st["cache_dir"]))
        make = lambda ix: MemorySource(mp, ix, embedder=spec, name=st.get("corpus"))  # noqa: E731
    elif args.dir:
        root = Path(args.dir)
        if not root.is_dir():
            raise UsageError(f"{root} is not a directory")
        if index_path is None:
            index_path = root / INDEX_KEY
        make = lambda ix: MemorySource(root, ix, embedder=spec)  # noqa: E731
    else:
        from brainfs.cache.recaller import download_index

        url = CorpusURL.parse(args.url)
        store = ObjectStore(url, cfg)
        store.check()
        local = local_index_path(cfg.cache_dir_for(url.bucket, url.prefix))
        local.parent.mkdir(parents=True, exist_ok=True)
        if index_path is None:
            index_path = local if download_index(store, local) else None
        make = lambda ix: StoreSource(store, ix, embedder=spec)  # noqa: E731
    index = None
    if index_path is not None and index_path.is_file():
        index = SearchIndex(index_path)
    else:
        _warn("no search index found; the cards, thread and files lanes stay empty "
              "(run `brainfs index s3://B/P`, or pass --index FILE)")
    try:
        window = assemble(args.task, make(index), budget=args.budget, reserve=args.reserve,
                          stale_days=cfg.stale_days, k=args.k, drop_stale=args.drop_stale)
    except ValueError as e:
        raise UsageError(str(e)) from None
    finally:
        if index is not None:
            index.close()
    if args.json:
        print(json.dumps(window.to_json(), indent=2))
    elif args.html:
        try:
            Path(args.html).write_text(window.to_html(), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {args.html}: {e.strerror or e}") from None
        print(f"wrote {args.html}: {window.used} of {window.available} tokens used, "
              f"{len(window.admitted())} items admitted, {len(window.skipped())} skipped, mode {window.mode}")
    else:
        sys.stdout.write(window.to_markdown())
    return 0


# ---------------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    from brainfs.fs import demo

    if args.stop:
        return demo.stop(Path(args.mountpoint))
    return demo.run(Path(args.mountpoint), args.port, args.size)


# ---------------------------------------------------------------------------- plumbing
class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each help text (unless None/False or already in the text);
    epilogs (the examples) printed as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("%(default)" in text or "default:" in text or action.default in (None, False)
                or action.default is argparse.SUPPRESS
                or (not action.option_strings and action.nargs not in ("?", "*"))):
            return text
        return text + " (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``brainfs recall: error: … (see brainfs recall --help)``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {n})")
    return n


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _common(defaults: bool) -> argparse.ArgumentParser:
    """The options every command accepts, before or after its name. The subcommands'
    copies default to SUPPRESS so that a value given before the command survives."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)  # noqa: E731
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("common options (before or after the command)")
    g.add_argument("-v", "--verbose", action="count", default=d(0),
                   help="more output: debug lines (in a mount's log too); -vvv adds the S3 "
                   "library's own debug lines")
    g.add_argument("-q", "--quiet", action="count", default=d(0),
                   help="errors only: no progress bars, no warnings, no log lines below ERROR")
    g.add_argument("--log-format", choices=("text", "json"), default=d("text"),
                   help="log lines as 'TIME LEVEL LOGGER: message key=value' or as one JSON "
                   "object per line")
    g.add_argument("--config", metavar="FILE", default=d(None),
                   help="TOML config file (default: $BRAINFS_CONFIG, else "
                   "$XDG_CONFIG_HOME/brainfs/config.toml, else ~/.config/brainfs/config.toml)")
    return p


URL_HELP = "the corpus: bucket and prefix (endpoint from AWS_ENDPOINT_URL)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render --help in the README)."""
    fmt = HelpFormatter
    common = _common(defaults=False)
    p = Parser(
        prog="brainfs",
        formatter_class=fmt,
        parents=[_common(defaults=True)],
        description=textwrap.fill(
            "An agent's long-term memory as a filesystem over S3. A corpus is named "
            "s3://BUCKET/PREFIX; the endpoint comes from AWS_ENDPOINT_URL (unset: AWS), "
            "credentials from the standard AWS variables and AWS_PROFILE (default key pair "
            f"{DEFAULT_ACCESS_KEY}/{DEFAULT_SECRET_KEY} for the embedded server).", 88),
        epilog="examples:\n"
        "  brainfs demo                                 # everything on the embedded S3 server\n"
        "  brainfs import ./memory s3://memory/alice\n"
        "  brainfs mount s3://memory/alice ~/memory\n"
        '  brainfs recall "where did I meet Ana" --mount ~/memory\n'
        "  brainfs COMMAND --help                       # a command's options and examples",
    )
    p.add_argument("-V", "--version", action="version", version=f"brainfs {version()}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def command(parent, name: str, help: str, examples: list[str], **kw) -> argparse.ArgumentParser:
        epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples) if examples else None
        desc = kw.pop("description", help[:1].upper() + help[1:] + ".")
        return parent.add_parser(name, help=help, description=textwrap.fill(desc, 88),
                                 epilog=epilog, formatter_class=fmt, parents=[common], **kw)

    s3 = command(sub, "s3", "the embedded S3 server", ["brainfs s3 serve --root ~/s3 --port 9000"]
                 ).add_subparsers(dest="s3cmd", required=True, metavar="SUBCOMMAND")
    sv = command(s3, "serve", "serve a local directory as S3 (rclone serve s3), in the foreground",
                 ["brainfs s3 serve --root ~/s3",
                  "AWS_ENDPOINT_URL=http://127.0.0.1:9000 brainfs import ./memory s3://memory/alice"])
    sv.add_argument("--root", required=True, metavar="DIR", help="directory whose subfolders are the buckets")
    sv.add_argument("--port", type=int, default=9000, help="TCP port to listen on")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback: only this machine)")
    sv.set_defaults(func=cmd_s3_serve)

    im = command(sub, "import", "upload a memory tree (idempotent: unchanged files are skipped)",
                 ["brainfs import ./memory s3://memory/alice",
                  "brainfs sample /tmp/sample && brainfs import /tmp/sample s3://memory/demo"],
                 description="Upload a memory tree. Files whose MD5 equals the object's ETag are "
                 "skipped, so a re-run uploads only what changed; the bucket is created when "
                 "missing; the preload pack is rebuilt when the tree or the pack changed. Ctrl-C "
                 "stops after the uploads in flight; the same command again finishes the job.")
    im.add_argument("src", metavar="SRC_DIR", help="the memory tree on local disk")
    im.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    im.set_defaults(func=cmd_import)

    se = command(sub, "import-sessions", "import sessions people already have (Claude Code "
                 "logs, a ChatGPT export, messages JSON, Speaker: text) as transcripts",
                 ["brainfs import-sessions ~/.claude/projects s3://memory/alice",
                  "brainfs import-sessions chatgpt-export.zip s3://memory/alice",
                  "brainfs import-sessions chat.json s3://memory/alice --format messages",
                  "brainfs import-sessions notes/standup.md s3://memory/alice   # User: … lines"],
                 description="Import sessions people already have as transcripts "
                 "(sessions/<date>-<slug>-<hash>/transcript.md, the form of cache/FORMAT.md). "
                 "SRC is a file or a directory of them; the format is detected from each file "
                 "unless --format is given. Tool calls and results become one-line summary turns. "
                 "Idempotent: a re-run adds only new sessions and the new turns of grown ones "
                 "(turn ids never change). Every file is read and checked before the first "
                 "upload: a bad one stops the import with one line, nothing written.")
    se.add_argument("src", metavar="SRC", help="a session file, an export (.zip or conversations.json), "
                    "or a directory of them")
    se.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    se.add_argument("--format", default="auto",
                    choices=("auto", "claude-code", "chatgpt", "messages", "text"),
                    help="the source format; auto: from each file's name and content")
    se.set_defaults(func=cmd_import_sessions)

    sa = command(sub, "sample", "write a sample memory tree of a synthetic persona",
                 ["brainfs sample /tmp/sample", "brainfs sample /tmp/big --size 20000 --seed 3"])
    sa.add_argument("dest", metavar="DEST", help="directory to write (must not exist or be empty)")
    sa.add_argument("--size", default="demo", help="demo (~200 files), 2000, 20000, or a number of files")
    sa.add_argument("--seed", type=int, default=7, help="random seed (same seed, same tree)")
    sa.set_defaults(func=cmd_sample)

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
    mo.add_argument("--cache-dir", metavar="DIR",
                    help="working-set directory (default: per corpus under $XDG_CACHE_HOME/brainfs "
                    "or ~/.cache/brainfs)")
    mo.add_argument("--preload-budget", type=_size, metavar="SIZE",
                    help="bytes to preload at mount: 256M, 2G, 1.5GiB, or a number of bytes "
                    "(default: preload_budget_bytes in the config, 256 MiB)")
    mo.add_argument("--preload-background", action="store_true",
                    help="usable at once; the preload continues in the background")
    mo.add_argument("--foreground", "-f", action="store_true",
                    help="stay in the foreground and log to stderr (for systemd and debugging)")
    mo.add_argument("--naive", action="store_true",
                    help="benchmark baseline: every operation is a remote request, no cache")
    mo.add_argument("--allow-other", action="store_true", help="let other users see the mount")
    mo.add_argument("--read-only", action="store_true",
                    help="refuse writes (EROFS); close(2) then never waits for the daemon")
    mo.add_argument("--listing", choices=("working-set", "corpus"), default=None,
                    help="what ls/find/grep -r see: the local working set (default), or every "
                         "file of the corpus, fetched when read")
    mo.add_argument("--notify-fd", type=int, help=argparse.SUPPRESS)
    mo.add_argument("--log-file", help=argparse.SUPPRESS)
    mo.set_defaults(func=cmd_mount)

    um = command(sub, "umount", "flush pending uploads and unmount",
                 ["brainfs umount ~/memory", "brainfs umount ~/memory --timeout 600",
                  "brainfs umount --force ~/memory   # a hung mount"])
    um.add_argument("mountpoint", metavar="MOUNTPOINT", help="a brainfs mount")
    um.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                    help="how long to wait for pending uploads before giving up")
    um.add_argument("--force", action="store_true",
                    help="a hung mount too: detach it at once and kill its daemon (pending "
                    "writes stay journaled in the cache; the next mount uploads them)")
    um.set_defaults(func=cmd_umount)

    st = command(sub, "status", "working set, cache use, dirty files, backend health",
                 ["brainfs status ~/memory", "brainfs status ~/memory --json | jq .dirty_files"])
    st.add_argument("mountpoint", metavar="MOUNTPOINT", help="a running brainfs mount")
    st.add_argument("--json", action="store_true", help="the daemon's whole status as JSON")
    st.set_defaults(func=cmd_status)

    ix = command(sub, "index", "build or refresh the search index under .brainfs/ "
                 "(only files whose ETag changed are read)",
                 ["brainfs index s3://memory/alice", "brainfs index s3://memory/alice --no-embed"])
    ix.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    ix.add_argument("--no-embed", action="store_true", help="keyword (BM25) index only, no model")
    ix.set_defaults(func=cmd_index)

    rc = command(sub, "recall", "hybrid semantic search; through a mount it also "
                 "materializes the files behind the hits",
                 ['brainfs recall "which orgs did I meet in Kyoto" --mount ~/memory',
                  'brainfs recall "dog adoption" s3://memory/alice -k 3 --json'])
    rc.add_argument("query", metavar="QUERY", help="the question, in plain words")
    rc.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX",
                    help="search the corpus directly (its index is downloaded to the cache)")
    rc.add_argument("--mount", metavar="MOUNTPOINT",
                    help="a running mount to ask (files get materialized there)")
    rc.add_argument("-k", type=_positive_int, default=None, metavar="N",
                    help="number of passages (default: recall_k in the config, 10; through a "
                    "mount at most the mount's recall_k)")
    rc.add_argument("--json", action="store_true", help="the cards as JSON instead of the synthesis")
    rc.set_defaults(func=cmd_recall)

    cx = command(sub, "context", "assemble what reaches the model for a task: lanes "
                 "(scope, guide, index, pinned, cards, thread, files) under a token "
                 "budget, every item with its reason",
                 ['brainfs context "plan the Kyoto trip" --mount ~/memory --budget 2000',
                  'brainfs context "plan the Kyoto trip" s3://memory/alice --json | jq .used',
                  'brainfs context "plan the Kyoto trip" --dir ./memory --html context.html'])
    cx.add_argument("task", metavar="TASK", help="the task or message of this turn")
    cx.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX", help="read the corpus directly")
    where = cx.add_mutually_exclusive_group()
    where.add_argument("--mount", metavar="MOUNTPOINT",
                       help="a running mount (files read through it, index from its cache)")
    where.add_argument("--dir", metavar="DIR",
                       help="a plain memory tree on disk (index: DIR/.brainfs/index.sqlite or --index)")
    cx.add_argument("--index", metavar="FILE",
                    help="search index file to use (default: from the mount, dir or corpus)")
    cx.add_argument("--budget", type=_positive_int, default=8000, metavar="TOKENS",
                    help="context budget in tokens")
    cx.add_argument("--reserve", type=int, default=None, metavar="TOKENS",
                    help="tokens kept free for the model's answer (default: a quarter of the "
                    f"budget, at most {RESERVE_MAX})")
    cx.add_argument("-k", type=_positive_int, default=None, metavar="N",
                    help="recall pool size (default: scales with the budget)")
    cx.add_argument("--drop-stale", action="store_true",
                    help="skip items older than stale_days instead of flagging them")
    out = cx.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the JSON object of DESIGN.md")
    out.add_argument("--html", metavar="FILE", help="write the context-window page to FILE")
    cx.set_defaults(func=cmd_context)

    ev = command(sub, "eval", "retrieval quality",
                 ["brainfs eval locomo data/locomo/locomo-dev.json --no-wiki"]
                 ).add_subparsers(dest="evalcmd", required=True, metavar="SUBCOMMAND")
    lo = command(ev, "locomo", "evidence recall@k on LoCoMo-format data",
                 ["brainfs eval locomo locomo10.json --conversations 1 --questions 20",
                  "brainfs eval locomo locomo10.json --json > result.json"])
    lo.add_argument("file", metavar="FILE.json", help="a LoCoMo-format file (a list of samples)")
    lo.add_argument("--json", action="store_true", help="the JSON object of DESIGN.md")
    lo.add_argument("--conversations", type=_positive_int, metavar="N", help="only the first N conversations")
    lo.add_argument("--questions", type=_positive_int, metavar="N",
                    help="only the first N questions per conversation")
    lo.add_argument("--no-wiki", action="store_true", help="skip the hybrid+wiki retriever (no dream run)")
    lo.set_defaults(func=cmd_eval_locomo)

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
                  "brainfs ls ~/memory | xargs grep -l Kyoto   # grep all: each file is fetched on read",
                  "brainfs ls s3://memory/alice --long"])
    ls.add_argument("target", metavar="s3://BUCKET/PREFIX | PATH",
                    help="a corpus, or a directory inside a brainfs mount (paths printed under it)")
    ls.add_argument("-l", "--long", action="store_true", help="size and modification time too")
    ls.set_defaults(func=cmd_ls)

    dr = command(sub, "dream", "one run of the wiki maintainer: summarize new sessions, "
                 "update knowledge/ with cited facts, commit, upload, re-index",
                 ["brainfs dream s3://memory/alice --dry-run",
                  "brainfs dream s3://memory/alice --synth llm   # BRAINFS_LLM_BASE_URL, BRAINFS_LLM_MODEL"])
    dr.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    dr.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    dr.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="wait this long for another running dream to finish (0: exit at once)")
    dr.add_argument("--force", action="store_true", help="re-render even when nothing is new")
    dr.add_argument("--no-embed", action="store_true",
                    help="verify claims lexically and index without vectors (no model load)")
    dr.add_argument("--no-index", action="store_true", help="skip the re-index after the run")
    dr.add_argument("--synth", choices=("deterministic", "llm"),
                    help="who writes pages and summaries (default: dream_synthesizer in the config, "
                    "deterministic); llm uses BRAINFS_LLM_BASE_URL/OPENAI_BASE_URL and BRAINFS_LLM_MODEL")
    dr.set_defaults(func=cmd_dream)

    co = command(sub, "correct", "record a correction; the next dream run turns it into a "
                 "memory card (notes/corrections/) and updates the affected pages",
                 ['brainfs correct "Mara moved to Osaka in May 2024" s3://memory/alice',
                  'brainfs correct "use metric units" s3://memory/alice --scope preferences'])
    co.add_argument("text", metavar="TEXT", help="the correction, as one statement")
    co.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    co.add_argument("--scope", default="global", help="what the correction applies to")
    co.set_defaults(func=cmd_correct)

    gr = command(sub, "graph", "draw the wiki's link and citation graph to an image",
                 ["brainfs graph s3://memory/alice --out graph.png"])
    gr.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    gr.add_argument("--out", required=True, metavar="FILE.png", help="image file to write (.png, .svg, .pdf)")
    gr.set_defaults(func=cmd_graph)
    return p


def _silence_stdout() -> None:
    """After a broken pipe (``brainfs … | head``): point stdout at /dev/null so the
    interpreter's final flush does not fail again (the recipe of Python's signal docs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: Exit status after a broken pipe: what a process killed by SIGPIPE reports in a shell
#: (128 + 13), so `set -o pipefail` sees it as cat or grep would be seen; no message.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``brainfs`` command."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # `brainfs … | head`: the reader is gone; stop quietly, as cat or grep would.
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
    global _QUIET
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0].startswith("s3://"):
        # mount.fuse's shape (`mount -t fuse.brainfs` runs `brainfs SOURCE DIR -o OPTS`).
        from brainfs.fs.mounthelper import helper_main

        return helper_main(argv, prog="brainfs")
    parser = build_parser()
    args = parser.parse_args(argv)
    verbosity = args.verbose - args.quiet
    _QUIET = verbosity < 0
    try:
        if args.cmd == "mount" and args.foreground:
            cfg_for_log = None
            try:
                cfg_for_log = Config.load(Path(args.config) if args.config else None)
            except ConfigError:
                pass  # reported by the command itself
            logfmt.setup(verbosity, args.log_format,
                         Path(args.log_file) if args.log_file else None,
                         max_bytes=cfg_for_log.log_max_bytes if cfg_for_log else 1024**2,
                         backups=cfg_for_log.log_backups if cfg_for_log else 3,
                         default=logging.INFO)
        else:
            logfmt.setup(verbosity, args.log_format)
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a broken pipe shows here, inside the handler below
        return rc
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print("\nbrainfs: interrupted", file=sys.stderr)
        return 130
    except (UsageError, ConfigError, BackendError, CacheError) as e:
        return _fail(args, str(e))
    except Exception as e:  # noqa: BLE001 - one line for the user, the trace with -v
        from brainfs.fs.daemon import MountError

        if isinstance(e, MountError):
            return _fail(args, str(e))
        if args.verbose:
            raise
        if isinstance(e, OSError) and e.strerror:
            where = f"{e.filename}: " if e.filename else ""
            return _fail(args, f"{where}{e.strerror}")
        return _fail(args, f"{e or 'unexpected failure'} (run with -v for the details)")


def _fail(args: argparse.Namespace, message: str) -> int:
    """Print the one error line (and log it: a daemon's stderr is not its log)."""
    line = " ".join(message.split())
    if getattr(args, "cmd", None) == "mount" and getattr(args, "log_file", None):
        log.error("%s", line)
    try:
        print(f"brainfs: error: {line}", file=sys.stderr)
    except BrokenPipeError:
        pass
    return 1


if __name__ == "__main__":
    sys.exit(main())
