"""The cards dream learns from the sessions (``notes/learned/``: a preference, a standing
rule) are files it rewrites whole on every run: the Python API (and the MCP ``write`` tool,
which calls it) refuses to write them and says how to correct the memory instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.front.api import Memory, UsageError

from helpers import CLI_TREE, upload_tree, write_tree


@pytest.mark.s3
def test_learned_cards_are_refused_with_the_way_to_correct(tmp_path: Path, cfg: Config,
                                                           corpus: CorpusURL, store: ObjectStore):
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    with Memory(str(corpus), cfg) as m:
        for write in (m.write, m.append):
            with pytest.raises(UsageError) as e:
                write("notes/learned/rule-always-cite-park-name.md", "oops")
            msg = str(e.value)
            assert "learns from the sessions" in msg and "brainfs correct" in msg, msg
        assert m.write("notes/agent/today.md", "- walked Biscuit\n") == "notes/agent/today.md"
    assert not [o.path for o in store.list() if o.path.startswith("notes/learned/")]
