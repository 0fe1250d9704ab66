"""``brainfs eval locomo`` reports the answer measure (issue 12): the ``answers`` block per
retriever in ``--json``, its budget flag, each question's outcome, and a line of text."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from brainfs.tools.locomo import answer_scored, read_samples
from helpers import LOCOMO_MINI as MINI

pytestmark = pytest.mark.model

CLI = [sys.executable, "-m", "brainfs.front.cli", "eval", "locomo", str(MINI), "--no-wiki"]


def test_eval_locomo_reports_answers_in_the_budget() -> None:
    scored = [i for i, q in enumerate(read_samples(MINI)[0]["qa"]) if answer_scored(q)]
    shares = {}
    for budget in (20, 1000):
        r = subprocess.run([*CLI, "--json", "--per-question", "--answer-budget", str(budget)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)
        for name in ("bm25", "dense", "hybrid"):
            a = res["retrievers"][name]["answers"]
            assert a["budget_tokens"] == budget and a["k"] == 40
            assert [d["qa"] for d in a["detail"]] == scored  # categories 1, 2, 4; no yes/no
            assert a["questions"] == len(scored)
            assert a["share"] == round(sum(d["found"] for d in a["detail"]) / len(scored), 4)
            assert sum(c["questions"] for c in a["by_category"].values()) == len(scored)
            shares[budget, name] = a["share"]
    for name in ("bm25", "dense", "hybrid"):
        assert shares[20, name] < shares[1000, name], shares  # the budget is what is read
    r = subprocess.run(CLI, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "hybrid       answer in the first 1,000 tokens of recall: " in r.stdout, r.stdout


def test_eval_locomo_reports_answers_in_a_context_window() -> None:
    """The same measure through the window ``brainfs context`` makes (issue 28, item 7):
    ``answers_context`` for hybrid recall (what context searches with), its budget the
    window's."""
    scored = [i for i, q in enumerate(read_samples(MINI)[0]["qa"]) if answer_scored(q)]
    shares = {}
    for budget in (60, 1000):
        r = subprocess.run([*CLI, "--json", "--per-question", "--answer-budget", str(budget)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)
        a = res["retrievers"]["hybrid"]["answers_context"]
        assert a["budget_tokens"] == budget
        assert [d["qa"] for d in a["detail"]] == scored and a["questions"] == len(scored)
        assert "answers_context" not in res["retrievers"]["bm25"]
        shares[budget] = a["share"]
    assert shares[60] < shares[1000], shares
    r = subprocess.run(CLI, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "hybrid       answer in a 1,000-token context window: " in r.stdout, r.stdout
