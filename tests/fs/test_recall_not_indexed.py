"""A mount's recall says how many files the bucket holds that its index does not have yet
(another writer's, over the re-index cap), and the command to index them: a new file over
the cap is in no answer's cards, so only the answer's own words can say it is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.cache.search.localindex import build_index

from helpers import upload_tree, wait_for, write_tree

pytestmark = [pytest.mark.mount]

TREE = {"notes/backup.md": "The Hollowmere backup job runs at 02:15 UTC on the Kestrel host.\n",
        "notes/tea.md": "Afternoon tea is Darjeeling with the Marlowe biscuits.\n"}


def test_mount_recall_counts_files_not_yet_indexed(store: ObjectStore, corpus, mounter,
                                                    tmp_path: Path) -> None:
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build", None)
    m = mounter(corpus, env_extra={"BRAINFS_RELIST_SECONDS": "0.5", "BRAINFS_EMBEDDER": "none",
                                   "BRAINFS_RECALL_FOLLOW_MAX_BYTES": "1"})
    mp = m.mountpoint
    m.wait_listed()
    assert "not yet indexed" not in (mp / ".recall" / "Marlowe biscuits").read_text()
    store.put("notes/ferry.md", b"The Quillback ferry leaves the harbour at dawn.\n")
    store.put("notes/vet.md", b"Biscuit's vet is Dr Okafor.\n")
    wait_for(lambda: m.status()["index"].get("stale_files") == 2, what="the relist's news")
    text = (mp / ".recall" / "Quillback ferry harbour").read_text()
    assert f"2 files not yet indexed (changed in the bucket, over the mount's re-index cap): " \
           f"run `brainfs index {corpus}`" in text, text
    why = json.loads((mp / ".recall" / "Darjeeling tea.json").read_text())["why"]
    assert "2 files not yet indexed" in why
