"""Dream on sessions as `brainfs import-sessions` writes them (cache/FORMAT.md): tool-call
turns, a frontmatter title, a session without a date, a forgotten phrase in a title, and a
speaker with nothing to say. Each case was found by running dream on imported sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.cache.search import forget
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream import redact
from brainfs.dream.core import run_local
from dream_helpers import write

pytestmark = pytest.mark.unit

CODING = """---
session: 2026-03-02-tidepool-flaky-retry
date: '2026-03-02T09:00:00Z'
participants:
- User
- Claude
title: 'Tidepool sensor ingest: flaky retry test'
source: claude-code 5f0c2a9e
---

[D1:1] User: I'm Mara Lind. The retry test in tidepool flakes about one run in ten. Can you find why?

[D1:2] Claude: I'll look at the repository layout first.

[D1:3] Claude: [tool: Bash] ls -la /srv/tidepool/ingest/retry workers config (312 lines of output: total 48 drwxr-xr-x Mara)

[D1:4] Claude: [tool: Read] /src/ingest/retry_cfg.py (error: File does not exist in the Tidepool repository.)

[D1:5] Claude: The jitter uses time.time() as its seed, so two workers retry in lockstep. Seeding from the worker id fixes the flake.

[D1:6] User: Mara here again: I work at Sora City Lab and Tidepool is my project with Jonas Berg.

[D1:7] Claude: [tool: Bash] pytest tests/test_retry.py -q (5 lines of output: 12 passed in 3.1 seconds for Tidepool)
"""

UNDATED = """---
session: 2026-03-03-undated
participants: [User, Claude]
title: 'Tidepool follow-up'
---

[D1:1] User: Mara again. Jonas Berg from Sora City Lab asked about Tidepool yesterday.

[D1:2] Claude: Noted, Mara. I will keep the retry notes for Jonas Berg.
"""

#: A speaker who says nothing dream keeps as a fact (no first person, no name), beside a
#: "User" who never says their name: a standup imported from text, as in
#: tests/cache/sessions/test_import_sessions.py, and a chat export.
STANDUP = """---
session: 2026-01-20-standup
date: '2026-01-20T00:00:00Z'
participants:
- Mara
- Tomas
title: Standup with Tomas
---

[D1:1] Mara: Finished the tide-gauge calibration for the harbour site.
The drift was 3 mm per week.

[D1:2] Tomas: Good. I start on the kelp survey tomorrow.

[D1:3] Mara: Note: the boat is booked for Thursday.
"""

SOURDOUGH = """---
session: 2026-03-02-sourdough
date: '2026-03-02T10:00:10Z'
participants:
- User
- ChatGPT
title: Sourdough starter schedule
---

[D1:1] User: My starter Bubbles doubles in 6 hours at 24 C. When should I feed it?

[D1:2] ChatGPT: Feed Bubbles every 12 hours at a 1:5:5 ratio.

[D1:3] ChatGPT: [tool: python] rise = [1.0, 1.4, 1.9, 2.1] (1 line of output: 2.1)

[D1:4] User: Bubbles smells like acetone after the trip to Bergen with Tomas Vik.
"""


def test_tool_call_turns_are_never_summary_sentences(tmp_path: Path) -> None:
    root = write(tmp_path / "m", {"sessions/2026-03-02-tidepool-flaky-retry/transcript.md": CODING})
    res = run_local(root)
    summary = res.staged["sessions/2026-03-02-tidepool-flaky-retry/summary.md"]
    _meta, body, _bad = split_frontmatter(summary)
    bullets = [ln for ln in body.splitlines() if ln.startswith("- ")]
    assert bullets, summary
    assert not any("[tool:" in b for b in bullets), summary
    assert any("jitter" in b or "Sora City Lab" in b for b in bullets), summary


def test_the_transcripts_title_is_the_sessions_title(tmp_path: Path) -> None:
    root = write(tmp_path / "m", {"sessions/2026-03-02-tidepool-flaky-retry/transcript.md": CODING})
    res = run_local(root)
    meta = split_frontmatter(res.staged["sessions/2026-03-02-tidepool-flaky-retry/summary.md"])[0]
    assert meta["title"] == "Tidepool sensor ingest: flaky retry test"
    assert ("- 2026-03-02-tidepool-flaky-retry | 2026-03-02 | Tidepool sensor ingest: flaky retry test"
            in res.staged["sessions/index.md"].splitlines())


def test_a_missing_date_is_the_transcripts_problem_not_the_summarys(tmp_path: Path) -> None:
    root = write(tmp_path / "m", {"sessions/2026-03-02-tidepool-flaky-retry/transcript.md": CODING,
                                  "sessions/2026-03-03-undated/transcript.md": UNDATED})
    res = run_local(root)
    assert not [p for p in res.problems if p.path.endswith("summary.md")], res.problems
    (pr,) = [p for p in res.problems if p.path == "sessions/2026-03-03-undated/transcript.md"]
    assert pr.code == "transcript-date" and "date" in pr.message and "FORMAT.md" in pr.message
    assert pr.severity == "warning"
    # not summarised, still listed, and its facts still reach the pages
    assert "sessions/2026-03-03-undated/summary.md" not in res.staged
    assert "- 2026-03-03-undated | undated | Tidepool follow-up" in res.staged["sessions/index.md"]
    jonas = res.staged["knowledge/jonas-berg.md"]
    assert "sessions/2026-03-03-undated/transcript.md#D1:1" in jonas


def test_every_page_has_updated_and_sources_and_index_links_resolve(tmp_path: Path) -> None:
    root = write(tmp_path / "m", {"sessions/2026-01-20-standup/transcript.md": STANDUP,
                                  "sessions/2026-03-02-sourdough/transcript.md": SOURDOUGH})
    res = run_local(root)
    assert not [p for p in res.problems if p.severity == "error"], res.problems
    pages = {p: t for p, t in res.staged.items()
             if p.startswith("knowledge/") and p.endswith(".md") and p != "knowledge/INDEX.md"}
    assert pages
    for p, text in pages.items():
        meta = split_frontmatter(text)[0]
        assert meta["updated"] and meta["sources"], (p, text)
    index = res.staged["knowledge/INDEX.md"]
    for line in index.splitlines():
        if line.startswith("- [["):
            slug = line[4:line.index("]]")]
            assert f"knowledge/{slug}.md" in pages, (slug, index)


def test_forget_redacts_a_transcripts_title_and_uses_the_caches_redaction(tmp_path: Path) -> None:
    root = write(tmp_path / "m", {"sessions/2026-03-02-tidepool-flaky-retry/transcript.md": CODING,
                                  "forget/flaky.md": "flaky retry\n"})
    res = run_local(root, apply=True)
    text = (root / "sessions/2026-03-02-tidepool-flaky-retry/transcript.md").read_text()
    meta, body, _bad = split_frontmatter(text)
    assert "flaky retry" not in text.lower(), text
    assert meta["title"] == "Tidepool sensor ingest: [forgotten] test"
    assert meta["date"] and meta["participants"] == ["User", "Claude"]  # the rest of the frontmatter as it was
    assert "[D1:5] Claude:" in body
    # one redaction for the index, the importer and dream
    assert redact.MARK is forget.MARK and redact.phrase_re is forget.phrase_re
    summary = res.staged["sessions/2026-03-02-tidepool-flaky-retry/summary.md"]
    assert "flaky retry" not in summary.lower()


def test_a_redacted_plain_title_stays_a_yaml_string() -> None:
    text = "---\nsession: s\ndate: 2026-01-20\ntitle: Standup with Tomas\n---\n\n[D1:1] Mara: Standup done.\n"
    out = redact.redact_file(text, ["standup"])
    meta, body, bad = split_frontmatter(out)
    assert not bad and meta["title"] == "[forgotten] with Tomas" and meta["session"] == "s"
    assert body.strip() == "[D1:1] Mara: [forgotten] done."


def test_a_value_stops_where_the_next_clause_starts(tmp_path: Path) -> None:
    """'I work at Sora City Lab and Tidepool is my project': the employer is Sora City Lab
    (a name with 'and' inside, 'Procter and Gamble', stays whole)."""
    from brainfs.dream import relations as R

    got = {(r.attr, r.value) for r in R.extract("I work at Sora City Lab and Tidepool is my project.")}
    assert ("employer", "Sora City Lab") in got and not any("Tidepool" in v for _a, v in got)
    assert ("employer", "Procter and Gamble") in {(r.attr, r.value) for r in R.extract("I work at Procter and Gamble.")}
    root = write(tmp_path / "m", {"sessions/2026-03-02-tidepool-flaky-retry/transcript.md": CODING})
    page = run_local(root).staged["knowledge/mara-lind.md"]
    assert "- Mara Lind works at Sora City Lab (since 2 March 2026) [cite:1]" in page, page
