"""The shared text helpers (cache/search/text.py) and the three slug policies built on them:
a session id's name (cache/sessionfile), a wiki page's file name (dream/text) and the
sample generator's file names (tools/sample) keep their own limits over the same words."""

from __future__ import annotations

import pytest

from brainfs.cache.sessions.sessionfile import slug as session_slug
from brainfs.cache.search.text import estimate_tokens, slug_words
from brainfs.dream.text import slugify as page_slug
from brainfs.tools.sample import _slugify as sample_slug

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text, words", [
    ("Orgs met in Kyoto (2024)!", ["orgs", "met", "in", "kyoto", "2024"]),
    ("Café Müller — the Ñandú", ["cafe", "muller", "the", "nandu"]),
    ("x-y_z  --  Q&A: 3.5 kg", ["x", "y", "z", "q", "a", "3", "5", "kg"]),
    ("ÆØÅ æøå ß", ["a", "a"]),          # letters with no ASCII decomposition are dropped
    ("日本語のタイトル", []),
    ("", []),
])
def test_slug_words_fold_accents_and_split_on_everything_else(text: str, words: list[str]) -> None:
    assert slug_words(text) == words


def test_each_slug_keeps_its_own_limits() -> None:
    long = "The quick brown fox jumps over the lazy dog near the river bank today"
    # a session id: at most 6 whole words within 40 characters
    assert session_slug(long) == "the-quick-brown-fox-jumps-over"
    assert session_slug("Meeting at Kansai Institute of Inclusive Design") == \
        "meeting-at-kansai-institute-of-inclusive"
    assert session_slug("日本語") == "" and session_slug(None) == ""
    # a wiki page: every word, cut at 80 characters; a title with no ASCII word gets a
    # stable name of its own instead of an empty one
    assert page_slug(long) == "the-quick-brown-fox-jumps-over-the-lazy-dog-near-the-river-bank-today"
    assert page_slug("A" * 100) == "a" * 80
    assert page_slug("日本語のタイトル") == "subject-3ae504d8"
    # the sample generator: a word limit that never ends on a joining word
    assert sample_slug("Meeting at Kansai Institute of Inclusive Design", 5) == \
        "meeting-at-kansai-institute"
    assert sample_slug("Café Müller — the Ñandú") == "cafe-muller-the-nandu"


def test_all_three_agree_where_no_limit_applies() -> None:
    for text in ("Dr. Elena Sokolova", "naïve résumé", "tactile-transit-maps", "Orgs met in Kyoto"):
        expected = "-".join(slug_words(text))
        assert session_slug(text) == page_slug(text) == sample_slug(text) == expected


def test_token_estimate_is_characters_over_four_rounded_up() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde", "x" * 4000)] == [0, 1, 1, 2, 1000]


def test_a_page_slug_spells_letters_a_fold_drops_as_a_person_types_them() -> None:
    # A session id keeps its old words (ids already in buckets must not move); a subject's
    # page is the name as typed: "Aydın" is "aydin", not "aydn".
    assert page_slug("Zeynep Aydın Koç") == "zeynep-aydin-koc"
    assert page_slug("Søren Łukasz Straße") == "soren-lukasz-strasse"
    assert page_slug("Þóra Æsa Œuvre") == "thora-aesa-oeuvre"
    assert session_slug("Zeynep Aydın Koç") == "zeynep-aydn-koc"
