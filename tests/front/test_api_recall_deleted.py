"""Memory.recall over a bucket whose index predates a deletion: the deleted file's passages
are searched around, not cut out of the answer afterwards, so a wiki line that recall would
have left to a turn of the deleted transcript (cache/search/restated.py) is returned, and
the answer says the file was left out. Real S3 server on loopback, keyword index."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import upload_tree, write_tree
from tests.cache.search.test_recall_restated import FILES, PAGE_PATH

GONE = "sessions/s3/transcript.md"
QUESTION = "Who painted a lake at sunrise for the school fair?"


@pytest.mark.s3
def test_recall_searches_around_a_transcript_deleted_since_the_index(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from brainfs import Memory
    from brainfs.cache.search.localindex import build_index

    monkeypatch.setenv("BRAINFS_GLOBAL_GUIDE", str(tmp_path / "no-global-guide.md"))
    quiet = cfg.override(embedder="none")
    upload_tree(store, write_tree(tmp_path / "src", FILES))
    build_index(store, tmp_path / "build-index.sqlite", None)
    with Memory(str(corpus), quiet) as m:
        before = m.recall(QUESTION, k=5)
        # the precondition: with the transcript there, the page's line is left to its turn
        assert any(c.path == GONE for c in before.cards)
        assert not any("painted a lake" in c.text for c in before.cards if c.path == PAGE_PATH)
    store.delete(GONE)
    with Memory(str(corpus), quiet) as m:
        after = m.recall(QUESTION, k=5)
    assert not any(c.path == GONE for c in after.cards)
    assert any("painted a lake" in c.text for c in after.cards if c.path == PAGE_PATH), \
        [c.text for c in after.cards]
    assert "1 file deleted since the index was built left out" in after.result.why
