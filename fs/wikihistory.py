"""The wiki's git history in the mount: dream's bundle in the bucket cloned into the cache
(no checkout: the mount is the work tree its ``.git`` gitfile names), with every file the
history does not track ignored. Blocking: the daemon calls it in a worker thread, and
``Memory.history`` without a mount."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import WIKI_BUNDLE_KEY
from brainfs.backend.store import ObjectStore

log = logging.getLogger("brainfs.mount")


def fetch_wiki_history(store: ObjectStore, cache_dir: Path) -> str | None:
    """Clone the bucket's wiki bundle into the cache (blocking); returns the git dir.

    The clone has no checkout: the mount itself is the work tree (its ``.git`` gitfile
    points here), and the index is filled from HEAD so ``git diff`` compares against it.
    """
    import shutil

    import git  # GitPython, as dream reaches the wiki's history

    try:
        data, etag = store.get(WIKI_BUNDLE_KEY)
    except NoSuchKey:
        return None
    dest = cache_dir / "wiki-history"
    stamp = cache_dir / "wiki-history.etag"
    if dest.exists() and stamp.exists() and stamp.read_text() == etag:
        _ignore_untracked(dest / ".git")
        return str(dest / ".git")
    tmp = cache_dir / "wiki-history.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    bundle = tmp / "wiki.bundle"
    bundle.write_bytes(data)
    repo = git.Repo.clone_from(str(bundle), str(tmp / "repo"), no_checkout=True, quiet=True)
    try:
        repo.git.read_tree("HEAD")
    finally:
        repo.close()
    shutil.rmtree(dest, ignore_errors=True)
    _ignore_untracked(tmp / "repo" / ".git")
    os.replace(tmp / "repo", dest)
    shutil.rmtree(tmp, ignore_errors=True)
    stamp.write_text(etag)
    return str(dest / ".git")


def _ignore_untracked(gitdir: Path) -> None:
    """Every file the history does not track is ignored (``info/exclude``: ``*``).

    The mount's root is the history's work tree, so without this ``git status`` at the
    root lists every note and transcript as untracked, and ``git clean -fd`` or
    ``git stash -u`` run there would delete the memory the history does not hold (hand
    pages, notes, corrections). Ignored files are left alone by both (only ``-x`` takes
    them); what the wiki tracks is diffed, logged and restored as before."""
    exclude = gitdir / "info" / "exclude"
    want = "# brainfs: the memory is the work tree; git touches only what the wiki tracks\n*\n"
    try:
        if exclude.exists() and exclude.read_text() == want:
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(want)
    except OSError as e:
        log.warning("could not protect untracked memory files from git (%s): %s", exclude, e)
