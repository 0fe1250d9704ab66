"""The prefixes beside a corpus's in its bucket: the "did you mean" of an empty or
mistyped prefix, for the command line and the mount's daemon alike."""

from __future__ import annotations

import difflib

from .config import Config
from .errors import BackendError
from .keys import INTERNAL_PREFIX, CorpusURL
from .store import ObjectStore


def neighbours(url: CorpusURL, cfg: Config) -> list[str]:
    """The prefixes beside ``url``'s in its bucket (for a "did you mean" hint)."""
    parent = url.prefix.rsplit("/", 1)[0] if "/" in url.prefix else ""
    try:
        st = ObjectStore(CorpusURL.parse(f"s3://{url.bucket}/{parent}"), cfg)
        try:
            dirs, _ = st.list_dir("")
        finally:
            st.close()
    except BackendError:
        return []
    return [f"s3://{url.bucket}/{parent + '/' if parent else ''}{d}" for d in dirs if d != INTERNAL_PREFIX]


def empty_hint(url: CorpusURL, cfg: Config) -> str:
    """"; did you mean s3://b/notes?" (the closest neighbours), "; the bucket holds …", or
    "" when the bucket holds nothing else."""
    near = neighbours(url, cfg)
    if not near:
        return ""
    close = difflib.get_close_matches(str(url), near, n=3, cutoff=0.5)
    shown = close or near[:5]
    return f"; {'did you mean' if close else 'the bucket holds'} {', '.join(shown)}" + ("?" if close else "")
