"""Subjects typed by how sentences speak of them (issue 12): "the X pilot" is a project, "the
workshop in X" and "X is a quiet café" a place, "we'll use X instead of Y" a tool (topic),
"Format my citations" no subject at all; and the demo sample's core projects, organisations,
places and tools typed as its generator made them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.subjectnames import clean_name, names_in
from brainfs.dream.subjecttypes import cue_types, head_type, sentence_cues, type_of
from brainfs.dream import text as T
from brainfs.dream.core import run_local
from brainfs.tools import sample

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence, name, typ", [
    ("Something to remember: The Haptic Crosswalk budget came in at 9 million.", "Haptic Crosswalk", "project"),
    ("Agenda: welcome and access needs, Signbridge progress, open questions.", "Signbridge", "project"),
    ("I want to block two hours for analysis on Ramp Ledger.", "Ramp Ledger", "project"),
    ("Decision for Quiet Routes: we'll use open captions.", "Quiet Routes", "project"),
    ("The opening sentence says what the Tidewater study found.", "Tidewater", "project"),
    ("For the workshop in Kumamoto, reserve a quiet room.", "Kumamoto", "place"),
    ("Café Hitsuji is a quiet café near Umeda Station.", "Café Hitsuji", "place"),
    ("FYI: Spent Friday at Sapporo Chikagai for a co-design workshop.", "Sapporo Chikagai", "place"),
    ("Back from Sapporo Chikagai.", "Sapporo Chikagai", "place"),
    ("The room at Aoba Community Hall only has 5 power outlets.", "Aoba Community Hall", "place"),
    ("Decision for Signbridge: we'll use Figma instead of Sketch.", "Sketch", "topic"),
    ("Ramp Ledger goes with Raspberry Pi over Arduino, because we need audio.", "Raspberry Pi", "topic"),
    ("I need to explain to Elena why we dropped Zotero.", "Zotero", "topic"),
    ("Before I forget: I write papers in LaTeX on Overleaf.", "LaTeX", "topic"),
    ("Use the Okabe-Ito palette in charts, please.", "Okabe-Ito", "topic"),
    ("We score workload with the NASA-TLX questionnaire.", "NASA-TLX", "topic"),
    # a publication venue in a citation (CHI was typed an organisation by the extractor)
    ("For screen reader verbosity, start with Inoue and colleagues (CHI 2022).", "CHI", "topic"),
    ("A key reference on it is Inoue et al. at CHI 2022.", "CHI", "topic"),
    ("The key paper on caption latency is Endo et al., W4A 2025.", "W4A", "topic"),
    ("I met Ana in Osaka in 2022.", "Osaka", None),
    ("I told Priya Nair the budget is fine.", "Priya Nair", None),
    ("Mara Lind works at Sora City Lab.", "Sora City Lab", None),
])
def test_cue_types(sentence: str, name: str, typ: str | None) -> None:
    cues = cue_types([{"text": sentence}])
    if typ is None:
        assert name not in cues, cues
    else:
        assert cues[name].most_common(1)[0][0] == typ, cues


def test_a_degree_is_no_subject() -> None:
    """"a PhD student": what someone is, never a page of its own (it was typed a project)."""
    for name in ("PhD", "MSc", "MBA", "Postdoc"):
        assert clean_name(name) is None, name
    assert names_in("PhD and Kyoto") == ["Kyoto"]


def test_a_locative_cue_outweighs_a_project_cue() -> None:
    """"the Kanazawa pilot" reads like a project, "the workshop in Kanazawa" and "the
    Kanazawa site" say where: a place, even when the pilot is mentioned more often."""
    cues = sentence_cues(["Data from the Kanazawa pilot suggests that landmarks matter."] * 3
                           + ["For the workshop in Kanazawa, reserve a quiet room.",
                              "The Kanazawa site shows the largest gap."])
    assert cues["Kanazawa"] == Counter(project=3, place=2)
    assert type_of("Kanazawa", ["Kanazawa"], {"Kanazawa": Counter(person=6)}, {}, set(), cues) == "place"
    # a project's own cues still win when nothing speaks of it as a location
    cues = sentence_cues(["The Signbridge pilot starts in May.", "Signbridge progress is good."])
    assert type_of("Signbridge", ["Signbridge"], {}, {}, set(), cues) == "project"


def test_every_sentence_types_a_name_not_only_the_facts(tmp_path: Path) -> None:
    """The type evidence of a session is read from all its sentences: a name whose only
    locative cue is in a sentence dream keeps no fact of still becomes a place (the demo's
    Kumamoto was a person because the extractor said so and no fact said otherwise)."""
    from brainfs.dream.extract import extract_session
    from brainfs.dream.settings import Settings

    tr = T.parse_transcript("sessions/s1/transcript.md",
        "---\nsession: s1\ndate: 2026-03-02\n---\n\n"
        "[D1:1] Nadia: For the workshop in Kumamoto, reserve a quiet room next to the main hall.\n\n"
        "[D1:2] Assistant: Done. The Kumamoto site has step-free access.\n")
    got = extract_session(tr, Settings(), extractor=None)
    assert got["cues"]["Kumamoto"] == {"place": 2}


def test_cues_rank_below_relations_and_head_words_above_the_extractor() -> None:
    votes = {"Signbridge": Counter(organization=19)}
    cues = {"Signbridge": Counter(project=3), "Tessellate Labs": Counter(project=2)}
    assert type_of("Signbridge", ["Signbridge"], votes, {}, set(), cues) == "project"
    # a head word ("… Labs") outranks a cue, a relation ("works at X") outranks both
    assert type_of("Tessellate Labs", ["Tessellate Labs"], {}, {}, set(), cues) == "organization"
    assert type_of("Signbridge", ["Signbridge"], votes, {"Signbridge": Counter(organization=1)},
                      set(), cues) == "organization"
    assert head_type("Café Hitsuji") == "place"


@pytest.mark.parametrize("sentence, verbs", [
    ("Still true: Format my citations in APA 7th edition.", {"Format"}),
    ("Format my citations in APA 7th edition.", {"Format"}),
    ("Noted; Book us a table at Nishiki Market.", {"Book"}),
    ("Sakura is a friend and Priya Nair is my manager.", set()),
    ("I met Amara in Kyoto.", set()),
])
def test_a_clause_opening_verb_is_no_name(sentence: str, verbs: set[str]) -> None:
    assert T.imperative_openers(sentence) == verbs


def types_of(res) -> dict[str, str]:
    out = {}
    for p, text in res.staged.items():
        if p.startswith("knowledge/") and p.endswith(".md") and p != "knowledge/INDEX.md":
            meta = split_frontmatter(text)[0]
            for n in [meta["title"], *meta.get("aliases", [])]:
                out[n] = meta["type"]
    return out


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("demo")
    sample.generate(Path(root), files=200, seed=7)
    return types_of(run_local(root))


def test_demo_samples_core_subjects_are_typed_as_generated(demo: dict[str, str]) -> None:
    """The generator's core projects, organisations and places (tools/sample.py), each with
    a page of its type; a sentence opener used as a verb ("Format my citations") gets none."""
    want = {**{n: "project" for n, *_r in sample.CORE_PROJECTS},
            **{n: "organization" for n, *_r in sample.CORE_ORGS}}
    # a place named for what it is ("… Library", "… Hall") may be kept as an organisation
    want.update({n: "place" for n, *_r in sample.CORE_PLACES
                 if n.split()[-1] not in ("Library", "Hall", "Mediatheque")})
    wrong = {n: (demo.get(n), t) for n, t in want.items() if n in demo and demo[n] != t}
    assert not wrong, wrong
    assert sum(n in demo for n in want) >= 0.9 * len(want), sorted(set(want) - set(demo))
    assert "Format" not in demo
    # a tool the persona uses or drops is a topic, never a person, place or organisation
    tools = {n for n in sample.TOOLS if n in demo}
    assert len(tools) >= 5, tools
    assert {n: demo[n] for n in tools if demo[n] != "topic"} == {}
    # the cities the persona travels to and works in are places (Kumamoto was a person,
    # Kanazawa a project), and a degree gets no page
    cities = {n for n in sample.CITIES if n in demo}
    assert len(cities) >= 10, cities
    assert {n: demo[n] for n in cities if demo[n] != "place"} == {}
    assert "PhD" not in demo
    # the publication venues the persona cites are all one type, and no employer
    venues = {n: demo[n] for n in sample.VENUES if n in demo}
    assert "CHI" in venues and set(venues.values()) == {"topic"}, venues


def test_a_turn_dated_on_another_day_than_its_session_reads_without_its_date() -> None:
    """A turn whose own time (``turn_times``) falls on the next day -- a talk that runs past
    midnight -- is read as its own words: the chunker's "Speaker (date): " prefix carries
    the turn's day, not the session's, and must not stay in the text dream quotes."""
    tr = T.parse_transcript("sessions/s1/transcript.md",
        "---\nsession: s1\ndate: 2026-10-05T23:50:00Z\n"
        "turn_times:\n  \"D1:2\": '2026-10-06T00:05:00Z'\n---\n\n"
        "[D1:1] User: Packing for Awaji tonight.\n\n"
        "[D1:2] User: Back from Awaji (finally): the ferry was late.\n")
    assert [t.text for t in tr.turns] == ["Packing for Awaji tonight.",
                                          "Back from Awaji (finally): the ferry was late."]
