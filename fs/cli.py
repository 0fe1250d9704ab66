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
        preload_in_background=True if getattr(args, "preload_background", False) else None,
        allow_other=True if getattr(args, "allow_other", False) else None,
        read_only=True if getattr(args, "read_only", False) else None,
    )


def _open_corpus(args: argparse.Namespace) -> tuple[Config, CorpusURL, ObjectStore]:
    """Config, parsed ``args.url`` and a store checked to be reachable (one-line errors)."""
    cfg = _config(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    store.check()
    return cfg, url, store


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
    if uploaded:
        from brainfs.cache.pack import build_pack

        stats = build_pack(store, cfg)
        print(f"preload pack: {stats['files']} files, {stats['bytes'] / 1e6:.1f} MB")
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
    if args.read_only:
        argv.append("--read-only")
    if args.preload_background:
        argv.append("--preload-background")
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
        print(f"unmounted {mp} (no status answered: a --naive mount or a dead daemon)")
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


# ---------------------------------------------------------------------------- index / recall
def _embedder_or_none(cfg: Config, quiet: bool = False):
    from brainfs.cache.embedder import EmbedderUnavailable, load_embedder

    try:
        return load_embedder(cfg.embedder)
    except EmbedderUnavailable as e:
        if not quiet:
            print(f"warning: {e}; building keyword (BM25) search only", file=sys.stderr)
        return None


def cmd_index(args: argparse.Namespace) -> int:
    from brainfs.cache.recaller import build_index

    cfg, url, store = _open_corpus(args)
    embedder = None if args.no_embed else _embedder_or_none(cfg)
    local = cfg.cache_dir_for(url.bucket, url.prefix) / "index.sqlite"
    local.parent.mkdir(parents=True, exist_ok=True)
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = _progress(total, "index")
        bar.n = done
        bar.refresh()

    stats = build_index(store, local, embedder, progress, cfg=cfg)
    if bar is not None:
        bar.close()
    print(f"indexed {url}: {stats.get('files_indexed', 0)} files (re)indexed, "
          f"{stats.get('skipped', 0)} unchanged, {stats.get('removed', 0)} removed; "
          f"{stats.get('chunks_total', stats.get('chunks', 0))} chunks, "
          f"{stats['index_bytes'] / 1e6:.1f} MB, {stats.get('seconds', 0):.1f}s"
          + ("" if embedder else " (no vectors)"))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    if args.mount:
        # A file name cannot hold "/": it travels as U+2215 and the daemon turns it back.
        name = args.query.replace("/", "\u2215")
        if not name.strip():
            raise UsageError("empty query")
        if len(name.encode()) > 250:
            raise UsageError("query too long for a file name (250 bytes); pass the corpus URL instead")
        target = Path(args.mount) / ".recall" / (name + (".json" if args.json else ""))
        try:
            out = target.read_text()
        except OSError as e:
            raise UsageError(f"recall through {args.mount} failed: {e.strerror or e}") from None
        if args.json:
            data = json.loads(out)
            if args.k and "cards" in data:
                data["cards"] = data["cards"][: args.k]
            out = json.dumps(data, indent=2) + "\n"
        sys.stdout.write(out)
        return 0
    if not args.url:
        raise UsageError("give --mount MOUNTPOINT or a corpus URL s3://BUCKET/PREFIX")
    from brainfs.cache.recaller import Recaller, download_index
    from brainfs.cache.retrieval import render_synthesis

    cfg, url, store = _open_corpus(args)
    local = cfg.cache_dir_for(url.bucket, url.prefix) / "index.sqlite"
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


def cmd_eval_locomo(args: argparse.Namespace) -> int:
    from brainfs.cache.locomo import evaluate

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    extra = {}
    if not args.no_wiki:
        # The ablation of the seed: the same hybrid retrieval plus the wiki dream builds
        # from the same sessions (a wiki passage counts for the turns its claims cite).
        from brainfs.cache.locomo import wiki_retriever
        from brainfs.dream.locomo import build_wiki

        extra["hybrid+wiki"] = wiki_retriever(build_wiki)
    result = evaluate(path, limit_conversations=args.conversations, limit_questions=args.questions,
                      progress=sys.stderr.isatty() and not args.json, extra_retrievers=extra)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['questions']} questions")
    for name, r in result["retrievers"].items():
        t, s = r["turn"], r["session"]
        print(f"{name:12s} turn  " + "  ".join(f"{k} {v:.3f}" for k, v in t.items())
              + "   session  " + "  ".join(f"{k} {v:.3f}" for k, v in s.items()))
    return 0


# ---------------------------------------------------------------------------- dream / correct / graph
def cmd_dream(args: argparse.Namespace) -> int:
    from brainfs.backend.config import ConfigError
    from brainfs.dream.llm import synthesizer_from_config
    from brainfs.dream.sync import LeaseHeld, run_s3

    cfg, url, store = _open_corpus(args)
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
    path, content = correction_event(args.text, scope=args.scope)
    store.put(path, content.encode("utf-8"), if_none_match=True)
    print(f"recorded {url}/{path}; the next `brainfs dream {url}` turns it into a memory card")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from brainfs.dream.graph import render_graph

    cfg, url, store = _open_corpus(args)
    paths = [o.path for o in store.list("knowledge") if o.path.endswith(".md")]
    if not paths:
        raise UsageError(f"{url} has no knowledge/ pages yet: run `brainfs dream {url}`")
    files: dict[str, str] = {}

    def got(path: str, data, etag: str, err) -> None:
        if data is not None:
            files[path] = data.decode("utf-8", errors="replace")

    store.get_many(paths, got)
    out = Path(args.out)
    counts = render_graph(files, out, title=str(url))
    print(f"wrote {out}: {counts['pages']} pages, {counts['links']} links, "
          f"{counts['cite_edges']} citation edges")
    return 0


# ---------------------------------------------------------------------------- context
def cmd_context(args: argparse.Namespace) -> int:
    """Assemble the context for one turn: lanes under a token budget, with reasons."""
    from brainfs.cache.context import MemorySource, StoreSource, assemble
    from brainfs.cache.index import SearchIndex

    given = [x for x in (args.mount, args.dir, args.url) if x]
    if len(given) != 1:
        raise UsageError("give exactly one of --mount MOUNTPOINT, --dir DIR or s3://BUCKET/PREFIX")
    if not args.task.strip():
        raise UsageError("empty task")
    if args.budget <= 0:
        raise UsageError(f"--budget must be a positive number of tokens (got {args.budget})")
    if args.reserve < 0 or args.reserve >= args.budget:
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
            index_path = Path(st["cache_dir"]) / "index.sqlite"
        make = lambda ix: MemorySource(mp, ix, embedder=spec, name=st.get("corpus"))  # noqa: E731
    elif args.dir:
        root = Path(args.dir)
        if not root.is_dir():
            raise UsageError(f"{root} is not a directory")
        if index_path is None:
            index_path = root / ".brainfs" / "index.sqlite"
        make = lambda ix: MemorySource(root, ix, embedder=spec)  # noqa: E731
    else:
        from brainfs.cache.recaller import download_index

        url = CorpusURL.parse(args.url)
        store = ObjectStore(url, cfg)
        store.check()
        local = cfg.cache_dir_for(url.bucket, url.prefix) / "index.sqlite"
        local.parent.mkdir(parents=True, exist_ok=True)
        if index_path is None:
            index_path = local if download_index(store, local) else None
        make = lambda ix: StoreSource(store, ix, embedder=spec)  # noqa: E731
    index = None
    if index_path is not None and index_path.is_file():
        index = SearchIndex(index_path)
    else:
        print("warning: no search index found; the cards, thread and files lanes stay empty "
              "(run `brainfs index s3://B/P`, or pass --index FILE)", file=sys.stderr)
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
    mo.add_argument("--preload-background", action="store_true",
                    help="usable at once; the preload continues in the background")
    mo.add_argument("--foreground", action="store_true", help="stay in the foreground, log to stderr")
    mo.add_argument("--naive", action="store_true",
                    help="benchmark baseline: every operation is a remote request, no cache")
    mo.add_argument("--allow-other", action="store_true", help="let other users see the mount")
    mo.add_argument("--read-only", action="store_true",
                    help="refuse writes (EROFS); close(2) then never waits for the daemon")
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
    ix = sub.add_parser("index", help="build or refresh the search index under .brainfs/ "
                        "(only files whose ETag changed are read)")
    ix.add_argument("url", metavar="s3://BUCKET/PREFIX")
    ix.add_argument("--no-embed", action="store_true", help="keyword (BM25) index only, no model")
    ix.set_defaults(func=cmd_index)

    rc = sub.add_parser("recall", help="hybrid semantic search; through a mount it also "
                        "materializes the files behind the hits")
    rc.add_argument("query")
    rc.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX", help="search the corpus directly")
    rc.add_argument("--mount", help="a running mount to ask (files get materialized there)")
    rc.add_argument("-k", type=int, default=None, help="number of passages")
    rc.add_argument("--json", action="store_true")
    rc.set_defaults(func=cmd_recall)

    cx = sub.add_parser("context", help="assemble what reaches the model for a task: lanes "
                        "(scope, guide, index, pinned, cards, thread, files) under a token "
                        "budget, every item with its reason")
    cx.add_argument("task", help="the task or message of this turn")
    cx.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX", help="read the corpus directly")
    where = cx.add_mutually_exclusive_group()
    where.add_argument("--mount", help="a running mount (files read through it, index from its cache)")
    where.add_argument("--dir", help="a plain memory tree on disk (index: DIR/.brainfs/index.sqlite or --index)")
    cx.add_argument("--index", help="search index file to use (default: from the mount, dir or corpus)")
    cx.add_argument("--budget", type=int, default=8000, help="context budget in tokens (default 8000)")
    cx.add_argument("--reserve", type=int, default=2000,
                    help="tokens kept free for the model's answer (default 2000)")
    cx.add_argument("-k", type=int, default=None, help="recall pool size (default scales with the budget)")
    cx.add_argument("--drop-stale", action="store_true",
                    help="skip items older than stale_days instead of flagging them")
    out = cx.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the JSON object of DESIGN.md")
    out.add_argument("--html", metavar="FILE", help="write the context-window page to FILE")
    cx.set_defaults(func=cmd_context)

    ev = sub.add_parser("eval", help="retrieval quality").add_subparsers(dest="evalcmd", required=True)
    lo = ev.add_parser("locomo", help="evidence recall@k on LoCoMo-format data")
    lo.add_argument("file")
    lo.add_argument("--json", action="store_true")
    lo.add_argument("--conversations", type=int, help="only the first N conversations")
    lo.add_argument("--questions", type=int, help="only the first N questions per conversation")
    lo.add_argument("--no-wiki", action="store_true", help="skip the hybrid+wiki retriever (no dream run)")
    lo.set_defaults(func=cmd_eval_locomo)

    de = sub.add_parser("demo", help="the main job on the embedded default: local S3, sample "
                        "memory, mount at ./memory, a grep, a lazy cat and a recall")
    de.add_argument("mountpoint", nargs="?", default="memory")
    de.add_argument("--port", type=int, default=9000)
    de.add_argument("--size", default="demo", help="sample size (demo, 2000, 20000)")
    de.add_argument("--stop", action="store_true", help="unmount and stop the demo's S3 server")
    de.set_defaults(func=cmd_demo)
    dr = sub.add_parser("dream", help="one run of the wiki maintainer: summarize new sessions, "
                        "update knowledge/ with cited facts, commit, upload, re-index")
    dr.add_argument("url", metavar="s3://BUCKET/PREFIX")
    dr.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    dr.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="wait this long for another running dream to finish (default: exit at once)")
    dr.add_argument("--force", action="store_true", help="re-render even when nothing is new")
    dr.add_argument("--no-embed", action="store_true",
                    help="verify claims lexically and index without vectors (no model load)")
    dr.add_argument("--no-index", action="store_true", help="skip the re-index after the run")
    dr.add_argument("--synth", choices=("deterministic", "llm"),
                    help="who writes pages and summaries (default: dream_synthesizer in the config, "
                    "deterministic); llm uses BRAINFS_LLM_BASE_URL/OPENAI_BASE_URL and BRAINFS_LLM_MODEL")
    dr.set_defaults(func=cmd_dream)
    co = sub.add_parser("correct", help="record a correction; the next dream run turns it into a "
                        "memory card (notes/corrections/) and updates the affected pages")
    co.add_argument("text", metavar="TEXT")
    co.add_argument("url", metavar="s3://BUCKET/PREFIX")
    co.add_argument("--scope", default="global", help="what the correction applies to (default: global)")
    co.set_defaults(func=cmd_correct)
    gr = sub.add_parser("graph", help="draw the wiki's link and citation graph to an image")
    gr.add_argument("url", metavar="s3://BUCKET/PREFIX")
    gr.add_argument("--out", required=True, metavar="FILE.png")
    gr.set_defaults(func=cmd_graph)
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
