"""The numbers the docs quote for the settings are the code's defaults (as mountpoint-s3's
``semantics_doc_test.rs`` holds its SEMANTICS to the code): a default changed without its
doc fails here, naming both."""

from __future__ import annotations

import re

import pytest

from brainfs.backend.config import Config
from brainfs.cache.search.chunker import CHUNK_CHARS
from brainfs.cache.search.retrieval import RecallParams
from helpers import REPO

ARCH = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _settings_paragraph() -> str:
    m = re.search(r"The settings behind them:(.*?)\n\n", ARCH, re.S)
    assert m, "docs/ARCHITECTURE.md lost its 'The settings behind them:' paragraph"
    return " ".join(m.group(1).split())


def _num(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    assert m, f"docs/ARCHITECTURE.md no longer says {pattern!r}"
    return float(m.group(1).replace(",", ""))


CFG = Config()
GiB, MiB = 1024**3, 1024**2


@pytest.mark.parametrize("pattern, value", [
    (r"request timeouts (\d+) s connect", CFG.connect_timeout),
    (r"and (\d+) s read", CFG.read_timeout),
    (r"read, (\d+) attempts", CFG.max_attempts),
    (r"(\d+) parallel requests", CFG.max_workers),
    (r"attribute timeouts (\d+) s", CFG.attr_timeout),
    (r"entry and attribute timeouts (\d+) s", CFG.entry_timeout),
    (r"for (\d+) µs after each answer", CFG.busy_poll_us),
    (r"cache budget (\d+) GiB", CFG.cache_budget_bytes / GiB),
    (r"preload (\d+) MiB", CFG.preload_budget_bytes / MiB),
    (r"relist every (\d+) s", CFG.relist_seconds),
    (r"RRF k = (\d+)", RecallParams().rrf_k),
    (r"chunks of at most ([\d,]+) characters", CHUNK_CHARS),
])
def test_the_settings_paragraph_quotes_the_defaults(pattern: str, value: float) -> None:
    assert _num(pattern, _settings_paragraph()) == value


def test_the_recall_walk_quotes_the_fusion_default() -> None:
    assert _num(r"reciprocal rank fusion with k = (\d+)", ARCH) == RecallParams().rrf_k
