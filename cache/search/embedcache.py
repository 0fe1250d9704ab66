"""Vectors already computed, reused across index builds: keyed by the SHA-256 of the text
given to the model and the model's exact identity (``embedder.model_id``).

A transcript that grows by a few turns, a wiki page that dream rewrites with most of its
sections unchanged, or the index of a dream work directory rebuilt from scratch all give
the model texts it has embedded before; the build then embeds only the new ones.

One SQLite file per user, shared by every memory and process: ``$BRAINFS_EMBED_CACHE``, else
``$XDG_CACHE_HOME/brainfs/embeddings.sqlite`` (``~/.cache/…``); ``BRAINFS_EMBED_CACHE=off``
turns it off. Vectors are stored as the model returned them (float32 bytes) and a hit
returns them bit for bit (a fresh computation may differ in the last bits, with the texts a
text is batched with). A different ``model_id`` (other
weights, another backend or quantization, another truncation) never sees the rows of the
previous one; those are deleted once unused for ``STALE_DAYS``.

The cache only ever makes a build faster: any error reading or writing it is logged once
and the build carries on with the model alone.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

    from .embedder import Embedder

log = logging.getLogger(__name__)

ENV_PATH = "BRAINFS_EMBED_CACHE"
#: A model's rows are dropped when it has not been used for this long (a model upgrade).
STALE_DAYS = 30

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(
    model TEXT NOT NULL,
    sha BLOB NOT NULL,              -- sha256 of the UTF-8 text
    vec BLOB NOT NULL,              -- float32, the model's dimension
    PRIMARY KEY (model, sha)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS models(model TEXT PRIMARY KEY, dim INTEGER NOT NULL, used REAL NOT NULL);
"""


def default_path() -> Path | None:
    """The cache file from the environment (None when turned off)."""
    env = os.environ.get(ENV_PATH, "").strip()
    if env.lower() in ("off", "none", "0", "false"):
        return None
    if env:
        return Path(env)
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except (RuntimeError, KeyError):  # no home directory (a boot-time mount, a sandbox)
        return None
    return Path(base) / "brainfs" / "embeddings.sqlite"


def text_key(text: str) -> bytes:
    """The cache key of a text: SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingStore:
    """The SQLite file of cached vectors. Thread-safe (one connection behind a lock);
    several processes may share the file (WAL, busy timeout)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=10.0, check_same_thread=False,
                                     isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._touched: set[str] = set()

    def get_many(self, model: str, keys: list[bytes]) -> dict[bytes, bytes]:
        """The stored vectors (raw float32 bytes) of those ``keys`` that are present."""
        out: dict[bytes, bytes] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                marks = ",".join("?" * len(part))
                for sha, vec in self._conn.execute(
                        f"SELECT sha, vec FROM vectors WHERE model = ? AND sha IN ({marks})",
                        [model, *part]):
                    out[bytes(sha)] = bytes(vec)
        return out

    def put_many(self, model: str, dim: int, rows: list[tuple[bytes, bytes]]) -> None:
        """Store (key, float32 bytes) rows for ``model``; on its first write in this
        process, also note it as used and drop models unused for ``STALE_DAYS``."""
        if not rows:
            return
        now = time.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if model not in self._touched:
                    self._conn.execute("INSERT OR REPLACE INTO models(model, dim, used) VALUES (?,?,?)",
                                       (model, int(dim), now))
                    stale = [r[0] for r in self._conn.execute(
                        "SELECT model FROM models WHERE used < ? AND model != ?",
                        (now - STALE_DAYS * 86400, model))]
                    for m in stale:
                        self._conn.execute("DELETE FROM vectors WHERE model = ?", (m,))
                        self._conn.execute("DELETE FROM models WHERE model = ?", (m,))
                    self._touched.add(model)
                self._conn.executemany("INSERT OR REPLACE INTO vectors(model, sha, vec) VALUES (?,?,?)",
                                       [(model, k, v) for k, v in rows])
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def count(self, model: str | None = None) -> int:
        """Rows stored (for one model, or all)."""
        with self._lock:
            if model is None:
                return self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
            return self._conn.execute("SELECT count(*) FROM vectors WHERE model = ?",
                                      (model,)).fetchone()[0]

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


class CachedEmbedder:
    """An embedder that looks every text up in an :class:`EmbeddingStore` first and asks
    ``inner`` only for the texts it has not seen with the same ``model_id``.

    ``hits`` and ``misses`` count texts since construction."""

    def __init__(self, inner: Embedder, store: EmbeddingStore) -> None:
        model_id = getattr(inner, "model_id", None)
        if not model_id:
            raise ValueError("an embedder without model_id cannot be cached")
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.dim = inner.dim
        self.model_id: str = model_id
        self.hits = 0
        self.misses = 0
        self._broken = False

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-norm float32 rows for ``texts``, from the cache where possible."""
        import numpy as np

        if self._broken or not texts:
            return self.inner.embed(texts)
        keys = [text_key(t) for t in texts]
        try:
            found = self.store.get_many(self.model_id, list(dict.fromkeys(keys)))
        except sqlite3.Error as e:
            self._give_up(e)
            return self.inner.embed(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        todo: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            vec = found.get(k)
            if vec is not None and len(vec) == 4 * self.dim:
                out[i] = np.frombuffer(vec, dtype=np.float32)
            else:
                todo.setdefault(k, []).append(i)
        self.hits += len(texts) - sum(len(v) for v in todo.values())
        if todo:
            first = [rows[0] for rows in todo.values()]
            fresh = np.asarray(self.inner.embed([texts[i] for i in first]), dtype=np.float32)
            for (k, rows), vec in zip(todo.items(), fresh):
                out[rows] = vec
            self.misses += sum(len(v) for v in todo.values())
            try:
                self.store.put_many(self.model_id, self.dim,
                                    [(k, v.tobytes()) for k, v in zip(todo, fresh)])
            except sqlite3.Error as e:
                self._give_up(e)
        return out

    def _give_up(self, e: Exception) -> None:
        log.warning("embedding cache %s unusable (%s); embedding without it", self.store.path, e)
        self._broken = True


_stores: dict[str, EmbeddingStore] = {}
_stores_lock = threading.Lock()


def with_cache(embedder: Embedder, path: Path | None = None) -> Embedder:
    """``embedder`` behind the per-user vector cache (or ``path``); the embedder itself when
    the cache is off, unusable, or the embedder has no ``model_id`` (a test fake, a
    wrapper that does its own caching)."""
    if isinstance(embedder, CachedEmbedder) or not getattr(embedder, "model_id", None):
        return embedder
    path = path or default_path()
    if path is None:
        return embedder
    key = str(path)
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            try:
                store = _stores[key] = EmbeddingStore(path)
            except (OSError, sqlite3.Error) as e:
                log.warning("embedding cache %s cannot be opened (%s); embedding without it", path, e)
                return embedder
    return CachedEmbedder(embedder, store)
