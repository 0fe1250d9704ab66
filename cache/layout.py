"""Where things live in a memory tree, written down once.

A memory is a tree of Markdown files (``cache/FORMAT.md`` gives the transcript's format,
``dream/README.md`` the wiki's). The mount, the search index, the context page, dream and
the tools all name the same folders and files; they take the names from here, so that the
layout is read in one place and a path is never spelled twice::

    GUIDE.md                              the user's standing instructions
    sessions/index.md                     one line per session
    sessions/<id>/transcript.md           a session, turn by turn (#D1:4 names a turn)
    sessions/<id>/summary.md              dream's summary of it
    knowledge/INDEX.md                    dream's map of the wiki
    knowledge/<slug>.md                   one page per subject
    knowledge/.facts.jsonl                the facts the pages are written from
    notes/…                               the user's and the agent's own notes
    notes/corrections/, notes/learned/    cards dream writes from corrections and habits
    corrections/…, forget/…               requests: "that was wrong", "forget this"

This module imports nothing of ours, so every layer (the cache's parts, dream, fs, tools)
may import it.
"""

from __future__ import annotations

import re

#: The wiki: one page per subject, its index and its facts.
KNOWLEDGE = "knowledge/"
#: The wiki's map: one line per page.
INDEX_PATH = KNOWLEDGE + "INDEX.md"
#: The facts the pages are rendered from, one JSON record a line (``cache/facts``).
FACTS_PATH = KNOWLEDGE + ".facts.jsonl"
#: The user's standing instructions, read first by an agent.
GUIDE_PATH = "GUIDE.md"
#: The sessions: ``sessions/<id>/transcript.md`` and ``sessions/<id>/summary.md``.
SESSIONS = "sessions/"
#: One line per session.
SESSIONS_INDEX = SESSIONS + "index.md"
#: Notes written by the user or the agent (dream's cards live under it too).
NOTES = "notes/"
#: Where a correction ("that was wrong") is filed as an event.
CORRECTIONS_DIR = "corrections/"
#: The cards dream writes from the corrections.
CARDS_DIR = NOTES + "corrections/"
#: The cards dream writes from the user's habits.
LEARNED_DIR = NOTES + "learned/"
#: Where a forget request is filed.
FORGET_DIR = "forget/"

#: A transcript's path; group 1 is the session id.
TRANSCRIPT_RE = re.compile(r"^sessions/([^/]+)/transcript\.md$")


def page_path(slug: str) -> str:
    """The path of the wiki page of ``slug``: ``knowledge/<slug>.md``."""
    return f"{KNOWLEDGE}{slug}.md"


def slug_of(path: str) -> str:
    """The slug of a wiki page's path (``knowledge/mara.md`` → ``mara``); the caller has
    checked that ``path`` is a page (:func:`is_page`)."""
    return path[len(KNOWLEDGE):-len(".md")]


def in_knowledge(path: str) -> bool:
    """Whether ``path`` lies under ``knowledge/`` (pages, the index, the facts)."""
    return path.startswith(KNOWLEDGE)


def is_page(path: str) -> bool:
    """Whether ``path`` is a wiki page: Markdown under ``knowledge/`` other than the index."""
    return path.startswith(KNOWLEDGE) and path.endswith(".md") and path != INDEX_PATH


def transcript_path(session: str) -> str:
    """The path of a session's transcript: ``sessions/<id>/transcript.md``."""
    return f"{SESSIONS}{session}/transcript.md"


def summary_path(session: str) -> str:
    """The path of dream's summary of a session: ``sessions/<id>/summary.md``."""
    return f"{SESSIONS}{session}/summary.md"


def turn_ref(session: str, anchor: str) -> str:
    """A citation of one turn: ``sessions/<id>/transcript.md#<anchor>``."""
    return f"{transcript_path(session)}#{anchor}"


def transcript_session(path: str) -> str | None:
    """The session id of a transcript's path (None: ``path`` is not a transcript)."""
    m = TRANSCRIPT_RE.match(path)
    return m.group(1) if m else None
