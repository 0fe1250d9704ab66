"""A page dream wrote keeps what a person or an agent edits in it, and takes a claim gone
from it as deleted for good (dream/edits.py). So the Python API (and the MCP ``write`` tool,
which calls it) refuses a write that would replace such a page whole with text that is not
an edited copy of it ("oops"): that would retire every claim of the page without a word.
Appending, writing the page back with its frontmatter, and replacing a page a person wrote
stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.front.api import Memory, UsageError

from helpers import CLI_TREE, upload_tree, write_tree


@pytest.mark.s3
def test_replacing_a_dream_page_whole_is_refused_editing_it_is_not(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    with Memory(str(corpus), cfg.override(embedder="none")) as m:
        m.dream(embed=False, reindex=False)
        page = m.read("knowledge/kyoto.md")
        assert "[cite:" in page
        with pytest.raises(UsageError) as e:
            m.write("knowledge/kyoto.md", "oops")
        msg = str(e.value)
        assert msg.startswith("knowledge/kyoto.md: a page dream writes") and "cited line" in msg
        assert "append" in msg and "brainfs correct" in msg, msg
        assert m.read("knowledge/kyoto.md") == page  # nothing written
        # frontmatter of its own does not make a copy: neither dream's nor a cited line kept
        for text in ("---\n---\noops\n", "---\ntitle: Kyoto\n---\n# Kyoto\n\nA city.\n"):
            with pytest.raises(UsageError, match="a page dream writes"):
                m.write("knowledge/kyoto.md", text)
        assert m.read("knowledge/kyoto.md") == page
        # an edited copy (frontmatter kept) is a hand edit; so is an appended line
        m.write("knowledge/kyoto.md", page.rstrip("\n") + "\n- Kyoto has a famous bamboo grove.\n")
        m.append("knowledge/kyoto.md", "- Kyoto was the capital for a thousand years.\n")
        # a page a person wrote (no dream frontmatter) is theirs to replace
        m.write("knowledge/biscuit.md", "# Biscuit\n\nA beagle.\n")
        assert m.write("knowledge/biscuit.md", "# Biscuit\n\nA beagle who sits.\n") == "knowledge/biscuit.md"
        m.dream(embed=False, reindex=False)
        kept = m.read("knowledge/kyoto.md")
    assert "bamboo grove" in kept and "capital for a thousand years" in kept
    assert sum("[cite:" in ln for ln in kept.splitlines()) >= sum("[cite:" in ln for ln in page.splitlines())
