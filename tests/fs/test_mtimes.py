"""Modification times set by the tools that copy files (cp -p, tar x, rsync -a set them
with utimensat before or after close) are kept by the mount, across a remount of the same
cache. S3 stores none: another machine sees the upload time (fs/SEMANTICS.md)."""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers import NO_RELIST

pytestmark = pytest.mark.mount

PAST = 1_577_836_800  # 2020-01-01T00:00:00Z


def test_times_set_while_writing_and_after_are_kept(corpus, store, mounter, tmp_path) -> None:
    src = tmp_path / "src.md"
    src.write_text("copied with its time\n")
    os.utime(src, (PAST, PAST))
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    (mp / "notes").mkdir()
    # cp -p: data, then futimens on the open descriptor, then close.
    subprocess.run(["cp", "-p", str(src), str(mp / "notes/cp.md")], check=True)
    # The same by hand, and a write after the utime, which moves the time on.
    fd = os.open(mp / "notes/later.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"a\n")
    os.utime(fd, (PAST, PAST))
    os.write(fd, b"b\n")
    os.close(fd)
    # touch -d on a closed file.
    (mp / "notes/touched.md").write_text("touched\n")
    os.utime(mp / "notes/touched.md", (PAST + 60, PAST + 60))
    for name, want in (("cp.md", PAST), ("touched.md", PAST + 60)):
        assert int(os.stat(mp / "notes" / name).st_mtime) == want, name  # before: the close's time
    # A rename keeps the time, as on a local disk (it gave the rename's).
    os.rename(mp / "notes/touched.md", mp / "notes/moved.md")
    (mp / "notes/touched.md").write_text("touched\n")
    os.utime(mp / "notes/touched.md", (PAST + 60, PAST + 60))
    assert int(os.stat(mp / "notes/moved.md").st_mtime) == PAST + 60
    assert os.stat(mp / "notes/later.md").st_mtime > PAST + 10**8
    m.stop()
    m2 = mounter(corpus, name="mnt2", env_extra=NO_RELIST)
    for name, want in (("cp.md", PAST), ("touched.md", PAST + 60)):
        assert int(os.stat(m2.mountpoint / "notes" / name).st_mtime) == want, name
    assert (m2.mountpoint / "notes/cp.md").read_text() == "copied with its time\n"
