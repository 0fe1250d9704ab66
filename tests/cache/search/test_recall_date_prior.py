"""Issue 16, dates a question names: "what did Ines do on 12 April, 2024?" lifts the turns
said that day (``dates.named_period``, ``rerank.date_prior``, ``RecallParams.date_weight``),
on small fixtures, and recall still answering with the stage broken."""

from __future__ import annotations

import datetime as _dt

import pytest

from brainfs.cache.search import ordering
from brainfs.cache.search.dates import Period, named_period
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.rerank import date_prior
from brainfs.cache.search.retrieval import RecallParams, retrieve
from helpers import BowEmbedder

NOW = _dt.datetime(2024, 6, 1, tzinfo=_dt.timezone.utc)
BOW = BowEmbedder(dim=64, name="test-bow")
OFF = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                   session_reserve=0, date_weight=0.0)
ON = RecallParams(neighbour=0.0, speaker=0.0, unnamed_weight=0.0, list_spread=0.0,
                  session_reserve=0, date_weight=1.0)
D = _dt.date


@pytest.mark.unit
@pytest.mark.parametrize("question,period", [
    ("What did Nate do for Joanna on 25 May, 2022?", Period("day", D(2022, 5, 25))),
    ("What painting did Melanie show on October 13, 2023?", Period("day", D(2023, 10, 13))),
    ("What happened on the 3rd of June 2023?", Period("day", D(2023, 6, 3))),
    ("What did she donate in December 2023?", Period("month", D(2023, 12, 1))),
    ("What did Maria do last weekend before April 10, 2023?", Period("day", D(2023, 4, 10))),
    ("When did Melanie go camping in July?", None),  # no year: which July?
    ("What did she do on 31 February 2023?", None),  # no such day
    ("How many times has she gone to the beach in 2023?", None),  # a year is too wide
    ("", None),
    ("x" * 5000, None),
])
def test_named_period_reads_a_day_or_month_with_its_year(question: str, period: Period | None) -> None:
    assert named_period(question) == period


@pytest.mark.unit
def test_period_contains() -> None:
    assert Period("day", D(2023, 5, 7)).contains(D(2023, 5, 7))
    assert not Period("day", D(2023, 5, 7)).contains(D(2023, 5, 8))
    assert Period("month", D(2023, 5, 1)).contains(D(2023, 5, 31))
    assert not Period("month", D(2023, 5, 1)).contains(D(2024, 5, 3))
    assert Period("weekend", D(2023, 5, 6)).contains(D(2023, 5, 7))
    assert not Period("weekend", D(2023, 5, 6)).contains(D(2023, 5, 8))
    assert Period("week", D(2023, 5, 1)).contains(D(2023, 5, 7))


@pytest.mark.unit
def test_date_prior_lifts_the_chunks_dated_in_the_period_alike() -> None:
    scores = {1: 1.0, 2: 0.5, 3: 0.4, 4: 0.3}
    days = {1: D(2023, 5, 1), 2: D(2023, 7, 7), 3: D(2023, 7, 7)}  # 4: undated
    out = date_prior(scores, days, Period("day", D(2023, 7, 7)), 1.0)
    assert out == {1: 1.0, 2: 1.0, 3: 0.8, 4: 0.3}
    assert date_prior(scores, days, None, 1.0) == scores
    assert date_prior(scores, days, Period("day", D(2023, 7, 7)), 0.0) == scores
    assert scores == {1: 1.0, 2: 0.5, 3: 0.4, 4: 0.3}  # the input is left alone



def _session_days(res) -> list[str]:
    return [c.path.split("/")[1] for c in res.cards]


@pytest.mark.unit
def test_recall_lifts_the_turns_said_on_the_day_a_question_names(mini_index: SearchIndex) -> None:
    q = "What did Ines do on 12 April, 2024?"  # session 3 was on 12 April 2024
    plain = retrieve(mini_index, q, k=6, embedder=BOW, now=NOW, params=OFF)
    on = retrieve(mini_index, q, k=6, embedder=BOW, now=NOW, params=ON)
    assert _session_days(plain).count("mini-1-s3") < 6
    assert _session_days(on) == ["mini-1-s3"] * 6  # session 3's six turns
    assert "said on 12 April 2024" in on.why and "said on" not in plain.why
    # turns of that day keep their order among themselves
    s3 = [c.ref for c in plain.cards if "mini-1-s3" in c.path]
    assert [c.ref for c in on.cards if c.ref in s3] == s3
    # a month with its year: every session of April 2024 (only session 3 here)
    month = retrieve(mini_index, "What did Ines do in April 2024?", k=6, embedder=BOW, now=NOW, params=ON)
    assert _session_days(month) == ["mini-1-s3"] * 6
    # no date named: nothing changes
    none = retrieve(mini_index, "What pets does Ines have?", k=6, embedder=BOW, now=NOW, params=ON)
    assert [c.ref for c in none.cards] == [c.ref for c in retrieve(
        mini_index, "What pets does Ines have?", k=6, embedder=BOW, now=NOW, params=OFF).cards]


def _broken(*_a, **_k):
    raise RuntimeError("stage broken for the test")


@pytest.mark.unit
@pytest.mark.parametrize("attr", ["named_period", "date_prior"])
def test_recall_answers_with_the_date_stage_broken(mini_index: SearchIndex, monkeypatch, attr: str) -> None:
    q = "What did Ines do on 12 April, 2024?"
    plain = retrieve(mini_index, q, k=6, embedder=BOW, now=NOW, params=OFF)
    monkeypatch.setattr(ordering, attr, _broken)
    res = retrieve(mini_index, q, k=6, embedder=BOW, now=NOW, params=ON)
    assert res.mode == "hybrid" and "date stage skipped" in res.why, res.why
    assert [c.ref for c in res.cards] == [c.ref for c in plain.cards]  # as if off


@pytest.mark.unit
def test_the_chain_still_degrades_with_the_date_stage_on(mini_index: SearchIndex) -> None:
    q = "What did Ines do on 12 April, 2024?"
    dense = retrieve(mini_index, q, k=6, embedder=BOW, now=NOW, params=ON, mode="dense")
    sparse = retrieve(mini_index, q, k=6, embedder=None, now=NOW, params=ON)
    recent = retrieve(mini_index, "", k=6, embedder=None, now=NOW, params=ON)
    assert (dense.mode, sparse.mode, recent.mode) == ("dense", "sparse", "recent")
    assert _session_days(dense)[0] == _session_days(sparse)[0] == "mini-1-s3"
    assert "said on" in dense.why and "said on" in sparse.why
    assert "said on" not in recent.why and len(recent.cards) == 6
