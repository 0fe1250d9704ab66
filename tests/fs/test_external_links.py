"""Symbolic links whose target leaves the mount (issue 27): anyone who can write the bucket
can plant ``NAME.brainfs-link``, and the kernel resolves its target on the host. By default
a mount lists such a link but never follows it (EPERM), and ``ln -s`` will not make one;
``--allow-external-links`` follows them (fs/links.py, fs/SEMANTICS.md).

Hostile links are put straight into the bucket with a plain boto3 client against the test
server; a sentinel file in a folder beside the mountpoint (outside it) must keep its bytes
through a read and a write aimed at it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from brainfs.backend.keys import LINK_SUFFIX
from brainfs.fs.links import stays_inside

from helpers import NO_RELIST, raw_client, s3get, settle

SENTINEL = b"the host's own file\n"


def test_which_targets_stay_inside() -> None:
    assert stays_inside("notes/latest.md", b"a.md")
    assert stays_inside("shortcut", b"notes")
    assert stays_inside("notes/l", b"../GUIDE.md")  # up to the root, no higher
    assert stays_inside("a/b/l", b"../../x/./y")
    assert stays_inside("a/b/l", b"./../c//d")
    assert not stays_inside("abs", b"/etc/hostname")
    assert not stays_inside("notes/l", b"/home/u/memory/notes/a.md")  # absolute, even if inside
    assert not stays_inside("l", b"../x")  # the mountpoint's parent
    assert not stays_inside("notes/deep/l", b"../../../outside/sentinel")
    # ``..`` after a name is taken from where that name led (``d/up -> ..`` is the root):
    # its text, normalised, would stay inside.
    assert not stays_inside("d/out", b"up/../x")
    assert not stays_inside("a/b/l", b"c/../../x")
    assert stays_inside("l", b"")  # the kernel refuses an empty target itself


def _plant(cfg, corpus, links: dict[str, bytes]) -> None:
    """Put link objects into the bucket behind brainfs's back (a plain S3 client)."""
    s3 = raw_client(cfg.endpoint_url)
    for name, target in links.items():
        s3.put_object(Bucket=corpus.bucket, Key=f"{corpus.prefix}/{name}{LINK_SUFFIX}", Body=target)


def _hostile(tmp_path: Path, mp: Path) -> tuple[Path, dict[str, bytes]]:
    """A sentinel outside the mount and links aimed at it: absolute, relative climbing out
    (``../../../outside/sentinel`` from ``notes/deep``), and through an inside link
    (``d/up -> ..`` is the root; ``d/out -> up/../outside/sentinel``)."""
    sentinel = tmp_path / "outside" / "sentinel"
    sentinel.parent.mkdir()
    sentinel.write_bytes(SENTINEL)
    rel = os.path.relpath(sentinel, mp / "notes" / "deep").encode()
    assert rel.startswith(b"../../../")
    links = {"abs": str(sentinel).encode(), "notes/deep/rel": rel,
             "d/up": b"..", "d/out": b"up/../outside/sentinel"}
    return sentinel, links


def _follow(p: Path) -> dict[str, object]:
    """What a read and a write through ``p`` did: bytes read or an errno each."""
    out: dict[str, object] = {}
    try:
        out["read"] = p.read_bytes()
    except OSError as e:
        out["read"] = e.errno
    try:
        with open(p, "wb") as f:
            f.write(b"overwritten through a planted link\n")
        out["write"] = "ok"
    except OSError as e:
        out["write"] = e.errno
    return out


@pytest.mark.mount
def test_planted_links_out_of_the_mount_are_not_followed(corpus, store, mounter, cfg, tmp_path) -> None:
    store.put("notes/a.md", b"alpha\n")
    store.put("d/x", b"inside x\n")
    mp = tmp_path / "mnt"
    sentinel, links = _hostile(tmp_path, mp)
    _plant(cfg, corpus, {**links, "notes/latest.md": b"a.md", "notes/deep/up2": b"../../notes/a.md"})
    m = mounter(corpus, mountpoint=mp, env_extra=NO_RELIST)
    for name in ("abs", "notes/deep/rel", "d/out"):
        p = mp / name
        # Listed as the link it is (ls, lstat, find -type l) ...
        assert stat.S_ISLNK(os.lstat(p).st_mode), name
        # ... but not followed: neither read nor written, the host's file untouched.
        assert _follow(p) == {"read": errno.EPERM, "write": errno.EPERM}, name
        with pytest.raises(PermissionError):
            os.readlink(p)
        assert sentinel.read_bytes() == SENTINEL, name
        with pytest.raises(PermissionError):
            os.stat(p)
    # Links that stay inside work as before, the one at the root's edge too.
    assert (mp / "notes/latest.md").read_bytes() == b"alpha\n"
    assert (mp / "notes/deep/up2").read_bytes() == b"alpha\n"
    assert os.readlink(mp / "d/up") == ".."
    assert (mp / "d/up/d/x").read_bytes() == b"inside x\n"
    # The refused ones can still be removed or renamed like any link.
    os.rename(mp / "abs", mp / "notes/abs-moved")
    os.unlink(mp / "notes/abs-moved")
    assert not os.path.lexists(mp / "notes/abs-moved")
    assert sentinel.read_bytes() == SENTINEL
    settle(mp)
    assert s3get(store, "abs" + LINK_SUFFIX) is None
    assert m.stop() == 0


@pytest.mark.mount
def test_a_link_moved_where_it_climbs_out_is_refused_from_then_on(corpus, store, mounter, tmp_path) -> None:
    mp = tmp_path / "mnt"
    sentinel = tmp_path / "t"  # what ../../t names from the mount's b/
    sentinel.write_bytes(SENTINEL)
    m = mounter(corpus, mountpoint=mp, env_extra=NO_RELIST)
    (mp / "a/b").mkdir(parents=True)
    (mp / "t").write_bytes(b"top\n")
    os.symlink("../../t", mp / "a/b/l")  # from a/b, two up is the root: inside
    assert (mp / "a/b/l").read_bytes() == b"top\n"
    os.rename(mp / "a/b", mp / "b")  # from b, two up is the mountpoint's parent
    assert os.path.islink(mp / "b/l")
    assert _follow(mp / "b/l") == {"read": errno.EPERM, "write": errno.EPERM}
    assert sentinel.read_bytes() == SENTINEL
    assert (mp / "t").read_bytes() == b"top\n"
    assert m.stop() == 0


@pytest.mark.mount
def test_ln_s_out_of_the_mount_is_eperm(corpus, store, mounter, tmp_path) -> None:
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    (mp / "notes").mkdir()
    for target in ("/etc/passwd", "../../x", "../notes/../../x"):
        with pytest.raises(PermissionError):
            os.symlink(target, mp / "notes/l")
        assert not os.path.lexists(mp / "notes/l")
    os.symlink("../GUIDE.md", mp / "notes/l")  # inside: made as before
    settle(mp)
    assert s3get(store, "notes/l" + LINK_SUFFIX) == b"../GUIDE.md"
    assert m.stop() == 0


@pytest.mark.mount
def test_allow_external_links_follows_them(corpus, store, mounter, cfg, tmp_path) -> None:
    mp = tmp_path / "mnt"
    sentinel, links = _hostile(tmp_path, mp)
    _plant(cfg, corpus, links)
    m = mounter(corpus, mountpoint=mp, env_extra=NO_RELIST, args=["--allow-external-links"])
    assert os.readlink(mp / "abs") == str(sentinel)
    for name in ("abs", "notes/deep/rel", "d/out"):
        assert (mp / name).read_bytes() == sentinel.read_bytes(), name
    (mp / "notes/deep/rel").write_bytes(b"written through the link\n")
    assert sentinel.read_bytes() == b"written through the link\n"
    os.symlink("/etc/hostname", mp / "made")
    assert os.readlink(mp / "made") == "/etc/hostname"
    settle(mp)
    assert s3get(store, "made" + LINK_SUFFIX) == b"/etc/hostname"
    assert m.stop() == 0
