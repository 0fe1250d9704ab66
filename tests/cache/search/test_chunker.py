"""Chunker: the three file forms, kinds, anchors, malformed frontmatter, bad bytes."""

from __future__ import annotations

import pytest

from brainfs.cache.search.chunker import (
    CHUNK_CHARS,
    CLAIM_CHARS,
    DEFAULT_CONFIDENCE,
    chunk_file,
    embed_text,
    embed_texts,
    parse_confidence,
    path_kind,
    slugify,
    split_frontmatter,
)

pytestmark = pytest.mark.unit

TRANSCRIPT = """---
session: s-2024-03-02
date: 2024-03-02T10:15:00
participants: [Mara, Assistant]
---

# Session of 2 March

[D3:1] Mara: I adopted a dog last weekend.

[D3:2] Assistant: Congratulations! What breed?

[D3:7] Mara: A border collie named Pixel.
She already knows how to sit.
"""


def test_transcript_one_chunk_per_turn_with_anchor_speaker_and_date() -> None:
    chunks = chunk_file("sessions/s-2024-03-02/transcript.md", TRANSCRIPT)
    assert [c.anchor for c in chunks] == ["D3:1", "D3:2", "D3:7"]
    assert [c.speaker for c in chunks] == ["Mara", "Assistant", "Mara"]
    assert all(c.kind == "turn" for c in chunks)
    assert all(c.created == c.updated == "2024-03-02T10:15:00" for c in chunks)
    # The searchable text carries speaker and date; the multi-line turn stays whole.
    assert chunks[0].text == "Mara (2 March 2024): I adopted a dog last weekend."
    assert "She already knows how to sit." in chunks[2].text
    assert chunks[2].ref == "sessions/s-2024-03-02/transcript.md#D3:7"
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert chunks[0].confidence == DEFAULT_CONFIDENCE["turn"]
    # The heading line is layout, not a chunk.
    assert not any("Session of 2 March" in c.text for c in chunks)


def test_transcript_turns_without_blank_lines_and_with_broken_frontmatter() -> None:
    text = "---\nsession: [unclosed\n---\n[D1:1] A: one\n[D1:2] B: two\n"
    chunks = chunk_file("sessions/x/transcript.md", text)
    assert [c.anchor for c in chunks] == ["D1:1", "D1:2"]
    assert all(c.malformed_frontmatter for c in chunks)
    assert chunks[0].created is None


def test_turn_embedding_text_carries_the_previous_turn_as_context() -> None:
    chunks = chunk_file("sessions/s-2024-03-02/transcript.md", TRANSCRIPT)
    texts = embed_texts(chunks)
    assert texts[0] == chunks[0].text  # first turn: nothing to reply to
    assert texts[1].startswith(chunks[1].text)  # own words first (truncation cuts context)
    assert chunks[0].text in texts[1]


PAGE = """---
title: Kyoto trip
type: Project
scope: travel
confidence: 85%
created: 2024-04-01
updated: 2024-05-02
sources:
  - sessions/s1/transcript.md#D1:3
---
Intro paragraph before any heading.

## Organisations met

We met the Kyoto Design Lab [cite:1].

## Organisations met

A second section with the same heading.

```
# not a heading inside code
```
"""


def test_page_split_by_heading_with_frontmatter_metadata() -> None:
    chunks = chunk_file("knowledge/kyoto.md", PAGE)
    assert [c.anchor for c in chunks] == ["", "organisations-met", "organisations-met-1"]
    c = chunks[1]
    assert c.kind == "project"  # frontmatter type → kind
    assert c.scope == "travel"
    assert c.confidence == pytest.approx(0.85)
    assert c.created == "2024-04-01" and c.updated == "2024-05-02"
    assert c.title == "Kyoto trip" and c.heading == "Organisations met"
    assert "[cite:1]" in c.text
    assert "# not a heading inside code" in chunks[2].text  # fenced code did not split
    assert embed_text(c).startswith("Kyoto trip — Organisations met")


def test_page_paragraphs_respect_the_size_cap() -> None:
    para = ("word " * 100).strip()  # ~500 chars
    text = "---\ntitle: Big\n---\n# Big\n\n" + "\n\n".join([para] * 6) + "\n\n" + "x" * 3000
    chunks = chunk_file("knowledge/big.md", text)
    assert len(chunks) >= 5
    assert all(len(c.text) <= CHUNK_CHARS for c in chunks)
    assert all(c.anchor == "big" for c in chunks)
    assert sorted(c.ordinal for c in chunks) == list(range(len(chunks)))


def test_cited_claim_lists_are_packed_at_turn_size_and_never_with_prose() -> None:
    claims = [f"- 2023-05-{d:02d} — Mara: “I walked Max to the lake number {d}.” [cite:{d}]"
              for d in range(1, 13)]
    long_claim = "- Mara: “" + "very " * 60 + "long.” [cite:13]"
    text = ("---\ntitle: Mara\n---\n# Mara\n\nMara is a person. Related: [[max]].\n\n## Facts\n\n"
            + "\n".join(claims) + "\n" + long_claim + "\n\nA closing paragraph without citations.\n\n"
            "## Notes\n\n- an uncited list\n- stays prose\n")
    chunks = chunk_file("knowledge/mara.md", text)
    facts = [c for c in chunks if c.anchor == "facts"]
    packed = [c for c in facts if "[cite:" in c.text]
    # every claim is in exactly one piece, whole, in order; pieces stay about a turn's size
    assert "\n".join(c.text for c in packed) == "\n".join(claims + [long_claim])
    assert len(packed) >= 4 and all(c.text.startswith("- ") for c in packed)
    assert all(len(c.text) <= CLAIM_CHARS for c in packed[:-1])
    assert packed[-1].text == long_claim  # a single long claim is not cut below CHUNK_CHARS
    assert facts[-1].text == "A closing paragraph without citations."  # prose apart
    notes = [c for c in chunks if c.anchor == "notes"]
    assert [c.text for c in notes] == ["- an uncited list\n- stays prose"]


def test_notes_guide_summary_kinds_and_default_confidence() -> None:
    note = chunk_file("notes/pets/dog.md", "---\nscope: personal\n---\nMara likes dogs.\n")
    assert note[0].kind == "note" and note[0].scope == "personal"
    assert note[0].confidence == DEFAULT_CONFIDENCE["note"]
    assert note[0].anchor == ""
    assert chunk_file("GUIDE.md", "Answer in English.")[0].kind == "guide"
    assert chunk_file("sessions/s1/summary.md", "# Summary\n\nThey talked.")[0].kind == "summary"
    assert path_kind("knowledge/INDEX.md") == "index"
    assert path_kind("sessions/a/transcript.md") == "turn"


def test_plain_text_paragraphs_anchored_by_line() -> None:
    chunks = chunk_file("misc/log.txt", "first para\nstill first\n\n\nsecond para\n")
    assert [c.text for c in chunks] == ["first para\nstill first\n\nsecond para"]
    assert chunks[0].anchor == "L1" and chunks[0].kind == "text"
    big = "\n\n".join(f"paragraph {i} " + "y" * 700 for i in range(3))
    chunks = chunk_file("misc/big.txt", big)
    assert [c.anchor for c in chunks] == ["L1", "L3", "L5"]


@pytest.mark.parametrize("bad", [
    "---\ntitle: [unclosed\n---\nBody text here.\n",          # YAML syntax error
    "---\n- just\n- a list\n---\nBody text here.\n",           # not a mapping
    "---\ntitle: no closing fence\nBody text here.\n",         # never closed
    "---\n!!python/object:os.system x\n---\nBody text here.\n",  # unsafe tag
    "---\na: &a [*a]\n---\nBody text here.\n",                 # recursive alias
])
def test_malformed_frontmatter_never_raises_and_falls_back_to_plain_text(bad: str) -> None:
    chunks = chunk_file("notes/t/bad.md", bad)
    assert chunks, "the body must still be indexed"
    assert any("Body text here." in c.text for c in chunks)
    if bad.count("---") >= 2 and "a: &a" not in bad:
        assert all(c.malformed_frontmatter for c in chunks)
        assert chunks[0].anchor.startswith("L")


def test_non_utf8_bytes_decode_with_replacement() -> None:
    data = b"---\ntitle: Caf\xe9\n---\n# Men\xfc\n\nPrice: 5\xff\xfe euros\x00.\n"
    chunks = chunk_file("knowledge/cafe.md", data)
    assert chunks
    assert "\ufffd" in chunks[0].title
    assert "\x00" not in chunks[0].text and "\ufffd" in chunks[0].text


def test_empty_and_whitespace_files_give_no_chunks() -> None:
    assert chunk_file("notes/a/empty.md", "") == []
    assert chunk_file("notes/a/blank.md", b"   \n\n\t\n") == []
    assert chunk_file("notes/a/fm-only.md", "---\ntitle: x\n---\n") == []


def test_helpers() -> None:
    assert slugify("Orgs met in Kyoto (2024)!") == "orgs-met-in-kyoto-2024"
    assert parse_confidence("high", 0.5) == 0.9
    assert parse_confidence(85, 0.5) == 0.85
    assert parse_confidence("nonsense", 0.4) == 0.4
    assert parse_confidence(-3, 0.4) == 0.0
    meta, body, bad = split_frontmatter("---\n---\nbody")
    assert meta == {} and body == "body" and not bad
    assert split_frontmatter("no frontmatter") == (None, "no frontmatter", False)
