"""The same correction recorded twice is one card (``same_correction``); a memory that a
release without that rule left with a "-2" twin superseding the identical first card gets
it merged back on its next run, even when nothing else is new."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream import corrections as C
from brainfs.dream.core import correction_event, run_local

from dream_helpers import S1, S2, write


def _event(tree: Path, text: str, minute: int) -> None:
    path, content = correction_event(text, now=_dt.datetime(2026, 11, 3, 9, minute, tzinfo=_dt.timezone.utc))
    write(tree, {path: content})


@pytest.mark.unit
def test_a_twin_card_left_by_an_older_run_is_merged_into_the_first(tmp_path: Path, monkeypatch) -> None:
    tree = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    run_local(tree, None, apply=True)
    _event(tree, "Max is a beagle, not a terrier.", 1)
    _event(tree, "Max is a beagle, not a terrier", 2)  # a retry
    with monkeypatch.context() as mp:  # how a release without same_correction ran
        mp.setattr(C, "same_correction", lambda *a, **k: None)
        run_local(tree, None, apply=True)
    cards = sorted((tree / "notes/corrections").iterdir())
    assert [c.name for c in cards] == ["2026-11-03-max-beagle-terrier-2.md", "2026-11-03-max-beagle-terrier.md"]
    assert "superseded_by" in cards[1].read_text()

    res = run_local(tree, None, apply=True)  # nothing new but the twin
    assert not res.nothing_new
    left = sorted((tree / "notes/corrections").iterdir())
    assert [c.name for c in left] == ["2026-11-03-max-beagle-terrier.md"]
    meta = split_frontmatter(left[0].read_text())[0]
    assert "superseded_by" not in meta and "supersedes" not in meta and meta["confidence"] == 0.9
    gone = next(c for c in res.changes if c.path.endswith("-2.md"))
    assert gone.action == "delete" and "the same correction as" in gone.reason
    assert "max-beagle-terrier-2" not in (tree / "knowledge/max.md").read_text()
    assert run_local(tree, None, apply=True).nothing_new
