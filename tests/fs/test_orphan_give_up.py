"""A file unlinked while open, whose content was only in the bucket, is fetched for its
descriptors and its delete waits for that GET; a GET that keeps failing (refused while
PUTs and deletes work) is given up after ORPHAN_MAX_TRIES, so the delete goes ahead
instead of waiting for ever (a review)."""

from __future__ import annotations

import errno
import os
import time

import pytest

from helpers import NO_RELIST, s3get

pytestmark = pytest.mark.mount


def test_a_delete_held_for_an_orphans_fetch_goes_ahead_when_the_get_keeps_failing(
        corpus, store, cfg, mounter, proxy) -> None:
    store.put("archive/a.md", b"only in the bucket\n" * 10)
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={**NO_RELIST, "BRAINFS_UPLOAD_RETRY_SECONDS": "0.1"})
    f = m.mountpoint / "archive/a.md"
    fd = os.open(f, os.O_RDONLY)  # no read: nothing of it is local
    try:
        proxy.force("error", count=1000, methods={"GET"}, key_pattern=r".*/archive/a\.md$")
        os.unlink(f)
        deadline = time.monotonic() + 30
        while s3get(store, "archive/a.md") is not None:  # before: held for ever
            assert time.monotonic() < deadline, "the delete waited for the orphan's GET"
            time.sleep(0.1)
        with pytest.raises(OSError) as e:
            os.pread(fd, 10, 0)
        assert e.value.errno == errno.EIO
    finally:
        proxy.clear_forced()
        os.close(fd)
