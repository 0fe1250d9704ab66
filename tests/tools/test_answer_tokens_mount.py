"""The answer measure of ``brainfs eval locomo`` agrees with the same measure taken through
a real mount's ``.recall/<question> [k=40].json`` (issue 12).

The LoCoMo-format fixture (``tests/data/locomo-mini.json``) becomes a memory in a bucket on
``rclone serve s3``: its transcripts alone (the eval's ``hybrid``), or its transcripts and
the wiki dream writes from them (``hybrid+wiki``). ``brainfs index`` builds the search index
with the real model; a real FUSE mount answers each question; the cards' texts are read
within the budget and scored with the eval's own rule. Small budgets make the outcome
depend on recall's order and texts (at 1,000 tokens this fixture's whole conversation fits).
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.tools.locomo import (ANSWER_K, answer_found, answer_scored, conversation_tree,
                                  evaluate, read_samples, read_within, wiki_retriever)
from brainfs.cache.search.localindex import build_index
from brainfs.tools.locomo_wiki import build_wiki
from brainfs.fs.recall import with_k

from helpers import LOCOMO_MINI as MINI, upload_tree, write_tree

pytestmark = [pytest.mark.mount, pytest.mark.model]

BUDGETS = (25, 60, 1000)


@pytest.mark.parametrize("arm", ["hybrid", "hybrid+wiki"])
def test_the_measure_through_a_mount_agrees_with_the_eval(arm: str, store: ObjectStore, corpus,
                                                           mounter, tmp_path: Path, embedder) -> None:
    sample = read_samples(MINI)[0]
    tree = conversation_tree(sample)
    files = dict(tree)
    if arm == "hybrid+wiki":
        wiki = build_wiki(tree)
        assert wiki, "dream wrote no page for the fixture"
        files.update(wiki)
    upload_tree(store, write_tree(tmp_path / "src", files))
    build_index(store, tmp_path / "build" / "index.sqlite", embedder)
    # recall's recency is anchored at the current time in a mount: the eval the same
    now = _dt.datetime.now(_dt.timezone.utc)
    evals = {b: evaluate(MINI, retrievers=["hybrid"], embedder=embedder, per_question=True,
                         extra_retrievers={"hybrid+wiki": wiki_retriever(build_wiki)},
                         answer_budget=b, now=now)["retrievers"][arm]["answers"]
             for b in BUDGETS}

    m = mounter(corpus)
    questions = [(i, q) for i, q in enumerate(sample["qa"]) if answer_scored(q)]
    read = {}
    for i, q in questions:
        out = json.loads((m.mountpoint / ".recall" / (with_k(q["question"], ANSWER_K) + ".json"))
                         .read_text())
        assert "error" not in out, out
        assert out["mode"] == "hybrid", out["why"]
        read[i] = [c["text"] for c in out["cards"]]

    for b in BUDGETS:
        mount = {i: answer_found(str(q["answer"]), read_within(read[i], b)) for i, q in questions}
        ev = {d["qa"]: d["found"] for d in evals[b]["detail"]}
        assert ev == mount, f"budget {b}: eval {ev} != mount {mount}"
        assert evals[b]["questions"] == len(questions)
        assert evals[b]["share"] == round(sum(mount.values()) / len(mount), 4)
    # the comparison is not vacuous: the small budgets find some answers and miss others
    shares = [evals[b]["share"] for b in BUDGETS]
    assert 0 < shares[0] < 1 and shares[0] <= shares[1] <= shares[2], shares
