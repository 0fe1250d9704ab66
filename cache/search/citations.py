"""The sources a knowledge page cites: its ``[cite:N]`` markers resolved through the
frontmatter's ``sources:``."""

from __future__ import annotations

import logging
import re

from .chunker import cite_numbers, source_table, split_frontmatter

log = logging.getLogger(__name__)

_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.I)


def cited_refs(text: str | bytes) -> dict[int, str]:
    """``[cite:N]`` number → full source ref (``path#anchor``, connector sources included)
    from a page's frontmatter. Never raises."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        meta, _body, _bad = split_frontmatter(text.replace("\r\n", "\n"))
        return source_table(meta)
    except Exception:  # noqa: BLE001
        return {}


def cited_sources(text: str | bytes) -> list[str]:
    """Source paths a page cites: each ``[cite:N]`` (or ``[cite:1,2]``) in the body is
    resolved through the frontmatter ``sources`` (see :func:`cited_refs`); anchors are
    stripped and duplicates dropped, in order of first citation. Connector sources
    (``scheme://``) and unsafe paths are skipped. Never raises."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        meta, body, _bad = split_frontmatter(text.replace("\r\n", "\n"))
        table = source_table(meta)
        out: list[str] = []
        for n in cites_in(body):
            target = table.get(n)
            if not target or _SCHEME_RE.match(target):
                continue
            path = target.split("#", 1)[0].strip().lstrip("/")
            if not path or ".." in path.split("/"):
                continue
            if path not in out:
                out.append(path)
        return out
    except Exception:  # noqa: BLE001 - a helper for fetching: bad input yields nothing
        log.debug("cited_sources failed", exc_info=True)
        return []


def cites_in(text: str) -> list[int]:
    """The ``[cite:N]`` numbers in a passage, in order, without duplicates."""
    return cite_numbers(text)
