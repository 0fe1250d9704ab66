"""Commands that put memory into a corpus: ``s3 serve`` (the embedded server), ``import``,
``import-sessions``, ``sample`` and ``index``."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import os
import signal
import socket
import struct
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchBucket, NoSuchKey
from brainfs.backend.keys import (IMPORTED_KEY, INTERNAL_PREFIX, PACK_KEY, CorpusURL,
                                  is_internal, link_of, path_problem, reserved_name)
from .common import (
    FlagError,
    LazyBar,
    config_of,
    open_corpus,
    progress_bar,
    refuse_empty,
    URL_HELP,
    UsageError,
    warn,
)
from .common import command as make_command

if TYPE_CHECKING:
    from brainfs.backend.store import ObjectStore

# boto3 (backend.store), the S3 server, the pack, the search stack, the session importers,
# the sample generator and resource are imported inside the commands that use them: the
# parser loads this module, and `brainfs --help` and `brainfs status` must start without them.


def cmd_s3_serve(args: argparse.Namespace) -> int:
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
    if args.sessions_option:
        raise UsageError("--date, --speaker and --format are options of `brainfs import-sessions` "
                         "(session logs, chat exports, transcripts): `brainfs import-sessions "
                         f"{src} {args.url} …`; `brainfs import` uploads a memory tree as it is")
    if src.is_file():  # a chat export or a transcript: the command for it is import-sessions
        raise UsageError(f"{src} is a file: `brainfs import` uploads a memory tree (a directory); "
                         f"for a session log, a chat export or a transcript run `brainfs "
                         f"import-sessions {src} {args.url}`")
    if not src.is_dir():
        raise UsageError(f"{src}: no such directory (`brainfs import` uploads a memory tree)")
    from brainfs.backend.store import ObjectStore  # here, for start-up time: boto3 is slow to import

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
    imported = _read_imported(store)
    was = dict(imported)
    res = _upload_all(store, cfg, todo, remote, imported, args.overwrite)
    if imported != was:  # a re-run with nothing new writes nothing
        _write_imported(store, imported)
    uploaded, unchanged = res.uploaded, res.unchanged
    for path, why in sorted(res.kept.items())[:10]:
        warn(f"kept the bucket's {path}: {why} (--overwrite replaces it)")
    if len(res.kept) > 10:
        warn(f"… and {len(res.kept) - 10} more kept")
    if res.interrupted:
        left = len(todo) - uploaded - unchanged - len(res.kept)
        print(f"import of {src} into {url} interrupted: {uploaded} uploaded, {unchanged} "
              f"unchanged, {left} not done; run the same command again to finish (the preload "
              f"pack is built then)", file=sys.stderr)
        return 130
    print(f"imported {src} into {url}: {uploaded} uploaded, {unchanged} unchanged"
          + (f", {len(res.kept)} kept as the bucket has them (changed there since imported)"
             if res.kept else "")
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


@dataclass
class _ImportResult:
    uploaded: int = 0
    unchanged: int = 0
    #: path -> why the bucket's version was kept rather than the source's
    kept: dict[str, str] = field(default_factory=dict)
    interrupted: bool = False


def _read_imported(store: ObjectStore) -> dict[str, str]:
    """What earlier imports wrote (path -> MD5 of the source), {} before the first."""
    try:
        data, _ = store.get(IMPORTED_KEY)
        out = json.loads(data)
        return {str(k): str(v) for k, v in out.items()} if isinstance(out, dict) else {}
    except NoSuchKey:
        return {}
    except ValueError:  # damaged: deletions since an import are then not recognised
        warn(f"{IMPORTED_KEY} is unreadable; files deleted in the bucket since they were "
             "imported may be imported again")
        return {}


def _write_imported(store: ObjectStore, imported: dict[str, str]) -> None:
    store.put(IMPORTED_KEY, json.dumps(imported, sort_keys=True).encode())


def _import_action(store: ObjectStore, rel: str, md5: str, etag: str | None,
                   written: str | None, overwrite: bool) -> str:
    """What to do with one source file: 'same', 'upload', or why to keep the bucket's
    version. The bucket is the memory: a mount's edit, dream's page or a delete made since
    the file was imported is newer than the source, and importing the same source again
    must not undo it."""
    from brainfs.backend.store import is_md5  # here, for start-up time: boto3 is slow to import

    if etag == md5:
        return "same"
    if overwrite:
        return "upload"
    if etag is None:
        if written is not None:
            return "deleted in the bucket since it was imported"
        return "upload"
    try:
        info = store.head(rel)
    except NoSuchKey:  # deleted meanwhile
        return "deleted in the bucket since it was imported" if written is not None else "upload"
    # Only import's own PUT carries the marker, and a single-part ETag is the MD5 of the
    # bytes: the marker equal to it proves the object is still the copy import wrote.
    ours = info.imported and (info.imported == etag or not is_md5(etag))
    if ours:
        return "same" if info.imported == md5 else "upload"
    return "changed in the bucket since it was imported" if written is not None or info.imported \
        else "the bucket's copy was not written by an import"


def _upload_all(store: ObjectStore, cfg: Config, todo: list[tuple[str, Path]],
                remote: dict[str, str], imported: dict[str, str],
                overwrite: bool = False) -> _ImportResult:
    """Upload the files of ``todo`` whose bytes the bucket does not hold yet (``remote``:
    path -> ETag), in parallel, never over a version newer than the last import (see
    :func:`_import_action`); ``imported`` (path -> source MD5 written) is updated."""
    from brainfs.backend.store import IMPORT_META  # here, for start-up time: boto3 is slow to import

    res = _ImportResult()
    lock = threading.Lock()
    # Ctrl-C stops the workers: files not started yet are left for the next run, the
    # uploads in flight finish (a second Ctrl-C abandons them).
    stop = threading.Event()

    def put(rel: str, p: Path) -> str | None:
        if stop.is_set():
            return None
        data = os.fsencode(os.readlink(p)) if p.is_symlink() else p.read_bytes()
        md5 = hashlib.md5(data).hexdigest()
        action = _import_action(store, rel, md5, remote.get(rel), imported.get(rel), overwrite)
        if action == "upload":
            store.put(rel, data, metadata={IMPORT_META: md5})
        if action in ("upload", "same"):
            with lock:
                imported[rel] = md5
        return action

    def on_sigint(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nbrainfs: stopping: letting the uploads in flight finish (Ctrl-C again to "
              "abandon them)", file=sys.stderr, flush=True)

    bar = progress_bar(len(todo), "import")
    old_handler = signal.signal(signal.SIGINT, on_sigint)
    try:
        with ThreadPoolExecutor(max_workers=cfg.s3.max_workers) as pool:
            futures = {pool.submit(put, rel, p): rel for rel, p in todo}
            for f in as_completed(futures):
                # After Ctrl-C the queued tasks return None at once (cancelling them
                # instead would leave as_completed waiting for them forever).
                r = f.result()
                if r == "upload":
                    res.uploaded += 1
                elif r == "same":
                    res.unchanged += 1
                elif r is not None:
                    res.kept[futures[f]] = r
                bar.update(1)
    finally:
        signal.signal(signal.SIGINT, old_handler)
        bar.close()
    res.interrupted = stop.is_set()
    return res


def cmd_import_sessions(args: argparse.Namespace) -> int:
    """Sessions people already have (agent logs, chat exports) -> transcripts in the corpus."""
    # here, for start-up time: the session file pulls in the search stack (its turn grammar)
    from brainfs.cache.sessions.conversation import ImportInputError
    from brainfs.cache.sessions.options import make_options
    from brainfs.cache.sessions.sessionfile import import_sessions

    cfg = config_of(args)
    url = CorpusURL.parse(args.url)
    src = Path(args.src)
    if not src.exists():
        # Before anything is created in the bucket: a mistyped path leaves no empty bucket.
        raise UsageError(f"{args.src}: no such file or directory; nothing imported")
    try:
        options = make_options(cfg.sessions.import_speakers, args.speaker, args.date)
    except ImportInputError as e:
        raise UsageError(str(e)) from None
    from brainfs.backend.store import ObjectStore  # here, for start-up time: boto3 is slow to import

    store = ObjectStore(url, cfg)
    try:
        store.check()
    except NoSuchBucket:
        store.create_bucket()
        print(f"created bucket {url.bucket}", file=sys.stderr)
    progress = LazyBar("import-sessions")

    try:
        rep = import_sessions(src, store, args.format, progress, cfg.s3.max_workers, options)
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
    for w in rep.warnings:
        warn(w)
    for path in rep.rewritten:
        warn(f"{path}: turns already imported differ from the source's (edited in the source or "
              "in the transcript); the transcript's stay, the source's versions were appended as new turns")
    print(rep.line(str(url)))
    for note in rep.notes():
        print(note)
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
            raise FlagError(f"--size must be one of {', '.join(SIZES)} or a number") from None
    try:
        stats = generate(Path(args.dest), files=files, seed=args.seed)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"wrote {stats['files']} files ({stats['bytes'] / 1e6:.1f} MB, "
          f"{stats['sessions']} sessions) to {args.dest}")
    return 0



def cmd_index(args: argparse.Namespace) -> int:
    from brainfs.cache.local.pack import pack_blob
    from brainfs.cache.search.embedder import PendingEmbedder
    from brainfs.cache.search.localindex import build_index, local_index_path

    # The model loads while the bucket is checked and listed and the first files are
    # fetched and chunked; the build waits for it only when its first batch is ready.
    embedder = None if args.no_embed else PendingEmbedder(
        config_of(args).embedder, on_unavailable=lambda e: warn(f"{e}; building keyword (BM25) search only"))
    cfg, url, store = open_corpus(args)
    refuse_empty(store, url, cfg, "nothing to index")
    local = local_index_path(cfg.cache_dir_for(url.bucket, url.prefix))
    local.parent.mkdir(parents=True, exist_ok=True)
    progress = LazyBar("index")
    # Whatever changed the corpus (new sessions, hand edits) changed what a mount preloads:
    # the pack is kept in step. Its files are read while the model embeds (a few hundred
    # small GETs) and it is uploaded after the index, so an interrupted run uploads nothing.
    pack: dict = {}

    def read_pack() -> None:
        t = time.perf_counter()
        try:
            pack["blob"], pack["stats"] = pack_blob(store, cfg)
        except BaseException as e:  # noqa: BLE001 - raised below, as build_pack's was
            pack["error"] = e
        pack["seconds"] = time.perf_counter() - t

    packer = threading.Thread(target=read_pack, name="brainfs-pack", daemon=True)
    started: list[bool] = []

    def start_packer() -> None:
        if not started:  # the build reports progress from one thread at a time
            started.append(True)
            packer.start()

    def step(done: int, total: int) -> None:
        # The pack's GETs start once the first batch is written: started with the build,
        # they queued ahead of the first part's files and held up the model's first call.
        start_packer()
        progress(done, total)

    try:
        stats = build_index(store, local, embedder, step)
        t = time.perf_counter()
        start_packer()
        packer.join()
        if "error" in pack:
            raise pack["error"]
        store.put(PACK_KEY, pack["blob"])
        stats["pack"] = pack["stats"]
        stats["pack_seconds"] = round(pack["seconds"], 3)
        stats["pack_wait_seconds"] = round(time.perf_counter() - t, 3)
    except KeyboardInterrupt:
        # The fetches not started yet are dropped (closing the store cancels them); the
        # ones in flight end within the request timeouts.
        store.close()
        progress.close()
        print(f"\nindex of {url} interrupted: nothing uploaded, the bucket's index is "
              f"unchanged; run the same command again to finish", file=sys.stderr)
        return 130
    progress.close()
    vectors = embedder is not None and embedder.result() is not None
    print(f"indexed {url}: {stats.get('files_indexed', 0)} files (re)indexed, "
          f"{stats.get('skipped', 0)} unchanged, {stats.get('removed', 0)} removed; "
          f"{stats.get('chunks_total', stats.get('chunks', 0))} chunks, "
          f"{stats['index_bytes'] / 1e6:.1f} MB, {stats.get('seconds', 0):.1f}s"
          + ("" if vectors else " (no vectors)"))
    log_index_timings(stats, embedder)
    return 0


def log_index_timings(stats: dict, embedder: object) -> None:
    """Where ``brainfs index``'s time went, logged at -v: from the process's start to its
    end, the build's stages (summed over the threads that overlap them) and the command's
    rate beside the build's."""
    import resource

    log = logging.getLogger("brainfs.index")
    if not log.isEnabledFor(logging.INFO):
        return
    wall = process_seconds()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime
    chunks = stats.get("chunks_written", 0)
    build = stats.get("seconds", 0.0)
    model = getattr(embedder, "seconds", None)
    startup = wall - (time.perf_counter() - _T0) if wall is not None else None
    f = lambda k: f"{stats.get(k, 0.0):.2f}s"  # noqa: E731
    log.info(
        "index timings: start-up and imports %s, model load %s (build waited %s), list %s, "
        "waits for index parts and files %s + %s, chunking %s, embedding %s (model idle %s, calls waiting for another part's %s), "
        "SQLite writes %s, upload %s, preload pack %s (then waited for %s); build %.2fs, %s chunks: %s chunks/s "
        "in the build, %s for the whole command (wall %s, CPU %.2fs, %s CPUs busy)",
        f"{startup:.2f}s" if startup is not None else "?",
        f"{model:.2f}s" if model is not None else "-", f("model_wait_seconds"),
        f("list_seconds"), f("fetch_wait_seconds"), f("read_wait_seconds"), f("chunk_seconds"),
        f("embed_seconds"), f("embed_idle_seconds"), f("turn_wait_seconds"), f("write_seconds"), f("upload_seconds"),
        f("pack_seconds"), f("pack_wait_seconds"), build, chunks, f"{chunks / build:.1f}" if build else "-",
        f"{chunks / wall:.1f}" if wall else "?", f"{wall:.2f}s" if wall else "?", cpu,
        f"{cpu / wall:.2f}" if wall else "?")


#: When this module was imported: what start-up cost before the command ran is the rest.
_T0 = __import__("time").perf_counter()


def process_seconds() -> float | None:
    """Seconds since this process started (Linux: /proc), None elsewhere."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        start = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]) / ticks
        uptime = float(open("/proc/uptime").read().split()[0])
        return max(0.0, uptime - start)
    except (OSError, ValueError, IndexError):
        return None




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
                 "missing; the preload pack is rebuilt when the tree or the pack changed. A file "
                 "changed or deleted in the bucket since it was imported (a mount's edit, "
                 "dream's page, an rm) is kept as the bucket has it, with a warning, unless "
                 "--overwrite. Ctrl-C stops after the uploads in flight; the same command again "
                 "finishes the job.")
    im.add_argument("src", metavar="SRC_DIR", help="the memory tree on local disk")
    im.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    im.add_argument("--overwrite", action="store_true",
                    help="write every source file that differs, even over a newer version in "
                    "the bucket (a mount's edit, dream's page) or where it was deleted since")
    # import-sessions' options, given to import by mistake: answered with the right command
    im.add_argument("--date", "--speaker", "--format", dest="sessions_option", action="append",
                    help=argparse.SUPPRESS)
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
                 "upload: a bad one stops the import with one line, nothing written (a damaged line "
                 "of a log is left out with a warning, and counted).")
    se.add_argument("src", metavar="SRC", help="a session file, an export (.zip or conversations.json), "
                    "or a directory of them")
    se.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    se.add_argument("--format", default="auto",
                    choices=("auto", "claude-code", "chatgpt", "claude-ai", "messages", "text"),
                    help="the source format; auto: from each file's name and content")
    se.add_argument("--speaker", action="append", metavar="ROLE=NAME",
                    help="write NAME for the source's speaker ROLE, e.g. User=Nadia (repeatable; "
                    "the import_speakers setting gives defaults); unset, 'User' stays 'User', "
                    "which dream takes for the memory's owner (the output says so)")
    se.add_argument("--date", metavar="DATE",
                    help="the date of a plain-text transcript (2026-11-03, 3 November 2026), over "
                    "what the file says, and of a source that records no time (else the import's "
                    "day); the output says each new session's date and where it came from")
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
