"""Files dream derives (INDEX.md, sessions/index.md, summaries, cards, the fact records) and
that another writer changed or deleted since — a mount, an import, an S3 client — are
noticed by the next plain ``brainfs dream`` and written again, saying so; a run that finds
nothing else new does not say "nothing new" over a broken INDEX."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.dream.core import run_local

from dream_helpers import S1, S2, write

CLI = [sys.executable, "-m", "brainfs.front.cli"]


def _dream(url: CorpusURL, cfg: Config, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, BRAINFS_CONFIG="/dev/null", BRAINFS_CACHE_DIR=str(tmp_path / "cache"),
               BRAINFS_EMBEDDER="none", AWS_ENDPOINT_URL=cfg.endpoint_url or "")
    r = subprocess.run([*CLI, "dream", str(url), "--no-embed", "--no-index"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


@pytest.mark.s3
def test_plain_dream_restores_a_derived_file_another_writer_changed(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2}.items():
        store.put(p, t.encode())
    _dream(corpus, cfg, tmp_path)
    index = store.get("knowledge/INDEX.md")[0]
    summary = store.get("sessions/s1/summary.md")[0]
    mara = store.get("knowledge/mara.md")[0]
    assert b"[[mara]]" in index
    store.put("knowledge/INDEX.md", b"oops\n")    # what a mount's `echo oops >` leaves
    store.delete("sessions/s1/summary.md")

    r = _dream(corpus, cfg, tmp_path)
    assert "nothing new" not in r.stdout
    assert store.get("knowledge/INDEX.md")[0] == index
    assert store.get("sessions/s1/summary.md")[0] == summary
    assert store.get("knowledge/mara.md")[0] == mara  # nothing else rewritten
    line = next(ln for ln in r.stdout.splitlines() if "knowledge/INDEX.md" in ln)
    assert line.startswith("M ") and "changed outside dream" in line and "brainfs correct" in line, line
    assert any("sessions/s1/summary.md" in ln and "deleted outside dream" in ln
               for ln in r.stdout.splitlines()), r.stdout

    # repaired: the next plain run has nothing to do
    assert "nothing new" in _dream(corpus, cfg, tmp_path).stdout


@pytest.mark.unit
def test_local_run_restores_index_but_keeps_a_page_hand_edit(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    run_local(tree, None, apply=True)
    index = (tree / "knowledge/INDEX.md").read_text()
    (tree / "knowledge/INDEX.md").write_text("oops\n")
    res = run_local(tree, None, apply=True)
    assert not res.nothing_new and [c.path for c in res.changes][:1] == ["knowledge/INDEX.md"]
    assert (tree / "knowledge/INDEX.md").read_text() == index
    # a page's edit is a hand edit (edits.py): kept, not restored
    page = tree / "knowledge/mara.md"
    page.write_text(page.read_text().rstrip("\n") + "\n- Mara is allergic to cats.\n")
    run_local(tree, None, apply=True)
    assert "allergic to cats" in page.read_text()
    assert run_local(tree, None, apply=True).nothing_new


@pytest.mark.s3
def test_a_page_replaced_whole_keeps_its_claims(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    """`echo oops > knowledge/mara.md` through a mount (or an S3 PUT) is no edited copy of
    the page, as the write API says when it refuses it: the next dream keeps every claim and
    the new line, instead of taking each claim as deleted by hand and retiring it for good.
    An edited copy (a claim line removed, the frontmatter kept) still deletes that claim."""
    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2}.items():
        store.put(p, t.encode())
    _dream(corpus, cfg, tmp_path)
    page = store.get("knowledge/mara.md")[0].decode()
    claims = [ln for ln in page.splitlines() if "[cite:" in ln]
    assert len(claims) >= 3
    store.put("knowledge/mara.md", b"oops\n")
    r = _dream(corpus, cfg, tmp_path)
    line = next(ln for ln in r.stdout.splitlines() if "knowledge/mara.md" in ln)
    assert "replaced whole without its frontmatter" in line and "deleted by hand" not in line, line
    now = store.get("knowledge/mara.md")[0].decode()
    assert now.startswith("---\n") and "oops" in now
    for c in claims:
        assert c.split(" [cite:")[0] in now, (c, now)
    # an edited copy: one claim line deleted, the rest and the frontmatter kept
    gone = next(c for c in claims if c.startswith("- "))
    store.put("knowledge/mara.md", now.replace(gone.split(" [cite:")[0], "", 1).encode())
    r = _dream(corpus, cfg, tmp_path)
    assert "deleted by hand" in r.stdout, r.stdout
    assert gone.split(" [cite:")[0] not in store.get("knowledge/mara.md")[0].decode()
