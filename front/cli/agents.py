"""Commands that serve a memory to agents: ``mcp`` (an MCP server over stdio)."""

from __future__ import annotations

import argparse
import functools

from .common import URL_HELP, UsageError, config_of
from .common import command as make_command

# The API and the MCP server (the SDK with it) are imported when `brainfs mcp` runs: the
# parser loads this module, and `brainfs --help` must start without them.


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve one memory (a corpus or a running mount) to an MCP client over stdio."""
    from brainfs.front.api import Memory

    if bool(args.mount) == bool(args.url):
        raise UsageError("give either --mount MOUNTPOINT or a corpus URL s3://BUCKET/PREFIX")
    try:
        from brainfs.front.mcpserver import serve
    except ImportError as e:
        raise UsageError(f"the MCP SDK is not installed ({e}): pip install 'brainfs[mcp]'") from None
    return serve(Memory(args.mount or args.url, config_of(args)), read_only=args.read_only)


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the ``brainfs`` parser."""
    command = functools.partial(make_command, common=common)
    mc = command(sub, "mcp", "serve the memory to an agent as an MCP server over stdio "
                 "(recall, context, read, list, history, diff, write_note, write, correct, forget, dream, "
                 "dream_status, …)",
                 ["brainfs mcp s3://memory/alice",
                  "brainfs mcp --mount ~/memory          # files the agent recalls become local",
                  "brainfs mcp s3://memory/alice --read-only"],
                 description="Serve the memory to an agent as an MCP server over stdio. Tools: "
                 "recall, context, read, list, write_note, write (append too), correct, forget; history "
                 "and diff (the wiki's git history of one page); dream (a run in a process of its "
                 "own) and dream_status; dream_pending and dream_submit (the agent as the wiki's "
                 "writer); resources memory://knowledge/INDEX.md, memory://GUIDE.md and "
                 "memory://{+path} for any file. Through --mount, "
                 "reads and writes go through the mounted tree and recall materializes what it "
                 "finds; with a corpus URL they are S3 requests and the index is kept in the "
                 "cache. An MCP client starts it as {\"command\": \"brainfs\", \"args\": [\"mcp\", "
                 "\"s3://memory/alice\"]}. Logs go to stderr; stdout carries only the protocol.")
    mc.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    mc.add_argument("--mount", metavar="MOUNTPOINT", help="a running mount to serve instead")
    mc.add_argument("--read-only", action="store_true",
                    help="offer only the reading tools (recall, context, read, list, history, "
                    "diff, dream_status); the others answer that the server is read-only (so "
                    "does a --mount mounted read-only)")
    mc.set_defaults(func=cmd_mcp)
