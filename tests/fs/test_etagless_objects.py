"""An object the server shows with an empty ETag (issue 27, item 6): the embedded server
answers so, HEAD with no ETag and GET with 500, for an object whose PUT was cut off. It is
no version yet, so it is never taken for another writer's: the upload waits and tries
again, and reads keep the local copy. The fault-injecting proxy gives the empty ETags."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from brainfs.backend.store import ObjectStore
from helpers import all_keys, raw_client, s3get, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

REL = "notes/a.md"


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", {REL: "card a\n", "GUIDE.md": "rules\n"})
    upload_tree(store, src)
    return src


def _conflicts(cfg, corpus) -> list[str]:
    return [k for k in all_keys(raw_client(cfg.endpoint_url or ""), corpus.bucket)
            if ".conflict-" in k]


def test_an_object_with_no_etag_is_tried_again_never_a_conflict(seeded, corpus, mounter, store,
                                                                cfg, proxy) -> None:
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={"BRAINFS_UPLOAD_RETRY_SECONDS": "0.5", "BRAINFS_RELIST_SECONDS": "600"})
    path = m.mountpoint / REL
    assert path.read_bytes() == b"card a\n"
    proxy.force("no_etag", count=10**6, methods={"HEAD"}, key_pattern=r"notes/a\.md$")
    proxy.force("error", count=10**6, methods={"GET"}, key_pattern=r"notes/a\.md$")
    ours = b"card a, rewritten while the bucket shows no ETag\n"
    path.write_bytes(ours)
    wait_for(lambda: proxy.stats["faults"]["no_etag"] >= 3 or _conflicts(cfg, corpus),
             what="three uploads tried")
    assert _conflicts(cfg, corpus) == []  # a conflict copy, "the bucket holds (none)", before
    assert s3get(store, REL) == b"card a\n"  # nothing overwritten meanwhile
    assert path.read_bytes() == ours  # the local copy serves
    with open(path, "r+b") as f:
        os.ftruncate(f.fileno(), 4)
    os.rename(path, m.mountpoint / "notes/b.md")
    os.rename(m.mountpoint / "notes/b.md", path)
    proxy.clear_forced()  # the server gives the object's ETag again
    wait_for(lambda: s3get(store, REL) == b"card", what="the upload once the ETag is back")
    assert _conflicts(cfg, corpus) == []
    assert m.stop() == 0
    assert "no ETag" in m.log.read_text()
