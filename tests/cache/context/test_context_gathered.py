"""A page's lines gathered across sessions (``## Across sessions``, dream/gather.py) in
context: parsed as claims citing every value's turn, and, for a task that names the page's
subject, admitted first when they share a word with the task, recalled or not
(``WikiUse.gathered``). The memory is written to a temporary directory and indexed for real
(FTS only: the sparse path needs no model)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from brainfs.cache.context.assembly import MemorySource, WikiUse, assemble
from brainfs.cache.context.claims import page_claims
from brainfs.cache.search.index import SearchIndex

pytestmark = pytest.mark.unit

NOW = _dt.datetime(2023, 11, 1, tzinfo=_dt.timezone.utc)

GATHERED = ("- Melanie's activities and hobbies: swimming (May 2023) [cite:1], pottery (July 2023) "
            "[cite:2], camping (October 2023) [cite:3]")
PAGE = f"""---
title: Melanie
type: person
aliases: [Mel]
updated: '2023-10-20'
sources:
- sessions/s1/transcript.md#D1:2
- sessions/s2/transcript.md#D2:4
- sessions/s3/transcript.md#D3:1
---
# Melanie

Melanie is a person; 12 mentions in 3 sessions, 2023-05-08 – 2023-10-20. Also called: Mel.

## Timeline

- 2023-05-08 — Melanie is off to go swimming with the kids. [cite:1]
- 2023-07-12 — Melanie signed up for a pottery class. [cite:2]
- 2023-10-20 — Melanie went camping in the mountains with the family. [cite:3]

## Across sessions

{GATHERED}
"""

TRANSCRIPTS = {
    "sessions/s1/transcript.md": """---
session: s1
date: 2023-05-08T10:00:00
---
[D1:1] Caroline: How was your week?
[D1:2] Melanie: Busy! I'm off to go swimming with the kids.
""",
    "sessions/s2/transcript.md": """---
session: s2
date: 2023-07-12T10:00:00
---
[D2:4] Melanie: I signed up for a pottery class, it's like therapy.
""",
    "sessions/s3/transcript.md": """---
session: s3
date: 2023-10-20T10:00:00
---
[D3:1] Melanie: We went camping in the mountains with the family.
""",
}


def _memory(tmp_path: Path, indexed_page: str) -> tuple[MemorySource, SearchIndex]:
    """The memory on disk with :data:`PAGE`; the index built from ``indexed_page`` in its
    place (a page whose gathered line recall cannot find)."""
    root = tmp_path / "memory"
    files = {**TRANSCRIPTS, "knowledge/melanie.md": PAGE}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    indexed = {**files, "knowledge/melanie.md": indexed_page}
    ix = SearchIndex(tmp_path / "index.sqlite")
    ix.refresh([(rel, str(hash(text))) for rel, text in indexed.items()],
               lambda rel: indexed[rel].encode("utf-8"), None)
    return MemorySource(root, ix, embedder=None, global_guide=tmp_path / "no-guide.md"), ix


@pytest.fixture()
def memory(tmp_path: Path):
    src, ix = _memory(tmp_path, PAGE)
    try:
        yield src
    finally:
        ix.close()


@pytest.fixture()
def unrecalled(tmp_path: Path):
    """The gathered line is on the page but not in the index."""
    src, ix = _memory(tmp_path, PAGE.replace(GATHERED, ""))
    try:
        yield src
    finally:
        ix.close()


def test_a_gathered_line_is_a_claim_citing_each_value() -> None:
    claims = [c for c in page_claims("knowledge/melanie.md", PAGE).values() if c.section == "gathered"]
    assert len(claims) == 1
    c = claims[0]
    assert c.date is None and c.sources == ("sessions/s1/transcript.md#D1:2",
                                            "sessions/s2/transcript.md#D2:4",
                                            "sessions/s3/transcript.md#D3:1")
    assert c.render() == ("- Melanie's activities and hobbies: swimming (May 2023), "
                          "pottery (July 2023), camping (October 2023)")


def test_a_list_question_naming_the_subject_gets_the_gathered_line_first(memory) -> None:
    w = assemble("What activities does Mel do?", memory, budget=600, reserve=0, now=NOW,
                 wiki=WikiUse(dedupe=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert it.status == "admitted", it.reason
    assert it.text.split("\n")[0].startswith("- Melanie's activities and hobbies: swimming (May 2023)")


def test_the_gathered_line_comes_recalled_or_not(unrecalled) -> None:
    task = "Which activities has Melanie done, like swimming?"
    w = assemble(task, unrecalled, budget=600, reserve=0, now=NOW, wiki=WikiUse(dedupe=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert it.status == "admitted" and it.text.startswith("- Melanie's activities and hobbies"), it.text
    # without the option, only what recall found: the timeline line about swimming
    w = assemble(task, unrecalled, budget=600, reserve=0, now=NOW,
                 wiki=WikiUse(dedupe=False, gathered=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert "activities and hobbies" not in it.text and "swimming" in it.text


def test_a_task_not_naming_the_subject_gets_no_unrecalled_gathered_line(unrecalled) -> None:
    w = assemble("Which activities involve swimming?", unrecalled, budget=600, reserve=0, now=NOW,
                 wiki=WikiUse(dedupe=False))
    assert all("activities and hobbies" not in i.text for i in w.items)
