"""An incremental run that reuses the last run's verification verdicts (``state.checked``),
each unchanged page's contradictions (``state.contradicted``) and each fact's relations
(``state.relations``) publishes exactly what the same run publishes with every claim
checked and every page and fact read again."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from brainfs.dream.core import run_local
from brainfs.dream.state import STATE_PATH
from brainfs.dream.verify import Verifier

from dream_helpers import S1, S2, S3_, write

pytestmark = pytest.mark.unit

KW = dict(settings={"extractor": "rules"}, now=dt.datetime(2023, 8, 1, tzinfo=dt.timezone.utc))

#: A fourth session that names Mara in full: "Mara" becomes an alias of Mara Lind, which
#: changes the source text verification reads for every turn that says "Mara".
S4 = """---
session: s4
date: 2023-07-10T09:00:00
participants: ["Mara", "Ana"]
---

[D4:1] Mara: I'm Mara Lind, by the way. Max and I walked to Maruyama Park again.

[D4:2] Ana: Sora City Lab opened a second office in Osaka.
"""

#: Ana and Kenji, without Mara: its summary cites no turn that says "Mara".
S5 = """---
session: s5
date: 2023-06-01T09:00:00
participants: ["Ana", "Kenji"]
---

[D5:1] Ana: Kenji, the Osaka workshop on tactile maps starts on Monday.

[D5:2] Kenji: I booked the train to Osaka for the tactile maps workshop.

[D5:3] Kenji: I have two bikes at home.
"""

#: Kenji again: "three bikes" supersedes "two bikes" on his page (a contradiction that
#: the sessions added later leave alone, so the next run reuses it).
S7 = """---
session: s7
date: 2023-06-15T09:00:00
participants: ["Ana", "Kenji"]
---

[D7:1] Kenji: I have three bikes at home.

[D7:2] Ana: Kenji, the Osaka workshop went well.
"""


def _without_reuse_records(root: Path) -> None:
    """The state as a run that kept no verification, contradiction or relation records would
    leave it."""
    p = root / STATE_PATH
    state = json.loads(p.read_text())
    assert state.pop("checked")["files"], "the first run recorded its verifications"
    assert state.pop("contradicted"), "the first run recorded each page's contradictions"
    assert state.pop("relations")["facts"], "the first run recorded each fact's relations"
    p.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")


def _both_ways(before: Path, tmp: Path) -> tuple:
    """The next run over ``before``: with its verification records, and without."""
    cached, fresh = tmp / "cached", tmp / "fresh"
    shutil.copytree(before, cached)
    shutil.copytree(before, fresh)
    _without_reuse_records(fresh)
    return run_local(cached, **KW), run_local(fresh, **KW)


@pytest.mark.parametrize("new", [{"sessions/s3/transcript.md": S3_},
                                 # the user's full name: every page about her names her anew
                                 {"sessions/s3/transcript.md": S3_, "sessions/s4/transcript.md": S4}],
                         ids=["new-session", "new-alias"])
def test_reused_verdicts_publish_the_same_bytes(tmp_path: Path, new: dict[str, str]) -> None:
    root = write(tmp_path / "m", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2,
                                  "sessions/s5/transcript.md": S5, "sessions/s7/transcript.md": S7})
    run_local(root, apply=True, **KW)
    write(root, new)
    cached, fresh = _both_ways(root, tmp_path)
    assert not cached.nothing_new and not fresh.nothing_new
    assert cached.staged == fresh.staged  # every file, the state included
    assert [str(c) for c in cached.changes] == [str(c) for c in fresh.changes]
    assert cached.stats["verify_files_reused"] > 0 and fresh.stats["verify_files_reused"] == 0
    # the pages the new session changed: their other claims are judged as last run
    assert cached.stats["verify_claims_reused"] > 0 and fresh.stats["verify_claims_reused"] == 0
    for k in ("claims", "rejected", "citations", "share_valid_citations", "contradictions"):
        assert cached.stats[k] == fresh.stats[k], k
    assert cached.stats["contradictions"] > 0 and "two bikes" in cached.staged["knowledge/kenji.md"].split(
        "## Superseded")[1]


def test_a_file_citing_a_turn_whose_alias_changed_is_checked_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write(tmp_path / "m", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2,
                                  "sessions/s5/transcript.md": S5})
    run_local(root, apply=True, **KW)
    checked_now: list[str] = []
    real = Verifier.check_file

    def spy(self, path, *a, **k):
        checked_now.append(path)
        return real(self, path, *a, **k)
    monkeypatch.setattr(Verifier, "check_file", spy)
    # nothing about the sessions changed but the corpus's settings: every file is as before
    write(root, {"DREAM.md": "---\nmax_pages: 1999\n---\n"})
    same = run_local(root, apply=True, **KW)
    records = json.loads(same.staged[STATE_PATH])["checked"]["files"]
    assert same.stats["verify_files_reused"] == len(records) > 0 and checked_now == []
    # "Mara" becomes Mara Lind's alias: what cites a turn that says "Mara" is checked again
    # (s1's summary: its keys are the same, its source texts are not), s5's summary is not;
    # and the verdicts stay those of a run that checks everything
    write(root, {"sessions/s4/transcript.md": S4})
    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root)
    _without_reuse_records(fresh_root)
    cached = run_local(root, **KW)
    assert 0 < cached.stats["verify_files_reused"] < len(records)
    again = json.loads(cached.staged[STATE_PATH])["checked"]["files"]
    assert again["sessions/s1/summary.md"] == records["sessions/s1/summary.md"]
    assert "sessions/s1/summary.md" in checked_now and "sessions/s5/summary.md" not in checked_now
    assert run_local(fresh_root, **KW).staged == cached.staged


def test_relations_read_with_other_rules_are_read_again(tmp_path: Path) -> None:
    """The relation records are used (emptied ones change the wiki), and only under the
    rules that made them (relations.py's hash)."""
    root = write(tmp_path / "m", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    first = run_local(root, apply=True, **KW)
    state = json.loads((root / STATE_PATH).read_text())
    state["relations"]["facts"] = {k: [] for k in state["relations"]["facts"]}
    for rules, same in ((state["relations"]["rules"], False), ("other rules", True)):
        state["relations"]["rules"] = rules
        (root / STATE_PATH).write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
        again = run_local(root, force=True, **KW)
        mara = again.staged["knowledge/mara.md"]
        assert (mara == first.staged["knowledge/mara.md"]) == same
        assert ("Mara lives in Kyoto" in mara) == same
