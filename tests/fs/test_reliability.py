"""Reliability and security (issue 7): a memory that is never lost, never corrupted, never
leaked. Real mounts, a real S3 server, the fault-injecting proxy in between.

Sections: crashes (kill -9 at five points), backend faults under load, a full cache disk,
hostile input (S3 keys, file names, malformed Markdown), concurrent writers, isolation.
The numbers each section measures are printed at the end of the module (run with ``-s``).

A test marked ``xfail(strict=True)`` holds a bug found here: it fails today and flips to
an unexpected pass (a suite failure) once the bug is fixed, so the mark must go with it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import botocore.exceptions
import pytest

from benchmarks.s3proxy import FaultPlan
from benchmarks.soak import op_bound, run_load, seed_corpus, settle
from brainfs.backend.config import Config
from brainfs.backend.keys import LINK_SUFFIX, CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore

from helpers import (Mount, mounted_tmpfs, all_keys, is_mounted, raw_client, s3get, start_mount, upload_tree,
                     wait_for, write_tree)

pytestmark = pytest.mark.mount

TREE = {
    "GUIDE.md": "Always answer in English.\n",
    "knowledge/INDEX.md": "- [[kyoto]] the Kyoto trip\n",
    "knowledge/kyoto.md": "---\ntitle: Kyoto\n---\nMet Sora City Lab in Kyoto [cite:1].\n",
    "notes/travel/sendai.md": "Sapphir Mobility Coop is in Sendai.\n",
    "sessions/index.md": "- 2026-01-02-kyoto | 2026-01-02 | Kyoto\n",
    "sessions/2026-01-02-kyoto/summary.md": "Kyoto workshop.\n",
    "sessions/2026-01-02-kyoto/transcript.md": "[D1:1] Nadia: We met Sora City Lab.\n",
    "sessions/2025-03-01-old/transcript.md": "[D1:1] Nadia: an old zebrafish story.\n" * 50,
    "sessions/2025-03-01-old/summary.md": "Old session.\n",
}
OLD = "sessions/2025-03-01-old/transcript.md"
CONSISTENCY = re.compile(r"consistency check: (\d+) temp files removed, (\d+) damaged copies dropped "
                         r"for refetch, (\d+) journal entries restored, (\d+) stale journal entries "
                         r"dropped, (\d+) orphan blobs removed, (?:\d+) interrupted commits "
                         r"completed, (?:\d+) interrupted deletes restored, "
                         r"(?:\d+) uncommitted writes recovered, "
                         r"(\d+) unrecoverable dirty files")

#: What the module measured, printed at the end (``pytest -s``) and in the report.
TALLY: Counter = Counter()
NOTES: dict[str, object] = {}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    lines = [f"  {k}: {v}" for k, v in sorted(TALLY.items())]
    lines += [f"  {k}: {v}" for k, v in NOTES.items()]
    sys.stdout.write("\n--- reliability numbers ---\n" + "\n".join(lines) + "\n")


# --------------------------------------------------------------------------- helpers


def consistency_line(log: Path) -> tuple[int, ...]:
    m = CONSISTENCY.search(log.read_text(errors="replace"))
    assert m, f"no consistency-check line in {log}"
    return tuple(int(g) for g in m.groups())


def spawn_mount(url: CorpusURL, mp: Path, cfg: Config, env_extra: dict[str, str] | None = None) -> Mount:
    """Start a daemon like conftest.start_mount, but return at once (before it is mounted)."""
    mp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update({
        "AWS_ENDPOINT_URL": cfg.endpoint_url or "", "BRAINFS_CACHE_DIR": str(cfg.cache_dir),
        "BRAINFS_CONNECT_TIMEOUT": str(cfg.connect_timeout),
        "BRAINFS_READ_TIMEOUT": str(cfg.read_timeout), "BRAINFS_MAX_ATTEMPTS": str(cfg.max_attempts),
        "BRAINFS_CONFIG": "/dev/null", "BRAINFS_RECALL_WARMUP": "0",
    })
    env.pop("AWS_ACCESS_KEY_ID", None)
    env.pop("AWS_SECRET_ACCESS_KEY", None)
    env.update(env_extra or {})
    log = Path(str(cfg.cache_dir) + f"-spawn-{time.monotonic_ns()}.log")
    with open(log, "wb") as lf:
        proc = subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "mount", str(url), str(mp),
                                 "--foreground"], env=env, stdin=subprocess.DEVNULL, stdout=lf,
                                stderr=subprocess.STDOUT)
    return Mount(proc, mp, url, env, log)


def cli(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", TREE)
    upload_tree(store, src)
    return src


# =========================================================================== crashes
#
# Every crash point: some files are closed (journaled, their uploads refused by the proxy)
# before the daemon is killed with SIGKILL; a remount on the same cache must upload every
# one of them intact, never serve a partial write as complete, and log its repairs.

CLOSED = {
    "notes/closed/new.md": b"a new card, closed before the crash\n" * 20,
    "knowledge/kyoto.md": b"---\ntitle: Kyoto\n---\nRewritten before the crash.\n",
}


def _write_closed(mp: Path) -> None:
    (mp / "notes/closed").mkdir(parents=True, exist_ok=True)
    for rel, data in CLOSED.items():
        with open(mp / rel, "wb") as f:
            f.write(data)
    os.rename(mp / "notes/travel/sendai.md", mp / "notes/travel/sendai-renamed.md")


def _expect_after_crash() -> dict[str, bytes | None]:
    want: dict[str, bytes | None] = {k: v for k, v in CLOSED.items()}
    want["notes/travel/sendai-renamed.md"] = TREE["notes/travel/sendai.md"].encode()
    want["notes/travel/sendai.md"] = None
    return want


def _remount_and_verify(corpus, mounter, store, name: str) -> tuple[int, ...]:
    m2 = mounter(corpus, name=name)
    want = _expect_after_crash()

    def landed() -> bool:
        return all(s3get(store, p) == v for p, v in want.items())

    try:
        wait_for(landed, timeout=30, what="journaled writes uploaded after remount")
    except AssertionError:
        pass
    lost = [p for p, v in want.items() if s3get(store, p) != v]
    for p, v in want.items():
        if v is not None:
            try:
                if (m2.mountpoint / p).read_bytes() != v:
                    lost.append(p + " (mount)")
            except OSError:
                lost.append(p + " (mount)")
    TALLY["crash points tried"] += 1
    TALLY["files lost after crash"] += len(lost)
    assert not lost, f"lost after crash: {lost}"
    assert m2.alive()
    assert m2.stop() == 0
    return consistency_line(m2.log)


def test_crash_during_preload(seeded, corpus, mounter, store, cfg, proxy, tmp_path) -> None:
    # Many files behind a slow proxy: the preload takes seconds. First a crash after close.
    proxy.force("slowdown", count=100_000, methods={"PUT", "DELETE"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url))
    _write_closed(m.mountpoint)
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 1, what="a refused upload")
    m.kill9()
    # New objects (another writer): the next start has a long preload to do.
    bulk = {f"notes/bulk/card-{i:03d}.md": f"card {i}\n".encode() * 200 for i in range(240)}
    for p, d in bulk.items():
        store.put(p, d)
    # The refused journal must survive a second crash, this one in the middle of a preload.
    proxy.set_delay(0.25)
    proxy.reset_stats()
    m2 = spawn_mount(corpus, tmp_path / "mnt-preload", cfg.override(endpoint_url=proxy.url))
    try:
        wait_for(lambda: proxy.stats["requests"] >= 60, timeout=30, what="preload under way")
        assert not is_mounted(m2.mountpoint), "preload finished before the kill"
        m2.kill9()
    finally:
        m2.cleanup()
    proxy.set_delay(0.0)
    temp_removed, *_ = _remount_and_verify(corpus, mounter, store, "mnt3")
    # Staged downloads of the killed preload are swept (the check line says how many).
    NOTES["preload crash: consistency check"] = f"{temp_removed} temp files removed"


def test_crash_during_lazy_fetch(seeded, corpus, mounter, store, cfg, proxy) -> None:
    proxy.force("slowdown", count=100_000, methods={"PUT", "DELETE"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1"})
    _write_closed(m.mountpoint)
    assert "transcript.md" not in os.listdir(m.mountpoint / "sessions/2025-03-01-old")
    proxy.force("stall", count=100, methods={"GET"}, key_pattern="2025-03-01-old")
    errs: list[BaseException] = []

    def cat() -> None:
        try:
            (m.mountpoint / OLD).read_bytes()
        except OSError as e:
            errs.append(e)

    t = threading.Thread(target=cat, daemon=True)
    t.start()
    wait_for(lambda: proxy.stats["faults"].get("stall", 0) >= 1, what="the GET to stall")
    m.kill9()
    t.join(timeout=10)
    assert not t.is_alive(), "a reader hung on a killed mount"
    proxy.clear_forced()
    _remount_and_verify(corpus, mounter, store, "mnt2")
    m3 = mounter(corpus, name="mnt3")
    assert (m3.mountpoint / OLD).read_text() == TREE[OLD]
    m3.stop()


def test_crash_during_write(seeded, corpus, mounter, store, cfg, proxy) -> None:
    proxy.force("slowdown", count=100_000, methods={"PUT", "DELETE"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url))
    _write_closed(m.mountpoint)
    mp = m.mountpoint
    # Open files, partially written, never closed: an overwrite and a new file.
    f1 = open(mp / "GUIDE.md", "r+b")
    f1.write(b"HALF OF A NEW GUIDE")
    f1.flush()
    f2 = open(mp / "notes/partial.md", "wb")
    f2.write(b"half of a new note")
    f2.flush()
    m.kill9()
    for f in (f1, f2):
        try:
            f.close()
        except OSError:
            pass
    temp_removed, *_ = _remount_and_verify(corpus, mounter, store, "mnt2")
    assert temp_removed >= 1  # the shadows of the two open files
    # Old or new complete content, never the half-written one.
    assert s3get(store, "GUIDE.md") == TREE["GUIDE.md"].encode()
    assert s3get(store, "notes/partial.md") in (None, b"")  # created (empty) or absent
    m3 = mounter(corpus, name="mnt3")
    assert (m3.mountpoint / "GUIDE.md").read_text() == TREE["GUIDE.md"]
    m3.stop()


def test_crash_between_close_and_upload(seeded, corpus, mounter, store, cfg, proxy) -> None:
    proxy.force("slowdown", count=100_000, methods={"PUT", "DELETE"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url))
    _write_closed(m.mountpoint)
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 2, what="refused uploads")
    m.kill9()
    assert s3get(store, "notes/closed/new.md") is None
    _, _, _, _, _, unrecoverable = _remount_and_verify(corpus, mounter, store, "mnt2")
    assert unrecoverable == 0


def test_crash_during_upload(seeded, corpus, mounter, store, cfg, proxy) -> None:
    proxy.set_faults(FaultPlan(stall_seconds=60))
    proxy.force("stall", count=100_000, methods={"PUT", "DELETE"})
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url))
    _write_closed(m.mountpoint)
    wait_for(lambda: proxy.stats["faults"].get("stall", 0) >= 1, what="a stalled upload")
    m.kill9()
    proxy.clear_forced()
    _remount_and_verify(corpus, mounter, store, "mnt2")


# =========================================================================== faults under load


def test_backend_faults_under_load(s3_server, corpus, store, mounter, cfg, proxy, tmp_path) -> None:
    truth = seed_corpus(store, seed=7, files=60, max_kb=24)
    budget = sum(len(d) for d in truth.values()) // 3  # evictions keep lazy fetches coming
    fcfg = cfg.override(endpoint_url=proxy.url, connect_timeout=1.0, read_timeout=1.5, max_attempts=3)
    m = mounter(corpus, cfg=fcfg, env_extra={
        "BRAINFS_CACHE_BUDGET_BYTES": str(budget), "BRAINFS_PRELOAD_GLOBS": "knowledge/*",
        "BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "0", "BRAINFS_RELIST_SECONDS": "2",
        "BRAINFS_UPLOAD_RETRY_SECONDS": "1"})
    bound = op_bound(fcfg.max_attempts, fcfg.connect_timeout, fcfg.read_timeout)
    proxy.set_faults(FaultPlan(seed=11, error_rate=0.05, stall_rate=0.01,
                               stall_seconds=fcfg.read_timeout + 1.0,
                               corrupt_rate=0.01, truncate_rate=0.01))
    res, versions = run_load(m.mountpoint, truth, proxy, seconds=20, seed=11, bound=bound)
    proxy.set_faults(None)
    res = settle(res, m.mountpoint, store, truth, versions, timeout=60)
    TALLY["requests under fault injection"] += res.requests
    TALLY["wrong bytes served (corpus files)"] += res.wrong_bytes
    TALLY["files lost under faults"] += res.files_lost
    NOTES["faults injected"] = res.faults
    NOTES["reads / read errors"] = f"{res.reads} / {res.read_errors}"
    NOTES["torn reads of files being rewritten"] = res.torn_reads
    NOTES["longest op under faults"] = f"{res.longest_op_s:.2f}s ({res.longest_op}); bound {bound:.1f}s"
    assert m.alive()
    assert res.wrong_bytes == 0, res.wrong_examples
    assert res.grep_wrong == 0, res.wrong_examples
    assert res.hung == 0
    assert res.files_lost == 0, res.lost
    assert res.unreadable_after == []
    assert set(res.read_errors) <= {"EIO"}, (res.read_errors, res.wrong_examples)
    assert res.write_errors == {}
    assert res.longest_op_s <= bound, res.longest_op
    assert sum(res.faults.values()) > 20 and res.requests > 200


def test_stalled_backend_fails_within_the_timeouts(seeded, corpus, mounter, cfg, proxy) -> None:
    # Every GET stalls: a lazy fetch must fail with EIO within attempts x (connect + read).
    fcfg = cfg.override(endpoint_url=proxy.url, connect_timeout=1.0, read_timeout=1.5, max_attempts=3)
    m = mounter(corpus, cfg=fcfg, env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1"})
    proxy.set_faults(FaultPlan(stall_seconds=30))
    proxy.force("stall", count=1000, methods={"GET"})
    bound = op_bound(fcfg.max_attempts, fcfg.connect_timeout, fcfg.read_timeout)
    t0 = time.monotonic()
    with pytest.raises(OSError) as e:
        (m.mountpoint / OLD).read_bytes()
    took = time.monotonic() - t0
    NOTES["longest op, every GET stalled"] = (
        f"{took:.2f}s; timeout bound {bound - 3:.1f}s (+3s slack), "
        f"attempts={fcfg.max_attempts} connect={fcfg.connect_timeout}s read={fcfg.read_timeout}s")
    assert e.value.errno == errno.EIO
    assert took <= bound, took
    # The working set stays readable meanwhile.
    assert (m.mountpoint / "GUIDE.md").read_text() == TREE["GUIDE.md"]
    proxy.clear_forced()
    assert m.alive()


def test_reader_never_sees_a_write_in_progress(seeded, corpus, mounter) -> None:
    # SEMANTICS.md: "readers never see half-committed [files] ... the committed content
    # changes by one rename". A second process reading while a writer has the file open.
    m = mounter(corpus)
    p = m.mountpoint / "knowledge/kyoto.md"
    old = TREE["knowledge/kyoto.md"].encode()
    assert p.read_bytes() == old
    new = b"new content, not yet closed"
    with open(p, "wb") as w:
        seen_truncated = p.read_bytes()
        w.write(new)
        w.flush()
        seen_partial = p.read_bytes()
    NOTES["reader during a write sees"] = f"{seen_truncated!r} then {seen_partial[:30]!r}"
    # As on a local disk, the size a reader sees moves with the writer (the kernel's inode
    # is shared); what must never happen is a byte that is neither old nor written: a
    # reader gets a prefix of the old content or of the new one, never a mix.
    for seen in (seen_truncated, seen_partial):
        assert old.startswith(seen) or new.startswith(seen), seen
    assert p.read_bytes() == new



# =========================================================================== full disk


def _oversize_write(path: Path, chunks: int = 12) -> tuple[str | None, str | None]:
    """Write 6 MB to ``path`` on a 4 MB cache; the errno names of write(2) and close(2)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    write_err = close_err = None
    try:
        for _ in range(chunks):
            os.write(fd, os.urandom(500_000))
    except OSError as e:
        write_err = errno.errorcode.get(e.errno, str(e.errno))
    try:
        os.close(fd)
    except OSError as e:
        close_err = errno.errorcode.get(e.errno, str(e.errno))
    return write_err, close_err


@pytest.fixture
def small_tmpfs(tmp_path: Path):
    with mounted_tmpfs(tmp_path / "tmpfs-cache", "4m") as d:
        yield d


def test_full_cache_disk(corpus, store, mounter, cfg, small_tmpfs) -> None:
    files = {f"notes/big/f{i:02d}.bin": os.urandom(400_000) for i in range(10)}  # 4 MB > tmpfs
    for p, d in files.items():
        store.put(p, d)
    dcfg = cfg.override(cache_dir=small_tmpfs)
    m = mounter(corpus, cfg=dcfg, env_extra={"BRAINFS_CACHE_BUDGET_BYTES": "1600000",
                                             "BRAINFS_PRELOAD_GLOBS": "*"})
    mp = m.mountpoint
    # Eviction makes room: every file can be read, whatever the preload could not keep.
    for rnd in range(2):
        for p, d in files.items():
            assert (mp / p).read_bytes() == d, p
    # A write that cannot fit: ENOSPC at the writer (write(2) fails; close may fail too).
    write_err, close_err = _oversize_write(mp / "notes/too-big.bin")
    NOTES["full disk: oversize write"] = f"write -> {write_err}, close -> {close_err}"
    assert write_err == "ENOSPC"
    NOTES["full disk: daemon alive after the oversize write"] = m.alive()
    TALLY["mount crashes"] += 0 if m.alive() else 1
    # Nothing already stored is damaged: S3 holds every file as it was, and a remount on
    # the same (still full) cache serves each one right.
    for p, d in files.items():
        assert s3get(store, p) == d
    NOTES["full disk: oversize file in S3"] = (
        "absent" if s3get(store, "notes/too-big.bin") is None
        else f"{len(s3get(store, 'notes/too-big.bin') or b'')} bytes")
    assert s3get(store, "notes/too-big.bin") in (None, b"")
    m.stop()
    m2 = mounter(corpus, name="mnt2", cfg=dcfg, env_extra={"BRAINFS_CACHE_BUDGET_BYTES": "1600000"})
    for p, d in files.items():
        assert (m2.mountpoint / p).read_bytes() == d, p
    NOTES["full disk: remount check"] = "temp/damaged/orphans: %s" % (consistency_line(m2.log)[:5],)
    assert m2.stop() == 0


def test_failed_write_keeps_the_old_version(corpus, store, mounter, cfg, small_tmpfs) -> None:
    # A write(2) that failed with ENOSPC must not become the file's content: the
    # shadow holds a prefix of what the writer meant, and an existing file would be
    # replaced by it.
    store.put("notes/target.md", b"the complete old version\n")
    dcfg = cfg.override(cache_dir=small_tmpfs)
    m = mounter(corpus, cfg=dcfg, env_extra={"BRAINFS_CACHE_BUDGET_BYTES": "1000000"})
    mp = m.mountpoint
    write_err, close_err = _oversize_write(mp / "notes/target.md")
    assert write_err == "ENOSPC"
    NOTES["full disk: overwrite of an existing file"] = f"write -> {write_err}, close -> {close_err}"
    served = (mp / "notes/target.md").read_bytes()
    NOTES["full disk: mount then serves"] = f"{len(served)} bytes"
    assert s3get(store, "notes/target.md") == b"the complete old version\n"
    assert served == b"the complete old version\n"


def test_full_cache_disk_keeps_the_mount_alive(corpus, store, mounter, cfg, small_tmpfs) -> None:
    # The disk stays full after a failed write; the daemon's periodic work (atime
    # persistence every 30 s, uploads, relists) must not kill it.
    store.put("GUIDE.md", b"guide\n")
    m = mounter(corpus, cfg=cfg.override(cache_dir=small_tmpfs),
                env_extra={"BRAINFS_CACHE_BUDGET_BYTES": "1000000", "BRAINFS_RELIST_SECONDS": "2"})
    t0 = time.monotonic()
    _oversize_write(m.mountpoint / "notes-fill.bin")
    (m.mountpoint / "GUIDE.md").read_bytes()
    while time.monotonic() - t0 < 33 and m.alive():
        time.sleep(0.5)
    alive = m.alive()
    NOTES["full disk: daemon alive 33 s after the disk filled"] = (
        alive or f"no, died after {time.monotonic() - t0:.0f}s")
    TALLY["mount crashes"] += 0 if alive else 1
    assert alive
    assert (m.mountpoint / "GUIDE.md").read_bytes() == b"guide\n"




# =========================================================================== hostile input


def test_hostile_object_keys(s3_server, corpus, store, mounter, cfg, tmp_path) -> None:
    c = raw_client(s3_server.url)
    b, pre = corpus.bucket, corpus.prefix
    big = tmp_path / "big.bin"
    chunk = os.urandom(1 << 20)
    h = hashlib.sha256()
    with open(big, "wb") as f:
        for i in range(200):
            block = chunk[:-8] + i.to_bytes(8, "big")
            f.write(block)
            h.update(block)
    keys = {
        "dotdot": f"{pre}/../escape.md",
        "dotdot-inner": f"{pre}/x/../y.md",
        "dot": f"{pre}/./dot.md",
        "double-slash": f"{pre}/dbl//slash.md",
        "control-char": f"{pre}/ctrl\x01name.md",
        "newline": f"{pre}/new\nline.md",
        "del-char": f"{pre}/del\x7fname.md",
        "name-over-255": f"{pre}/" + "n" * 300 + ".md",
        "deep-ok": f"{pre}/" + "/".join(["d"] * 150) + "/deep.md",
        "deep-too-long": f"{pre}/" + "/".join(["e"] * 480) + "/deep.md",
        "zero-byte": f"{pre}/empty.md",
        "file-and-prefix": f"{pre}/both",
        "file-and-prefix-child": f"{pre}/both/child.md",
        "dir-marker": f"{pre}/marker/",
        "encoded-dotdot": f"{pre}/%2e%2e/enc.md",
        "backslash": f"{pre}/..\\b\\x.md",
        "unicode": f"{pre}/notes/café ☕ — 日本.md",
        "internal": f"{pre}/.brainfs/hidden.md",
    }
    outcome: dict[str, str] = {}
    for name, key in keys.items():
        try:
            c.put_object(Bucket=b, Key=key, Body=f"body of {name}\n".encode() if name != "zero-byte" else b"")
            outcome[name] = "stored"
        except Exception as e:  # noqa: BLE001 - the server's refusal is the defined behaviour
            outcome[name] = f"server refused ({type(e).__name__})"
    c.upload_file(str(big), b, f"{pre}/large.bin")
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_GLOBS": "*"})
    mp = m.mountpoint
    served = {
        "dotdot-inner": None, "dot": None, "double-slash": None, "control-char": None,
        "newline": None, "del-char": None, "name-over-255": None, "deep-too-long": None,
        "dir-marker": None, "internal": None,
    }
    assert outcome["dotdot"].startswith("server refused"), "rclone stores '..' keys now: recheck"
    assert (mp / "empty.md").read_bytes() == b""
    assert (mp / ("/".join(["d"] * 150) + "/deep.md")).read_bytes() == b"body of deep-ok\n"
    assert (mp / "%2e%2e/enc.md").read_bytes() == b"body of encoded-dotdot\n"
    assert (mp / "..\\b\\x.md").read_bytes() == b"body of backslash\n"
    assert (mp / "notes/café ☕ — 日本.md").read_bytes() == b"body of unicode\n"
    if outcome["file-and-prefix"] == outcome["file-and-prefix-child"] == "stored":
        assert (mp / "both").is_dir()
        assert (mp / "both/child.md").read_bytes() == b"body of file-and-prefix-child\n"
    else:  # rclone's local backend cannot hold a file and a directory of one name
        assert (mp / "both").is_file() and (mp / "both").read_bytes() == b"body of file-and-prefix\n"
    # A streamed 200 MB object is one cat away and arrives intact.
    t0 = time.monotonic()
    hh = hashlib.sha256()
    with open(mp / "large.bin", "rb") as f:
        while block := f.read(1 << 20):
            hh.update(block)
    NOTES["200 MB lazy cat"] = f"{time.monotonic() - t0:.1f}s"
    assert hh.hexdigest() == h.hexdigest()
    log = m.log.read_text(errors="replace")
    st = json.loads((mp / ".brainfs/status").read_text())
    skipped = sum(1 for n in served if outcome[n] == "stored")
    for n in served:
        if outcome[n] == "stored":
            outcome[n] += ", skipped with a warning"
    assert "skipping object" in log
    NOTES["hostile keys"] = outcome
    NOTES["skipped keys in status"] = st["skipped_keys"]
    TALLY["hostile names tried"] += len(keys) + 1
    assert "dot.md" not in os.listdir(mp) and "escape.md" not in os.listdir(mp)
    assert m.alive() and os.listdir(mp)
    TALLY["mount crashes"] += 0 if m.alive() else 1
    assert m.stop() == 0
    assert skipped >= 4  # control characters, DEL, too deep, directory marker, internal


def test_hostile_object_keys_are_counted_in_status(s3_server, corpus, store, mounter) -> None:
    # SEMANTICS.md: "Objects in S3 with such keys are skipped with a warning and counted in
    # `brainfs status`."
    c = raw_client(s3_server.url)
    store.put("GUIDE.md", b"g\n")
    for key in ("ctrl\x01.md", "bell\x07.md", "a//b.md", "x" * 300):
        try:
            c.put_object(Bucket=corpus.bucket, Key=f"{corpus.prefix}/{key}", Body=b"x")
        except botocore.exceptions.ClientError:
            pass  # rclone refuses some keys outright ("//")
    # What the server really holds (it may also rewrite a key on the way in): every listed
    # key that is not a valid corpus path must be counted.
    from brainfs.backend.keys import path_problem

    listed = [k[len(corpus.prefix) + 1:] for k in all_keys(c, corpus.bucket)]
    hostile = [k for k in listed if path_problem(k)]
    assert hostile
    m = mounter(corpus)
    st = json.loads((m.mountpoint / ".brainfs/status").read_text())
    assert st["skipped_keys"] == len(hostile), (st["skipped_keys"], hostile)



def test_hostile_file_names_through_the_mount(seeded, corpus, mounter, store) -> None:
    m = mounter(corpus)
    mp = os.fsencode(m.mountpoint)
    names: dict[str, bytes] = {
        "control": b"a\x01b.md", "newline": b"a\nb.md", "tab": b"a\tb.md", "del": b"a\x7fb.md",
        "escape": b"\x1b[31mred.md", "non-utf8": b"\xff\xfe.md", "non-utf8-2": b"caf\xe9.md",
        "256-bytes": b"x" * 256, "1000-bytes": b"y" * 1000, "1100-bytes": b"z" * 1100,
        "255-bytes": b"w" * 252 + b".md", "dotdot": b"..", "dot": b".", "reserved": b".brainfs",
        "recall": b".recall", "percent": b"%2e%2e", "backslash": b"..\\..\\b", "spaces": b"  .md  ",
        "unicode": "日本語 ☕.md".encode(), "rtl": "\u202eevil.md".encode(), "dash": b"-rf",
    }
    outcome: dict[str, str] = {}
    allowed_errors = {errno.EINVAL, errno.ENAMETOOLONG, errno.EEXIST, errno.EISDIR, errno.EACCES,
                      errno.EPERM, errno.ENOSYS, errno.ENOENT}
    for label, name in names.items():
        for op in ("create", "mkdir", "rename-to"):
            target = mp + b"/notes/" + name if label not in ("reserved", "recall") else mp + b"/" + name
            try:
                if op == "create":
                    fd = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
                    os.write(fd, b"hostile " + name)
                    os.close(fd)
                elif op == "mkdir":
                    os.mkdir(target + b"-d")
                else:
                    src = mp + b"/notes/rename-src-" + str(abs(hash(label))).encode()
                    with open(src, "wb") as f:
                        f.write(b"r")
                    os.rename(src, target + b"-r")
                result = "ok"
            except OSError as e:
                result = errno.errorcode.get(e.errno, str(e.errno))
                assert e.errno in allowed_errors, (label, op, e)
            outcome[f"{label}/{op}"] = result
            TALLY["hostile names tried"] += 1
            assert m.alive(), f"daemon died on {label}/{op}"
            os.listdir(m.mountpoint)  # the mount answers
    # A symlink out of the mount is refused (EPERM, test_external_links.py), and so are
    # hard links and special files.
    for label, fn in (("symlink", lambda: os.symlink("/etc/passwd", mp + b"/notes/link")),
                      ("hardlink", lambda: os.link(mp + b"/GUIDE.md", mp + b"/notes/hard")),
                      ("fifo", lambda: os.mkfifo(mp + b"/notes/fifo"))):
        try:
            fn()
            outcome[label] = "ok"
        except OSError as e:
            outcome[label] = errno.errorcode.get(e.errno, str(e.errno))
        TALLY["hostile names tried"] += 1
        assert m.alive()
    NOTES["hostile names through the mount"] = outcome
    # Every name the mount accepted is a valid corpus path; the invalid ones are EINVAL, the
    # ones past the length limits ENAMETOOLONG.
    for label in ("control", "newline", "tab", "del", "escape", "non-utf8", "non-utf8-2"):
        assert outcome[f"{label}/create"] == "EINVAL", (label, outcome[f"{label}/create"])
    for label in ("256-bytes", "1000-bytes", "1100-bytes"):
        assert outcome[f"{label}/create"] == "ENAMETOOLONG", (label, outcome[f"{label}/create"])
    for label in ("255-bytes", "unicode", "percent", "backslash", "spaces", "rtl", "dash"):
        assert outcome[f"{label}/create"] == "ok"
    # A link out of the mount is refused by default (test_external_links.py).
    assert outcome["symlink"] == "EPERM" and not os.path.lexists(mp + b"/notes/link")
    assert outcome["hardlink"] != "ok" and outcome["fifo"] != "ok"
    # The daemon is alive and the accepted names reach S3 intact.
    wait_for(lambda: s3get(store, "notes/日本語 ☕.md") == "hostile 日本語 ☕.md".encode(), what="upload")
    assert s3get(store, "notes/link" + LINK_SUFFIX) is None and s3get(store, "notes/link") is None
    TALLY["mount crashes"] += 0 if m.alive() else 1
    assert m.stop() == 0


def test_malformed_markdown_never_crashes_index_or_dream(corpus, store, cfg, tmp_path) -> None:
    bad: dict[str, bytes] = {
        "knowledge/unclosed.md": b"---\ntitle: never closed\ntype: entity\n\nbody",
        "knowledge/bad-yaml.md": b"---\ntitle: [unbalanced\n  - : :\n---\nbody\n",
        "knowledge/list-fm.md": b"---\n- a\n- b\n---\nbody\n",
        "knowledge/scalar-fm.md": b"---\njust a string\n---\n",
        "knowledge/binary.md": os.urandom(4096),
        "knowledge/nul.md": b"title\x00with NUL\x00\n" * 10,
        "knowledge/latin1.md": "---\ntitle: caf\xe9\n---\nd\xe9j\xe0 vu\n".encode("latin-1"),
        "knowledge/empty.md": b"",
        "knowledge/only-dashes.md": b"---\n---\n---\n",
        "knowledge/huge-line.md": b"x" * 2_000_000,
        "knowledge/bad-cites.md": b"---\ntitle: c\nsources: 7\n---\n[cite:99] [cite:x] [[\n[[a|b|c]] [[]]\n",
        "knowledge/weird-types.md": b"---\ntitle: 12\ntype: {a: 1}\nupdated: not-a-date\nsources: {x: y}\n---\nz\n",
        "notes/t/card.md": b"---\ntype: card\nconfidence: very\ncreated: yesterday\nsupersedes: [1, {}]\n---\nfact\n",
        "sessions/index.md": b"garbage | | |\n\x00\n",
        "sessions/s1/transcript.md": b"---\nsession: s1\ndate: 2023-13-45T99:99\nparticipants: Mara\n---\n\n"
                                     b"[D1:1] Mara: fine line.\n\n[D1:x] : no speaker\n\n[] nothing\n",
        "sessions/s2/transcript.md": b"---\nsession: [s2]\ndate: {}\n---\n[D2:1] Ana: \xff\xfe bytes\n",
        "sessions/s3/transcript.md": b"no frontmatter at all [D3:1] Mara inline",
        "sessions/s4/transcript.md": b"---\nsession: s4\ndate: 2023-05-08T10:00:00\nparticipants: [Mara]\n---\n"
                                     + b"[D4:1] Mara: " + b"word " * 200_000 + b"\n",
        "sessions/s5/summary.md": b"---\n: :\n---\n",
        "GUIDE.md": b"\xef\xbb\xbf---\ntitle: BOM\n---\nguide\n",
    }
    for p, d in bad.items():
        store.put(p, d)
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "c"), BRAINFS_EMBEDDER="none")
    r1 = cli("index", str(corpus), "--no-embed", env=env, timeout=240)
    r2 = cli("dream", str(corpus), "--no-index", "--no-embed", env=env, timeout=240)
    NOTES["malformed corpus"] = f"index rc {r1.returncode}, dream rc {r2.returncode}"
    TALLY["malformed files tried"] += len(bad)
    assert "Traceback" not in r1.stderr + r2.stderr
    assert r1.returncode == 0, r1.stderr[-2000:]
    assert r2.returncode == 0, r2.stderr[-2000:]


# =========================================================================== concurrency


def test_two_mounts_writing_the_same_file_keep_both(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"))
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"))
    # B must hold the original as its base when A's version lands, or B's write is simply
    # based on A's (B's first listing, taken after A's upload, would show it): no conflict.
    a.wait_listed(), b.wait_listed()
    rel = "knowledge/kyoto.md"
    assert (a.mountpoint / rel).read_text() == (b.mountpoint / rel).read_text() == TREE[rel]
    ours_a, ours_b = b"version written by mount A\n", b"version written by mount B\n"
    (a.mountpoint / rel).write_bytes(ours_a)
    wait_for(lambda: s3get(store, rel) == ours_a, what="A's upload")
    (b.mountpoint / rel).write_bytes(ours_b)
    c = raw_client(cfg.endpoint_url or "")

    def conflict_keys() -> list[str]:
        return [k for k in all_keys(c, corpus.bucket) if ".conflict-" in k]

    wait_for(lambda: conflict_keys(), what="a visible conflict copy")
    keys = conflict_keys()
    assert len(keys) == 1
    assert s3get(store, rel) == ours_a  # not silently clobbered
    conflict_rel = corpus.path(keys[0])
    assert s3get(store, conflict_rel) == ours_b
    wait_for(lambda: Path(conflict_rel).name in os.listdir(b.mountpoint / "knowledge"), what="conflict in B")
    assert (b.mountpoint / conflict_rel).read_bytes() == ours_b
    NOTES["two writers"] = f"original kept A's, B's bytes at {conflict_rel}"
    a.stop(), b.stop()


def test_a_conflict_keeps_one_copy_of_the_last_write_and_the_path_stays_listed(
        seeded, corpus, mounter, store, cfg, tmp_path, proxy) -> None:
    """B truncates then rewrites a file A changed (as `echo … > f` can): the truncation's
    upload loses the race while the rewrite is already waiting. One conflict copy, holding
    the rewrite, is kept (not a second, empty one), and the path stays in B's listing with
    A's version (found by a stranger's trial: an empty copy, and the file gone from ls)."""
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"))
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b",
                                                   endpoint_url=proxy.url))
    a.wait_listed(), b.wait_listed()
    rel = "knowledge/kyoto.md"
    ours_a, ours_b = b"version written by mount A\n", b"version written by mount B\n"
    (b.mountpoint / rel).read_bytes()
    (a.mountpoint / rel).write_bytes(ours_a)
    wait_for(lambda: s3get(store, rel) == ours_a, what="A's upload")
    proxy.set_delay(1.0)  # B's requests are slow: its first upload is in flight a while
    proxy.reset_stats()
    os.truncate(b.mountpoint / rel, 0)
    wait_for(lambda: proxy.stats["requests"] >= 1, timeout=30, what="the truncation's upload sent")
    (b.mountpoint / rel).write_bytes(ours_b)
    c = raw_client(cfg.endpoint_url or "")

    def copies() -> dict[str, bytes | None]:
        return {k: s3get(store, corpus.path(k)) for k in all_keys(c, corpus.bucket) if ".conflict-" in k}

    wait_for(lambda: ours_b in copies().values(), timeout=60, what="B's rewrite kept as a copy")
    proxy.set_delay(0.0)
    wait_for(lambda: len(copies()) == 1, timeout=60, what="the truncation's copy removed")
    assert list(copies().values()) == [ours_b]
    assert s3get(store, rel) == ours_a
    wait_for(lambda: "kyoto.md" in os.listdir(b.mountpoint / "knowledge"), timeout=30,
             what="the path listed in B")
    wait_for(lambda: (b.mountpoint / rel).read_bytes() == ours_a, what="B reading A's version")
    # B's status counts the copy and names it (before, only the log did).
    st = b.status()
    assert st["conflict_copies"] == 1 and st["conflict_examples"][0].startswith("knowledge/kyoto.conflict-")
    a.stop(), b.stop()


def test_conflict_loser_reads_the_winner(seeded, corpus, mounter, store, cfg, tmp_path) -> None:
    # After the conflict, B's own path holds A's content: B must read A's bytes there, not
    # its own from the kernel page cache (same size: keep_cache could keep B's pages).
    a = mounter(corpus, name="a", cfg=cfg.override(cache_dir=tmp_path / "cache-a"))
    b = mounter(corpus, name="b", cfg=cfg.override(cache_dir=tmp_path / "cache-b"))
    # B must hold the original as its base when A's version lands, or B's write is simply
    # based on A's (B's first listing, taken after A's upload, would show it): no conflict.
    a.wait_listed(), b.wait_listed()
    rel = "knowledge/kyoto.md"
    ours_a, ours_b = b"version written by mount A\n", b"version written by mount B\n"
    (b.mountpoint / rel).read_bytes()
    (a.mountpoint / rel).write_bytes(ours_a)
    wait_for(lambda: s3get(store, rel) == ours_a, what="A's upload")
    (b.mountpoint / rel).write_bytes(ours_b)
    c = raw_client(cfg.endpoint_url or "")
    wait_for(lambda: any(".conflict-" in k for k in all_keys(c, corpus.bucket)), what="conflict copy")
    # The copy lands during B's upload; B takes the outcome (its path now A's, the kernel's
    # pages dropped) once the upload pass is over: wait for that, not a fixed pause. Pages
    # never dropped would keep B's bytes here for good.
    wait_for(lambda: (b.mountpoint / rel).read_bytes() == ours_a, what="B reading A's version at its path")


TRANSCRIPT = ("---\nsession: {sid}\ndate: 2023-05-0{d}T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
              "[D{d}:1] Mara: I volunteer at the Kyoto Animal Shelter with Sora City Lab.\n\n"
              "[D{d}:2] Ana: Sora City Lab builds maps for wheelchair users in Kyoto.\n")


def _dream_env(cfg: Config, cache: Path) -> dict[str, str]:
    return dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(cache),
                BRAINFS_CONFIG="/dev/null", BRAINFS_EMBEDDER="none")


def test_dream_while_a_mount_writes(corpus, store, mounter, cfg, tmp_path) -> None:
    for i in range(1, 6):
        store.put(f"sessions/s{i}/transcript.md", TRANSCRIPT.format(sid=f"s{i}", d=i).encode())
    store.put("knowledge/INDEX.md", b"- old index\n")
    m = mounter(corpus, env_extra={"BRAINFS_RELIST_SECONDS": "1"})
    mp = m.mountpoint
    env = _dream_env(cfg, tmp_path / "dc")
    proc = subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "dream", str(corpus), "--no-index",
                             "--no-embed"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written = {}
    (mp / "notes/live").mkdir(parents=True)
    i = 0
    while proc.poll() is None and i < 200:
        rel = f"notes/live/n{i:03d}.md"
        data = f"written during dream {i}\n".encode()
        (mp / rel).write_bytes(data)
        written[rel] = data
        if i == 3:
            (mp / "knowledge/INDEX.md").write_bytes(b"- index edited in the mount\n")
        i += 1
        time.sleep(0.02)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    wait_for(lambda: all(s3get(store, p) == d for p, d in written.items()), timeout=30, what="mount writes")
    # The mount's INDEX edit survives: at its path, or as a visible conflict copy.
    keys = all_keys(raw_client(cfg.endpoint_url or ""), corpus.bucket)
    copies = [corpus.path(k) for k in keys if "INDEX.conflict-" in k]
    if i > 3:
        def kept() -> bool:
            return s3get(store, "knowledge/INDEX.md") == b"- index edited in the mount\n" or any(
                s3get(store, c) == b"- index edited in the mount\n" for c in copies) or "INDEX.md" in out
        wait_for(kept, timeout=20, what="the mount's INDEX edit kept")
    assert any(k.endswith("/summary.md") for k in keys), "dream output missing"
    NOTES["dream while mount writes"] = f"{len(written)} mount writes landed; dream rc 0"
    assert m.alive()
    m.stop()


def test_two_dreams_at_once(corpus, store, cfg, tmp_path) -> None:
    for i in range(1, 4):
        store.put(f"sessions/s{i}/transcript.md", TRANSCRIPT.format(sid=f"s{i}", d=i).encode())
    results = []
    for same_cache in (True, False):
        procs = [subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "dream", str(corpus),
                                   "--no-index", "--no-embed", "--force"],
                                  env=_dream_env(cfg, tmp_path / ("dc" if same_cache else f"dc{k}")),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for k in range(2)]
        outs = [p.communicate(timeout=240) for p in procs]
        rcs = [p.returncode for p in procs]
        results.append((same_cache, rcs, [o[1].strip()[-200:] for o in outs]))
        assert 0 in rcs, outs
        for rc, (out, err) in zip(rcs, outs):
            # One exits with a one-line "lease held" error, or waits its turn and succeeds.
            assert rc == 0 or ("another dream run is in progress" in err and err.count("\n") == 1), err
    NOTES["two dreams"] = results
    # Nothing lost: the wiki and state are whole, the lease is released.
    assert s3get(store, ".brainfs/dream.lease") is None
    assert s3get(store, ".brainfs/wiki.bundle")
    for i in range(1, 4):
        assert s3get(store, f"sessions/s{i}/summary.md")


# =========================================================================== isolation


def test_prefix_isolation(s3_server, corpus, store, mounter, cfg) -> None:
    c = raw_client(s3_server.url)
    b = corpus.bucket
    other = {"users/b/secret.md": b"user b's secret\n", "users/ab/near.md": b"neighbour prefix\n",
             "users/secret-top.md": b"above the prefix\n"}
    for k, v in other.items():
        c.put_object(Bucket=b, Key=k, Body=v)
    store.put("GUIDE.md", b"a's guide\n")
    before = all_keys(c, b)
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_GLOBS": "*"})
    mp = m.mountpoint
    tricks_read = ["../b/secret.md", "..%2Fb%2Fsecret.md", "%2e%2e/b/secret.md", "..\\b\\secret.md",
                   "b/secret.md", "/users/b/secret.md", "near.md", "secret-top.md", "\u2025/b/secret.md",
                   "．．/b/secret.md", ".brainfs/../../b/secret.md"]
    leaked = []
    for t in tricks_read:
        p = os.path.join(str(mp), t.lstrip("/"))
        try:
            data = Path(p).read_bytes()
        except OSError:
            continue
        if data in other.values():
            leaked.append(t)
    # Writes by every trick: they must all land under users/a/ or be refused.
    write_tricks = ["%2e%2e/b/secret.md", "..\\b\\secret.md", "..%2Fb%2Fsecret.md", "．．/b/secret.md"]
    for t in write_tricks:
        p = mp / t
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"overwrite attempt\n")
        except OSError:
            pass
    for fn in (lambda: os.symlink("../../b/secret.md", mp / "link"),
               lambda: os.symlink("/etc/passwd", mp / "abs-link"),
               lambda: (mp / ".brainfs/x").write_bytes(b"x")):
        try:
            fn()
        except OSError:
            pass
    assert m.stop() == 0
    after = all_keys(c, b)
    outside = {k for k in after if not k.startswith(corpus.prefix + "/")}
    changed = {k for k in outside if after.get(k) != before.get(k)} | (outside - set(before))
    TALLY["isolation tricks tried"] += len(tricks_read) + len(write_tricks) + 3
    NOTES["isolation"] = f"{len(leaked)} reads leaked, {len(changed)} keys outside users/a/ changed"
    assert not leaked
    assert not changed, changed
    for k, v in other.items():
        assert c.get_object(Bucket=b, Key=k)["Body"].read() == v


@pytest.fixture
def public_dir():
    """A world-traversable directory (pytest's tmp dirs are 0700)."""
    d = Path(tempfile.mkdtemp(prefix="brainfs-rel-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    for child in d.iterdir():
        if is_mounted(child):
            subprocess.run(["fusermount3", "-u", "-z", str(child)], check=False)
    shutil.rmtree(d, ignore_errors=True)


def _mount_options(mp: Path) -> set[str]:
    target = os.path.realpath(mp)
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if parts[1] == target:
                return set(parts[3].split(","))
    return set()


def _as_nobody(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd],
                          capture_output=True, text=True, timeout=30)


def test_mount_is_private_unless_allow_other(seeded, corpus, cfg, public_dir) -> None:
    if shutil.which("setpriv") is None or os.getuid() != 0:
        pytest.skip("needs root and setpriv")
    mounts = []
    try:
        m = start_mount(corpus, public_dir / "private", cfg.override(cache_dir=public_dir / "c1"))
        mounts.append(m)
        opts = _mount_options(m.mountpoint)
        assert "allow_other" not in opts and "default_permissions" in opts, opts
        r = _as_nobody("ls", str(m.mountpoint))
        assert r.returncode != 0 and "Permission denied" in r.stderr, r
        r = _as_nobody("cat", str(m.mountpoint / "GUIDE.md"))
        assert r.returncode != 0
        m2 = start_mount(corpus, public_dir / "shared", cfg.override(cache_dir=public_dir / "c2"),
                         args=["--allow-other"])
        mounts.append(m2)
        assert "allow_other" in _mount_options(m2.mountpoint)
        r = _as_nobody("cat", str(m2.mountpoint / "GUIDE.md"))
        assert r.returncode == 0 and r.stdout == TREE["GUIDE.md"]
        # Others may read a shared mount, never write it (default_permissions, mode 0644).
        r = _as_nobody("sh", "-c", f"echo x > '{m2.mountpoint}/GUIDE.md'")
        assert r.returncode != 0
        NOTES["privacy"] = "private mount refuses uid 65534; --allow-other lets it read, not write"
    finally:
        for mm in mounts:
            mm.stop()


SECRET = "Zq9-reliability-SECRET-7f3c1e"


def test_credentials_never_leak(tmp_path: Path) -> None:
    scfg = Config(access_key="reliab-key", secret_key=SECRET)
    server = LocalS3(tmp_path / "s3", cfg=scfg).start()
    mounts: list[Mount] = []
    try:
        cfg = Config().override(endpoint_url=server.url, cache_dir=tmp_path / "cache",
                                access_key="reliab-key", secret_key=SECRET,
                                connect_timeout=1.0, read_timeout=2.0, max_attempts=2)
        url = CorpusURL.parse("s3://creds/users/a")
        st = ObjectStore(url, cfg)
        st.create_bucket()
        upload_tree(st, write_tree(tmp_path / "src", TREE))
        creds = {"AWS_ACCESS_KEY_ID": "reliab-key", "AWS_SECRET_ACCESS_KEY": SECRET}
        m = start_mount(url, tmp_path / "mnt", cfg, env_extra=creds)
        mounts.append(m)
        outputs = []
        env = dict(os.environ, AWS_ENDPOINT_URL=server.url, BRAINFS_CONFIG="/dev/null",
                   BRAINFS_CACHE_DIR=str(tmp_path / "c2"), **creds)
        for args in (("status", str(m.mountpoint)), ("status", str(m.mountpoint), "--json")):
            r = cli(*args, env=env)
            assert r.returncode == 0, r.stderr
            outputs.append(r.stdout + r.stderr)
        outputs.append((m.mountpoint / ".brainfs/status").read_text())
        # Errors: a missing file, a wrong secret, a wrong key id, an unreachable endpoint.
        with pytest.raises(OSError):
            (m.mountpoint / "nope.md").read_text()
        bad = dict(env, AWS_SECRET_ACCESS_KEY=SECRET + "-wrong")
        (tmp_path / "mnt-bad").mkdir()
        (tmp_path / "mnt-v").mkdir()
        for e2 in (bad, dict(env, AWS_ACCESS_KEY_ID="nobody"),
                   dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:9")):
            r = cli("mount", str(url), str(tmp_path / "mnt-bad"), "--foreground", env=e2, timeout=60)
            outputs.append(r.stdout + r.stderr)
            r = cli("index", str(url), "--no-embed", env=e2, timeout=60)
            outputs.append(r.stdout + r.stderr)
            r = cli("-v", "recall", "kyoto", str(url), env=e2, timeout=60)
            outputs.append(r.stdout + r.stderr)
        # A verbose (debug-logging) mount too: botocore debug output must not carry it.
        vlog = tmp_path / "verbose.log"
        venv = {**m.env, **creds, "BRAINFS_CACHE_DIR": str(tmp_path / "cache-v")}
        with open(vlog, "wb") as lf:
            vp = subprocess.Popen([sys.executable, "-m", "brainfs.front.cli", "-v", "mount", str(url),
                                   str(tmp_path / "mnt-v"), "--foreground"], env=venv,
                                  stdout=lf, stderr=subprocess.STDOUT,
                                  )
        vm = Mount(vp, tmp_path / "mnt-v", url, venv, vlog)
        mounts.append(vm)
        wait_for(lambda: is_mounted(tmp_path / "mnt-v") or vp.poll() is not None, timeout=60, what="verbose mount")
        (tmp_path / "mnt-v/notes/v.md").write_text("written in verbose mode\n")
        wait_for(lambda: s3get(st, "notes/v.md") is not None, what="verbose upload")
        vm.stop()
        m.stop()
        logs = [m.log.read_text(errors="replace"), vlog.read_text(errors="replace")]
        leaks = [o for o in outputs + logs if SECRET in o]
        TALLY["credential leaks"] += len(leaks)
        NOTES["credentials"] = f"{len(outputs)} command outputs and {len(logs)} daemon logs checked"
        assert not leaks, [o[:300] for o in leaks]
        st.close()
    finally:
        for mm in mounts:
            mm.cleanup()
        server.stop()


def test_embedded_server_secret_not_in_process_list(tmp_path: Path) -> None:
    # `brainfs s3 serve` / LocalS3 pass the secret to rclone on its command line, which
    # every local user can read in /proc/PID/cmdline (`ps aux`).
    scfg = Config(access_key="reliab-key", secret_key=SECRET)
    server = LocalS3(tmp_path / "s3", cfg=scfg).start()
    try:
        assert server.proc is not None
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().decode(errors="replace")
        mode = stat.S_IMODE(os.stat(f"/proc/{server.proc.pid}/cmdline").st_mode)
        NOTES["rclone cmdline"] = f"world-readable={bool(mode & 0o004)}, secret present={SECRET in cmdline}"
        assert SECRET not in cmdline
    finally:
        server.stop()

