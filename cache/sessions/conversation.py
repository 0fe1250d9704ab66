"""What an import reads a source into: :class:`Conversation` (one conversation at its
source) of :class:`Turn` (speaker, text, time), and :class:`ImportInputError`, the one-line
error of a source that cannot be imported. Every format's reader makes these and
:mod:`brainfs.cache.sessions.sessionfile` writes them as transcripts."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field


class ImportInputError(ValueError):
    """A source file that cannot be imported: one line naming the file and the fix."""


class UnknownFormat(ImportInputError):
    """A file of no known session format (skipped inside a directory SRC: an unzipped
    ChatGPT export also holds user.json, an agent's folder settings and to-do lists)."""


@dataclass
class Turn:
    """One turn; ``said_as``: the speaker as the source names it, when a ``--speaker``
    mapping renamed it (so a re-import under another mapping finds the turn again)."""

    speaker: str
    text: str
    time: _dt.datetime | None = None
    tool: bool = False
    said_as: str | None = None


@dataclass
class Conversation:
    """One conversation at its source. ``key`` names it there (a session id, a ChatGPT
    conversation id, a file name) and stays the same when the conversation grows.
    ``timed``: the source gives each turn its own time (written to the transcript's
    ``turn_times``); ``dated``: where ``start`` came from, as the import's output says it
    ("from its title ('3 November 2026')"); ``warnings``: what was left out of the file and
    why, ``bad_lines`` how many of its lines that was."""

    key: str
    file: str
    fmt: str
    title: str | None = None
    start: _dt.datetime | None = None
    turns: list[Turn] = field(default_factory=list)
    timed: bool = False
    warnings: list[str] = field(default_factory=list)
    dated: str = ""
    bad_lines: int = 0
    #: a plain transcript's turns' written times, one per turn: a time of day (h, m, s) to
    #: be put on the session's day once it is known, a full time, or None
    clocks: list[tuple[int, int, int] | _dt.datetime | None] = field(default_factory=list)
