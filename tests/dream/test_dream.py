"""Dream: each phase on small transcripts, validation, verification, forget, corrections,
and the S3 layer (git history in the bucket, lease, no empty commit, re-index)."""

from __future__ import annotations

import datetime as _dt
import json
import threading
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.dates import meaning
from brainfs.cache.search.citations import cited_refs
from brainfs.dream import core
from brainfs.dream.core import correction_event, run_local
from brainfs.dream.synth import DeterministicSynthesizer
from brainfs.dream.text import resolve_relative_dates
from brainfs.dream.validate import validate_tree
from dream_helpers import S1, S2, S3_, pages, view_of, write


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write(tmp_path / "tree", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})


# --------------------------------------------------------------------------- phases


@pytest.mark.unit
def test_summaries_and_session_index(tree: Path, tmp_path: Path) -> None:
    res = run_local(tree, tmp_path / "staged")
    assert not res.nothing_new and res.stats["sessions_read"] == 2
    meta, body, bad = split_frontmatter(res.staged["sessions/s1/summary.md"])
    assert not bad and meta["type"] == "summary" and meta["session"] == "s1"
    assert meta["date"] == "2023-05-08" and meta["title"]
    assert "[cite:1]" in body and meta["sources"][0].startswith("sessions/s1/transcript.md#D1:")
    idx = res.staged["sessions/index.md"].splitlines()
    assert idx[2].startswith("- s1 | 2023-05-08 | ") and idx[3].startswith("- s2 | 2023-06-20 | ")
    # the staged tree is on disk, the corpus untouched
    assert (tmp_path / "staged/knowledge/INDEX.md").exists() and not (tree / "knowledge").exists()
    # deterministic: the same input renders the same bytes
    again = run_local(tree, None)
    assert again.staged == res.staged | {core.STATE_PATH: again.staged[core.STATE_PATH]}


@pytest.mark.unit
def test_relative_dates_resolve_against_session_date() -> None:
    d = _dt.date(2023, 5, 8)  # a Monday

    def resolve_expression(expr: str, day: _dt.date) -> str:
        return meaning(expr, day).iso()  # dream's ISO rendering of the one resolver
    assert resolve_expression("yesterday", d) == "2023-05-07"
    assert resolve_expression("last weekend", d) == "weekend of 2023-05-06"
    assert resolve_expression("last week", d) == "week of 2023-05-01"
    assert resolve_expression("last month", d) == "April 2023"
    assert resolve_expression("two days ago", d) == "2023-05-06"
    assert resolve_expression("last Friday", d) == "2023-05-05"
    assert resolve_relative_dates("I adopted a dog last weekend.", "2023-05-08") == \
        "I adopted a dog last weekend (weekend of 2023-05-06)."


@pytest.mark.unit
def test_facts_attach_to_subjects_with_citations(tree: Path) -> None:
    res = run_local(tree, None)
    ps = pages(res)
    # subjects mentioned in ≥ 2 turns get pages; Arashiyama (once, in passing) does not;
    # Osaka (once) does: it was Mara's home, no passing mention
    assert {"knowledge/mara.md", "knowledge/kyoto.md", "knowledge/max.md",
            "knowledge/sora-city-lab.md", "knowledge/osaka.md"} <= set(ps)
    assert "knowledge/arashiyama.md" not in ps
    assert split_frontmatter(ps["knowledge/max.md"])[0]["type"] == "pet"
    assert split_frontmatter(ps["knowledge/kyoto.md"])[0]["type"] == "place"
    mara = ps["knowledge/mara.md"]
    meta = split_frontmatter(mara)[0]
    assert meta["type"] == "person" and meta["updated"] == "2023-06-20"
    refs = cited_refs(mara)
    line = next(ln for ln in mara.splitlines() if "adopted a dog" in ln)
    n = int(line.split("[cite:")[1].split("]")[0])
    assert refs[n] == "sessions/s1/transcript.md#D1:1"
    assert "last weekend (weekend of 2023-05-06)" in line
    # a claim quotes the turn's words, not the index's "Mara (8 May 2023): " prefix
    assert "(8 May 2023)" not in mara and "Mara: “Hi Ana!" not in mara
    assert split_frontmatter(ps["knowledge/sora-city-lab.md"])[0]["type"] == "organization"
    # every list item outside "Related" carries a citation; links resolve
    assert not [p for p in res.problems if p.severity == "error"]
    assert "[[kyoto]]" in mara and "## Related" in mara
    # newer "moved to Kyoto" supersedes "live in Osaka", and the page says so
    now = mara.split("## Timeline")[0]
    sup = mara.split("## Superseded")[1].split("## Related")[0]
    assert "Mara lived in Osaka (from 8 May 2023)" in sup
    assert "until 20 June 2023, replaced by Kyoto" in sup
    assert "Osaka" not in now and "- Mara lives in Kyoto (since 20 June 2023) [cite:" in now
    # preferences and pets are current lines in the wiki's words
    assert "- Mara's favorite park is Maruyama Park (since 20 June 2023) [cite:" in now
    assert "- Max is Mara's beagle (since 8 May 2023) [cite:" in now


@pytest.mark.unit
def test_timeline_is_dated_third_person_and_ordered(tree: Path) -> None:
    write(tree, {"sessions/s3/transcript.md": S3_})
    res = run_local(tree, None)
    mara = pages(res)["knowledge/mara.md"]
    refs = cited_refs(mara)
    timeline = mara.split("## Timeline")[1].split("\n## ")[0]
    items = [ln for ln in timeline.splitlines() if ln.startswith("- ")]
    dates = [ln[2:12] for ln in items]
    assert dates == sorted(dates) and len(items) >= 3
    # the wiki's words, not quotes: "I" became the subject's name
    assert any(ln.startswith("- 2023-05-08 — Mara adopted a dog last weekend (weekend of 2023-05-06).")
               for ln in items)
    assert "“" not in timeline and " I " not in timeline
    # a relative date is resolved against its session: "yesterday" in s3 (2023-07-02)
    kyoto = pages(res)["knowledge/kyoto.md"]
    assert "- 2023-07-01 — Sora City Lab shipped the wheelchair map for Kyoto yesterday" in kyoto
    line = next(ln for ln in items if "adopted a dog" in ln)
    assert refs[int(line.split("[cite:")[1].split("]")[0])] == "sessions/s1/transcript.md#D1:1"
    assert res.stats["rejected"] == 0 and not [p for p in res.problems if p.severity == "error"]


@pytest.mark.unit
def test_index_is_compact_and_capped(tmp_path: Path) -> None:
    turns = []
    for i in range(60):
        turns.append(f"[D1:{2 * i + 1}] Mara: I met Person{i:02d} Alpha at the Big Hall today and we talked.")
        turns.append(f"[D1:{2 * i + 2}] Ana: Person{i:02d} Alpha also wrote to me about the Big Hall plans.")
    t = "---\nsession: s1\ndate: 2023-01-02\n---\n\n" + "\n\n".join(turns) + "\n"
    root = write(tmp_path / "t", {"sessions/s1/transcript.md": t})
    res = run_local(root, None, settings={"index_cap_tokens": 600, "max_facts_per_page": 20})
    index = res.staged["knowledge/INDEX.md"]
    assert (len(index) + 3) // 4 <= 600
    assert "more pages with fewer mentions not listed" in index
    assert index.count("\n- [[") < len(pages(res)) - 1
    assert not [p for p in res.problems if p.code == "index-cap"]


# --------------------------------------------------------------------------- validation


GOOD = """---
title: Kyoto
type: place
updated: '2023-06-20'
sources:
- sessions/s1/transcript.md#D1:4
---

# Kyoto

- Ana: “I love hiking in Kyoto.” [cite:1]

## Related

- [[mara]] — Mara
"""
MARA = GOOD.replace("title: Kyoto", "title: Mara").replace("# Kyoto", "# Mara").replace("[[mara]] — Mara", "[[kyoto]]")

BAD_PAGES = {
    "frontmatter": GOOD.replace("---\ntitle", "title", 1),
    "frontmatter-field": GOOD.replace("type: place\n", ""),
    "sources": GOOD.replace("sources:\n- sessions/s1/transcript.md#D1:4\n", "sources: []\n"),
    "cite-syntax": GOOD.replace("[cite:1]", "[cite: one]"),
    "cite-unresolved": GOOD.replace("[cite:1]", "[cite:1] [cite:3]"),
    "source-missing": GOOD.replace("sessions/s1/", "sessions/s9/"),
    "source-turn": GOOD.replace("#D1:4", "#D1:99"),
    "uncited-claim": GOOD.replace(" [cite:1]", ""),
    "link-unresolved": GOOD.replace("[[mara]]", "[[nobody]]"),
    "empty": GOOD.split("# Kyoto")[0] + "# Kyoto\n",
}


@pytest.mark.unit
@pytest.mark.parametrize("code", sorted(BAD_PAGES))
def test_validation_rejects_each_malformed_page(code: str, tree: Path) -> None:
    staged = {"knowledge/kyoto.md": BAD_PAGES[code], "knowledge/mara.md": MARA}
    view = view_of(tree, type("R", (), {"staged": staged})())
    good = validate_tree({"knowledge/kyoto.md": GOOD, "knowledge/mara.md": MARA}, view)
    assert good == []
    problems = validate_tree(staged, view)
    assert code in {p.code for p in problems}, problems
    p = next(p for p in problems if p.code == code)
    assert p.path == "knowledge/kyoto.md" and len(p.message) > 10 and "\n" not in p.message


@pytest.mark.unit
def test_validation_duplicates_index_cap_and_cards(tree: Path) -> None:
    view = view_of(tree, type("R", (), {"staged": {}})())
    dup = {"knowledge/kyoto.md": GOOD, "knowledge/kyoto-2.md": GOOD, "knowledge/mara.md": MARA}
    assert {"duplicate"} <= {p.code for p in validate_tree(dup, view)}
    big = {"knowledge/INDEX.md": "- x\n" * 3000}
    assert [p.code for p in validate_tree(big, view, index_cap_tokens=2000)] == ["index-cap"]
    card = "---\ntype: correction\nscope: global\ncreated: 2024-01-01\nupdated: 2024-01-01\n---\n\nText\n"
    codes = {p.code for p in validate_tree({"notes/corrections/a.md": card}, view)}
    assert codes == {"frontmatter-field"}  # confidence is missing


# --------------------------------------------------------------------------- verification


class LyingSynthesizer(DeterministicSynthesizer):
    """Writes one claim its citation does not support (as a careless LLM might)."""

    name = "lying-v1"

    def page(self, spec):
        text = super().page(spec)
        if spec.slug == "mara":
            text = text.replace("Mara adopted a dog", "Quantum physicists rejected gravity theories instead of")
        return text


@pytest.mark.unit
def test_semantic_verification_drops_unsupported_claims(tree: Path) -> None:
    res = run_local(tree, None, synthesizer=LyingSynthesizer())
    mara = res.staged["knowledge/mara.md"]
    assert "Quantum" not in mara and "volunteers there" in mara
    assert res.stats["rejected"] == 1 and 0 < res.stats["share_rejected"] < 0.1
    assert any(p.code == "unsupported-claim" and p.path == "knowledge/mara.md" for p in res.problems)
    honest = run_local(tree, None)
    assert honest.stats["rejected"] == 0 and honest.stats["share_valid_citations"] == 1.0


@pytest.mark.model
def test_semantic_verification_with_the_real_embedder(tree: Path) -> None:
    from brainfs.cache.search.embedder import load_embedder

    # The model is part of the test install (the "embed" extra): failing to load it is a failure.
    emb = load_embedder()
    res = run_local(tree, None, synthesizer=LyingSynthesizer(), embedder=emb)
    assert res.stats["verify_method"] == "embedding" and res.stats["verify_model_calls"] >= 1
    assert res.stats["rejected"] == 1 and "Quantum" not in res.staged["knowledge/mara.md"]


# --------------------------------------------------------------------------- forget, corrections, reruns


@pytest.mark.unit
def test_forget_request_removes_fact_everywhere(tree: Path) -> None:
    first = run_local(tree, None, apply=True)
    assert "knowledge/max.md" in first.staged and "Max" in first.staged["knowledge/INDEX.md"]
    write(tree, {"forget/2023-07-01-max.md": "---\ncreated: 2023-07-01\n---\nMax\n"})
    res = run_local(tree, None, apply=True)
    deleted = [c for c in res.changes if c.action == "delete"]
    # the page goes; the transcripts keep their turns with the name redacted (so the learned
    # card of "my favorite park is Maruyama Park because [forgotten] loves the ducks" stays)
    assert [c.path for c in deleted] == ["knowledge/max.md"] and "forget" in deleted[0].reason
    assert "Max" not in (tree / "sessions/s1/transcript.md").read_text()
    for p in list((tree / "knowledge").glob("*.md")) + list((tree / "sessions").glob("*/summary.md")):
        assert "Max" not in p.read_text(), p
    assert not (tree / "knowledge/max.md").exists()
    assert res.stats["forgotten"] > 0
    # a grown session does not bring the forgotten fact back
    write(tree, {"sessions/s2/transcript.md": S2 + "\n[D2:6] Mara: Max got a new red collar from the Kyoto shop.\n"})
    run_local(tree, None, apply=True)
    assert "Max" not in (tree / "knowledge/kyoto.md").read_text()


@pytest.mark.unit
def test_correction_becomes_card_and_supersedes_older_card(tree: Path) -> None:
    run_local(tree, None, apply=True)
    t1 = _dt.datetime(2023, 7, 1, 12, tzinfo=_dt.timezone.utc)
    p1, c1 = correction_event("Mara volunteers with Sora City Lab on Saturdays.", now=t1)
    write(tree, {p1: c1})
    r1 = run_local(tree, None, apply=True)
    cards = sorted((tree / "notes/corrections").glob("*.md"))
    assert len(cards) == 1
    m1 = split_frontmatter(cards[0].read_text())[0]
    assert m1["type"] == "correction" and m1["scope"] == "global" and "supersedes" not in m1
    assert {"confidence", "created", "updated"} <= set(m1)
    mara = (tree / "knowledge/mara.md").read_text()
    assert "## Corrections" in mara and "Saturdays" in mara
    assert any(c.path.startswith("notes/corrections/") and c.action == "add" for c in r1.changes)

    t2 = _dt.datetime(2023, 7, 5, 12, tzinfo=_dt.timezone.utc)
    p2, c2 = correction_event("Mara volunteers with Sora City Lab on Sundays, not on weekends.", now=t2)
    write(tree, {p2: c2})
    r2 = run_local(tree, None, apply=True)
    cards = sorted((tree / "notes/corrections").glob("*.md"))
    assert len(cards) == 2
    newer = next(c for c in cards if "Sundays" in c.read_text())
    older = next(c for c in cards if c != newer)
    mn = split_frontmatter(newer.read_text())[0]
    mo = split_frontmatter(older.read_text())[0]
    assert mn["supersedes"] == f"notes/corrections/{older.name}"
    assert mo["superseded_by"] == f"notes/corrections/{newer.name}" and mo["confidence"] < mn["confidence"]
    mara = (tree / "knowledge/mara.md").read_text()
    corr = mara.split("## Corrections")[1].split("##")[0]
    assert "Sundays" in corr and "Saturdays" not in corr
    # "not on weekends" supersedes the turn saying "on weekends"
    assert "volunteers there with Sora City Lab on weekends" in mara.split("## Superseded")[1]
    assert any("supersedes" in c.reason for c in r2.changes)
    assert not [p for p in r2.problems if p.severity == "error"]


@pytest.mark.unit
def test_second_run_with_nothing_new_changes_nothing(tree: Path) -> None:
    r1 = run_local(tree, None, apply=True)
    assert r1.changes
    r2 = run_local(tree, None, apply=True)
    assert r2.nothing_new and r2.changes == []
    r3 = run_local(tree, None, force=True)
    assert [c.path for c in r3.changes] == [core.STATE_PATH]  # forced: same pages, no change


@pytest.mark.unit
def test_budget_defers_sessions_to_next_run(tree: Path) -> None:
    write(tree, {"sessions/s3/transcript.md": S3_})
    r1 = run_local(tree, None, apply=True, settings={"max_sessions_per_run": 2})
    assert r1.stats["sessions_read"] == 2 and r1.deferred == ["s3"]
    assert "s3" not in (tree / "sessions/index.md").read_text()
    r2 = run_local(tree, None, apply=True, settings={"max_sessions_per_run": 2})
    assert r2.stats["sessions_read"] == 1 and "s3" in (tree / "sessions/index.md").read_text()


@pytest.mark.unit
def test_graph_renders(tree: Path, tmp_path: Path) -> None:
    from brainfs.dream.graph import render_graph, wiki_graph

    res = run_local(tree, None)
    g = wiki_graph(pages(res))
    assert g.has_edge("mara", "kyoto") and g.has_edge("mara", "session:s1")
    counts = render_graph(pages(res), tmp_path / "g.png")
    assert counts["pages"] == len(pages(res)) - 1
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- S3 layer


def _upload(store, files: dict[str, str]) -> None:
    for p, t in files.items():
        store.put(p, t.encode())


@pytest.mark.s3
def test_s3_run_commits_uploads_and_reindexes(store, tmp_path: Path) -> None:
    from brainfs.cache.search.localindex import INDEX_MANIFEST_KEY
    from brainfs.dream.sync import run_s3, wiki_log

    _upload(store, {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    dry = run_s3(store, tmp_path / "w", dry_run=True)
    assert "+++ b/knowledge/mara.md" in dry.result.diff()
    assert not [o for o in store.list() if o.path.startswith("knowledge/")]  # dry run wrote nothing

    rep = run_s3(store, tmp_path / "w")
    assert rep.commit and not rep.conflicts
    listed = {o.path for o in store.list()}
    assert {"knowledge/mara.md", "knowledge/INDEX.md", "sessions/s1/summary.md",
            ".brainfs/dream-state.json", ".brainfs/wiki.bundle", INDEX_MANIFEST_KEY} <= listed
    assert ".brainfs/dream.lease" not in listed
    log = wiki_log(store, tmp_path / "log")
    assert len(log) == 1
    msg = log[0][1]
    assert msg.startswith("dream: ") and "A knowledge/mara.md — new page" in msg
    assert "A sessions/s1/summary.md — new session s1" in msg

    # nothing new: no run, no commit
    again = run_s3(store, tmp_path / "w")
    assert again.result.nothing_new and again.commit is None
    forced = run_s3(store, tmp_path / "w", force=True)
    assert forced.commit is None  # same wiki → no empty commit
    assert len(wiki_log(store, tmp_path / "log2")) == 1

    # a new session: one more commit, saying why
    _upload(store, {"sessions/s3/transcript.md": S3_})
    run_s3(store, tmp_path / "w", reindex=False)
    log = wiki_log(store, tmp_path / "log3")
    assert len(log) == 2 and "new session s3" in log[0][1]
    assert "s3" in store.get("sessions/index.md")[0].decode()


@pytest.mark.s3
def test_s3_concurrent_runs_one_waits_or_exits(store, tmp_path: Path) -> None:
    from brainfs.dream.sync import LEASE_PATH, Lease, LeaseHeld, run_s3, wiki_log

    _upload(store, {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    # a lease held elsewhere → a second run exits with a clear message
    holder = Lease(store, tmp_path / "other")
    holder.acquire()
    try:
        with pytest.raises(LeaseHeld, match="another dream run is in progress"):
            run_s3(store, tmp_path / "w1", reindex=False)
    finally:
        holder.release()
    assert LEASE_PATH not in {o.path for o in store.list()}

    # two runs at once with --wait: both finish, one after the other; nothing lost
    _upload(store, {"sessions/s3/transcript.md": S3_})
    results: dict[str, object] = {}

    def go(name: str) -> None:
        try:
            results[name] = run_s3(store, tmp_path / "shared", wait=60, reindex=False)
        except Exception as e:  # noqa: BLE001
            results[name] = e

    ts = [threading.Thread(target=go, args=(n,)) for n in ("a", "b")]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not [r for r in results.values() if isinstance(r, Exception)], results
    reps = list(results.values())
    assert sorted(r.result.nothing_new for r in reps) == [False, True]
    assert len(wiki_log(store, tmp_path / "log")) == 1
    idx = store.get("sessions/index.md")[0].decode()
    assert all(f"- {s} |" in idx for s in ("s1", "s2", "s3"))
    state = json.loads(store.get(".brainfs/dream-state.json")[0])
    assert set(state["sessions"]) == {"s1", "s2", "s3"}


@pytest.mark.s3
def test_cli_correct_dream_graph(store, corpus, cfg, tmp_path: Path, monkeypatch, capsys) -> None:
    from brainfs.front.cli import main

    monkeypatch.setenv("AWS_ENDPOINT_URL", cfg.endpoint_url)
    monkeypatch.setenv("BRAINFS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("BRAINFS_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    _upload(store, {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    url = str(corpus)
    assert main(["correct", "Mara volunteers with Sora City Lab on Sundays, not on weekends.", url]) == 0
    assert any(o.path.startswith("corrections/") for o in store.list())
    assert main(["dream", url, "--dry-run", "--no-embed"]) == 0
    out = capsys.readouterr().out
    assert "+++ b/knowledge/mara.md" in out and "nothing written" in out
    assert main(["dream", url, "--no-embed", "--no-index"]) == 0
    out = capsys.readouterr().out
    assert "A knowledge/mara.md" in out and "commit " in out
    assert any(o.path.startswith("notes/corrections/") for o in store.list())
    assert main(["dream", url, "--no-embed", "--no-index"]) == 0
    assert "nothing new" in capsys.readouterr().out
    assert main(["graph", url, "--out", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").stat().st_size > 1000
    assert main(["correct", "  ", url]) == 1
