"""Hand edits of wiki pages survive dream runs: end to end against the S3 fixture (the page's
object in the bucket is edited between two runs), and offline for the finer rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.core import run_local

from dream_helpers import S1, S2, S3_, write


def _edit(text: str) -> str:
    """What a person does to mara.md: adds a line, deletes a claim, rewrites another one
    into a statement that contradicts it."""
    out = []
    for ln in text.split("\n"):
        if "adopted a dog" in ln and ln.startswith("- "):
            continue  # deleted
        if "favorite park is Maruyama Park" in ln and ln.startswith("- "):
            out.append("- Mara's favorite park is Heian Garden.")  # rewritten
            continue
        out.append(ln)
        if ln.startswith("- ") and "volunteers there" in ln:
            out.append("- Mara is allergic to cats.")  # added under the line it follows
    return "\n".join(out)


@pytest.mark.s3
def test_hand_edit_survives_the_next_run(store, tmp_path: Path) -> None:
    from brainfs.dream.sync import run_s3, wiki_log

    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2}.items():
        store.put(p, t.encode())
    run_s3(store, tmp_path / "w", reindex=False)
    mara0 = store.get("knowledge/mara.md")[0].decode()
    assert "adopted a dog" in mara0 and "favorite park is Maruyama Park" in mara0
    store.put("knowledge/mara.md", _edit(mara0).encode())  # the edit, straight into the bucket
    store.put("sessions/s3/transcript.md", S3_.encode())    # and something new to dream about

    rep = run_s3(store, tmp_path / "w", reindex=False)
    assert rep.commit and not rep.conflicts
    assert not [p for p in rep.result.problems if p.severity == "error"], rep.result.problems
    mara = store.get("knowledge/mara.md")[0].decode()
    meta, body, _ = split_frontmatter(mara)
    lines = body.split("\n")
    # the added line is kept, where it was put, citing the hand edit as its source
    i = next(k for k, ln in enumerate(lines) if "Mara is allergic to cats." in ln)
    assert "volunteers there" in lines[i - 1]
    n = int(lines[i].split("[cite:")[1].split("]")[0])
    assert meta["sources"][n - 1].startswith("knowledge/mara.md#hand-")
    # the deleted claim is not re-added here (a forget for this page only)
    assert "adopted a dog" not in mara
    assert "adopted a dog" not in store.get("knowledge/INDEX.md")[0].decode()
    state = json.loads(store.get(".brainfs/dream-state.json")[0])
    assert any("adopted a dog" in f["text"] for f in state["sessions"]["s1"]["facts"])  # only the page
    # the rewritten line contradicts the page: a correction event, a card, cited in place
    assert "favorite park is Maruyama Park" not in mara
    heian = next(ln for ln in lines if "Heian Garden" in ln)
    src = meta["sources"][int(heian.split("[cite:")[1].split("]")[0]) - 1]
    assert src.startswith("notes/corrections/")
    card_meta, card_body, _ = split_frontmatter(store.get(src)[0].decode())
    assert card_meta["type"] == "correction" and "Heian Garden" in card_body
    event = store.get(card_meta["source"])[0].decode()
    assert card_meta["source"].startswith("corrections/") and "origin: hand-edit" in event
    assert "## Corrections" not in mara  # shown in place, not twice
    # the new session still came in, and the commit says what happened to the edit
    assert "s3" in store.get("sessions/index.md")[0].decode()
    msg = wiki_log(store, tmp_path / "log")[0][1]
    assert "M knowledge/mara.md — " in msg and "hand edit: +2 hand lines kept" in msg
    assert "2 claims deleted by hand, not re-added" in msg
    assert "contradicts a claim of the page" in msg
    assert rep.result.stats["rejected"] == 0

    # stable: a forced rerun changes nothing (no duplicated hand line, no new commit)
    again = run_s3(store, tmp_path / "w", reindex=False, force=True)
    assert again.commit is None and store.get("knowledge/mara.md")[0].decode() == mara

    # the person removes their own line again: it stays gone
    store.put("knowledge/mara.md", mara.replace(lines[i] + "\n", "").encode())
    run_s3(store, tmp_path / "w", reindex=False)
    after = store.get("knowledge/mara.md")[0].decode()
    assert "allergic" not in after and "Heian Garden" in after
    state = json.loads(store.get(".brainfs/dream-state.json")[0])
    assert not [x for x in state["hand"]["knowledge/mara.md"]["lines"] if "allergic" in x["text"]]


@pytest.mark.unit
def test_deleted_page_is_not_written_again(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    run_local(tree, None, apply=True)
    assert (tree / "knowledge/max.md").exists()
    (tree / "knowledge/max.md").unlink()
    res = run_local(tree, None, apply=True)
    assert not (tree / "knowledge/max.md").exists()
    assert "[[max]]" not in (tree / "knowledge/mara.md").read_text()
    assert "[[max]]" not in (tree / "knowledge/INDEX.md").read_text()
    assert not [p for p in res.problems if p.severity == "error"]
    # new facts about the subject do not bring it back either
    write(tree, {"sessions/s3/transcript.md": S3_})
    run_local(tree, None, apply=True)
    assert not (tree / "knowledge/max.md").exists()


@pytest.mark.unit
def test_unedited_pages_are_not_hand_edits(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    run_local(tree, None, apply=True)
    assert run_local(tree, None).nothing_new
    write(tree, {"sessions/s3/transcript.md": S3_})
    res = run_local(tree, None, apply=True)
    assert not [c for c in res.changes if "hand edit" in c.reason]
    assert json.loads((tree / ".brainfs/dream-state.json").read_text()).get("hand", {}) == {}


@pytest.mark.unit
def test_hand_line_cannot_break_or_freeze_the_page(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    run_local(tree, None, apply=True)
    page = tree / "knowledge/kyoto.md"
    page.write_text(page.read_text().replace(
        "## Related", "- Kyoto has the best tofu, see [[nowhere]] [cite: the guidebook]\n\n## Related"))
    res = run_local(tree, None, apply=True)
    assert not [p for p in res.problems if p.severity == "error"], res.problems
    text = page.read_text()
    line = next(ln for ln in text.splitlines() if "best tofu" in ln)
    assert "[[nowhere]]" not in line and "see nowhere" in line and "guidebook" not in line
    assert "knowledge/kyoto.md" not in res.stats["excluded"]
    # the cleaned line is still recognized as the person's: deleting it removes it for good
    page.write_text(text.replace(line + "\n", ""))
    run_local(tree, None, apply=True)
    assert "best tofu" not in page.read_text()
    # a forget request also reaches hand lines
    page.write_text(page.read_text().replace("## Related", "- Tofu lunch with Hiro every Friday.\n\n## Related"))
    run_local(tree, None, apply=True)
    assert "Tofu lunch" in page.read_text()
    write(tree, {"forget/tofu.md": "tofu lunch\n"})
    run_local(tree, None, apply=True)
    assert "Tofu lunch" not in page.read_text()
