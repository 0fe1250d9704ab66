"""fs/process.py: the processes that use a directory (what `brainfs umount` refuses on)."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.fs.process import processes_using

pytestmark = pytest.mark.unit


def test_processes_using_finds_a_descriptor_a_working_directory_and_a_mapping(tmp_path: Path) -> None:
    used, other = tmp_path / "used", tmp_path / "other"
    used.mkdir(), other.mkdir()
    f = used / "m.bin"
    f.write_bytes(b"x" * 4096)
    assert [u for u in processes_using(str(used)) if u[0] == os.getpid()] == []
    # A mapping whose descriptor is closed: a lazy unmount would SIGBUS it.
    fd = os.open(f, os.O_RDONLY)
    mm = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
    os.close(fd)
    try:
        assert [(p, what) for p, _, what in processes_using(str(used)) if p == os.getpid()] == \
            [(os.getpid(), str(f))]
    finally:
        mm.close()
    # A child whose working directory is inside; another directory is not "used".
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=used,
                             stdin=subprocess.PIPE)
    try:
        pids = {p for p, _, _ in processes_using(str(used))}
        assert child.pid in pids
        assert child.pid not in {p for p, _, _ in processes_using(str(other))}
        assert child.pid not in {p for p, _, _ in processes_using(str(used), exclude={child.pid})}
    finally:
        child.stdin.close()
        child.wait()
