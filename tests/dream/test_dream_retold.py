"""A value said again in other words (dream/retold.py): once the memory holds a value, a later
sentence that says a change and names a value of the same kind replaces it — a weekly distance,
a due date, a trip's month, a phone, a format, a manager, a lead, an employer, a home, a title —
and a request that says it in passing ("can you redo the form with my new number …") counts.
With the near misses that must replace nothing: someone else's change, a plan, a refusal, a
history, a second value of the kind. Dream runs on small trees, no mount."""

from __future__ import annotations

import pytest

from brainfs.benchmarks.supersession import tree_of
from brainfs.cache.facts.records import FACTS_PATH, loads
from brainfs.dream import quantities, retold
from brainfs.dream.core import DictTree, dream
from brainfs.dream.facts import check_views
from brainfs.dream.relationrecord import SELF

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("attr, old, text, new", [
    ("number", "30 km a week", "signed up for a marathon so I'm bumping my weekly mileage up to 45 km from now on.",
     "45 km a week"),
    ("number", "£300 a month", "got a raise!! so I'm putting away £450 a month from July instead.", "£450 a month"),
    ("number", "4 coffees a day", "cut down: 2 coffees a day max now (was 4)", "2 coffees a day"),
    ("deadline", "30 April", "journal moved my deadline to 21 May", "21 May"),
    ("trip", "Lisbon in May", "my sister can't get time off in May so we moved Lisbon to September.",
     "Lisbon in September"),
    ("trip", "Lisbon 12-19 April", "we moved Lisbon to 3-10 May, cheaper flights.", "Lisbon on 3-10 May"),
    ("trip", "Zanzibar in March", "the hotel had a flood so we moved Zanzibar to the end of April.",
     "Zanzibar in late April"),
    ("contact", "024 553 8871", "my new number is 055 219 0364, the old phone died", "055 219 0364"),
    ("contact", "rafal.walks@pawmail.pl", "use my new address in the signature please: hello@szymanskidogs.pl",
     "hello@szymanskidogs.pl"),
    ("format", "CSV", "from now on send the tables as Excel instead of csv", "Excel"),
    ("manager", "Marguerite Lam", "my new boss Teodor Vasilescu hates long reports.", "Teodor Vasilescu"),
    ("manager", "Dorota Wilk", "had my first 1:1 with my new manager yusuf demir today.", "Yusuf Demir"),
    ("lead", "Amara Obi", "amara handed Kestrel over to Felipe Rocha this week.", "Felipe Rocha"),
    ("lead", "Ama Owusu", "ama has gone on to finance so jonas lund is running kingfisher now.", "Jonas Lund"),
    ("lead", "Nadia Petrova", "Nadia's leaving and I'm taking over Heron as lead from Monday.", SELF),
    ("employer", "Lumefield Studio", "ok so first week at Oxbow Labs and the onboarding wiki is 200 pages",
     "Oxbow Labs"),
    ("employer", "Hartwell Freight", "i joined corvane shipping this week after 6 yrs at hartwell.",
     "Corvane Shipping"),
    ("home", "Galway", "im in cork now (left galway in april).", "Cork"),
    ("home", "Amsterdam", "the commute from my new flat in Utrecht is 25 min by train", "Utrecht"),
    ("role", "pastry cook", "so as the new head of pastry I now do the ordering too", "head of pastry"),
    ("role", "data analyst", "starting as data engineer on monday.", "data engineer"),
    ("trip", "Rome in May", "going to naples instead.", "Naples"),
    ("trip", "Zanzibar in September", "trip is Mauritius now", "Mauritius"),
    ("project", "Hollybrook School extension", "quick q for the Marlow Street library build I'm on now: curing time?",
     "Marlow Street"),
    ("project", "Atlas", "they moved me off atlas onto Beacon (the notifications service) this sprint.", "Beacon"),
])
def test_a_later_value_of_the_kind_held_is_read(attr: str, old: str, text: str, new: str) -> None:
    # what the value is of, as dream keys it: a saving, a project's name
    about = {"£300 a month": "amount saved month", "Amara Obi": "Kestrel", "Ama Owusu": "Kingfisher",
             "Nadia Petrova": "Heron"}.get(old, "")
    assert retold.later_value(attr, old, text, about=about) == new


@pytest.mark.parametrize("attr, old, text", [
    # someone else's change, told by the user
    ("home", "Leeds", "My brother Sam just moved to Bristol for his new job."),
    ("home", "Norwich", "Mum sold the house and moved up to York to be near my sister."),
    ("contact", "0412 555 876", "my partner got a new number, 0433 555 219, can you update the emergency line"),
    ("employer", "Ostler Foods", "my flatmate just started at Brisk Couriers lol so now we both get up at 5"),
    ("manager", "Anneke Visser", "my sister has a new boss, Reginald Parr, and he sounds awful"),
    ("trip", "Vienna 5-9 May", "my sister moved her Vienna trip to June, so we won't overlap"),
    # a plan, a wish, a refusal, a history
    ("home", "Leeds", "if I moved to Bristol I'd be nearer my sister"),
    ("deadline", "16 May", "Asked the client to push to 30 May and they said no."),
    ("deadline", "8 May", "colleague told me the print deadline was originally 1 May"),
    ("employer", "Acme", "I might switch to Globex next year"),
    ("number", "30 km a week", "thinking of bumping it up to 45 km a week"),
    ("deadline", "30 April", "the dentist moved my appointment to 5 May"),
    # no change said, or a second value of the kind
    ("contact", "024 553 8871", "my sister's number is 055 219 0364"),
    ("deadline", "30 April", "the launch party is on 3 May and the review on 9 May, moved both"),
    ("manager", "Marguerite Lam", "my new manager is great lol"),
    ("home", "Leeds", "I moved to the suburbs now"),
    ("employer", "Acme", "I joined the book club now"),
    ("role", "teacher", "I'm a bit tired now"),
    ("role", "senior buyer", "Big change, I'm over at Fennick Wholesale now."),
    ("home", "Oxford", "our office moved to Reading, so now I commute from Oxford."),
    ("manager", "Robert Lang", "Lily Chen, who sits next to me, now reports to Dominic Hale."),
    ("trip", "Japan on 4 October to 18 October", "We moved the Japan trip to November, the 8th to the 22nd."),
    ("manager", "Thorsten Abiodun", "Thorsten has a new boss, Yevgenia Marsh, so she's my skip-level now."),
    ("home", "Lyon", 'can you proofread this: "I have recently moved to Marseille and request my deposit back."'),
    ("home", "Lyon", "translate to french: I've moved to Marseille and love it"),
    ("number", "£300 a month", "my gym membership is now £40 a month"),
    ("trip", "Lisbon in May", "the Lisbon festival got moved to June so we'll miss it"),
    ("trip", "Lisbon in June", "now that Lisbon is booked I may finally relax"),
    ("role", "data analyst", "i'm now a dog owner, meet Biscuit"),
    ("manager", "Dana Levi", "my new manager is Dana Levi's boss, Tom Reed, for this project only"),
    ("format", "PDF", "my thesis is now in LaTeX, finally!"),
    ("contact", "024 553 8871", "new dentist number is 020 7946 0018, can you save it"),
    ("employer", "Acme Corp", "working at Costa now for the afternoon, wifi is better"),
    ("home", "Leeds", "i'm in london now for a work trip, back friday"),
    ("project", "Atlas", "my sister is on Beacon now"),
    ("trip", "Rome in May", "my sister is going to Naples instead of Rome"),
    ("role", "senior analyst", "My deskmate Yusuf Ali got promoted to principal analyst. I'm happy for him."),
    ("deadline", "31 January", "my colleague got an extension to 14 February for his report, lucky him."),
    ("trip", "Mendoza on 14-21 September", "thought about moving the Mendoza trip to October but no, keeping it"),
    ("trip", "Zanzibar on 18 July", "was tempted to push Zanzibar to September because of work, but nope"),
    ("contact", "091 555 0334", "the plumber sent this: 'Questions: Darko, 098 555 0712, new number.'"),
    ("contact", "091 555 0334", "new notice pls: the bins go out on tuesday (2026-05-05) now"),
])
def test_near_misses_replace_nothing(attr: str, old: str, text: str) -> None:
    assert retold.later_value(attr, old, text) is None


@pytest.mark.parametrize("text", [
    "Tom handed the Kestrel slides over to Priya Shah for formatting",
    "on Kestrel, Priya Shah is now leading the testing workstream",
    "I handed my Kestrel tasks to Priya Shah",
])
def test_a_lead_is_given_the_project_not_a_part_of_it(text: str) -> None:
    assert retold.later_value("lead", "Tom Price", text, own=False, about="Kestrel") is None


def test_what_the_value_is_of_must_not_be_another_thing() -> None:
    """A due date moves when the sentence calls it the deadline, "it" or by its own words; a
    format changes for the output the sentence speaks of, not another one."""
    assert retold.later_value("deadline", "30 April", "they moved the audit report to 6 May", about="audit report") == "6 May"
    assert retold.later_value("deadline", "30 April", "my editor pushed it back to 6 May") == "6 May"
    assert retold.later_value("deadline", "30 April", "the gala moved to 6 May", about="audit report") is None
    text = "Marcus wants his reports as PDF now, not docx."
    assert retold.later_value("format", "docx", text, about="report") == "PDF"
    assert retold.later_value("format", "docx", text, about="draft") is None


@pytest.mark.parametrize("sentence, value, key", [
    ("I run about 25 km per week.", "25 km per week", "rate|distance week"),
    ("I'm saving $250 a week for a house deposit.", "$250 a week", "rate|amount saved week"),
    ("I'm trying to hit 10,000 steps a day.", "10,000 steps a day", "rate|number of steps day"),
    ("I drink four coffees a day and want to know if that's fine.", "4 coffees a day", "rate|number of coffees day"),
    ("I do 1000 words a day before work.", "1000 words a day", "rate|number of words day"),
])
def test_a_rate_the_speaker_keeps_is_a_number(sentence: str, value: str, key: str) -> None:
    assert [(r.value, r.key) for r in quantities.rates(sentence)] == [(value, key)]


@pytest.mark.parametrize("sentence", [
    "I used to run 50 km a week", "my son runs 10 km a week", "if I saved $100 a week how long would it take",
    "I might spend £40 a month on it",
])
def test_no_rate_of_someone_else_a_past_or_a_condition(sentence: str) -> None:
    assert quantities.rates(sentence) == []


def test_a_weekly_distance_cut_in_other_words_replaces_the_old_one() -> None:
    staged = _dream([
        ("2026-01-18", ["Lars: Hi, Lars Eriksen. I run about 25 km per week. Can you build me a plan?",
                        "Assistant: Sure."]),
        ("2026-03-22", ["Lars: bit of a setback, physio says max 15 km a week for now because of my achilles.",
                        "Assistant: Adjusted."]),
    ])
    assert _closed(staged, "number") == [("lars-eriksen", "25 km per week", "15 km a week")]
    assert check_views(staged) == []


@pytest.mark.parametrize("attr, old, text", [
    ("employer", "Larkspur Pharmacy Group", "got made redundant from Larkspur last week. no job lined up yet."),
    ("role", "product owner", "the reorg abolished my product owner role."),
    ("manager", "Brenda Haas", "brenda left on friday and they haven't named anyone, so I report to nobody rn."),
    ("lead", "Greta Lindgren", "greta stepped down from leading orion data migration. no lead for now"),
    ("contact", "+31 6 1234 5678", "i got rid of my phone number entirely, digital detox lol."),
    ("number", "10,000 steps a day", "i ditched the step goal completely, it was making me anxious"),
    ("deadline", "2026-09-01", "client said there's no fixed launch date anymore, just whenever it's ready."),
    ("format", "PDF", "don't worry about PDF anymore, i stopped printing stuff."),
    ("preference", "running", "honestly I'm done with running, the joy's gone."),
    ("project", "Cedar CRM rollout", "the Cedar CRM rollout got cancelled"),
    ("trip", "Iceland in July", "cancelled Iceland, not going anywhere this summer, money's tight."),
])
def test_a_value_ended_with_nothing_in_its_place(attr: str, old: str, text: str) -> None:
    assert retold.ended(attr, old, text)


@pytest.mark.parametrize("attr, old, text", [
    ("trip", "Iceland in July", "my sister cancelled Iceland"),
    ("project", "Cedar CRM rollout", "if the Cedar CRM rollout got cancelled we would be fine"),
    ("manager", "Brenda Haas", "brenda left early today, she had a dentist appointment"),
    ("contact", "024 553 8871", "I cancelled my gym membership"),
    ("employer", "Larkspur Pharmacy Group", "my brother got laid off from Larkspur"),
    ("number", "£300 a month", "I stopped the Netflix plan"),
    ("deadline", "30 April", "there is no parking at the venue"),
])
def test_no_end_in_someone_elses_a_conditional_or_an_outing(attr: str, old: str, text: str) -> None:
    assert not retold.ended(attr, old, text)


def test_a_cancelled_trip_is_closed_with_no_successor() -> None:
    staged = _dream([
        ("2026-02-13", ["Magdalena: Hi, Magdalena Wojcik. I'm planning a trip to Iceland in July. What should I pack?",
                        "Assistant: Layers."]),
        ("2026-05-10", ["Magdalena: cancelled Iceland, not going anywhere this summer, money's tight.",
                        "Assistant: Sorry to hear."]),
    ])
    assert [(s, old, new) for s, old, new in _closed(staged, "trip")] == [("magdalena-wojcik", "Iceland in July", None)]
    assert check_views(staged) == []


def _dream(turns: list[tuple[str, list[str]]]) -> dict[str, str]:
    return dream(DictTree(tree_of({"sessions": [{"date": d, "turns": t} for d, t in turns]}))).staged


def _closed(staged: dict[str, str], attr: str) -> list[tuple[str, str, str | None]]:
    recs = loads(staged.get(FACTS_PATH, ""))
    by_id = {r.id: r for r in recs}
    return [(r.subject, r.value, by_id[r.superseded_by].value if r.superseded_by else None)
            for r in recs if r.attribute == attr and not r.is_open]


def test_a_request_that_names_a_new_number_in_passing_replaces_the_old_one() -> None:
    """The number is said only inside a request, which dream keeps as no fact: as an aside it
    still closes the old number, on the page and in the records, and every view agrees."""
    staged = _dream([
        ("2026-01-10", ["Efua: Hi, I'm Efua Mensah, I run a small bakery. My phone is 024 553 8871.",
                        "Assistant: Nice to meet you, Efua."]),
        ("2026-03-02", ["Efua: can you redo the order form with my new number 055 219 0364 and add an allergy field?",
                        "Assistant: Done."]),
    ])
    assert _closed(staged, "contact") == [("efua-mensah", "024 553 8871", "055 219 0364")]
    page = staged["knowledge/efua-mensah.md"]
    now, _, superseded = page.partition("## Superseded")
    assert "055 219 0364" in now and "024 553 8871" in superseded
    assert check_views(staged) == []


def test_a_brothers_move_and_a_refused_delay_leave_the_values_standing() -> None:
    staged = _dream([
        ("2026-01-22", ["Nadine: Nadine Fairweather. I live in Leeds. My report is due 16 May.",
                        "Assistant: Noted."]),
        ("2026-03-26", ["Nadine: My brother Sam just moved to Bristol for his new job.",
                        "Nadine: Asked the client to push the report to 30 May and they said no.",
                        "Assistant: Sorry to hear."]),
    ])
    assert _closed(staged, "home") == [] and _closed(staged, "deadline") == []


def test_a_deadline_moved_in_other_words_is_current_on_the_page_under_the_name_the_sentence_uses() -> None:
    """The new due date's line names the thing as the sentence that moved it does ("the
    deadline"), so verification keeps it: the page's current part carries the new date."""
    staged = _dream([
        ("2026-03-03", ["Anjali: Hi, Anjali Rao here. My article for the Journal of Coastal Processes is due 30 April.",
                        "Assistant: Good luck."]),
        ("2026-04-12", ["Anjali: phew, the journal pushed it back, so 21 May now!", "Assistant: Great."]),
    ])
    assert _closed(staged, "deadline") == [("anjali-rao", "30 April", "21 May")]
    now = staged["knowledge/anjali-rao.md"].partition("## Superseded")[0]
    assert "21 May" in now
    assert check_views(staged) == []


@pytest.mark.parametrize("attr, old, text, about, subject, new", [
    ("employer", "Nile Crescent Bank", "Nile Crescent is out. Sahel Trust Finance since June.", "", "Ahmed Farouk",
     "Sahel Trust Finance"),
    ("role", "QA analyst", "Piotr is test lead now, not QA analyst", "", "Piotr Zielinski", "test lead"),
    ("role", "staff nurse", "Mia: charge nurse now", "", "Mia Lee", "charge nurse"),
    ("home", "Guadalajara", "not Guadalajara — Monterrey since April", "", "Rafael Mendoza", "Monterrey"),
    ("number", "25 km a week", "weekly km target 40 now", "", "", "40 km a week"),
    ("number", "2 litres", "water goal 2.5 L not 2", "", "", "2.5 L"),
    ("deadline", "12 March", "portfolio: 26 March", "portfolio", "", "26 March"),
    ("project", "Ridgeline survey", "Nomvula — moved to the Coastal Wetlands study", "", "Nomvula Khumalo",
     "Coastal Wetlands study"),
    ("project", "Juniper", "not Juniper anymore, Foxglove", "", "Arash Tehrani", "Foxglove"),
    ("manager", "Laura Kessler", "update: manager is Dev now", "", "Minh Tran", "Dev"),
])
def test_a_correction_gives_a_value_of_the_kind_held(attr: str, old: str, text: str, about: str, subject: str,
                                                      new: str) -> None:
    """A correction typed to fix the memory says a change by being one: the value of the held
    one's kind it names replaces it when it says the old one is gone or names the attribute."""
    assert retold.corrected_value(attr, old, text, about, subject) == new


@pytest.mark.parametrize("attr, old, text, subject", [
    ("home", "Leeds", "Ana works at Kestrel now, not Brattvold", "Ana Lopes"),  # another attribute's fix
    ("lead", "Laura Kessler", "update: manager is Dev now", "Heron"),
    ("role", "analyst", "thanks, that is all for now", "Ana Lopes"),
    ("employer", "Acme", "might move to Globex if the offer comes through", "Ana Lopes"),  # a plan
    ("number", "25 km a week", "weekly km target 40 on weekdays and 60 in the holidays", ""),  # two numbers
])
def test_a_correction_about_something_else_gives_nothing(attr: str, old: str, text: str, subject: str) -> None:
    assert retold.corrected_value(attr, old, text, "", subject) is None


def test_a_correction_in_quick_fix_words_closes_the_old_value_on_every_view() -> None:
    case = {"sessions": [
        {"date": "2026-01-15", "turns": ["Ahmed: Hello, Ahmed Farouk, credit analyst at Nile Crescent Bank. "
                                         "Can you make a loan checklist?", "Assistant: Here it is."]},
        {"date": "2026-06-20", "turns": ["Ahmed: Could you rewrite that checklist for microfinance clients?",
                                         "Assistant: Sure."]}],
        "corrections": [{"date": "2026-06-21", "text": "Nile Crescent is out. Sahel Trust Finance since June."}]}
    staged = dream(DictTree(tree_of(case))).staged
    assert _closed(staged, "employer") == [("ahmed-farouk", "Nile Crescent Bank", "Sahel Trust Finance")]
    assert check_views(staged) == []


@pytest.mark.parametrize("attr, old, text, new", [
    ("role", "account executive", "so yeah I moved over from account executive to account manager last month basically "
     "same company but now I own renewals", "account manager"),
    ("role", "junior developer", "got promoted!! 🎉 senior developer as of this month. can you help me write a thank-you "
     "message to my team?", "senior developer"),
])
def test_a_value_left_for_another_in_so_many_words(attr: str, old: str, text: str, new: str) -> None:
    """"From the held value to …" said of oneself, a promotion announced with emoji between."""
    assert retold.later_value(attr, old, text) == new


@pytest.mark.parametrize("attr, old, text", [
    ("home", "Leeds", "my sister moved from Leeds to York"),  # someone else's
    ("role", "analyst", "I went from analyst to the dog park today"),  # no title after "to"
    ("home", "Busan", "I'm moving from Busan to Seoul next year"),  # a plan
    ("home", "Leeds", "I moved from Leeds Road to York Street, same city"),  # a street, not the city
    ("role", "junior developer", "Congrats to Priya on getting promoted to senior developer!"),
    ("deadline", "30 April", "the meeting about the deadline moved from 30 April to 7 May"),
])
def test_from_one_value_to_another_that_is_no_change_of_mine(attr: str, old: str, text: str) -> None:
    assert retold.later_value(attr, old, text) is None


@pytest.mark.parametrize("attr, old, text", [
    # another person's or thing's value, named in the correction
    ("employer", "Acme Corp", "correction: it's Ben who joined Globex, not Ana"),
    ("employer", "Acme Corp", "Ana's husband works at Globex, she's at Acme"),
    ("home", "Leeds", "Ana's sister moved to York"),
    ("home", "Leeds", "Ana's office moved to Manchester"),
    ("role", "data analyst", "Ben is team lead now, not Ana"),
    ("role", "data analyst", "Ana's mentor is now a principal engineer"),
    ("manager", "Dev Patel", "Ana's manager Dev Patel now reports to Priya Shah"),
    ("manager", "Dev Patel", "Dev Patel's boss is Priya Shah"),
    ("deadline", "30 April", "Ben's report is due 7 May now"),
    ("number", "30 km a week", "Ana's sister runs 40 km a week now"),
    # another quantity, another thing, an addition
    ("number", "30 km a week", "Ana ran 12 km today, new record now"),
    ("number", "30 km a week", "Ana's commute is 8 km now"),
    ("number", "30 km a week", "my weekly budget is £50 now"),
    ("project", "Juniper", "Ana moved to Leeds"),
    ("project", "Juniper", "Juniper moved to Jira last week"),
    ("project", "Juniper", "Ana also helps on the Heron project on Fridays"),
    ("home", "Leeds", "Ana moved to the Manchester team, lives in Leeds as before"),
    ("deadline", "30 April", "report draft due 20 April, final 30 April"),
    ("employer", "Acme Corp", "had a meeting at Globex today"),
    ("employer", "Acme Corp", "does Ana work at Globex now?"),
])
def test_a_correction_of_someone_or_something_else_changes_nothing(attr: str, old: str, text: str) -> None:
    """Written by a reviewer against the first version of the correction reader (145 of 245
    such corrections taken; 7 now): a correction must name the value in its attribute's slot,
    or say the held one is gone, and be the subject's own."""
    assert retold.corrected_value(attr, old, text, "report" if attr == "deadline" else "", "Ana Lopes") is None


@pytest.mark.parametrize("attr, old, text, new", [
    ("manager", "Marcos Teixeira", "new boss as of last week, Helena Duarte, marcos went to the lisbon team.", "Helena Duarte"),
    ("home", "Lyon", "Since moving to Bordeaux in September I haven't found my running rhythm.", "Bordeaux"),
    ("role", "staff nurse", "Guess who got the ward manager post!! I started in it this morning.", "ward manager"),
])
def test_a_later_value_in_the_eighteenth_sets_words(attr: str, old: str, text: str, new: str) -> None:
    """Wordings of the eighteenth set (read after it was scored blind): a new boss "as of last
    week", "since moving to", "got the … post"."""
    assert retold.later_value(attr, old, text) == new


@pytest.mark.parametrize("attr, old, text", [
    ("employer", "Hotel Verandah", "so the hotel restaurant shut for good and they let the whole kitchen go last friday. "
     "I'm not working anywhere right now."),
    ("role", "head of innovation", "They abolished the head of innovation role outright, so I have no title at the moment."),
    ("manager", "Ingrid Sørensen", "Ingrid left at the end of May and they've frozen her post, so right now I don't report "
     "to anyone at all."),
    ("contact", "lars.eriksson@fjordmail.no", "I deleted the fjordmail account entirely, too much spam."),
    ("project", "Greenway Survey", "the council cancelled the cycle path so Greenway Survey is dead."),
    ("trip", "Peru", "Had to cancel the Peru trip entirely, my mum's having surgery."),
    ("preference", "squash", "gave up squash for good after the knee surgery."),
])
def test_an_end_in_the_eighteenth_sets_words(attr: str, old: str, text: str) -> None:
    assert retold.ended(attr, old, text)


def test_someone_elses_new_post_is_no_title_of_mine() -> None:
    assert retold.later_value("role", "nurse", "my sister got the ward manager post") is None
