"""The cache budget holds for what a mount writes, not only for what reads fetch: once
uploaded, written files are clean and the least recently used of them leave the disk."""

from __future__ import annotations

import time

import pytest

from helpers import s3get

pytestmark = pytest.mark.mount


def test_written_files_are_evicted_past_the_budget_once_uploaded(corpus, store, mounter) -> None:
    budget = 300_000
    m = mounter(corpus, env_extra={"BRAINFS_CACHE_BUDGET_BYTES": str(budget)})
    (m.mountpoint / "logs").mkdir()
    data = {f"logs/part{i:02d}.txt": bytes([65 + i]) * 100_000 for i in range(12)}
    for path, body in data.items():
        (m.mountpoint / path).write_bytes(body)
    deadline = time.monotonic() + 60
    while True:
        st = m.status()
        if st["pending_uploads"] == 0 and st["local_bytes"] <= budget:
            break
        assert time.monotonic() < deadline, st  # before: 1.2 MB of 0.3 MB kept for ever
        time.sleep(0.1)
    # Nothing lost: every file is in the bucket and reads back whole through the mount.
    for path, body in data.items():
        assert s3get(store, path) == body
        assert (m.mountpoint / path).read_bytes() == body
