"""Real mounts: FUSE through the kernel, S3 through rclone on loopback."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.blobs import Blobs

from helpers import is_mounted, upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

TREE = {
    "GUIDE.md": "Always answer in English. Figures as PDF, never PNG.\n",
    "knowledge/INDEX.md": "- [[kyoto]] — the Kyoto trip\n",
    "knowledge/kyoto.md": "---\ntitle: Kyoto\n---\nMet Sora City Lab in Kyoto [cite:1].\n",
    "notes/travel/sendai.md": "Sapphir Mobility Coop is in Sendai.\n",
    "sessions/index.md": "- 2026-01-02-kyoto | 2026-01-02 | Kyoto\n",
    "sessions/2026-01-02-kyoto/summary.md": "Kyoto workshop.\n",
    "sessions/2026-01-02-kyoto/transcript.md": "[D1:1] Nadia: We met Sora City Lab.\n",
    "sessions/2025-03-01-old/transcript.md": "[D1:1] Nadia: an old zebrafish story.\n",
    "sessions/2025-03-01-old/summary.md": "Old session.\n",
}


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def seeded(store: ObjectStore, tmp_path: Path) -> Path:
    src = write_tree(tmp_path / "src", TREE)
    upload_tree(store, src)
    return src


def test_tree_agrees_with_source(seeded: Path, corpus, mounter, tmp_path: Path) -> None:
    # Preload everything: then ls/find/grep over the mount must match the source exactly.
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_GLOBS": "*"})
    mp = m.mountpoint
    assert listing(mp) == listing(seeded)
    for rel in listing(seeded):
        assert (mp / rel).read_bytes() == (seeded / rel).read_bytes()
    find_mp = subprocess.run(["find", ".", "-type", "f"], cwd=mp, capture_output=True, text=True, check=True)
    find_src = subprocess.run(["find", ".", "-type", "f"], cwd=seeded, capture_output=True, text=True, check=True)
    assert sorted(find_mp.stdout.split()) == sorted(find_src.stdout.split())
    g_mp = subprocess.run(["grep", "-rl", "Sora"], cwd=mp, capture_output=True, text=True)
    g_src = subprocess.run(["grep", "-rl", "Sora"], cwd=seeded, capture_output=True, text=True)
    assert sorted(g_mp.stdout.split()) == sorted(g_src.stdout.split()) != []
    # The magic folders are reachable but never listed, so grep -r does not wander in.
    assert ".recall" not in os.listdir(mp) and ".brainfs" not in os.listdir(mp)
    assert (mp / ".brainfs" / "status").is_file()


def test_working_set_and_lazy_cat(seeded: Path, corpus, mounter) -> None:
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1"})
    mp = m.mountpoint
    old = "sessions/2025-03-01-old/transcript.md"
    # Default preload: knowledge, notes, guide, index, summaries, the newest transcript.
    assert (mp / "sessions/2026-01-02-kyoto/transcript.md").exists()
    assert "transcript.md" not in os.listdir(mp / "sessions/2025-03-01-old")
    assert subprocess.run(["grep", "-rq", "zebrafish", str(mp)]).returncode == 1
    # A cited path is one cat away, and then part of the working set.
    assert (mp / old).read_text() == TREE[old]
    assert "transcript.md" in os.listdir(mp / "sessions/2025-03-01-old")
    assert subprocess.run(["grep", "-rq", "zebrafish", str(mp)]).returncode == 0
    with pytest.raises(FileNotFoundError):
        (mp / "sessions/nope/transcript.md").read_text()


def test_write_reaches_s3(seeded: Path, corpus, mounter, store: ObjectStore) -> None:
    m = mounter(corpus)
    mp = m.mountpoint
    (mp / "notes/travel/new.md").write_text("first line\n")
    with open(mp / "notes/travel/new.md", "a") as f:
        f.write("second line\n")
    wait_for(lambda: _get(store, "notes/travel/new.md") == b"first line\nsecond line\n",
             what="upload after close")
    # Edits, renames, deletes and directories behave like a local disk and reach S3.
    (mp / "projects").mkdir()
    (mp / "projects/a.md").write_text("A")
    os.rename(mp / "projects/a.md", mp / "projects/b.md")
    (mp / "GUIDE.md").unlink()
    with open(mp / "knowledge/kyoto.md", "r+") as f:
        f.truncate(5)
    assert (mp / "knowledge/kyoto.md").read_text() == "---\nt"
    assert sorted(os.listdir(mp / "projects")) == ["b.md"]
    with pytest.raises(OSError) as e:
        (mp / "projects").rmdir()
    assert e.value.errno == errno.ENOTEMPTY
    wait_for(lambda: _get(store, "projects/b.md") == b"A" and _get(store, "projects/a.md") is None
             and _get(store, "GUIDE.md") is None and _get(store, "knowledge/kyoto.md") == b"---\nt",
             what="renames/deletes/truncate uploaded")
    assert m.stop() == 0


@pytest.mark.parametrize("mode", ["no-open", "daemon-open", "no-open-quiet"])
def test_every_way_of_writing_commits(seeded: Path, corpus, mounter, store: ObjectStore,
                                      cfg: Config, tmp_path: Path, mode: str) -> None:
    # The ways a shell, an editor or a script changes a file, in both open modes: each
    # must reach S3 in its final version and read back the same from a fresh cache. In
    # no-open mode the daemon never sees an open: O_TRUNC comes as a setattr, a created
    # file has no handle, and a bare truncate(2) has no close to commit it.
    env = {"BRAINFS_NO_OPEN": "0" if mode == "daemon-open" else "1",
           "BRAINFS_COMMIT_IDLE_SECONDS": "0.3",
           "BRAINFS_COMMIT": "quiet" if mode == "no-open-quiet" else "close"}
    m = mounter(corpus, env_extra=env)
    assert m.status()["commit"] == ("quiet" if mode == "no-open-quiet" else "close")
    d = m.mountpoint / "notes/w"
    d.mkdir()
    (d / "a.md").write_text("alpha\n")  # create, as the very first open of the mount
    with open(d / "a.md", "a") as f:
        f.write("beta\n")
    assert (d / "a.md").read_text() == "alpha\nbeta\n"
    (d / "b.md").write_text("one two three\n")
    (d / "b.md").write_text("four\n")  # O_TRUNC over a committed file
    assert (d / "b.md").read_text() == "four\n"
    with open(d / "c.md", "w+") as f:  # ftruncate(2) through the open file
        f.write("0123456789")
        f.flush()
        f.truncate(4)
        f.seek(0, os.SEEK_END)
        f.write("X")
    assert (d / "c.md").read_text() == "0123X"
    (d / "e.md").write_text("long content here\n")
    os.truncate(d / "e.md", 4)  # by path: no close follows
    assert (d / "e.md").read_text() == "long"
    (d / "r.md").write_text("old\n")
    (d / "tmp.md").write_text("renamed\n")
    os.rename(d / "tmp.md", d / "r.md")  # an editor's save
    (d / "gone.md").write_text("x")
    os.unlink(d / "gone.md")
    fd = os.open(d / "k.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"made with O_EXCL\n")
    os.fsync(fd)
    os.close(fd)
    expect = {"a.md": b"alpha\nbeta\n", "b.md": b"four\n", "c.md": b"0123X", "e.md": b"long",
              "r.md": b"renamed\n", "k.md": b"made with O_EXCL\n"}
    assert sorted(os.listdir(d)) == sorted(expect)

    def remote(name: str) -> bytes | None:
        try:
            return store.get(f"notes/w/{name}")[0]
        except Exception:  # noqa: BLE001 - not there (yet)
            return None

    # The deletes too: an object made before its unlink is removed by a later upload pass.
    wait_for(lambda: all(remote(n) == v for n, v in expect.items())
             and remote("gone.md") is None and remote("tmp.md") is None, timeout=60,
             what="final versions in S3")
    m.stop()
    m2 = mounter(corpus, name="mnt2", cfg=cfg.override(cache_dir=tmp_path / "cache2"),
                 env_extra=env)
    for n, v in expect.items():
        assert (m2.mountpoint / "notes/w" / n).read_bytes() == v, n


def test_kill9_after_close_loses_nothing(seeded: Path, corpus, mounter, store: ObjectStore,
                                        s3_server, cfg: Config) -> None:
    from benchmarks.s3proxy import S3Proxy

    # Every upload fails (503 on PUT) so the bytes exist only in the cache's journal when
    # the daemon is killed.
    with S3Proxy(("127.0.0.1", s3_server.port), delay=0.0) as proxy:
        proxy.force("slowdown", count=10_000, methods={"PUT"})
        m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url))
        payload = os.urandom(200_000)
        with open(m.mountpoint / "notes/blob.bin", "wb") as f:
            f.write(payload)
        wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 1, what="a refused upload")
        m.kill9()
    assert _get(store, "notes/blob.bin") is None
    m2 = mounter(corpus, name="mnt2")
    wait_for(lambda: _get(store, "notes/blob.bin") == payload, what="upload after remount")
    assert (m2.mountpoint / "notes/blob.bin").read_bytes() == payload
    assert m2.stop() == 0


def test_corrupted_cache_file_is_refetched(seeded: Path, corpus, mounter, cfg: Config) -> None:
    m = mounter(corpus)
    rel = "knowledge/kyoto.md"
    assert (m.mountpoint / rel).read_text() == TREE[rel]
    assert m.stop() == 0
    blob = Blobs(Path(cfg.cache_dir)).location(rel)
    blob.write_bytes(b"garbage that is not what S3 holds")
    m2 = mounter(corpus, name="mnt2")
    assert (m2.mountpoint / rel).read_text() == TREE[rel]
    m2.stop()
    assert "1 damaged copies dropped for refetch" in m2.log.read_text()


def test_dead_s3_keeps_working_set_readable(tmp_path: Path, mounter) -> None:
    server = LocalS3(tmp_path / "own-s3").start()
    try:
        cfg = Config().override(endpoint_url=server.url, cache_dir=tmp_path / "cache2",
                                connect_timeout=1.0, read_timeout=2.0, max_attempts=2)
        from brainfs.backend.keys import CorpusURL

        url = CorpusURL.parse("s3://deadtest/users/a")
        st = ObjectStore(url, cfg)
        st.create_bucket()
        upload_tree(st, write_tree(tmp_path / "src", TREE))
        m = mounter(url, cfg=cfg, env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1"})
    finally:
        server.stop()
    mp = m.mountpoint
    assert (mp / "GUIDE.md").read_text() == TREE["GUIDE.md"]
    assert subprocess.run(["grep", "-rq", "Sora", str(mp)]).returncode == 0
    t0 = time.monotonic()
    with pytest.raises(OSError) as e:
        (mp / "sessions/2025-03-01-old/transcript.md").read_text()
    elapsed = time.monotonic() - t0
    assert e.value.errno == errno.EIO
    # Bounded by attempts x (connect timeout) plus backoff, never a hang.
    assert elapsed < 20, elapsed
    assert m.alive()
    # Writes still land locally (journaled) while the backend is down.
    (mp / "notes/offline.md").write_text("written while S3 was down\n")
    assert (mp / "notes/offline.md").read_text() == "written while S3 was down\n"
    assert "fetch of sessions/2025-03-01-old/transcript.md failed" in m.log.read_text()
    m.stop(timeout=90)


def test_cli_errors_are_one_line(tmp_path: Path, corpus, cfg: Config, seeded: Path) -> None:
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(cfg.cache_dir))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                              capture_output=True, text=True, timeout=60)

    r = run("mount", str(corpus), str(busy))
    assert r.returncode == 1 and "not empty" in r.stderr and r.stderr.count("\n") == 1
    (tmp_path / "m").mkdir()
    r = run("mount", "s3://no-such-bucket-xyz/p", str(tmp_path / "m"))
    assert r.returncode == 1 and "does not exist" in r.stderr
    r = run("mount", "http://x", str(tmp_path / "m"))
    assert r.returncode == 1 and "s3://" in r.stderr
    r = run("status", str(tmp_path))
    assert r.returncode == 1 and "not a running brainfs mount" in r.stderr


def test_daemon_mode_status_and_umount(tmp_path: Path, corpus, cfg: Config, seeded: Path, store) -> None:
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(cfg.cache_dir))
    mp = tmp_path / "memory"
    mp.mkdir()  # a mountpoint must exist (mount(8) does not create one either)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    r = run("mount", str(corpus), str(mp))
    assert r.returncode == 0, r.stderr
    try:
        pid = None
        r = run("status", str(mp), "--json")
        assert r.returncode == 0, r.stderr
        import json

        st = json.loads(r.stdout)
        pid = st["pid"]
        assert st["corpus"] == str(corpus) and st["local_files"] >= 7
        assert "secret" not in r.stdout.lower()
        r = run("mount", str(corpus), str(mp))
        assert r.returncode == 1 and "already a mountpoint" in r.stderr
        (mp / "notes/at-umount.md").write_text("flushed by umount\n")
        r = run("umount", str(mp))
        assert r.returncode == 0, r.stderr
        assert not Path(f"/proc/{pid}").exists() or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
        assert _get(store, "notes/at-umount.md") == b"flushed by umount\n"
    finally:
        if is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        if pid and Path(f"/proc/{pid}").exists():
            os.kill(pid, 9)


def _get(store: ObjectStore, path: str) -> bytes | None:
    from brainfs.backend.errors import NoSuchKey

    try:
        return store.get(path)[0]
    except NoSuchKey:
        return None


def test_import_is_idempotent_and_refuses_bad_names(tmp_path: Path, corpus, cfg: Config, store) -> None:
    src = write_tree(tmp_path / "imp", {"a.md": "A", "d/b.md": "B"})
    (src / "bad\x01name.md").write_text("control character")
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null")

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(src), str(corpus)],
                              env=env, capture_output=True, text=True, timeout=60)

    r = run()
    assert r.returncode == 0, r.stderr
    assert "2 uploaded, 0 unchanged, 1 refused names" in r.stdout
    assert "control character" in r.stderr
    (src / "a.md").write_text("A2")
    r = run()
    assert "1 uploaded, 1 unchanged" in r.stdout
    assert _get(store, "a.md") == b"A2" and _get(store, "d/b.md") == b"B"


def test_import_again_never_undoes_what_changed_in_the_bucket(tmp_path: Path, corpus, cfg: Config,
                                                             store, mounter) -> None:
    """Importing the same tree again must not revert a mount's edit, bring back a file
    removed in the mount, or replace another writer's version (dream's page): the bucket is
    the memory, newer than the source. Each is kept with a warning; a file only the source
    changed is uploaded; --overwrite replaces everything that differs."""
    src = write_tree(tmp_path / "imp", {"a.md": "A\n", "d/b.md": "B\n", "c.md": "C\n",
                                        "knowledge/p.md": "page v1\n"})
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null")

    def run(*extra: str) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(src), str(corpus),
                            *extra], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r

    assert "4 uploaded, 0 unchanged" in run().stdout
    m = mounter(corpus)
    with open(m.mountpoint / "a.md", "a") as f:
        f.write("edited in the mount\n")
    (m.mountpoint / "d" / "b.md").unlink()
    assert m.stop() == 0
    store.put("knowledge/p.md", b"page v2, written by dream\n")  # a writer without the marker

    r = run()
    assert "0 uploaded, 1 unchanged, 3 kept" in r.stdout, r.stdout
    assert "kept the bucket's a.md: changed in the bucket since it was imported" in r.stderr
    assert "kept the bucket's d/b.md: deleted in the bucket since it was imported" in r.stderr
    assert _get(store, "a.md") == b"A\nedited in the mount\n"
    assert "d/b.md" not in {o.path for o in store.list()}
    assert _get(store, "knowledge/p.md") == b"page v2, written by dream\n"

    # The source changes: a file the bucket still has as imported is updated; one changed on
    # both sides keeps the bucket's version.
    (src / "c.md").write_text("C2\n")
    (src / "a.md").write_text("A from the source, changed too\n")
    r = run()
    assert "1 uploaded, 0 unchanged, 3 kept" in r.stdout, r.stdout
    assert _get(store, "c.md") == b"C2\n"
    assert _get(store, "a.md") == b"A\nedited in the mount\n"
    # Run again: nothing moves (idempotent).
    assert "0 uploaded, 1 unchanged, 3 kept" in run().stdout

    r = run("--overwrite")
    assert "3 uploaded, 1 unchanged" in r.stdout and "kept" not in r.stdout, r.stdout
    assert _get(store, "a.md") == b"A from the source, changed too\n"
    assert _get(store, "d/b.md") == b"B\n"
    assert _get(store, "knowledge/p.md") == b"page v1\n"
    assert "0 uploaded, 4 unchanged" in run().stdout


def test_mount_sees_dream_pages_and_wiki_history(tmp_path: Path, corpus, cfg: Config, store,
                                                 mounter) -> None:
    from brainfs.dream.synth import DeterministicSynthesizer  # noqa: F401 - dream is installed

    t1 = ("---\nsession: s1\ndate: 2023-05-08T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
          "[D1:1] Mara: I volunteer at the Kyoto Animal Shelter with Sora City Lab.\n\n"
          "[D1:2] Ana: Sora City Lab builds maps for wheelchair users in Kyoto.\n\n"
          "[D1:3] Mara: The Kyoto Animal Shelter needs more volunteers on weekends.\n")
    t2 = ("---\nsession: s2\ndate: 2023-06-20T18:30:00\nparticipants: [Mara, Ana]\n---\n\n"
          "[D2:1] Ana: My first week at Sora City Lab was great.\n\n"
          "[D2:2] Mara: The Kyoto Animal Shelter adopted out twelve dogs in June.\n")
    store.put("sessions/s1/transcript.md", t1.encode())
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(tmp_path / "dc"),
               BRAINFS_CONFIG="/dev/null", BRAINFS_EMBEDDER="none")

    def dream() -> None:
        r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "dream", str(corpus), "--no-index",
                            "--no-embed"], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr

    dream()
    m = mounter(corpus, env_extra={"BRAINFS_RELIST_SECONDS": "0.5"})
    mp = m.mountpoint
    pages = sorted(os.listdir(mp / "knowledge"))
    assert "INDEX.md" in pages and len(pages) > 1
    # A second session and a second dream run, while the mount is up: the mount sees the
    # new pages after its next listing.
    store.put("sessions/s2/transcript.md", t2.encode())
    dream()
    wait_for(lambda: "s2" in os.listdir(mp / "sessions") and
             "s2" in (mp / "sessions/index.md").read_text(), timeout=20, what="dream output in the mount")
    m.stop()
    # The wiki's history is a git repository inside the mount.
    m2 = mounter(corpus, name="mnt2")
    log = subprocess.run(["git", "-C", str(m2.mountpoint / "knowledge"), "log", "--oneline"],
                         capture_output=True, text=True, timeout=60)
    assert log.returncode == 0, log.stderr
    assert len(log.stdout.strip().splitlines()) == 2
    diff = subprocess.run(["git", "-C", str(m2.mountpoint / "knowledge"), "diff", "HEAD~1", "--stat"],
                          capture_output=True, text=True, timeout=60)
    assert diff.returncode == 0 and "sessions/index.md" in diff.stdout, diff.stdout + diff.stderr
    assert ".git" not in os.listdir(m2.mountpoint)
    # git at the root touches only what the wiki tracks: a note it does not hold is neither
    # listed as untracked nor removed by git clean (nor stashed by stash -u)
    note = m2.mountpoint / "notes" / "mine.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\ntype: note\n---\nkeep me\n")
    st = subprocess.run(["git", "-C", str(m2.mountpoint), "status", "--porcelain"],
                        capture_output=True, text=True, timeout=60)
    assert st.returncode == 0 and "??" not in st.stdout, st.stdout + st.stderr
    cl = subprocess.run(["git", "-C", str(m2.mountpoint), "clean", "-fd"],
                        capture_output=True, text=True, timeout=60)
    assert cl.returncode == 0, cl.stderr
    assert note.read_text() == "---\ntype: note\n---\nkeep me\n"
    assert (m2.mountpoint / "sessions/s1/transcript.md").exists()


def test_preload_in_background(seeded: Path, corpus, mounter) -> None:
    m = mounter(corpus, args=["--preload-background"])
    mp = m.mountpoint
    # Usable at once: a path not fetched yet is fetched on lookup; the rest arrives.
    assert (mp / "knowledge/kyoto.md").read_text() == TREE["knowledge/kyoto.md"]
    wait_for(lambda: "summary.md" in os.listdir(mp / "sessions/2026-01-02-kyoto"),
             what="background preload")
    st = json.loads((mp / ".brainfs/status").read_text())
    assert st["startup"]["preload_deferred"] >= 5 and st["startup"]["preload_errors"] == 0


def test_mount_runs_dream_on_a_schedule(corpus, store, mounter) -> None:
    store.put("sessions/s1/transcript.md", (
        "---\nsession: s1\ndate: 2023-05-08T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
        "[D1:1] Mara: I volunteer at the Kyoto Animal Shelter with Sora City Lab.\n\n"
        "[D1:2] Ana: Sora City Lab builds maps for wheelchair users in Kyoto.\n\n"
        "[D1:3] Mara: The Kyoto Animal Shelter needs more volunteers on weekends.\n").encode())
    m = mounter(corpus, env_extra={"BRAINFS_DREAM_INTERVAL_SECONDS": "1",
                                   "BRAINFS_EMBEDDER": "none"})
    mp = m.mountpoint
    wait_for(lambda: (mp / "knowledge").is_dir() and "INDEX.md" in os.listdir(mp / "knowledge"),
             timeout=60, what="the mount's own dream run")
    assert "s1" in (mp / "sessions/index.md").read_text()
    assert "dream: " in m.log.read_text()



def test_mount_dreams_after_n_new_sessions(corpus, store, mounter) -> None:
    # No schedule: dream runs once two sessions are new, one written through the mount
    # (seen at upload) and one by another writer (seen by the relister).
    def transcript(sid: str, day: int) -> str:
        return (f"---\nsession: {sid}\ndate: 2023-05-{day:02d}T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
                "[D1:1] Mara: I volunteer at the Kyoto Animal Shelter with Sora City Lab.\n\n"
                "[D1:2] Ana: Sora City Lab builds maps for wheelchair users in Kyoto.\n\n"
                "[D1:3] Mara: The Kyoto Animal Shelter needs more volunteers on weekends.\n")

    store.put("GUIDE.md", b"guide\n")
    m = mounter(corpus, env_extra={"BRAINFS_DREAM_AFTER_SESSIONS": "2", "BRAINFS_RELIST_SECONDS": "0.5",
                                   "BRAINFS_EMBEDDER": "none"})
    mp = m.mountpoint
    (mp / "sessions/s1").mkdir(parents=True)
    (mp / "sessions/s1/transcript.md").write_text(transcript("s1", 8))
    wait_for(lambda: any(o.path == "sessions/s1/transcript.md" for o in store.list()), what="upload of s1")
    time.sleep(2)  # several relists: one new session is below the threshold
    assert "dream: " not in m.log.read_text()
    assert not (mp / "knowledge").exists()
    store.put("sessions/s2/transcript.md", transcript("s2", 9).encode())
    wait_for(lambda: (mp / "knowledge").is_dir() and "INDEX.md" in os.listdir(mp / "knowledge"),
             timeout=60, what="dream after two new sessions")
    index = (mp / "sessions/index.md").read_text()
    assert "s1" in index and "s2" in index

def _exists(store: ObjectStore, key: str) -> bool:
    try:
        store.head(key)
        return True
    except Exception:  # noqa: BLE001 - NoSuchKey
        return False


#: What a warm read of a cached file and listing may still ask the daemon, per mode.
_DAEMON_PATH = ("open", "opendir", "readdir", "release", "releasedir", "flush", "flush_clean",
                "read")


@pytest.mark.parametrize("mode", ["no-open", "read-only", "daemon-open"])
def test_kernel_caches_listings_and_skips_reader_flush(seeded: Path, corpus, mounter,
                                                       store: ObjectStore, mode: str) -> None:
    # With our pyfuse3 build the kernel answers repeated listings and reads from its
    # cache. In no-open mode it never opens through the daemon (a close still sends FLUSH,
    # the commit point of a write; a read-only mount skips that too); with daemon opens a
    # read-only close sends no FLUSH. Either way the caches must follow every change of
    # the working set: a local create/unlink, a fetch, a remote change seen by the
    # relister, and a remote new version of a file whose pages the kernel holds.
    from brainfs.fs.ops import KERNEL_CACHE_FLAGS, NO_OPEN_SUPPORT
    assert KERNEL_CACHE_FLAGS and NO_OPEN_SUPPORT, "pyfuse3 is not ours: run .ci/build-pyfuse3"
    store.put("archive/2019/old.md", b"An archived note.\n")  # no preload rule takes it
    env = {"BRAINFS_RELIST_SECONDS": "0.5", "BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1",
           "BRAINFS_NO_OPEN": "0" if mode == "daemon-open" else "1"}
    m = mounter(corpus, env_extra=env, args=["--read-only"] if mode == "read-only" else None)
    mp = m.mountpoint

    def status() -> dict:
        return json.loads((mp / ".brainfs/status").read_text())

    assert status()["no_open"] is (mode != "daemon-open")

    # An empty listing must not stick: the kernel keeps an empty cached listing even
    # when told to drop the directory's cache.
    for _ in range(2):
        assert os.listdir(mp / "archive/2019") == []
    assert (mp / "archive/2019/old.md").read_text() == "An archived note.\n"
    assert os.listdir(mp / "archive/2019") == ["old.md"]

    assert os.listdir(mp / "notes/travel") == ["sendai.md"]
    assert (mp / "notes/travel/sendai.md").read_text().startswith("Sapphir")
    # Reading the status costs requests of its own: measured by two reads in a row.
    first = status()["requests"]
    before = status()["requests"]
    for _ in range(3):
        assert os.listdir(mp / "notes/travel") == ["sendai.md"]
        assert (mp / "notes/travel/sendai.md").read_text().startswith("Sapphir")
    after = status()["requests"]
    asked = {k: after.get(k, 0) - 2 * before.get(k, 0) + first.get(k, 0) for k in _DAEMON_PATH}
    asked = {k: v for k, v in asked.items() if v}
    if mode == "daemon-open":
        assert asked == {"open": 3, "release": 3, "opendir": 3, "releasedir": 3}, asked
    elif mode == "no-open":
        # A reader's close is still a FLUSH (the commit point of a write), answered by our
        # pyfuse3 build without calling flush(): nothing was written.
        assert asked == {"flush_clean": 3}, asked
    else:
        assert asked == {}, asked

    if mode == "read-only":
        with pytest.raises(OSError) as e:
            (mp / "notes/travel/osaka.md").write_text("Osaka.\n")
        assert e.value.errno == errno.EROFS
        with pytest.raises(OSError) as e:
            (mp / "notes/travel/sendai.md").write_text("gone")
        assert e.value.errno == errno.EROFS
        assert (mp / "notes/travel/sendai.md").read_text().startswith("Sapphir")
        store.put("notes/travel/osaka.md", b"Osaka.\n")
        store.delete("notes/travel/sendai.md")
        wait_for(lambda: os.listdir(mp / "notes/travel") == ["osaka.md"],
                 what="remote add and delete listed")
    else:
        # Local changes through the mount.
        (mp / "notes/travel/osaka.md").write_text("Osaka.\n")
        assert os.listdir(mp / "notes/travel") == ["osaka.md", "sendai.md"]
        os.unlink(mp / "notes/travel/sendai.md")
        assert os.listdir(mp / "notes/travel") == ["osaka.md"]
    # A remote new version of a file whose pages the kernel holds.
    assert (mp / "notes/travel/osaka.md").read_text() == "Osaka.\n"
    # (Wait for the upload of this version, not of the empty file the create made, or
    # the put below races it.)
    wait_for(lambda: _exists(store, "notes/travel/osaka.md")
             and store.get("notes/travel/osaka.md")[0] == b"Osaka.\n"
             and status()["pending_uploads"] == 0, what="upload")
    store.put("notes/travel/osaka.md", b"Osaka, rewritten elsewhere.\n")
    wait_for(lambda: (mp / "notes/travel/osaka.md").read_text() == "Osaka, rewritten elsewhere.\n",
             what="remote new version read")
    # A fetch: the old session's transcript is remote until read.
    assert os.listdir(mp / "sessions/2025-03-01-old") == ["summary.md"]
    (mp / "sessions/2025-03-01-old/transcript.md").read_text()
    assert "transcript.md" in os.listdir(mp / "sessions/2025-03-01-old")
    # Remote changes: a new file in a listed directory, and a removed one.
    assert "kyoto.md" in os.listdir(mp / "knowledge")
    store.put("knowledge/osaka.md", b"---\ntitle: Osaka\n---\nOsaka.\n")
    store.delete("knowledge/kyoto.md")
    wait_for(lambda: "kyoto.md" not in os.listdir(mp / "knowledge"), what="remote delete listed")
    wait_for(lambda: "osaka.md" in os.listdir(mp / "knowledge")
             or (mp / "knowledge/osaka.md").exists(), what="remote add visible")
