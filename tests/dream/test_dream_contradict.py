"""The general contradiction check: true contradictions supersede (the newer statement wins
and the page says what it superseded); near-misses and additive facts never do."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.dream.contradict import contradiction
from brainfs.dream.core import run_local

from dream_helpers import write

pytestmark = pytest.mark.unit

TRUE = [
    ("I have two dogs.", "I have three dogs now.", "num: 2 → 3"),
    ("My sister lives in Boston.", "My sister lives in Denver these days.", "name: boston → denver"),
    ("I work at Google.", "I work at Meta.", "name: google → meta"),
    ("I like sushi.", "I don't like sushi anymore.", "polarity"),
    ("I'm a fan of jazz.", "I'm not a fan of jazz.", "polarity"),
    ("I am 30 years old.", "I'm 31 years old.", "num: 30 → 31"),
    ("My dog's name is Max.", "My dog's name is Rex.", "name: max → rex"),
    ("My birthday is in May.", "My birthday is in June.", "date: may → june"),
    ("I live in Osaka now, but I go to Kyoto every month.", "Well, I live in Nara, and I love it.",
     "name: osaka → nara"),
    ("Mara lives in Osaka.", "I live in Kyoto.", "name: osaka → kyoto"),  # the subject's name = "I"
    ("The proposal is due on 26 February 2026.", "Updated: the proposal is due on 22 June 2026.",
     "date: 2026-02-26 → 2026-06-22"),                                   # a date is one slot
    ("My main contact at Kobe Office is Haruto.", "My main contact at Kobe Office is Yuki.",
     "name: haruto → yuki"),
]

NEAR_MISSES = [
    ("I have two dogs.", "I have two cats."),                       # a different frame word
    ("I went to Paris last week.", "I went to Rome."),              # past events add up
    ("I visited Kyoto in May.", "I visited Kyoto in June."),
    ("I love Paris.", "I love Rome."),                              # not one value at a time
    ("My sister lives in Boston.", "My brother lives in Denver."),   # another subject
    ("I have a meeting on Monday.", "I have a meeting on Friday."),  # "have" changes only by number
    ("I'm reading Dune.", "I'm reading Emma."),                     # an activity, not a state
    ("I didn't like the movie.", "I liked the movie."),             # past: maybe another movie
    ("I have two kids.", "I have two kids, Ana and Bo."),           # adds detail
    ("That's awesome, Caro!", "That's awesome, Caroline!"),         # vocatives, reactions
    ("Melanie (23 August 2023): Caroline, that's great!", "Wow, Caroline, that's great!"),
    ("I'm here for you no matter what!", "I'm here for you!"),      # "no matter" negates nothing
    ("I don't live in Paris.", "I don't live in Rome."),            # two negatives both hold
    ("I live in Kyoto.", "I live in Kyoto."),                       # the same statement
    ("I'll move to Berlin.", "I'll move to Vienna."),               # plans add up
    # found on the synthetic sample corpus before the rules were tightened:
    ("My main contact at Kobe Office is Haruto.", "My main contact at Nagoya Center is Yuki."),  # 2 slots
    ("Priya is a PhD student at Kansai Institute.", "Mateo is a PhD student at Kansai Institute."),
    ("One option is to run the first 2 sessions remotely.", "One option is to run the first 3 sessions remotely."),
    ("Draft three questions that work with NVDA.", "Draft three questions that work with VoiceOver."),
    ("Quick session: I need to be ready for Friday.", "Quick session: I need to be ready for Wednesday."),
    ("I may go to Kyoto.", "I may go to Nara."),                     # "may" is no month
]


@pytest.mark.parametrize(("old", "new", "why"), TRUE)
def test_true_contradictions_are_flagged(old: str, new: str, why: str) -> None:
    assert contradiction(old, new, "Mara", "Mara") == why


@pytest.mark.parametrize(("old", "new"), NEAR_MISSES)
def test_near_misses_are_not(old: str, new: str) -> None:
    assert contradiction(old, new, "Mara", "Mara") is None
    assert contradiction(new, old, "Mara", "Mara") is None


def _session(sid: str, date: str, turns: list[str]) -> str:
    body = "\n\n".join(f"[D{sid[1:]}:{i}] {t}" for i, t in enumerate(turns, 1))
    return f"---\nsession: {sid}\ndate: {date}\nparticipants: [\"Mara\", \"Ana\"]\n---\n\n{body}\n"


def test_dream_supersedes_the_older_statement_and_says_so(tmp_path: Path) -> None:
    root = write(tmp_path / "t", {
        "sessions/s1/transcript.md": _session("s1", "2023-01-10", [
            "Mara: I have two dogs, and Ana walks them with me on Sundays.",
            "Ana: Biscuit and the dogs sound like a handful for Mara!",
            "Mara: I have two cats as well, Biscuit and Pumpkin, who sleep all day.",
            "Mara: My sister Lena lives in Boston, close to her office.",
        ]),
        "sessions/s2/transcript.md": _session("s2", "2023-03-02", [
            "Mara: Big news, I have three dogs now since we adopted a puppy from the Kyoto shelter.",
            "Ana: Three dogs! Mara, you are brave.",
            "Mara: My sister Lena lives in Denver these days, she moved for work.",
            "Mara: I went to Paris last week with Lena for a short trip.",
        ]),
    })
    res = run_local(root, None)
    mara = res.staged["knowledge/mara.md"]
    live, sup = mara.split("## Superseded")
    sup = sup.split("\n## ")[0]
    # true contradictions: the newer statement wins, and the page says what it superseded
    assert "Mara has two dogs, and Ana walks" in sup and "contradicted on 2023-03-02: Mara has three dogs now" in sup
    assert "lives in Boston" in sup and "contradicted on 2023-03-02: Mara's sister Lena lives in Denver" in sup
    assert "Mara has three dogs now" in live and "lives in Denver" in live
    # the near-miss stays: two cats is not two dogs
    assert "Mara has two cats as well" in live and "two cats" not in sup
    # counted per page: the Boston → Denver pair is on Lena's page too
    assert res.stats["contradictions"] == 3
    assert "Lena lives in Denver" in res.staged["knowledge/lena.md"].split("## Superseded")[1]
    assert not [p for p in res.problems if p.severity == "error"]
    assert any("newer statement supersedes" in c.reason for c in res.changes if c.path == "knowledge/mara.md")
