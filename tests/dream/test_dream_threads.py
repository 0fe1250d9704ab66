"""Threads keep their published order (hysteresis): a page whose facts did not change is not
rewritten because whole-wiki counts moved two topics' scores past each other; a topic that
really grows still rises, and a first run is the plain ranking."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from brainfs.dream import writing
from brainfs.dream.core import run_local
from brainfs.dream.threads import MARGIN, ordered_topics, page_topics

pytestmark = pytest.mark.unit


def test_no_previous_order_is_the_plain_ranking() -> None:
    scores = {"ducks": 2.0, "fountain": 3.0, "bread": 3.0, "pond": 1.0}
    assert ordered_topics(scores, [], 10) == ["bread", "fountain", "ducks", "pond"]
    assert ordered_topics(scores, [], 2) == ["bread", "fountain"]
    # a previous order naming none of the topics is no order
    assert ordered_topics(scores, ["gone"], 3) == ["bread", "fountain", "ducks"]


def test_previous_order_kept_within_the_margin() -> None:
    # "pond" now scores 20 % above "ducks": under the margin, the published order stays
    scores = {"ducks": 1.0, "pond": 1.2, "bread": 0.5}
    assert ordered_topics(scores, ["ducks", "pond", "bread"], 10) == ["ducks", "pond", "bread"]
    # a topic gone from the page's facts leaves; the others keep their places
    assert ordered_topics({"ducks": 1.0, "bread": 0.5}, ["ducks", "pond", "bread"], 10) == ["ducks", "bread"]


def test_a_topic_that_beats_another_by_the_margin_moves_above_it() -> None:
    scores = {"ducks": 1.0, "pond": 1.0, "bread": 1.0 * (1 + MARGIN) * 1.01}
    assert ordered_topics(scores, ["ducks", "pond", "bread"], 10) == ["bread", "ducks", "pond"]
    # it passes only the ones it beats by the margin
    scores = {"ducks": 1.2, "pond": 0.5, "bread": 1.0}
    assert ordered_topics(scores, ["ducks", "pond", "bread"], 10) == ["ducks", "bread", "pond"]


def test_a_new_topic_enters_a_full_page_only_by_beating_the_weakest_by_the_margin() -> None:
    shown = ["ducks", "pond"]
    # room left: a new topic enters, after the topics it does not beat by the margin
    assert ordered_topics({"ducks": 2.0, "pond": 1.0, "bread": 1.1}, shown, 3) == ["ducks", "pond", "bread"]
    assert ordered_topics({"ducks": 2.0, "pond": 1.0, "bread": 1.5}, shown, 3) == ["ducks", "bread", "pond"]
    # full: 1.1 does not beat the weakest (1.0) by the margin; 1.5 does and takes its place
    assert ordered_topics({"ducks": 2.0, "pond": 1.0, "bread": 1.1}, shown, 2) == ["ducks", "pond"]
    assert ordered_topics({"ducks": 2.0, "pond": 1.0, "bread": 1.5}, shown, 2) == ["ducks", "bread"]


def test_page_topics_reads_the_threads_headings_only() -> None:
    page = ("---\ntitle: X\n---\n# X\n\n## Timeline\n\n### not-a-topic\n\n## Threads\n\n### ducks\n\n"
            "- a [cite:1]\n\n### pond\n\n- b [cite:2]\n\n## Related\n\n### other\n")
    assert page_topics(page) == ["ducks", "pond"]
    assert page_topics(None) == [] and page_topics("# X\n\n- a [cite:1]\n") == []


def _session(sid: str, day: str, lines: list[str]) -> str:
    body = "\n\n".join(f"[D{sid[1:]}:{i + 1}] {ln}" for i, ln in enumerate(lines))
    return f"---\nsession: {sid}\ndate: {day}\nparticipants: [Mara, Ana]\n---\n\n{body}\n"


#: Biscuit's page has two threads, "ducks" (said in 2 facts of the wiki) before "fountain"
#: (3). Session s3 is about someone else, and says "ducks" twice more: by whole-wiki counts
#: "fountain" is now the rarer word, and the plain ranking would swap Biscuit's threads.
SESSIONS = {
    "s1": _session("s1", "2026-01-05", ["Mara: My dog Biscuit chased the ducks at the pond.",
                                        "Mara: I took Biscuit to the fountain near the station.",
                                        "Ana: Yesterday my cousin Kenji painted the fountain for his class."]),
    "s2": _session("s2", "2026-01-12", ["Mara: Yesterday my dog Biscuit swam after the ducks again.",
                                        "Mara: After lunch my dog Biscuit barked at the fountain for an hour."]),
    "s3": _session("s3", "2026-01-20", ["Ana: Yesterday my cousin Kenji fed the ducks with bread.",
                                        "Ana: On Sunday my cousin Kenji watched ducks at the river."]),
}
KW = dict(settings={"extractor": "rules", "thread_max_share": 1.0},
          now=dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc))


def _tree(root: Path, sids: list[str]) -> Path:
    for sid in sids:
        (root / "sessions" / sid).mkdir(parents=True, exist_ok=True)
        (root / "sessions" / sid / "transcript.md").write_text(SESSIONS[sid])
    return root


def test_a_page_without_new_facts_is_not_rewritten_for_whole_wiki_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "m", ["s1", "s2"])
    first = run_local(root, apply=True, **KW)
    page = "knowledge/biscuit.md"
    assert page_topics(first.staged[page]) == ["ducks", "fountain"]
    _tree(root, ["s3"])
    second = run_local(root, None, **KW)
    assert not any(c.path == page for c in second.changes), [str(c) for c in second.changes]
    assert "knowledge/kenji.md" in second.staged  # the new session did reach the wiki
    # The same run with the plain ranking (no published order read) swaps the two threads:
    # what the test above holds is the hysteresis, not an input that moved nothing.
    monkeypatch.setattr(writing, "_published_topics", lambda tree, listing: lambda slug: [])
    plain = run_local(root, None, **KW)
    assert page_topics(plain.staged[page]) == ["fountain", "ducks"]


def test_a_first_run_is_the_plain_ranking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "m", ["s1", "s2", "s3"])
    got = run_local(root, None, **KW).staged
    monkeypatch.setattr(writing, "_published_topics", lambda tree, listing: lambda slug: [])
    assert run_local(root, None, **KW).staged == got
    assert page_topics(got["knowledge/biscuit.md"]) == ["fountain", "ducks"]


def test_a_word_written_only_capitalised_is_no_topic() -> None:
    """A name's words ("Lantern Books and Coffee" has a page of its own) and a sentence's
    opening verb ("Prepare …") thread nothing; the same word in lower case does."""
    from brainfs.dream.threads import lower_case_topics

    got = lower_case_topics("If you need a quiet spot near Korinbo Plaza, Lantern Books and Coffee works.")
    assert not {"korinbo", "plaza", "lantern", "books", "coffee"} & got
    assert "quiet" in got
    assert "slides" in lower_case_topics("Prepare the slides for the camping talk.")
    assert "prepare" not in lower_case_topics("Prepare the slides for the camping talk.")
    assert "books" in lower_case_topics("I sorted the old books into boxes.")


def test_threads_of_a_page_are_not_the_words_of_another_subjects_name(tmp_path: Path) -> None:
    sessions = {
        "s1": _session("s1", "2026-01-05", ["Mara: My dog Biscuit naps at Lantern Books and Coffee every Monday.",
                                            "Mara: Biscuit loves camping by the lake."]),
        "s2": _session("s2", "2026-01-12", ["Mara: Biscuit met a cat at Lantern Books and Coffee today.",
                                            "Mara: Biscuit went camping again, muddy paws everywhere."]),
    }
    root = tmp_path / "tree"
    for sid, text in sessions.items():
        (root / "sessions" / sid).mkdir(parents=True)
        (root / "sessions" / sid / "transcript.md").write_text(text)
    run_local(root, tmp_path / "staged", **KW)
    page = (tmp_path / "staged" / "knowledge" / "biscuit.md").read_text()
    topics = page_topics(page)
    assert "camping" in topics, page
    assert not {"lantern", "books", "coffee"} & set(topics), topics
