"""Wordings of change read since the ninth labelled set (each in words of its own, with the
near misses that must state nothing): what a correction states of a person named in full,
values that end with no successor, a promotion, a new company, a first week somewhere, tone
and reply language, subtitle formats, trips over a range of days. No model, no mount."""

from __future__ import annotations

import pytest

from brainfs.cache.facts.records import FACTS_PATH, loads
from brainfs.dream import reach, relations
from brainfs.dream.core import DictTree, dream
from dream_helpers import relations_of as _rels
from dream_helpers import transcript

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence, want", [
    ("Tomasz Wrobel's phone is now +48 600 700 800, not +48 600 111 222.",
     ("Tomasz Wrobel", "contact", "+48 600 700 800", "set")),
    ("Aylin Demir wants her invoices as PDF, not Word.", ("Aylin Demir", "format", "PDF", "set")),
    ("Rosa Lindgren's Madrid trip is now 4-9 June, not 1-6 June.",
     ("Rosa Lindgren", "trip", "Madrid on 4-9 June", "set")),
    ("Kofi Mensah's thesis deadline is now 2 July, not 15 June.", ("Kofi Mensah", "deadline", "2 July", "set")),
    ("Ines Duarte wants British spelling now, not American spelling.",
     ("Ines Duarte", "preference", "British spelling", "set")),
])
def test_a_correction_of_a_person_named_in_full(sentence: str, want: tuple[str, str, str, str]) -> None:
    assert want in _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "If Rosa Lindgren moved to Madrid she'd be closer to work.",
    "Rosa Lindgren's title is written Sr. Analyst in the directory.",
    "When Kofi Mensah is back we can talk.",
])
def test_no_named_person_statement_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] in ("home", "role", "trip", "deadline")], _rels(sentence)


@pytest.mark.parametrize("sentence, attr", [
    ("I officially retired last Friday, so no more early trains.", "employer"),
    ("Retired in March after 25 years on the buses.", "employer"),
    ("im between jobs at the moment, any tips for a cover letter?", "employer"),
    ("after the restructure I don't report to anyone for now", "manager"),
    ("the client scrapped the deadline, it's whenever we're ready", "deadline"),
])
def test_an_end_without_a_successor(sentence: str, attr: str) -> None:
    assert ("", attr, "", "end") in _rels(sentence), _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "my mum retired last year and now she gardens all day",
    "if I retired tomorrow I'd travel",
    "Retired teachers get a discount there.",
    "she doesn't report to anyone",
])
def test_no_end_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[3] == "end"], _rels(sentence)


def test_nobody_leading_a_project_ends_its_lead() -> None:
    assert ("Larkspur", "lead", "", "end") in _rels("No one is leading Larkspur right now, sadly.")


@pytest.mark.parametrize("sentence, attr, value", [
    ("Since my promotion to head of sales the calendar is chaos.", "role", "head of sales"),
    ("My new title is principal engineer (finally!) so I need a new bio.", "role", "principal engineer"),
    ("my new company Brightwell Analytics runs everything on GCP.", "employer", "Brightwell Analytics"),
    ("First week at Harrow Lane Clinic done, very tired.", "employer", "Harrow Lane Clinic"),
])
def test_a_new_job_or_title(sentence: str, attr: str, value: str) -> None:
    assert ("", attr, value, "set") in _rels(sentence), _rels(sentence)


@pytest.mark.parametrize("sentence, value", [
    ("From now on please reply in Spanish, I need the practice.", "Spanish"),
    ("informal is fine from now on, I only use this for myself", "casual tone"),
    ("Please keep your replies formal, they go to my director.", "formal tone"),
    ("SRT files from now on please, the editor hates VTT.", "SRT"),
])
def test_a_standing_tone_language_or_subtitle_format(sentence: str, value: str) -> None:
    assert value in [r[2] for r in _rels(sentence)], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "Can you turn this into VTT subtitles?",
    "I read a book in Spanish last week.",
    "my Vancouver trip is on 3 May",
])
def test_no_standing_choice_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] in ("preference", "format")], _rels(sentence)


def test_a_number_in_a_phone_is_no_quantity() -> None:
    assert [r[1] for r in _rels("my new number is 07700 900555.")] == ["contact"]


def test_a_trip_over_a_range_of_days_moves_through_dream() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-03-01", [
            "Rosa: Hi, Rosa Lindgren. Family trip to Madrid 1-6 June. Can you plan day one?",
            "Assistant: Here is a plan."], "Rosa"),
        "sessions/s2/transcript.md": transcript(2, "2026-04-10", [
            "Rosa: we had to shift the Madrid trip to 4-9 June. Does the plan still work?",
            "Assistant: Mostly, yes."], "Rosa"),
    })
    recs = [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.attribute == "trip"]
    old = [r for r in recs if r.value == "Madrid on 1-6 June"]
    new = [r for r in recs if r.value == "Madrid on 4-9 June"]
    assert old and new and old[0].superseded_by == new[0].id and new[0].is_open, recs


def test_retiring_ends_the_employer_through_dream() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-01-10", [
            "Olek: Olek Nowak here, I work at Baltic Cranes as a rigger. Safety poster ideas?",
            "Assistant: Here are five."], "Olek"),
        "sessions/s2/transcript.md": transcript(2, "2026-06-02", [
            "Olek: I officially retired last week! Help me plan my first month off?",
            "Assistant: Congratulations!"], "Olek"),
    })
    recs = [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.attribute == "employer"]
    assert len(recs) == 1 and not recs[0].is_open and recs[0].superseded_by is None, recs


@pytest.mark.parametrize("text, want", [
    ("summarise this for me? 'Hello team, I moved to Porto last week. Best, Ana'", [False, True, True]),
    ('She wrote: "I have a new number now, it is 0612 345 678, and my old one is gone." Nice of her.', [True]),
    ("It's Jo's job, not mine. I moved to York in May.", [False, False]),
    ("I said 'no' to the offer. I live in Hull.", [False, False]),
])
def test_sentences_inside_someone_elses_quoted_words(text: str, want: list[bool]) -> None:
    from brainfs.dream.text import quoted_sentences

    assert quoted_sentences(text) == want


def test_a_pasted_message_changes_nothing_of_the_speaker() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-01-05", [
            "Rui: Hi, Rui Costa. My email is rui.costa@tidemail.example, put it on the flyer please.",
            "Assistant: Done."], "Rui"),
        "sessions/s2/transcript.md": transcript(2, "2026-03-05", [
            "Rui: can you summarise this for me? 'Dear all, please note my new address from Monday: "
            "dana.ferro@harbour.example. I moved to Lisbon as well. Regards, Dana'",
            "Assistant: Dana has a new address and moved to Lisbon."], "Rui"),
    })
    recs = [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.subject == "rui-costa"]
    assert recs and all(r.is_open for r in recs), recs
    assert not [r for r in recs if r.attribute == "home"], recs


@pytest.mark.parametrize("sentence, want", [
    ("Hamza Qureshi's audit report deadline is now 14 October, not 30 September.",
     "Hamza Qureshi's audit report deadline is now 14 October."),
    ("Ali Rezaei's Vancouver trip is now 10-17 October, not 3-10 October.",
     "Ali Rezaei's Vancouver trip is now 10-17 October."),
    ("The threshold is 30 cm, not 40 cm.", "The threshold is 30 cm."),
    ("Figures as SVG, not PDF.", "Figures as SVG."),
])
def test_a_corrections_line_without_the_value_it_replaces(sentence: str, want: str) -> None:
    """The "Correction:" line a page shows drops the ", not X" whole (it wrote "14
    Octobereptember" when "30 S" was read as a quantity)."""
    assert reach.without_negations(sentence) == want


def test_a_deadline_of_a_person_named_with_a_possessive_is_phrased_without_the_s() -> None:
    got = [r.phrase for r in relations.extract("Hamza Qureshi's audit report deadline is now 14 October.")
           if r.attr == "deadline"]
    assert got == ["deadline for audit report"]


def test_a_section_whose_every_line_is_dropped_goes_with_its_heading() -> None:
    from brainfs.dream.verify import drop_lines, frontmatter_of

    page = "---\ntitle: x\n---\n\n# X\n\n- a [cite:1]\n\n## Corrections\n\n- c [cite:2]\n\n## Superseded\n\n- s [cite:3]\n"
    lines = frontmatter_of(page)[1].split("\n")
    text, dropped = drop_lines(page, [lines.index("- c [cite:2]")])
    assert dropped == ["- c [cite:2]"] and "## Corrections" not in text and "## Superseded\n\n- s [cite:3]" in text
    text, _ = drop_lines(page, [lines.index("- a [cite:1]")])
    assert "## Corrections\n\n- c [cite:2]" in text  # a section that keeps a line keeps its heading


def test_a_format_kept_by_its_family_reads_as_a_sentence_on_the_page() -> None:
    """A format keyed by its family ("format document") wrote "wants uments as Word" (the
    key cut as if it were "format of …"); its scope is the family."""
    tree = DictTree({
        "sessions/s1/transcript.md": transcript(1, "2026-02-01", [
            "Lena: Hi, Lena Brandt. From now on give me everything as Word documents please.",
            "Assistant: Will do."], "Lena"),
        "sessions/s2/transcript.md": transcript(2, "2026-03-01", [
            "Lena: From now on everything as PDF please, not Word.", "Assistant: Noted."], "Lena"),
    })
    staged = dream(tree).staged
    recs = [r for r in loads(staged.get(FACTS_PATH, "")) if r.attribute == "format"]
    assert recs and all(r.scope == "document" for r in recs), recs
    page = staged["knowledge/lena-brandt.md"]
    assert "wants documents as PDF" in page and "uments" not in page.replace("documents", ""), page


def test_a_correction_names_no_word_of_time_as_a_value() -> None:
    from brainfs.dream.reach import pairs

    assert pairs("Marcus Whitfield wants his reports as PDF now, not docx.") == [("PDF", "docx")]


def test_what_did_not_happen_sets_no_home_by_meaning() -> None:
    from brainfs.dream import meaning

    assert not [r for r in meaning.extract("no, we didn't end up moving to Adelaide, the job fell through.", "")
                if r.attr == "home"]
