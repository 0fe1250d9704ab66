"""The Python API: ``from brainfs import Memory``.

One :class:`Memory` is one memory, reached either through a running mount (a directory:
reads and writes go through the mounted tree, recall asks the mount's ``.recall/``, which
also materializes the files behind the hits) or directly in the bucket (``s3://B/P``: the
search index is downloaded to the cache once and kept open, reads and writes are S3
requests). The command line (``brainfs recall/context/correct``) and the MCP server
(``brainfs mcp``) call these same methods, so all three give the same cards and reasons.

>>> m = Memory("s3://memory/alice")                      # or Memory("/home/alice/memory")
>>> print(m.recall("where did I meet Ana", k=5).text())
>>> m.append("notes/agent/today.md", "- booked the Kyoto hotel\\n")
>>> m.context("plan the Kyoto trip", budget=4000).to_prompt()

Every method raises :class:`UsageError` (one line naming the input and the fix) for bad
input, and the backend's typed errors (``brainfs.backend.errors``) for S3 failures.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import (DIR_MARKER, INTERNAL_PREFIX, CorpusURL, is_link, link_name,
                                  path_problem, reserved_name)
from brainfs.cache.layout import (CARDS_DIR, INDEX_PATH, KNOWLEDGE, LEARNED_DIR, SESSIONS, SESSIONS_INDEX,
                                  is_page)
from brainfs.fs.fusectl import brainfs_mount_above
# In a module of their own so that the command line starts without this one's imports.
from brainfs.front.usage import (RESERVE_MAX, RESERVE_SHARE, STATUS_TIMEOUT, NoAnswer,  # noqa: F401
                              UsageError, default_reserve)

if TYPE_CHECKING:
    from collections.abc import Callable

    from brainfs.backend.store import ObjectStore
    from brainfs.cache.context.assembly import ContextWindow, MemorySource
    from brainfs.cache.search.cards import RecallResult
    from brainfs.cache.search.index import SearchIndex
    from brainfs.cache.search.localindex import LocalIndex

#: How long a question asked of a mount's index copy waits for the mount's recall to take
#: the index (fetching its first parts, after a mount: seconds).
RECALL_START_TIMEOUT = 120.0

#: The longest ``.recall/`` file name: a name of the kernel's 255 bytes, ``.json`` included.
RECALL_NAME_BYTES = 255

__all__ = ["Memory", "Recall", "UsageError", "assemble_context", "default_reserve", "status_of"]


#: Corpus folders no caller may write: the mount's internals, the magic folder, git.
_PRIVATE = (INTERNAL_PREFIX, ".recall", ".git")


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


def is_wiki_page(path: str) -> bool:
    """Whether ``path`` is a page of the wiki (INDEX.md is not: dream owns it whole)."""
    return is_page(path)


def replaces_dream_page(path: str, text: str, current: str | None) -> str | None:
    """Why writing ``text`` over ``current`` at ``path`` would gut a page dream wrote (a
    phrase for an error), or None. Dream keeps a page's hand edits and takes a claim gone
    from it as deleted for good (dream/edits.py), so a replacement that is not an edited
    copy of the page would silently retire every claim it held. An edited copy keeps dream's
    frontmatter (its ``generator``) or at least one of its cited lines; "oops", or "---" over
    "oops", is neither."""
    if current is None or not is_wiki_page(path):
        return None
    from brainfs.cache.search.chunker import split_frontmatter

    meta = split_frontmatter(current)[0] or {}
    if not meta.get("generator"):
        return None  # a page a person wrote: theirs to replace
    cited = [ln.strip() for ln in current.splitlines() if "[cite:" in ln]
    new_meta = split_frontmatter(text)[0] if text.lstrip().startswith("---") else None
    if (isinstance(new_meta, dict) and new_meta.get("generator")) or any(
            ln in text for ln in cited):
        return None  # an edited copy: dream sees the lines taken out as deleted by hand
    claims = len(cited)
    return (f"a page dream writes, and this text would replace it whole: dream keeps a page's "
            f"hand edits, so its {claims} cited line{'s' if claims != 1 else ''} would be taken "
            "as deleted by hand and not written again")


#: How long a recall from the bucket reuses its listing to count files not yet indexed.
UNINDEXED_TTL_S = 30.0


def local_index_path(cache_dir: Path) -> Path:
    """Where a cache keeps its copy of the search index (``cache.search.localindex``)."""
    # Imported on first use, for start-up time: `brainfs status` or a write needs none of
    # the search stack (localindex and what it pulls in, boto3 among them).
    from brainfs.cache.search.localindex import local_index_path as path

    return path(cache_dir)


def git_error() -> type[Exception]:
    """GitPython's command error (imported when a history call needs it)."""
    from git import GitCommandError

    return GitCommandError


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


@dataclass
class Recall:
    """One recall's answer: the ranked cards, and through a mount the files it made local."""

    result: RecallResult
    materialized: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    corpus: str = ""
    #: Through a mount: the mount's whole JSON answer (timings of the fetch included).
    raw: dict[str, Any] | None = None

    @property
    def cards(self) -> list:
        """The passages, best first (``brainfs.cache.search.retrieval.Card``)."""
        return self.result.cards

    def text(self) -> str:
        """The extractive synthesis ``brainfs recall`` prints."""
        from brainfs.cache.search.cards import render_synthesis

        out = render_synthesis(self.result, self.materialized)
        if self.failed:
            out += "\n\nCould not fetch: " + ", ".join(sorted(self.failed)) + "\n"
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``brainfs recall --json`` prints: the cards, and through a mount also
        what it materialized and what it could not fetch."""
        return dict(self.raw) if self.raw is not None else self.result.to_dict()


def assemble_context(task: str, make_source: Callable[[SearchIndex | None], MemorySource],
                     index_path: Path | None, cfg: Config, budget: int = 8000,
                     reserve: int | None = None, k: int | None = None,
                     drop_stale: bool = False, as_of: str | None = None,
                     history: bool = False) -> ContextWindow:
    """Assemble a context window over the source ``make_source(index)`` builds, with the
    search index at ``index_path`` when it exists — a folder of index parts or one index
    file — (else the recall lanes stay empty and the window's ``why`` says "no search
    index"). ``as_of``/``history`` as :meth:`Memory.context`."""
    from brainfs.cache.context.assembly import assemble
    from brainfs.cache.search.shardsync import open_local

    if not task.strip():
        raise UsageError("empty task")
    as_of = _context_day(as_of, history)
    if budget <= 0:
        raise UsageError(f"budget must be a positive number of tokens (got {budget})")
    if reserve is None:
        reserve = default_reserve(budget)
    elif reserve < 0 or reserve >= budget:
        raise UsageError(f"reserve must be at least 0 and below the budget {budget} (got {reserve})")
    ix = open_local(index_path) if index_path is not None and index_path.exists() else None
    try:
        return assemble(task, make_source(ix), budget=budget, reserve=reserve,
                        stale_days=cfg.recall.stale_days, k=k, drop_stale=drop_stale,
                        as_of=as_of, history=history)
    except ValueError as e:
        raise UsageError(str(e)) from None
    finally:
        if ix is not None:
            ix.close()


def _context_day(as_of: str | None, history: bool) -> str | None:
    """``as_of`` as ``YYYY-MM-DD`` (None: now), with recall's errors for a day that is not
    one and for a day with ``history``."""
    from brainfs.cache.search.currency import check_day

    if as_of and history:
        raise UsageError("give as_of or history, not both")
    try:
        return check_day(as_of)
    except ValueError as e:
        raise UsageError(str(e)) from None


class Memory:
    """One memory: ``Memory("s3://BUCKET/PREFIX")`` or ``Memory(MOUNTPOINT)``.

    ``config``: a :class:`~brainfs.backend.config.Config`, a TOML file, or None for the
    usual lookup (``$BRAINFS_CONFIG``, ``~/.config/brainfs/config.toml``, environment).
    Use it as a context manager, or call :meth:`close`, to release the index and the
    S3 client. Methods are safe to call from several threads (one at a time inside).
    """

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

    def __enter__(self) -> Memory:
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
        if writing and p.split("/")[0] in _PRIVATE:
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

    # ------------------------------------------------------------------ recall
    def recall(self, query: str, k: int | None = None, as_of: str | None = None,
               history: bool = False) -> Recall:
        """Hybrid recall: the ``k`` best passages (default: ``recall_k``, 10). Through a
        mount the files behind the hits (and the transcripts wiki pages cite) are made
        local, so a following read or grep finds them.

        What is true now comes first: a passage stating a replaced value ranks below what
        replaced it and its card says ``superseded_by`` (value, date, source). ``as_of``
        (``YYYY-MM-DD``) answers with what was true on that day; ``history`` keeps every
        passage where it matches (still marked)."""
        from brainfs.cache.search.currency import check_day
        from brainfs.fs.recall import MAX_K

        if not query.strip():
            raise UsageError('empty query: give the question to recall, e.g. "where did I meet Ana"')
        if k is not None and not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K} (got {k})")
        if as_of and history:
            raise UsageError("give as_of or history, not both")
        try:
            as_of = check_day(as_of)
        except ValueError as e:
            raise UsageError(str(e)) from None
        with self._lock:
            if self.mountpoint is not None:
                return self._recall_through_mount(query, k, as_of, history)
            from brainfs.cache.search.localindex import LocalIndex, download_all

            if self._local_index is None:
                local = local_index_path(self.cfg.cache_dir_for(self.url.bucket, self.url.prefix))
                local.parent.mkdir(parents=True, exist_ok=True)
                # Straight to the bucket there is no background to fetch in: every part
                # is brought up to date first (a mount answers from the first parts).
                index = download_all(self.store, local)
                if index is None:
                    raise UsageError(f"{self.url} has no search index: run `brainfs index {self.url}`")
                self._local_index = LocalIndex(local, self.cfg, index=index)
            return Recall(self._search_in_bucket(query, k, as_of, history), corpus=str(self.url))

    #: searches one recall may make while it finds files deleted since the index was built
    _GONE_ROUNDS = 3

    def _search_in_bucket(self, query: str, k: int | None, as_of: str | None,
                          history: bool) -> RecallResult:
        """The bucket's index may predate the objects (the next `brainfs index` or dream
        brings it current): a file cited whose object is gone is searched again without
        (so the list is filled up to k, and a wiki line left to a turn of a deleted
        transcript comes back), and a passage whose object changed since it was indexed is
        marked stale. One HEAD per file cited."""
        from brainfs.fs.recall import CHANGED_SINCE_INDEXED

        assert self._local_index is not None
        gone: set[str] = set()
        for _ in range(self._GONE_ROUNDS):
            result = self._local_index.search(query, k, as_of, history, exclude=gone)
            now = self._etags_now([c.path for c in result.cards])
            found = {p for p, e in now.items() if e is None}
            if not found:
                break
            gone |= found
        # Still gone after the last round (a bucket emptied under us): left out all the same.
        result.cards = [c for c in result.cards if c.path not in gone]
        if gone:
            result.why += (f"; {len(gone)} file{'s' if len(gone) > 1 else ''} deleted since "
                           f"the index was built left out (`brainfs index {self.url}`)")
        indexed = self._local_index.index.file_hashes()
        for c in result.cards:
            if indexed.get(c.path) not in (None, now.get(c.path)):
                c.stale = True
                c.reason += f"; {CHANGED_SINCE_INDEXED}"
        unindexed = self._unindexed(indexed)
        if unindexed:
            result.why += (f"; {unindexed} file{'s' if unindexed > 1 else ''} not yet indexed "
                           f"(written since the index was built): run `brainfs index {self.url}`")
        return result

    def _etags_now(self, paths: list[str]) -> dict[str, str | None]:
        """Each path's ETag in the bucket now (None: no such object), HEADs in parallel."""
        from concurrent.futures import ThreadPoolExecutor

        paths = list(dict.fromkeys(paths))
        if not paths:
            return {}

        def etag(path: str) -> str | None:
            try:
                return self.store.head(path).etag
            except NoSuchKey:
                return None

        with ThreadPoolExecutor(max_workers=min(8, len(paths))) as pool:
            return dict(zip(paths, pool.map(etag, paths)))

    def _unindexed(self, indexed: dict[str, Any]) -> int:
        """How many files recall would index are not in the index (one LIST, reused for
        ``UNINDEXED_TTL_S``: a recall loop must not list a large corpus each time)."""
        from brainfs.backend.keys import is_internal
        from brainfs.cache.search.localindex import is_indexable

        now = time.monotonic()
        if self._listing is None or now - self._listing[0] > UNINDEXED_TTL_S:
            self._listing = (now, [o.path for o in self.store.list()
                                   if not is_internal(o.path) and is_indexable(o.path)])
        return sum(1 for p in self._listing[1] if p not in indexed)

    def _recall_through_mount(self, query: str, k: int | None, as_of: str | None = None,
                              history: bool = False) -> Recall:
        from brainfs.cache.search.cards import Card, RecallResult
        from brainfs.fs.recall import with_options

        assert self.mountpoint is not None
        # A file name cannot hold "/": it travels as U+2215 and the daemon turns it back.
        name = with_options(query, k, as_of, history).replace("/", "\u2215")
        if len(name.encode()) + len(".json") > RECALL_NAME_BYTES:
            return self._recall_in_mount_index(query, k, as_of, history)
        status_of(self.mountpoint)  # "not a running brainfs mount" rather than a bare ENOENT
        target = self.mountpoint / ".recall" / (name + ".json")
        try:
            data = json.loads(target.read_text())
        except OSError as e:
            raise UsageError(f"recall through {self.mountpoint} failed: {e.strerror or e}") from None
        except ValueError:
            raise UsageError(f"recall through {self.mountpoint} failed: the mount's answer is not JSON") from None
        if "error" in data and "cards" not in data:
            raise UsageError(f"recall through {self.mountpoint}: {data['error']}")
        fields = set(Card.__dataclass_fields__)
        cards = [Card(**{f: v for f, v in c.items() if f in fields}) for c in data.get("cards", [])]
        result = RecallResult(query=data.get("query", query), mode=data.get("mode", ""), cards=cards,
                              timings=data.get("timings", {}), why=data.get("why", ""),
                              terms=data.get("terms", []), as_of=data.get("as_of"),
                              history=bool(data.get("history")))
        return Recall(result, data.get("materialized", []), data.get("failed", {}), str(self.url), data)

    def _recall_in_mount_index(self, query: str, k: int | None, as_of: str | None = None,
                               history: bool = False) -> Recall:
        """A question longer than a ``.recall/`` file name holds: searched here, in the
        index the mount keeps in its cache (the one its own recall searches and keeps in
        step with the bucket); the files behind the hits, and the transcripts wiki pages
        among them cite, are read through the mount, which materializes them, and a
        passage whose file the mount no longer has is left out."""
        from concurrent.futures import ThreadPoolExecutor

        from brainfs.cache.search.localindex import LocalIndex, files_for
        from brainfs.cache.search.shardsync import open_local

        assert self.mountpoint is not None
        mp = self.mountpoint
        st = status_of(mp)
        # Right after a mount its recall is still taking the index (as a .recall/ read
        # waits for it): so does this.
        deadline = time.monotonic() + RECALL_START_TIMEOUT
        while st.get("recall") == "starting":
            if time.monotonic() > deadline:
                raise NoAnswer(f"recall through {mp}: the mount's recall has not started "
                               f"after {RECALL_START_TIMEOUT:.0f} s")
            time.sleep(0.1)
            st = status_of(mp)
        if st.get("recall", "ready") != "ready":
            raise UsageError(f"recall through {mp}: {st['recall']}")
        cache_dir = Path(st["cache_dir"]) if st.get("cache_dir") else self._cache_dir
        if cache_dir is None:
            raise UsageError(f"the question is {len(query.encode())} bytes, more than a "
                             f".recall/ file name holds ({RECALL_NAME_BYTES} bytes with "
                             f"\".json\"), and {mp} names no cache to search in; ask the "
                             f"corpus: brainfs recall QUESTION {self.url}")
        if self._local_index is None:
            local = local_index_path(cache_dir)
            index = open_local(local) if local.exists() else None
            if index is None:
                raise UsageError(f"recall through {mp}: no search index yet: run "
                                 f"`brainfs index {self.url}`")
            self._local_index = LocalIndex(local, self.cfg, index=index)
        result = self._local_index.search(query, k, as_of, history)

        def read(path: str) -> bytes | None:
            try:
                return (mp / path).read_bytes()  # a path not local yet is fetched
            except OSError:
                return None

        with ThreadPoolExecutor(max_workers=8) as pool:
            hits = list(dict.fromkeys(c.path for c in result.cards))
            got = dict(zip(hits, pool.map(read, hits)))
            gone = {p for p, data in got.items() if data is None and not (mp / p).exists()}
            if gone:
                result.cards = [c for c in result.cards if c.path not in gone]
                result.why += (f"; {len(gone)} file{'s' if len(gone) > 1 else ''} the mount no "
                               "longer has left out")
            cited = [p for p in files_for(result, lambda p: got.get(p)) if p not in got]
            got.update(zip(cited, pool.map(read, cited)))
        failed = {p: "could not read it through the mount" for p, data in got.items()
                  if data is None and p not in gone}
        materialized = [p for p, data in got.items() if data is not None]
        result.why += "; asked of the mount's index here (the question is longer than a file name)"
        raw = dict(result.to_dict(), materialized=materialized, failed=failed)
        return Recall(result, materialized, failed, str(self.url), raw)

    # ------------------------------------------------------------------ files
    def read(self, path: str) -> str:
        """A file's text (through a mount: fetched on the spot when not local yet)."""
        p = self.check_path(path)
        if self.mountpoint is not None:
            f = self.mountpoint / p
            try:
                return f.read_bytes().decode("utf-8", errors="replace")
            except IsADirectoryError:
                raise UsageError(f"{p} is a folder: list it instead") from None
            except FileNotFoundError:
                raise UsageError(f"{p}: no such file in {self.url}") from None
            except OSError as e:
                raise UsageError(f"{p}: {e.strerror or e}") from None
        try:
            data, _etag = self.store.get(p)
        except NoSuchKey:
            raise UsageError(f"{p}: no such file in {self.url}") from None
        return data.decode("utf-8", errors="replace")

    def list(self, folder: str = "") -> list[str]:
        """Every file of the corpus under ``folder`` (recursive, sorted), local or not: what
        ``brainfs ls`` prints (a mount's own ``ls`` shows only its working set)."""
        under = self.check_path(folder) if folder.strip().strip("/") else ""
        # Directory markers are not files; a symbolic link is listed by its own name.
        out = sorted(link_name(o.path) if is_link(o.path) else o.path
                     for o in self.store.list(under)
                     if o.path.split("/")[0] not in _PRIVATE
                     and o.path.rsplit("/", 1)[-1] != DIR_MARKER)
        if under:
            out = [p for p in out if p.startswith(under + "/")]
            if not out:
                raise UsageError(f"{under}: no such folder in {self.url}")
        return out

    def write(self, path: str, text: str) -> str:
        """Create or replace a file; returns its path. Through a mount the write is durable
        when this returns (close(2) commits); in the bucket it is one PUT."""
        p = self.check_path(path, writing=True)
        data = text.encode("utf-8")
        gutted = replaces_dream_page(p, text, self._current_page(p))
        if gutted:
            raise UsageError(f"{p}: {gutted}; to add to it, append a line (append); to change "
                             "what it says, record a correction (`brainfs correct \"...\"`, the "
                             "correct tool) or write the page back with its frontmatter and the "
                             "lines to keep")
        if self.mountpoint is not None:
            f = self.mountpoint / p
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)
            return p
        with self._lock:
            self.store.put(p, data)
        return p

    def append(self, path: str, text: str) -> str:
        """Add ``text`` at the end of a file (created when missing); returns its path.
        Through a mount O_APPEND is atomic; in the bucket the write is conditional on the
        version read (another writer in between: read again and retry, up to 5 times)."""
        p = self.check_path(path, writing=True)
        data = text.encode("utf-8")
        if self.mountpoint is not None:
            f = self.mountpoint / p
            f.parent.mkdir(parents=True, exist_ok=True)
            with open(f, "ab") as fh:
                fh.write(data)
            return p
        from brainfs.backend.errors import PreconditionFailed

        with self._lock:
            for _attempt in range(5):
                try:
                    # Read inside the section: where the server ignores conditions, the
                    # section's lock is what keeps another mount's write out in between.
                    with self.store.cas_section(p):
                        try:
                            old, etag = self.store.get(p)
                        except NoSuchKey:
                            old, etag = b"", None
                        if etag is None:
                            self.store.put(p, data, if_none_match=True)
                        else:
                            self.store.put(p, old + data, if_match=etag)
                    return p
                except PreconditionFailed:
                    continue
        raise UsageError(f"{p}: another writer kept changing it; nothing appended, try again")

    def note(self, text: str, topic: str = "agent", title: str | None = None,
             note_type: str = "fact") -> str:
        """A new memory card ``notes/<topic>/<date>-<slug>.md`` (frontmatter: type, created,
        updated, source); returns its path. Dream and the index read it like any card."""
        import frontmatter

        body = text.strip()
        if not body:
            raise UsageError("empty note")
        slug_src = title or body
        slug = "-".join(re.findall(r"[a-z0-9]+", slug_src.lower())[:8]) or "note"
        topic_p = self.check_path(topic, writing=True)
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        path = f"notes/{topic_p}/{now:%Y-%m-%d}-{slug}.md"
        meta: dict[str, Any] = {"type": note_type, "created": now.date().isoformat(),
                                "updated": now.date().isoformat(), "source": "brainfs api"}
        if title:
            meta["title"] = title
        content = frontmatter.dumps(frontmatter.Post(body, **meta), sort_keys=False) + "\n"
        n = 2
        while self._exists(path):
            path = f"notes/{topic_p}/{now:%Y-%m-%d}-{slug}-{n}.md"
            n += 1
        return self.write(path, content)

    def _current_page(self, p: str) -> str | None:
        """The text at ``p`` when it is a wiki page that exists (what a write would
        replace), else None; other paths cost no read."""
        if not is_wiki_page(p):
            return None
        try:
            if self.mountpoint is not None:
                return (self.mountpoint / p).read_bytes().decode("utf-8", errors="replace")
            return self.store.get(p)[0].decode("utf-8", errors="replace")
        except (OSError, NoSuchKey):
            return None

    def _exists(self, p: str) -> bool:
        if self.mountpoint is not None:
            return (self.mountpoint / p).exists()
        try:
            self.store.head(p)
            return True
        except NoSuchKey:
            return False

    # ------------------------------------------------------------------ context
    def context(self, task: str, budget: int = 8000, reserve: int | None = None,
                k: int | None = None, drop_stale: bool = False,
                index: str | os.PathLike[str] | None = None, as_of: str | None = None,
                history: bool = False) -> ContextWindow:
        """The context for one turn of ``task``: lanes under a token budget, every item
        with its reason (``.to_prompt()``, ``.to_markdown()``, ``.to_json()``, ``.to_html()``).

        ``as_of`` (``YYYY-MM-DD``): the window as the memory stood at the end of that day
        (recall as of it, freshness judged then, pages and cards as they stood, see
        ``cache/context/asof.py``); ``history``: replaced values keep their place, marked."""
        from brainfs.cache.context.assembly import MemorySource, StoreSource

        as_of = _context_day(as_of, history)

        spec = self.cfg.recall.embedder or "auto"
        index_path = Path(index) if index else None
        if index_path is not None and not index_path.exists():
            raise UsageError(f"{index_path}: no such index file or folder")
        if self.mountpoint is not None:
            if index_path is None and self._cache_dir is not None:
                index_path = local_index_path(self._cache_dir)
            make = lambda ix: MemorySource(self.mountpoint, ix, embedder=spec, name=str(self.url))  # noqa: E731
        else:
            from brainfs.cache.search.localindex import download_all

            if index_path is None:
                local = local_index_path(self.cfg.cache_dir_for(self.url.bucket, self.url.prefix))
                local.parent.mkdir(parents=True, exist_ok=True)
                index = download_all(self.store, local)
                index_path = local if index is not None else None
                if index is not None:
                    index.close()
            make = lambda ix: StoreSource(self.store, ix, embedder=spec)  # noqa: E731
        return assemble_context(task, make, index_path, self.cfg, budget, reserve, k, drop_stale,
                                as_of, history)

    # ------------------------------------------------------------------ corrections
    def correct(self, text: str, scope: str = "global") -> str:
        """Record a correction; the next dream run turns it into a card and updates the
        pages, the user's older card and GUIDE.md. Returns the event's path."""
        from brainfs.dream.core import correction_event

        if not text.strip():
            raise UsageError("empty correction")
        path, content = correction_event(text, scope=scope)
        if self.mountpoint is not None:
            return self.write(path, content)
        self.store.put(path, content.encode("utf-8"), if_none_match=True)
        return path

    def forget(self, phrase: str) -> str:
        """Ask to forget a phrase (``forget/<stamp>.md``): the index drops chunks holding it
        at its next build, dream removes it from the wiki and redacts the transcripts.
        Returns the request's path."""
        import hashlib

        import frontmatter

        from brainfs.cache.search.forget import FORGET_DIR, norm

        if not norm(phrase):
            raise UsageError("empty phrase: give the words to forget, e.g. \"Ana's phone number\"")
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        path = f"{FORGET_DIR}{now:%Y%m%dT%H%M%SZ}-{hashlib.md5(phrase.encode()).hexdigest()[:8]}.md"
        post = frontmatter.Post(" ".join(phrase.split()), created=now.isoformat().replace("+00:00", "Z"))
        content = frontmatter.dumps(post) + "\n"
        if self.mountpoint is not None:
            return self.write(path, content)
        self.store.put(path, content.encode("utf-8"), if_none_match=True)
        return path

    # ------------------------------------------------------------------ bulk work
    def import_sessions(self, src: str | os.PathLike[str], format: str = "auto",
                        speakers: dict[str, str] | None = None, date: str | None = None) -> Any:
        """Import sessions people already have (Claude Code logs, a ChatGPT or Claude.ai
        export, messages JSON, ``Speaker:`` text) as transcripts, as ``brainfs
        import-sessions`` does; ``speakers`` as its ``--speaker`` (``{"User": "Nadia"}``),
        ``date`` as its ``--date``. Returns the report (``.line(url)``, ``.notes()``: each
        new session's date and where it came from, a ``User`` kept as written; ``.paths``
        written, ``.warnings``). Idempotent. A bad file raises :class:`UsageError` before anything
        is written."""
        from brainfs.cache.sessions.conversation import ImportInputError
        from brainfs.cache.sessions.options import make_options
        from brainfs.cache.local.pack import build_pack
        from brainfs.cache.sessions.sessionfile import import_sessions

        try:
            options = make_options(self.cfg.sessions.import_speakers,
                                   [f"{k}={v}" for k, v in (speakers or {}).items()], date)
            rep = import_sessions(Path(src), self.store, format, None, self.cfg.s3.max_workers, options)
        except ImportInputError as e:
            raise UsageError(f"{e}; nothing imported") from None
        if rep.paths:
            build_pack(self.store, self.cfg)  # the newest transcripts are in the preload pack
        return rep

    # ------------------------------------------------------------------ the wiki's history
    def _wiki_repo(self) -> Any:
        """The wiki's git history (dream's ``.brainfs/wiki.bundle``) cloned into this
        memory's cache, refreshed when the bundle changed; None before the first dream."""
        import git

        from brainfs.fs.daemon import fetch_wiki_history

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
        from brainfs.backend.errors import NoSuchKey
        from brainfs.backend.keys import DREAM_LEASE_KEY

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
        from brainfs.backend.config import ConfigError
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
