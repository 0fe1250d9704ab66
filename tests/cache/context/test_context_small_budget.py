"""Small windows through ``brainfs context``: strict rules and the task's own evidence first.

The sample persona's memory (``brainfs sample``: a GUIDE of about 400 tokens, four strict
rules, 61 sessions) is indexed for real (FTS5; ``BRAINFS_EMBEDDER=none`` keeps the test to
seconds) and the CLI is asked for windows of 800 and 1,500 tokens, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brainfs.cache.search.index import SearchIndex
from brainfs.tools.sample import generate

TASK = "draft the email to the Blue Heron Foundation about the caption latency study"
TASK_LANES = ("cards", "thread", "files")

#: A workflow the persona describes once, in a session of its own.
WORKFLOW = """---
session: 2026-05-20-funder-report-routine
date: 2026-05-20T09:00:00+00:00
participants: [Nadia, Assistant]
---
# Funder report routine

[D99:1] Nadia: Here is how I send a funder report: first export the latency figures from the analysis notebook as PDF, then write a one-page summary in Overleaf, then ask Priya to check the numbers, and only then put the draft email to the funder in my drafts folder.

[D99:2] Assistant: Noted: export figures, one-page summary, Priya checks, then a draft email.
"""


#: The same workflow amended in passing a week later, and the procedure page dream renders
#: from both (dream/procedures.py: the steps numbered in their current order, each cited).
AMENDED = """---
session: 2026-05-27-funder-report-check
date: 2026-05-27T09:00:00+00:00
participants: [Nadia, Assistant]
---
# Funder report check

[D100:1] Nadia: One change to the funder report routine: the alt text check happens between the one-page summary and Priya's check.

[D100:2] Assistant: Understood, the alt text check now comes after the summary.
"""
PROCEDURE = """---
title: Funder report routine
type: procedure
aliases: []
updated: '2026-05-27'
sources:
- sessions/2026-05-20-funder-report-routine/transcript.md#D99:1
- sessions/2026-05-27-funder-report-check/transcript.md#D100:1
generator: deterministic-v3
---

# Funder report routine

Funder report routine is a procedure, as Nadia Rahman described it on 20 May 2026: 5 steps, in their current order.

1. Export the latency figures from the analysis notebook as PDF [cite:1]
2. Write a one-page summary in Overleaf [cite:1]
3. The alt text check [cite:2]
4. Ask Priya to check the numbers [cite:1]
5. Put the draft email to the funder in my drafts folder [cite:1]

## Timeline

- 2026-05-20 — Told: "Here is how I send a funder report: first export the latency figures from the analysis notebook as PDF, then write a one-page summary in Overleaf, then ask Priya to check the numbers, and only then put the draft email to the funder in my drafts folder." [cite:1]
- 2026-05-27 — Amended: "the alt text check happens between the one-page summary and Priya's check." [cite:2]
"""
STEPS = ["1. Export the latency figures", "2. Write a one-page summary", "3. The alt text check",
         "4. Ask Priya to check the numbers", "5. Put the draft email to the funder"]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("persona") / "memory"
    generate(root, 200, 7)
    wf = root / "sessions/2026-05-20-funder-report-routine/transcript.md"
    wf.parent.mkdir(parents=True)
    wf.write_text(WORKFLOW, encoding="utf-8")
    am = root / "sessions/2026-05-27-funder-report-check/transcript.md"
    am.parent.mkdir(parents=True)
    am.write_text(AMENDED, encoding="utf-8")
    (root / "knowledge/funder-report-routine.md").write_text(PROCEDURE, encoding="utf-8")
    # a page written since the last dream: INDEX.md does not list it yet
    (root / "knowledge/okabe-ito-palette.md").write_text(
        "---\ntitle: Okabe-Ito palette\ntype: topic\nupdated: 2026-05-30\n---\n"
        "# Okabe-Ito palette\n\nThe colour-blind-safe palette Nadia uses in every chart.\n",
        encoding="utf-8")
    db = tmp_path_factory.mktemp("ix") / "index.sqlite"
    ix = SearchIndex(db)
    files = [(p.relative_to(root).as_posix(), str(p.stat().st_mtime_ns))
             for p in sorted(root.rglob("*.md"))]
    ix.refresh(files, lambda rel: (root / rel).read_bytes(), None)
    ix.close()
    return root, db


def context(memory: tuple[Path, Path], task: str, budget: int, tmp_path: Path,
            as_json: bool = True) -> Any:
    root, db = memory
    env = dict(os.environ, BRAINFS_EMBEDDER="none", BRAINFS_CONFIG="/dev/null",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "none.md"))
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "context", task, "--dir", str(root),
                        "--index", str(db), "--budget", str(budget)] + (["--json"] if as_json else []),
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout) if as_json else r.stdout


def test_800_tokens_hold_every_strict_rule_and_three_task_items(memory, tmp_path):
    root, _db = memory
    w = context(memory, TASK, 800, tmp_path)
    rules = sorted(p.relative_to(root).as_posix() for p in (root / "rules").glob("*.md"))
    assert len(rules) == 4
    by_src = {i["source"]: i for i in w["items"]}
    for r in rules:
        assert by_src[r]["status"] == "admitted", by_src[r]["reason"]  # whole, never cut
    task_items = [i for i in w["items"] if i["lane"] in TASK_LANES and i["status"] != "skipped"]
    assert len(task_items) >= 3, [(i["source"], i["reason"]) for i in w["items"]]
    for i in task_items:
        assert i["reason"].startswith(i["lane"]) and "score" in i["reason"] or "thread" in i["reason"]
    assert w["used"] <= w["budget"] - w["reserve"]
    guide = by_src["GUIDE.md"]
    # the guide's prose gave way to the task, never to the point of a rule being dropped
    assert guide["status"] == "skipped" or guide["tokens"] < guide["full_tokens"]
    # the window says why, lane by lane, and how the priority classes fell
    assert w["priorities"].startswith("strict rules first, whole: 4 of 4 kept"), w["priorities"]
    assert f"{len(task_items)} items" in w["priorities"]
    assert w["lanes"]["guide"]["why"].startswith("strict rules first, whole")
    if guide["status"] == "skipped":
        assert "held back for the task's share" in w["lanes"]["guide"]["why"]
    shown = context(memory, TASK, 800, tmp_path, as_json=False)
    assert "_Priorities: strict rules first, whole: 4 of 4 kept; the task's evidence:" in shown
    assert "| lane | tokens | admitted | truncated | skipped | why |" in shown
    assert "| guide | " in shown and "| strict rules first, whole" in shown


def test_1500_tokens_cut_the_guide_to_its_part_about_the_task(memory, tmp_path):
    w = context(memory, TASK, 1500, tmp_path)
    guide = next(i for i in w["items"] if i["source"] == "GUIDE.md")
    assert guide["status"] == "truncated", guide["reason"]
    assert "part about the task" in guide["reason"]
    # the lines about email and drafts, under their heading; the diet is not about the task
    assert "## Email handling" not in guide["text"]  # headings are the guide's own: "## Preferences"
    assert "drafts for her review" in guide["text"] and "## Preferences" in guide["text"]
    assert "vegetarian" not in guide["text"]
    task_items = [i for i in w["items"] if i["lane"] in TASK_LANES and i["status"] != "skipped"]
    assert len(task_items) >= 4


def test_1500_tokens_hold_a_workflow_described_once(memory, tmp_path):
    # What exists today: the turn that describes it (procedure pages are dream's to write).
    w = context(memory, "send the funder report for the caption latency study", 1500, tmp_path)
    got = [i for i in w["items"] if i["status"] != "skipped"
           and "2026-05-20-funder-report-routine" in i["source"]]
    assert any("first export the latency figures" in i["text"] for i in got), \
        [(i["source"], i["status"], i["reason"]) for i in w["items"]][:20]


def test_1500_tokens_hold_the_procedure_as_it_stands(memory, tmp_path):
    # The procedure page dream keeps: every step, in its amended order, though no step
    # shares a word with the task and the turn that first told it is recalled too.
    w = context(memory, "what are the steps of my funder report routine", 1500, tmp_path)
    page = next(i for i in w["items"] if i["source"] == "knowledge/funder-report-routine.md")
    assert page["status"] == "admitted", page["reason"]
    assert "5 steps of the procedure, in order" in page["reason"]
    at = [page["text"].find(s) for s in STEPS]
    assert -1 not in at and at == sorted(at), page["text"]


def thread_head(w: dict) -> dict | None:
    """The session summary that opens the thread lane, if any."""
    return next((i for i in w["items"] if i["lane"] == "thread" and i["source"].endswith("/summary.md")
                 and i["reason"].startswith("thread: summary")), None)


def test_thread_is_the_session_the_task_continues_or_nothing(memory, tmp_path):
    # A session whose turn names the funder and the study in passing ("Tactile Transit Maps
    # budget review") is no thread of an email to the funder: whatever opens the lane is a
    # session whose name shares a word with the task or whose summary half of its words.
    w = context(memory, TASK, 1500, tmp_path)
    head = thread_head(w)
    if head is not None:
        sid = head["source"].split("/")[1]
        want = {"email", "blue", "heron", "foundation", "caption", "latency", "study"}
        body = (Path(memory[0]) / head["source"]).read_text(encoding="utf-8").lower()
        assert (want & set(sid.split("-")) or 2 * sum(x in body for x in want) >= len(want)), head
    w = context(memory, "prepare the SignBridge poster", 1500, tmp_path)
    newest = w["scope"]["newest_session"]["id"]
    assert newest == "2026-05-28-easyread-clinic-field-notes"
    head = thread_head(w)
    assert head is not None, [(i["source"], i["reason"]) for i in w["items"] if i["lane"] == "thread"]
    # the session the task continues, not the newest, and its recalled passages follow
    assert head["source"] == "sessions/2026-03-03-signbridge-poster-prep/summary.md", head["reason"]
    assert head["status"] != "skipped", head["reason"]  # the lane's first item: cut, not left out
    assert "the task continues" in head["reason"] and "signbridge, poster" in head["reason"]
    assert any(i["source"].startswith("sessions/2026-03-03-signbridge-poster-prep/") and i is not head
               for i in w["items"])
    # a task nothing in the memory is about gets no thread summary at all
    w = context(memory, "zyxwv qutrb", 1500, tmp_path)
    assert thread_head(w) is None


def test_1500_tokens_cut_the_index_to_its_entries_about_the_task(memory, tmp_path):
    w = context(memory, TASK, 1500, tmp_path)
    index = next(i for i in w["items"] if i["source"] == "knowledge/INDEX.md")
    assert index["status"] == "truncated", index["reason"]
    assert "part about the task" in index["reason"]
    # the funder and its grant manager, under their headings; not the first project listed
    assert "[[blue-heron-foundation]]" in index["text"] and "[[elena-petrova]]" in index["text"]
    assert "## Organizations" in index["text"]
    assert "[[haptic-crosswalk]]" not in index["text"], index["text"]


def test_scope_counts_the_pages_there_are(memory, tmp_path):
    root, _db = memory
    pages = [p for p in (root / "knowledge").glob("*.md") if p.name != "INDEX.md"]
    w = context(memory, TASK, 800, tmp_path)
    assert w["scope"]["knowledge_pages"] == len(pages)
    assert f"{len(pages)} knowledge pages" in w["items"][0]["text"]


def test_a_long_list_recalled_in_several_chunks_is_not_its_own_duplicate(tmp_path):
    """A page whose list runs over several index chunks (one anchor, other lines in each):
    the chunks after the first are more of the list, not duplicates of the first, so the
    window holds the list the task asks for rather than the page's opening line alone."""
    root = tmp_path / "memory"
    (root / "knowledge").mkdir(parents=True)
    items = "\n".join(f"{i}. Camping gear item {i}: spare batch {i} of tent pegs and rope"
                      for i in range(1, 61))
    (root / "knowledge/camping-gear-list.md").write_text(
        "---\ntitle: Camping gear list\ntype: topic\n---\n# Camping gear list\n\n"
        f"The camping gear list Nadia keeps for the Awaji trip.\n\n{items}\n", encoding="utf-8")
    db = tmp_path / "index.sqlite"
    ix = SearchIndex(db)
    ix.refresh([("knowledge/camping-gear-list.md", "1")],
               lambda rel: (root / rel).read_bytes(), None)
    ix.close()
    w = context((root, db), "what camping gear should I pack for Awaji", 4000, tmp_path)
    got = [i for i in w["items"] if i["source"].startswith("knowledge/camping-gear-list.md")]
    assert len(got) >= 3, [(i["source"], i["status"], i["reason"]) for i in w["items"]]
    assert not any("duplicate of" in i["reason"] for i in got), [i["reason"] for i in got]
    kept = "\n".join(i["text"] for i in got if i["status"] != "skipped")
    assert "item 60:" in kept and "item 30:" in kept, kept


def test_a_numbered_line_of_a_page_that_is_no_procedure_is_no_step(tmp_path):
    """Only a procedure page's numbered lines are steps that come whole whatever the task:
    a numbered hand line in a person's page is one of its lines, kept when it is about the
    task, not a 'step of the procedure' that crowds out the lines that are."""
    root = tmp_path / "memory"
    (root / "knowledge").mkdir(parents=True)
    (root / "sessions/s1").mkdir(parents=True)
    (root / "sessions/s1/transcript.md").write_text(
        "---\nsession: s1\ndate: 2026-05-01T09:00:00Z\nparticipants: [Mara]\n---\n\n"
        "[D1:1] Mara: I moved to Kyoto last week.\n", encoding="utf-8")
    (root / "knowledge/mara.md").write_text(
        "---\ntitle: Mara\ntype: person\nsources:\n- sessions/s1/transcript.md#D1:1\n"
        "- knowledge/mara.md#hand-0123456789ab\ngenerator: deterministic-v3\n---\n# Mara\n\n"
        "Mara is the person whose memory this is.\n\n- Mara lives in Kyoto [cite:1]\n"
        "- Mara keeps a sketchbook [cite:1]\n\n"
        "1. The dentist appointment is every March [cite:2]\n", encoding="utf-8")
    db = tmp_path / "index.sqlite"
    ix = SearchIndex(db)
    ix.refresh([(p, "1") for p in ("knowledge/mara.md", "sessions/s1/transcript.md")],
               lambda rel: (root / rel).read_bytes(), None)
    ix.close()
    w = context((root, db), "where does Mara live now", 2000, tmp_path)
    page = next(i for i in w["items"] if i["source"].startswith("knowledge/mara.md"))
    assert "step" not in page["reason"] and "dentist" not in page["text"], (page["reason"], page["text"])
    assert "Kyoto" in page["text"]
