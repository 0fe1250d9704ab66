"""The mount's recall service: ``cat memory/.recall/<question>``.

Runs after the mount is usable (never on the way to it): downloads the bucket's index, then
warms the embedding model in a worker thread. A query runs the hybrid search in a thread,
materializes the files behind the hits (and the transcripts cited by wiki pages among them)
in one parallel batch, tells the kernel, and returns the extractive synthesis. A name ending
in ``.json`` returns the cards as JSON instead (what ``brainfs recall --mount --json`` reads).
A question may end in `` [k=N]`` to ask for N passages instead of the mount's ``recall_k``
(``cat "memory/.recall/where did I meet Ana [k=25].json"``; ``brainfs recall -k`` uses it).
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import TYPE_CHECKING

import trio

from brainfs.cache.search.recaller import Recaller, download_index, files_for, is_indexable, local_index_path

if TYPE_CHECKING:
    from pathlib import Path

    from brainfs.backend.config import Config
    from brainfs.backend.keys import CorpusURL
    from brainfs.backend.store import ObjectStore

    from brainfs.cache.search.retrieval import RecallResult

    from .ops import Ops

log = logging.getLogger("brainfs.recall")

#: The passage count a question may carry at its end: ``… [k=25]``.
K_SUFFIX = re.compile(r"\s*\[k=(\d+)\]$")

#: The most passages one recall returns: past this a "recall" is a dump of the index, and
#: the answer (held in memory as a magic file) grows without bound.
MAX_K = 200


def split_k(question: str) -> tuple[str, int | None]:
    """``"where is Ana [k=25]"`` -> ``("where is Ana", 25)``; no suffix -> ``(question, None)``.
    Raises ValueError for a k outside 1..MAX_K."""
    m = K_SUFFIX.search(question)
    if m is None:
        return question, None
    k = int(m.group(1))
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K} (got {k})")
    return question[: m.start()], k


def with_k(question: str, k: int | None) -> str:
    """The magic file's question for ``k`` passages (the inverse of :func:`split_k`)."""
    return question if k is None else f"{question} [k={k}]"


class RecallService:
    """Owns the recaller of one mount; lives in the mount's nursery."""

    def __init__(self, store: ObjectStore, cfg: Config, cache_dir: Path, url: CorpusURL) -> None:
        self.store, self.cfg, self.cache_dir, self.url = store, cfg, cache_dir, url
        #: the mount's operations, once they exist (attach): recall materializes through them
        self.ops: Ops | None = None
        self.recaller: Recaller | None = None
        self.ready = trio.Event()
        self.problem: str | None = None
        self.limiter = trio.CapacityLimiter(1)  # one query at a time: the model is shared

    def attach(self, ops: Ops) -> None:
        """The mount's operations, which answer the magic folder and fetch files."""
        self.ops = ops

    async def run(self) -> None:
        """Fetch the index, then warm the model (background task)."""
        d = self
        local = local_index_path(d.cache_dir)
        try:
            found = await trio.to_thread.run_sync(download_index, d.store, local)
        except Exception as e:  # noqa: BLE001 - recall degrades, the mount keeps serving
            self.problem = f"could not fetch the search index: {e}"
            found = local.exists()
        if not found:
            self.problem = self.problem or f"no search index yet: run `brainfs index {d.url}`"
        else:
            self.recaller = Recaller(local, d.cfg)
            self.problem = None
        self.ready.set()
        if self.recaller is not None and d.cfg.recall_warmup:
            await trio.to_thread.run_sync(self.recaller.embedder, limiter=self.limiter)

    def embedder_if_loaded(self):
        """The model if recall already loaded it (dream then verifies with it), else None:
        a background dream must not be what pulls torch into a mount."""
        r = self.recaller
        return r.loaded_embedder if r is not None else None

    async def reload(self) -> None:
        """Take the bucket's index again (after a dream run refreshed it)."""
        d = self
        local = local_index_path(d.cache_dir)

        def swap() -> None:
            # Queries hold the same limiter, so none runs during the swap; the old
            # connection keeps reading the replaced file until it is closed.
            if download_index(d.store, local):
                old, self.recaller = self.recaller, Recaller(local, d.cfg)
                self.problem = None
                if old is not None:
                    old.close()

        await trio.to_thread.run_sync(swap, limiter=self.limiter)

    async def query(self, name: str) -> bytes:
        """Answer the magic file ``.recall/<name>``."""
        await self.ready.wait()
        as_json = name.endswith(".json")
        question = (name[: -len(".json")] if as_json else name).replace("\u2215", "/")
        try:
            question, k = split_k(question)
        except ValueError as e:
            return (json.dumps({"error": str(e)}) if as_json else f"# Recall refused\n\n{e}\n").encode()
        if self.recaller is None:
            msg = self.problem or "recall is unavailable"
            return (json.dumps({"error": msg}) if as_json else f"# Recall unavailable\n\n{msg}\n").encode()
        ops = self.ops
        assert ops is not None
        t0 = time.perf_counter()
        result = await trio.to_thread.run_sync(self.recaller.search, question, k, limiter=self.limiter)
        t1 = time.perf_counter()
        paths, errors = await self._materialize_cited(ops, result)
        t2 = time.perf_counter()
        timings = dict(result.timings, materialize_ms=round((t2 - t1) * 1000, 1),
                       total_ms=round((t2 - t0) * 1000, 1))
        log.info("recall %r: mode %s, %d cards, %d files, %s", question, result.mode,
                 len(result.cards), len(paths), timings)
        if as_json:
            out = result.to_dict()
            out["materialized"] = paths
            out["failed"] = {p: str(e) for p, e in errors.items()}
            out["timings"] = timings
            return (json.dumps(out, indent=2) + "\n").encode()
        from brainfs.cache.search.retrieval import render_synthesis

        text = render_synthesis(result, paths)
        if errors:
            text += "\n\nCould not fetch: " + ", ".join(sorted(errors)) + "\n"
        return text.encode()

    @staticmethod
    async def _materialize_cited(ops: Ops, result: RecallResult) -> tuple[list[str], dict[str, Exception]]:
        """Fetch the files a recall answer cites and tell the kernel of them; returns the
        paths now local and the fetch errors by path."""

        def read_local(path: str) -> bytes | None:
            row = ops.ws.get(path)
            if row is None or not row.is_local:
                return None
            try:
                return ops.ws.blobs.location(path).read_bytes()
            except OSError:
                return None

        wanted = [p for p in files_for(result, lambda p: None, False) if ops.ws.has_file(p)]
        errors = await ops.materialize(wanted)
        cited = [p for p in files_for(result, read_local) if p not in wanted and ops.ws.has_file(p)]
        if cited:
            errors.update(await ops.materialize(cited))
        paths = [p for p in wanted + cited if p not in errors]
        ops.invalidate(paths)
        return paths, errors

    async def indexed_upload(self, path: str, etag: str) -> None:
        """Index a file the mount just uploaded."""
        await self.ready.wait()
        if self.recaller is None or self.ops is None:
            return
        if not is_indexable(path):
            return  # decided before reading: a directory marker has no content, a binary file is big
        ws = self.ops.ws
        try:
            data = await trio.to_thread.run_sync(ws.blobs.location(path).read_bytes)
            await trio.to_thread.run_sync(self.recaller.upsert, path, etag, data, limiter=self.limiter)
        except Exception as e:  # noqa: BLE001 - indexing must never break uploads
            log.warning("could not index %s: %s", path, e)

    def close(self) -> None:
        """Close the index."""
        if self.recaller is not None:
            self.recaller.close()
