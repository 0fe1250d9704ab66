"""The "answers in 1,000 tokens" scorer of benchmarks/dream_answers.py: what counts as an
answer, which pages a question names, and that a budget cuts what is read."""

from __future__ import annotations

import pytest

from benchmarks.dream_answers import answered, cut, named_pages, read_wiki

pytestmark = pytest.mark.unit

PAGE = """---
title: Caroline
type: person
aliases: [Caro]
updated: '2023-05-08'
sources:
- sessions/s1/transcript.md#D1:3
---
# Caroline

- 2023-05-07 — Caroline went to the LGBTQ support group. [cite:1]
"""
WIKI = {"knowledge/INDEX.md": "# Knowledge index\n\n- [[caroline]] Caroline — the user\n",
        "knowledge/caroline.md": PAGE,
        "knowledge/melanie.md": PAGE.replace("Caroline", "Melanie").replace("Caro]", "Mel]")}
BODY = PAGE.split("---\n")[2]


def test_an_answer_is_all_its_content_words_standing_together() -> None:
    assert answered("7 May 2023", BODY)  # the ISO date reads as a person writes it
    assert answered("the LGBTQ support groups", BODY)  # stopwords dropped, plurals stemmed
    assert not answered("8 May 2023", BODY)
    assert not answered("7 May 2023", "on 7 June " + "x " * 40 + "in May 2023")
    assert not answered("", BODY)


def test_named_pages_by_title_or_alias_in_the_order_named() -> None:
    assert named_pages("When did Melanie and Caroline meet?", WIKI) == [
        "knowledge/melanie.md", "knowledge/caroline.md"]
    assert named_pages("What did Caro say?", WIKI) == ["knowledge/caroline.md"]
    assert named_pages("What happened at the carnival?", WIKI) == []


def test_the_budget_cuts_what_is_read() -> None:
    assert len(cut("x" * 10_000, 1000)) == 4000
    full = read_wiki(["knowledge/caroline.md"], WIKI, None, False)
    assert "sources:" not in full and "support group" in full
    assert "sources:" in read_wiki(["knowledge/caroline.md"], WIKI, None, True)
    assert not answered("support group", read_wiki(["knowledge/caroline.md"], WIKI, 10, False))
