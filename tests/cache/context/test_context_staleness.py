"""Staleness means "likely to change and not confirmed since", not age alone.

Cards of the same age — a birthday, a decision, a plan, a role — are recalled through
``brainfs context --json`` (FTS5 index, as a user runs it on a tree): only the plan and the
role are flagged stale, and the reason says which kind of statement it is.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
from pathlib import Path

from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.staleness import changeable, is_stale

OLD = "2025-01-10"


def card(kind: str, text: str, date: str) -> str:
    return (f"---\ntype: {kind}\nscope: global\nconfidence: 0.9\ncreated: {date}\n"
            f"updated: {date}\n---\n{text}\n")


def test_only_what_is_likely_to_change_goes_stale(tmp_path: Path):
    recent = (_dt.date.today() - _dt.timedelta(days=10)).isoformat()
    tree = {
        "notes/people/birthday.md": card("fact", "Nadia's birthday is on 3 March; she was born in Dhaka.", OLD),
        "notes/work/palette.md": card("decision", "The team chose the Okabe-Ito palette for every chart.", OLD),
        "notes/work/kyoto.md": card("fact", "Nadia plans to present the palette study in Kyoto next month.", OLD),
        "notes/work/lead.md": card("fact", "Omar leads the palette study team at the institute.", OLD),
        "notes/work/kyoto-new.md": card("fact", "Nadia will present the palette study in Kyoto next week.", recent),
        # a turn is a dated record of what was said that day, never stale however it is worded
        "sessions/2025-01-10-palette-call/transcript.md": (
            f"---\nsession: 2025-01-10-palette-call\ndate: {OLD}T09:00:00+00:00\n---\n"
            "# Palette call\n\n[D1:1] Nadia: Omar currently leads the palette study team, and we "
            "will present it in Kyoto next month.\n"),
    }
    root = tmp_path / "memory"
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    db = tmp_path / "index.sqlite"
    ix = SearchIndex(db)
    ix.refresh([(rel, "1") for rel in tree], lambda rel: (root / rel).read_bytes(), None)
    ix.close()
    env = dict(os.environ, BRAINFS_EMBEDDER="none", BRAINFS_CONFIG="/dev/null",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "none.md"))
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "context",
                        "Nadia birthday palette study Kyoto Omar team", "--dir", str(root),
                        "--index", str(db), "--budget", "4000", "--json"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    items = {i["source"].split("#")[0]: i for i in json.loads(r.stdout)["items"]
             if i["source"].startswith("notes/")}
    turns = [i for i in json.loads(r.stdout)["items"] if i["source"].startswith("sessions/")]
    assert turns and not any(i["stale"] or "(stale)" in i["freshness"] or "stale" in i["reason"]
                             for i in turns), turns
    tree = {p: t for p, t in tree.items() if p.startswith("notes/")}
    assert set(items) == set(tree), sorted(items)
    stale = {p for p, i in items.items() if i["stale"]}
    assert stale == {"notes/work/kyoto.md", "notes/work/lead.md"}, stale
    assert "a plan not confirmed in over 180 days" in items["notes/work/kyoto.md"]["reason"]
    assert "a role not confirmed in over 180 days" in items["notes/work/lead.md"]["reason"]
    for p in ("notes/people/birthday.md", "notes/work/palette.md"):
        assert "(stale)" not in items[p]["freshness"] and "stale" not in items[p]["reason"]


def test_changeable_kinds():
    assert changeable("She will move to Berlin in spring.") == "plan"
    assert changeable("The grant report is currently in progress.") == "status"
    assert changeable("Lena works at the Azores office.") == "role"
    assert changeable("Her birthday is on 3 March.") is None
    assert changeable("We decided to use LaTeX.") is None
    assert changeable("She plans to move.", kind="decision") is None
    assert changeable("Omar currently leads the team.", kind="turn") is None  # a dated record
    assert not is_stale("She will move to Berlin.", "fact", 30, 180)
    assert is_stale("She will move to Berlin.", "fact", 400, 180)
    assert not is_stale("She will move to Berlin.", "fact", None, 180)
