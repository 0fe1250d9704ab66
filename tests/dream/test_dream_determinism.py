"""A rerun over the same input writes the same bytes — in another process too, whatever
Python's hash seed (dream's state, summaries and pages must not depend on set order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

#: Thirty sentences of equal worth: each has one word said once, one said twice, one three
#: times, one five times — the same score, summed in whatever order a set gives.
WORDS = ([f"alpha{chr(97 + i)}{chr(97 + j)}" for i in range(6) for j in range(5)],
         [f"bravo{chr(97 + i)}" for i in range(15)], [f"charlie{chr(97 + i)}" for i in range(10)],
         [f"delta{chr(97 + i)}" for i in range(6)])
TIES = "---\nsession: s1\ndate: 2026-01-05\nparticipants: [Mara]\n---\n\n" + "\n\n".join(
    f"[D1:{k + 1}] Mara: the {WORDS[0][k]} {WORDS[1][k % 15]} {WORDS[2][k % 10]} {WORDS[3][k % 6]} now."
    for k in range(30)) + "\n"
PEOPLE = """---
session: s2
date: 2026-01-09
participants: [Mara, Assistant]
---

[D2:1] Mara: I'm Mara Lind. I work at Sora City Lab and my manager is Jonas Berg.

[D2:2] Assistant: Noted, Mara.

[D2:3] Mara: Jonas Berg and Priya Nair met in Kyoto on Friday about the Baltic Surge Atlas.

[D2:4] Mara: Priya Nair leads the Baltic Surge Atlas; the QC spike threshold is 40 cm.
"""

RUN = """
import hashlib, json, sys, datetime as dt
from brainfs.dream.core import run_local
res = run_local(sys.argv[1], None, settings={"extractor": "rules"},
                now=dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc))
print(json.dumps({p: hashlib.md5(t.encode()).hexdigest() for p, t in sorted(res.staged.items())}))
"""


def test_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    for sid, text in (("s1", TIES), ("s2", PEOPLE)):
        (tmp_path / "sessions" / sid).mkdir(parents=True)
        (tmp_path / "sessions" / sid / "transcript.md").write_text(text)
    outs = []
    for seed in ("1", "10", "12", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        got = subprocess.run([sys.executable, "-c", RUN, str(tmp_path)], env=env, check=True,
                             capture_output=True, text=True, timeout=120)
        outs.append(json.loads(got.stdout.strip().splitlines()[-1]))
    assert "sessions/s1/summary.md" in outs[0] and "knowledge/mara-lind.md" in outs[0]
    for seed_out in outs[1:]:
        assert seed_out == outs[0], {p for p in outs[0] if seed_out.get(p) != outs[0][p]}
