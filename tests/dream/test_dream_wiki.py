"""Dream writes a wiki a person would keep (issue 12): subjects and their exclusions, alias
merging, current lines with Timeline and Superseded, supersession by meaning, corrections
that reach pages, cards and GUIDE.md, verification of names/numbers/places, INDEX order,
the labelled personas' figures, and a rerun that changes nothing."""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.dream_personas import PERSONAS, as_user_role, load, run, score
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.citations import cited_refs
from brainfs.dream import relations as R
from brainfs.dream.aliasmerge import merge_map
from brainfs.dream.subjectnames import clean_name
from brainfs.dream.core import correction_event, run_local
from brainfs.dream.prose import third_person
from brainfs.dream.quantitykeys import same_key
from brainfs.dream.reach import pairs
from brainfs.dream.synth import DeterministicSynthesizer
from brainfs.dream.verify import hard_check
from dream_helpers import write

pytestmark = pytest.mark.unit

S1 = """---
session: s1
date: 2026-03-02T10:00:00
participants: ["Mara", "Assistant"]
---

[D1:1] Assistant: Hello! Nice to meet you, Mara. What are you working on?

[D1:2] Mara: I'm Mara Lind. I work at Sora City Lab as a cartographer. My manager is Jonas Berg.

[D1:3] Mara: Yes, please export the figures as PDF for the Baltic Surge Atlas.

[D1:4] Mara: The QC spike threshold for the Baltic Surge Atlas is 40 cm.

[D1:5] Assistant: Here is the letter: Dear Amara, thank you for the SVG maps. Best, Mara

[D1:6] Mara: That sounds right. I live in Malmo with my dog Fenna and I met Amara in Kyoto.
"""

S2 = """---
session: s2
date: 2026-07-01T10:00:00
participants: ["Mara", "Assistant"]
---

[D2:1] Mara: I left Sora City Lab last week. My new job is at Tessellate Labs.

[D2:2] Mara: My new manager is Priya Nair. Jonas was kind about it.

[D2:3] Mara: The QC spike threshold is 30 cm now, not 40 cm.

[D2:4] Assistant: Noted. Dear Mara, shall I tell Priya about the atlas?

[D2:5] Mara: Yes. Priya wants the atlas figures soon, and Fenna sends her love.

[D2:6] Mara: Amara Mensah from the Nordic Flood Institute joins the Baltic Surge Atlas in August.
"""

GUIDE = "---\npinned: true\n---\n# Guide\n\n- Figure formats: prefers PDF over PNG for figures.\n- Always cite sources.\n"
CARD = ("---\ntype: preference\nscope: global\nconfidence: 0.9\ncreated: 2026-03-02\n"
        "updated: 2026-03-02\n---\n\nFigures go out as PDF.\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2,
                                  "GUIDE.md": GUIDE, "notes/preferences/figure-formats.md": CARD})


def page(res, slug: str) -> tuple[dict, str, str, str]:
    """(frontmatter, current part, Timeline, Superseded) of a staged page."""
    meta, body, _bad = split_frontmatter(res.staged[f"knowledge/{slug}.md"])
    now = body.split("## Timeline")[0].split("## Superseded")[0]
    timeline = body.split("## Timeline")[1].split("\n## ")[0] if "## Timeline" in body else ""
    sup = body.split("## Superseded")[1].split("\n## ")[0] if "## Superseded" in body else ""
    return meta, now, timeline, sup


# --------------------------------------------------------------------------- extraction patterns

RELATIONS = [
    ("I work at Sora City Lab as a cartographer.", "employer", "Sora City Lab", "set"),
    ("My new job is at Tessellate Labs.", "employer", "Tessellate Labs", "set"),
    ("I joined Corvid Analytics in May.", "employer", "Corvid Analytics", "set"),
    ("I've accepted an offer from Kestrel Mapping.", "employer", "Kestrel Mapping", "set"),
    ("I'm Tove Eriksen, a hydrographer at Nordlys Geodata.", "employer", "Nordlys Geodata", "set"),
    ("I left Sora City Lab last week.", "employer", "Sora City Lab", "end"),
    ("My last day at Nordlys Geodata was Friday.", "employer", "Nordlys Geodata", "end"),
    ("I now work at Brightwater Clinic as a ward manager.", "role", "ward manager", "set"),
    ("My new manager is Priya Nair.", "manager", "Priya Nair", "set"),
    ("I'm now reporting to Sunita Rao.", "manager", "Sunita Rao", "set"),
    ("I report to Arne Dahl.", "manager", "Arne Dahl", "set"),
    ("From today I'm on the Harbour Risk Index, not the atlas.", "project", "Harbour Risk Index", "set"),
    ("I'm working on the Tidewater Forecast with Ravi.", "project", "Tidewater Forecast", "set"),
    ("I live in Porto now, near the river.", "home", "Porto", "set"),
    ("We relocated to Trondheim last weekend.", "home", "Trondheim", "set"),
    ("My dog, Fenna, sits under my desk.", "pet", "Fenna", "add"),
    ("His name is Max and he is a beagle.", "pet", "Max", "add"),
    ("I now prefer afternoon meetings, not morning meetings.", "preference", "afternoon meetings", "set"),
    ("From now on export charts as SVG, not PDF.", "format", "SVG", "set"),
    ("The QC spike threshold is 30 cm now, not 40 cm.", "number", "30 cm", "set"),
    ("Also, the audit deadline moved to 28 March.", "deadline", "28 March", "set"),
    ("My friend Hana Ito reviews our forms.", "friend", "Hana Ito", "add"),
    ("Priya Nair is my new manager.", "manager", "Priya Nair", "set"),
    ("I quit my job at Halvorsen Maritime.", "employer", "Halvorsen Maritime", "end"),
    ("I got hired by Corvid Analytics.", "employer", "Corvid Analytics", "set"),
    ("We just moved into a flat in Utrecht.", "home", "Utrecht", "set"),
    ("I'm now a team lead.", "role", "team lead", "set"),
    ("We lowered the alert threshold to 12 percent.", "number", "12 percent", "set"),
    ("They pushed the audit deadline to 28 March.", "deadline", "28 March", "set"),
    ("Fenna, my dog, loves the fjord.", "pet", "Fenna", "add"),
]


@pytest.mark.parametrize("sentence,attr,value,op", RELATIONS)
def test_each_relation_pattern(sentence: str, attr: str, value: str, op: str) -> None:
    got = [(r.attr, r.value, r.op) for r in R.extract(sentence)]
    assert (attr, value, op) in got, got


@pytest.mark.parametrize("sentence", [
    "I'm on it.", "My manager is away this week.", "I work at home on Fridays.",
    "We talked about the threshold of pain.", "I love my job.",
])
def test_relation_patterns_ignore_near_misses(sentence: str) -> None:
    assert [r for r in R.extract(sentence) if r.attr in ("employer", "manager", "number", "project")] == []


def test_quantities_with_overlapping_modifiers_are_one_quantity() -> None:
    a = next(r for r in R.extract("For Project Lantern the fall-risk score threshold is 45.") if r.attr == "number")
    b = next(r for r in R.extract("Correction: the fall-risk threshold is 40, not 45.") if r.attr == "number")
    c = next(r for r in R.extract("The alert threshold is 12 percent.") if r.attr == "number")
    assert same_key(a.key, b.key) and not same_key(a.key, c.key)
    assert pairs("The threshold is 30 cm now, not 40 cm.") == [("30 cm", "40 cm")]
    assert pairs("Figures should be SVG, not PDF.") == [("SVG", "PDF")]


# --------------------------------------------------------------------------- subjects

@pytest.mark.parametrize("raw,clean", [
    ("Dear Amara", "Amara"), ("Hi Jonas", "Jonas"), ("Dr. Elena Sokolova", "Elena Sokolova"),
    ("Assistant", None), ("User", None), ("PDF", None), ("svg", None), ("That", None),
    ("Thanks", None), ("Best", None), ("Sora City Lab", "Sora City Lab"),
])
def test_clean_name_drops_roles_salutations_formats_and_common_words(raw: str, clean: str | None) -> None:
    assert clean_name(raw) == clean


def test_alias_merging() -> None:
    counts = Counter({"Leila Haddad": 3, "Leila": 5, "AORC": 4, "Atlantic Ocean Research Council": 1,
                      "Project Lantern": 2, "Lantern": 2, "Kyoto Station": 2, "Kyoto": 6,
                      "RCN": 2, "Royal College of Nursing": 1, "Tidewater Forecast": 3, "Tidewater": 2})
    m = merge_map(counts)
    assert m["Leila"] == "Leila Haddad" and m["AORC"] == "Atlantic Ocean Research Council"
    assert m["Lantern"] == "Project Lantern" and m["RCN"] == "Royal College of Nursing"
    assert m["Tidewater"] == "Tidewater Forecast"
    assert m["Kyoto"] == "Kyoto"  # a city is not its station


def test_subjects_typed_merged_and_excluded(tree: Path) -> None:
    res = run_local(tree, None)
    pages = {p for p in res.staged if p.startswith("knowledge/") and p != "knowledge/INDEX.md"}
    slugs = {p[len("knowledge/"):-3] for p in pages}
    # the user under their full name, with their first name as an alias
    meta, now, _t, _s = page(res, "mara-lind")
    assert meta["type"] == "person" and "Mara" in meta["aliases"] and meta["title"] == "Mara Lind"
    assert split_frontmatter(res.staged["knowledge/sora-city-lab.md"])[0]["type"] == "organization"
    assert split_frontmatter(res.staged["knowledge/fenna.md"])[0]["type"] == "pet"
    assert split_frontmatter(res.staged["knowledge/priya-nair.md"])[0]["type"] == "person"
    assert split_frontmatter(res.staged["knowledge/baltic-surge-atlas.md"])[0]["type"] == "project"
    assert "the atlas" in split_frontmatter(res.staged["knowledge/baltic-surge-atlas.md"])[0]["aliases"]
    amara = split_frontmatter(res.staged["knowledge/amara-mensah.md"])[0]
    assert amara["type"] == "person"
    # no page for the speaker role, salutations, pronouns or formats; Kyoto once, in passing
    for junk in ("assistant", "dear-amara", "dear-mara", "pdf", "svg", "that", "best", "amara", "kyoto",
                 "jonas", "priya", "mara"):
        assert junk not in slugs, junk
    assert not [p for p in res.problems if p.severity == "error"] and res.stats["rejected"] == 0


# --------------------------------------------------------------------------- page shape + supersession

def test_job_manager_and_number_changes_leave_new_now_old_superseded(tree: Path) -> None:
    res = run_local(tree, None)
    meta, now, timeline, sup = page(res, "mara-lind")
    assert set(meta) >= {"title", "type", "aliases", "updated", "sources"}
    refs = cited_refs(res.staged["knowledge/mara-lind.md"])
    lines = [ln for ln in now.splitlines() if ln.startswith("- ")]
    # one dated, cited line per attribute, in the wiki's words
    assert "- Mara Lind works at Tessellate Labs (since 1 July 2026) [cite:" in now
    assert "- Mara Lind's manager is Priya Nair (since 1 July 2026) [cite:" in now
    assert "- The QC spike threshold is 30 cm (since 1 July 2026) [cite:" in now
    assert "- Fenna is Mara Lind's dog (since 2 March 2026) [cite:" in now
    for old in ("Sora City Lab", "Jonas Berg", "40 cm"):
        assert old not in now, old
    assert all("[cite:" in ln and "(since " in ln for ln in lines)
    # each replaced value: when it held and what replaced it, cited to both statements
    job = next(ln for ln in sup.splitlines() if "Sora City Lab" in ln)
    assert job.startswith("- Mara Lind worked at Sora City Lab (from 2 March 2026) [cite:")
    assert "replaced by Tessellate Labs" in job
    cites = [refs[int(x.split("]")[0])] for x in job.split("[cite:")[1:]]
    assert cites == ["sessions/s1/transcript.md#D1:2", "sessions/s2/transcript.md#D2:1"]
    assert "Mara Lind's manager was Jonas Berg (from 2 March 2026)" in sup and "replaced by Priya Nair" in sup
    assert "threshold for the Baltic Surge Atlas was 40 cm" in sup and "replaced by 30 cm" in sup
    # Timeline: dated events, relative dates resolved against the session date
    assert "- 2026-07-01 — Mara Lind left Sora City Lab last week (week of 2026-06-22). [cite:" in timeline
    # the manager's pages say it from their side
    _m, pnow, _t, _s = page(res, "priya-nair")
    assert "Mara Lind's manager is Priya Nair (since 1 July 2026)" in pnow
    _m, jnow, _t, jsup = page(res, "jonas-berg")
    assert "Jonas Berg" not in jnow.split("\n", 3)[-1] or "manager is" not in jnow
    assert "manager was Jonas Berg" in jsup


def test_page_size_cap_cuts_timeline_never_current_lines(tree: Path) -> None:
    full = run_local(tree, None)
    _m, now0, timeline0, sup0 = page(full, "mara-lind")
    res = run_local(tree, None, settings={"max_timeline": 1})
    _m, now, timeline, _s = page(res, "mara-lind")
    assert len([ln for ln in timeline.splitlines() if ln.startswith("- ")]) <= 1
    assert "works at Tessellate Labs" in now and "manager is Priya Nair" in now
    # a size cap smaller than the page: the timeline goes, current and superseded lines stay
    small = run_local(tree, None, settings={"max_page_chars": 400})
    _m, now2, timeline2, sup2 = page(small, "mara-lind")
    n0 = len([ln for ln in timeline0.splitlines() if ln.startswith("- ")])
    n2 = len([ln for ln in timeline2.splitlines() if ln.startswith("- ")])
    assert n0 >= 2 and n2 < n0
    assert now2 == now0 and sup2.strip() == sup0.strip()


def test_a_value_not_restated_for_long_is_marked_unconfirmed(tree: Path) -> None:
    res = run_local(tree, None, settings={"stale_after_days": 60})
    _m, now, _t, _s = page(res, "mara-lind")
    # said on 2 March, nothing since, newest session 1 July: 121 days
    assert "- Fenna is Mara Lind's dog (since 2 March 2026; not confirmed since 2 March 2026) [cite:" in now
    assert "- Mara Lind works at Tessellate Labs (since 1 July 2026) [cite:" in now
    assert res.stats["rejected"] == 0
    fresh = run_local(tree, None)
    assert "not confirmed" not in page(fresh, "mara-lind")[1]


def test_third_person_rewrite() -> None:
    assert third_person("Big news: I left Sora City Lab and I love my new job.", "Mara") == \
        "Mara left Sora City Lab and they love their new job."
    assert third_person("I'm working on the atlas.", "Mara") == "Mara is working on the atlas."
    assert third_person("I really like hiking.", "Mara") == "Mara really likes hiking."


# --------------------------------------------------------------------------- corrections reach everything

def test_correct_reaches_page_card_and_guide(tree: Path) -> None:
    run_local(tree, None, apply=True)
    mara = (tree / "knowledge/mara-lind.md").read_text()
    assert "wants figures as PDF" in mara.split("## Timeline")[0]
    p, c = correction_event("Figures should be SVG, not PDF.",
                            now=_dt.datetime(2026, 7, 2, tzinfo=_dt.timezone.utc))
    write(tree, {p: c})
    res = run_local(tree, None, apply=True)
    assert not [x for x in res.problems if x.severity == "error"], res.problems
    mara = (tree / "knowledge/mara-lind.md").read_text()
    now, rest = mara.split("## Timeline")
    # a correction that says no day of its own is dated by itself, and the page says so
    assert "- Mara Lind wants figures as SVG (corrected 2026-07-02) [cite:" in now and "PDF" not in now
    assert "Mara Lind wanted figures as PDF (from 2 March 2026)" in rest and "replaced by SVG" in rest
    # the project page's fact about PDF figures is superseded there too
    atlas = (tree / "knowledge/baltic-surge-atlas.md").read_text()
    assert "PDF" not in atlas.split("## Superseded")[0] and "PDF" in atlas.split("## Superseded")[1]
    # GUIDE.md: the line is rewritten, the other untouched
    guide = (tree / "GUIDE.md").read_text()
    assert "- Figure formats: prefers SVG over PNG for figures. (corrected 2026-07-02; was PDF)" in guide
    assert "- Always cite sources.\n" in guide
    # the user's older card is superseded by the correction card, which says so
    card = split_frontmatter((tree / "notes/preferences/figure-formats.md").read_text())[0]
    cp = card["superseded_by"]
    assert cp.startswith("notes/corrections/") and card["status"] == "superseded" and card["confidence"] <= 0.3
    corr = split_frontmatter((tree / cp).read_text())[0]
    assert corr["supersedes"] == "notes/preferences/figure-formats.md"
    assert {c.path for c in res.changes} >= {"GUIDE.md", "notes/preferences/figure-formats.md", cp}
    # GUIDE.md and the user's card stay theirs: dream does not manage (or later delete) them
    assert "GUIDE.md" not in res.state.managed
    # and nothing new: nothing changes, GUIDE.md is not rewritten twice
    again = run_local(tree, None, apply=True)
    assert again.nothing_new
    forced = run_local(tree, None, apply=True, force=True)
    assert [c.path for c in forced.changes] == [".brainfs/dream-state.json"]


HAND_PAGE = """---
title: Figure formats
type: topic
---
# Figure formats

Mara prefers PDF over PNG for figures, and 300 dpi for print.

## History

- 2026-03-02: Mara asked for figures as PDF.
"""


def test_correct_reaches_a_hand_page_now_part_not_its_history(tree: Path) -> None:
    """A page in knowledge/ that dream does not write (a person's own, a sample's) says the
    corrected value in its current part, marked as GUIDE.md's lines are; its history and
    frontmatter stay as written, and a second run changes nothing."""
    write(tree, {"knowledge/figure-formats.md": HAND_PAGE})
    run_local(tree, None, apply=True)
    p, c = correction_event("Figures should be SVG, not PDF.",
                            now=_dt.datetime(2026, 7, 2, tzinfo=_dt.timezone.utc))
    write(tree, {p: c})
    res = run_local(tree, None, apply=True)
    assert not [x for x in res.problems if x.severity == "error"], res.problems
    text = (tree / "knowledge/figure-formats.md").read_text()
    now, history = text.split("## History")
    assert ("Mara prefers SVG over PNG for figures, and 300 dpi for print. "
            "(corrected 2026-07-02; was PDF)") in now
    assert history == HAND_PAGE.split("## History")[1]
    assert text.startswith("---\ntitle: Figure formats\ntype: topic\n---\n")
    assert "knowledge/figure-formats.md" not in res.state.managed
    assert "knowledge/figure-formats.md" in {ch.path for ch in res.changes}
    again = run_local(tree, None, apply=True, force=True)
    assert "knowledge/figure-formats.md" not in {ch.path for ch in again.changes}


@pytest.mark.s3
def test_correct_reaches_guide_and_card_over_s3(store, tmp_path: Path) -> None:
    """The same correction through the bucket (``brainfs dream s3://…``): GUIDE.md and the
    user's card are read from the bucket, and the corrected GUIDE.md is written back."""
    from brainfs.dream.sync import run_s3

    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2,
                 "GUIDE.md": GUIDE, "notes/preferences/figure-formats.md": CARD}.items():
        store.put(p, t.encode())
    run_s3(store, tmp_path / "w", reindex=False)
    p, c = correction_event("Figures should be SVG, not PDF.",
                            now=_dt.datetime(2026, 7, 2, tzinfo=_dt.timezone.utc))
    store.put(p, c.encode())
    rep = run_s3(store, tmp_path / "w", reindex=False)
    assert not [x for x in rep.result.problems if x.severity == "error"], rep.result.problems
    guide = store.get("GUIDE.md")[0].decode()
    assert "- Figure formats: prefers SVG over PNG for figures. (corrected 2026-07-02; was PDF)" in guide
    assert "- Always cite sources.\n" in guide
    card = split_frontmatter(store.get("notes/preferences/figure-formats.md")[0].decode())[0]
    assert card["status"] == "superseded" and card["superseded_by"].startswith("notes/corrections/")


def test_recall_and_context_put_the_correction_above_the_old_card(tree: Path, tmp_path: Path) -> None:
    from brainfs.cache.context.assembly import MemorySource, assemble
    from brainfs.cache.search.index import SearchIndex
    from brainfs.cache.search.retrieval import retrieve

    run_local(tree, None, apply=True)
    p, c = correction_event("Figures should be SVG, not PDF.",
                            now=_dt.datetime(2026, 7, 2, tzinfo=_dt.timezone.utc))
    write(tree, {p: c})
    run_local(tree, None, apply=True)
    ix = SearchIndex(tmp_path / "index.sqlite")
    files = [(q.relative_to(tree).as_posix(), str(q.stat().st_mtime_ns))
             for q in sorted(tree.rglob("*.md")) if ".brainfs" not in q.parts]
    ix.refresh(files, lambda rel: (tree / rel).read_bytes(), None)
    try:
        now = _dt.datetime(2026, 7, 3, tzinfo=_dt.timezone.utc)
        hits = [h.path for h in retrieve(ix, "figure format", k=10, now=now, mode="sparse").cards]
        new = next(i for i, h in enumerate(hits) if h.startswith("notes/corrections/"))
        old = next((i for i, h in enumerate(hits) if h == "notes/preferences/figure-formats.md"), len(hits))
        assert new < old, hits
        w = assemble("Which format for figures?", MemorySource(tree, ix, global_guide=tmp_path / "none.md"),
                     budget=4000, reserve=1000, now=now)
        olds = [i for i in w.items if i.path == "notes/preferences/figure-formats.md"]
        assert all(i.status == "skipped" and "superseded by" in i.reason for i in olds)
    finally:
        ix.close()


def test_forget_redacts_transcripts_and_user_cards(tree: Path) -> None:
    run_local(tree, None, apply=True)
    write(tree, {"forget/2026-07-05-fenna.md": "---\ncreated: 2026-07-05\n---\nFenna\n",
                 "notes/people/pets.md": "---\ntype: fact\nscope: global\nconfidence: 0.8\n"
                                         "created: 2026-03-02\nupdated: 2026-03-02\n---\n\nMara's dog is fenna.\n"})
    # the user's own page (dream does not manage it), a summary an import wrote, GUIDE.md
    write(tree, {"knowledge/my-pets.md": "# My pets\n\nFenna is a border collie.\n",
                 "sessions/s1/summary.md": "---\ntitle: Walk with Fenna\n---\n\nMara walked Fenna.\n",
                 "GUIDE.md": GUIDE + "- Fenna needs a walk at 7.\n"})
    res = run_local(tree, None, apply=True)
    t1 = (tree / "sessions/s1/transcript.md").read_text()
    assert "Fenna" not in t1 and "with my dog [forgotten] and I met Amara" in t1
    assert (tree / "knowledge/my-pets.md").read_text() == "# My pets\n\n[forgotten] is a border collie.\n"
    assert "Fenna" not in (tree / "sessions/s1/summary.md").read_text()
    guide = (tree / "GUIDE.md").read_text()
    assert "Fenna" not in guide and "- Always cite sources.\n" in guide
    reasons = {c.path: c.reason for c in res.changes}
    assert "correction" not in reasons["knowledge/my-pets.md"], reasons["knowledge/my-pets.md"]
    assert "[D1:6] Mara:" in t1 and t1.count("[D1:") == S1.count("[D1:")  # every turn kept
    assert "[forgotten]" in (tree / "notes/people/pets.md").read_text()
    assert not (tree / "knowledge/fenna.md").exists()
    for p in (tree / "knowledge").glob("*.md"):
        assert "Fenna" not in p.read_text(), p
    assert not [x for x in res.problems if x.severity == "error"]
    # redacted once: the next run has nothing new
    assert run_local(tree, None, apply=True).nothing_new


def test_second_run_with_nothing_new_changes_nothing(tree: Path) -> None:
    first = run_local(tree, None, apply=True)
    assert first.changes
    assert run_local(tree, None, apply=True).nothing_new
    forced = run_local(tree, None, force=True)
    assert [c.path for c in forced.changes] == [".brainfs/dream-state.json"]


# --------------------------------------------------------------------------- cards from sessions

def test_preferences_and_rules_become_cards(tmp_path: Path) -> None:
    s3 = S2.replace("session: s2", "session: s3").replace("2026-07-01", "2026-08-03").replace("[D2:", "[D3:")
    s3 = s3.split("[D3:1]")[0] + (
        "[D3:1] Mara: I prefer morning meetings for the atlas reviews.\n\n"
        "[D3:2] Mara: Always cite the tide gauge source in figure captions.\n")
    s4 = s3.replace("session: s3", "session: s4").replace("2026-08-03", "2026-09-01").replace("[D3:", "[D4:")
    s4 = s4.split("[D4:1]")[0] + (
        "[D4:1] Mara: Again: I prefer morning meetings for the atlas reviews.\n\n"
        "[D4:2] Mara: Actually I now prefer afternoon meetings, not morning meetings.\n\n"
        "[D4:3] Mara: Always cite the tide gauge source in figure captions, please.\n")
    root = write(tmp_path / "t", {"sessions/s1/transcript.md": S1, "sessions/s3/transcript.md": s3,
                                  "sessions/s4/transcript.md": s4})
    res = run_local(root, None)
    cards = {p: split_frontmatter(t) for p, t in res.staged.items() if p.startswith("notes/learned/")}
    morning = next(m for p, (m, b, _x) in cards.items() if "morning meetings" in b)
    afternoon = next((p, m) for p, (m, b, _x) in cards.items() if "afternoon meetings" in b)
    # said twice: one card, more confident; then replaced: superseded by the newer card
    assert len([1 for _p, (m, b, _x) in cards.items() if "morning meetings" in b]) == 1
    assert morning["superseded_by"] == afternoon[0] and morning["confidence"] == 0.3
    assert afternoon[1]["supersedes"].endswith("morning-meetings.md") and afternoon[1]["type"] == "preference"
    rule = next(m for p, (m, b, _x) in cards.items() if "Always cite the tide gauge source" in b)
    assert rule["type"] == "rule" and rule["confidence"] == 0.7 and len(rule["sources"]) == 2
    assert not [p for p in res.problems if p.severity == "error"]


# --------------------------------------------------------------------------- verification

@pytest.mark.parametrize("claim,source,ok", [
    ("Mara met Amara in Kyoto", "Mara: I met Amara in Kyoto last spring.", True),
    ("Mara met Amara in Osaka", "Mara: I met Amara in Kyoto last spring.", False),       # place
    ("Mara has 3 dogs", "Mara: I have two dogs.", False),                                   # number
    ("Mara has two dogs", "Mara: I have 2 dogs.", True),
    ("Mara exports figures as PNG", "Mara: Please export the figures as PDF.", False),     # format
    ("Priya Nair is Mara's manager", "Mara: My new manager is Jonas Berg.", False),        # name
    ("Mara adopted a dog on 2026-05-30", "Mara: I adopted a dog last weekend. "
     "[session date 2026-06-02; I adopted a dog last weekend (weekend of 2026-05-30).]", True),
    ("Mara adopted a dog on 2026-04-30", "Mara: I adopted a dog last weekend. "
     "[session date 2026-06-02; I adopted a dog last weekend (weekend of 2026-05-30).]", False),
    ("According to Mara, she adopted a dog", "Mara: I adopted a dog.", True),
])
def test_hard_check(claim: str, source: str, ok: bool) -> None:
    assert hard_check(claim, source) is ok


class SwappingSynthesizer(DeterministicSynthesizer):
    """Writes plausible lies: a wrong place, a wrong number, a wrong name, a wrong format."""

    name = "swapping-v1"

    def page(self, spec):
        text = super().page(spec)
        if spec.slug == "mara-lind":
            text = (text.replace("in Malmo", "in Oslo").replace("30 cm", "35 cm")
                    .replace("Priya Nair (since", "Paula Nair (since").replace("figures as PDF", "figures as PNG"))
        return text


def test_verification_rejects_wrong_name_number_place_and_format(tree: Path) -> None:
    honest = run_local(tree, None)
    res = run_local(tree, None, synthesizer=SwappingSynthesizer())
    mara = res.staged["knowledge/mara-lind.md"]
    for lie in ("Oslo", "35 cm", "Paula", "PNG"):
        assert lie not in mara, lie
        assert any(p.code == "unsupported-claim" and lie in p.message for p in res.problems), lie
    assert res.stats["rejected"] >= 4 and honest.stats["rejected"] == 0


# --------------------------------------------------------------------------- INDEX

def test_index_puts_the_user_first_with_one_line_summaries(tree: Path) -> None:
    res = run_local(tree, None)
    lines = [ln for ln in res.staged["knowledge/INDEX.md"].splitlines() if ln.startswith("- [[")]
    assert lines[0].startswith("- [[mara-lind]] Mara Lind — the user; Mara Lind works at Tessellate Labs")
    priya = next(ln for ln in lines if ln.startswith("- [[priya-nair]]"))
    assert "Mara Lind's manager is Priya Nair" in priya
    assert all(len(ln) < 200 and "“" not in ln for ln in lines)


# --------------------------------------------------------------------------- personas

#: Personas written to test dream on a life it was not tuned on, whose first-run failures
#: are not all fixed yet; the test must fail on them (xfail strict) until they are, so a
#: fix is noticed. morag: "Earl Grey" (the tea) gets a page typed person.
KNOWN_FAILING: dict[str, str] = {}  # persona → why it fails (a strict xfail)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[n]))
    if n in KNOWN_FAILING else n
    for n in sorted(p.stem for p in PERSONAS.glob("*.yaml"))])
def test_persona_figures(name: str) -> None:
    figs, staged = run(load(PERSONAS / f"{name}.yaml"))
    assert figs["recall"] >= 0.9 and figs["precision"] >= 0.9, figs
    assert figs["junk_pages"] == [] and figs["stale_as_current"] == [], figs
    assert figs["current_missing"] == [] and figs["rejected"] == 0, figs


@pytest.mark.parametrize("name", ["ines", "tove"])
def test_persona_with_the_user_speaking_as_user(name: str) -> None:
    """"User: …" turns are the user's facts, under the name the conversation gives them."""
    figs, staged = run(as_user_role(load(PERSONAS / f"{name}.yaml")))
    assert figs["recall"] >= 0.9 and figs["precision"] >= 0.9, figs
    assert figs["junk_pages"] == [] and figs["stale_as_current"] == [] and figs["current_missing"] == [], figs
    assert "knowledge/user.md" not in staged


def test_an_assistant_with_a_name_is_still_the_assistant() -> None:
    p = load(PERSONAS / "ines.yaml")
    p = {**p, "sessions": [{**s, "turns": [("Aria" + t[len("Assistant"):]) if t.startswith("Assistant:") else t
                                           for t in s["turns"]]} for s in p["sessions"]]}
    figs, staged = run(p)
    assert "knowledge/aria.md" not in staged
    assert figs["precision"] >= 0.9 and figs["recall"] >= 0.9 and figs["junk_pages"] == [], figs
    from brainfs.dream.speakernames import named_assistants, service_counts

    talk = [("Aria", "Sure, noted."), ("Mara", "I moved to Oslo."), ("Aria", "Here is the draft."),
            ("Aria", "Anything else?"), ("Mara", "Sure, thanks."), ("Mara", "I love it there.")]
    assert named_assistants(service_counts(talk)) == {"Aria"}


def test_persona_scorer_can_fail() -> None:
    labels = load(PERSONAS / "ines.yaml")["labels"]
    stale = ("---\ntitle: Ines Okafor\ntype: person\n---\n\n- Ines works at Halvorsen Maritime [cite:1]\n"
             "- Corvid Analytics, Leila Haddad, Porto, 12 percent\n")
    junk = "---\ntitle: Dear Leila\ntype: project\n---\n\nx\n"
    figs = score({"knowledge/ines-okafor.md": stale, "knowledge/dear-leila.md": junk}, labels)
    assert figs["stale_as_current"] and figs["junk_pages"] == ["knowledge/dear-leila.md"]
    assert figs["recall"] < 0.2 and figs["precision"] == 0.5


# --------------------------------------------------------------------------- progress

def test_progress_on_a_terminal_quiet_otherwise(tree: Path) -> None:
    import io

    from brainfs.dream.progress import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    run_local(tree, None, progress=Progress(tty))
    out = tty.getvalue()
    assert "reading sessions: 2/2" in out and "writing the wiki: " in out and " pages from " in out
    # the count is of files, and says so, beside the claims the summary counts too
    assert re.search(r"verifying claims: (\d+)/\1 files, \d+ claims, 0 rejected", out), out
    run_local(tree, None, progress=Progress(pipe))
    assert pipe.getvalue() == ""


def test_a_page_dropped_for_its_own_error_does_not_take_its_linkers_down() -> None:
    """A page excluded with no previous version to keep leaves its links as plain text
    in the other pages, which stay (at 20,000 files one over-long page once excluded the
    1,993 pages linking to it)."""
    from brainfs.dream.checking import _unlink_page

    files = {"knowledge/a.md": "see [[nadia]], [[nadia|the user]] and [[nadia#Now]]; [[nadiab]]",
             "knowledge/INDEX.md": "- [[nadia]] Nadia Rahman"}
    _unlink_page(files, "knowledge/nadia.md", "Nadia Rahman")
    assert files["knowledge/a.md"] == ("see Nadia Rahman, the user and Nadia Rahman; "
                                       "[[nadiab]]")
    assert files["knowledge/INDEX.md"] == "- Nadia Rahman Nadia Rahman"


def test_the_size_cap_counts_sources_and_cuts_the_oldest_superseded_values() -> None:
    """Superseded values past the newest _MIN_SUPERSEDED go, oldest first, once the
    timeline and threads are cut; current lines never go; each claim's source counts."""
    from brainfs.dream import pages as P
    from brainfs.dream.synth import Claim

    now = [Claim(f"fact {i}", f"sessions/s{i}/transcript.md#D1:1", None, "Now") for i in range(5)]
    old = [Claim(f"old value {i:03d}", f"sessions/o{i}/transcript.md#D1:1", f"2026-01-{1 + i % 28:02d}",
                 "Superseded") for i in range(60)]
    kept = P.fit(now + old, 3000)
    assert all(c in kept for c in now)
    left = [c for c in kept if c.section == "Superseded"]
    assert P._MIN_SUPERSEDED <= len(left) < 60
    cut = [c for c in old if c not in left]
    assert max(c.date for c in cut) <= min(c.date for c in left)
    # the sources count: without them all 65 claims would fit in 3,000 characters
    assert sum(len(c.text) + 25 for c in now + old) < 3000


def test_a_page_a_person_wrote_is_kept_when_dream_writes_that_subject(tree: Path) -> None:
    """A page that was there before dream (the user's, an import's) is not overwritten when
    dream writes a page at its path: its statements stay, under their own section, cited
    to the hand; they are the person's words, not corrections (no correction event), and a
    second run finds nothing new."""
    mine = ("---\ntitle: Mara Lind\n---\n# Mara Lind\n\n## Notes\n\n"
            "- Mara keeps bees on the roof of the institute.\n"
            "- Mara wants figures as PNG.\n")
    write(tree, {"knowledge/mara-lind.md": mine})
    res = run_local(tree, None, apply=True)
    assert not [x for x in res.problems if x.severity == "error"], res.problems
    page = (tree / "knowledge/mara-lind.md").read_text()
    assert "## Kept from the page as it was" in page
    kept = page.split("## Kept from the page as it was")[1]
    assert "Mara keeps bees on the roof of the institute." in kept and "Mara wants figures as PNG." in kept
    assert "wants figures as PDF" in page.split("## Timeline")[0]  # the sessions' fact stays current
    assert not list((tree / "corrections").glob("*hand*")) if (tree / "corrections").exists() else True
    assert run_local(tree, None, apply=True).nothing_new
