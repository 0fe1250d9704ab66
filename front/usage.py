"""What every interface (the command line, the MCP server, the Python API) says to a user
about bad input, how long a status read waits and the answer's default room, in a module
that imports nothing: the command line needs them before any command runs, and must not
pay for the API's imports (the search stack, boto3) to start. :mod:`brainfs.front.api` offers
the same names."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user, or a memory that cannot answer (one line naming the fix)."""


class NoAnswer(UsageError):
    """The mount did not answer within the time given (a hung or stopped daemon)."""


#: How long a status read waits: a live daemon answers in milliseconds; a stopped or hung
#: one never does.
STATUS_TIMEOUT = 10.0

#: The answer's room when no reserve is given: a quarter of the budget, at most 2,000
#: tokens (an answer does not grow with the context: 8,000 -> 2,000, 2,000 -> 500).
RESERVE_SHARE = 0.25
RESERVE_MAX = 2000


def default_reserve(budget: int) -> int:
    """The reserve used when the caller gives none."""
    return min(RESERVE_MAX, int(budget * RESERVE_SHARE))
