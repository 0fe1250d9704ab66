"""Dream over an S3 corpus: a thin layer on :mod:`brainfs.dream.core`.

Layout in the bucket (under the corpus prefix):

* ``.brainfs/dream.lease`` — JSON ``{"owner", "host", "pid", "acquired", "expires"}``; a run
  holds it from orient to re-index. Taken with ``If-None-Match: *`` (or ``If-Match`` on an
  expired lease) where the server honours conditional writes; where it does not (rclone
  serve s3), a local ``flock`` serializes runs on this machine and the lease is re-read after
  writing to detect a race with another machine (best effort, documented).
* ``.brainfs/dream-state.json`` — what the last run saw and extracted (see core).
* ``.brainfs/wiki.bundle`` — the wiki's git history as one ``git bundle`` (all refs, branch
  ``main``). The repository's tree is every file dream manages, at its corpus path
  (``knowledge/…``, ``notes/corrections/…``, ``sessions/index.md``,
  ``sessions/<id>/summary.md``). ``git clone wiki.bundle`` gives the history; a mount
  clones it into its cache and shows it as ``.git`` at its root (a gitfile), so
  ``git -C memory/knowledge log`` works there.

Writes: each changed object is put with ``if_match`` = the ETag seen at orient time (or
``if_none_match`` for a new one) where the server honours it; otherwise the current ETag is
read just before the put and a mismatch is a conflict (the object is skipped and reported:
the other writer's version is kept). The state goes last, so an interrupted run is redone.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import logging
import os
import shutil
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import git
from brainfs.backend.errors import BackendError, NoSuchKey, PreconditionFailed
from brainfs.backend.keys import DREAM_LEASE_KEY, WIKI_BUNDLE_KEY, is_internal
from brainfs.backend.store import ObjectStore
from brainfs.cache.layout import (CORRECTIONS_DIR, FORGET_DIR, GUIDE_PATH, INDEX_PATH, KNOWLEDGE, NOTES,
                                  SESSIONS)
from brainfs.cache.local.pack import build_pack
from brainfs.cache.search.localindex import build_index, local_index_path

from .core import RunResult, dream
from .progress import Progress
from .run import SKILL_PATHS
from .state import STATE_PATH

log = logging.getLogger(__name__)

LEASE_PATH = DREAM_LEASE_KEY
#: A lease outlives a crashed run by this long at most.
LEASE_TTL_S = 900.0
_WANTED = (SESSIONS, KNOWLEDGE, NOTES, FORGET_DIR, CORRECTIONS_DIR)


class LeaseHeld(BackendError):
    """Another dream run holds the lease."""


# --------------------------------------------------------------------------- tree over S3


class S3Tree:
    """The corpus as dream reads it, through a local mirror keyed by ETag (a second run
    downloads only what changed)."""

    def __init__(self, store: ObjectStore, mirror: Path) -> None:
        self.store = store
        self.mirror = mirror
        mirror.mkdir(parents=True, exist_ok=True)
        self._meta_path = mirror / ".etags.json"
        try:
            self._etags: dict[str, str] = json.loads(self._meta_path.read_text())
        except (OSError, ValueError):
            self._etags = {}
        # GUIDE.md too: a correction or a forget request reaches it (dream never manages it).
        self._paths = {o.path: o.etag for o in store.list()
                       if o.path.startswith(_WANTED)
                       or o.path in (STATE_PATH, GUIDE_PATH, *SKILL_PATHS)}
        stale = [p for p, e in self._paths.items() if self._etags.get(p) != e and p.endswith((".md", ".json", ".txt"))]

        def got(path: str, data: bytes | None, etag: str, err) -> None:
            if data is not None:
                self._store_local(path, data, etag)
            else:
                log.warning("dream: cannot read %s: %s", path, err)

        store.get_many(stale, got)
        self._meta_path.write_text(json.dumps(self._etags))

    def _store_local(self, path: str, data: bytes, etag: str) -> None:
        dst = self.mirror / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        self._etags[path] = etag

    def paths(self) -> dict[str, str]:
        return dict(self._paths)

    def read(self, path: str) -> str | None:
        if path not in self._paths:
            return None
        if self._etags.get(path) != self._paths[path]:
            try:
                data, etag = self.store.get(path)
            except NoSuchKey:
                return None
            self._store_local(path, data, etag)
        try:
            return (self.mirror / path).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None


# --------------------------------------------------------------------------- lease


class Lease:
    """``.brainfs/dream.lease``: one dream at a time per corpus."""

    def __init__(self, store: ObjectStore, lock_dir: Path, ttl: float = LEASE_TTL_S,
                 wait: float = 0.0) -> None:
        self.store = store
        self.ttl = ttl
        self.wait = wait
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        lock_dir.mkdir(parents=True, exist_ok=True)
        self._lock_path = lock_dir / "dream.lock"
        self._fd: int | None = None

    def _held_by(self) -> tuple[dict | None, str | None]:
        try:
            data, etag = self.store.get(LEASE_PATH)
        except NoSuchKey:
            return None, None
        try:
            return json.loads(data), etag
        except ValueError:
            return {"owner": "?", "expires": 0}, etag

    def _busy(self, info: dict) -> LeaseHeld:
        until = _dt.datetime.fromtimestamp(float(info.get("expires", 0)), _dt.timezone.utc)
        return LeaseHeld(f"another dream run is in progress (lease held by {info.get('owner')} "
                         f"until {until:%Y-%m-%d %H:%M:%S} UTC); try again later or pass --wait")

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    info, _ = self._held_by()
                    raise self._busy(info or {"owner": "another process on this machine"}) from None
                time.sleep(0.2)
        self._fd = fd
        try:
            self._acquire_remote(deadline)
        except BaseException:
            self._unlock()
            raise

    def _acquire_remote(self, deadline: float) -> None:
        cond = self.store.conditional_writes()
        while True:
            info, etag = self._held_by()
            now = time.time()
            if info is None or float(info.get("expires", 0)) < now or info.get("owner") == self.owner:
                body = json.dumps({"owner": self.owner, "host": socket.gethostname(), "pid": os.getpid(),
                                   "acquired": now, "expires": now + self.ttl}).encode()
                try:
                    if cond:
                        self.store.put(LEASE_PATH, body, if_match=etag, if_none_match=etag is None)
                    else:
                        self.store.put(LEASE_PATH, body)
                        time.sleep(0.3)  # let a racing writer land, then check who won
                    mine, _ = self._held_by()
                    if mine and mine.get("owner") == self.owner:
                        return
                except PreconditionFailed:
                    pass
                info, _ = self._held_by()
            if time.monotonic() >= deadline:
                raise self._busy(info or {})
            time.sleep(1.0)

    def release(self) -> None:
        """Give the lease up: delete it while it is ours, and check that it is gone (a lease
        left behind would refuse every other run until it expires)."""
        try:
            for attempt in range(4):
                info, _ = self._held_by()
                if not (info and info.get("owner") == self.owner):
                    return
                if attempt:
                    log.warning("dream lease still in the bucket after its delete; deleting again")
                    time.sleep(0.2 * attempt)
                self.store.delete(LEASE_PATH)
            info, _ = self._held_by()
            if info and info.get("owner") == self.owner:
                log.warning("dream lease could not be removed; it expires by itself in %.0f s", self.ttl)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Lease":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


# --------------------------------------------------------------------------- git history


def commit_history(store: ObjectStore, res: RunResult, workdir: Path) -> str | None:
    """Mirror the staged managed tree into the wiki repository (from the bucket's bundle),
    commit when anything changed, upload the new bundle. Returns the commit sha or None."""
    repo_dir = workdir / "wiki"
    if repo_dir.exists():
        shutil.rmtree(repo_dir)
    bundle = workdir / "wiki.bundle"
    try:
        data, _ = store.get(WIKI_BUNDLE_KEY)
        bundle.write_bytes(data)
        repo = git.Repo.clone_from(str(bundle), str(repo_dir), branch="main")
    except NoSuchKey:
        repo = git.Repo.init(str(repo_dir), initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "brainfs dream")
        cw.set_value("user", "email", "dream@brainfs.invalid")
    wanted = {p: t for p, t in res.staged.items() if not is_internal(p)}
    tracked = set(repo.git.ls_files().splitlines()) if repo.head.is_valid() else set()
    for p in sorted(tracked - set(wanted)):
        if p.startswith(CORRECTIONS_DIR):
            continue  # an event dream wrote once (a hand-edit conflict) is an input: it stays
        repo.index.remove([p], working_tree=True)
    for p, txt in wanted.items():
        dst = repo_dir / p
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(txt, encoding="utf-8")
    if wanted:
        repo.index.add(sorted(wanted))
    if repo.head.is_valid() and not repo.index.diff("HEAD"):
        return None
    commit = repo.index.commit(res.commit_message())
    out = workdir / "wiki-new.bundle"
    repo.git.bundle("create", str(out), "--all")
    store.put(WIKI_BUNDLE_KEY, out.read_bytes())
    return commit.hexsha


def wiki_log(store: ObjectStore, workdir: Path) -> list[tuple[str, str]]:
    """(sha, message) of every commit in the bucket's wiki history, newest first."""
    try:
        data, _ = store.get(WIKI_BUNDLE_KEY)
    except NoSuchKey:
        return []
    workdir.mkdir(parents=True, exist_ok=True)
    bundle = workdir / "log.bundle"
    bundle.write_bytes(data)
    repo_dir = Path(tempfile.mkdtemp(dir=workdir))
    repo = git.Repo.clone_from(str(bundle), str(repo_dir), branch="main")
    return [(c.hexsha, c.message) for c in repo.iter_commits("main")]


# --------------------------------------------------------------------------- upload


@dataclass
class SyncReport:
    result: RunResult
    commit: str | None = None
    uploaded: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    index: dict | None = None
    seconds: float = 0.0


def upload(store: ObjectStore, res: RunResult, listing: dict[str, str], rep: SyncReport) -> None:
    cond = store.conditional_writes()
    # New and changed pages first, then the INDEX that links them, then deletions: a reader
    # (a mount relisting mid-upload) that sees the new INDEX sees every page it names.
    writes = sorted(((c.path, c.action) for c in res.changes if c.path != STATE_PATH),
                    key=lambda w: (w[1] == "delete", w[0] == INDEX_PATH))

    def ok_to_write(path: str) -> bool:
        if cond:
            return True
        try:
            cur = store.head(path).etag
        except NoSuchKey:
            cur = None
        return cur == listing.get(path)

    for path, action in writes:
        try:
            if not ok_to_write(path):
                rep.conflicts.append(path)
                continue
            if action == "delete":
                store.delete(path)
                rep.deleted.append(path)
                continue
            data = res.staged[path].encode("utf-8")
            if cond:
                old = listing.get(path)
                store.put(path, data, if_match=old, if_none_match=old is None)
            else:
                store.put(path, data)
            rep.uploaded.append(path)
        except PreconditionFailed:
            rep.conflicts.append(path)
    state = res.state
    if rep.conflicts:
        # A conflicting file keeps the other writer's version; forget that dream manages it
        # so that it is not deleted later, and re-check it next run.
        state.managed = [p for p in state.managed if p not in rep.conflicts]
        state.owned = {p: m for p, m in state.owned.items() if p not in rep.conflicts}
    store.put(STATE_PATH, state.to_json().encode())
    rep.uploaded.append(STATE_PATH)


def run_s3(store: ObjectStore, workdir: Path, *, dry_run: bool = False, wait: float = 0.0,
           embedder=None, reindex: bool = True, index_embedder=None,
           settings: dict | None = None, force: bool = False, synthesizer=None,
           progress: Progress | None = None) -> SyncReport:
    """One dream run over an S3 corpus (lease → orient … verify → commit → upload → index).
    ``workdir`` holds the mirror, the git work tree and the local index copy; ``progress``
    shows the phases (default: on standard error when it is a terminal)."""
    t0 = time.monotonic()
    prog = progress if progress is not None else Progress()
    workdir.mkdir(parents=True, exist_ok=True)
    if dry_run:
        tree = S3Tree(store, workdir / "mirror")
        res = dream(tree, synthesizer=synthesizer, embedder=embedder, settings=settings, force=force,
                    progress=prog)
        return SyncReport(res, seconds=round(time.monotonic() - t0, 3))
    with Lease(store, workdir, wait=wait):
        tree = S3Tree(store, workdir / "mirror")
        res = dream(tree, synthesizer=synthesizer, embedder=embedder, settings=settings, force=force,
                    progress=prog)
        rep = SyncReport(res)
        if res.nothing_new:
            rep.seconds = round(time.monotonic() - t0, 3)
            return rep
        prog.phase("committing")
        rep.commit = commit_history(store, res, workdir)
        prog.phase("uploading", total=len(res.changes))
        upload(store, res, tree.paths(), rep)
        prog.count(len(res.changes), len(res.changes))
        prog.done()
        # New pages and summaries are what mounts preload: refresh the packed preload.
        try:
            build_pack(store, store.cfg)
        except BackendError as e:
            log.warning("preload pack not refreshed: %s", e)
        if reindex:
            local = local_index_path(workdir)
            prog.phase("indexing")
            rep.index = build_index(store, local, index_embedder, progress=prog.count)
            if prog.total:
                prog.count(prog.total, prog.total)  # files found unchanged are done too
            prog.done()
    rep.seconds = round(time.monotonic() - t0, 3)
    return rep
