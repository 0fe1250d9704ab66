"""The relation rules by class (dream/relations.py, the lower-case self-introduction of
dream/subjects.py): each class in more than one wording, with the near misses that must
state nothing or something else. Pure functions: no model, no mount."""

from __future__ import annotations

import pytest

from brainfs.dream import relations as R
from brainfs.dream import subjects as S

pytestmark = pytest.mark.unit


def _got(sentence: str, antecedent: str = "") -> list[tuple[str, str, str, str]]:
    return [(r.subject, r.attr, r.value, r.op) for r in R.extract(sentence, antecedent)
            if r.attr not in ("number", "deadline")]


@pytest.mark.parametrize("sentence, role", [
    ("They finally changed my title, I'm a senior designer now.", "senior designer"),
    ("As of this month I'm a staff engineer again.", "staff engineer"),
    ("I'm a ward manager these days.", "ward manager"),
    ("Got promoted to head chef last Friday!!", "head chef"),
    ("Finally got promoted to lead developer.", "lead developer"),
])
def test_a_title_the_speaker_now_holds(sentence: str, role: str) -> None:
    assert ("", "role", role, "set") in _got(sentence)


@pytest.mark.parametrize("sentence", [
    "I'm a vegetarian now.",
    "I'm a morning person now.",
    "I'm also a union rep now, on top of my shifts.",  # one more role, not another
    "I'm a big fan of the new layout now.",
])
def test_no_title_from_what_is_no_occupation_or_an_addition(sentence: str) -> None:
    assert not [g for g in _got(sentence) if g[1] == "role"]


@pytest.mark.parametrize("sentence, who, role, org", [
    ("Lucia Ferreira is head of sales at Tidewater Foods.", "Lucia Ferreira", "head of sales", "Tidewater Foods"),
    ("Lucia Ferreira became chief operating officer at Tidewater Foods in April.", "Lucia Ferreira",
     "chief operating officer", "Tidewater Foods"),
    ("Omar Haddad was appointed director of research at Kiln Institute.", "Omar Haddad",
     "director of research", "Kiln Institute"),
])
def test_a_third_persons_title_without_an_article(sentence: str, who: str, role: str, org: str) -> None:
    got = _got(sentence)
    assert (who, "role", role, "set") in got and (who, "employer", org, "set") in got


def test_a_third_person_promotion_and_an_introduction_without_a_verb() -> None:
    assert ("Jonas Falk", "role", "senior data engineer", "set") in _got(
        "Jonas Falk got promoted to senior data engineer.")
    got = _got("Bjorn Halvorsen, welder at Skagen Shipyard.")
    assert ("Bjorn Halvorsen", "employer", "Skagen Shipyard", "set") in got
    assert ("Bjorn Halvorsen", "role", "welder", "set") in got
    # "I'm X, a Y at Z" is the speaker's (first person), never a subject "I'm X"
    assert all(not g[0].startswith("I") for g in _got("I'm Tove Eriksen, a hydrographer at Nordlys Geodata."))


@pytest.mark.parametrize("sentence, org", [
    ("I was made redundant at Copperline Print in February.", "Copperline Print"),
    ("We got laid off from Harbour Print last week.", "Harbour Print"),
    ("I lost my job at Velo Couriers.", "Velo Couriers"),
])
def test_losing_a_job_ends_the_employer(sentence: str, org: str) -> None:
    assert ("", "employer", org, "end") in _got(sentence)


def test_been_working_for_is_the_employer() -> None:
    assert ("", "employer", "Ashgrove Council", "set") in _got(
        "Since last Monday I've been working for Ashgrove Council, in their print unit.")


def test_a_new_manager_named_after_a_comma() -> None:
    assert ("", "manager", "Samuel Owusu", "set") in _got("I've got a new line manager, Samuel Owusu.")
    assert ("", "manager", "Dana Levi", "set") in _got("We have a new boss: Dana Levi.")


def test_a_he_or_she_works_where_the_name_before_it_works() -> None:
    """"She's with X now" / "he works for X": the person named before (extract.py finds
    them where needs_antecedent points); not after a noun phrase of the sentence's own."""
    s = "She's with Baltic Freight Analytics now."
    assert R.needs_antecedent(s) == 0
    assert ("Sanne de Vries", "employer", "Baltic Freight Analytics", "set") in _got(s, "Sanne de Vries")
    s = "Our vendor rep is Tomasz Nowak, he works for Gridline Systems."
    assert R.needs_antecedent(s) == s.index("he works")
    assert ("Tomasz Nowak", "employer", "Gridline Systems", "set") in _got(s, "Tomasz Nowak")
    assert all(r.inferred for r in R.extract(s, "Tomasz Nowak") if r.subject == "Tomasz Nowak")
    for s in ("My sister changed jobs, she's at Kraken Games now.",
              "My sister changed jobs, she's with Kraken Games now.",
              "He's at Heathrow now.",  # where someone is, not where they work
              "If she joined Kraken Games she'd earn more."):
        assert R.needs_antecedent(s) is None, s
        assert not [g for g in _got(s, "Ana Lopes") if g[0] == "Ana Lopes"], s


@pytest.mark.parametrize("sentence", [
    "If I moved to Oslo I'd be closer to my sister, but that's not happening this year.",
    "If Anna moved to Leeds she'd be happier.",
    "Unless I work at Cobalt Air next year, nothing changes.",
    "I wish I lived in Lisbon.",
    "Suppose the CPU alert threshold is 90 percent, what happens?",
])
def test_nothing_holds_inside_a_condition_or_a_wish(sentence: str) -> None:
    assert R.extract(sentence) == []


def test_a_name_never_runs_into_a_contraction_of_I() -> None:
    (r,) = [r for r in R.extract("We moved to Oslo I'd say in May.") if r.attr == "home"]
    assert r.value == "Oslo"


def test_a_setting_is_keyed_by_what_it_sets() -> None:
    """Two thresholds that share only a word ("alert") are two; a name in front of the
    quantity ("For the Harbour Survey …") is whose it is."""
    def key(s: str) -> str:
        (r,) = [r for r in R.extract(s) if r.attr == "number"]
        return r.key
    cpu, mem = key("The CPU alert threshold is 80 percent."), key("The memory alert threshold is 70 percent.")
    assert not R.same_key(cpu, mem)
    assert R.same_key(cpu, key("We raised the CPU alert threshold to 90 percent yesterday."))
    assert R.same_key(key("The fall-risk score threshold is 45."), key("The fall-risk threshold is 40."))
    a = key("For the Harbour Survey the depth tolerance is 10 cm.")
    b = key("For the River Survey the depth tolerance is 5 cm, the river bed is smoother.")
    assert not R.same_key(a, b)
    assert R.same_key(a, key("For the Harbour Survey the depth tolerance is 8 cm now."))
    # a month in front is when, not whose
    assert R.same_key(key("In March the ad budget is 2000 euros."), key("The ad budget is 3500 euros."))


def test_a_minimum_or_maximum_named_by_what_it_bounds() -> None:
    got = [(r.value, r.key) for r in R.extract("The minimum order for wholesale is 50 metres.") if r.attr == "number"]
    assert got == [("50 metres", "min|order wholesale")]
    (new,) = [r for r in R.extract("The minimum order for wholesale is 40 metres, not 50 metres.") if r.attr == "number"]
    assert R.same_key(new.key, got[0][1]) and new.value == "40 metres"
    # a head noun of its own is read once, by that noun
    assert [r.key for r in R.extract("The maximum temperature is 30 degrees.") if r.attr == "number"] == \
        ["temperature|maximum"]


def test_habits_and_deliveries_as_preferences() -> None:
    assert ("", "preference", "green tea", "set") in _got("I always have green tea in the afternoon.")
    assert ("", "preference", "green tea", "end") in _got("I've gone off green tea, the caffeine keeps me up.")
    assert not _got("I always have trouble sleeping.")
    a = [r for r in R.extract("Please send the monthly reports as Word documents.") if r.attr == "preference"]
    b = [r for r in R.extract("Change of plan, I prefer the monthly reports as PDF from now on.")
         if r.attr == "preference"]
    assert [r.value for r in a] == ["monthly reports as Word documents"]
    assert [r.value for r in b] == ["monthly reports as PDF"] and a[0].key == b[0].key
    # a file format is a format, not a preference
    assert [r.attr for r in R.extract("Send the reports as PDF, please.")] == ["format"]


def test_the_speaker_as_a_projects_lead() -> None:
    got = _got("I'm the lead on the Onboarding Revamp now.")
    assert got == [("Onboarding Revamp", "lead", R.SELF, "set")]
    assert ("Onboarding Revamp", "lead", "Chidi Okeke", "set") in _got(
        "The lead on the Onboarding Revamp is Chidi Okeke.")


def test_a_full_name_written_in_lower_case() -> None:
    assert S.self_names([("Mateo", "hi, mateo ruiz here."), ("Assistant", "Hello Mateo!")], set()) == \
        {"Mateo": "Mateo Ruiz"}
    assert S.self_names([("Mateo", "i'm mateo ruiz.")], set()) == {"Mateo": "Mateo Ruiz"}
    # the speaker's name as a word of another sentence is no introduction
    assert S.self_names([("Will", "Sure, will do."), ("Will", "will check here later")], set()) == {}
    assert S.self_names([("Mateo", "mateo again here.")], set()) == {}


def test_with_someone_is_no_employer() -> None:
    """"She's with Tom Hansen now" (whom she is with) ends no job and starts none; "she's
    with Baltic Freight Analytics now" does: dream over a two-session memory."""
    from benchmarks.supersession import run

    def case(id_: str, now: str) -> dict:
        return {"id": id_, "sessions": [
            {"date": "2026-01-10", "turns": ["Ola: I'm Ola Berg. My friend Ingrid Solberg works at Fjord Labs.",
                                             "Assistant: Noted."]},
            {"date": "2026-03-10", "turns": [f"Ola: Ingrid Solberg left Fjord Labs last month. She's with {now} now.",
                                             "Assistant: Nice."]}],
            "expect": {"subject": "ingrid-solberg", "attribute": "employer", "old": "Fjord Labs",
                       "new": None if now == "Tom Hansen" else now}}
    figs = run({"changes": [case("with-a-person", "Tom Hansen"), case("with-a-company", "Baltic Freight Analytics")],
                "no_change": []})
    assert figs["false"] == 0, figs["false_supersessions"]
    assert figs["true"] == 2, figs["missed"]
