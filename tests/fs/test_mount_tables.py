"""fs/fusectl.py reads the kernel's mount tables: a mountpoint with a space, a backslash
or a non-ASCII letter in its name is found by its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.fs.fusectl import brainfs_mount_above, in_proc_mounts, mountinfo
from brainfs.fs.procfds import mount_id
from helpers import mounted_tmpfs

pytestmark = pytest.mark.unit


def test_a_mountpoint_with_a_space_a_backslash_and_an_accent_is_found(tmp_path: Path) -> None:
    # Decoded as latin-1 before, "café" read as "cafÃ©": umount said "not mounted".
    with mounted_tmpfs(tmp_path / "ma café\\x", "1m") as d:
        assert in_proc_mounts(str(d))
        assert mount_id(str(d)) in {mnt for mnt, _, mp, _ in mountinfo() if mp == str(d)}
        assert mount_id(str(d)) is not None
    assert not in_proc_mounts(str(tmp_path / "ma café\\x"))
    assert brainfs_mount_above(tmp_path) is None
