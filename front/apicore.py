"""What every part of :class:`brainfs.front.api.Memory` stands on: opening a memory (an
``s3://`` URL, or a mount found by its status), its S3 client, closing it, and the check
every corpus path gets (relative, a valid key, never the internal folders nor a file dream
rewrites whole). :func:`status_of` reads a mount's status without hanging on a hung one."""

from __future__ import annotations

import errno
import json
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from brainfs.backend.config import Config
from brainfs.backend.keys import INTERNAL_PREFIX, CorpusURL, path_problem, reserved_name
from brainfs.cache.layout import CARDS_DIR, INDEX_PATH, KNOWLEDGE, LEARNED_DIR, SESSIONS, SESSIONS_INDEX
from brainfs.fs.fusectl import brainfs_mount_above
from brainfs.front.usage import STATUS_TIMEOUT, NoAnswer, UsageError

if TYPE_CHECKING:
    from brainfs.backend.store import ObjectStore
    from brainfs.cache.search.localindex import LocalIndex

# boto3 is imported when the store is first used: `brainfs status` loads this module and
# starts without it (tests/front/test_cli_start.py).


#: Corpus folders no caller may write: the mount's internals, the magic folder, git.
PRIVATE_FOLDERS = (INTERNAL_PREFIX, ".recall", ".git")


def dream_owned(path: str) -> str | None:
    """What a file dream derives and rewrites whole is (a phrase for an error), or None for
    a file a person or an agent may write. Pages (``knowledge/<subject>.md``) are not
    among them: dream keeps their hand edits (dream/edits.py)."""
    parts = path.split("/")
    if path == INDEX_PATH:
        return "the wiki's index, which dream writes from the pages"
    if path.startswith(KNOWLEDGE + ".") or path.startswith(KNOWLEDGE) and parts[-1].startswith("."):
        return "a record dream keeps of the wiki"
    if path == SESSIONS_INDEX:
        return "the list of sessions, which dream and import-sessions write"
    if len(parts) == 3 and path.startswith(SESSIONS) and parts[2] == "summary.md":
        return "a session summary, which dream writes from the transcript"
    if path.startswith(CARDS_DIR):
        return "a correction card, which dream writes from corrections/"
    if path.startswith(LEARNED_DIR):
        return "a card dream learns from the sessions (a preference or a standing rule)"
    return None


def status_of(mp: Path, timeout: float = STATUS_TIMEOUT) -> dict[str, Any]:
    """A mount's status (``MP/.brainfs/status``), read in a helper thread so that a hung
    mount cannot hang the caller."""
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
        if getattr(e, "errno", None) == errno.ENOTCONN:
            raise UsageError(f"{mp}: its daemon has died and the mount is still attached "
                             f"(transport endpoint is not connected); `brainfs umount {mp}` "
                             "detaches it, then mount again (what was written is in the cache "
                             "and is uploaded then)")
        raise UsageError(f"{mp} is not a running brainfs mount "
                         f"({getattr(e, 'strerror', None) or 'no status'})")
    try:
        return json.loads(str(box["text"]))
    except ValueError:
        raise UsageError(f"{mp} is not a running brainfs mount (its status is not JSON)") from None


class MemoryCore:
    """Opening and closing one memory, and checking the paths given to it; the parts of
    :class:`~brainfs.front.api.Memory` build on it."""

    def __init__(self, where: str | os.PathLike[str], config: Config | str | os.PathLike[str] | None = None) -> None:
        self.cfg = config if isinstance(config, Config) else Config.load(Path(config) if config else None)
        self._lock = threading.RLock()
        self._store: ObjectStore | None = None
        self._local_index: LocalIndex | None = None
        self._listing: tuple[float, list[str]] | None = None  # (when, indexable paths)
        where_s = os.fspath(where)
        scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", where_s)
        if scheme and scheme.group(1).lower() != "s3":
            # Path() would make "http://foo" "http:/foo" and call it a missing mount
            raise UsageError(f"{where_s}: not a memory brainfs can open ({scheme.group(1)}:// is "
                             "no memory URL); give a mount path (a directory where `brainfs "
                             "mount` runs) or s3://BUCKET/PREFIX (another S3 service: set "
                             "AWS_ENDPOINT_URL)")
        if where_s.startswith("s3://"):
            self.mountpoint: Path | None = None
            self.url = CorpusURL.parse(where_s)
            self.store.check()
        else:
            mp = Path(where_s)
            # A folder inside a mount (`recall --mount memory/notes`) stands for its mount
            # (found in /proc/mounts: a stat there would hang on a hung mount).
            mp = brainfs_mount_above(mp) or mp
            st = status_of(mp)
            self.mountpoint = mp
            self.url = CorpusURL.parse(st["corpus"])
            # The mount's endpoint, unless the caller's config names one (a mount reached
            # through a proxy is still the same bucket).
            if self.cfg.s3.endpoint_url is None and st.get("endpoint", "aws") != "aws":
                self.cfg = self.cfg.override(endpoint_url=st["endpoint"])
            self._cache_dir = Path(st["cache_dir"]) if st.get("cache_dir") else None

    # ------------------------------------------------------------------ plumbing
    @property
    def store(self) -> ObjectStore:
        """The S3 client of this memory (made on first use)."""
        if self._store is None:
            from brainfs.backend.store import ObjectStore

            self._store = ObjectStore(self.url, self.cfg)
        return self._store

    def close(self) -> None:
        """Release the search index and the S3 client."""
        with self._lock:
            if self._local_index is not None:
                self._local_index.close()
                self._local_index = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({str(self.mountpoint or self.url)!r})"

    @staticmethod
    def check_path(path: str, writing: bool = False) -> str:
        """A corpus path as the caller gave it, checked: relative, no ``..``, a valid key;
        writes never reach the internal folders."""
        p = path.strip().strip("/")
        if not p:
            raise UsageError("empty path: give a corpus path such as notes/agent/today.md")
        if path.startswith("/") or any(part in ("", ".", "..") for part in p.split("/")):
            raise UsageError(f"{path!r}: give a path inside the memory, relative, without . or .. "
                             "(e.g. notes/agent/today.md)")
        problem = path_problem(p) or (reserved_name(p) if writing else None)
        if problem:
            raise UsageError(f"{path!r}: {problem}")
        if writing and p.split("/")[0] in PRIVATE_FOLDERS:
            raise UsageError(f"{path!r}: {p.split('/')[0]}/ belongs to brainfs; write elsewhere "
                             "(notes/, sessions/, knowledge/)")
        if writing:
            owned = dream_owned(p)
            if owned:
                raise UsageError(f"{p}: {owned}, rewritten from the memory on every dream run, "
                                 "so an edit here would be lost or leave it broken; to change "
                                 "what the memory says, record a correction (`brainfs correct "
                                 "\"...\"`, the correct tool), write a note (notes/..., the "
                                 "write_note tool) or edit the subject's page (knowledge/<subject>.md)")
        return p
