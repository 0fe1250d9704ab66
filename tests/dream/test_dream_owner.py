"""Faults a stranger found after importing plain "User:/Assistant:" sessions into a memory
whose other sessions have the user speak by name: a statement about a city filed on the
page of a site whose name starts with the city's; "User" made a second person beside the
user; the user's one-word speaker name given a page beside the full-name page the memory
already keeps. Invented names, none from the demo sample."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.aliasmerge import merge_map
from brainfs.dream.subjecttypes import sentence_cues, type_of
from brainfs.dream.core import run_local

from dream_helpers import write

pytestmark = pytest.mark.unit


def _session(sid: str, date: str, speakers: list[str], turns: list[tuple[str, str]]) -> str:
    n = sid[-1]
    body = "\n\n".join(f"[D{n}:{i}] {spk}: {text}" for i, (spk, text) in enumerate(turns, 1))
    return (f"---\nsession: {sid}\ndate: {date}\nparticipants: [{', '.join(speakers)}]\n---\n\n"
            + body + "\n")


NAMED = {
    "sessions/s1/transcript.md": _session("s1", "2026-02-03T10:00:00", ["Lena", "Assistant"], [
        ("Lena", "I live in Trondvik, so plan travel times from there."),
        ("Assistant", "Noted: you live in Trondvik."),
        ("Lena", "Spent Friday at Halden Arcade for the signage audit."),
        ("Assistant", "Sure. How did the audit go?"),
        ("Lena", "The room at Halden Arcade only has four power outlets."),
        ("Assistant", "Got it."),
    ]),
    "sessions/s2/transcript.md": _session("s2", "2026-03-10T10:00:00", ["Lena", "Assistant"], [
        ("Lena", "Back from Halden Arcade, the ramps are finished."),
        ("Assistant", "Great news."),
        ("Lena", "Oskar Lund works at Fjordline Transit."),
        ("Assistant", "Noted."),
        ("Lena", "Oskar Lund and I are planning the Halden Arcade tour."),
        ("Assistant", "Sure."),
    ]),
}

#: An imported session: plain text, the user speaking as "User", no name said.
IMPORTED = {
    "sessions/s3/transcript.md": _session("s3", "2026-05-20T09:00:00", ["User", "Assistant"], [
        ("User", "I moved to Halden last week, so plan my travel from there now."),
        ("Assistant", "Noted, you live in Halden now."),
        ("User", "The workshop in Halden went well with Oskar Lund."),
        ("Assistant", "Good to hear."),
    ]),
}

GUIDE = {"GUIDE.md": "---\ntitle: Standing instructions\ntype: guide\n---\n# Guide\n\n"
                     "You are assisting Lena Brandt, an accessibility planner at Fjordline "
                     "Transit. These instructions apply to every turn.\n"}


def _pages(out: Path) -> dict[str, tuple[dict, str]]:
    got = {}
    for p in sorted((out / "knowledge").glob("*.md")):
        meta, body, _bad = split_frontmatter(p.read_text())
        got[p.stem] = (meta or {}, body)
    return got


# --------------------------------------------------------------------------- a place in a place

def test_a_one_word_place_is_not_an_alias_of_a_site_named_after_it() -> None:
    """"Sapporo" was merged into "Sapporo Chikagai" (an underground mall): two capitalised
    words read as a person's first and last name. A city and a site in it are two subjects."""
    counts = Counter({"Halden": 3, "Halden Arcade": 4})
    kinds = {"Halden": "place", "Halden Arcade": "place"}
    # the corpus speaks of it as a place ("moved to Halden", "the workshop in Halden")
    assert merge_map(counts, kinds, placey={"Halden"})["Halden"] == "Halden"
    assert merge_map(counts, {}, placey={"Halden"})["Halden"] == "Halden"
    # the extractor's label alone is not enough: the small model calls many a first name a city
    assert merge_map(counts, kinds)["Halden"] == "Halden Arcade"
    # a person's name still takes its first name, by the extractor's label, a relation or a cue
    two = Counter({"Leila": 2, "Leila Haddad": 3})
    assert merge_map(two, {"Leila": "place", "Leila Haddad": "person"},
                       placey={"Leila"})["Leila"] == "Leila Haddad"
    assert merge_map(two, {"Leila": "place", "Leila Haddad": "organization"}, placey={"Leila"},
                       people={"Leila Haddad"})["Leila"] == "Leila Haddad"
    # and a word with no place evidence still stands for the longer name
    assert merge_map(counts, {})["Halden"] == "Halden Arcade"


def test_a_move_to_a_city_lands_on_the_citys_page_not_the_sites(tmp_path: Path) -> None:
    tree = write(tmp_path / "t", {**NAMED, **IMPORTED, **GUIDE})
    run_local(tree, tmp_path / "out")
    pages = _pages(tmp_path / "out")
    assert "halden" in pages and "halden-arcade" in pages
    assert "Halden" not in (pages["halden-arcade"][0].get("aliases") or [])
    assert "moved to Halden" in pages["halden"][1]
    assert "moved to Halden" not in pages["halden-arcade"][1]
    index = (tmp_path / "out/knowledge/INDEX.md").read_text()
    arcade = next(ln for ln in index.splitlines() if ln.startswith("- [[halden-arcade]]"))
    assert "moved" not in arcade


# --------------------------------------------------------------------------- the memory's owner

def test_an_unnamed_user_speaker_is_the_memorys_owner(tmp_path: Path) -> None:
    """"User" in an imported session, beside sessions where the user speaks as "Lena", is
    Lena: her move is her home now, on her page, said in her name, not "User moved …"."""
    tree = write(tmp_path / "t", {**NAMED, **IMPORTED})
    run_local(tree, tmp_path / "out")
    pages = _pages(tmp_path / "out")
    assert "user" not in pages
    meta, body = pages["lena"]
    assert "User" not in body
    assert "Lena lives in Halden (since" in body
    # the old home is superseded, not current
    assert "Trondvik" in body.split("## Superseded", 1)[1]
    index = (tmp_path / "out/knowledge/INDEX.md").read_text()
    assert "User " not in index


@pytest.mark.parametrize("source", ["guide", "kept page"])
def test_the_owners_full_name_comes_from_the_memory_itself(tmp_path: Path, source: str) -> None:
    """The sessions say only "Lena"; GUIDE.md ("You are assisting Lena Brandt") or the page
    the memory already keeps for her (knowledge/lena-brandt.md) gives the full name: one
    page, lena-brandt.md, aliased "Lena", and no lena.md beside it. A second run with nothing
    new changes nothing."""
    kept = {"knowledge/lena-brandt.md": "---\ntitle: Lena Brandt\ntype: entity\n---\n# Lena Brandt\n\n"
                                        "- Accessibility planner.\n"}
    extra = GUIDE if source == "guide" else kept
    tree = write(tmp_path / "t", {**NAMED, **IMPORTED, **extra})
    res = run_local(tree, tmp_path / "out", apply=True)
    pages = _pages(tmp_path / "out")
    assert "lena" not in pages
    meta, body = pages["lena-brandt"]
    assert meta["title"] == "Lena Brandt" and meta["type"] == "person"
    assert "Lena" in meta["aliases"]
    assert "Lena Brandt lives in Halden (since" in body
    index = (tmp_path / "out/knowledge/INDEX.md").read_text()
    assert "[[lena-brandt]] Lena Brandt — the user" in index
    assert res.changed
    again = run_local(tree, tmp_path / "out2", apply=True)
    assert again.nothing_new or not again.changed


def test_a_different_full_name_elsewhere_is_not_taken(tmp_path: Path) -> None:
    """Only a name that starts with the user's own word counts: a guide naming someone
    else ("You are assisting Marit Olsen") gives Lena no surname."""
    other = {"GUIDE.md": GUIDE["GUIDE.md"].replace("Lena Brandt", "Marit Olsen")}
    tree = write(tmp_path / "t", {**NAMED, **IMPORTED, **other})
    run_local(tree, tmp_path / "out")
    pages = _pages(tmp_path / "out")
    assert "lena" in pages and "lena-brandt" not in pages


# --------------------------------------------------------------------------- INDEX one-liners

def test_an_index_line_names_its_subject_and_leans_on_no_pronoun() -> None:
    """INDEX.md read "Blue Heron Foundation is waiting on it." and "It came up again in the
    Fukuoka interviews.": the newest timeline line, whatever it said."""
    from brainfs.dream import pages as P
    from brainfs.dream.synth import Claim

    def model(*texts: str) -> P.PageModel:
        return P.PageModel(timeline=[Claim(t, "sessions/s/transcript.md#D1:1", None, "Timeline")
                                     for t in texts])

    names = ["Fjordline Transit", "Fjordline"]
    # the newest line that names the subject without a pronoun wins over a newer one with
    assert P.gist(model("Oskar Lund works at Fjordline Transit.",
                        "Fjordline Transit is waiting on it."), names) == \
        "Oskar Lund works at Fjordline Transit."
    # an alias names it too; a line that names something else does not
    assert P.gist(model("The Fjordline office is in Trondvik.", "Oskar sent the report."), names) == \
        "The Fjordline office is in Trondvik."
    # no line stands alone: no summary (the caller says when it was mentioned instead)
    assert P.gist(model("It came up again in the Fjordline interviews."), names) == ""
    assert not P.stands_alone("She said they liked Fjordline.", names)
    assert P.stands_alone("Fjordline Transit hired two planners.", names)


def test_an_index_line_with_only_pronoun_lines_says_when_it_was_mentioned(tmp_path: Path) -> None:
    seen = {f"sessions/s{i}/transcript.md": _session(f"s{i}", f"2026-0{i}-05T10:00:00", ["Lena", "Assistant"], [
        ("Lena", "The report is late. It came up again in the Vesterby interviews."),
        ("Assistant", "Noted."),
    ]) for i in (4, 5)}
    tree = write(tmp_path / "t", {**NAMED, **seen})
    run_local(tree, tmp_path / "out")
    index = (tmp_path / "out/knowledge/INDEX.md").read_text()
    line = next(ln for ln in index.splitlines() if ln.startswith("- [[vesterby]]"))
    assert line.endswith("; mentioned in 2 sessions, 2026-04-05 – 2026-05-05"), line


# --------------------------------------------------------------------------- one tool, one page

def test_the_first_part_of_a_compound_name_is_that_name() -> None:
    """"Atlas.ti" and "NASA-TLX" (tools) each got a second page, "atlas" and "nasa", from
    the part before the full stop or hyphen."""
    canon = merge_map(Counter({"Atlas.ti": 5, "Atlas": 5, "ATLAS": 2, "NASA-TLX": 4, "NASA": 4}))
    assert canon["Atlas"] == canon["ATLAS"] == "Atlas.ti"
    assert canon["NASA"] == "NASA-TLX"
    # a part mentioned more often than the compound is a subject of its own
    assert merge_map(Counter({"Covid-19": 1, "Covid": 6}))["Covid"] == "Covid"
    # a different word that merely starts the same is not merged ("Atlassian")
    assert merge_map(Counter({"Atlassian": 3, "Atlas": 2}))["Atlas"] == "Atlas"


def test_a_tool_named_in_two_forms_gets_one_page(tmp_path: Path) -> None:
    tool = {"sessions/s6/transcript.md": _session("s6", "2026-04-02T10:00:00", ["Lena", "Assistant"], [
        ("Lena", "We'll use Quill.io instead of NVivo, because the licence covers everyone."),
        ("Assistant", "Noted."),
        ("Lena", "Oskar Lund codes the interviews in QUILL.io and checks them in Quill.io again."),
        ("Assistant", "Sure."),
    ])}
    tree = write(tmp_path / "t", {**NAMED, **tool})
    run_local(tree, tmp_path / "out")
    pages = _pages(tmp_path / "out")
    assert [p for p in pages if p.startswith("quill")] == ["quill-io"]


def test_a_compounds_type_is_not_its_first_parts() -> None:
    """"NASA-TLX" (a questionnaire) became an organisation once "NASA" (the extractor: ORG)
    was its alias."""
    votes = {"NASA": Counter({"organization": 4}), "NASA-TLX": Counter()}
    assert type_of("NASA-TLX", ["NASA-TLX", "NASA"], votes, {}, set(), {}) == "topic"
    # a member that is no part of a compound still votes
    votes = {"Okafor": Counter({"person": 2}), "Ines Okafor": Counter()}
    assert type_of("Ines Okafor", ["Ines Okafor", "Okafor"], votes, {}, set(), {}) == "person"


def test_what_a_device_runs_is_software_not_a_place() -> None:
    """"Windows" (the small model: LOC) was typed a place; "my laptop runs X" says software."""
    cues = sentence_cues(["My laptop runs Windows.", "The kiosk app only runs on Linux now.",
                            "She runs Sora City Lab."])
    assert cues["Windows"] == Counter({"topic": 1}) and cues["Linux"] == Counter({"topic": 1})
    assert "Sora City Lab" not in cues  # running an organisation is not software
