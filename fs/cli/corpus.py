"""Commands that put memory into a corpus: ``s3 serve`` (the embedded server), ``import``,
``import-sessions``, ``sample`` and ``index``."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import signal
import struct
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchBucket, NoSuchKey
from brainfs.backend.keys import (INTERNAL_PREFIX, PACK_KEY, CorpusURL, is_internal, link_of,
                                  path_problem, reserved_name)
from brainfs.backend.store import ObjectStore

from .common import (
    LazyBar,
    config_of,
    embedder_or_none,
    open_corpus,
    progress_bar,
    refuse_empty,
    URL_HELP,
    UsageError,
    warn,
)
from .common import command as make_command


def cmd_s3_serve(args: argparse.Namespace) -> int:
    import socket

    from brainfs.backend.server import serve_foreground

    cfg = config_of(args)
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
    cfg = config_of(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    try:
        store.check()
    except NoSuchBucket:
        store.create_bucket()
        print(f"created bucket {url.bucket}", file=sys.stderr)
    remote = {o.path: o.etag for o in store.list()}
    todo, skipped_bad = _import_plan(src)
    uploaded, unchanged, interrupted = _upload_all(store, cfg, todo, remote)
    if interrupted:
        left = len(todo) - uploaded - unchanged
        print(f"import of {src} into {url} interrupted: {uploaded} uploaded, {unchanged} "
              f"unchanged, {left} not done; run the same command again to finish (the preload "
              f"pack is built then)", file=sys.stderr)
        return 130
    print(f"imported {src} into {url}: {uploaded} uploaded, {unchanged} unchanged"
          + (f", {skipped_bad} refused names" if skipped_bad else ""))
    if uploaded or not _pack_is_current(store, cfg):
        from brainfs.cache.local.pack import build_pack

        stats = build_pack(store, cfg)
        print(f"preload pack: {stats['files']} files, {stats['bytes'] / 1e6:.1f} MB")
    return 0


def _import_plan(src: Path) -> tuple[list[tuple[str, Path]], int]:
    """The (corpus path, local file) pairs to import from ``src``, and how many names were
    refused (each with a warning)."""
    todo: list[tuple[str, Path]] = []
    skipped_bad = 0
    for p in sorted(src.rglob("*")):
        # A symbolic link is imported as a link (its target, not what it points to), as a
        # mount keeps it: the object NAME.brainfs-link (rglob does not descend into links).
        link = p.is_symlink()
        if not link and not p.is_file():
            continue
        rel = p.relative_to(src).as_posix()
        problem = path_problem(link_of(rel) if link else rel) or reserved_name(rel)
        if problem or rel.startswith((INTERNAL_PREFIX + "/", ".git/")):
            if problem:
                warn(f"skipping {rel!r}: {problem}")
                skipped_bad += 1
            continue
        todo.append((link_of(rel) if link else rel, p))
    return todo, skipped_bad


def _upload_all(store: ObjectStore, cfg: Config, todo: list[tuple[str, Path]],
                remote: dict[str, str]) -> tuple[int, int, bool]:
    """Upload the files of ``todo`` whose bytes the bucket does not hold yet (``remote``:
    path -> ETag), in parallel; returns (uploaded, unchanged, interrupted by Ctrl-C)."""
    uploaded = unchanged = 0
    # Ctrl-C stops the workers: files not started yet are left for the next run, the
    # uploads in flight finish (a second Ctrl-C abandons them).
    stop = threading.Event()

    def put(rel: str, p: Path) -> bool | None:
        if stop.is_set():
            return None
        data = os.fsencode(os.readlink(p)) if p.is_symlink() else p.read_bytes()
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

    bar = progress_bar(len(todo), "import")
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
    return uploaded, unchanged, stop.is_set()


def cmd_import_sessions(args: argparse.Namespace) -> int:
    """Sessions people already have (agent logs, chat exports) -> transcripts in the corpus."""
    from brainfs.cache.sessions.importers import ImportInputError
    from brainfs.cache.sessions.sessionfile import import_sessions

    cfg = config_of(args)
    url = CorpusURL.parse(args.url)
    store = ObjectStore(url, cfg)
    try:
        store.check()
    except NoSuchBucket:
        store.create_bucket()
        print(f"created bucket {url.bucket}", file=sys.stderr)
    progress = LazyBar("import-sessions")

    try:
        rep = import_sessions(Path(args.src), store, args.format, progress, cfg.max_workers)
    except ImportInputError as e:
        raise UsageError(f"{e}; nothing imported") from None
    except KeyboardInterrupt:
        print(f"\nimport-sessions into {url} interrupted: the transcripts written are whole; run "
              "the same command again to finish", file=sys.stderr)
        return 130
    finally:
        progress.close()
    if rep.skipped:
        warn(f"skipped {len(rep.skipped)} file(s) of no known session format: "
              + ", ".join(rep.skipped[:3]) + (", …" if len(rep.skipped) > 3 else ""))
    for path in rep.rewritten:
        warn(f"{path}: turns already imported differ from the source's (edited in the source or "
              "in the transcript); the transcript's stay, the source's versions were appended as new turns")
    print(rep.line(str(url)))
    if rep.paths:
        from brainfs.cache.local.pack import build_pack

        build_pack(store, cfg)  # the newest transcripts are in the preload pack
        print(f"next: brainfs index {url} (search), brainfs dream {url} (summaries and the wiki)")
    return 0


def _pack_is_current(store: ObjectStore, cfg: Config) -> bool:
    """Whether ``.brainfs/preload.pack`` holds exactly what the preload rules pick from the
    corpus as listed now (its manifest read with two ranged GETs, never the bodies)."""
    from brainfs.cache.local.catalog import FileRow
    from brainfs.cache.local.pack import MAGIC
    from brainfs.cache.local.pack import select_preload

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



def cmd_index(args: argparse.Namespace) -> int:
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.recaller import build_index, local_index_path

    cfg, url, store = open_corpus(args)
    refuse_empty(store, url, cfg, "nothing to index")
    embedder = None if args.no_embed else embedder_or_none(cfg)
    local = local_index_path(cfg.cache_dir_for(url.bucket, url.prefix))
    local.parent.mkdir(parents=True, exist_ok=True)
    progress = LazyBar("index")

    try:
        stats = build_index(store, local, embedder, progress)
        # Whatever changed the corpus (new sessions, hand edits) changed what a mount
        # preloads: keep the pack in step.
        stats["pack"] = build_pack(store, cfg)
    except KeyboardInterrupt:
        # The fetches not started yet are dropped (closing the store cancels them); the
        # ones in flight end within the request timeouts.
        store.close()
        progress.close()
        print(f"\nindex of {url} interrupted: nothing uploaded, the bucket's index is "
              f"unchanged; run the same command again to finish", file=sys.stderr)
        return 130
    progress.close()
    print(f"indexed {url}: {stats.get('files_indexed', 0)} files (re)indexed, "
          f"{stats.get('skipped', 0)} unchanged, {stats.get('removed', 0)} removed; "
          f"{stats.get('chunks_total', stats.get('chunks', 0))} chunks, "
          f"{stats['index_bytes'] / 1e6:.1f} MB, {stats.get('seconds', 0):.1f}s"
          + ("" if embedder else " (no vectors)"))
    return 0




def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the ``brainfs`` parser."""
    command = functools.partial(make_command, common=common)
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

    ix = command(sub, "index", "build or refresh the search index under .brainfs/ "
                 "(only files whose ETag changed are read)",
                 ["brainfs index s3://memory/alice", "brainfs index s3://memory/alice --no-embed"])
    ix.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    ix.add_argument("--no-embed", action="store_true", help="keyword (BM25) index only, no model")
    ix.set_defaults(func=cmd_index)
