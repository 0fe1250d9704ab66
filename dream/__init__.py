"""brainfs.dream — the background maintainer of the knowledge wiki.

``run_local(tree_dir, staged_dir)`` runs on a local memory tree; ``sync.run_s3`` on a corpus
in S3 (lease, git history in the bucket, conditional upload, re-index). See README.md here.
"""

from .core import RunResult, dream, run_local
from .corrections import correction_event

__all__ = ["RunResult", "correction_event", "dream", "run_local"]
