"""The speaker's project named with what it is ("Falcon billing", "the Riverside clinic
website"), a project that ended, a lead said without the project's name, trips dated by a
month or opened without a subject, a trip somewhere else "instead", a sentence ended by an
emoji, a run-on statement that ends asking something, and a page slug for letters a plain
fold drops. Each in wordings of its own, with near misses that must state nothing. No model,
no mount."""

from __future__ import annotations

import pytest

from brainfs.dream import projects, relations
from brainfs.dream.core import DictTree, dream
from brainfs.dream.text import sentences
from dream_helpers import records_of as _records
from dream_helpers import relations_of as _rels
from dream_helpers import transcript

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence, value", [
    ("I work on Falcon billing, the invoicing service.", "Falcon billing"),
    ("I'm on the Lumen dashboard project.", "Lumen dashboard"),
    ("I'm building the Riverside clinic website.", "Riverside clinic website"),
    ("I'm a junior iOS dev on the Orchard app (farm shop ordering).", "Orchard app"),
    ("I got moved onto Heron onboarding last week, so no more invoices", "Heron onboarding"),
    ("I build the Halla dashboards (sales reporting).", "Halla dashboards"),
    ("I work in Bogota in the project Puente Digital, it brings internet to schools.", "Puente Digital"),
    ("I work on Northwind with the ops team", "Northwind"),
])
def test_the_speakers_project_with_what_it_is(sentence: str, value: str) -> None:
    got = [r for r in _rels(sentence) if r[1] == "project"]
    assert got == [("", "project", value, "set")], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "If I work on Falcon billing next year I'll need Kotlin.",
    "My sister works on the Lumen dashboard project.",
    "Do you work on Falcon billing?",
])
def test_no_project_of_the_speaker_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "project" and not r[0]], _rels(sentence)


def test_a_project_that_ended_and_the_bench() -> None:
    got = _rels("Lumen dashboard got cancelled, budget cut, so I'm on the bench for now.")
    assert ("", "project", "Lumen dashboard", "end") in got and ("", "project", "", "end") in got, got


@pytest.mark.parametrize("sentence, want", [
    ("Tamsin Reid is the lead.", "Tamsin Reid"),
    ("The leader is Lucia Herrera.", "Lucia Herrera"),
    ("and our project lead is now Omar Haddad, who started Monday", "Omar Haddad"),
])
def test_a_lead_said_without_the_project(sentence: str, want: str) -> None:
    got = projects.unnamed_lead(sentence)
    assert got is not None and got[0] == want


@pytest.mark.parametrize("sentence", [
    "Tamsin Reid is the lead singer of a band.",
    "If Tamsin Reid were the lead we'd be fine.",
    "Who is the lead?",
])
def test_no_unnamed_lead_in(sentence: str) -> None:
    assert projects.unnamed_lead(sentence) is None


def test_a_lead_handover_and_an_end_without_the_projects_name_in_the_sentence() -> None:
    recs = _records([
        ("2026-03-04", ["Callum: hey, Callum Fraser, I'm a junior iOS dev on the Orchard app (farm shop "
                        "ordering). Tamsin Reid is the lead. how do I ask her for code review?",
                        "Assistant: Ask for a regular slot."]),
        ("2026-07-13", ["Callum: Tamsin left and the Orchard app doesn't have a lead right now, we're "
                        "winging it 🙃 how do we decide on merges without one?",
                        "Assistant: Agree on a rotation."]),
    ], "Callum", "lead")
    assert [(r.subject, r.value, r.is_open) for r in recs] == [("orchard-app", "Tamsin Reid", False)], recs


def test_a_gloss_between_a_project_and_its_lead_and_a_correction() -> None:
    assert ("Bluebell", "lead", "Ravi Menon", "set") in _rels(
        "Proj Bluebell (new claims portal) is led by Ravi Menon, he asked me for a map.")
    assert ("Puente Digital", "lead", "Marco Ferri", "set") in _rels(
        "Now the responsible of Puente Digital is Marco Ferri, Lucia went to other foundation.")


def test_a_project_change_through_dream() -> None:
    recs = _records([
        ("2026-02-02", ["Anders: Hi, Anders Nilsson, backend dev. I work on Falcon billing, the invoicing "
                        "service. How do I make invoice numbers unique?", "Assistant: Use a prefix."]),
        ("2026-05-25", ["Anders: I got moved onto Heron onboarding last week, so no more invoices. "
                        "How do I do email verification tokens?", "Assistant: Sign them."]),
    ], "Anders", "project")
    old = [r for r in recs if r.value == "Falcon billing"]
    new = [r for r in recs if r.value == "Heron onboarding"]
    assert old and new and old[0].superseded_by == new[0].id and new[0].is_open, recs


@pytest.mark.parametrize("sentence, value", [
    ("We're going to Kyoto in April for cherry blossoms.", "Kyoto in April"),
    ("Going to Rome 4-11 October with my partner.", "Rome on 4-11 October"),
    ("Moana Tuilagi, planning Lisbon 12-19 June with my mum.", "Lisbon on 12-19 June"),
    ("We're planning Vancouver for the August long weekend with the kids.",
     "Vancouver for the August long weekend"),
    ("hey. going to Vancouver for a week in September with friends.", "Vancouver for a week in September"),
])
def test_a_trip_by_month_or_without_a_subject(sentence: str, value: str) -> None:
    assert [r for r in _rels(sentence) if r[1] == "trip"] == [("", "trip", value, "set")], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "If we're going to Paris in May, what should I pack?",
    "My sister is going to Rome in June.",
    "We went to Kyoto in April last year.",
])
def test_no_trip_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "trip"], _rels(sentence)


def test_a_trip_somewhere_else_instead_replaces_the_one_planned() -> None:
    recs = _records([
        ("2026-01-08", ["Elif: Merhaba, Elif Sahin. We're going to Kyoto in April for cherry blossoms. "
                        "Which areas are best?", "Assistant: Philosopher's Path."]),
        ("2026-02-12", ["Elif: Kyoto hotels were all gone so we're doing Seoul instead, same dates. "
                        "where are the cherry blossoms there?", "Assistant: Yeouido."]),
    ], "Elif", "trip")
    old = [r for r in recs if r.value == "Kyoto in April"]
    new = [r for r in recs if r.value == "Seoul"]
    assert old and new and old[0].superseded_by == new[0].id and new[0].is_open, recs


def test_a_trip_called_off_by_its_place() -> None:
    assert ("", "trip", "", "end") in _rels("we cancelled Iceland, got the refund, money is needed for the roof")
    # an airline is no trip there: what it ends is keyed by its whole name, which no trip has
    ends = [r.key for r in relations.extract("we cancelled Iceland Air and booked Play instead") if r.op == "end"]
    assert "trip|iceland" not in ends, ends


def test_an_emoji_ends_a_sentence() -> None:
    assert sentences("the app has no lead now 🙃 how do we decide? ok ✈️ great") == [
        "the app has no lead now 🙃", "how do we decide?", "ok ✈️", "great"]


def test_a_run_on_statement_ending_in_a_request_is_read() -> None:
    recs = _records([
        ("2026-03-05", ["Deepika: Hi, Deepika Raghunathan. We're planning Vancouver for the August long "
                        "weekend with the kids. Family-friendly things to do?", "Assistant: Stanley Park."]),
        ("2026-05-18", ["Deepika: so I'm typing this by voice, we had a big family talk and my husband's cousin "
                        "is getting married so we're going to Calgary instead for the long weekend, and the "
                        "kids want dinosaurs, so can you suggest things around Calgary?",
                        "Assistant: Drumheller."]),
    ], "Deepika", "trip")
    assert [r.value for r in recs if r.is_open] == ["Calgary"], recs


@pytest.mark.parametrize("sentence, want", [
    ("my new boss stefan marinescu likes everything in bullet points, super short.", "Stefan Marinescu"),
    ("need help prepping for my midyear review with gordon pike (my manager).", "Gordon Pike"),
])
def test_a_manager_named_in_lower_case(sentence: str, want: str) -> None:
    assert ("", "manager", want, "set") in _rels(sentence), _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "my manager wants everything in bullet points",
    "my boss really likes short emails",
    "met with jo ann, my manager's wife",
])
def test_no_lower_case_manager_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "manager"], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "my landlady is Rosa Jiménez, phone +34 612 345 678.",
    "Rosa has a new mobile, +34 655 908 112, the old one is disconnected.",
])
def test_someone_elses_number_is_not_the_speakers(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "contact" and not r[0]], _rels(sentence)


def test_the_speakers_own_new_number_still_is() -> None:
    assert ("", "contact", "+34 655 908 112", "set") in _rels("I have a new mobile, +34 655 908 112.")


@pytest.mark.parametrize("sentence", [
    "Pablo is running the Ember standups this week.",
    "Pablo is running Ember this week while Keiko's at a conference.",
])
def test_running_a_meeting_or_standing_in_leads_nothing(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "lead"], _rels(sentence)


def test_a_job_kept_after_an_application_not_made_ends_nothing() -> None:
    recs = _records([
        ("2026-01-16", ["Siobhán: Hi, Siobhán Ní Bhriain, physiotherapist at Clontarf Sports Clinic. "
                        "Cues for a proper squat?", "Assistant: Knees over toes."]),
        ("2026-05-05", ["Siobhán: decided not to apply to Delphi in the end, staying at Clontarf. "
                        "can you give me a shoulder rehab progression?", "Assistant: Start with isometrics."]),
    ], "Siobhán", "employer")
    assert [(r.subject, r.value, r.is_open) for r in recs] == [
        ("siobhan-ni-bhriain", "Clontarf Sports Clinic", True)], recs


def test_the_index_never_says_an_ended_trip_as_current() -> None:
    tree = DictTree({f"sessions/s{i}/transcript.md": transcript(i, day, lines, "Hugo") for i, (day, lines) in enumerate([
        ("2026-01-10", ["Hugo: Salut, Hugo Laurent. I'm going to Iceland in March to see the northern lights. "
                        "What should I pack?", "Assistant: Layers."]),
        ("2026-02-21", ["Hugo: I cancelled the Iceland trip, my knee surgery got scheduled. Can you suggest "
                        "seated exercises?", "Assistant: Here are five."]),
    ], 1)})
    index = dream(tree).staged["knowledge/INDEX.md"]
    assert "is going to Iceland" not in index, index
    line = next(ln for ln in index.splitlines() if ln.startswith("- [[hugo-laurent]]"))
    assert "Iceland" in line, index  # the newest line that is still true, or the trip as past


def test_the_planned_trip_switched_elsewhere_in_a_question_that_says_so() -> None:
    assert [r for r in _rels("we switched the October trip to Seoul, flights were crazy.") if r[1] == "trip"] == [
        ("", "trip", "Seoul", "set")]
    recs = _records([
        ("2026-04-18", ["Aryan: hey, Aryan Kapoor. going to Vancouver for a week in September with friends. "
                        "best hikes near the city?", "Assistant: The Grouse Grind."]),
        ("2026-07-10", ["Aryan: since we're doing Montreal instead of Vancouver now, what should I pack for "
                        "september there?", "Assistant: Layers."]),
    ], "Aryan", "trip")
    assert [(r.value, r.is_open) for r in recs] == [("Vancouver for a week in September", False),
                                                   ("Montreal", True)], recs


def test_a_question_is_still_a_question() -> None:
    recs = _records([
        ("2026-04-18", ["Aryan: hey, Aryan Kapoor. going to Vancouver for a week in September with friends. "
                        "best hikes near the city?", "Assistant: The Grouse Grind."]),
        ("2026-07-10", ["Aryan: do you think we should be doing Montreal instead, what would I pack?",
                        "Assistant: Layers."]),
    ], "Aryan", "trip")
    assert [(r.value, r.is_open) for r in recs] == [("Vancouver for a week in September", True)], recs


@pytest.mark.parametrize("sentence, want", [
    ("Yusuf Demir is leading the Atlas migration and wants a rollback plan.", ("Atlas migration", "Yusuf Demir")),
    ("The Greenroof Pilot is led by Abebe Girma and he asked me for a survey.", ("Greenroof Pilot", "Abebe Girma")),
    ("Haruto Kobayashi agreed to lead Signbridge day to day.", ("Signbridge", "Haruto Kobayashi")),
    ("I lead the Condor project at Andina Pagos.", ("Condor", relations.SELF)),
])
def test_a_lead_with_what_the_project_is(sentence: str, want: tuple[str, str]) -> None:
    assert (want[0], "lead", want[1], "set") in _rels(sentence), _rels(sentence)


def test_no_lead_of_an_event_the_speaker_runs() -> None:
    assert not [r for r in _rels("I run the Berlin Marathon every year.") if r[1] == "lead"]


@pytest.mark.parametrize("sentence, want", [
    ("finally unpacked in Fukuoka! the last boxes were books.", "Fukuoka"),
    ("now that I'm a Bengaluru resident, I need to transfer my gas connection", "Bengaluru"),
])
def test_a_home_said_by_unpacking_or_residence(sentence: str, want: str) -> None:
    assert ("", "home", want, "set") in _rels(sentence), _rels(sentence)


def test_no_home_in_being_a_fan() -> None:
    assert not [r for r in _rels("I'm a Manchester United fan") if r[1] == "home"]


def test_a_manager_whose_name_holds_a_particle() -> None:
    assert ("", "manager", "Pieter de Wit", "set") in _rels("My manager Pieter de Wit wants a supplier scorecard.")


def test_a_format_said_for_its_family_replaces_the_one_standing_format_of_that_family() -> None:
    recs = _records([
        ("2026-02-04", ["Yasmin: Hi, I'm Yasmin Al-Sayed, HR officer. Please send me the onboarding checklist as "
                        "a PDF, that's what I always need.", "Assistant: Here it is."]),
        ("2026-03-01", ["Yasmin: I want my charts as PNG from now on.", "Assistant: Noted."]),
        ("2026-05-07", ["Yasmin: actually make it docx from now on, my team wants to edit everything. can you "
                        "redo the leave policy summary?", "Assistant: Sure."]),
    ], "Yasmin", "format")
    pdf = [r for r in recs if r.value == "PDF"]
    docx = [r for r in recs if r.value == "docx"]
    png = [r for r in recs if r.value == "PNG"]
    assert pdf and docx and pdf[0].superseded_by == docx[0].id and docx[0].is_open, recs
    assert png and png[0].is_open, recs  # an image format stays beside a document format


def test_a_speakers_surname_with_a_particle_names_their_page() -> None:
    recs = _records([
        ("2025-11-18", ["Ilse: Hoi! Ilse de Vries. I like my notes in Markdown, with headers, please.",
                        "Assistant: Will do."]),
        ("2026-02-10", ["Ilse: The new notes app shows Markdown as raw symbols, so please just plain text "
                        "from now on.", "Assistant: Plain text it is."]),
    ], "Ilse", "format")
    assert {r.subject for r in recs} == {"ilse-de-vries"}, recs


def test_a_question_that_asks_for_a_standing_format_changes_it() -> None:
    recs = _records([
        ("2026-02-26", ["Lars: Hej, Lars Eriksson, ecology postdoc. Please give me the plotting code so the "
                        "figures save as PNG, that's what I use for everything.", "Assistant: Here it is."]),
        ("2026-05-18", ["Lars: can all the charts be svg going forward? the pngs looked blurry on the poster.",
                        "Assistant: Sure."]),
        ("2026-05-20", ["Lars: would the figures look better as PDF?", "Assistant: Perhaps."]),
    ], "Lars", "format")
    # a question about a format that asks for nothing from now on changes nothing
    assert [(r.value, r.is_open) for r in recs] == [("PNG", False), ("SVG", True)], recs


@pytest.mark.parametrize("sentence, want", [
    ("we pushed the launch to 12 June, apple review plus a payment bug.", ("deadline|launch", "12 June")),
    ("Our app launch is 15 May.", ("deadline|app launch", "15 May")),
    ("they brought the portfolio deadline forward to 13 January.", ("deadline|portfolio", "13 January")),
])
def test_a_date_kept_by_what_it_dates(sentence: str, want: tuple[str, str]) -> None:
    got = [(r.key, r.value) for r in relations.extract(sentence) if r.attr == "deadline"]
    assert got == [want], got


@pytest.mark.parametrize("sentence", [
    "If we pushed the launch to 12 June, would it help?",
    "The launch of her book is 3 May.",
])
def test_no_date_kept_in(sentence: str) -> None:
    assert not [r for r in relations.extract(sentence) if r.attr == "deadline"]


def test_a_launch_pushed_back_replaces_its_date() -> None:
    recs = _records([
        ("2026-02-10", ["Hana: Hi, Hana Novak, product manager in Brno. Our app launch is 15 May. Can you make a "
                        "launch checklist?", "Assistant: Here it is."]),
        ("2026-04-16", ["Hana: we pushed the launch to 12 June, apple review plus a payment bug. can you shift "
                        "the checklist dates?", "Assistant: Done."]),
    ], "Hana", "deadline")
    assert [(r.value, r.is_open) for r in recs] == [("15 May", False), ("12 June", True)], recs


@pytest.mark.parametrize("sentence, value", [
    ("I'm writing a fantasy novel set on a tidal island.", "fantasy novel"),
    ("I'm building a habit tracker app for nurses in React.", "habit tracker app"),
    ("I'm painting the Quayside mural, 8 metres of it.", "Quayside mural"),
    ("I coach on Sundays, currently running the Millbrook allotment garden.", "Millbrook allotment garden"),
    ("my supervisor put me on a peatland carbon project instead.", "peatland carbon project"),
    ("On the Larchwood extension at the moment, need a snag list.", "Larchwood extension"),
    ("we just started on the Tanner Row renovation tuesday.", "Tanner Row renovation"),
    ("All my weekends go into recording a podcast about jazz now.", "podcast"),
])
def test_a_project_of_ones_own_named_by_what_it_is(sentence: str, value: str) -> None:
    assert [r for r in _rels(sentence) if r[1] == "project"] == [("", "project", value, "set")], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "I'm writing a report for my manager.",          # a task, not a project
    "I'm making a cake for Saturday.",
    "If I'm writing a novel next year I'll need a desk.",
    "My brother is building a game in Godot.",
    "On the train at the moment, sorry.",
    "I'm doing the garden this weekend.",             # a chore
    "I'm running the shop for my dad today.",        # an errand
    "On the project at the moment but can chat later.",
    "I finished the novel last night, what an ending.",   # read, not written
    "We finished the game at 2am.",
    "I dropped the app, it kept crashing.",
])
def test_no_project_of_ones_own_in(sentence: str) -> None:
    assert not [r for r in _rels(sentence) if r[1] == "project"], _rels(sentence)


@pytest.mark.parametrize("sentence", [
    "my trip is in June, right?",                    # a month is no place
    "My work trip is to Berlin on 3 June.",          # another trip, not the planned one sent elsewhere
])
def test_no_trip_sent_elsewhere_in(sentence: str) -> None:
    assert not [r for r in relations.extract(sentence) if r.attr == "trip" and r.detail == "instead"]


def test_a_project_of_ones_own_ended_by_its_last_words() -> None:
    recs = _records([
        ("2026-02-01", ["Ruth: Hi, Ruth Abara. I'm writing a historical novel about Lagos in the 1950s. "
                        "How do I outline chapter one?", "Assistant: Start with a scene."]),
        ("2026-06-03", ["Ruth: I've shelved the novel for now. Now that it's done, all my evenings go into "
                        "setting up a book club at the library. What should we read first?",
                        "Assistant: Something short."]),
    ], "Ruth", "project")
    # "the novel" ends "historical novel"; a book club is no project head, so nothing replaces it
    assert [(r.value, r.is_open, r.superseded_by) for r in recs] == [("historical novel", False, None)], recs


def test_an_app_killed_ends_the_project_with_no_successor() -> None:
    recs = _records([
        ("2026-03-01", ["Tomi: hey, Tomi Lehto. I'm building a recipe app for my flatmates. How do I "
                        "store the recipes offline?", "Assistant: Use SQLite."]),
        ("2026-05-20", ["Tomi: killed the recipe app, nobody used it. what board games are good for 5?",
                        "Assistant: Codenames."]),
    ], "Tomi", "project")
    assert [(r.value, r.is_open, r.superseded_by) for r in recs] == [("recipe app", False, None)], recs
