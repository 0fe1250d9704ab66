"""brainfs.dream — the background maintainer of the knowledge wiki.

``run_local(tree_dir, staged_dir)`` runs on a local memory tree; ``sync.run_s3`` on a corpus
in S3 (lease, git history in the bucket, conditional upload, re-index). See README.md here.

The names below are imported on first use, as the root package does: importing one module
of dream (``brainfs.dream.text``, ``brainfs.dream.corrections``) does not load the whole run.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["RunResult", "correction_event", "dream", "run_local"]

#: Each name of ``__all__`` → the module of dream that holds it.
_HOME = {"RunResult": "results", "correction_event": "corrections", "dream": "core", "run_local": "core"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
