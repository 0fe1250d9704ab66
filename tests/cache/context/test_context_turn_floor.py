"""How recalled turns are read beside wiki pages (assembly.WikiUse): the turns' weak-match
floor when pages rank among them (``turn_floor``), and which recalled turns a wiki line is
left to (``dedupe_share``). Narrow unit tests: recall's cards are built by hand (their
scores are the point), the page is a real file read by a real MemorySource."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.cache.context.assembly import RELATIVE_FLOOR, MemorySource, WikiUse
from brainfs.cache.context.recalled import _recall_lanes, _Recalled, _stated_turns
from brainfs.cache.search.cards import Card

pytestmark = pytest.mark.unit

PAGE = """---
title: Melanie
type: person
updated: '2023-07-12'
sources:
- sessions/s1/transcript.md#D1:2
---
# Melanie

Melanie is a person; 2 mentions in 1 session, 2023-05-08.

## Timeline

- 2023-05-08 — Melanie signed up for a pottery class. [cite:1]
"""


def _card(path: str, anchor: str, score: float, text: str = "Melanie: I love pottery.") -> Card:
    return Card(path=path, anchor=anchor, kind="turn" if path.startswith("sessions/") else "page",
                scope=None, title=None, text=text, truncated=False, freshness="today", stale=False,
                confidence_pct=80, score=score, reason="test")


@pytest.fixture()
def source(tmp_path: Path) -> MemorySource:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge/melanie.md").write_text(PAGE, encoding="utf-8")
    return MemorySource(tmp_path, None, embedder=None, global_guide=tmp_path / "no-guide.md")


TURNS = [_card("sessions/s1/transcript.md", "D1:5", 0.9), _card("sessions/s2/transcript.md", "D2:1", 0.1)]


def _weak(lanes) -> dict[str, bool]:
    return {it.source: bool(it.weak) for it in lanes.thread}


def test_the_turn_floor_applies_when_pages_are_among_the_hits(source: MemorySource) -> None:
    cards = [_card("knowledge/melanie.md", "", 1.0, PAGE.split("## Timeline\n\n")[1]), *TURNS]
    found = _Recalled("sparse", "test", cards)
    # 0.1 is under 25 % of the best turn (0.9): weak at the floor of any hit
    assert _weak(_recall_lanes(found, source, {}, "pottery", WikiUse(turn_floor=RELATIVE_FLOOR))) == {
        "sessions/s1/transcript.md#D1:5": False, "sessions/s2/transcript.md#D2:1": True}
    # a lower turn floor keeps it
    assert not any(_weak(_recall_lanes(found, source, {}, "pottery", WikiUse(turn_floor=0.05))).values())


def test_without_pages_the_floor_is_that_of_any_hit(source: MemorySource) -> None:
    lanes = _recall_lanes(_Recalled("sparse", "test", list(TURNS)), source, {}, "pottery",
                          WikiUse(turn_floor=0.05))
    assert _weak(lanes)["sessions/s2/transcript.md#D2:1"] is True


def test_a_line_is_left_only_to_turns_that_fit_the_room() -> None:
    turns = [_card("sessions/s1/transcript.md", f"D1:{i}", 1.0 - i / 10, "x" * 100) for i in range(1, 4)]
    weak = _card("sessions/s1/transcript.md", "D1:9", 0.01)
    cards = [*turns, weak]
    every = {c.ref for c in turns}
    assert _stated_turns(cards, 0.9, RELATIVE_FLOOR, None) == every  # the weak one never
    # 100 characters ≈ 25 tokens, plus a header: two turns fit in 90 tokens, not three
    assert _stated_turns(cards, 0.9, RELATIVE_FLOOR, 90) == {c.ref for c in turns[:2]}
    assert _stated_turns(cards, 0.9, RELATIVE_FLOOR, 10) == set()
