"""The fact records' format: round trip, validity in time, successors, bad lines."""

from __future__ import annotations

import pytest

from brainfs.cache.facts.records import (FactFormatError, FactRecord, FactSet, dumps, loads,
                                         parse, record_id)

SRC_OLD = "sessions/s1/transcript.md#D1:3"
SRC_NEW = "sessions/s9/transcript.md#D9:2"


def _pair() -> tuple[FactRecord, FactRecord]:
    new = FactRecord(id=record_id("mara", "employer", "", "Tessellate Labs", SRC_NEW),
                     subject="mara", attribute="employer", value="Tessellate Labs",
                     text="Mara works at Tessellate Labs", valid_from="2026-07-01",
                     recorded_at="2026-07-03", sources=(SRC_NEW,), date_basis="said")
    old = FactRecord(id=record_id("mara", "employer", "", "Sora City Lab", SRC_OLD),
                     subject="mara", attribute="employer", value="Sora City Lab",
                     text="Mara works at Sora City Lab", valid_from="2026-03-02",
                     recorded_at="2026-03-02", sources=(SRC_OLD,), valid_until="2026-07-01",
                     superseded_by=new.id)
    return old, new


def test_round_trip_is_byte_stable_and_sorted() -> None:
    old, new = _pair()
    text = dumps([new, old])
    assert dumps(loads(text)) == text
    lines = text.splitlines()
    assert '"Sora City Lab"' in lines[0] and '"Tessellate Labs"' in lines[1]
    assert lines[0].startswith('{"id": "f-')


def test_open_now_and_as_of_a_date() -> None:
    old, new = _pair()
    facts = FactSet([old, new])
    assert [r.value for r in facts.current()] == ["Tessellate Labs"]
    assert [r.value for r in facts.as_of("2026-05-01")] == ["Sora City Lab"]
    assert [r.value for r in facts.as_of("2026-07-01")] == ["Tessellate Labs"]
    assert facts.as_of("2026-01-01") == []
    assert facts.replaced_mark(old) == "superseded by Tessellate Labs (2026-07-01)"
    assert facts.replaced_mark(new) is None


def test_successor_follows_a_chain_and_records_are_found_by_their_turns() -> None:
    old, mid = _pair()
    last = FactRecord(id="f-last", subject="mara", attribute="employer", value="Kite Co",
                      text="Mara works at Kite Co", valid_from="2026-09-01",
                      recorded_at="2026-09-01", sources=("sessions/s12/transcript.md#D12:1",))
    mid = FactRecord(**{**mid.__dict__, "valid_until": "2026-09-01", "superseded_by": "f-last"})
    facts = FactSet([old, mid, last])
    assert facts.successor(old).value == "Kite Co"
    assert [r.value for r in facts.citing(SRC_OLD)] == ["Sora City Lab"]
    assert [r.value for r in facts.citing("sessions/s9/transcript.md")] == ["Tessellate Labs"]
    assert facts.citing("sessions/s9/transcript.md#D9:3") == []


def test_ids_are_stable_and_differ_by_value_and_source() -> None:
    a = record_id("mara", "employer", "", "Sora City Lab", SRC_OLD)
    assert a == record_id("mara", "employer", "", "sora city lab", SRC_OLD)
    assert a != record_id("mara", "employer", "", "Kite Co", SRC_OLD)
    assert a != record_id("mara", "employer", "", "Sora City Lab", SRC_NEW)


@pytest.mark.parametrize("text, where", [
    ("{not json\n", "knowledge/.facts.jsonl:1: not JSON"),
    ('{"id": "f-1"}\n', "knowledge/.facts.jsonl:1: not a fact record"),
    ('\n[1, 2]\n', "knowledge/.facts.jsonl:2: not a JSON object"),
])
def test_a_bad_line_is_named(text: str, where: str) -> None:
    with pytest.raises(FactFormatError, match=where):
        parse(text)
