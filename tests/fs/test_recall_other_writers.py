"""Recall follows what other writers do to the bucket, and takes questions of any length.

A mount's relist sees another writer's edit, new file or delete; its recall (``.recall/``,
``brainfs recall --mount``, the API) must then stop quoting the old text or the deleted file
— re-indexed in the background within a cap, marked stale beyond it — and so must a recall
straight from the bucket whose index predates the objects. A question longer than a file
name goes through a mount by the API and the CLI all the same. Keyword-only recall
(``BRAINFS_EMBEDDER=none``) keeps these tests at a few seconds: what is tested is which
files and versions answer, not ranking.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.cache.search.localindex import build_index
from brainfs.front.api import Memory

from helpers import upload_tree, write_tree

pytestmark = [pytest.mark.mount]

OLD = "The Hollowmere backup job runs at 02:15 UTC on the Kestrel host.\n"
NEW = "The Hollowmere backup job now runs at 04:40 UTC on the Osprey host.\n"
TREE = {
    "GUIDE.md": "Keep answers short.\n",
    "notes/backup.md": OLD,
    "notes/vault.md": "The Lanternfish archive lives in vault nine.\n",
    "notes/tea.md": "Afternoon tea is Darjeeling with the Marlowe biscuits.\n",
}
FAST = {"BRAINFS_RELIST_SECONDS": "0.5", "BRAINFS_EMBEDDER": "none"}


@pytest.fixture
def indexed(store: ObjectStore, tmp_path: Path) -> ObjectStore:
    """TREE in the bucket with its keyword index built."""
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build", None)
    return store


def _cards(mp: Path, question: str) -> list[dict]:
    return json.loads((mp / ".recall" / f"{question}.json").read_text())["cards"]


def _another_writer(store: ObjectStore) -> None:
    """What another machine does behind the mount's back: an edit, a delete, a new note."""
    store.put("notes/backup.md", NEW.encode())
    store.delete("notes/vault.md")
    store.put("notes/ferry.md", b"The Quillback ferry leaves the harbour at dawn.\n")


def _eventually(pred, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_recall_follows_another_writers_edit_delete_and_new_file(indexed, corpus, mounter) -> None:
    m = mounter(corpus, env_extra=FAST)
    mp = m.mountpoint
    m.wait_listed()
    # (Another question below: an answer is reused for 2 s.)
    assert "Kestrel" in _cards(mp, "Hollowmere backup job")[0]["text"]
    _another_writer(indexed)
    _eventually(lambda: (mp / "notes/backup.md").read_text() == NEW, "the relist")
    _eventually(lambda: any(c["path"] == "notes/ferry.md" for c in _cards(mp, "Quillback ferry")),
                "the new note to be recallable")
    cards = _cards(mp, "Hollowmere backup host")
    assert cards and "Osprey" in cards[0]["text"]
    assert not any("Kestrel" in c["text"] for c in cards), cards
    assert not any(c["path"] == "notes/vault.md" for c in _cards(mp, "Lanternfish archive vault"))
    assert m.status()["index"]["stale_files"] == 0


def test_changes_over_the_cap_are_marked_and_deletes_dropped(indexed, corpus, mounter) -> None:
    # A cap of one byte: nothing another writer changed is re-indexed, so the answer
    # itself must say so; a delete costs no read and is always dropped.
    m = mounter(corpus, env_extra=dict(FAST, BRAINFS_RECALL_FOLLOW_MAX_BYTES="1"))
    mp = m.mountpoint
    m.wait_listed()
    _another_writer(indexed)
    _eventually(lambda: m.status()["index"].get("stale_files") == 2, "the relist's news")
    cards = _cards(mp, "Hollowmere backup host")
    assert cards[0]["path"] == "notes/backup.md" and "Kestrel" in cards[0]["text"]
    assert cards[0]["stale"] and "changed in the bucket since it was indexed" in cards[0]["reason"]
    assert not any(c["path"] == "notes/vault.md" for c in _cards(mp, "Lanternfish archive vault"))
    log = m.log.read_text()
    assert "over the cap" in log and f"brainfs index {corpus}" in log
    # The synthesis says it too.
    text = (mp / ".recall" / "Hollowmere backup host").read_text()
    assert "(stale)" in text and "changed in the bucket since it was indexed" in text


def test_recall_from_the_bucket_leaves_out_deleted_and_marks_changed(indexed, corpus, cfg) -> None:
    _another_writer(indexed)
    with Memory(str(corpus), cfg.override(embedder="none")) as mem:
        r = mem.recall("Hollowmere backup host", k=3)
        top = r.cards[0]
        assert top.path == "notes/backup.md" and top.stale
        assert "changed in the bucket since it was indexed" in top.reason
        assert not any(c.path == "notes/vault.md" for c in mem.recall("Lanternfish archive vault").cards)


LONG = ("I am about to refactor the caption latency pipeline for the screen reader study; "
        "remind me of every constraint, threshold and preference stated about afternoon tea, "
        "the Marlowe biscuits that go with it, and who I should talk to before changing "
        "anything at all, with citations please")


def test_a_question_longer_than_a_file_name_goes_through_a_mount(indexed, corpus, mounter, cfg) -> None:
    assert len(LONG.encode()) + len(".json") > 255
    m = mounter(corpus, env_extra=dict(FAST, BRAINFS_PRELOAD_GLOBS="GUIDE.md"))
    mp = m.mountpoint
    with Memory(str(mp), cfg.override(embedder="none")) as mem:
        r = mem.recall(LONG, k=2)
    assert r.cards and r.cards[0].path == "notes/tea.md", r.text()
    # The file behind the hit was read through the mount: it is in its working set now.
    assert "notes/tea.md" in r.materialized and "tea.md" in [p.name for p in (mp / "notes").iterdir()]
    out = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "recall", LONG, "--mount", str(mp),
                          "-k", "2", "--json"], env=dict(m.env), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["cards"][0]["path"] == "notes/tea.md"
