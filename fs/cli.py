"""The ``brainfs`` command line (a contract: scripts, tests and users rely on it).

Every command exits non-zero with one human-readable line on bad input. Long work shows a
progress bar on a terminal and stays quiet otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from brainfs.backend.config import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, Config, ConfigError
from brainfs.backend.errors import BackendError, NoSuchBucket
from brainfs.backend.keys import CorpusURL, path_problem
from brainfs.backend.store import ObjectStore
from brainfs.cache.workingset import CacheError

log = logging.getLogger("brainfs")


class UsageError(Exception):
    """Bad input from the user (one line)."""


def _progress(total: int, desc: str):
    """A tqdm bar on a terminal, a silent stand-in otherwise."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="file", disable=not sys.stderr.isatty(), leave=False)


def _config(args: argparse.Namespace) -> Config:
    cfg = Config.load(Path(args.config) if getattr(args, "config", None) else None)
    return cfg.override(
        cache_dir=getattr(args, "cache_dir", None),
        preload_budget_bytes=getattr(args, "preload_budget", None),
        allow_other=True if getattr(args, "allow_other", False) else None,
    )


# ---------------------------------------------------------------------------- s3 serve
def cmd_s3_serve(args: argparse.Namespace) -> int:
    from brainfs.backend.server import serve_foreground

    return serve_foreground(Path(args.root), args.port, args.host, _config(args))


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
        if problem or rel.startswith(".brainfs/") or rel.startswith(".git/"):
            if problem:
                print(f"skipping {rel!r}: {problem}", file=sys.stderr)
                skipped_bad += 1
            continue
        todo.append((rel, p))
    uploaded = unchanged = 0

    def put(rel: str, p: Path) -> bool:
        data = p.read_bytes()
        if remote.get(rel) == hashlib.md5(data).hexdigest():
            return False
        store.put(rel, data)
        return True

    bar = _progress(len(todo), "import")
    with ThreadPoolExecutor(max_workers=cfg.max_workers) as pool:
        futures = [pool.submit(put, rel, p) for rel, p in todo]
        for f in as_completed(futures):
            if f.result():
                uploaded += 1
            else:
                unchanged += 1
            bar.update(1)
    bar.close()
    print(f"imported {src} into {url}: {uploaded} uploaded, {unchanged} unchanged"
          + (f", {skipped_bad} refused names" if skipped_bad else ""))
    return 0


# ---------------------------------------------------------------------------- sample
def cmd_sample(args: argparse.Namespace) -> int:
    from brainfs.fs.sample import SIZES, generate

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
def cmd_mount(args: argparse.Namespace) -> int:
    from brainfs.fs.daemon import MountError, check_mountpoint, run_foreground

    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    mp = Path(args.mountpoint)
    if args.naive:
        from brainfs.fs.naive import run_naive

        check_mountpoint(mp)
        if not args.foreground:
            return _spawn_daemon(args, cfg, url, mp)
        return run_naive(url, mp, cfg, _notifier(args.notify_fd))
    if args.foreground:
        _setup_logging(args.verbose)
        notify = _notifier(args.notify_fd)
        try:
            return run_foreground(url, mp, cfg, notify)
        except (MountError, BackendError, CacheError, OSError) as e:
            notify(f"error {e}")
            raise
    check_mountpoint(mp)
    return _spawn_daemon(args, cfg, url, mp)


def _notifier(fd: int | None):
    if fd is None:
        return lambda line: None
    stream = os.fdopen(fd, "w", buffering=1)

    def say(line: str) -> None:
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
    r, w = os.pipe()
    argv = [sys.executable, "-m", "brainfs.fs.cli", "mount", str(url), str(mp), "--foreground",
            "--notify-fd", str(w)]
    for flag, value in (("--cache-dir", args.cache_dir), ("--preload-budget", args.preload_budget),
                        ("--config", args.config)):
        if value is not None:
            argv += [flag, str(value)]
    if args.naive:
        argv.append("--naive")
    if args.allow_other:
        argv.append("--allow-other")
    with open(log_path, "ab") as logf:
        child = subprocess.Popen(argv, pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=logf,
                                 stderr=logf, start_new_session=True)
    os.close(w)
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
                print(f"mounted {url} at {mp} (pid {child.pid}; {t.get('preload_files', 0)} files "
                      f"preloaded in {t.get('preload_s', 0):.2f}s; log {log_path})")
                return 0
            elif kind == "error":
                if bar:
                    bar.close()
                child.wait(timeout=30)
                raise UsageError(rest)
    child.wait(timeout=30)
    raise UsageError(f"the mount daemon exited with status {child.returncode}; see {log_path}")


def _status_of(mp: Path) -> dict:
    try:
        return json.loads((mp / ".brainfs" / "status").read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{mp} is not a running brainfs mount ({e.__class__.__name__})") from None


def cmd_umount(args: argparse.Namespace) -> int:
    from brainfs.fs.daemon import is_mountpoint

    mp = Path(args.mountpoint)
    if not is_mountpoint(mp):
        raise UsageError(f"{mp} is not mounted")
    try:
        pid = int(_status_of(mp)["pid"])
    except UsageError:
        # A dead daemon leaves "Transport endpoint is not connected": detach it.
        subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        print(f"unmounted {mp} (daemon was not answering)")
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            print(f"unmounted {mp}")
            return 0
        time.sleep(0.05)
    raise UsageError(f"daemon {pid} did not finish within {args.timeout:.0f}s (uploads pending?)")


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
    print(f"  files:     {st['files']} in corpus, {st['local_files']} local, {st['remote_files']} remote")
    print(f"  cache:     {st['local_bytes'] / mb:.1f} MiB of {st['cache_budget_bytes'] / mb:.0f} MiB in {st['cache_dir']}")
    print(f"  writes:    {st['dirty_files']} dirty, {st['pending_uploads']} pending uploads")
    be = st.get("backend", {})
    print(f"  backend:   {st['endpoint']}; last error: {be.get('last_error') or 'none'}")
    print(f"  recall:    {st.get('recall')}")
    return 0


# ---------------------------------------------------------------------------- demo
def cmd_demo(args: argparse.Namespace) -> int:
    from brainfs.fs import demo

    if args.stop:
        return demo.stop(Path(args.mountpoint))
    return demo.run(Path(args.mountpoint), args.port, args.size)


# ---------------------------------------------------------------------------- plumbing
def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("botocore").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.WARNING)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render --help in the README)."""
    p = argparse.ArgumentParser(
        prog="brainfs",
        description="An agent's long-term memory as a filesystem over S3. A corpus is named "
        "s3://BUCKET/PREFIX; the endpoint comes from AWS_ENDPOINT_URL, credentials from the "
        f"standard AWS variables (default key pair {DEFAULT_ACCESS_KEY}/{DEFAULT_SECRET_KEY} "
        "for the embedded server).",
    )
    p.add_argument("--config", help="TOML config file (default ~/.config/brainfs/config.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    s3 = sub.add_parser("s3", help="the embedded S3 server").add_subparsers(dest="s3cmd", required=True)
    sv = s3.add_parser("serve", help="serve a local directory as S3 (rclone serve s3), in the foreground")
    sv.add_argument("--root", required=True, help="directory whose subfolders are the buckets")
    sv.add_argument("--port", type=int, default=9000)
    sv.add_argument("--host", default="127.0.0.1")
    sv.set_defaults(func=cmd_s3_serve)

    im = sub.add_parser("import", help="upload a memory tree (idempotent: unchanged files are skipped)")
    im.add_argument("src")
    im.add_argument("url", metavar="s3://BUCKET/PREFIX")
    im.set_defaults(func=cmd_import)

    sa = sub.add_parser("sample", help="write a sample memory tree of a synthetic persona")
    sa.add_argument("dest")
    sa.add_argument("--size", default="demo", help="demo (~200 files), 2000, 20000, or a number")
    sa.add_argument("--seed", type=int, default=7)
    sa.set_defaults(func=cmd_sample)

    mo = sub.add_parser("mount", help="mount a corpus (returns once the working set is preloaded)")
    mo.add_argument("url", metavar="s3://BUCKET/PREFIX")
    mo.add_argument("mountpoint")
    mo.add_argument("--cache-dir", help="working-set directory (default: per corpus under ~/.cache/brainfs)")
    mo.add_argument("--preload-budget", type=int, help="bytes to preload at mount")
    mo.add_argument("--foreground", action="store_true", help="stay in the foreground, log to stderr")
    mo.add_argument("--naive", action="store_true",
                    help="benchmark baseline: every operation is a remote request, no cache")
    mo.add_argument("--allow-other", action="store_true", help="let other users see the mount")
    mo.add_argument("--notify-fd", type=int, help=argparse.SUPPRESS)
    mo.set_defaults(func=cmd_mount)

    um = sub.add_parser("umount", help="flush pending uploads and unmount")
    um.add_argument("mountpoint")
    um.add_argument("--timeout", type=float, default=120.0)
    um.set_defaults(func=cmd_umount)

    st = sub.add_parser("status", help="working set, cache use, dirty files, backend health")
    st.add_argument("mountpoint")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)
    de = sub.add_parser("demo", help="the main job on the embedded default: local S3, sample "
                        "memory, mount at ./memory, a grep, a lazy cat and a recall")
    de.add_argument("mountpoint", nargs="?", default="memory")
    de.add_argument("--port", type=int, default=9000)
    de.add_argument("--size", default="demo", help="sample size (demo, 2000, 20000)")
    de.add_argument("--stop", action="store_true", help="unmount and stop the demo's S3 server")
    de.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``brainfs`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd != "mount":
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                            format="%(levelname)s %(message)s")
        logging.getLogger("botocore").setLevel(logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (UsageError, ConfigError, BackendError, CacheError) as e:
        print(f"brainfs: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - one line for the user, the trace in verbose mode
        from brainfs.fs.daemon import MountError

        if isinstance(e, MountError):
            print(f"brainfs: error: {e}", file=sys.stderr)
            return 1
        if args.verbose:
            raise
        print(f"brainfs: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
