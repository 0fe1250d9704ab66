"""Recall through the Python API: :class:`Recall` (one answer) and the ``recall`` of
:class:`~brainfs.front.api.Memory` — through a mount's ``.recall/`` (or, for a question too
long for a file name, the mount's index copy, its files read through the mount), or in the
bucket's index downloaded to the cache, with files deleted or changed since the index was
built left out or marked."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import is_internal
from brainfs.front.apicore import MemoryCore, status_of
from brainfs.front.usage import NoAnswer, UsageError

if TYPE_CHECKING:
    from brainfs.cache.search.cards import RecallResult

# Imports of the search stack and of the mount's recall service (which loads it) are made
# inside the methods that use them: `brainfs status` loads this module (with front/api.py)
# and starts without them (tests/front/test_cli_start.py).


#: How long a question asked of a mount's index copy waits for the mount's recall to take
#: the index (fetching its first parts, after a mount: seconds).
RECALL_START_TIMEOUT = 120.0

#: The longest ``.recall/`` file name: a name of the kernel's 255 bytes, ``.json`` included.
RECALL_NAME_BYTES = 255


#: How long a recall from the bucket reuses its listing to count files not yet indexed.
UNINDEXED_TTL_S = 30.0


def local_index_path(cache_dir: Path) -> Path:
    """Where a cache keeps its copy of the search index (``cache.search.localindex``)."""
    # Imported on first use, for start-up time: `brainfs status` or a write needs none of
    # the search stack (localindex and what it pulls in, boto3 among them).
    from brainfs.cache.search.localindex import local_index_path as path

    return path(cache_dir)


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


class MemoryRecall(MemoryCore):
    """:meth:`recall` of a :class:`~brainfs.front.api.Memory`."""

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
