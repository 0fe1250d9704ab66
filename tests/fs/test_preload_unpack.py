"""The preload pack at mount: the mount is usable once the pack is downloaded; its files
are listed at once, read from the pack until written to disk, and written to disk while the
mount serves (``preload_unpack_background``, the default)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.s3proxy import FaultPlan
from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import build_pack

from helpers import mounted_tmpfs, settle, wait_for

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
    files["knowledge/p010.md"] = b""  # empty in the snapshot and the pack: grows below
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: store.put(kv[0], kv[1]), files.items()))
    build_pack(store, cfg)
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"))
    wait_for(lambda: any(o.path == LISTING_KEY for o in store.list()), what="B's snapshot")
    changed = {"knowledge/p150.md": b"the second mount's version\n" * 3}
    (b.mountpoint / "knowledge/p150.md").write_bytes(changed["knowledge/p150.md"])
    settle(b.mountpoint)
    for i in (3, 10, 200, 201, 299):  # another tool: no snapshot update either
        changed[f"knowledge/p{i:03d}.md"] = f"rewritten by another writer {i}\n".encode() * (i % 3 + 1) * (
            10_000 if i == 10 else 1)
        store.put(f"knowledge/p{i:03d}.md", changed[f"knowledge/p{i:03d}.md"])
    files.update(changed)
    # Every request to the bucket takes 1.5 s: the reads below come while the mount's
    # first LIST is still out.
    proxy.set_delay(1.5)
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=10.0))
    st = m.status()
    assert st["startup"]["listing_from"] == "snapshot" and st["listing"] == "snapshot"
    assert st["startup"]["preload_from_pack"] == len(files)  # the snapshot vouched for all
    mp = m.mountpoint
    # Rewritten (O_TRUNC) and removed before the first LIST is in: based on the other
    # writer's version, not the snapshot's, so no conflict copy and no refused delete.
    mine = b"rewritten in the mount right after it answered\n"
    os.unlink(mp / "knowledge/p201.md")
    (mp / "knowledge/p200.md").write_bytes(mine)
    changed["knowledge/p200.md"] = files["knowledge/p200.md"] = mine
    del changed["knowledge/p201.md"], files["knowledge/p201.md"]
    order = [*changed, *(p for p in files if p not in changed)]  # the changed ones first
    with ThreadPoolExecutor(4) as pool:
        first = dict(zip(order, pool.map(lambda p: _read_or_eio(mp / p), order)))
    proxy.set_delay(0.0)
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
    in_bucket = {o.path for o in store.list() if o.path.startswith("knowledge/")}
    assert in_bucket == set(files), in_bucket ^ set(files)
    for p, data in changed.items():
        assert store.get(p)[0] == data


def _packed_corpus(store: ObjectStore, cfg: Config, n: int = PAGES) -> dict[str, bytes]:
    """``n`` pages in a few directories, all in the pack (no stale entry)."""
    files = {f"knowledge/d{i % 5}/p{i:04d}.md": _page(i) for i in range(n)}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: store.put(kv[0], kv[1]), files.items()))
    build_pack(store, cfg)
    return files


def _tree(mp: Path) -> dict[str, bytes]:
    """Every file under ``knowledge/`` as a mount lists it."""
    return {p.relative_to(mp).as_posix(): p.read_bytes()
            for p in sorted((mp / "knowledge").rglob("*")) if p.is_file()}


def test_every_change_to_a_packed_file_before_its_unpacking_wins(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, tmp_path) -> None:
    """Right after the mount, on packed files the unpacking reaches last: truncate(2) to
    nothing, to half and past the end, an O_TRUNC rewrite, unlink then create of the same
    name, a rename over another packed file, and a rename of a whole packed directory. The
    mount, the bucket and a new mount with an empty cache all end up with exactly that."""
    files = _packed_corpus(store, cfg)
    want = dict(files)
    m = mounter(corpus)
    mp = m.mountpoint
    assert m.status()["startup"]["preload_unpacking"] == len(files)
    last = sorted(p for p in files if p.startswith("knowledge/d4/"))[-12:]
    os.truncate(mp / last[0], 0)
    want[last[0]] = b""
    os.truncate(mp / last[1], 10)
    want[last[1]] = files[last[1]][:10]
    os.truncate(mp / last[2], len(files[last[2]]) + 100)
    want[last[2]] = files[last[2]] + b"\0" * 100
    (mp / last[3]).write_bytes(b"rewritten with O_TRUNC\n")
    want[last[3]] = b"rewritten with O_TRUNC\n"
    os.unlink(mp / last[4])
    with open(mp / last[4], "xb") as f:
        f.write(b"made again after its unlink\n")
    want[last[4]] = b"made again after its unlink\n"
    os.rename(mp / last[5], mp / last[6])
    want[last[6]] = want.pop(last[5])
    with open(mp / last[7], "r+b") as f:  # rewrite in place, no truncation
        f.write(b"XX")
    want[last[7]] = b"XX" + files[last[7]][2:]
    os.rename(mp / "knowledge/d3", mp / "knowledge/moved")
    for p in [p for p in want if p.startswith("knowledge/d3/")]:
        want["knowledge/moved/" + p.removeprefix("knowledge/d3/")] = want.pop(p)
    wait_for(lambda: m.status()["unpacking_files"] == 0, what="the pack unpacked")
    # Truncations by path are committed once idle; the unmount commits what is left.
    assert _tree(mp) == want
    assert m.stop() == 0
    in_bucket = {o.path: store.get(o.path)[0] for o in store.list()
                 if o.path.startswith("knowledge/") and not o.path.endswith("/.brainfs-dir")}
    assert in_bucket == want
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "cache-fresh"))
    wait_for(lambda: fresh.status()["unpacking_files"] == 0, what="the pack unpacked")
    assert _tree(fresh.mountpoint) == want
    assert fresh.stop() == 0


def test_status_answers_while_unpacking(corpus: CorpusURL, store: ObjectStore, cfg: Config,
                                        mounter, proxy) -> None:
    """`brainfs status` while the pack is being written: every file counted once, listed
    from the pack or written. From a listing snapshot the unpacking waits for the whole
    real LIST, slow here (its second key range stalls 15 s once, then is asked again)."""
    from brainfs.backend import listing

    files = _packed_corpus(store, cfg)
    listing.write(store, list(store.list()))
    proxy.set_faults(FaultPlan(stall_seconds=15.0))
    proxy.force("stall", count=1, methods={"GET"}, query_pattern="start-after=")
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=20.0))
    cli = [sys.executable, "-m", "brainfs.front.cli", "status", str(m.mountpoint)]
    st = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True,
                                   check=True, env=m.env).stdout)
    assert st["listing"] == "snapshot", "the first LIST was in before the status"
    assert st["unpacking_files"] == st["files"] == len(files) and st["local_files"] == 0
    text = subprocess.run(cli, capture_output=True, text=True, check=True, env=m.env).stdout
    assert f"{len(files)} preloaded, being written to the cache" in text, text
    while True:
        st = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True,
                                       check=True, env=m.env).stdout)
        # Each packed file is counted once: listed from the pack, or written.
        assert st["local_files"] + st["unpacking_files"] == st["files"] == len(files)
        if st["unpacking_files"] == 0:
            break
    assert st["local_files"] == len(files)
    text = subprocess.run(cli, capture_output=True, text=True, check=True, env=m.env).stdout
    assert f"{len(files)} in corpus, {len(files)} local" in text, text
    assert m.stop() == 0


def test_unmount_while_unpacking_leaves_nothing_half_written(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, proxy) -> None:
    """A clean unmount right after the mount: what the unpacking wrote is whole (the next
    start hashes every local copy and finds none damaged), and what it did not write comes
    from the pack again, with the bucket refusing every GET of a file."""
    files = _packed_corpus(store, cfg)
    m = mounter(corpus)
    assert m.status()["unpacking_files"] > 0
    assert m.stop() == 0
    proxy.set_faults(FaultPlan(error_rate=1.0, methods=frozenset({"GET"}),
                               key_pattern="knowledge/"))
    m2 = mounter(corpus, name="mnt2", cfg=cfg.override(endpoint_url=proxy.url, max_attempts=1))
    log = m2.log.read_text()
    assert "consistency check:" in log and " 0 damaged copies dropped" in log, log[-2000:]
    assert 0 < m2.status()["local_files"] < len(files) or m2.status()["unpacking_files"] == 0
    assert _tree(m2.mountpoint) == files
    wait_for(lambda: m2.status()["unpacking_files"] == 0, what="the pack unpacked")
    st = m2.status()
    assert st["local_files"] == len(files) and st["dirty_files"] == 0
    proxy.set_faults(None)
    assert m2.stop() == 0


@pytest.mark.parametrize("damage", ["cut short", "a flipped byte in a body", "not a pack"])
def test_a_damaged_pack_is_never_served(corpus: CorpusURL, store: ObjectStore, cfg: Config,
                                        mounter, damage: str) -> None:
    """A pack cut short or that is not a pack is not used (every file is fetched); a
    byte flipped in one body, which the layout does not show, is caught by that entry's
    MD5 ETag, and that file is fetched. No file ever reads other than its object."""
    from brainfs.backend.keys import PACK_KEY

    files = _packed_corpus(store, cfg, n=200)
    blob = store.get(PACK_KEY)[0]
    victim = "knowledge/d2/p0102.md"
    if damage == "cut short":
        blob = blob[:-7]
    elif damage == "not a pack":
        blob = b"garbage " * 100
    else:
        at = blob.rindex(files[victim])
        blob = blob[:at] + bytes([blob[at] ^ 0x20]) + blob[at + 1:]
    store.put(PACK_KEY, blob)
    m = mounter(corpus)
    st = m.status()["startup"]
    assert st["preload_from_pack"] == (len(files) if damage == "a flipped byte in a body" else 0)
    assert _tree(m.mountpoint) == files
    wait_for(lambda: m.status()["unpacking_files"] == 0, what="the pack unpacked")
    assert _tree(m.mountpoint) == files
    assert m.stop() == 0


@pytest.fixture
def small_cache_disk(tmp_path: Path):
    """A 3 MB tmpfs for the cache (unmounted at teardown, pass or fail)."""
    with mounted_tmpfs(tmp_path / "tmpfs-cache", "3m") as d:
        yield d


def test_a_full_cache_disk_while_unpacking_keeps_every_file_whole(
        corpus: CorpusURL, store: ObjectStore, cfg: Config, mounter, proxy,
        small_cache_disk: Path) -> None:
    """The pack holds twice what the cache's disk can: the unpacking fills it and fails.
    Every read then gives the whole file or an error, never a short or empty one; the pack
    keeps what is not written (the bucket refuses every GET of a file here), and once the
    disk has room the unpacking finishes and every file reads whole."""
    files = {f"knowledge/big/f{i:02d}.bin": os.urandom(150_000) for i in range(40)}  # 6 MB
    for p, data in files.items():
        store.put(p, data)
    build_pack(store, cfg)
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, cache_dir=small_cache_disk,
                                         max_attempts=1),
                env_extra={"BRAINFS_CACHE_BUDGET_BYTES": str(1024**3)})
    assert m.status()["startup"]["preload_unpacking"] == len(files)
    def disk_full() -> bool:
        st = os.statvfs(small_cache_disk)
        return st.f_bavail * st.f_frsize < 150_000 and m.status()["local_files"] > 0

    wait_for(disk_full, what="the cache's disk full")
    proxy.set_faults(FaultPlan(error_rate=1.0, methods=frozenset({"GET"}), key_pattern="knowledge/"))
    assert sorted(os.listdir(m.mountpoint / "knowledge/big")) == sorted(p.rsplit("/", 1)[1] for p in files)
    whole = failed = 0
    for p, data in files.items():
        try:
            got = (m.mountpoint / p).read_bytes()
        except OSError as e:
            assert e.errno in (errno.EIO, errno.ENOSPC), e
            failed += 1
        else:
            assert got == data, f"{p}: {len(got)} of {len(data)} bytes"
            whole += 1
    assert failed and whole, (whole, failed)
    assert m.alive()
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_cache_disk)], check=True)
    wait_for(lambda: m.status()["unpacking_files"] == 0, timeout=60, what="the pack unpacked")
    for p, data in files.items():
        assert (m.mountpoint / p).read_bytes() == data, p
    proxy.set_faults(None)
    assert m.stop() == 0
    log = m.log.read_text()
    assert log.count("not written to the cache yet") == 1, log[-3000:]
    assert "every file written to the cache after" in log


def test_a_disk_that_stays_full_is_retried_sparingly_and_logged_once() -> None:
    """The unpacking's retry plan over an hour of a full cache disk (a simulated clock,
    polled as the daemon polls it): one line for the log, a few tries, not one every 5 s
    (720 warnings an hour before); the try after the disk gains room comes at the next
    poll; a failure that is not for want of room backs off to one try in 5 minutes."""
    from brainfs.cache.local.pack import UnpackRetry
    from brainfs.fs.backgroundjobs import UNPACK_RETRY_MAX_S, UNPACK_RETRY_S

    retry = UnpackRetry(UNPACK_RETRY_S, UNPACK_RETRY_MAX_S)
    now, free, smallest = 0.0, 40_000, 150_000  # less room than the smallest file needs
    logged = tries = 0
    while now < 3600:
        tries += 1
        logged += retry.failed(now, free)
        while not retry.due(now, free, smallest):
            now += UNPACK_RETRY_S
    assert logged == 1
    assert tries <= 20, tries  # 5, 10, 20, 40, 80, 160, then every 300 s
    free = 50_000_000  # room made: the next poll tries
    assert retry.due(now + UNPACK_RETRY_S, free, smallest)
    # Room that does not change (the failure was something else): the pause decides.
    retry.failed(now, free)
    assert not retry.due(now + UNPACK_RETRY_S, free, smallest)
    assert retry.due(now + UNPACK_RETRY_MAX_S, free, smallest)
