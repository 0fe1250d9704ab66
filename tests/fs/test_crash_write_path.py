"""Minimal reproductions of what the crash harness (``benchmarks/crash_harness.py``, issue 13)
found on the write path: each is one of its defects cut down to a few calls.

A test marked ``xfail(strict=True)`` fails on main (fa10818 and later, with its pyfuse3
build); once the defect is fixed it passes, the strict mark turns that into a failure, and
the mark must go. The unmarked ones failed before the write-path rework (fa10818) and pass
since: they stay as regression tests.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from helpers import NO_RELIST, s3get, settle

pytestmark = pytest.mark.mount


def conflict_copies(store: ObjectStore, rel: str) -> dict[str, bytes]:
    root, ext = os.path.splitext(rel)
    return {o.path: store.get(o.path)[0] for o in store.list()
            if o.path.startswith(root + ".conflict-") and o.path.endswith(ext)}


def test_kill_before_the_first_close_of_a_new_file_leaves_no_empty_file(corpus, store, mounter) -> None:
    # Harness: "create w/n404295.md (7.9 KB); kill during step 1/1 (write)" -> an empty
    # file after remount, in the mount and in the bucket.
    m = mounter(corpus, env_extra=NO_RELIST)
    (m.mountpoint / "notes").mkdir()
    fd = os.open(m.mountpoint / "notes/new.md", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    os.write(fd, b"a card that was never closed\n" * 100)
    time.sleep(0.5)  # the uploader has taken the create's journal row by now
    m.kill9()
    try:
        os.close(fd)
    except OSError:
        pass
    m2 = mounter(corpus, name="mnt2", env_extra=NO_RELIST)
    settle(m2.mountpoint)
    # The write was never committed: the file is as before the create (absent), never empty.
    assert s3get(store, "notes/new.md") is None
    assert not (m2.mountpoint / "notes/new.md").exists()


def test_conflict_loser_reads_the_winners_whole_content(corpus, store, mounter, cfg, tmp_path) -> None:
    # Harness (fa10818): a shared cycle where A's version went to the conflict copy;
    # reading the path through A gave B's bytes cut to A's own size (0 B when A's version
    # was empty) while S3 held all of B's. Fixed by 45d7f0d.
    store.put("notes/shared.md", b"version 0\n")
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"), env_extra=NO_RELIST)
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"), env_extra=NO_RELIST)
    a.wait_listed(), b.wait_listed()
    assert (a.mountpoint / "notes/shared.md").read_bytes() == b"version 0\n"
    assert (b.mountpoint / "notes/shared.md").read_bytes() == b"version 0\n"
    long, short = b"B's long version\n" * 300, b"A's short one\n"
    (b.mountpoint / "notes/shared.md").write_bytes(long)
    settle(b.mountpoint)
    assert s3get(store, "notes/shared.md") == long
    (a.mountpoint / "notes/shared.md").write_bytes(short)  # based on version 0: a conflict
    settle(a.mountpoint)
    assert s3get(store, "notes/shared.md") == long
    assert list(conflict_copies(store, "notes/shared.md").values()) == [short]
    # A's path now holds B's version: all of it, not its first len(short) bytes.
    got = (a.mountpoint / "notes/shared.md").read_bytes()
    assert got == long, f"read {len(got)} bytes through A, S3 holds {len(long)}"


def test_unlink_never_deletes_a_version_this_mount_has_not_seen(corpus, store, mounter, cfg, tmp_path) -> None:
    # Harness: "shared w/s/f2.md: A unlinks while B overwrites" -> B's closed version
    # neither at the path nor in a conflict copy.
    store.put("notes/shared.md", b"version 0\n")
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"), env_extra=NO_RELIST)
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"), env_extra=NO_RELIST)
    a.wait_listed(), b.wait_listed()
    assert (a.mountpoint / "notes/shared.md").read_bytes() == b"version 0\n"
    newer = b"B's newer version\n"
    (b.mountpoint / "notes/shared.md").write_bytes(newer)
    settle(b.mountpoint)
    os.unlink(a.mountpoint / "notes/shared.md")  # A saw version 0 only
    settle(a.mountpoint)
    kept = [v for v in [s3get(store, "notes/shared.md"),
                        *conflict_copies(store, "notes/shared.md").values()] if v == newer]
    assert kept, "B's closed version is gone from S3 with no conflict copy"


def test_rename_of_a_tree_with_a_subdirectory(corpus, store, mounter) -> None:
    # Harness: "rename tree w/d33960 -> w/t75289/d04924/t29491 (4 files, with a
    # subdirectory)": FileNotFoundError, the tree split between both names.
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    files = {"d/a.md": b"a\n", "d/b.md": b"b\n", "d/sub/c.md": b"c\n", "d/sub/d.md": b"d\n"}
    (mp / "d/sub").mkdir(parents=True)
    (mp / "t").mkdir()
    for rel, data in files.items():
        (mp / rel).write_bytes(data)
    settle(mp)
    os.rename(mp / "d", mp / "t/moved")
    settle(mp)
    for rel, data in files.items():
        new = "t/moved" + rel[1:]
        assert (mp / new).read_bytes() == data
        assert s3get(store, new) == data
        assert s3get(store, rel) is None


def test_two_mounts_closing_one_file_at_once_keep_both_versions(corpus, store, mounter, cfg, tmp_path) -> None:
    # Harness: "shared w/s/f1.md: A overwrites (5.7 KB) while B overwrites (5.3 KB); kill
    # after the operation" -> A's closed version neither at the path nor in a copy.
    import threading

    for rnd in range(10):
        store.put(f"notes/race-{rnd}.md", b"version 0\n")
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"), env_extra=NO_RELIST)
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"), env_extra=NO_RELIST)
    a.wait_listed(), b.wait_listed()
    lost = []
    for rnd in range(10):
        rel = f"notes/race-{rnd}.md"
        assert (a.mountpoint / rel).read_bytes() == (b.mountpoint / rel).read_bytes() == b"version 0\n"
        data = {"A": f"A's version of round {rnd}\n".encode() * 50,
                "B": f"B's version of round {rnd}\n".encode() * 60}
        barrier = threading.Barrier(2)

        def write(mp: Path, body: bytes) -> None:
            barrier.wait()
            (mp / rel).write_bytes(body)

        threads = [threading.Thread(target=write, args=(m.mountpoint, data[w])) for m, w in ((a, "A"), (b, "B"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        settle(a.mountpoint)
        settle(b.mountpoint)
        there = [s3get(store, rel), *conflict_copies(store, rel).values()]
        lost += [f"round {rnd}: {w}'s version" for w, body in data.items() if body not in there]
    assert not lost, f"versions lost with no conflict copy: {lost}"


def test_kill_between_a_put_and_its_record_keeps_the_newest_version(s3_server, corpus, store, mounter, cfg) -> None:
    # Harness (before fa10818): "create ... (289.3 KB); kill after the operation" -> the
    # path empty or an older version, the closed bytes in a conflict copy ("conflict copies
    # without a second writer"): the remount took the mount's own object for another
    # writer's. Here: version 1 is closed and its PUT lands; version 2 is closed while the
    # daemon still waits for that PUT's reply; then the daemon dies.
    from benchmarks.crash_harness import ReplyDelay

    delay = ReplyDelay(("127.0.0.1", s3_server.port), 1.0)  # holds each reply, not the request
    v1 = b"version 1, closed\n" * 40
    v2 = b"version 2, written, fsynced and closed before the crash\n" * 50
    landed = s3_server.root / corpus.bucket / corpus.prefix / "notes/x.md"
    try:
        m = mounter(corpus, cfg=cfg.override(endpoint_url=delay.url, read_timeout=10.0),
                    env_extra=NO_RELIST)
        (m.mountpoint / "notes").mkdir()
        (m.mountpoint / "notes/x.md").write_bytes(v1)
        deadline = time.monotonic() + 60
        while not (landed.exists() and landed.read_bytes() == v1) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert landed.read_bytes() == v1, "version 1 never landed"
        with open(m.mountpoint / "notes/x.md", "wb") as f:  # the forwarder still holds the reply
            f.write(v2)
            f.flush()
            os.fsync(f.fileno())
        m.kill9()
    finally:
        delay.stop()
    m2 = mounter(corpus, name="mnt2", env_extra=NO_RELIST)
    settle(m2.mountpoint)
    assert s3get(store, "notes/x.md") == v2
    assert conflict_copies(store, "notes/x.md") == {}
    assert (m2.mountpoint / "notes/x.md").read_bytes() == v2


def test_another_writers_version_equal_to_an_old_one_of_ours_is_not_clobbered(corpus, store, mounter) -> None:
    # Harness (fa10818): "shared w/s/f1.md: A truncates (0 B) while B overwrites (14.3 KB)"
    # -> A's closed empty version neither at the path nor in a conflict copy; B had
    # written an empty f1.md itself 59 cycles before. Here the other writer is any S3
    # client (a second machine, dream): it restores version X, which this mount wrote
    # earlier and has since replaced with Y; this mount, not having seen the restore,
    # writes Z on top of Y.
    store.put("notes/x.md", b"version 0\n")
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    x, y, z = b"X: written here first\n", b"Y: then this\n", b"Z: based on Y\n"
    (mp / "notes/x.md").write_bytes(x)
    settle(mp)
    (mp / "notes/x.md").write_bytes(y)
    settle(mp)
    assert s3get(store, "notes/x.md") == y
    store.put("notes/x.md", x)  # another writer restores X
    (mp / "notes/x.md").write_bytes(z)  # based on Y: the bucket changed since
    settle(mp)
    kept = [v for v in [s3get(store, "notes/x.md"), *conflict_copies(store, "notes/x.md").values()]]
    assert x in kept and z in kept, f"in S3: {kept}"


def test_unlink_never_deletes_another_writers_restore_of_an_old_version(corpus, store, mounter) -> None:
    store.put("notes/x.md", b"version 0\n")
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    x, y = b"X: written here first\n", b"Y: then this\n"
    (mp / "notes/x.md").write_bytes(x)
    settle(mp)
    (mp / "notes/x.md").write_bytes(y)
    settle(mp)
    store.put("notes/x.md", x)  # another writer restores X
    os.unlink(mp / "notes/x.md")  # this mount saw Y only
    settle(mp)
    assert s3get(store, "notes/x.md") == x


@pytest.mark.timeout(600)
def test_crash_harness_cycles_through_the_preload_pack(tmp_path: Path) -> None:
    """``crash_harness --pack``: each cycle mounts with an empty cache from a freshly built
    pack whose files another writer changed first (a file in the bucket, or through a
    second mount), so the operation and kill -9 race the background unpacking; after the
    remount the model must match the mount, the bucket and a fresh cache exactly, and the
    changed file must read new right after the mount. (Before 6f840df this found a stale
    pack served on the listing snapshot's word from the first cycle.)"""
    import json
    import shutil
    import subprocess
    import sys

    from helpers import REPO

    if shutil.which("fusermount3") is None:
        pytest.skip("fusermount3 is not installed")
    out, work = tmp_path / "results", tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.crash_harness", "--target", "brainfs", "--pack",
         "--pack-stale", "1.0", "--pack-files", "300", "--cycles", "5", "--seed", "102",
         "--max-size", "262144", "--fresh-every", "5", "--out", str(out), "--work", str(work)],
        cwd=REPO, capture_output=True, text=True, timeout=580)
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode in (0, 1), log
    r = json.loads((out / "crash-5-seed102-brainfs-pack.json").read_text())["results"][0]
    assert r["error"] is None and r["cycles"] == 5, log
    assert r["stale_cycles"] == 5 and r["fresh_checks"] == 1
    assert not r["defects"], "\n".join(
        f"cycle {d['cycle']} {d['kind']} {d['path']}: {d['detail']} [{d['view']}; {d['op']}; "
        f"kill {d['landed']}]" for d in r["defects"])
    assert proc.returncode == 0
    # Every mount unmounted and the work directory removed.
    with open("/proc/mounts") as f:
        assert not [ln for ln in f if str(tmp_path) in ln]
    assert not any(work.iterdir())


def test_an_empty_file_made_again_after_its_unlink_survives_a_kill(corpus, store, mounter) -> None:
    # Harness (--pack, seed 19, cycles 32 and 299): "recreate w/p/d1/f00425.md (2.2 KB ->
    # 0 B); kill after the operation" -> missing in the mount and the bucket. The unlink's
    # pending delete kept the empty file's first close from recording it.
    store.put("notes/x.md", b"the first version\n")
    store.put("notes/y.md", b"another\n")
    m = mounter(corpus, env_extra=NO_RELIST)
    mp = m.mountpoint
    assert (mp / "notes/x.md").read_bytes() == b"the first version\n"
    os.unlink(mp / "notes/x.md")
    fd = os.open(mp / "notes/x.md", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.fsync(fd)
    os.close(fd)
    os.unlink(mp / "notes/y.md")  # the same, left for the unmount to upload
    with open(mp / "notes/y.md", "xb"):
        pass
    m.kill9()
    m2 = mounter(corpus, name="mnt2", env_extra=NO_RELIST)
    settle(m2.mountpoint)
    for p in ("notes/x.md", "notes/y.md"):
        assert (m2.mountpoint / p).read_bytes() == b"", p
        assert s3get(store, p) == b"", p
    assert m2.stop() == 0


def test_rewriting_the_bytes_another_mount_wrote_makes_no_conflict_copy(
        corpus, store, mounter, cfg, tmp_path) -> None:
    # Harness (--pack, seed 21, cycles 120 and 160): "truncate w/p/.../f00501.md 0 B -> 0 B"
    # on a mount with a new cache -> a conflict copy with no second writer. The upload took
    # its own stamp, recorded before the HEAD, for one of this cache's earlier PUTs of those
    # bytes, and so the object another mount had put (same bytes, its stamp) for not ours.
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"), env_extra=NO_RELIST)
    (a.mountpoint / "notes").mkdir()
    (a.mountpoint / "notes/empty.md").write_bytes(b"")
    (a.mountpoint / "notes/same.md").write_bytes(b"the same bytes\n")
    settle(a.mountpoint)
    assert a.stop() == 0
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"), env_extra=NO_RELIST)
    b.wait_listed()
    os.truncate(b.mountpoint / "notes/empty.md", 0)
    (b.mountpoint / "notes/same.md").write_bytes(b"the same bytes\n")
    settle(b.mountpoint)
    assert conflict_copies(store, "notes/empty.md") == {}
    assert conflict_copies(store, "notes/same.md") == {}
    assert s3get(store, "notes/same.md") == b"the same bytes\n"
    assert b.stop() == 0
