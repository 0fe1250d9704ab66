"""Unit tests of the mount's parts that need no FUSE session: the magic entries
(fs/magic.py), the inode table (fs/inodes.py) and the errno each refusal becomes
(fs/errors.py). The real mounts that exercise them end to end are in test_mount.py and
test_recall_mount.py."""

from __future__ import annotations

import errno
import json
import os
import stat

import pyfuse3
import pytest
import trio
from brainfs.cache.local.workingset import NotFound
from brainfs.fs.errors import fuse_errors
from brainfs.fs.inodes import InodeTable
from brainfs.fs.magic import (
    CONTROL_INO,
    GITFILE_INO,
    RECALL_INO,
    RECENT_QUERIES,
    STATUS_INO,
    MagicFiles,
)

pytestmark = pytest.mark.unit


class _Recall:
    """A recall function that answers with the question and counts its runs."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, q: str) -> bytes:
        self.asked.append(q)
        return f"answer to {q}\n".encode()


@fuse_errors
async def _handler(call):
    """What a FUSE handler does with the magic files' errors: the wrapper gives the errno."""
    result = call()
    if hasattr(result, "__await__"):
        result = await result
    return result


def _errno_of(call) -> int:
    with pytest.raises(pyfuse3.FUSEError) as e:
        trio.run(_handler, call)
    return e.value.errno


def test_magic_folders_answer_lookup_and_other_names_are_corpus_paths() -> None:
    m = MagicFiles(_Recall(), lambda: {}, no_open=False)

    async def main() -> None:
        a = await m.lookup(pyfuse3.ROOT_INODE, b".recall")
        assert a.st_ino == RECALL_INO and stat.S_ISDIR(a.st_mode) and a.entry_timeout == 0
        b = await m.lookup(pyfuse3.ROOT_INODE, b".brainfs")
        assert b.st_ino == CONTROL_INO and stat.S_ISDIR(b.st_mode)
        assert await m.lookup(pyfuse3.ROOT_INODE, b"notes") is None
        assert await m.lookup(5, b".recall") is None  # only at the root
        # .git is a corpus name while no wiki history is known ...
        m.gitdir_ready.set()
        assert await m.lookup(pyfuse3.ROOT_INODE, b".git") is None
        # ... and the gitfile once it is.
        m.gitdir = "/cache/wiki.git"
        g = await m.lookup(pyfuse3.ROOT_INODE, b".git")
        assert g.st_ino == GITFILE_INO and g.st_size == len(b"gitdir: /cache/wiki.git\n")
        assert m.read(GITFILE_INO, 0, 100) == b"gitdir: /cache/wiki.git\n"

    trio.run(main)
    assert m.owns(RECALL_INO) and m.owns(GITFILE_INO) and not m.owns(RECALL_INO - 1)


def test_no_open_recall_runs_at_lookup_once_and_is_listed() -> None:
    recall = _Recall()
    m = MagicFiles(recall, lambda: {"pending": 3}, no_open=True)

    async def main() -> None:
        a = await m.lookup(RECALL_INO, b"who is ana")
        again = await m.lookup(RECALL_INO, b"who is ana")  # within RECALL_REUSE_S
        assert again.st_ino == a.st_ino and a.st_ino >= RECALL_INO + 16
        assert recall.asked == ["who is ana"]
        assert a.st_size == len(b"answer to who is ana\n")
        assert m.read(a.st_ino, 0, 1000) == b"answer to who is ana\n"
        assert m.read(a.st_ino, 7, 2) == b"to"
        assert m.getattr(a.st_ino).st_size == a.st_size
        s = await m.lookup(CONTROL_INO, b"status")
        assert s.st_ino == STATUS_INO
        assert json.loads(m.read(STATUS_INO, 0, 1000)) == {"pending": 3}

    trio.run(main)
    assert m.entries(RECALL_INO) == [("who is ana", False)]
    assert m.entries(CONTROL_INO) == [("status", False)]


def test_recent_queries_are_bounded() -> None:
    recall = _Recall()
    m = MagicFiles(recall, None, no_open=True)

    async def main() -> list[int]:
        return [(await m.lookup(RECALL_INO, f"q{i}".encode())).st_ino
                for i in range(RECENT_QUERIES + 1)]

    inos = trio.run(main)
    names = [n for n, _ in m.entries(RECALL_INO)]
    assert len(names) == RECENT_QUERIES and names[0] == f"q{RECENT_QUERIES}" and "q0" not in names
    assert _errno_of(lambda: m.getattr(inos[0])) == errno.ENOENT
    assert _errno_of(lambda: m.read(inos[0], 0, 10)) == errno.ENOENT


def test_daemon_open_runs_the_query_each_time() -> None:
    recall = _Recall()
    m = MagicFiles(recall, None, no_open=False)

    async def main() -> None:
        a = await m.lookup(RECALL_INO, b"plans")
        assert a.st_size == 0 and recall.asked == []  # the size is unknown until open
        assert await m.open(a.st_ino, os.O_RDONLY) == b"answer to plans\n"
        assert await m.open(a.st_ino, os.O_RDONLY) == b"answer to plans\n"

    trio.run(main)
    assert recall.asked == ["plans", "plans"]


def test_magic_refusals_keep_their_errnos() -> None:
    m = MagicFiles(None, None, no_open=True)
    assert _errno_of(lambda: m.lookup(CONTROL_INO, b"other")) == errno.ENOENT
    assert _errno_of(lambda: m.lookup(RECALL_INO, b"  ")) == errno.ENOENT
    assert _errno_of(lambda: m.lookup(STATUS_INO, b"x")) == errno.ENOENT
    # No recall service configured: ENOSYS, as before the split.
    assert _errno_of(lambda: m.lookup(RECALL_INO, b"question")) == errno.ENOSYS
    assert _errno_of(lambda: m.open(RECALL_INO + 99, os.O_WRONLY)) == errno.EACCES
    assert _errno_of(lambda: m.open(RECALL_INO, os.O_RDONLY)) == errno.EISDIR
    assert _errno_of(lambda: m.open(RECALL_INO + 99, os.O_RDONLY)) == errno.ENOENT
    assert _errno_of(lambda: m.read(CONTROL_INO, 0, 10)) == errno.EISDIR
    assert _errno_of(lambda: m.read(GITFILE_INO, 0, 10)) == errno.ENOENT  # no history yet
    assert _errno_of(lambda: m.getattr(RECALL_INO + 99)) == errno.ENOENT
    assert _errno_of(lambda: m.entries(STATUS_INO)) == errno.ENOENT
    assert _errno_of(lambda: m.refuse_change(RECALL_INO)) == errno.EACCES


def test_inode_table_keeps_inodes_across_moves_and_frees_only_unlinked_content() -> None:
    t = InodeTable()
    d = t.ino("notes")
    f = t.ino("notes/a.md")
    assert t.ino("notes/a.md") == f and t.path(f) == "notes/a.md"
    assert t.child(pyfuse3.ROOT_INODE, b"notes") == "notes"
    assert t.child(d, b"b.md") == "notes/b.md"
    replaced = t.ino("old")  # renamed over: its inode stops resolving
    t.move("notes", "old")
    assert t.path(d) == "old" and t.path(f) == "old/a.md"
    assert t.ino_of.get("notes/a.md") is None and t.ino_of["old"] == d
    assert replaced not in t.path_of
    t.keep_unlinked("old/a.md", "/cache/tmp/kept-1")
    t.keep_unlinked("never/looked/up", "/cache/tmp/kept-2")  # no inode: nothing to keep
    t.drop("old/a.md")
    with pytest.raises(NotFound):
        t.path(f)
    assert t.forget([d, f, 12345]) == ["/cache/tmp/kept-1"]
    assert t.forget([f]) == []
    assert _errno_of(lambda: t.path(99999)) == errno.ENOENT
