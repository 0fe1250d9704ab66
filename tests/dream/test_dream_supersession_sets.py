"""The supersession sets after the labelled one (tests/data/supersession-*.yaml), each run
through dream with floors at its measured figures (benchmarks/results/supersession.md): a
change that loses a supersession dream makes on a set, or invents one, fails here. One test,
one row per set; the comments above each row say how the set was written and measured, and so
what its figure means (only a set no rule was written against measures generalisation; every
set here has been read since). The labelled set's own floor is in test_dream_facts.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class Floors:
    """What one set must still reach."""

    #: labelled changes and no-change cases the set holds at least (a set that lost its
    #: cases would pass any floor)
    min_cases: int
    #: recall no lower than this (the measured recall rounded down)
    recall: float
    #: false supersessions no more than this
    false: int
    #: cases whose views may disagree with their records (every other case's must agree)
    view_gaps: frozenset[str] = field(default_factory=frozenset)
    #: the set is read by the sentence model (dream/meaning.py): without it dream reads by
    #: pattern only and the set would measure nothing, so its absence is a failure, not a skip
    needs_model: bool = False


SETS = [
    # Held out: written without reading dream's rules; its first measurement (34 of 49,
    # 5 false, at 3d4b74f) was a measure. The rules were then generalised against its misses
    # (roles, "she's with X now", redundancy, lower-case self-introductions, thresholds keyed
    # by what they set, names in front of a quantity, hypotheticals), so it is a *seen* set:
    # 47 of 49 changes (recall 0.959), no false supersession in 94 memories; the floor is the
    # recall rounded down to 0.05.
    pytest.param("supersession-heldout.yaml", Floors(40, 0.95, 0), id="supersession-heldout"),
    # Jobs, titles, managers and homes read by meaning (dream/meaning.py): measured when the
    # set was written, 20 of 25, 0 false (7 of 25 with the patterns alone). A tuned set: a
    # floor against losing what meaning.py reads, not a generalisation figure.
    pytest.param("supersession-meaning.yaml", Floors(20, 0.84, 0, needs_model=True),
                 id="supersession-meaning"),
    # Third: written blind after the rules were generalised against the held-out set; first
    # measured 16 of 56, 3 false, at d78d3b7 (the generalisation figure then). The rules were
    # then generalised against its misses by class (verb classes of change, titles by
    # occupation, dimensions of a preference, trips, lower-case writers), each rule tested in
    # wordings of its own (test_dream_supersession_rules.py): 52 of 56, 0 false.
    # Its view gap is closed: in "handed Marlin Dashboard over to Priti Shah on Monday. She's
    # leading it now." verification read "on Monday" in the tense of the whole turn (the next
    # Monday) and dropped the page's line; it now reads each sentence's dates in that
    # sentence's tense (the last Monday), as the record is dated.
    pytest.param("supersession-blind3.yaml", Floors(45, 0.94, 0), id="supersession-blind3"),
    # Fourth: written blind while the rules were generalised against the third set; measured
    # once after that round (6 of 59, 1 false, at 84bef0f), then after dream/meaning.py (8 of
    # 59, recall 0.136, 1 false); 9 of 59 (0.153), 0 false after the one-turn pages and the
    # comma that ends a name. No rule or setting was fitted to it, but its first cases were
    # read for the format before that work: no longer blind, only a floor. 13 of 59 (0.220)
    # after the ninth set's round.
    pytest.param("supersession-blind4.yaml", Floors(45, 0.3, 0), id="supersession-blind4"),
    # Fifth: written by someone who read neither dream's code nor the other sets' cases, and
    # scored blind before and after the meaning reader: 7 of 54 (recall 0.130) both times,
    # 2 false. Then read, and 11 of 54 (0.204) after a correction's "not A" and one-turn pages
    # were built on it. Raising the floors by fitting the set would end what it measures.
    # 14 of 54 (0.259), 0 false after the ninth set's round: its two false ones were a
    # the scorer's ("30 km" / "30 km a week" now match) and a name no longer run on into the next word.
    # Its one "false" since tastes are read by kind: "i use vscode" → "i use neovim now" found,
    # the label writes "VS Code" (a spelling, the change is real).
    pytest.param("supersession-blind5.yaml", Floors(50, 0.35, 1), id="supersession-blind5"),
    # Sixth: written by someone who read neither dream's code nor the other sets' cases;
    # scored blind before and after the changes made against the fifth set's misses: 14 of 64
    # both times, 4 false. Its false supersessions were then read and fixed by class (16 of
    # 64, recall 0.25, 0 false), so it is no longer blind: the floors keep what it measures
    # now, none false. 17 after chat without capitals was read sentence by sentence; 19 with
    # amounts and doses; 18 once a first name in lower case was no longer run on into the
    # words after it. A seventh set is what would say how supersession generalises.
    pytest.param("supersession-blind6.yaml", Floors(60, 0.43, 0), id="supersession-blind6"),
    # Seventh: written blind; scored at 8fb42f1 (16 of 72, 4 false), then read, and the contact
    # and format readers were built against its misses: 23 of 72; 25 of 72 (recall 0.347) after
    # the ninth set's round. Its two "false" are changes found whose label writes the value
    # otherwise (a summary format "Word" for the label's words, "Excel" for "XLSX").
    pytest.param("supersession-blind7.yaml", Floors(60, 0.48, 2, needs_model=True), id="supersession-blind7"),
    # Eighth: written blind; scored at 8fb42f1 (16 of 66, 4 false) and after the seventh set's
    # round (19 of 66, 6 false: the generalisation figure then); read since. 21 of 66 (recall
    # 0.318) after the ninth set's round; of its false ones a pasted email's "I have a new
    # address" no longer counts (sentences inside a quotation state nothing of the speaker).
    pytest.param("supersession-blind8.yaml", Floors(60, 0.51, 3, needs_model=True), id="supersession-blind8"),
    # Ninth: written blind; scored at 037dd51 (9 of 72, 4 false), then read, and rules written
    # against its misses by class: 22 of 72 (recall 0.306), 1 "false" (Göteborg for the
    # label's Gothenburg, a real change).
    # 30 of 72 (0.417) after the round of projects, leads and trips (its misses read again).
    pytest.param("supersession-blind9.yaml", Floors(60, 0.52, 1, needs_model=True), id="supersession-blind9"),
    # Tenth: written blind beside the ninth set's round and scored only before it (9 of 72) and
    # after it (10 of 72, recall 0.139, 3 false: today's generalisation figure); 11 of 72 (0.153),
    # 2 false once a handle's hyphen was read (a reading bug its one false showed). Not read for
    # rules: the floor keeps what it measures; a rule written against its misses would end that.
    # One false change it gained from the round of projects, leads and trips was read (a
    # deadline keyed by "regional council" for "report for the regional council"): 15 of 72
    # (0.208), 2 false (16 of 72, 0.222, at 3a2c22e); the thirteenth set is today's generalisation figure.
    pytest.param("supersession-blind10.yaml", Floors(60, 0.41, 1, needs_model=True), id="supersession-blind10"),
    # Eleventh: written blind; 8 of 72, 9 false before the ninth set's round, 9 of 72 after it;
    # then its false ones were read and their classes fixed: 11 of 72 (0.153), 5 false, every
    # one a change found under another value or key than its label's, none invented; 20 of 72
    # (0.278) after the round of projects, leads and trips written against its misses.
    pytest.param("supersession-blind11.yaml", Floors(60, 0.45, 2, needs_model=True), id="supersession-blind11"),
    # Twelfth: written blind; 20 of 72, 3 false at d67c19c; its false ones read and fixed by class:
    # 22 of 72 (0.306), 0 false; 29 of 72 (0.403) after its missed leads, homes and trips were read.
    pytest.param("supersession-blind12.yaml", Floors(60, 0.55, 0, needs_model=True), id="supersession-blind12"),
    # Thirteenth: written blind during the round of projects, leads and trips, scored only before
    # (14 of 72, 7 false) and after it (19 of 72, recall 0.264, 7 false at 3a2c22e; 20 of 72, 0.278,
    # 6 false at 6ec9ab6; each a change found under another subject, attribute or value than its
    # label's). Not read for rules.
    pytest.param("supersession-blind13.yaml", Floors(60, 0.45, 6, needs_model=True), id="supersession-blind13"),
    # (23 of 72, 6 "false" once the scorer no longer took "PDF" for a label's "one-page PDF".)
    # The round of corrections (a correction's old value read whole, in other words, or known
    # from the correction alone; written against the correction cases of the sets above)
    # raised the rows above by 1-4 each, none false more: blind10 21, blind11 27, blind12 37,
    # blind13 24 (0.333, 5 false) of 72.
    # Fourteenth: written blind at the start of that round; 16 of 72, 2 false before and after it
    # (the generalisation figure); then six of its correction cases read: 19 of 72 (0.264), 2 false;
    # then its projects (a novel, an app, a mural, a garden of one's own): 23 of 72 (0.319), 3
    # "false" (one a novel replaced by "podcast" where the label has "Hamburg local history podcast").
    # Then its jobs, managers and homes (a first fortnight, a manager met "today", "I'm under X
    # now", a move to a place in lower case, let go with the team): 27 of 72 (0.375), 3 false;
    # the tenth gained one (22 of 72).
    pytest.param("supersession-blind14.yaml", Floors(60, 0.48, 3, needs_model=True), id="supersession-blind14"),
    # Fifteenth: written blind after that round, with ids that do not tell the label and quick
    # corrections ("new number 07700 900 431, the 318 one is dead"); 9 of 72 (0.125), 4 false at
    # e8321af and after the round (its "318 one" read as an amount, a false one it showed, fixed):
    # the round did not generalise. Its corrections then read: a quick fix typed without a
    # subject is the user's ("Lives in Porto now", "Reading goal is 30 books"): 10 of 72 (0.139).
    pytest.param("supersession-blind15.yaml", Floors(60, 0.34, 5, needs_model=True), id="supersession-blind15"),
    # The round of a later value read by the kind of the one held (dream/retold.py: a rate in its
    # unit, a moved due date, a trip's new month, a new phone, a format of the family, a new boss,
    # a lead handed over, a first week at, a move, a new title; requests kept as asides) raised
    # every row above (4 to 18, 5 to 19, 6 to 25, 8 to 30, 9 to 35, 10 to 29, 11 to 32, 12 to 38,
    # 13 to 29, 14 to 33, 15 to 19) with no false one more, but the fifteenth's fifth: a saving
    # read right and kept on the page "mei" of a speaker who introduced herself as Mei-Ling
    # Sorensen (the speaker's name is not merged with a hyphenated full name; left as found).
    # Sixteenth: written blind at the start of that round; 19 of 72 (0.264), 2 false at 8dc0d9c
    # and 22 of 72 (0.306), 2 false after its first part (fe72e15): the generalisation figure.
    # Then read (its misses: tastes never recorded, rates, trips elsewhere, the project one is
    # on now, a quick fix's title): 26 of 72 (0.361), 2 false at bcc104e (the fifteenth 20); then
    # its ends with nothing in their place ("cancelled Iceland", "ditched the step goal", "brenda
    # left … I report to nobody"): 32 of 72 (0.444), 2 false (fifteenth 22, thirteenth 31).
    # Its known gap, there before the round: "my boss wants client reports as PDFs, but for my
    # own notes I still want markdown" keeps a record "reports as PDF" whose page line is dropped.
    pytest.param("supersession-blind16.yaml", Floors(60, 0.55, 2, frozenset({"b16-c057"}), needs_model=True),
                 id="supersession-blind16"),
    # Seventeenth: written blind during that round and never read; scored at 8dc0d9c (16 of 72,
    # 0.222, 2 false), fe72e15 (20) and bcc104e (23 of 72, 0.319, 2 false): the round's
    # generalisation figure, the README's; 24 of 72 (0.333) after the ends above, written from the
    # sixteenth's wording (this set still unread). A floor now; the next round needs a set of its own.
    # Its known gap, there before the round: a manager's Superseded line without its successor.
    pytest.param("supersession-blind17.yaml", Floors(60, 0.56, 2, frozenset({"b17-c076"}), needs_model=True),
                 id="supersession-blind17"),
    # The round of tastes by their kind (dream/tastes.py) and corrections by the held value's
    # kind (retold.corrected_value) raised the rows above (3rd 53, 6th 28, 7th 36, 8th 34, 9th
    # 38, 10th 30, 12th 40, 13th 33, 14th 35, 15th 25, 16th 40, 17th 41 of 72) with no false one
    # more but the fifth's spelling. Eighteenth: written blind at that round's start; 27 of 72
    # (0.375), 6 false before it (ae0c067), 32 of 72 (0.444), 8 false after it, still unread (the
    # round's generalisation figure; its two new "false" are real changes the label writes
    # otherwise: "americanos" for "black americano", "Evernote for lesson notes"). Then read:
    # 40 of 72 (0.556), 6 false. Its known gap, there before the round: a Superseded line of a
    # number without its successor.
    pytest.param("supersession-blind18.yaml", Floors(60, 0.55, 6, frozenset({"b18-c037"}), needs_model=True),
                 id="supersession-blind18"),
]


@pytest.mark.parametrize("name, floors", SETS)
def test_a_supersession_set_keeps_its_floors(name: str, floors: Floors) -> None:
    """Dream over every memory of the set: recall no lower and false supersessions no more
    than measured, and every view of every memory (but the set's known gaps) agreeing with
    its records."""
    if floors.needs_model:
        from brainfs.dream import meaning

        assert meaning.available(), ("the sentence model (ONNX export) is missing: run .ci/setup "
                                     "(it exports all-MiniLM-L6-v2 into .venv/share/brainfs/onnx)")
    from benchmarks.supersession import load, run

    figs = run(load(DATA / name))
    assert figs["changes"] >= floors.min_cases and figs["no_change_cases"] >= floors.min_cases
    assert figs["false"] <= floors.false, figs["false_supersessions"]
    assert figs["recall"] >= floors.recall, figs["missed"]
    assert set(figs["view_errors"]) <= floors.view_gaps, figs["view_errors"]
