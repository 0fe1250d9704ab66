"""Recall leaves a wiki line to the turns it cites when it returns them too (``restated``).

A page as dream writes it and the transcripts it cites are indexed for real (FTS only: the
sparse path needs no model). A question that finds a page's claim line and the turn the
line cites gets the turn, and the page chunk without that line; the chunk's other lines
stay, each ``[cite:N]`` still resolving through the page's ``sources:``. A chunk left with
no line is dropped and the list filled up again; the lines of ``## Superseded`` and of
what is true now of a page the question names stay.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.cache.search.chunker import chunk_file
from brainfs.cache.search.citations import cited_refs, cites_in
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.indexschema import SCHEMA_VERSION
from brainfs.cache.search.localindex import LocalIndex
from brainfs.cache.search.restated import leave_to_turns, left_lines
from brainfs.cache.search.retrieval import retrieve

pytestmark = pytest.mark.unit

NOW = _dt.datetime(2023, 11, 1, tzinfo=_dt.timezone.utc)
PAGE_PATH = "knowledge/melanie.md"

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
- sessions/s3/transcript.md#D3:7
---
# Melanie

Melanie is a person; 12 mentions in 3 sessions. Also called: Mel.

- Melanie's husband is Ben (since 8 May 2023) [cite:1]

## Timeline

- 2023-05-08 — Melanie signed up for a pottery class yesterday (2023-05-07). [cite:1]
- 2023-07-07 — Melanie went to a pride parade last Friday (2023-07-07). [cite:2]
- 2023-07-12 — Melanie has been running farther to de-stress. [cite:2]
- 2023-10-20 — Melanie painted a lake at sunrise for the school fair. [cite:4]
- 2023-10-20 — Melanie's daughter carried the kayak to the lake shore at dawn, with the new paddles. [cite:5]

## Superseded

- Melanie lived in Denver (from 8 May 2023) [cite:1] — until 20 October 2023, replaced by Boulder [cite:3]
"""

TRANSCRIPTS = {
    "sessions/s1/transcript.md": """---
session: s1
date: 2023-05-08T10:00:00
---
[D1:1] Caroline: How was your week?

[D1:2] Melanie: Busy! My husband Ben says hi. I signed up for a pottery class yesterday, it's like therapy. We still live in Denver.
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

[D3:5] Caroline: What have you been up to?

[D3:6] Melanie: I painted a lake at sunrise for the school fair.

[D3:7] Melanie: And my daughter carried the kayak to the lake shore at dawn, with the new paddles.
""",
}

FILES = {**TRANSCRIPTS, PAGE_PATH: PAGE}


def _index(path: Path, files: dict[str, str] = FILES) -> SearchIndex:
    ix = SearchIndex(path)
    ix.refresh([(rel, str(hash(text))) for rel, text in files.items()],
               lambda rel: files[rel].encode("utf-8"), None)
    return ix


@pytest.fixture()
def ix(tmp_path: Path):
    index = _index(tmp_path / "index.sqlite")
    try:
        yield index
    finally:
        index.close()


def _page_cards(result):
    return [c for c in result.cards if c.path == PAGE_PATH]


def _assert_cites_resolve(card) -> None:
    """Every ``[cite:N]`` of a card resolves through its page's frontmatter."""
    table = cited_refs(PAGE)
    for line in card.text.split("\n"):
        for n in cites_in(line):
            assert n in table, (n, line)


def test_the_chunker_resolves_a_page_chunks_cites_and_the_index_keeps_them(ix: SearchIndex) -> None:
    timeline = [c for c in chunk_file(PAGE_PATH, PAGE) if c.heading == "Timeline"]
    # the precondition the next test needs: the running and the painting line share a chunk
    both = [c for c in timeline if "painted a lake" in c.text]
    assert len(both) == 1 and "running farther" in both[0].text
    assert both[0].cites == {2: "sessions/s2/transcript.md#D2:4", 4: "sessions/s3/transcript.md#D3:6"}
    rows = ix.chunks_by_id(r[0] for r in ix.conn.execute(
        "SELECT id FROM chunks WHERE path = ? AND text LIKE '%painted a lake%'", (PAGE_PATH,)))
    assert [r["cites"] for r in rows.values()] == [
        '{"2": "sessions/s2/transcript.md#D2:4", "4": "sessions/s3/transcript.md#D3:6"}']
    assert ix.meta("schema_version") == str(SCHEMA_VERSION) == "5"


def test_a_wiki_line_whose_turn_recall_returns_is_left_to_it(ix: SearchIndex) -> None:
    res = retrieve(ix, "Who painted a lake at sunrise for the school fair?", k=10, now=NOW,
                   leave_to_turns=True)
    refs = [c.ref for c in res.cards]
    assert "sessions/s3/transcript.md#D3:6" in refs
    pages = _page_cards(res)
    # the running line shares the chunk and cites a turn recall did not return: it stays
    kept = [c for c in pages if "running farther" in c.text]
    assert len(kept) == 1
    assert not any("painted a lake" in c.text for c in pages), [c.text for c in pages]
    assert kept[0].text == "- 2023-07-12 — Melanie has been running farther to de-stress. [cite:2]"
    assert "left to the recalled turns they cite: sessions/s3/transcript.md#D3:6" in kept[0].reason
    assert "wiki line" in res.why and "left to the recalled turns" in res.why
    for c in pages:
        _assert_cites_resolve(c)
    assert cited_refs(PAGE)[cites_in(kept[0].text)[0]] == "sessions/s2/transcript.md#D2:4"

    # without the rule (brainfs context's recall: it applies its own), the chunk is whole
    whole = retrieve(ix, "Who painted a lake at sunrise for the school fair?", k=10, now=NOW)
    assert any("painted a lake" in c.text and "running farther" in c.text for c in _page_cards(whole))


def test_a_chunk_left_with_no_line_is_dropped_and_the_list_filled_up(ix: SearchIndex) -> None:
    q = "Who carried the kayak to the lake shore at dawn with the new paddles?"
    before = retrieve(ix, q, k=3, now=NOW)
    kayak = [c for c in before.cards if c.path == PAGE_PATH and "kayak" in c.text]
    assert kayak and kayak[0].text.count("\n") == 0  # the line alone in its chunk
    assert "sessions/s3/transcript.md#D3:7" in [c.ref for c in before.cards]
    after = retrieve(ix, q, k=3, now=NOW, leave_to_turns=True)
    assert not any(c.path == PAGE_PATH and "kayak" in c.text for c in after.cards)
    assert "sessions/s3/transcript.md#D3:7" in [c.ref for c in after.cards]
    assert len(after.cards) == 3  # filled up from the next candidates
    assert "dropped, the list filled up again" in after.why


def test_what_is_true_now_of_a_page_the_question_names_stays(ix: SearchIndex) -> None:
    named = retrieve(ix, "Is Melanie's husband Ben?", k=10, now=NOW, leave_to_turns=True)
    assert "sessions/s1/transcript.md#D1:2" in [c.ref for c in named.cards]
    assert any("husband is Ben" in c.text for c in _page_cards(named))
    # the same line, the page not named: the turn says it in full
    unnamed = retrieve(ix, "Whose husband is Ben?", k=10, now=NOW, leave_to_turns=True)
    assert "sessions/s1/transcript.md#D1:2" in [c.ref for c in unnamed.cards]
    assert not any("husband is Ben" in c.text for c in _page_cards(unnamed))


def test_a_superseded_line_stays_with_its_turns(ix: SearchIndex) -> None:
    res = retrieve(ix, "Did they live in Denver before moving to Boulder?", k=10, now=NOW,
                   leave_to_turns=True)
    refs = [c.ref for c in res.cards]
    assert {"sessions/s1/transcript.md#D1:2", "sessions/s3/transcript.md#D3:1"} <= set(refs)
    assert any("replaced by Boulder" in c.text for c in _page_cards(res))


def test_a_line_is_kept_unless_every_cite_resolves_to_a_returned_turn() -> None:
    cites = {1: "s#D1", 2: "s#D2"}
    text = "- a [cite:1]\n- b [cite:1,2]\n- c [cite:3]\n- d, no cite"
    assert left_lines(text, cites, {"s#D1"}) == ("- b [cite:1,2]\n- c [cite:3]\n- d, no cite", ["s#D1"])
    assert left_lines(text, cites, {"s#D1", "s#D2"}) == ("- c [cite:3]\n- d, no cite", ["s#D1", "s#D2"])


def test_superseded_lines_replaced_passages_and_a_named_pages_now_stay_whole() -> None:
    def row(text: str, heading: str | None, path: str = PAGE_PATH, kind: str = "page") -> dict:
        return {"path": path, "anchor": "x", "kind": kind, "title": "Melanie", "heading": heading,
                "text": text, "cites": '{"1": "sessions/s1/transcript.md#D1:2"}' if kind == "page" else None}

    rows = {1: row("- lived in Denver [cite:1] — until 2023, replaced by Boulder", "Superseded"),
            2: row("- painted [cite:1]", "Timeline"), 3: row("- married [cite:1]", "Melanie"),
            4: row("- ran [cite:1]", "Timeline"),
            5: {"path": "sessions/s1/transcript.md", "anchor": "D1:2", "kind": "turn", "text": "t"},
            6: {"path": "sessions/s1/transcript.md", "anchor": "D1:1", "kind": "turn", "text": "u"}}
    out = leave_to_turns([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], rows, 5, "what did Melanie do?",
                         {4}, lambda r: ["Melanie", "Mel"])
    # 2 is dropped (its one line restates turn 5) and the list filled up with 6
    assert out.ids == [1, 3, 4, 5, 6] and out.dropped == 1 and out.lines == 1 and out.texts == {}
    out = leave_to_turns([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], rows, 5, "what did she do?", set(),
                         lambda r: ["Melanie", "Mel"])
    assert out.ids == [1, 5, 6] and out.dropped == 3  # the page is not named; 4 not replaced


def test_an_index_of_format_4_gets_the_column_and_returns_pages_whole_until_refreshed(
        tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    ix = _index(db)
    with ix.conn:
        ix.conn.execute("ALTER TABLE chunks DROP COLUMN cites")
        ix.conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    ix.close()
    ix = SearchIndex(db)
    try:
        q = "Who painted a lake at sunrise for the school fair?"
        assert any("painted a lake" in c.text
                   for c in _page_cards(retrieve(ix, q, k=10, now=NOW, leave_to_turns=True)))
        ix.refresh([(rel, str(hash(text))) for rel, text in FILES.items()],
                   lambda rel: FILES[rel].encode("utf-8"), None)
        assert ix.meta("schema_version") == str(SCHEMA_VERSION)
        assert not any("painted a lake" in c.text
                       for c in _page_cards(retrieve(ix, q, k=10, now=NOW, leave_to_turns=True)))
    finally:
        ix.close()


def test_what_recall_gives_a_reader_leaves_the_line_to_its_turn(ix: SearchIndex, tmp_path: Path) -> None:
    """``LocalIndex.search`` is what ``brainfs recall``, a mount's ``.recall/``, MCP and
    ``Memory.recall`` answer with (keyword search here: no model)."""
    res = LocalIndex(tmp_path, Config(embedder="none"), index=ix).search(
        "Who painted a lake at sunrise for the school fair?", k=10)
    assert "sessions/s3/transcript.md#D3:6" in [c.ref for c in res.cards]
    pages = _page_cards(res)
    assert pages and not any("painted a lake" in c.text for c in pages)
    assert any("running farther" in c.text for c in pages)


def test_a_page_chunks_cited_turns_survive_the_split_into_parts(tmp_path: Path) -> None:
    """An index of one file split into parts (shardsync.split_index) keeps each page chunk's
    cited turns: the parts leave a wiki line to its turns as the whole index did."""
    from brainfs.cache.search.shardsync import split_index

    whole = _index(tmp_path / "whole.sqlite")
    want = {r[0]: r[1] for r in whole.conn.execute(
        "SELECT id, cites FROM chunks WHERE path = ?", (PAGE_PATH,))}
    whole.close()
    assert any(want.values())
    names = split_index(tmp_path / "whole.sqlite", tmp_path / "parts")
    got: dict = {}
    for n in names:
        part = SearchIndex(tmp_path / "parts" / f"{n}.sqlite")
        try:
            got |= {r[0]: r[1] for r in part.conn.execute(
                "SELECT id, cites FROM chunks WHERE path = ?", (PAGE_PATH,))}
        finally:
            part.close()
    assert got == want


def test_a_wiki_line_is_not_left_to_a_turn_of_a_file_the_caller_knows_is_deleted(ix: SearchIndex) -> None:
    # A caller that knows the transcript is gone (a mount's listing, a HEAD in the bucket)
    # excludes it: its turn is not returned, so the wiki line that cites it stays, and the
    # list holds k passages of files that exist. Dropping the turn's card after the search
    # lost the statement with it.
    q = "Who painted a lake at sunrise for the school fair?"
    gone = "sessions/s3/transcript.md"
    after = [c for c in retrieve(ix, q, k=5, now=NOW, leave_to_turns=True).cards if c.path != gone]
    assert not any("painted a lake" in c.text for c in after)  # what dropping afterwards did
    res = retrieve(ix, q, k=5, now=NOW, leave_to_turns=True, exclude={gone})
    assert not any(c.path == gone for c in res.cards)
    assert any("painted a lake" in c.text for c in _page_cards(res)), [c.text for c in res.cards]
