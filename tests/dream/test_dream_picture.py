"""Pages as a picture of their subject (issue 28, items 4–6), on real dream runs over a small
memory: a workflow told once and amended later is a procedure page in its amended order,
each step cited; the people and organisations the user works with, meets or partners with
get a page; names are typed by their head words and a ship is no organisation; no
statement that only points at another sentence, no line twice, no thread on a word that is
not a topic; sentences dream composes agree in number; session titles name their topic;
the user's own page stays short."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from brainfs.cache.facts.records import loads
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.core import run_local
from brainfs.dream.prose import third_person
from brainfs.dream.threads import page_topics

from dream_helpers import view_of

pytestmark = pytest.mark.unit

NOW = dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc)

SESSIONS = [
    ("2026-02-02", [
        "Hanna: I'm Hanna Lindqvist, a cartographer at the Nordic Coastal Survey in Gothenburg.",
        "Assistant: Nice to meet you, Hanna. What are you working on?",
        "Hanna: I'm working on the Skagerrak Tide Atlas with Kenji Sato from the Baltic Marine Institute.",
        "Hanna: Kenji and I go back to our student days in Uppsala.",
        "Hanna: My workflow for the atlas has five stages: first I ingest the gauge records, then I run "
        "quality control, then I style the layers, then I lay out the sheets, and finally I export "
        "the print PDFs.",
        "Assistant: Noted.",
        "Hanna: Sora City Lab is waiting on it.",
        "Hanna: I think my datum method stands up, and it's worth knowing.",
    ]),
    ("2026-02-16", [
        "Hanna: I met Ilse Brandt at the harbour workshop.",
        "Hanna: We partner with Vattenfall Power on the cable route maps.",
        "Hanna: The survey ship Nordstjernan sails from Gothenburg every Monday.",
        "Hanna: Sora City Lab is waiting on it.",
        "Hanna: Lund University hosts the summer school I teach at.",
        "Hanna: I still think the datum method stands, and it is worth knowing why.",
    ]),
    ("2026-03-02", [
        "Hanna: Quick change to the atlas workflow: the datum correction happens between ingest and "
        "quality control.",
        "Hanna: After the export I also tile the web map.",
        "Hanna: Sora City Lab is waiting on it.",
        "Hanna: Nordstjernan docked in Gothenburg with new soundings for the atlas.",
        "Hanna: Knowing the datum method stands, I keep using it for the gauge records.",
    ]),
]


def _write(root: Path, sessions: list[tuple[str, list[str]]]) -> Path:
    for i, (day, turns) in enumerate(sessions, 1):
        speakers: list[str] = []
        body = []
        for j, turn in enumerate(turns, 1):
            spk, _, text = turn.partition(": ")
            if spk not in speakers:
                speakers.append(spk)
            body.append(f"[D{i}:{j}] {spk}: {text}")
        p = root / f"sessions/h{i:02d}/transcript.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"---\nsession: h{i:02d}\ndate: {day}T10:00:00\nparticipants: "
                     f"{json.dumps(speakers)}\n---\n\n" + "\n\n".join(body) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = _write(tmp_path_factory.mktemp("picture") / "tree", SESSIONS)
    res = run_local(root, None, now=NOW)
    return root, res


def _pages(res) -> dict[str, tuple[dict, str]]:
    out = {}
    for p, text in res.staged.items():
        if p.startswith("knowledge/") and p.endswith(".md") and not p.endswith("INDEX.md"):
            meta, body, _bad = split_frontmatter(text)
            out[p] = (meta or {}, body)
    return out


def _by_title(res) -> dict[str, tuple[str, dict, str]]:
    return {str(m.get("title")): (p, m, b) for p, (m, b) in _pages(res).items()}


def _turn(root: Path, ref: str) -> str:
    path, _, anchor = ref.partition("#")
    text = (root / path).read_text(encoding="utf-8")
    m = re.search(rf"^\[{re.escape(anchor)}\] [^:]+: (.*)$", text, re.M)
    assert m, ref
    return m.group(1)


def test_a_workflow_told_once_then_amended_renders_in_its_amended_order(run) -> None:
    """The five stages told once, the datum correction put between ingest and quality
    control and web-map tiling after the export later: one procedure page, the seven
    steps in that order, each cited to the turn that said it."""
    root, res = run
    pages = _by_title(res)
    assert "Skagerrak Tide Atlas workflow" in pages, sorted(pages)
    path, meta, body = pages["Skagerrak Tide Atlas workflow"]
    assert meta["type"] == "procedure"
    steps = re.findall(r"^(\d+)\. (.+?) \[cite:(\d+)\]$", body, re.M)
    assert [s for _n, s, _c in steps] == [
        "Ingest the gauge records", "Datum correction", "Run quality control", "Style the layers",
        "Lay out the sheets", "Export the print PDFs", "Tile the web map"], body
    for _n, step, cite in steps:
        said = _turn(root, meta["sources"][int(cite) - 1])
        assert all(w.lower() in said.lower() for w in step.split()), (step, said)
    # told on the first day, amended on the third: both cited in its timeline
    assert "Told: “My workflow for the atlas" in body and "Amended: “After the export" in body
    # INDEX.md lists it with its steps; verification kept every step
    index = res.staged["knowledge/INDEX.md"]
    assert re.search(r"\[\[skagerrak-tide-atlas-workflow\]\] .*— procedure; ingest the gauge records → "
                     r"datum correction → run quality control", index), index
    assert res.stats["rejected"] == 0 and res.stats["problems"] == 0


def test_the_procedure_is_a_fact_record_of_kind_procedure(run) -> None:
    """procedures.records: one record of kind ``procedure`` (cache/facts/records.py), its
    value the steps in their current order, every turn that told or amended it cited."""
    from brainfs.dream import procedures as PR

    _root, res = run
    state = json.loads(res.staged[".brainfs/dream-state.json"])
    sessions = state["sessions"]
    order = sorted(sessions, key=lambda s: (sessions[s].get("date") or "", s))
    procs = PR.build(sessions, order, lambda n: None if n == "Assistant" else n, lambda _t: None)
    for p in procs:
        p.slug, p.owner = "skagerrak-tide-atlas-workflow", "skagerrak-tide-atlas"
        p.title = "Skagerrak Tide Atlas workflow"
    recs = PR.records(procs, lambda p: p.slug)
    assert len(recs) == 1, recs
    rec = recs[0]
    assert rec.kind == "procedure" and rec.attribute == "procedure" and rec.is_open
    assert rec.value.split(" → ")[:3] == ["ingest the gauge records", "datum correction",
                                          "run quality control"]
    assert rec.value.endswith("tile the web map") and rec.subject == "skagerrak-tide-atlas-workflow"
    assert rec.scope == "skagerrak-tide-atlas" and len(rec.sources) == 3
    # the record survives the file format
    assert loads(rec.to_json()) == [rec]


def test_procedure_parsing_without_a_run() -> None:
    from brainfs.dream import procedures as PR

    told = PR.told_in([("D1:1", "Ana", "My field survey checklist: charge the GPS, pack the tide "
                                       "tables, check the boat log and call the harbour master."),
                       ("D1:2", "Ana", "My morning routine is simple. First, I make tea. Then I read "
                                       "the alerts. Finally I answer email. Lunch is at noon."),
                       ("D1:3", "Ana", "The process took ages, then I gave up.")])
    assert [t["steps"] for t in told] == [
        ["Charge the GPS", "Pack the tide tables", "Check the boat log", "Call the harbour master"],
        ["Make tea", "Read the alerts", "Answer email"]]
    # an "after X, I also …" that names no step of a procedure amends nothing
    am = PR.amendments_in([("D2:1", "Ana", "After the meeting I also went home.")])
    p = PR.Procedure("Ana", "routine", "", [PR.Step(s, "r", None) for s in told[1]["steps"]],
                     "r", None, "s1")
    assert not PR._apply(p, am[0], "r2", None) and len(p.steps) == 3


def test_a_pronoun_only_statement_is_never_written(run) -> None:
    """"Sora City Lab is waiting on it.", said in three sessions: on no page, and no page
    for a subject nothing else is said of."""
    _root, res = run
    for p, text in res.staged.items():
        if not p.startswith(".brainfs/"):  # the state keeps every sentence read
            assert "is waiting on it" not in text, p
    assert "knowledge/sora-city-lab.md" not in res.staged
    from brainfs.dream.prose import says_nothing

    assert says_nothing("It was great.") and says_nothing("Sora City Lab is waiting on it.")
    assert not says_nothing("We shipped the wheelchair map for it.")
    assert not says_nothing("Sora City Lab loved the wheelchair map.")


def test_no_line_is_repeated_on_a_page(run) -> None:
    _root, res = run
    for p, (_meta, body) in _pages(res).items():
        for section in re.split(r"^## ", body, flags=re.M):
            lines = [re.sub(r"^- \d{4}-\d{2}-\d{2} — ", "- ", ln).split(" [cite:")[0]
                     for ln in section.splitlines() if ln.startswith("- ")]
            dup = {ln for ln in lines if lines.count(ln) > 1}
            assert not dup, (p, dup)


def test_no_thread_on_a_word_that_is_not_a_topic(run) -> None:
    """"stands", "worth", "knowing", "think" come back in three sessions on the user's page:
    none of them is a thread; "datum" (a thing) may be."""
    _root, res = run
    for p, text in res.staged.items():
        if p.startswith("knowledge/"):
            assert not {"stands", "worth", "knowing", "think", "still"} & set(page_topics(text)), p


def test_subject_and_verb_agree_in_sentences_dream_composes(run) -> None:
    _root, res = run
    text = "\n".join(res.staged.values())
    assert "Kenji and Hanna Lindqvist go back to their student days" in text
    assert "goes back to our" not in text
    assert third_person("Kenji and I've been friends since 2010.", "Hanna") == \
        "Kenji and Hanna have been friends since 2010."
    assert third_person("Renée and I are still in Sudbury.", "Darnell") == \
        "Renée and Darnell are still in Sudbury."
    assert third_person("I go to Kyoto every month.", "Mara") == "Mara goes to Kyoto every month."


def test_people_and_organisations_in_a_relation_to_the_user_get_a_page(run) -> None:
    """Each named once: met (Ilse Brandt), works with (Kenji Sato's institute), partners with
    (a utility), hosts (a university) — a page each, typed as what it is."""
    _root, res = run
    pages = _by_title(res)
    want = {"Ilse Brandt": "person", "Baltic Marine Institute": "organization",
            "Vattenfall Power": "organization", "Lund University": "organization"}
    got = {t: pages[t][1]["type"] for t in want if t in pages}
    assert got == want, sorted(pages)
    index = res.staged["knowledge/INDEX.md"]
    for t in want:
        assert f"] {t} — " in index


def test_a_ship_and_a_city_are_not_organisations(run) -> None:
    _root, res = run
    pages = _by_title(res)
    assert pages["Gothenburg"][1]["type"] == "place"
    assert pages["Nordstjernan"][1]["type"] == "vessel", pages["Nordstjernan"][1]


def test_session_titles_name_their_topic(run) -> None:
    _root, res = run
    lines = res.staged["sessions/index.md"].splitlines()[2:]
    assert len(lines) == 3
    for line in lines:
        title = line.split(" | ")[2]
        assert "Assistant" not in title and "&" not in title and "i've" not in title, line
        assert not title.startswith("Hanna"), line
    assert "Skagerrak Tide Atlas" in lines[0], lines[0]


def test_every_citation_resolves_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    from brainfs.dream.validate import validate_tree

    root = _write(tmp_path / "tree", SESSIONS)
    res = run_local(root, None, now=NOW, apply=True)
    assert not validate_tree(res.staged, view_of(root, res))
    again = run_local(root, None, now=NOW, apply=True)
    assert again.nothing_new or not again.changed, getattr(again, "changed", None)


def _long_life(n: int) -> list[tuple[str, list[str]]]:
    """``n`` sessions of a user who says many different things about their days."""
    things = ["kayak", "sourdough", "violin", "chess", "pottery", "orchids", "cycling", "tango",
              "astronomy", "origami", "birdwatching", "calligraphy", "climbing", "knitting",
              "beekeeping", "fencing", "rowing", "archery", "juggling", "sketching"]
    out = []
    day = dt.date(2025, 1, 6)
    for i in range(n):
        a, b, c = things[i % 20], things[(i * 7 + 3) % 20], things[(i * 3 + 11) % 20]
        out.append(((day + dt.timedelta(days=7 * i)).isoformat(), [
            f"Hanna: I spent the morning on {a} and the evening on {b} near the Skagerrak coast.",
            "Assistant: That sounds like a full day.",
            f"Hanna: My {c} teacher says week {i + 1} was my best so far.",
            f"Hanna: I bought a new {a} notebook for {i + 3} euros at the Gothenburg market.",
            f"Hanna: I finally booked the {b} course with Kenji Sato for session {i + 2}.",
            f"Hanna: The {c} club meets on Thursday {i + 1} at the Nordic Coastal Survey hall.",
        ]))
    return out


def test_the_users_page_stays_within_its_bound(tmp_path: Path) -> None:
    """60 sessions of everyday statements: the user's page is at most ``user_page_lines``
    (150) lines, its current lines all there, its newest detail in its Timeline."""
    root = _write(tmp_path / "tree", _long_life(60))
    res = run_local(root, None, now=NOW)
    page = next(t for p, t in res.staged.items()
                if p.startswith("knowledge/") and "the person whose memory this is" in t)
    assert len(page.splitlines()) <= 150, len(page.splitlines())
    assert "## Timeline" in page
