"""The preload pack at mount: the mount is usable once the pack is downloaded; its files
are listed at once, read from the pack until written to disk, and written to disk while the
mount serves (``preload_unpack_background``, the default)."""

from __future__ import annotations

import errno
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.s3proxy import FaultPlan
from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import build_pack

from helpers import settle, wait_for

pytestmark = pytest.mark.s3

#: Enough pages that writing them to disk outlasts the mount's return by a good margin.
PAGES = 1500


def _page(i: int) -> bytes:
    return f"---\ntitle: page {i}\n---\n\nfact number {i} about the atlas\n".encode()


def _seed(store: ObjectStore, cfg: Config) -> dict[str, bytes]:
    """Pages, a guide and a transcript in the bucket, the pack built; then one page
    rewritten, so the pack holds a stale copy of it."""
    files = {f"knowledge/p{i:04d}.md": _page(i) for i in range(PAGES)}
    files["GUIDE.md"] = b"the guide\n"
    files["sessions/2026-01-02-a/transcript.md"] = b"[D1:1] Mara: hello\n"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: store.put(kv[0], kv[1]), files.items()))
    build_pack(store, cfg)
    files["knowledge/p0007.md"] = b"rewritten after the pack was built\n"
    store.put("knowledge/p0007.md", files["knowledge/p0007.md"])
    return files


def test_the_pack_is_listed_and_read_at_once_and_survives_a_dead_bucket(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, proxy) -> None:
    files = _seed(store, cfg)
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=3.0, max_attempts=1))
    mp = m.mountpoint
    startup = m.status()["startup"]
    # Everything but the stale page came from the pack, and is written to disk after the
    # mount answered; the stale page was fetched by itself before.
    assert startup["preload_from_pack"] == len(files) - 1
    assert startup["preload_unpacking"] == len(files) - 1
    # Listed at once, whether written to disk yet or not.
    assert sorted(os.listdir(mp / "knowledge")) == sorted(
        p.removeprefix("knowledge/") for p in files if p.startswith("knowledge/"))
    assert (mp / "knowledge/p0007.md").read_bytes() == files["knowledge/p0007.md"]
    # The bucket stops answering reads: every preloaded file still reads whole, from the
    # pack or from disk.
    proxy.set_faults(FaultPlan(error_rate=1.0, methods=frozenset({"GET"})))
    for path, data in files.items():
        assert (mp / path).read_bytes() == data, path
    wait_for(lambda: m.status()["unpacking_files"] == 0, what="the pack unpacked")
    st = m.status()
    assert st["local_files"] == len(files)
    assert st["startup"]["preload_errors"] == 0
    proxy.set_faults(None)
    assert m.stop() == 0


def test_writes_before_the_pack_is_unpacked_win(corpus: CorpusURL, store: ObjectStore,
                                                cfg: Config, mounter) -> None:
    """Appending to, removing and renaming packed files right after the mount: the writes
    stand once the rest is unpacked, and reach the bucket."""
    files = _seed(store, cfg)
    m = mounter(corpus)
    mp = m.mountpoint
    names = [f"knowledge/p{i:04d}.md" for i in range(PAGES - 1, PAGES - 31, -1)]
    appended, removed, renamed = names[:10], names[10:20], names[20:30]
    for p in appended:
        with open(mp / p, "ab") as f:
            f.write(b"one more line\n")
    for p in removed:
        os.unlink(mp / p)
    for p in renamed:
        os.rename(mp / p, mp / (p + ".old"))
    wait_for(lambda: m.status()["unpacking_files"] == 0, what="the pack unpacked")
    listed = set(os.listdir(mp / "knowledge"))
    for p in appended:
        assert (mp / p).read_bytes() == files[p] + b"one more line\n"
    for p in removed:
        assert Path(p).name not in listed
    for p in renamed:
        assert Path(p).name not in listed
        assert (mp / (p + ".old")).read_bytes() == files[p]
    assert m.stop() == 0
    for p in appended:
        assert store.get(p)[0] == files[p] + b"one more line\n"
    keys = {o.path for o in store.list()}
    assert not keys & set(removed) and not keys & set(renamed)
    assert {p + ".old" for p in renamed} <= keys


def test_unpacking_before_the_mount_answers_when_asked(corpus: CorpusURL, store: ObjectStore,
                                                       cfg: Config, mounter) -> None:
    files = _seed(store, cfg)
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_UNPACK_BACKGROUND": "false"})
    st = m.status()
    assert st["startup"]["preload_unpacking"] == 0
    assert st["startup"]["preload_from_pack"] == len(files) - 1
    assert st["local_files"] == len(files)
    assert st["unpacking_files"] == 0
    assert (m.mountpoint / "knowledge/p0007.md").read_bytes() == files["knowledge/p0007.md"]
    assert m.stop() == 0


def test_a_daemon_killed_while_unpacking_loses_nothing(corpus: CorpusURL, store: ObjectStore,
                                                       cfg: Config, mounter) -> None:
    """kill -9 right after the mount answers, while the pack is being written to the
    cache: the next mount reads every file whole (what was written is checked by hash at
    start, the rest comes from the pack again) and no write is invented."""
    files = _seed(store, cfg)
    m = mounter(corpus)
    assert m.status()["startup"]["preload_unpacking"] == len(files) - 1
    m.kill9()
    m2 = mounter(corpus, name="mnt2")
    mp = m2.mountpoint
    assert sorted(os.listdir(mp / "knowledge")) == sorted(
        p.removeprefix("knowledge/") for p in files if p.startswith("knowledge/"))
    for path, data in files.items():
        assert (mp / path).read_bytes() == data, path
    wait_for(lambda: m2.status()["unpacking_files"] == 0, what="the pack unpacked")
    st = m2.status()
    assert st["local_files"] == len(files) and st["dirty_files"] == 0
    assert st["pending_uploads"] == 0
    assert m2.stop() == 0
    assert {o.path for o in store.list() if not o.path.startswith(".brainfs/")} == set(files)



def _read_or_eio(path: Path) -> bytes | None:
    """The file's bytes, or None for EIO (what a read may give when the file changed size
    while it waited for the mount's first listing)."""
    try:
        return path.read_bytes()
    except OSError as e:
        assert e.errno == errno.EIO, e
        return None


def test_a_stale_listing_snapshot_never_serves_the_packs_old_copy(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, proxy, tmp_path) -> None:
    """A mount with an empty cache starts from the listing snapshot, a hint: a file that
    another writer (a second mount, or any S3 client) changed after the snapshot and the
    pack were written is in both at its old ETag. Read before the mount's first real
    listing is in (held back here), or after, it gives the new content, never the pack's:
    whole, or EIO once when its size changed under a read sized by the snapshot."""
    from brainfs.backend.keys import LISTING_KEY

    files = {f"knowledge/p{i:03d}.md": _page(i) for i in range(300)}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: store.put(kv[0], kv[1]), files.items()))
    build_pack(store, cfg)
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"))
    wait_for(lambda: any(o.path == LISTING_KEY for o in store.list()), what="B's snapshot")
    changed = {"knowledge/p150.md": b"the second mount's version\n" * 3}
    (b.mountpoint / "knowledge/p150.md").write_bytes(changed["knowledge/p150.md"])
    settle(b.mountpoint)
    for i in (3, 299):  # another tool: no snapshot update either
        changed[f"knowledge/p{i:03d}.md"] = f"rewritten by another writer {i}\n".encode() * (i % 3 + 1)
        store.put(f"knowledge/p{i:03d}.md", changed[f"knowledge/p{i:03d}.md"])
    files.update(changed)
    # The mount's first LIST stalls (one read timeout, then its retry goes through).
    proxy.force("stall", 1, methods=["GET"], key_pattern="list-type=2")
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=3.0, max_attempts=2))
    st = m.status()
    assert st["startup"]["listing_from"] == "snapshot" and st["listing"] == "snapshot"
    assert st["startup"]["preload_from_pack"] == len(files)  # the snapshot vouched for all
    mp = m.mountpoint
    with ThreadPoolExecutor(4) as pool:
        first = dict(zip(files, pool.map(lambda p: _read_or_eio(mp / p), files)))
    for p, data in files.items():
        assert first[p] in (data, None), p
        if first[p] is None:
            assert p in changed, f"{p}: EIO, though it did not change"
    for p, data in changed.items():
        assert (mp / p).read_bytes() == data, p
    wait_for(lambda: m.status()["unpacking_files"] == 0, what="the pack unpacked")
    for p, data in files.items():
        assert (mp / p).read_bytes() == data, p
    assert m.stop() == 0
    assert b.stop() == 0
    for p, data in changed.items():
        assert store.get(p)[0] == data
