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

# The parts of Memory, one module each (apicore: opening, paths; apirecall; apicontext;
# apifiles: reads, writes, corrections; apidream: the wiki's history and dream runs).
from brainfs.front.apicontext import MemoryContext, assemble_context
from brainfs.front.apicore import status_of
from brainfs.front.apidream import MemoryDream
from brainfs.front.apifiles import MemoryFiles
from brainfs.front.apirecall import MemoryRecall, Recall
# In a module of their own so that the command line starts without this one's imports.
from brainfs.front.usage import (RESERVE_MAX, RESERVE_SHARE, STATUS_TIMEOUT, NoAnswer,  # noqa: F401
                              UsageError, default_reserve)

__all__ = ["Memory", "Recall", "UsageError", "assemble_context", "default_reserve", "status_of"]


class Memory(MemoryRecall, MemoryFiles, MemoryContext, MemoryDream):
    """One memory: ``Memory("s3://BUCKET/PREFIX")`` or ``Memory(MOUNTPOINT)``.

    ``config``: a :class:`~brainfs.backend.config.Config`, a TOML file, or None for the
    usual lookup (``$BRAINFS_CONFIG``, ``~/.config/brainfs/config.toml``, environment).
    Use it as a context manager, or call :meth:`close`, to release the index and the
    S3 client. Methods are safe to call from several threads (one at a time inside).
    """
