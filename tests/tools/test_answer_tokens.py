"""The "answers in few tokens" measure of ``brainfs eval locomo`` (issue 12): which words of
a gold answer must stand in recall's output, how the first N tokens of it are read, and
which questions count."""

from __future__ import annotations

import pytest

from brainfs.cache.search.model import token_counter
from brainfs.tools.locomo import answer_found, answer_scored, content_words, read_within

pytestmark = pytest.mark.unit


def test_content_words_drop_punctuation_and_case() -> None:
    assert content_words("Piranesi, The Overstory!") == ["piranesi", "overstory"]
    assert content_words("PORTO") == content_words("porto") == ["porto"]
    assert content_words("Café") == content_words("CAFÉ") == ["café"]
    assert content_words("well-known (very)") == ["well", "known"]
    # an apostrophe's tail is its own (stop) word, curly or straight
    assert content_words("Ines’s dog") == content_words("Ines's dog") == content_words("Ines dog")


def test_content_words_keep_numbers_without_leading_zeros() -> None:
    assert content_words("1 hour 52 minutes") == ["1", "hour", "52", "minute"]
    assert content_words("1:52") == ["1", "52"]
    assert content_words("07 May") == content_words("7 may") == ["7", "may"]
    assert content_words("two cats") == ["two", "cat"]  # a number word is not a digit
    assert content_words("3.5 km") == ["3", "5", "km"]


def test_content_words_drop_stop_words() -> None:
    assert content_words("The sunday before 25 May 2023") == ["sunday", "25", "may", "2023"]
    assert content_words("what is it about") == []
    assert content_words("") == []


def test_content_words_read_iso_dates_and_fold_endings() -> None:
    assert content_words("on 2023-05-07") == ["7", "may", "2023"]
    assert content_words("2023-05-07T13:56:00") == ["7", "may", "2023"]
    assert content_words("support groups") == content_words("support group")
    assert content_words("1 hour 52 minutes") == content_words("1 hour 52 minute")
    assert content_words("stories") == ["story"]
    assert content_words("boxes") == content_words("box") == ["box"]
    assert content_words("bus glass tennis") == ["bus", "glass", "tennis"]
    assert content_words("painted") != content_words("paint")  # verbs are not folded


def test_an_answer_is_found_when_all_its_content_words_were_read() -> None:
    read = ["Ines (3 March 2024): I went to a pottery workshop yesterday.",
            "Tomas (2 May 2024): I ran the half marathon in 1 hour 52 minutes."]
    assert answer_found("A pottery workshop", read)
    assert answer_found("1 hour 52 minutes", read)
    assert answer_found("2 May, 2024", read)  # words may come from anywhere in what was read
    assert not answer_found("A blue bowl", read)
    assert not answer_found("1 hour 53 minutes", read)
    assert not answer_found("the", read)  # no content word: nothing to find
    assert not answer_found("pottery", [])


def test_which_questions_count() -> None:
    assert answer_scored({"category": 4, "answer": "Porto"})
    assert answer_scored({"category": 2, "answer": 2023})  # LoCoMo has numeric answers
    assert answer_scored({"category": 1, "answer": "Two cats, Pimenta and Canela"})
    assert not answer_scored({"category": 3, "answer": "Likely yes"})  # open-domain
    assert not answer_scored({"category": 5, "adversarial_answer": "x"})
    assert not answer_scored({"category": 1, "answer": "Yes"})
    assert not answer_scored({"category": 4, "answer": "no."})
    assert not answer_scored({"category": 4, "answer": "the"})  # no content word
    assert not answer_scored({"category": 4})


def _words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_read_within_takes_whole_texts_then_cuts_the_one_that_does_not_fit() -> None:
    texts = ["a b c", "d e f g", "h i", "j"]
    assert read_within(texts, 100, _words) == texts
    assert read_within(texts, 7, _words) == ["a b c", "d e f g"]
    assert read_within(texts, 5, _words) == ["a b c", "d e"]
    assert read_within(texts, 0, _words) == []
    assert read_within([], 10, _words) == []


def test_read_within_counts_the_context_budgets_word_pieces() -> None:
    count = token_counter()  # the MiniLM tokenizer the context budget counts with
    texts = ["Ines (3 March 2024): I went to a pottery workshop yesterday. " * 3,
             "Tomas (2 May 2024): I ran the half marathon in 1 hour 52 minutes. " * 3]
    sizes = count(texts)
    assert sum(sizes) > len(" ".join(texts).split())  # pieces, not words
    read = read_within(texts, sizes[0] + 10, count)
    assert read[0] == texts[0] and len(read) == 2
    assert sum(count(read)) <= sizes[0] + 10 < sum(count(read)) + 5  # cut at a word boundary
    assert texts[1].startswith(read[1])
    # pieces never span whitespace: texts read one after another add up
    assert count(["\n\n".join(read)])[0] == sum(count(read))


def test_leave_one_conversation_out_scores_each_conversation_with_the_others_choice() -> None:
    from benchmarks.dream_answers import loco

    # "a" finds c1's two answers and c2's one, "b" c3's two
    rows = [{"conversation": c, "a": a, "b": b} for c, a, b in (
        ("c1", True, False), ("c1", True, False), ("c2", True, False),
        ("c3", False, True), ("c3", False, True))]
    found, chosen, tuned = loco(rows, ["a", "b"])
    assert tuned == "a"  # 3 of 5 on all
    # c1 held out: on c2 + c3 "b" finds 2 of 3; c2 or c3 held out: "a" is ahead
    assert chosen == {"c1": "b", "c2": "a", "c3": "a"}
    assert found == [False, False, True, False, False]  # the held-out outcomes, in order
    # a tie goes to the earlier shape (the default comes first)
    _, chosen, tuned = loco(rows[2:4], ["a", "b"])
    assert chosen == {"c2": "b", "c3": "a"} and tuned == "a"
