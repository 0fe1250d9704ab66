"""Wiki pages in context as claim lines (cache/context/claims.py, assembly.WikiUse).

A page as dream writes it (dream/README.md, *Pages*) is parsed into dated, cited lines;
assembly admits the lines of the recalled chunks that are about the task, dated as a
person writes a date, without ``[cite:N]`` markers, and leaves out a line whose cited turn
recall found too. The memory is written to a temporary directory and indexed for real
(FTS only: the sparse path needs no model).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from brainfs.cache.context.assembly import MemorySource, WikiUse, assemble
from brainfs.cache.context.claims import chunk_claims, page_claims
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.model import token_counter

pytestmark = pytest.mark.unit

NOW = _dt.datetime(2023, 11, 1, tzinfo=_dt.timezone.utc)

PAGE = """---
title: Melanie
type: person
aliases: [Mel]
updated: '2023-10-20'
sources:
- sessions/s1/transcript.md#D1:2
- sessions/s2/transcript.md#D2:4
- sessions/s3/transcript.md#D3:1
- sessions/s3/transcript.md#D3:6
---
# Melanie

Melanie is a person; 12 mentions in 3 sessions, 2023-05-08 – 2023-10-20. Also called: Mel.

- Melanie's husband is Ben (since 8 May 2023) [cite:1]

## Timeline

- 2023-05-08 — Melanie signed up for a pottery class yesterday (2023-05-07). [cite:1]
- 2023-07-07 — Melanie went to a pride parade last Friday (2023-07-07). [cite:2]
- 2023-07-12 — Melanie has been running farther to de-stress. [cite:2]
- 2023-10-20 — Melanie painted a lake at sunrise for the school fair. [cite:4]

## Superseded

- Melanie lived in Denver (from 8 May 2023) [cite:1] — until 20 October 2023, replaced by Boulder [cite:3]

## Threads

### pottery

- 2023-05-08 — …signed up for a pottery class… [cite:1]

## Related

- [[caroline]]
"""

TRANSCRIPTS = {
    "sessions/s1/transcript.md": """---
session: s1
date: 2023-05-08T10:00:00
---
[D1:1] Caroline: How was your week?
[D1:2] Melanie: Busy! My husband Ben says hi. I signed up for a pottery class yesterday, it's like therapy.
""",
    "sessions/s2/transcript.md": """---
session: s2
date: 2023-07-12T10:00:00
---
[D2:3] Caroline: New shoes?
[D2:4] Melanie: These are for running. Been running farther to de-stress, great for my head.
""",
    "sessions/s3/transcript.md": """---
session: s3
date: 2023-10-20T10:00:00
---
[D3:1] Melanie: We moved to Boulder last month, the kids love it.
[D3:6] Melanie: I painted a lake at sunrise for the school fair.
""",
}


@pytest.fixture()
def memory(tmp_path: Path):
    root = tmp_path / "memory"
    files = {**TRANSCRIPTS, "knowledge/melanie.md": PAGE}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ix = SearchIndex(tmp_path / "index.sqlite")
    ix.refresh([(rel, str(hash(text))) for rel, text in files.items()],
               lambda rel: files[rel].encode("utf-8"), None)
    try:
        yield MemorySource(root, ix, embedder=None, global_guide=tmp_path / "no-guide.md")
    finally:
        ix.close()


def test_a_page_is_read_as_dated_cited_lines_by_section() -> None:
    claims = list(page_claims("knowledge/melanie.md", PAGE).values())
    by_section = {c.section: [x for x in claims if x.section == c.section] for c in claims}
    assert [len(by_section[s]) for s in ("now", "timeline", "superseded", "thread")] == [1, 4, 1, 1]
    now = by_section["now"][0]
    assert now.date is None and now.sources == ("sessions/s1/transcript.md#D1:2",)
    run = by_section["timeline"][2]
    assert run.date == "2023-07-12" and run.sources == ("sessions/s2/transcript.md#D2:4",)
    assert "[cite" not in run.text and run.text.startswith("Melanie has been running")
    # the superseded line cites both statements, in order
    assert by_section["superseded"][0].sources == ("sessions/s1/transcript.md#D1:2",
                                                   "sessions/s3/transcript.md#D3:1")
    # Related links cite nothing: no claim
    assert not any("caroline" in c.text for c in claims)


def test_a_claim_renders_with_a_person_s_date_and_no_markers() -> None:
    claims = list(page_claims("knowledge/melanie.md", PAGE).values())
    lines = [c.render() for c in claims]
    assert "- 8 May 2023 — Melanie signed up for a pottery class yesterday (7 May 2023)." in lines
    assert any(line.startswith("- no longer true: Melanie lived in Denver") for line in lines)
    assert not any("cite" in line or "2023-05" in line for line in lines)


def test_a_chunk_finds_its_claims_line_by_line() -> None:
    claims = page_claims("knowledge/melanie.md", PAGE)
    chunk = ("- 2023-07-12 — Melanie has been running farther to de-stress. [cite:2]\n"
             "- 2023-10-20  —  Melanie painted a lake at sunrise for the school fair. [cite:4]\n"
             "- a line that is not on the page [cite:9]")
    assert [c.date for c in chunk_claims(chunk, claims)] == ["2023-07-12", "2023-10-20"]


def test_context_admits_the_lines_about_the_task_once(memory) -> None:
    task = "Where did Melanie paint the lake at sunrise?"
    w = assemble(task, memory, budget=600, reserve=0, now=NOW, wiki=WikiUse(dedupe=False))
    page = [i for i in w.items if i.path == "knowledge/melanie.md"]
    assert len(page) == 1, [i.source for i in page]  # one item per page, however many chunks
    it = page[0]
    assert it.kind == "claims" and it.status == "admitted", it.reason
    lines = it.text.split("\n")
    assert "- 20 October 2023 — Melanie painted a lake at sunrise for the school fair." in lines
    # the task names Melanie: what is true of her now comes too; no other timeline line
    assert sorted(lines)[0] == "- 20 October 2023 — Melanie painted a lake at sunrise for the school fair."
    assert set(lines) <= {sorted(lines)[0], "- Melanie's husband is Ben (since 8 May 2023)"}
    assert "sharing no word with the task" in it.reason and "sessions/s3/transcript.md#D3:6" in it.reason
    assert w.used == token_counter()([w.to_prompt()])[0]
    # a line whose cited turn recall found too is left to the turn, said whole there (here at
    # the weak-match floor of any hit, under which the husband's turn D1:2 is weak)
    w = assemble(task, memory, budget=600, reserve=0, now=NOW, wiki=WikiUse(turn_floor=0.25))
    turns = {i.source for i in w.items if i.lane == "thread" and i.status != "skipped"}
    assert "sessions/s3/transcript.md#D3:6" in turns
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert "1 already stated by a recalled turn" in it.reason and "painted" not in it.text
    assert it.text == "- Melanie's husband is Ben (since 8 May 2023)"
    # by default the turns' floor is lower beside pages (WikiUse.turn_floor): D1:2 is
    # admitted too, and every line of the page is left to its turn
    w = assemble(task, memory, budget=600, reserve=0, now=NOW)
    turns = {i.source for i in w.items if i.lane == "thread" and i.status != "skipped"}
    assert {"sessions/s3/transcript.md#D3:6", "sessions/s1/transcript.md#D1:2"} <= turns
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert it.status == "skipped" and "3 already stated by a recalled turn" in it.reason


def test_the_wiki_line_stays_when_its_turn_is_not_recalled(memory) -> None:
    w = assemble("Did Melanie take a pottery class?", memory, budget=600, reserve=0, now=NOW,
                 wiki=WikiUse(dedupe=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert it.status == "admitted" and "- 8 May 2023 — Melanie signed up for a pottery class" in it.text
    # the thread fragment is read as the timeline line it was cut from: said once, whole
    assert "…" not in it.text and it.text.count("pottery") == 1
    # timeline lines about other things (running, painting) are not admitted
    assert "running" not in it.text and "painted" not in it.text


def test_a_page_with_nothing_about_the_task_is_skipped_with_its_reason(memory) -> None:
    w = assemble("What is Melanie's favourite colour?", memory, budget=600, reserve=0, now=NOW)
    for it in (i for i in w.items if i.path == "knowledge/melanie.md"):
        assert it.status == "skipped" and "no claim line" in it.reason


def test_pages_as_chunks_when_asked(memory) -> None:
    w = assemble("Where did Melanie paint the lake at sunrise?", memory, budget=600, reserve=0,
                 now=NOW, wiki=WikiUse(claims=False))
    page = [i for i in w.items if i.path == "knowledge/melanie.md"]
    assert page and all(i.kind != "claims" for i in page)
    assert any("[cite:" in i.text for i in page)


def test_what_is_true_now_comes_with_a_task_naming_the_subject(memory) -> None:
    w = assemble("Tell me about Mel", memory, budget=600, reserve=0, now=NOW,
                 wiki=WikiUse(dedupe=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    assert it.status == "admitted" and "Melanie's husband is Ben (since 8 May 2023)" in it.text
    assert "running" not in it.text  # a timeline line still needs a word of the task


def test_a_list_of_links_is_no_statement(tmp_path: Path) -> None:
    root = tmp_path / "m"
    page = "---\ntitle: Caption latency\n---\n# Caption latency\n\n## Related\n\n- [[ramp-ledger]] (project)\n- [[nadia]] (person)\n"
    (root / "knowledge").mkdir(parents=True)
    (root / "knowledge/caption-latency.md").write_text(page, encoding="utf-8")
    ix = SearchIndex(tmp_path / "ix.sqlite")
    try:
        ix.refresh([("knowledge/caption-latency.md", "1")], lambda rel: page.encode(), None)
        w = assemble("ramp ledger project", MemorySource(root, ix, embedder=None,
                                                         global_guide=tmp_path / "g.md"),
                     budget=600, reserve=0, now=NOW)
    finally:
        ix.close()
    links = [i for i in w.items if i.path == "knowledge/caption-latency.md"]
    assert links and all(i.status == "skipped" and "list of links" in i.reason for i in links)


def test_an_event_dated_apart_from_its_session_says_both(memory) -> None:
    w = assemble("When did Melanie go to the pride parade?", memory, budget=600, reserve=0,
                 now=NOW, wiki=WikiUse(dedupe=False))
    it = next(i for i in w.items if i.path == "knowledge/melanie.md")
    # "last Friday", said on 12 July: the gold of such a question reads "the Friday before 12 July 2023"
    assert ("- 7 July 2023 (said 12 July 2023) — Melanie went to a pride parade last Friday (7 July 2023)."
            in it.text.split("\n"))
