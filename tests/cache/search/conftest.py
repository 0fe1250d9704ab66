"""Fixtures shared by the recall-stage tests of this folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainfs.cache.search.index import SearchIndex
from brainfs.tools.locomo import _content_hash, conversation_tree
from helpers import LOCOMO_MINI, BowEmbedder


@pytest.fixture()
def mini_index(tmp_path: Path) -> Iterator[SearchIndex]:
    """The first conversation of the LoCoMo mini fixture, indexed with a bag-of-words
    embedder (dim 64): small and deterministic, no model."""
    tree = conversation_tree(json.loads(LOCOMO_MINI.read_text())[0])
    ix = SearchIndex(tmp_path / "mini.db")
    ix.refresh([(p, _content_hash(t)) for p, t in tree.items()], lambda p: tree[p].encode(),
               BowEmbedder(dim=64, name="test-bow"))
    yield ix
    ix.close()
