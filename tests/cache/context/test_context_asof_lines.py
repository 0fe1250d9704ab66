"""A page's lines as of a day (cache/context/asof.py): each kind of line dream writes, read
from a tree on disk with the transcripts its lines cite (their ``date:`` says when each
statement was made). The whole window as of a day, through every interface, is
tests/front/test_context_as_of.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.cache.context.asof import AsOf
from brainfs.cache.context.assembly import MemorySource
from brainfs.cache.context.claims import page_claims

pytestmark = pytest.mark.unit

PAGE = """---
title: Melanie
type: person
sources:
- sessions/s1/transcript.md#D1:2
- sessions/s2/transcript.md#D2:4
- sessions/s3/transcript.md#D3:1
---
# Melanie

- Melanie lives in Boulder [cite:3]
- Melanie's husband is Ben (since 8 May 2023) [cite:1]

## Timeline

- 2023-05-08 — Melanie signed up for a pottery class. [cite:1]
- 2023-07-12 — Melanie has been running farther to de-stress. [cite:2]

## Across sessions

- Melanie's activities: pottery (May 2023) [cite:1], running (July 2023) [cite:2]

## Superseded

- Melanie lived in Denver (from 8 May 2023) [cite:1] — until 20 October 2023, replaced by Boulder [cite:3]
"""


def _transcript(sid: str, day: str) -> str:
    return f"---\nsession: {sid}\ndate: {day}T10:00:00\n---\n[D1:1] Melanie: hi\n"


@pytest.fixture()
def source(tmp_path: Path) -> MemorySource:
    files = {"sessions/s1/transcript.md": _transcript("s1", "2023-05-08"),
             "sessions/s2/transcript.md": _transcript("s2", "2023-07-12"),
             "sessions/s3/transcript.md": _transcript("s3", "2023-10-20"),
             "notes/old.md": "---\ncreated: 2023-05-08\nsuperseded_by: notes/new.md\n---\nDenver\n",
             "notes/new.md": "---\ncreated: 2023-10-20\nsupersedes: notes/old.md\n---\nBoulder\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return MemorySource(tmp_path, None, embedder=None, global_guide=tmp_path / "no-guide.md")


def _lines(source: MemorySource, day: str) -> list[str]:
    view = AsOf.of(source, day).page(page_claims("knowledge/melanie.md", PAGE))
    return [c.render() for c in view.claims.values()]


def test_each_kind_of_line_as_it_stood(source: MemorySource) -> None:
    assert _lines(source, "2023-06-01") == [
        "- Melanie's husband is Ben (since 8 May 2023)",
        "- 8 May 2023 — Melanie signed up for a pottery class.",
        "- Melanie's activities: pottery (May 2023)",
        # no record of the old value: the line without its tail, dated as a current line
        "- Melanie lived in Denver (since 8 May 2023)",
    ]
    assert _lines(source, "2023-08-01") == [
        "- Melanie's husband is Ben (since 8 May 2023)",
        "- 8 May 2023 — Melanie signed up for a pottery class.",
        "- 12 July 2023 — Melanie has been running farther to de-stress.",
        "- Melanie's activities: pottery (May 2023), running (July 2023)",
        "- Melanie lived in Denver (since 8 May 2023)",
    ]
    # after the move: every line as written, the old home marked
    after = _lines(source, "2023-11-01")
    assert after[0] == "- Melanie lives in Boulder"
    assert after[-1].startswith("- no longer true: Melanie lived in Denver (from 8 May 2023) — until 20 October 2023")
    # before anything was said: nothing
    assert _lines(source, "2023-01-01") == []


def test_a_card_replaces_another_from_the_day_it_was_written(source: MemorySource) -> None:
    links = {"notes/old.md": "notes/new.md"}
    assert AsOf.of(source, "2023-06-01").supersession(links) == 1 and links == {}
    links = {"notes/old.md": "notes/new.md"}
    assert AsOf.of(source, "2023-10-20").supersession(links) == 0 and links == {"notes/old.md": "notes/new.md"}
    assert AsOf.of(source, "2023-06-01").written(["notes/old.md", "notes/new.md"]) == ["notes/old.md"]
