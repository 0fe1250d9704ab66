"""Dream through the Python API: the wiki's history (``history``, ``diff``: ``git log`` and
``git diff`` of a file dream writes, in the bundle dream keeps), ``dream_status`` and a
``dream`` run of :class:`~brainfs.front.api.Memory`."""

from __future__ import annotations

import datetime as _dt
import json
import re
import time
from typing import Any

from brainfs.backend.config import ConfigError
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import DREAM_LEASE_KEY
from brainfs.front.apicore import MemoryCore
from brainfs.front.usage import UsageError

# Imports of GitPython, the mount daemon (for the history's fetch), dream and the embedder
# are made inside the methods that use them: `brainfs status` loads this module (with
# front/api.py) and starts without them (tests/front/test_cli_start.py).


def git_error() -> type[Exception]:
    """GitPython's command error (imported when a history call needs it)."""
    from git import GitCommandError

    return GitCommandError


class MemoryDream(MemoryCore):
    """:meth:`history`, :meth:`diff`, :meth:`dream_status` and :meth:`dream` of a
    :class:`~brainfs.front.api.Memory`."""

    def _wiki_repo(self) -> Any:
        """The wiki's git history (dream's ``.brainfs/wiki.bundle``) cloned into this
        memory's cache, refreshed when the bundle changed; None before the first dream."""
        import git

        from brainfs.fs.wikihistory import fetch_wiki_history

        cache = self.cfg.cache_dir_for(self.url.bucket, self.url.prefix) / "api"
        cache.mkdir(parents=True, exist_ok=True)
        gitdir = fetch_wiki_history(self.store, cache)
        return git.Repo(gitdir) if gitdir else None

    def history(self, path: str, limit: int = 20) -> list[dict[str, str]]:
        """The dream runs that changed ``path`` (a page, INDEX.md, a card or summary dream
        writes), newest first: ``commit``, ``date``, ``message`` — ``git log`` of that file
        in the wiki's history. Empty for a file dream never wrote."""
        p = self.check_path(path)
        limit = max(1, min(int(limit), 500))
        with self._lock:
            repo = self._wiki_repo()
            if repo is None:
                return []
            try:
                out = repo.git.log(f"-n{limit}", "--format=%H%x09%aI%x09%s", "--", p)
            finally:
                repo.close()
        rows = [ln.split("\t", 2) for ln in out.splitlines() if ln.strip()]
        return [{"commit": c, "date": d, "message": m} for c, d, m in rows]

    def diff(self, path: str, old: str | None = None, new: str | None = None) -> str:
        """A unified diff of ``path`` between two versions of the wiki (commits as
        :meth:`history` names them, or a prefix of one; ``HEAD``, ``HEAD~N``): by default
        its last change (the version before it → the latest)."""
        p = self.check_path(path)
        for v in (old, new):
            if v is not None and not re.fullmatch(r"[0-9a-fA-F]{4,40}|HEAD(?:~\d{1,4})?", v):
                raise UsageError(f"{v!r}: give a commit as history lists it (hex, 4 to 40 "
                                 "digits), HEAD or HEAD~N")
        with self._lock:
            repo = self._wiki_repo()
            if repo is None:
                raise UsageError(f"{self.url} has no wiki history yet: run a dream first")
            try:
                if new is None or old is None:
                    commits = repo.git.log("-n2", "--format=%H", *([new] if new else []), "--", p).split()
                    if not commits:
                        raise UsageError(f"{p}: no version in the wiki's history (dream never wrote it)")
                    new = new or commits[0]
                    if old is None:
                        if len(commits) < 2:  # its first version: all of it is new
                            return repo.git.show("--format=", new, "--", p)
                        old = commits[1]
                return repo.git.diff(old, new, "--", p)
            except git_error() as e:
                raise UsageError(f"{p}: {' '.join(str(e.stderr or e).split())[:300]}") from None
            finally:
                repo.close()

    def dream_status(self) -> dict[str, Any]:
        """Whether a dream run holds this memory's lease (``running``, by whom, until
        when) and the last run that changed the wiki (``last_commit``: commit, date, message)."""
        out: dict[str, Any] = {"running": False, "lease": None, "last_commit": None}
        try:
            info = json.loads(self.store.get(DREAM_LEASE_KEY)[0])
        except (NoSuchKey, ValueError):
            info = None
        if isinstance(info, dict) and float(info.get("expires", 0)) > time.time():
            out["running"] = True
            out["lease"] = {"owner": info.get("owner"), "until": _dt.datetime.fromtimestamp(
                float(info["expires"]), _dt.timezone.utc).isoformat()}
        with self._lock:
            repo = self._wiki_repo()
            if repo is not None:
                try:
                    line = repo.git.log("-n1", "--format=%H%x09%aI%x09%s")
                finally:
                    repo.close()
                if line.strip():
                    c, d, m = line.split("\t", 2)
                    out["last_commit"] = {"commit": c, "date": d, "message": m}
        return out

    def dream(self, dry_run: bool = False, synth: str | None = None, embed: bool = True,
              reindex: bool = True, wait: float = 0.0) -> Any:
        """One run of the wiki maintainer over this memory's bucket, as ``brainfs dream``
        does (a mount sees its commit at its next relist); returns the run's report
        (``.result.changes``, ``.commit``). Another run holding the lease: UsageError."""
        from brainfs.dream.llm import synthesizer_from_config
        from brainfs.dream.sync import LeaseHeld, run_s3

        if next(iter(self.store.list()), None) is None:
            raise UsageError(f"{self.url} holds no files: nothing to dream about")
        try:
            synthesizer = synthesizer_from_config(self.cfg, synth)
        except ConfigError as e:
            raise UsageError(str(e)) from None
        embedder = None
        if embed:
            from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

            try:
                embedder = load_embedder(self.cfg.recall.embedder)
            except EmbedderUnavailable:
                embedder = None  # lexical verification, keyword index: as the CLI does
        workdir = self.cfg.cache_dir_for(self.url.bucket, self.url.prefix) / "dream"
        with self._lock:
            try:
                return run_s3(self.store, workdir, dry_run=dry_run, wait=wait, embedder=embedder,
                              reindex=reindex, index_embedder=embedder, synthesizer=synthesizer)
            except LeaseHeld as e:
                raise UsageError(str(e)) from None
