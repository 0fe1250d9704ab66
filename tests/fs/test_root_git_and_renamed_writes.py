"""Two rules of issue 27, item 7: ``.git`` at the mount's root is the wiki's history, never
a file or directory of the user's; a rename of a file being written publishes what was
written so far under the new name (S3 has no rename), and the writer's close the rest.
See fs/SEMANTICS.md."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from brainfs.backend.store import ObjectStore
from helpers import s3get, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", {"notes/a.md": "card a\n"})
    upload_tree(store, src)
    return src


def test_git_at_the_root_is_refused_as_a_file_a_directory_and_a_link(seeded, corpus, mounter,
                                                                     store) -> None:
    # No wiki history in this bucket: `.git` at the root does not exist, and stays so.
    m = mounter(corpus)
    root = m.mountpoint
    with pytest.raises(OSError) as e:
        open(root / ".git", "w").close()  # a regular file was made before
    assert e.value.errno == errno.EINVAL
    for make in (lambda: os.mkdir(root / ".git"), lambda: os.symlink("notes", root / ".git"),
                 lambda: os.rename(root / "notes/a.md", root / ".git")):
        with pytest.raises(OSError) as e:
            make()
        assert e.value.errno == errno.EINVAL
    os.mkdir(root / "notes/.git")  # anywhere else it is a name like any other
    (root / "notes/.git/HEAD").write_bytes(b"ref: refs/heads/main\n")
    assert m.stop() == 0
    assert s3get(store, ".git") is None
    assert s3get(store, "notes/.git/HEAD") == b"ref: refs/heads/main\n"


def test_a_rename_publishes_an_open_write_as_far_as_it_got(seeded, corpus, mounter, store) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_COMMIT_IDLE_SECONDS": "60"})
    old, new = m.mountpoint / "notes/a.md", m.mountpoint / "notes/b.md"
    f = open(old, "r+b", buffering=0)
    f.write(b"first half ")
    os.rename(old, new)  # commits the write so far: the new name is uploaded from it
    wait_for(lambda: s3get(store, "notes/b.md") == b"first half ", what="the renamed file")
    wait_for(lambda: s3get(store, "notes/a.md") is None, what="the old name's delete")
    f.write(b"and the rest\n")  # the same descriptor writes on, to the file at its new name
    f.close()
    wait_for(lambda: s3get(store, "notes/b.md") == b"first half and the rest\n",
             what="the writer's close")
    assert new.read_bytes() == b"first half and the rest\n"
    assert not old.exists()
    assert m.stop() == 0
