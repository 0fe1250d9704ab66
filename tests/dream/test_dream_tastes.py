"""Tastes read by their kind (dream/tastes.py): a first statement of what the speaker
habitually uses, drinks or does, a later value of the same kind that replaces it, and the
sentences that look like one and are not. Then through a whole dream run: the old taste
closed, the new one current."""

from __future__ import annotations

import pytest

from brainfs.dream import relations, retold, tastes
from brainfs.dream.core import DictTree, dream
from brainfs.cache.facts.records import FACTS_PATH, loads

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("sentence, value, key", [
    ("I love dark roast coffee, the darker the better.", "dark roast coffee", "preference drink"),
    ("Talofa, Sina Faleolo, frontend dev. I use VS Code for everything.", "VS Code", "preference editor"),
    ("Running is my thing, I love it.", "running", "preference exercise"),
    ("I fly a lot for work and always prefer aisle seats.", "aisle seats", "preference seat"),
    ("I'm an Earl Grey tea person, can't stand coffee.", "Earl Grey tea", "preference drink"),
    ("I only drink dark roast, the darker the better.", "dark roast", "preference drink"),
    ("I take all my notes in Notion.", "Notion", "preference notes"),
    ("I love true crime podcasts, they make my commute fly by.", "true crime podcasts", "preference podcast"),
    ("I'm a tea person, never coffee.", "tea", "preference drink"),
    ("I do my household budget in Excel, can you give me a formula?", "Excel", "preference spreadsheet"),
    ("I'm vegetarian, so any recipes you suggest should be meat-free.", "vegetarian", "preference diet"),
    ("i use vscode so give me vscode keybindings when u explain stuff", "vscode", "preference editor"),
    ("Morning runs are my thing, always first thing before work.", "morning runs", "preference run"),
    ("I'm doing keto so only low-carb recipes please", "keto", "preference diet"),
    ("We use 1Password for the family.", "1Password", "preference passwords"),
    ("I organise my whole life in Trello, so give me task lists as cards.", "Trello", "preference tasks"),
    ("i like dark mode for everything", "dark mode", "preference display"),
    ("I drink my coffee black, no sugar, no milk, ever.", "black coffee", "preference drink"),
    ("Can you suggest a dinner? I'm pescatarian.", "pescatarian", "preference diet"),
    ("I'm a runner.", "running", "preference exercise"),
    ("i swim most mornings before work", "swimming", "preference exercise"),
    ("I can't live without coffee.", "coffee", "preference drink"),
    ("I never fly without an aisle seat.", "aisle seat", "preference seat"),
    ("i'm more of a tea drinker tbh", "tea", "preference drink"),
    ("My daily driver is Arch Linux.", "Arch Linux", "preference computer"),
    ("Helvetica is my go-to font.", "Helvetica", "preference font"),
    ("Window seat every time.", "window seat", "preference seat"),
    ("I've been vegan for ten years.", "vegan", "preference diet"),
    ("I am using Obsidian for all my notes since years.", "Obsidian", "preference notes"),
])
def test_a_taste_is_read_with_its_kind(sentence: str, value: str, key: str) -> None:
    assert tastes.stated(sentence) == [(value, key)]
    # and it is a relation of the speaker's, kept under that key
    assert any(r.attr == "preference" and r.value == value and r.key == key and not r.subject
               for r in relations.extract(sentence))


@pytest.mark.parametrize("sentence", [
    "I love my kids.",
    "I love this idea, thanks.",
    "I like it.",
    "My brother loves VS Code.",
    "If I use Excel, can you help?",
    "Do you use Notion?",
    "I used to drink coffee every morning.",
    "I don't use Trello.",
    "I want to try yoga this year.",
    # a member that qualifies another noun, or a word that is also a member
    "I love coffee cake.",
    "I use running shoes for the gym.",
    "I use kosher salt for everything I cook.",
    "I love Samsung TVs, the picture is amazing.",
    "I love Boxing Day sales.",
    "I love Turkish towels at the beach.",
    "I like Notion's UI a lot.",
    "I love Georgia in the spring.",
    # for a while, for someone else, not the speaker's own
    "I'm vegetarian for Lent.",
    "I'm gluten-free for two weeks before the allergy test.",
    "I buy oat milk for my flatmate.",
    "We use Slack at work, can you draft a message for the channel.",
    "Translate this: I love coffee.",
    "Pretend I use Linux, how would I do this?",
    "Dad thinks yoga is my thing.",
    "Jira is my life this sprint, sadly.",
    "Running is bad for your knees, right?",
    "My dad is a big fan of golf.",
    "I play golf on the Wii sometimes.",
    "Whenever I drink coffee I get a migraine, so I avoid it.",
    "I work in golf, as a course manager.",
    "I'm on WhatsApp if the client needs me.",
])
def test_what_is_no_taste_of_the_speakers(sentence: str) -> None:
    assert tastes.stated(sentence) == []


@pytest.mark.parametrize("old, text, new", [
    ("dark roast coffee", "I've gone totally off dark roast, it tastes burnt to me now. I only buy light roast these days.",
     "light roast"),
    ("VS Code", "moved to neovim last month and not looking back", "neovim"),
    ("aisle seats", "prefers window seats now", "window seats"),
    ("Earl Grey tea", "Layla: coffee person now. no more Earl Grey", "coffee"),
    ("Garamond", "honestly I've gone off Garamond, it looks dated on screen. use Inter for everything now", "Inter"),
    ("Notion", "I moved everything from Notion to Obsidian over the break, I like that it's offline.", "Obsidian"),
    ("Garamond", "ok confession 😅 I'm team Helvetica now, Garamond looks so fussy on screens.", "Helvetica"),
    ("vegetarian", "started eating fish again, so I'm pescatarian now.", "pescatarian"),
    ("vscode", "i use neovim now, gave up on vscode. so vim motions pls", "neovim"),
    ("coffee", "gave up coffee entirely in april, only green tea now. can you redo the list with tea places", "green tea"),
    ("morning runs", "I've switched to evening runs since the clocks changed.", "evening runs"),
    ("1Password", "we moved the whole family over to Bitwarden, 1Password got too expensive for us.", "Bitwarden"),
    ("VS Code", "fully moved to Neovim now, uninstalled VS Code last week.", "Neovim"),
    ("dark mode", "my eye doctor says dark mode is making my halos worse so i've switched everything to light mode.",
     "light mode"),
])
def test_a_later_taste_of_the_same_kind(old: str, text: str, new: str) -> None:
    assert retold.later_value("preference", old, text) == new


@pytest.mark.parametrize("old, text", [
    ("VS Code", "my colleague switched to Neovim, I'm sticking with VS Code"),
    ("tea", "I had a coffee with Sam today, now back to work"),
    ("Notion", "my sister moved to Obsidian and won't shut up about it"),
    ("VS Code", "thinking of switching to Neovim, is it worth it?"),
    ("coffee", "the new cafe does great matcha but I'm still a coffee person"),
    ("Garamond", "the client wants Helvetica on the slides now"),
    # a thing or someone else as the subject, a one-off, a topic, an addition
    ("VS Code", "Cursor is all the rage now, is it any good?"),
    ("dark mode", "The app switched to light mode after the update."),
    ("Notion", "The new guy at work is obsessed with Obsidian."),
    ("Notion", "Priya switched to Obsidian last week."),
    ("running", "I went swimming with the kids on Sunday."),
    ("coffee", "Right now I'm drinking green tea because the coffee machine broke."),
    ("VS Code", "Now reading a book about the history of Emacs."),
    ("Excel", "Can you convert this Excel file to Google Sheets?"),
    ("Garamond", "Switched the presentation font to Helvetica for the client."),
    ("yoga", "My yoga teacher now teaches pilates too."),
    ("iPhone", "Dropped my work Pixel, the screen is cracked now."),
])
def test_no_later_taste(old: str, text: str) -> None:
    assert retold.later_value("preference", old, text) is None


@pytest.mark.parametrize("old, text, gone", [
    ("running", "honestly I'm done with running, the joy's gone.", True),
    ("true crime podcasts", "I'm done with true crime, it was giving me bad dreams.", True),
    ("keto", "ok I'm done with keto, no diet or restrictions anymore", True),
    ("running", "my brother is done with running", False),
    ("vegetarian", "I gave up being vegetarian last month, iron was too low.", True),
    ("Notion", "I stopped using Notion altogether.", True),
    ("coffee", "I don't drink coffee anymore.", True),
    # the taste's first word in something else, a one-off, a program closed
    ("running", "I quit running the team meetings, someone else chairs them now.", False),
    ("Mac", "I'm done with machine learning for this term.", False),
    ("cycling to work", "I'm done with work for today.", False),
    ("coffee", "No more coffee today, I've had four.", False),
    ("oat milk", "The cafe had no more oat milk so I went without.", False),
    ("Excel", "I quit Excel without saving and lost an hour of work.", False),
])
def test_a_taste_ended(old: str, text: str, gone: bool) -> None:
    assert retold.ended("preference", old, text) is gone


def test_an_end_and_its_successor_in_one_sentence_are_a_new_value() -> None:
    rels = [r for r in relations.extract("honestly I've gone off Garamond, it looks dated on screen. use Inter for "
                                         "everything now and update the style guide") if r.attr == "preference"]
    assert [(r.value, r.op, r.key) for r in rels] == [("Inter", "set", "preference font")]
    # an end alone stays an end
    assert [(r.value, r.op) for r in relations.extract("I've gone off Earl Grey.") if r.attr == "preference"] == [
        ("Earl Grey", "end")]


def test_a_later_taste_is_taken_up_in_many_wordings() -> None:
    for old, text, new in [("Notion", "Obsidian is my notes app now.", "Obsidian"),
                           ("VS Code", "Neovim full-time now.", "Neovim"),
                           ("Notion", "I'm an Obsidian convert.", "Obsidian"),
                           ("iPhone", "Finally switched to Android.", "Android"),
                           ("Notion", "It's all Obsidian for me now.", "Obsidian"),
                           ("Todoist", "I started using TickTick, Todoist got too expensive.", "TickTick"),
                           ("coffee", "I've become a tea drinker, who knew.", "tea")]:
        assert retold.later_value("preference", old, text) == new, text


def _session(n: int, date: str, lines: list[str]) -> str:
    body = "\n\n".join(f"[D{n}:{i}] {t}" for i, t in enumerate(lines, 1))
    return (f"---\nsession: s{n}\ndate: {date}T10:00:00\nparticipants: [\"Assistant\", \"Sina\"]\n---\n\n"
            f"# Session s{n}\n\n{body}\n")


def test_a_taste_replaced_through_a_dream_run() -> None:
    tree = DictTree({
        "sessions/s1/transcript.md": _session(1, "2026-02-23", [
            "Sina: Talofa, Sina Faleolo, frontend dev. I use VS Code for everything. Which extensions help with React?",
            "Assistant: ESLint, Prettier and the React snippets."]),
        "sessions/s2/transcript.md": _session(2, "2026-05-01", [
            "Sina: moved to neovim last month and not looking back. how do I get the same eslint setup working there?",
            "Assistant: Use nvim-lspconfig with the eslint server."]),
    })
    recs = [r for r in loads(dream(tree).staged[FACTS_PATH]) if r.attribute == "preference"]
    old = [r for r in recs if r.value == "VS Code"]
    new = [r for r in recs if r.value == "neovim"]
    assert old and not old[0].is_open and old[0].superseded_by
    assert new and new[0].is_open and new[0].subject == "sina-faleolo"


def test_a_taste_gone_off_and_its_successor_in_the_next_sentence_are_one_change() -> None:
    """"I've gone off Garamond, it looks dated. Use Inter for everything now": the end and the
    next value said in one turn close Garamond as replaced by Inter, not as ended."""
    tree = DictTree({
        "sessions/s1/transcript.md": _session(1, "2026-02-28", [
            "Sina: Hello, Sina Faleolo, I write grant proposals. I like Garamond for all my documents.",
            "Assistant: Here is a style guide."]),
        "sessions/s2/transcript.md": _session(2, "2026-05-15", [
            "Sina: honestly I've gone off Garamond, it looks dated on screen. use Inter for everything now and "
            "update the style guide", "Assistant: Done."]),
    })
    recs = [r for r in loads(dream(tree).staged[FACTS_PATH]) if r.attribute == "preference"]
    by_id = {r.id: r for r in recs}
    old = [r for r in recs if r.value == "Garamond"]
    assert old and old[0].superseded_by and by_id[old[0].superseded_by].value == "Inter"
