"""The write path keeps its promises (issue 13): no self-conflicts, atomic renames, nothing
resurrected or clobbered. Real mounts, a real S3 server, the fault-injecting proxy.

Kills that must land between two steps (a PUT and the record of its outcome, a rename's
catalog commit and its file moves) use the daemon's crash points (``BRAINFS_CRASH_AT``,
``cache/local/faults.py``): each such test first checks that the daemon did die there, so it
cannot pass by never reaching the window.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from brainfs.backend.store import ObjectStore
from helpers import Mount, all_keys, is_mounted, raw_client, s3get, upload_tree, wait_for, write_tree

from benchmarks.s3proxy import FaultPlan

pytestmark = pytest.mark.mount

TREE = {
    "GUIDE.md": "Always answer in English.\n",
    "notes/a.md": "card a\n",
    "d/doc.md": "the old document\n",
    "tree/x.md": "x\n",
    "tree/sub/y.md": "y\n",
    "tree/sub/deeper/z.md": "z\n",
}


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", TREE)
    upload_tree(store, src)
    return src


def conflicts(cfg, corpus) -> list[str]:
    return sorted(k for k in all_keys(raw_client(cfg.endpoint_url or ""), corpus.bucket)
                  if ".conflict-" in k)


def died_by_itself(m: Mount, timeout: float = 20) -> None:
    """Wait for the daemon to kill itself at its crash point, then detach the mount."""
    try:
        m.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("the daemon never reached its crash point") from None
    assert m.proc.returncode == -9, f"daemon exited with {m.proc.returncode}, not at the crash point"
    m.cleanup()


def write_fsync_close(path: Path, data: bytes, flags: int = os.O_CREAT | os.O_WRONLY | os.O_TRUNC) -> None:
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


# ============================================================== 1. no self-conflicts


def test_crash_between_put_and_its_record_is_not_a_conflict(seeded, corpus, mounter, store, cfg, proxy) -> None:
    """Two versions of one file: the first's PUT is held by the proxy while the second is
    committed, then lands, and the daemon dies before recording it. The remount must take
    the object for its own (it sent it) and upload the second version: no conflict copy,
    no older version, no empty file."""
    proxy.set_faults(FaultPlan(stall_seconds=1.5))
    proxy.force("stall", count=1, methods={"PUT"}, key_pattern=r"notes/x\.md$")
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=5.0),
                env_extra={"BRAINFS_CRASH_AT": "upload-after-put"})
    v1, v2 = b"first version\n" * 10, b"x" * 2600
    write_fsync_close(m.mountpoint / "notes/x.md", v1)
    wait_for(lambda: proxy.stats["faults"].get("stall", 0) >= 1, what="the first PUT to stall")
    write_fsync_close(m.mountpoint / "notes/x.md", v2)
    died_by_itself(m)
    assert s3get(store, "notes/x.md") == v1  # the first PUT landed, its record did not

    m2 = mounter(corpus, name="mnt2")
    wait_for(lambda: s3get(store, "notes/x.md") == v2, what="the second version uploaded")
    assert (m2.mountpoint / "notes/x.md").read_bytes() == v2
    assert conflicts(cfg, corpus) == []
    assert m2.stop() == 0


def test_created_file_killed_after_its_put_reads_back_whole(seeded, corpus, mounter, store, cfg) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_CRASH_AT": "upload-after-put"})
    data = b"y" * 2600
    write_fsync_close(m.mountpoint / "notes/new.md", data)
    died_by_itself(m)
    m2 = mounter(corpus, name="mnt2")
    assert (m2.mountpoint / "notes/new.md").read_bytes() == data
    assert m2.stop() == 0
    assert s3get(store, "notes/new.md") == data
    assert conflicts(cfg, corpus) == []


# ============================================================== 2. atomic rename


def test_crash_inside_an_atomic_save_keeps_old_or_new(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    """The editor's atomic save, ``write doc.md.tmp; mv doc.md.tmp doc.md``, with the daemon
    killed inside the rename (after its catalog commit, before the content moves)."""
    m = mounter(corpus, env_extra={"BRAINFS_CRASH_AT": "rename-after-catalog"})
    new = b"the new document\n" * 50
    write_fsync_close(m.mountpoint / "d/doc.md.tmp", new)
    try:
        os.rename(m.mountpoint / "d/doc.md.tmp", m.mountpoint / "d/doc.md")
    except OSError:
        pass  # the daemon died under the request
    died_by_itself(m)

    m2 = mounter(corpus, name="mnt2")
    assert (m2.mountpoint / "d/doc.md").read_bytes() == new
    assert not (m2.mountpoint / "d/doc.md.tmp").exists()
    wait_for(lambda: s3get(store, "d/doc.md") == new and s3get(store, "d/doc.md.tmp") is None,
             what="the rename reaching the bucket")
    assert m2.stop() == 0
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert (fresh.mountpoint / "d/doc.md").read_bytes() == new
    assert not (fresh.mountpoint / "d/doc.md.tmp").exists()
    assert conflicts(cfg, corpus) == []


def test_rename_waits_for_the_new_name_before_deleting_the_old(seeded, corpus, mounter, store, cfg, proxy) -> None:
    """While the new name's PUT is refused, the old name stays in the bucket: the bucket
    holds one of the two names at every moment."""
    proxy.force("slowdown", count=100_000, methods={"PUT"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={"BRAINFS_UPLOAD_RETRY_SECONDS": "0.3"})
    os.rename(m.mountpoint / "notes/a.md", m.mountpoint / "notes/b.md")
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 3, what="refused PUTs")
    time.sleep(0.5)
    assert s3get(store, "notes/a.md") == TREE["notes/a.md"].encode()
    proxy.clear_forced()
    wait_for(lambda: s3get(store, "notes/a.md") is None, what="the old name deleted")
    assert s3get(store, "notes/b.md") == TREE["notes/a.md"].encode()
    assert m.stop() == 0


def test_rename_of_a_tree_with_subdirectories(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    m = mounter(corpus)
    mp = m.mountpoint
    (mp / "tree/empty").mkdir()
    os.rename(mp / "tree", mp / "moved")
    assert not (mp / "tree").exists()
    got = sorted(str(p.relative_to(mp / "moved")) for p in (mp / "moved").rglob("*"))
    assert got == ["empty", "sub", "sub/deeper", "sub/deeper/z.md", "sub/y.md", "x.md"]
    assert (mp / "moved/sub/deeper/z.md").read_text() == "z\n"
    assert m.stop() == 0
    for rel in ("x.md", "sub/y.md", "sub/deeper/z.md"):
        assert s3get(store, f"moved/{rel}") == TREE[f"tree/{rel}"].encode()
        assert s3get(store, f"tree/{rel}") is None


def test_crash_inside_a_tree_rename_keeps_one_whole_tree(seeded, corpus, mounter, store, cfg) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_CRASH_AT": "rename-after-catalog"})
    for p in ("tree/x.md", "tree/sub/y.md", "tree/sub/deeper/z.md"):
        (m.mountpoint / p).read_bytes()  # local: a rename needs the content
    try:
        os.rename(m.mountpoint / "tree", m.mountpoint / "moved")
    except OSError:
        pass
    died_by_itself(m)
    m2 = mounter(corpus, name="mnt2")
    mp = m2.mountpoint
    old = [(mp / f"tree/{r}").exists() for r in ("x.md", "sub/y.md", "sub/deeper/z.md")]
    new = [(mp / f"moved/{r}").exists() for r in ("x.md", "sub/y.md", "sub/deeper/z.md")]
    assert new == [True] * 3 and old == [False] * 3, (old, new)
    assert (mp / "moved/sub/deeper/z.md").read_text() == "z\n"
    assert m2.stop() == 0
    assert s3get(store, "moved/sub/deeper/z.md") == b"z\n"
    assert s3get(store, "tree/sub/deeper/z.md") is None


# ============================================================== 3. nothing resurrected


def test_file_deleted_while_its_put_was_in_flight_stays_deleted(seeded, corpus, mounter, store, cfg, proxy, tmp_path) -> None:
    proxy.set_faults(FaultPlan(stall_seconds=1.5))
    proxy.force("stall", count=1, methods={"PUT"}, key_pattern=r"notes/gone\.md$")
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url, read_timeout=5.0),
                env_extra={"BRAINFS_CRASH_AT": "upload-after-put"})
    write_fsync_close(m.mountpoint / "notes/gone.md", b"soon deleted\n")
    wait_for(lambda: proxy.stats["faults"].get("stall", 0) >= 1, what="the PUT to stall")
    os.unlink(m.mountpoint / "notes/gone.md")
    died_by_itself(m)
    assert s3get(store, "notes/gone.md") == b"soon deleted\n"  # landed after the unlink

    m2 = mounter(corpus, name="mnt2")
    assert not (m2.mountpoint / "notes/gone.md").exists()
    wait_for(lambda: s3get(store, "notes/gone.md") is None, what="the object removed")
    assert m2.stop() == 0
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert not (fresh.mountpoint / "notes/gone.md").exists()


def test_deleted_file_stays_deleted_after_kill(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    m = mounter(corpus)
    (m.mountpoint / "notes/a.md").read_bytes()
    os.unlink(m.mountpoint / "notes/a.md")
    m.kill9()
    m2 = mounter(corpus, name="mnt2")
    assert not (m2.mountpoint / "notes/a.md").exists()
    wait_for(lambda: s3get(store, "notes/a.md") is None, what="the delete uploaded")
    assert m2.stop() == 0


# ============================================================== 4. other writers' versions


def _two(corpus, mounter, cfg, tmp_path, relist: str = "600", env_a: dict | None = None):
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"),
                env_extra={"BRAINFS_RELIST_SECONDS": relist, **(env_a or {})})
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"),
                env_extra={"BRAINFS_RELIST_SECONDS": "600"})
    a.wait_listed(), b.wait_listed()
    return a, b


def test_writer_open_across_a_relist_keeps_the_other_version(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    # (No idle commit while A's file is open: its write is one version.)
    a, b = _two(corpus, mounter, cfg, tmp_path, relist="0.5",
                env_a={"BRAINFS_COMMIT_IDLE_SECONDS": "60"})
    rel = "notes/a.md"
    f = open(a.mountpoint / rel, "r+b", buffering=0)  # the write begins now
    f.write(b"A started writing ")
    theirs = b"B's version, closed first\n"
    (b.mountpoint / rel).write_bytes(theirs)
    wait_for(lambda: s3get(store, rel) == theirs, what="B's upload")
    time.sleep(2.0)  # A relists (every 0.5 s) while its write is open
    f.write(b"and finished after B\n")
    f.close()
    wait_for(lambda: conflicts(cfg, corpus), what="A's version as a conflict copy")
    assert s3get(store, rel) == theirs
    (copy,) = conflicts(cfg, corpus)
    assert s3get(store, corpus.path(copy)) == b"A started writing and finished after B\n"


def test_stale_delete_does_not_remove_another_writers_version(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    a, b = _two(corpus, mounter, cfg, tmp_path)
    rel = "notes/a.md"
    theirs = b"B rewrote the card\n"
    (b.mountpoint / rel).write_bytes(theirs)
    wait_for(lambda: s3get(store, rel) == theirs, what="B's upload")
    os.unlink(a.mountpoint / rel)  # A has not relisted: it deletes the version it saw
    assert a.stop() == 0
    assert s3get(store, rel) == theirs
    log = a.log.read_text()
    assert "not deleting notes/a.md" in log


def test_two_mounts_writing_at_once_lose_no_version(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    a, b = _two(corpus, mounter, cfg, tmp_path)
    rel = "GUIDE.md"
    lost = 0
    for i in range(5):
        va, vb = f"A round {i}\n".encode(), f"B round {i}\n".encode()
        ta = threading.Thread(target=(a.mountpoint / rel).write_bytes, args=(va,))
        tb = threading.Thread(target=(b.mountpoint / rel).write_bytes, args=(vb,))
        ta.start(), tb.start(), ta.join(), tb.join()

        def settled() -> bool:
            keys = all_keys(raw_client(cfg.endpoint_url or ""), corpus.bucket)
            return not any(".conflict-" in k and k.endswith(f"{i}.md") for k in keys)

        time.sleep(1.0)
        a.stop(), b.stop()
        found = {s3get(store, rel)} | {s3get(store, corpus.path(k)) for k in conflicts(cfg, corpus)}
        lost += (va not in found) + (vb not in found)
        a, b = _two(corpus, mounter, cfg, tmp_path)
    assert lost == 0


# ============================================================== 5. one cache, one corpus


def test_a_cache_dir_refuses_another_corpus(seeded, corpus, mounter, store, cfg, s3_server, tmp_path) -> None:
    m = mounter(corpus)
    assert m.stop() == 0
    other = corpus.__class__.parse(f"s3://{corpus.bucket}/users/someone-else")
    with pytest.raises(AssertionError, match="belongs to"):
        mounter(other, name="other")


# ============================================================== 6. O_APPEND within a mount


def test_two_appending_loops_keep_every_line(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    log = m.mountpoint / "notes/log.md"
    log.write_bytes(b"")

    def loop(tag: str) -> None:
        for i in range(50):
            with open(log, "ab") as f:
                f.write(f"{tag} line {i:02d}\n".encode())

    ts = [threading.Thread(target=loop, args=(t,)) for t in ("w1", "w2")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    lines = log.read_bytes().decode().splitlines()
    assert sorted(lines) == sorted([f"{t} line {i:02d}" for t in ("w1", "w2") for i in range(50)])


# ============================================================== 10. refusals that say so


def test_modes_and_owners_are_kept_and_enforced(seeded, corpus, mounter, tmp_path) -> None:
    """chmod, chown and the mode a create or mkdir asks for are kept (by the cache, across
    a remount) and enforced by the kernel; a rename carries them, an unlink drops them."""
    # A mountpoint every user can reach (pytest's tmp_path is private to its user).
    top = Path(tempfile.mkdtemp(prefix="brainfs-modes-"))
    top.chmod(0o755)
    try:
        _modes_and_owners(corpus, mounter, top)
    finally:
        for d in (top / "mnt", top):  # rmdir only: never recursive near a mount
            with contextlib.suppress(OSError):
                d.rmdir()


def _modes_and_owners(corpus, mounter, top: Path) -> None:
    m = mounter(corpus, args=["--allow-other"] if os.getuid() == 0 else None,
                mountpoint=top / "mnt")
    mp = m.mountpoint
    p = mp / "notes/a.md"
    before = os.stat(p)
    time.sleep(0.05)
    os.chmod(p, 0o600)
    st = os.stat(p)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_ctime_ns > before.st_ctime_ns, "chmod changes ctime"
    assert st.st_mtime_ns == before.st_mtime_ns, "and not mtime"
    old = os.umask(0o022)
    try:
        fd = os.open(mp / "notes/secret.md", os.O_CREAT | os.O_WRONLY, 0o640)
        os.write(fd, b"s")
        os.close(fd)
        os.mkdir(mp / "private", 0o700)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(mp / "notes/secret.md").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(mp / "private").st_mode) == 0o700
    os.rename(mp / "notes/secret.md", mp / "private/secret.md")
    assert stat.S_IMODE(os.stat(mp / "private/secret.md").st_mode) == 0o640
    if os.getuid() == 0:
        os.chown(p, 1234, 5678)
        assert (os.stat(p).st_uid, os.stat(p).st_gid) == (1234, 5678)
        # Another user is refused by the kernel: the file is 0600 and not theirs; a 0644
        # file beside it they can read (the path to the mount is open to them).
        def cat_as_nobody(f: Path) -> subprocess.CompletedProcess:
            return subprocess.run(["cat", str(f)], user=65534, group=65534,
                                  capture_output=True, text=True)
        ok = cat_as_nobody(mp / "GUIDE.md")
        assert ok.returncode == 0, ok.stderr
        denied = cat_as_nobody(p)
        assert denied.returncode != 0 and "Permission denied" in denied.stderr, denied
        os.chown(p, 0, 0)
    else:
        with pytest.raises(PermissionError):
            os.chown(p, os.getuid() + 1, -1)  # only root gives a file away, as on a disk
    assert m.stop() == 0
    m = mounter(corpus, name="again")  # same cache dir: what was given is still there
    mp = m.mountpoint
    assert stat.S_IMODE(os.stat(mp / "notes/a.md").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(mp / "private").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(mp / "private/secret.md").st_mode) == 0o640
    os.unlink(mp / "private/secret.md")
    (mp / "private/secret.md").write_bytes(b"new")
    assert stat.S_IMODE(os.stat(mp / "private/secret.md").st_mode) == 0o644, "a new file has the default"
    assert m.stop() == 0


def test_long_names_are_enametoolong(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    with pytest.raises(OSError) as e:
        (m.mountpoint / ("n" * 256)).write_bytes(b"x")
    assert e.value.errno == errno.ENAMETOOLONG
    deep = m.mountpoint
    for _ in range(5):
        deep = deep / ("d" * 200)
    with pytest.raises(OSError) as e:
        os.makedirs(deep)
    assert e.value.errno == errno.ENAMETOOLONG


def test_statfs_reports_what_the_cache_disk_can_hold(seeded, corpus, mounter, cfg) -> None:
    m = mounter(corpus)
    mine = os.statvfs(m.mountpoint)
    disk = os.statvfs(cfg.cache_dir)
    assert mine.f_bavail * mine.f_frsize <= disk.f_bavail * disk.f_frsize
    assert mine.f_bavail > 0 and mine.f_namemax == 255
    assert is_mounted(m.mountpoint)


# ============================================================== 7. only the writer commits


def test_a_readers_close_does_not_commit_a_write_in_progress(seeded, corpus, mounter, store) -> None:
    m = mounter(corpus)
    rel = "notes/a.md"
    f = open(m.mountpoint / rel, "r+b", buffering=0)
    try:
        f.write(b"HALF OF A NEW CARD")
        # Another process reads the file and closes it; so does a pause longer than the
        # idle-commit period (1 s).
        out = subprocess.run(["cat", str(m.mountpoint / rel)], capture_output=True, check=True)
        assert out.stdout.startswith(b"HALF OF A NEW CARD")  # readers share the page cache
        time.sleep(2.0)
        assert s3get(store, rel) == TREE[rel].encode(), "a half-written file was published"
        m.kill9()
    finally:
        try:
            f.close()
        except OSError:
            pass
    m2 = mounter(corpus, name="mnt2")
    assert (m2.mountpoint / rel).read_bytes() == TREE[rel].encode()
    assert m2.stop() == 0


def test_the_writers_close_commits_while_a_reader_has_it_open(seeded, corpus, mounter, store) -> None:
    m = mounter(corpus)
    rel = "notes/a.md"
    reader = open(m.mountpoint / rel, "rb")
    try:
        with open(m.mountpoint / rel, "wb") as w:
            w.write(b"the whole new card\n")
        wait_for(lambda: s3get(store, rel) == b"the whole new card\n", what="the writer's commit")
    finally:
        reader.close()
    assert m.stop() == 0


# ============================================================== 8. a hung mount is recoverable


def test_aborting_the_connection_frees_a_hung_mount(seeded, corpus, mounter) -> None:
    """A daemon that cannot answer (stopped here; in the wild, killed while its thread
    sleeps in the kernel) hangs every request on the mount. Aborting the FUSE connection
    (what ``brainfs umount --force`` does first) ends them at once, daemon or not."""
    import signal

    from brainfs.fs.fusectl import abort_connection, connection_of

    m = mounter(corpus)
    assert connection_of(str(m.mountpoint)) is not None
    os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        reader = subprocess.Popen(["cat", str(m.mountpoint / "notes/a.md")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.0)
        assert reader.poll() is None, "the request should wait for the stopped daemon"
        assert abort_connection(str(m.mountpoint))
        assert reader.wait(timeout=10) != 0
        err = reader.stderr.read()
        assert b"connection abort" in err or b"not connected" in err, err
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        m.cleanup()
    assert not is_mounted(m.mountpoint)


# ============================================================== 11. empty directories


def test_empty_directories_survive_a_remount_and_a_fresh_cache(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    m = mounter(corpus)
    (m.mountpoint / "notes/empty/deeper").mkdir(parents=True)
    (m.mountpoint / "emptied").mkdir()
    (m.mountpoint / "emptied/f.md").write_text("soon gone\n")
    os.unlink(m.mountpoint / "emptied/f.md")  # the directory stays, as on a local disk
    with pytest.raises(OSError):
        (m.mountpoint / "notes/.brainfs-dir").write_text("reserved")
    assert m.stop() == 0
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    mp = fresh.mountpoint
    assert (mp / "notes/empty/deeper").is_dir() and os.listdir(mp / "notes/empty/deeper") == []
    assert (mp / "emptied").is_dir() and os.listdir(mp / "emptied") == []
    assert ".brainfs-dir" not in os.listdir(mp / "notes/empty")
    os.rmdir(mp / "notes/empty/deeper")
    os.rename(mp / "emptied", mp / "renamed")
    assert fresh.stop() == 0
    third = mounter(corpus, name="third", cfg=cfg.override(cache_dir=tmp_path / "third-cache"))
    mp = third.mountpoint
    assert (mp / "notes/empty").is_dir() and not (mp / "notes/empty/deeper").exists()
    assert (mp / "renamed").is_dir() and not (mp / "emptied").exists()
    assert third.stop() == 0


# ============================================================== 10. big files in parts


def test_big_files_upload_in_parts_streamed_from_the_cache(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    """Above the threshold a file goes up as a multipart upload read part by part; the
    object is whole, its next version is no conflict, and a fresh cache reads it back."""
    env = {"BRAINFS_MULTIPART_THRESHOLD_BYTES": str(6 << 20),
           "BRAINFS_MULTIPART_PART_BYTES": str(5 << 20)}
    m = mounter(corpus, env_extra=env)
    big = os.urandom(11 << 20)  # three parts: 5 + 5 + 1 MiB
    write_fsync_close(m.mountpoint / "notes/big.bin", big)
    wait_for(lambda: s3get(store, "notes/big.bin") == big, what="the multipart upload", timeout=60)
    bigger = big + os.urandom(1 << 20)
    write_fsync_close(m.mountpoint / "notes/big.bin", bigger)
    wait_for(lambda: s3get(store, "notes/big.bin") == bigger, what="the second version", timeout=60)
    assert m.stop() == 0
    assert conflicts(cfg, corpus) == []
    fresh = mounter(corpus, name="fresh", cfg=cfg.override(cache_dir=tmp_path / "fresh-cache"))
    assert (fresh.mountpoint / "notes/big.bin").read_bytes() == bigger


def test_times_follow_changes_as_on_a_local_disk(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    p = m.mountpoint / "notes/a.md"
    before = os.stat(p)
    time.sleep(0.05)
    os.truncate(p, 2)  # by path: no close follows
    after = os.stat(p)
    assert after.st_size == 2
    assert after.st_mtime_ns > before.st_mtime_ns and after.st_ctime_ns > before.st_ctime_ns
    t0 = time.time_ns()
    (m.mountpoint / "fresh-dir").mkdir()
    assert os.stat(m.mountpoint / "fresh-dir").st_mtime_ns >= t0 - 10**9


def test_long_names_are_enametoolong_for_every_operation(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    long = m.mountpoint / ("n" * 256)
    for op in (os.stat, os.unlink, os.rmdir, lambda p: os.truncate(p, 0), lambda p: os.chmod(p, 0o644)):
        with pytest.raises(OSError) as e:
            op(long)
        assert e.value.errno == errno.ENAMETOOLONG


def test_directory_times_can_be_set(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    d = m.mountpoint / "notes"
    os.utime(d, ns=(1_000_000_000_000_000_000, 1_600_000_000_000_000_000))
    assert os.stat(d).st_mtime_ns == 1_600_000_000_000_000_000


def test_an_unlinked_file_stays_readable_through_its_open_descriptor(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    p = m.mountpoint / "notes/a.md"
    fd = os.open(p, os.O_RDWR)
    try:
        os.unlink(p)
        assert not p.exists()
        assert os.fstat(fd).st_size == len(TREE["notes/a.md"])
        assert os.pread(fd, 100, 0) == TREE["notes/a.md"].encode()
        os.pwrite(fd, b"CARD", 0)
        assert os.pread(fd, 4, 0) == b"CARD"
    finally:
        os.close(fd)
    assert not p.exists()
    (m.mountpoint / "notes/b.md").write_text("replaced soon\n")
    fd = os.open(m.mountpoint / "notes/b.md", os.O_RDONLY)
    try:
        (m.mountpoint / "notes/c.md").write_text("the new b\n")
        os.rename(m.mountpoint / "notes/c.md", m.mountpoint / "notes/b.md")
        assert os.pread(fd, 100, 0) == b"replaced soon\n"
    finally:
        os.close(fd)
    assert (m.mountpoint / "notes/b.md").read_text() == "the new b\n"
    # Written and not yet closed when unlinked: the descriptor reads what it wrote.
    fd = os.open(m.mountpoint / "notes/w.md", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"Hello, World!")
        os.unlink(m.mountpoint / "notes/w.md")
        assert os.pread(fd, 13, 0) == b"Hello, World!"
        assert os.fstat(fd).st_size == 13
    finally:
        os.close(fd)
    assert not (m.mountpoint / "notes/w.md").exists()
    assert m.stop() == 0


def test_directory_link_count_counts_subdirectories(seeded, corpus, mounter) -> None:
    m = mounter(corpus)
    mp = m.mountpoint
    assert os.stat(mp / "tree").st_nlink == 3  # tree/sub
    os.mkdir(mp / "tree/other")
    assert os.stat(mp / "tree").st_nlink == 4
    assert os.stat(mp / "tree/other").st_nlink == 2
    os.rmdir(mp / "tree/other")
    assert os.stat(mp / "tree").st_nlink == 3


def test_crash_inside_a_rename_over_a_file_being_written_keeps_the_moved_file(
        seeded, corpus, mounter, store) -> None:
    """commit = quiet: a writer's uncommitted shadow of doc.md is recorded so that a crash
    commits it; `mv new.md doc.md` replaces that name. A crash right after the rename's
    catalog commit must not apply the old writer's shadow over the moved file (a review:
    the record was dropped only after the rename)."""
    env = {"BRAINFS_COMMIT": "quiet", "BRAINFS_COMMIT_IDLE_SECONDS": "60",
           "BRAINFS_CRASH_AT": "rename-after-catalog"}
    m = mounter(corpus, env_extra=env)
    doc, new = m.mountpoint / "d/doc.md", m.mountpoint / "d/new.md"
    fd = os.open(doc, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, b"half of a rewrite by a writer still at work\n")
        moved = b"the file moved over it\n" * 20
        write_fsync_close(new, moved)
        try:
            os.rename(new, doc)
        except OSError:
            pass  # the daemon died under the request
        died_by_itself(m)
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    m2 = mounter(corpus, name="mnt2", env_extra={"BRAINFS_COMMIT": "quiet"})
    assert (m2.mountpoint / "d/doc.md").read_bytes() == moved
    assert not (m2.mountpoint / "d/new.md").exists()
