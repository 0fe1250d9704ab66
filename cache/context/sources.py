"""Where a context window reads the memory from: a directory (a plain tree or a running
mount, :class:`MemorySource`) or an object store (:class:`StoreSource`), with the search
index and the embedder recall uses, and the global guide's place."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainfs.backend.errors import BackendError
from brainfs.backend.keys import INTERNAL_PREFIX
from brainfs.cache.layout import GUIDE_PATH
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

from .claims import Claim, page_claims

if TYPE_CHECKING:
    from brainfs.cache.search.embedder import Embedder
    from brainfs.cache.search.index import SearchIndex

#: Characters read from the start of a note to find its frontmatter (pinned, supersedes).
HEAD_BYTES = 4096
ENV_GLOBAL_GUIDE = "BRAINFS_GLOBAL_GUIDE"
#: Top-level names that are not memory (brainfs's own objects, the mount's magic folder).
_HIDDEN = (INTERNAL_PREFIX, ".recall", ".git")


def global_guide_path() -> Path:
    """Where the global guide lives: ``$BRAINFS_GLOBAL_GUIDE`` or ``~/.config/brainfs/GUIDE.md``."""
    env = os.environ.get(ENV_GLOBAL_GUIDE)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".config" / "brainfs" / GUIDE_PATH


class MemorySource:
    """Read access to one memory tree plus, optionally, its search index.

    The base class reads a local directory — a plain tree or a running brainfs mount (files
    are just read; on a mount, reading a path that is not local yet materializes it).
    Subclasses override :meth:`read`, :meth:`list` and :meth:`stamp` for other stores.

    ``embedder``: ``"auto"`` loads the default model on first use (None if it cannot load,
    the reason kept in ``embedder_error``); None disables dense search; or an instance.
    """

    def __init__(self, root: Path | str | None, index: SearchIndex | None = None,
                 embedder: Embedder | str | None = "auto", name: str | None = None,
                 global_guide: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.index = index
        self._embedder = embedder
        self.embedder_error: str | None = None
        self.name = name or (self.root.resolve().name if self.root is not None else "memory")
        self.global_guide = Path(global_guide) if global_guide else global_guide_path()
        self._heads: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._texts: dict[str, tuple[Any, str | None]] = {}
        self._claims: dict[str, tuple[Any, dict[str, Claim]]] = {}
        self._root_s = str(self.root) if self.root is not None else ""

    # -- file access -------------------------------------------------------------------
    def read(self, path: str) -> str | None:
        """Text of a corpus path, or None when it does not exist / cannot be read."""
        assert self.root is not None
        try:
            return (self.root / path).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None

    def read_head(self, path: str, n: int = HEAD_BYTES) -> str | None:
        """The first ``n`` bytes of a path as text (enough for a card's frontmatter)."""
        assert self.root is not None
        try:
            with open(self.root / path, "rb") as f:
                return f.read(n).decode("utf-8", errors="replace")
        except OSError:
            return None

    def stamp(self, path: str) -> Any:
        """A cheap change stamp of a path (mtime + size), or None."""
        assert self.root is not None
        try:
            st = os.stat(os.path.join(self._root_s, path))
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def list(self, prefix: str) -> list[str]:
        """Every file under the corpus folder ``prefix`` (recursive, sorted); hidden and
        internal folders (``.brainfs``, ``.recall``, ``.git``) are left out."""
        assert self.root is not None
        base = self.root / prefix if prefix else self.root
        out: list[str] = []
        stack = [(base, prefix.strip("/"))]
        while stack:
            d, rel = stack.pop()
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                if e.name.startswith("."):  # .brainfs, .recall, .git, editor files
                    continue
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append((Path(e.path), r))
                    elif e.is_file(follow_symlinks=False):
                        out.append(r)
                except OSError:
                    continue
        return sorted(out)

    # -- derived -----------------------------------------------------------------------
    def read_cached(self, path: str) -> str | None:
        """:meth:`read`, remembered per change stamp (for files read every turn: guides,
        rules, indexes)."""
        stamp = self.stamp(path)
        hit = self._texts.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        text = self.read(path) if stamp is not None or self.root is None else None
        self._texts[path] = (stamp, text)
        return text

    def claims(self, path: str) -> dict[str, Claim]:
        """The claim lines of a wiki page (:func:`claims.page_claims`), cached per change
        stamp: a page is parsed once however many of its chunks recall returns."""
        stamp = self.stamp(path)
        hit = self._claims.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        out = page_claims(path, self.read_cached(path) or "")
        self._claims[path] = (stamp, out)
        return out

    def frontmatter(self, path: str) -> dict[str, Any]:
        """A file's frontmatter (``{}`` if none), cached per change stamp."""
        stamp = self.stamp(path)
        hit = self._heads.get(path)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
        head = self.read_head(path)
        meta: dict[str, Any] = {}
        if head is not None and head.startswith("---"):
            m, _body, bad = split_frontmatter(head)
            if bad or m is None:
                full = self.read(path) or ""
                m, _body, bad = split_frontmatter(full.replace("\r\n", "\n"))
            meta = m or {}
        self._heads[path] = (stamp, meta)
        return meta

    def embedder(self) -> Embedder | None:
        """The embedding model, or None (dense search off; the reason in ``embedder_error``)."""
        if isinstance(self._embedder, str):
            spec = None if self._embedder == "auto" else self._embedder
            try:
                self._embedder = load_embedder(spec)
            except EmbedderUnavailable as e:
                self.embedder_error = str(e)
                self._embedder = None
        return self._embedder  # type: ignore[return-value]


class StoreSource(MemorySource):
    """A memory source reading objects from an :class:`~brainfs.backend.store.ObjectStore`
    (``brainfs context s3://B/P``). Listing is one paginated LIST; heads are cached by
    ETag, so notes are fetched once per process."""

    def __init__(self, store: Any, index: SearchIndex | None = None,
                 embedder: Embedder | str | None = "auto", name: str | None = None,
                 global_guide: Path | str | None = None) -> None:
        super().__init__(None, index, embedder, name or str(store.url), global_guide)
        self.store = store
        self._listing: dict[str, str] | None = None

    def _all(self) -> dict[str, str]:
        if self._listing is None:
            self._listing = {o.path: o.etag for o in self.store.list()
                             if not o.path.startswith(_HIDDEN)}
        return self._listing

    def read(self, path: str) -> str | None:
        try:
            data, _etag = self.store.get(path)
        except BackendError:
            return None
        return data.decode("utf-8", errors="replace")

    def read_head(self, path: str, n: int = HEAD_BYTES) -> str | None:
        return self.read(path)

    def stamp(self, path: str) -> Any:
        return self._all().get(path)

    def list(self, prefix: str) -> list[str]:
        p = prefix.strip("/") + "/" if prefix else ""
        return sorted(k for k in self._all() if k.startswith(p))
