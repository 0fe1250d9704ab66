"""An agent's day through the Python API (``brainfs.Memory``) and the command line, against
the test S3 server: files dream owns are refused with the way to correct the memory, the
same correction twice is one card, recall says what is not indexed yet, and the errors a
new user meets name what was typed and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.front.api import Memory, UsageError

from helpers import CLI_TREE, upload_tree, write_tree


def _corpus(store: ObjectStore, cfg: Config, tmp_path: Path) -> None:
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    build_index(store, tmp_path / "build-index.sqlite", None)


def test_memory_of_a_url_it_cannot_open_says_what_it_expects():
    with pytest.raises(UsageError) as e:
        Memory("http://foo")
    msg = str(e.value)
    assert msg.startswith("http://foo: ") and "s3://BUCKET/PREFIX" in msg and "mount path" in msg


@pytest.mark.s3
def test_files_dream_owns_are_refused_with_the_way_to_correct(tmp_path: Path, cfg: Config,
                                                              corpus: CorpusURL, store: ObjectStore):
    _corpus(store, cfg, tmp_path)
    with Memory(str(corpus), cfg) as m:
        for path in ("knowledge/INDEX.md", "sessions/s1/summary.md", "sessions/index.md",
                     "notes/corrections/2026-01-01-x.md", "knowledge/.facts.jsonl"):
            for write in (m.write, m.append):
                with pytest.raises(UsageError) as e:
                    write(path, "oops")
                assert "dream" in str(e.value) and "brainfs correct" in str(e.value), str(e.value)
        # a page is the user's to edit (dream keeps hand edits), a note too
        assert m.write("knowledge/biscuit.md", "# Biscuit\n\nA beagle.\n") == "knowledge/biscuit.md"
        assert m.write("notes/agent/today.md", "- walked Biscuit\n") == "notes/agent/today.md"
    assert not [o.path for o in store.list() if o.path.endswith(("INDEX.md", "summary.md"))]


@pytest.mark.s3
def test_same_correction_twice_is_one_card(tmp_path: Path, cfg: Config, corpus: CorpusURL,
                                           store: ObjectStore):
    _corpus(store, cfg, tmp_path)
    with Memory(str(corpus), cfg) as m:
        m.correct("Biscuit is a beagle, not a terrier.")
        m.correct("Biscuit is a beagle,  not a terrier")  # a retry: same words
        m.dream(embed=False, reindex=False)
        cards = [p for p in m.list("notes/corrections")]
        assert len(cards) == 1, cards
        assert "superseded_by" not in m.read(cards[0])
        m.correct("Biscuit is a beagle, not a terrier.")  # again after the run
        m.dream(embed=False, reindex=False)
        assert m.list("notes/corrections") == cards


@pytest.mark.s3
def test_recall_says_how_many_files_are_not_indexed_yet(tmp_path: Path, cfg: Config,
                                                        corpus: CorpusURL, store: ObjectStore,
                                                        monkeypatch):
    monkeypatch.setenv("BRAINFS_EMBEDDER", "none")
    _corpus(store, cfg, tmp_path)
    with Memory(str(corpus), cfg.override(embedder="none")) as m:
        assert "not yet indexed" not in m.recall("Biscuit").text()
        m.note("Biscuit learned to sit.", topic="pets")
        m.write("notes/pets/vet.md", "Biscuit's vet is Dr Okafor.\n")
    with Memory(str(corpus), cfg.override(embedder="none")) as m:
        text = m.recall("Biscuit").text()
    assert f"2 files not yet indexed (written since the index was built): run `brainfs index {corpus}`" in text


