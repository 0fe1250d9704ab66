"""Context assembly (cache/context/assembly.py): lanes under a token budget, with reasons.

A small memory tree is written to a temporary directory and indexed for real (FTS5 +
MiniLM vectors for the ``model`` tests, FTS only for the sparse ones); assembly reads the
files from that directory like it reads a mount.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.cache.context.assembly import LANES, MemorySource, assemble
from brainfs.cache.search.model import token_counter
from brainfs.cache.search.index import SearchIndex

NOW = _dt.datetime(2026, 6, 1, 9, 0, tzinfo=_dt.timezone.utc)

TREE = {
    "GUIDE.md": """---
title: Standing instructions
type: guide
project: Harbor research
notes: Prefers short answers; working on the Harbor grant this month.
updated: 2026-05-01
---
# Guide

You are assisting Mara Quint, a marine ecologist. Reply in British English. Cite the
session turn for anything Mara said.
""",
    "rules/no-sending.md": """---
title: Never send on Mara's behalf
type: rule
---
Never send an email or message on Mara's behalf: prepare a draft and say where it is.
""",
    "rules/raw-data.md": """---
title: Raw data is read-only
type: rule
---
Never edit or delete raw survey data; work on copies in the analysis folder.
""",
    "knowledge/INDEX.md": """# Knowledge index

One line per page; 2 pages.

- [[harbor-project]] — the Harbor seagrass restoration project; led by Omar Haddad
- [[mara-quint]] — marine ecologist whose memory this is
""",
    "knowledge/harbor-project.md": """---
title: Harbor project
type: project
updated: 2026-05-20
sources:
  - sessions/s2/transcript.md#D2:3
---
# Harbor project

The Harbor project restores seagrass meadows in the bay. Omar Haddad leads it since May [cite:1].

## Funding

The project is funded by the Blue Coast grant of 40,000 euros, renewed every spring.
""",
    "knowledge/mara-quint.md": """---
title: Mara Quint
type: entity
updated: 2026-04-02
---
# Mara Quint

Marine ecologist in Lisbon. Dives on weekends; keeps a sourdough starter called Brine.
""",
    "notes/harbor/harbor-lead.md": """---
type: fact
scope: project:harbor
confidence: 0.8
created: 2026-02-01
updated: 2026-02-01
---
Lena Brandt leads the Harbor project.

Source: sessions/s1/transcript.md#D1:2
""",
    "notes/harbor/harbor-lead-2026-05-10.md": """---
type: correction
scope: project:harbor
confidence: 0.95
created: 2026-05-10
updated: 2026-05-10
supersedes: notes/harbor/harbor-lead.md
---
Omar Haddad took over the lead of the Harbor project from Lena Brandt.

Source: sessions/s2/transcript.md#D2:3
""",
    "notes/prefs/coffee.md": """---
type: preference
scope: global
confidence: 0.9
pinned: true
created: 2026-03-01
updated: 2026-03-01
---
Mara drinks no coffee after 14:00 and prefers meetings after 10:00.
""",
    "notes/harbor/harbor-boat.md": """---
type: fact
scope: project:harbor
confidence: 0.6
created: 2023-06-01
updated: 2023-06-01
---
The Harbor project survey boat is called Petrel and is moored at dock 4.
""",
    "notes/harbor/harbor-site.md": """---
type: fact
scope: project:harbor
confidence: 0.85
created: 2026-04-11
updated: 2026-04-11
---
The Harbor project's main restoration site is Troia bay, with two smaller plots near
Setubal. The Harbor project team counts shoots in quadrats every second week, logs water
turbidity with a Secchi disk and records the planting density per square metre, so the
monthly Harbor report compares survival across the three Harbor plots.
""",
    "sessions/index.md": """- s1 | 2026-02-01 | Harbor kickoff
- s2 | 2026-05-10 | Harbor handover
""",
    "sessions/s1/transcript.md": """---
session: s1
date: 2026-02-01T10:00:00+00:00
participants: [Mara, Assistant]
---
# Harbor kickoff

[D1:1] Mara: Let's plan the Harbor project kickoff.

[D1:2] Assistant: Noted: Lena Brandt leads the Harbor project and books the survey boat.

[D1:3] Mara: Good. The first planting is in March at Troia bay.
""",
    "sessions/s1/summary.md": """---
session: s1
date: 2026-02-01T10:00:00+00:00
type: summary
---
Kickoff of the Harbor project: Lena Brandt leads it [D1:2]; first planting in March [D1:3].
""",
    "sessions/s2/transcript.md": """---
session: s2
date: 2026-05-10T10:00:00+00:00
participants: [Mara, Assistant]
---
# Harbor handover

[D2:1] Mara: Lena is moving to the Azores office.

[D2:2] Assistant: Understood. Who will run the Harbor project from now on?

[D2:3] Mara: Omar Haddad takes over the lead of the Harbor project from Lena, starting this week.

[D2:4] Mara: Also, my dog Kelp needs a vet appointment on Friday.
""",
    "sessions/s2/summary.md": """---
session: s2
date: 2026-05-10T10:00:00+00:00
type: summary
---
Handover: Omar Haddad now leads the Harbor project [D2:3]; Lena moves to the Azores [D2:1].
""",
}

TASK = "Who leads the Harbor project now, and where is the restoration site?"
OLD_CARD = "notes/harbor/harbor-lead.md"
NEW_CARD = "notes/harbor/harbor-lead-2026-05-10.md"


def write_tree(root: Path) -> Path:
    for rel, text in TREE.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def build_index(root: Path, db: Path, embedder) -> SearchIndex:
    ix = SearchIndex(db)
    files = [(p.relative_to(root).as_posix(), str(p.stat().st_mtime_ns))
             for p in sorted(root.rglob("*.md")) if ".brainfs" not in p.parts]
    ix.refresh(files, lambda rel: (root / rel).read_bytes(), embedder)
    return ix


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("memory"))


@pytest.fixture(scope="module")
def no_global(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("noglobal") / "GUIDE.md"  # does not exist


@pytest.fixture(scope="module")
def embedder():
    from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

    try:
        return load_embedder("minilm")
    except EmbedderUnavailable as e:  # pragma: no cover - the CI installs the model
        pytest.fail(f"embedding model unavailable: {e}")


@pytest.fixture(scope="module")
def dense_index(tree: Path, embedder, tmp_path_factory: pytest.TempPathFactory):
    ix = build_index(tree, tmp_path_factory.mktemp("ix") / "index.sqlite", embedder)
    yield ix
    ix.close()


@pytest.fixture(scope="module")
def sparse_index(tree: Path, tmp_path_factory: pytest.TempPathFactory):
    ix = build_index(tree, tmp_path_factory.mktemp("ixs") / "index.sqlite", None)
    yield ix
    ix.close()


def check_invariants(w) -> None:
    """What must hold for every assembled window."""
    avail = w.budget - w.reserve
    assert 0 <= w.used <= avail, (w.used, avail)
    assert w.used == sum(i.tokens for i in w.items if i.status in ("admitted", "truncated"))
    # tokens are real word pieces of exactly what the model gets
    assert w.used == (token_counter()([w.to_prompt()])[0] if w.used else 0)
    lanes = [LANES.index(i.lane) for i in w.items]
    assert lanes == sorted(lanes), [i.lane for i in w.items]
    for i in w.items:
        assert i.status in ("admitted", "truncated", "skipped")
        assert i.reason.strip() and "\n" not in i.reason, i
        assert i.reason.split()[0].rstrip(":#").startswith(i.lane), i.reason
        assert i.source and i.tokens > 0 and 0.0 <= i.confidence <= 1.0 and i.freshness
        if i.status == "truncated":
            assert i.tokens < i.full_tokens and i.text.endswith("…") and "truncated" in i.reason
            assert i.kind != "rule"
    srcs = [i.source for i in w.items if i.status != "skipped"]
    assert len(srcs) == len(set(srcs)), "an item admitted twice"


# --------------------------------------------------------------------------- model tests

@pytest.mark.model
@pytest.mark.parametrize("budget,reserve", [(300, 75), (1000, 250), (4000, 1000), (8000, 2000)])
def test_budget_and_reserve_hold(tree, dense_index, embedder, no_global, budget, reserve):
    src = MemorySource(tree, dense_index, embedder=embedder, global_guide=no_global)
    w = assemble(TASK, src, budget=budget, reserve=reserve, now=NOW)
    assert w.mode == "hybrid", w.why
    check_invariants(w)
    assert [i.lane for i in w.items][0] == "scope"
    if budget >= 1000:
        assert {i.lane for i in w.admitted()} >= {"guide", "cards", "thread"}


@pytest.mark.model
def test_lanes_in_order_with_expected_content(tree, dense_index, embedder, no_global):
    src = MemorySource(tree, dense_index, embedder=embedder, global_guide=no_global)
    w = assemble(TASK, src, budget=8000, reserve=2000, now=NOW)
    check_invariants(w)
    by_src = {}
    for i in w.items:
        by_src.setdefault(i.source, i)  # first occurrence (a later one may be a duplicate)
    assert by_src["GUIDE.md"].lane == "guide" and by_src["GUIDE.md"].status == "admitted"
    assert by_src["rules/no-sending.md"].kind == "rule"
    assert by_src["knowledge/INDEX.md"].lane == "index"
    assert by_src["notes/prefs/coffee.md"].lane == "pinned"
    assert by_src[NEW_CARD].lane == "cards" and by_src[NEW_CARD].status == "admitted"
    # thread: the summary of the session the task continues first, then turn evidence
    thread = [i for i in w.items if i.lane == "thread"]
    assert thread[0].source == "sessions/s2/summary.md" and "the task continues" in thread[0].reason
    assert any(i.source == "sessions/s2/transcript.md#D2:3" and i.status == "admitted" for i in thread)
    # the pinned card is not admitted a second time as a recall hit
    dups = [i for i in w.items if i.path == "notes/prefs/coffee.md" and i.lane != "pinned"]
    assert all(i.status == "skipped" and "duplicate of" in i.reason for i in dups)
    # folder scope comes from GUIDE.md frontmatter before any file content
    scope = w.items[0]
    assert scope.lane == "scope" and "Harbor research" in scope.text and "short answers" in scope.text
    assert w.scope["sessions"] == 2 and w.scope["newest_session"]["id"] == "s2"


@pytest.mark.model
def test_superseded_card_skipped_naming_the_newer(tree, dense_index, embedder, no_global):
    src = MemorySource(tree, dense_index, embedder=embedder, global_guide=no_global)
    for budget in (1000, 4000, 8000):
        w = assemble("Who leads the Harbor project?", src, budget=budget, reserve=budget // 4, now=NOW)
        old = [i for i in w.items if i.path == OLD_CARD]
        assert old, "the older card should have been considered"
        for i in old:
            assert i.status == "skipped"
            assert "superseded by" in i.reason and NEW_CARD in i.reason
        assert any(i.path == NEW_CARD and i.status != "skipped" for i in w.items)


@pytest.mark.model
def test_card_marked_superseded_by_dream_is_skipped(tmp_path, embedder, no_global):
    """Dream marks the older card itself (``superseded_by:``, ``status: superseded``); a
    newer card that does not name it in ``supersedes:`` must not let it back in."""
    root = write_tree(tmp_path / "m")
    new = root / NEW_CARD
    new.write_text(new.read_text().replace(f"supersedes: {OLD_CARD}\n", ""))
    old = root / OLD_CARD
    old.write_text(old.read_text().replace(
        "updated: 2026-02-01\n", f"updated: 2026-02-01\nstatus: superseded\nsuperseded_by: {NEW_CARD}\n"))
    ix = build_index(root, tmp_path / "ix.sqlite", embedder)
    try:
        src = MemorySource(root, ix, embedder=embedder, global_guide=no_global)
        w = assemble("Who leads the Harbor project?", src, budget=4000, reserve=1000, now=NOW)
    finally:
        ix.close()
    olds = [i for i in w.items if i.path == OLD_CARD]
    assert olds and all(i.status == "skipped" and NEW_CARD in i.reason for i in olds), \
        [(i.status, i.reason) for i in olds]


@pytest.mark.model
def test_stale_flagged_or_dropped(tree, dense_index, embedder, no_global):
    src = MemorySource(tree, dense_index, embedder=embedder, global_guide=no_global)
    task = "What is the Harbor survey boat called and where is it moored?"
    w = assemble(task, src, budget=8000, reserve=2000, now=NOW)
    boat = [i for i in w.items if i.path == "notes/harbor/harbor-boat.md"]
    assert boat and boat[0].stale and "(stale)" in boat[0].freshness
    assert boat[0].status == "admitted" and "flagged stale" in boat[0].reason
    w2 = assemble(task, src, budget=8000, reserve=2000, now=NOW, drop_stale=True)
    boat2 = [i for i in w2.items if i.path == "notes/harbor/harbor-boat.md"]
    assert boat2[0].status == "skipped" and "stale" in boat2[0].reason
    check_invariants(w2)


@pytest.mark.model
def test_global_guide_first(tree, dense_index, embedder, tmp_path, monkeypatch):
    g = tmp_path / "global" / "GUIDE.md"
    g.parent.mkdir()
    g.write_text("---\ntype: guide\n---\nAlways answer in the user's language.\n")
    monkeypatch.setenv("BRAINFS_GLOBAL_GUIDE", str(g))
    w = assemble(TASK, MemorySource(tree, dense_index, embedder=embedder), budget=4000, reserve=1000, now=NOW)
    guide = [i for i in w.items if i.lane == "guide"]
    assert guide[0].source == "~global/GUIDE.md" and "user's language" in guide[0].text
    assert guide[1].source == "GUIDE.md"
    check_invariants(w)


@pytest.mark.model
def test_html_in_headless_chromium(tree, dense_index, embedder, no_global, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    src = MemorySource(tree, dense_index, embedder=embedder, global_guide=no_global)
    w = assemble(TASK, src, budget=1000, reserve=250, now=NOW)
    page = tmp_path / "context.html"
    page.write_text(w.to_html(), encoding="utf-8")
    html_text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html_text), "external resource"
    assert "@import" not in html_text and "url(" not in html_text
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2000"]
    png = tmp_path / "context.png"
    subprocess.run([*base, f"--screenshot={png}", page.as_uri()], check=True, timeout=120,
                   capture_output=True)
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dom = subprocess.run([*base, "--dump-dom", page.as_uri()], check=True, timeout=120,
                         capture_output=True, text=True).stdout
    rows = re.findall(r'<tr class="item ([a-z]+)" data-lane="([a-z]+)" data-status="[a-z]+" id="item-(\d+)"', dom)
    assert len(rows) == len(w.items)
    for (status, lane, n), it in zip(rows, w.items):
        assert (status, lane, int(n)) == (it.status, it.lane, w.items.index(it) + 1)
    for lane in {i.lane for i in w.admitted()}:
        assert f'title="{lane}: ' in dom, f"no bar segment for {lane}"
    assert 'class="seg reserve"' in dom and f"reserve {w.reserve}" in dom


# --------------------------------------------------------------------------- sparse / no model

@pytest.mark.unit
def test_sparse_when_embedder_unavailable(tree, sparse_index, no_global, monkeypatch):
    monkeypatch.setenv("BRAINFS_EMBEDDER", "none")
    src = MemorySource(tree, sparse_index, embedder="auto", global_guide=no_global)
    w = assemble(TASK, src, budget=2000, reserve=500, now=NOW)
    assert w.mode == "sparse"
    assert "embeddings unavailable" in w.why and src.embedder_error
    check_invariants(w)
    assert any(i.lane == "cards" and i.status != "skipped" for i in w.items)
    old = [i for i in w.items if i.path == OLD_CARD]
    assert old and all(i.status == "skipped" and NEW_CARD in i.reason for i in old)


@pytest.mark.unit
def test_budget_sweep_truncates_and_never_overflows(tree, sparse_index, no_global):
    src = MemorySource(tree, sparse_index, embedder=None, global_guide=no_global)
    seen = set()
    for budget in range(120, 2200, 61):
        for reserve in (0, budget // 4):
            w = assemble(TASK, src, budget=budget, reserve=reserve, now=NOW)
            check_invariants(w)
            seen |= {i.status for i in w.items}
            for i in w.items:
                if i.kind == "rule":
                    assert i.status in ("admitted", "skipped")
    assert seen == {"admitted", "truncated", "skipped"}


@pytest.mark.unit
def test_no_index_still_assembles(tree, no_global):
    w = assemble(TASK, MemorySource(tree, None, embedder=None, global_guide=no_global),
                 budget=1500, reserve=300, now=NOW)
    assert w.mode == "none"
    check_invariants(w)
    assert {i.lane for i in w.items} <= {"scope", "guide", "index", "pinned", "thread"}


@pytest.mark.unit
def test_json_shape(tree, sparse_index, no_global):
    src = MemorySource(tree, sparse_index, embedder=None, global_guide=no_global)
    d = json.loads(json.dumps(assemble(TASK, src, budget=1200, reserve=300, now=NOW).to_json()))
    assert {"budget", "reserve", "used", "mode", "items"} <= set(d)
    assert (d["budget"], d["reserve"]) == (1200, 300) and isinstance(d["used"], int)
    assert d["used"] <= 900 and d["mode"] in ("hybrid", "dense", "sparse", "recent", "none")
    for it in d["items"]:
        assert {"lane", "status", "tokens", "source", "reason", "text", "freshness", "confidence"} <= set(it)
        assert isinstance(it["tokens"], int) and isinstance(it["confidence"], float)
        assert isinstance(it["text"], str) and isinstance(it["freshness"], str)
        assert it["status"] in ("admitted", "truncated", "skipped")
    assert d["used"] == sum(i["tokens"] for i in d["items"] if i["status"] != "skipped")


@pytest.mark.unit
def test_markdown_lists_admitted_then_skipped(tree, sparse_index, no_global):
    src = MemorySource(tree, sparse_index, embedder=None, global_guide=no_global)
    w = assemble(TASK, src, budget=700, reserve=200, now=NOW)
    md = w.to_markdown()
    assert md.index("## Context given to the model") < md.index("## Skipped")
    assert w.to_prompt() in md
    for i in w.skipped():
        assert i.source in md.split("## Skipped", 1)[1]


@pytest.mark.unit
def test_bad_budget_rejected(tree, no_global):
    src = MemorySource(tree, None, embedder=None, global_guide=no_global)
    for budget, reserve in ((0, 0), (100, 100), (100, -1)):
        with pytest.raises(ValueError):
            assemble(TASK, src, budget=budget, reserve=reserve)


@pytest.mark.unit
def test_cli_context(tree, sparse_index, tmp_path):
    env = dict(os.environ, BRAINFS_EMBEDDER="none", BRAINFS_CONFIG="/dev/null",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "none.md"))
    base = [sys.executable, "-m", "brainfs.front.cli", "context"]
    r = subprocess.run([*base, TASK, "--dir", str(tree), "--index", str(sparse_index.db_path),
                        "--budget", "1500", "--reserve", "300", "--json"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["mode"] == "sparse" and d["used"] <= 1200 and d["items"]
    html_out = tmp_path / "c.html"
    r = subprocess.run([*base, TASK, "--dir", str(tree), "--index", str(sparse_index.db_path),
                        "--html", str(html_out)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and html_out.read_text().startswith("<!DOCTYPE html>")
    for bad in ([TASK], [TASK, "--dir", str(tmp_path / "missing")],
                [TASK, "--dir", str(tree), "--budget", "100", "--reserve", "100"],
                ["  ", "--dir", str(tree)]):
        r = subprocess.run([*base, *bad], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("brainfs: error: "), r.stderr
