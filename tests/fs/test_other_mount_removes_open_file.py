"""Another mount deletes or renames a file this mount is writing (issue 27, item 1): the
writer's bytes land at the path — the other mount's delete or rename loses to the later
write — and neither close(2) nor the quiet commit fails for it. Two real mounts of one
bucket on a real S3 server; see fs/SEMANTICS.md "Uploads and deletes never silently
clobber another writer"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from brainfs.backend.store import ObjectStore
from helpers import all_keys, raw_client, s3get, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

REL = "notes/d/ren.md"
MOVED = "notes/d/moved.md"
ORIGINAL = b"the card as both mounts first saw it\n"
OURS = b"A started writing and finished after B\n"


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", {REL: ORIGINAL, "notes/d/other.md": "stays\n"})
    upload_tree(store, src)
    return src


def _conflicts(cfg, corpus) -> list[str]:
    return sorted(k for k in all_keys(raw_client(cfg.endpoint_url or ""), corpus.bucket)
                  if ".conflict-" in k)


def _two(corpus, mounter, cfg, tmp_path, env: dict[str, str]):
    """A relists every 0.3 s and commits nothing behind the test's back (no idle commit for
    60 s); B never relists."""
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"),
                env_extra={"BRAINFS_RELIST_SECONDS": "0.3",
                           "BRAINFS_COMMIT_IDLE_SECONDS": "60", **env})
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"),
                env_extra={"BRAINFS_RELIST_SECONDS": "600"})
    a.wait_listed(), b.wait_listed()
    return a, b


def _b_removes_it(a, b, store: ObjectStore, how: str) -> None:
    """B deletes or renames REL, then writes a marker; once A's listing shows the marker, A
    has listed the bucket without REL (the marker landed after REL went)."""
    if how == "delete":
        os.unlink(b.mountpoint / REL)
    else:
        os.rename(b.mountpoint / REL, b.mountpoint / MOVED)
        wait_for(lambda: s3get(store, MOVED) == ORIGINAL, what="B's renamed file in the bucket")
    wait_for(lambda: s3get(store, REL) is None, what=f"B's {how} in the bucket")
    marker = "notes/d/b-was-here.md"
    (b.mountpoint / marker).write_bytes(b"after the removal\n")
    wait_for(lambda: s3get(store, marker) is not None, what="B's marker in the bucket")
    wait_for(lambda: os.path.exists(a.mountpoint / marker), what="A's relist after B's change")


@pytest.mark.parametrize("how", ["delete", "rename"])
@pytest.mark.parametrize("mode", ["no-open", "daemon-open"])
def test_a_write_open_across_another_mounts_removal_lands_at_the_path(
        seeded, corpus, mounter, store, cfg, tmp_path, how: str, mode: str) -> None:
    a, b = _two(corpus, mounter, cfg, tmp_path,
                {"BRAINFS_NO_OPEN": "0" if mode == "daemon-open" else "1"})
    f = open(a.mountpoint / REL, "r+b", buffering=0)  # the write begins now
    f.write(OURS[:18])
    _b_removes_it(a, b, store, how)
    f.write(OURS[18:])  # written after A's listing lost the name
    assert os.fstat(f.fileno()).st_size == len(OURS)
    f.close()  # EIO before: apply_commit's KeyError
    wait_for(lambda: s3get(store, REL) == OURS, what="A's write recreating the path")
    assert (a.mountpoint / REL).read_bytes() == OURS
    assert _conflicts(cfg, corpus) == []
    if how == "rename":
        assert s3get(store, MOVED) == ORIGINAL  # B's renamed file stays as B moved it
    assert a.stop() == 0 and b.stop() == 0
    assert "KeyError" not in a.log.read_text()


def test_a_close_right_after_another_mounts_delete_does_not_fail(
        seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    # Everything written before the relist saw the delete, nothing after: the close
    # commits (close returned EIO before, and the write was in no object).
    a, b = _two(corpus, mounter, cfg, tmp_path, {})
    f = open(a.mountpoint / REL, "r+b", buffering=0)
    f.write(OURS)
    _b_removes_it(a, b, store, "delete")
    f.close()
    wait_for(lambda: s3get(store, REL) == OURS, what="A's write recreating the path")
    assert _conflicts(cfg, corpus) == []


@pytest.mark.parametrize("how", ["delete", "rename"])
def test_a_quiet_write_open_across_another_mounts_removal_is_committed(
        seeded, corpus, mounter, store, cfg, tmp_path, how: str) -> None:
    # commit = "quiet": the write is committed once quiet or at unmount, never by the
    # close; the commit after the relist failed and the write was lost silently before.
    a, b = _two(corpus, mounter, cfg, tmp_path, {"BRAINFS_COMMIT": "quiet"})
    f = open(a.mountpoint / REL, "r+b", buffering=0)
    f.write(OURS)
    _b_removes_it(a, b, store, how)
    f.close()
    assert a.stop() == 0  # the unmount commits and uploads it (silently lost before)
    assert s3get(store, REL) == OURS
    assert _conflicts(cfg, corpus) == []
    if how == "rename":
        assert s3get(store, MOVED) == ORIGINAL
    log = a.log.read_text()
    assert "commit of" not in log, log[-2000:]
