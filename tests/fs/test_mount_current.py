"""A long-running mount stays current, and can list the whole corpus (issue 15).

Real mounts, the real S3 server; dream and index run as the command line runs them, in
another process, while the mount is up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from helpers import upload_tree, wait_for, write_tree

pytestmark = pytest.mark.mount

TRANSCRIPT = ("---\nsession: {sid}\ndate: 2023-05-0{d}T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
              "[D{d}:1] Mara: I volunteer at the Kyoto Animal Shelter with Sora City Lab.\n\n"
              "[D{d}:2] Ana: Sora City Lab builds maps for wheelchair users in Kyoto.\n")


def test_corpus_listing_shows_every_file_and_fetches_on_read(corpus, store, mounter, cfg, tmp_path) -> None:
    src = write_tree(tmp_path / "src", {
        "GUIDE.md": "guide\n",
        "archive/2019/old.md": "An archived note about zebrafish.\n",
        "archive/2020/deep/older.md": "older\n",
    })
    upload_tree(store, src)
    env = {"BRAINFS_PRELOAD_GLOBS": "GUIDE.md", "BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "0",
           "BRAINFS_RELIST_SECONDS": "0.5"}
    ws_mount = mounter(corpus, name="ws", env_extra=env)
    assert "archive" not in os.listdir(ws_mount.mountpoint)  # the working set: not local
    m = mounter(corpus, name="all", cfg=cfg.override(cache_dir=tmp_path / "cache-all"), env_extra=env,
                args=["--listing", "corpus"])
    mp = m.mountpoint
    found = sorted(str(p.relative_to(mp)) for p in mp.rglob("*") if p.is_file())
    assert found == ["GUIDE.md", "archive/2019/old.md", "archive/2020/deep/older.md"]
    st = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "status", str(mp)], capture_output=True,
                        text=True, env=dict(os.environ, BRAINFS_CONFIG="/dev/null"), timeout=60)
    assert "ls and find show them all" in st.stdout and "show the local ones" not in st.stdout, st.stdout
    out = subprocess.run(["grep", "-rl", "zebrafish", "."], cwd=mp, capture_output=True, text=True)
    assert out.stdout.split() == ["./archive/2019/old.md"]
    store.put("archive/2021/new.md", b"added elsewhere\n")
    wait_for(lambda: "2021" in os.listdir(mp / "archive") and
             os.listdir(mp / "archive/2021") == ["new.md"], what="the new file listed")
    assert (mp / "archive/2021/new.md").read_bytes() == b"added elsewhere\n"
    store.delete("archive/2020/deep/older.md")
    wait_for(lambda: "2020" not in os.listdir(mp / "archive"), what="the removed file gone")
    assert m.stop() == 0


def test_mount_takes_a_new_index_and_wiki_commit_without_remount(corpus, store, mounter, cfg, tmp_path) -> None:
    for i in (1, 2):
        store.put(f"sessions/s{i}/transcript.md", TRANSCRIPT.format(sid=f"s{i}", d=i).encode())
    m = mounter(corpus, env_extra={"BRAINFS_RELIST_SECONDS": "0.5", "BRAINFS_EMBEDDER": "none"})
    mp = m.mountpoint
    assert "no search index" in (mp / ".recall/who builds maps").read_text()
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(tmp_path / "dc"),
               BRAINFS_CONFIG="/dev/null", BRAINFS_EMBEDDER="none")
    for args in (["dream", str(corpus), "--no-index", "--no-embed"], ["index", str(corpus), "--no-embed"]):
        r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr

    def answered() -> bool:
        time.sleep(0.3)  # a new name each time: never the reused answer of the last one
        return "Sora City Lab" in (mp / f".recall/who builds maps {time.monotonic()}").read_text()

    wait_for(answered, timeout=30, what="recall answering from the new index")
    wait_for(lambda: subprocess.run(["git", "-C", str(mp / "knowledge"), "log", "--oneline"],
                                    capture_output=True).returncode == 0,
             timeout=30, what="the wiki's history in the mount")
    assert m.stop() == 0


def test_files_written_before_an_index_is_taken_are_found_by_recall(corpus, store, mounter, cfg,
                                                                   tmp_path, proxy) -> None:
    """A note written (or deleted) through the mount after an index was built elsewhere, but
    before the mount takes that index, is in (or out of) what recall searches once it does;
    and a reload that failed (S3 refusing the index for a while) is tried again."""
    import json

    store.put("sessions/s1/transcript.md", TRANSCRIPT.format(sid="s1", d=1).encode())
    m = mounter(corpus, cfg=cfg.override(endpoint_url=proxy.url),
                env_extra={"BRAINFS_RELIST_SECONDS": "0.5", "BRAINFS_EMBEDDER": "none"})
    mp = m.mountpoint
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CACHE_DIR=str(tmp_path / "dc"),
               BRAINFS_CONFIG="/dev/null", BRAINFS_EMBEDDER="none")

    def notes() -> set[str]:
        return {o.path for o in store.list("notes") if o.path.endswith(".md")}

    (mp / "notes").mkdir(exist_ok=True)
    (mp / "notes/dentist.md").write_text("My dentist is Dr Okafor on Harbour Street.\n")
    (mp / "notes/electrician.md").write_text("The electrician Sven Lindqvist rewired the attic.\n")
    wait_for(lambda: notes() == {"notes/dentist.md", "notes/electrician.md"}, timeout=30,
             what="the notes uploaded")
    # The mount cannot fetch the index for a while: it takes it only after the changes below.
    proxy.force("slowdown", count=1_000_000, methods={"GET"}, key_pattern=r"\.brainfs/index/")
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "index", str(corpus), "--no-embed"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (mp / "notes/plumber.md").write_text("The plumber Ingrid Halvorsen fixed the boiler.\n")
    (mp / "notes/electrician.md").unlink()
    wait_for(lambda: notes() == {"notes/dentist.md", "notes/plumber.md"}, timeout=30,
             what="the plumber uploaded, the electrician deleted")
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 1, timeout=30,
             what="the mount trying to take the new index")
    proxy.clear_forced()

    def paths(q: str) -> list[str]:
        time.sleep(0.3)  # a new name each time: never the reused answer of the last one
        out = json.loads((mp / f".recall/{q} {time.monotonic()}.json").read_text())
        return [c["path"] for c in out.get("cards", [])]

    wait_for(lambda: "notes/dentist.md" in paths("dentist Okafor"), timeout=30,
             what="recall answering from the index, once it could be fetched")
    wait_for(lambda: "notes/plumber.md" in paths("plumber Halvorsen boiler"), timeout=30,
             what="the note written after that index was built")
    assert "notes/electrician.md" not in paths("electrician Lindqvist attic")
    assert m.stop() == 0


def test_a_file_another_writer_grew_reads_whole_at_its_first_fetch(corpus, store, mounter) -> None:
    """The kernel holds a file's size from the listing (for attr_timeout); when its first
    fetch brings another writer's longer version, a read must go on to the new end, not stop
    at the size the kernel was told (a cut read, for minutes)."""
    store.put("GUIDE.md", b"guide\n")
    store.put("archive/old.md", b"short\n")  # not in the working set: fetched on first read
    m = mounter(corpus, env_extra={"BRAINFS_RELIST_SECONDS": "3600"})
    p = m.mountpoint / "archive" / "old.md"
    assert p.stat().st_size == 6  # the kernel now holds this size
    grown = b"grown by another writer\n" * 200
    store.put("archive/old.md", grown)
    assert p.read_bytes() == grown
    assert p.stat().st_size == len(grown)
    assert m.stop() == 0
