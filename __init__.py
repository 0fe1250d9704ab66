"""brainfs: an AI agent's long-term memory, mounted as a filesystem (see README.md).

This file is the ``brainfs`` package itself: pyproject.toml maps the repository's root to
it, and its folders ``fs``, ``cache``, ``backend``, ``dream`` and ``tools`` are the subpackages. It
only names the Python API (``front/api.py``), imported on first use so that every other
import of the package (the CLI, the mount daemon) stays as fast as before::

    from brainfs import Memory

    with Memory("s3://memory/alice") as m:          # or Memory("/home/alice/memory")
        print(m.recall("where did I meet Ana", k=5).text())
"""

from __future__ import annotations

from typing import Any

__all__ = ["Memory", "Recall", "UsageError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from brainfs.front import api

        return getattr(api, name)
    raise AttributeError(f"module 'brainfs' has no attribute {name!r}")
