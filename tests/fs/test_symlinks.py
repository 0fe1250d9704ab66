"""Symbolic links through a real mount: kept as ``NAME.brainfs-link`` objects whose content
is the target, so they survive a remount, a fresh cache and another machine; and mknod(2),
which makes regular files only (fs/SEMANTICS.md).
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import time

import pytest

from brainfs.backend.keys import LINK_SUFFIX, path_problem
from brainfs.cache.local.workingset import other_form

from helpers import NO_RELIST, s3get, settle, wait_for

pytestmark = pytest.mark.mount


def test_link_suffix_names() -> None:
    assert other_form("a/b.md") == "a/b.md" + LINK_SUFFIX
    assert other_form("a/b.md" + LINK_SUFFIX) == "a/b.md"
    # The suffix counts against the 255 bytes of a name: a link's own name has 242.
    assert path_problem("d/" + "x" * 242 + LINK_SUFFIX) is None
    assert path_problem("d/" + "x" * 243 + LINK_SUFFIX) == "name longer than 255 bytes"


def test_symlink_is_a_link_everywhere_and_persists(corpus, store, mounter, cfg, tmp_path) -> None:
    store.put("notes/a.md", b"alpha\n")
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    os.symlink("a.md", mp / "notes/latest.md")
    os.symlink("notes", mp / "shortcut")
    st = os.lstat(mp / "notes/latest.md")
    assert stat.S_ISLNK(st.st_mode) and st.st_size == len("a.md")
    assert os.readlink(mp / "notes/latest.md") == "a.md"
    # The kernel follows it: reading the link reads the target.
    assert (mp / "notes/latest.md").read_bytes() == b"alpha\n"
    assert (mp / "shortcut/a.md").read_bytes() == b"alpha\n"
    assert sorted(os.listdir(mp / "notes")) == ["a.md", "latest.md"]
    assert "latest.md" + LINK_SUFFIX not in os.listdir(mp / "notes")
    # Its object is not a name of the tree.
    assert not os.path.lexists(mp / "notes" / ("latest.md" + LINK_SUFFIX))
    settle(mp)
    assert s3get(store, "notes/latest.md" + LINK_SUFFIX) == b"a.md"
    assert s3get(store, "notes/latest.md") is None
    assert m.stop() == 0
    # A fresh cache (another machine) sees the same link.
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    # Links are preloaded (a few bytes each): `ls` shows them before anything reads them.
    wait_for(lambda: "latest.md" in os.listdir(fresh.mountpoint / "notes"), what="the link listed")
    assert os.readlink(fresh.mountpoint / "notes/latest.md") == "a.md"
    assert (fresh.mountpoint / "shortcut/a.md").read_bytes() == b"alpha\n"
    # git sees a symlink as one (mode 120000), as on a local disk.
    repo = fresh.mountpoint / "notes"
    out = subprocess.run(["find", str(repo), "-type", "l"], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(repo / "latest.md")]


def test_link_name_rules(corpus, store, mounter) -> None:
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    (mp / "d").mkdir()
    (mp / "d/file.md").write_bytes(b"f\n")
    os.symlink("file.md", mp / "d/link")
    def create(p) -> None:
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY))

    for make in (lambda p: os.symlink("x", p), create, os.mkdir):
        with pytest.raises(FileExistsError):
            make(mp / "d/link")  # the name is taken, by a link
        with pytest.raises(FileExistsError):
            make(mp / "d/file.md")
    # Names of link objects are reserved.
    reserved = mp / "d" / ("n" + LINK_SUFFIX)
    for make in (lambda p: os.symlink("x", p), create, os.mkdir):
        with pytest.raises(OSError) as e:
            make(reserved)
        assert e.value.errno == errno.EINVAL
    with pytest.raises(OSError) as e:
        os.rename(mp / "d/file.md", reserved)
    assert e.value.errno == errno.EINVAL
    with pytest.raises(NotADirectoryError):
        os.rmdir(mp / "d/link")
    with pytest.raises(OSError) as e:
        os.readlink(mp / "d/file.md")
    assert e.value.errno == errno.EINVAL
    # A link's name has 255 bytes less the suffix's 13 (file-backed servers, the embedded
    # one included, refuse a longer object name).
    long = "y" * (255 - len(LINK_SUFFIX))
    os.symlink("file.md", mp / "d" / long)
    assert os.readlink(mp / "d" / long) == "file.md"
    with pytest.raises(OSError) as e:
        os.symlink("file.md", mp / "d" / (long + "y"))
    assert e.value.errno == errno.ENAMETOOLONG
    os.unlink(mp / "d/link")
    assert not os.path.lexists(mp / "d/link")
    assert (mp / "d/file.md").read_bytes() == b"f\n"  # unlinking a link leaves its target
    settle(mp)
    assert s3get(store, "d/link" + LINK_SUFFIX) is None
    assert s3get(store, "d/" + long + LINK_SUFFIX) == b"file.md"


def test_renames_between_links_and_files(corpus, store, mounter, cfg, tmp_path) -> None:
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    (mp / "d/sub").mkdir(parents=True)
    (mp / "d/sub/t.md").write_bytes(b"target\n")
    os.symlink("t.md", mp / "d/sub/l1")
    # A link renamed to a new name, then over a file: the file's name is the link's now.
    os.rename(mp / "d/sub/l1", mp / "d/sub/l2")
    (mp / "d/sub/plain.md").write_bytes(b"plain\n")
    os.rename(mp / "d/sub/l2", mp / "d/sub/plain.md")
    assert os.readlink(mp / "d/sub/plain.md") == "t.md"
    assert sorted(os.listdir(mp / "d/sub")) == ["plain.md", "t.md"]
    # A file renamed over a link: the link is gone, the file has the name.
    (mp / "d/sub/new.md").write_bytes(b"new\n")
    os.symlink("t.md", mp / "d/sub/ln")
    os.rename(mp / "d/sub/new.md", mp / "d/sub/ln")
    assert not os.path.islink(mp / "d/sub/ln")
    assert (mp / "d/sub/ln").read_bytes() == b"new\n"
    # A link onto a directory: EISDIR; a directory onto a link: ENOTDIR.
    (mp / "d/empty").mkdir()
    with pytest.raises(IsADirectoryError):
        os.rename(mp / "d/sub/plain.md", mp / "d/empty")
    with pytest.raises(NotADirectoryError):
        os.rename(mp / "d/empty", mp / "d/sub/plain.md")
    # A tree rename takes its links along.
    os.rename(mp / "d", mp / "moved")
    assert os.readlink(mp / "moved/sub/plain.md") == "t.md"
    assert (mp / "moved/sub/plain.md").read_bytes() == b"target\n"
    settle(mp)
    keys = {o.path for o in store.list()}
    assert {"moved/sub/plain.md" + LINK_SUFFIX, "moved/sub/t.md", "moved/sub/ln"} <= keys
    assert not any(k.startswith("d/") for k in keys)
    assert "moved/sub/ln" + LINK_SUFFIX not in keys and "moved/sub/plain.md" not in keys
    assert m.stop() == 0
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert os.readlink(fresh.mountpoint / "moved/sub/plain.md") == "t.md"
    assert (fresh.mountpoint / "moved/sub/ln").read_bytes() == b"new\n"


def test_a_link_killed_mid_rename_over_a_file_is_old_or_new(corpus, store, mounter) -> None:
    # The crash point falls after the catalog transaction that moves the link and removes
    # the file it replaces: the remount shows the new state, whole, and uploads it.
    store.put("d/doc.md", b"the document\n")
    m = mounter(corpus, env_extra={**NO_RELIST, "BRAINFS_CRASH_AT": "rename-after-catalog"})
    mp = m.mountpoint
    assert (mp / "d/doc.md").read_bytes() == b"the document\n"
    os.symlink("elsewhere.md", mp / "d/doc.lnk")
    with pytest.raises(OSError):
        os.rename(mp / "d/doc.lnk", mp / "d/doc.md")
    m.proc.wait(timeout=30)
    m.cleanup()
    m2 = mounter(corpus, name="mnt2", env_extra=NO_RELIST)
    assert os.readlink(m2.mountpoint / "d/doc.md") == "elsewhere.md"
    assert not os.path.lexists(m2.mountpoint / "d/doc.lnk")
    settle(m2.mountpoint)
    assert s3get(store, "d/doc.md" + LINK_SUFFIX) == b"elsewhere.md"
    assert s3get(store, "d/doc.md") is None
    assert s3get(store, "d/doc.lnk" + LINK_SUFFIX) is None


def test_lchown_of_a_link_is_kept(corpus, mounter) -> None:
    if os.getuid() != 0:
        pytest.skip("lchown to another user needs root")
    m = mounter(corpus, env_extra=NO_RELIST, args=["--allow-other"])
    mp = m.mountpoint
    os.symlink("nowhere", mp / "l")
    os.lchown(mp / "l", 1234, 5678)
    st = os.lstat(mp / "l")
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    assert stat.S_ISLNK(st.st_mode)


def test_mknod_makes_regular_files_only(corpus, store, mounter) -> None:
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    os.mknod(mp / "empty.md", 0o600 | stat.S_IFREG)
    st = os.stat(mp / "empty.md")
    assert stat.S_ISREG(st.st_mode) and st.st_size == 0 and stat.S_IMODE(st.st_mode) == 0o600
    with pytest.raises(FileExistsError):
        os.mknod(mp / "empty.md", 0o644 | stat.S_IFREG)
    for kind in (stat.S_IFIFO, stat.S_IFCHR, stat.S_IFSOCK):
        with pytest.raises(OSError) as e:
            os.mknod(mp / "special", 0o644 | kind, os.makedev(1, 3) if kind == stat.S_IFCHR else 0)
        assert e.value.errno == errno.ENOSYS
        assert not os.path.lexists(mp / "special")
    settle(mp)
    assert s3get(store, "empty.md") == b""


def test_import_keeps_links_and_the_api_lists_them(corpus, store, mounter, cfg, tmp_path) -> None:
    import sys

    from brainfs import Memory, UsageError

    src = tmp_path / "src"
    (src / "notes").mkdir(parents=True)
    (src / "notes/a.md").write_bytes(b"alpha\n")
    os.symlink("a.md", src / "notes/latest.md")
    os.symlink("/elsewhere/on/this/machine", src / "notes/outside")
    (src / "notes" / ("bad" + LINK_SUFFIX)).write_bytes(b"not a link\n")
    (src / "notes/.brainfs-dir").write_bytes(b"")
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "cli-cache"))
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(src), str(corpus)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "2 refused names" in r.stdout and "reserved for symbolic links" in r.stderr
    # The link itself is imported, not what it points to (a link to outside is kept as such).
    assert s3get(store, "notes/latest.md" + LINK_SUFFIX) == b"a.md"
    assert s3get(store, "notes/outside" + LINK_SUFFIX) == b"/elsewhere/on/this/machine"
    assert s3get(store, "notes/latest.md") is None
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(src), str(corpus)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert "0 uploaded, 3 unchanged" in r.stdout, r.stdout
    with Memory(str(corpus), cfg.override(embedder="none")) as mem:
        assert mem.list("notes") == ["notes/a.md", "notes/latest.md", "notes/outside"]
        with pytest.raises(UsageError, match="reserved"):
            mem.write("notes/x" + LINK_SUFFIX, "no")
    m = mounter(corpus, env_extra=NO_RELIST)
    assert os.readlink(m.mountpoint / "notes/latest.md") == "a.md"
    assert (m.mountpoint / "notes/latest.md").read_bytes() == b"alpha\n"


@pytest.mark.parametrize("kind", ["file over link", "link over file"])
def test_rename_across_kinds_keeps_the_name_in_the_bucket(kind, corpus, store, mounter, cfg, proxy) -> None:
    """While the new object's PUT is refused, the replaced form of the name stays in the
    bucket: another cache always finds the name (old or new), never neither."""
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={**NO_RELIST, "BRAINFS_UPLOAD_RETRY_SECONDS": "0.3"})
    mp = m.mountpoint
    (mp / "w").mkdir()
    if kind == "file over link":
        (mp / "w/F.md").write_bytes(b"the file\n")
        os.symlink("F.md", mp / "w/L")
        old_key, new_key, new_body = "w/L" + LINK_SUFFIX, "w/L", b"the file\n"
    else:
        os.symlink("somewhere", mp / "w/F.md")
        (mp / "w/L").write_bytes(b"the file\n")
        old_key, new_key, new_body = "w/L", "w/L" + LINK_SUFFIX, b"somewhere"
    settle(mp)
    proxy.force("slowdown", count=100_000, methods={"PUT"})
    os.rename(mp / "w/F.md", mp / "w/L")
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 3, what="refused PUTs")
    time.sleep(0.5)
    assert s3get(store, old_key) is not None, "the name's old form left the bucket before its new one"
    proxy.clear_forced()
    settle(mp)
    assert s3get(store, old_key) is None
    assert s3get(store, new_key) == new_body
    assert m.stop() == 0
