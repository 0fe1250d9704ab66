"""Named entities for dream: the real spaCy model on small fixtures, and the rule fallback.

The model is installed by the ``dream`` extra (``.ci/setup``); a missing model fails these
tests rather than skipping them."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from brainfs.dream import entities as E
from brainfs.dream.core import run_local

DAY = "2023-05-08"  # a Monday
SPEAKERS = {"Caroline", "Melanie"}


@pytest.fixture(autouse=True)
def fresh_extractors():
    E._reset_for_tests()
    yield
    E._reset_for_tests()


def by_text(ents: list[E.Entity]) -> dict[str, E.Entity]:
    return {e.text: e for e in ents}


@pytest.mark.model
def test_spacy_types_people_orgs_places_and_resolves_dates() -> None:
    ex = E.get_extractor("spacy")
    assert isinstance(ex, E.SpacyExtractor) and ex.name.startswith("spacy-core_web_sm")
    sents = [
        "Yesterday I met Amy Ellis Nutt at Stanford University.",
        "We drove to Paris with Oliver last weekend.",
        "That was amazing.",
        "Yeah, Melanie loved it.",
        "That's so sweet, Melanie!",
    ]
    out = ex.extract(sents, DAY, SPEAKERS)
    s0, s1 = by_text(out[0]), by_text(out[1])
    assert s0["Amy Ellis Nutt"].type == "person" and s0["Amy Ellis Nutt"].label == "PERSON"
    assert s0["Stanford University"].type == "organization"
    assert s0["Yesterday"].type == "date" and s0["Yesterday"].resolved == "2023-05-07"
    assert s1["Paris"].type == "place" and s1["Paris"].label == "GPE"
    assert s1["Oliver"].type == "person"
    assert s1["last weekend"].resolved == "weekend of 2023-05-06"
    # chat openers are not subjects; a speaker is a person whatever the model labels it
    assert out[2] == []
    names = {e.text for ents in out[3:] for e in ents}
    assert names == {"Melanie"}, names
    assert all(e.type == "person" for ents in out[3:] for e in ents)


@pytest.mark.model
def test_spacy_trims_spans_and_drops_interjections() -> None:
    ex = E.get_extractor("spacy")
    assert E._trim("Bye Caroline") == "Caroline"
    assert E._trim("the Grand Canyon") == "Grand Canyon"
    assert E._trim("Ed Sheeran's") == "Ed Sheeran"
    assert E._trim("the kids & work") is None and E._trim("Awww") is None
    out = ex.extract(["Woohoo! Awww, that's so cute.", "Glad you liked it."], DAY, SPEAKERS)
    assert out == [[], []]


TALK = """---
session: s1
date: 2023-05-08T10:00:00
participants: ["Caroline", "Melanie"]
---

[D1:1] Caroline: That's great news! I joined the Rainbow Youth Center in Boston last week.

[D1:2] Melanie: Yeah, that's wonderful. I visited Boston with my kids in spring and loved it.

[D1:3] Caroline: That's so sweet. The Rainbow Youth Center runs a mentoring program for teens.

[D1:4] Melanie: Yeah, I read about the Rainbow Youth Center in the newspaper yesterday.
"""


@pytest.mark.model
def test_dream_with_spacy_makes_pages_for_entities_not_fillers(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "sessions/s1").mkdir(parents=True)
    (root / "sessions/s1/transcript.md").write_text(TALK)
    res = run_local(root, None, settings={"extractor": "spacy"})
    pages = {p for p in res.staged if p.startswith("knowledge/")}
    assert {"knowledge/rainbow-youth-center.md", "knowledge/boston.md"} <= pages, pages
    assert not pages & {"knowledge/that.md", "knowledge/yeah.md"}
    assert "type: organization" in res.staged["knowledge/rainbow-youth-center.md"]
    assert "type: place" in res.staged["knowledge/boston.md"]
    assert res.state.extractor.startswith(E.get_extractor("spacy").name + "+")
    # another extractor re-extracts every session (state is per extractor)
    # (the whole staged tree: a page missing from the tree would read as deleted by hand)
    for path, text in res.staged.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    again = run_local(root, None, settings={"extractor": "spacy"})
    assert again.nothing_new
    rules = run_local(root, None, settings={"extractor": "rules"})
    assert rules.stats["sessions_read"] == 1 and rules.state.extractor.startswith("rules-v1+")


@pytest.mark.unit
def test_rules_fallback_when_spacy_is_missing_is_logged_once(monkeypatch, caplog,
                                                             tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` raises ImportError
    with caplog.at_level(logging.WARNING, logger="brainfs.dream.entities"):
        ex = E.get_extractor("auto")
        assert E.get_extractor("auto") is ex
    assert isinstance(ex, E.RuleExtractor)
    warnings = [r for r in caplog.records if "fall back to capitalisation rules" in r.getMessage()]
    assert len(warnings) == 1 and "ModuleNotFoundError" in warnings[0].getMessage()
    with pytest.raises(RuntimeError, match="spaCy NER unavailable"):
        E.get_extractor("spacy")
    # the fallback still does the job: typed subjects, a "That's" opener is no subject
    out = ex.extract(["I volunteer at the Kyoto Animal Shelter with Ana.", "That's great!",
                      "I go to Kyoto yesterday."], DAY, {"Ana", "Mara"})
    assert by_text(out[0])["Kyoto Animal Shelter"].type == "organization"
    assert by_text(out[0])["Ana"].type == "person"
    assert out[1] == []
    assert by_text(out[2])["yesterday"].resolved == "2023-05-07"
    root = tmp_path / "tree"
    (root / "sessions/s1").mkdir(parents=True)
    (root / "sessions/s1/transcript.md").write_text(TALK)
    res = run_local(root, None)
    assert res.state.extractor.startswith("rules-v1+")
    assert "knowledge/that.md" not in res.staged and "knowledge/boston.md" in res.staged


@pytest.mark.unit
def test_missing_model_package_falls_back_too(monkeypatch, caplog) -> None:
    monkeypatch.setattr(E, "SPACY_MODEL", "brainfs_no_such_spacy_model")
    with caplog.at_level(logging.WARNING, logger="brainfs.dream.entities"):
        assert isinstance(E.get_extractor("auto"), E.RuleExtractor)
    assert any("OSError" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError):
        E.get_extractor("llm")
