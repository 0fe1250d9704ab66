"""Context assembly through the Python API: :func:`assemble_context` (over any memory
source, as ``brainfs context`` calls it) and the ``context`` of
:class:`~brainfs.front.api.Memory` (through a mount or from the bucket, with its search
index)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from brainfs.backend.config import Config
from brainfs.front.apicore import MemoryCore
from brainfs.front.apirecall import local_index_path
from brainfs.front.usage import UsageError, default_reserve

if TYPE_CHECKING:
    from collections.abc import Callable

    from brainfs.cache.context.assembly import ContextWindow, MemorySource
    from brainfs.cache.search.index import SearchIndex

# Imports of the search stack and context assembly are made inside the functions that use
# them: `brainfs status` loads this module (with front/api.py) and starts without them
# (tests/front/test_cli_start.py).


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


class MemoryContext(MemoryCore):
    """:meth:`context` of a :class:`~brainfs.front.api.Memory`."""

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
