"""``brainfs mcp`` (front/mcpserver.py) spoken to over a real stdio session by the official MCP
SDK's own client: the server is started as an MCP client starts it (``python -m
brainfs.front.cli mcp …``), against the real S3 server on loopback and through a real mount."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, upload_tree, write_tree

mcp = pytest.importorskip("mcp", reason="the MCP SDK (extra 'mcp') is not installed")

READING = {"recall", "context", "read", "list", "history", "diff", "dream_status"}
WRITING = {"write_note", "write", "correct", "forget", "dream", "dream_pending", "dream_submit"}


def _env(cfg: Config, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "mcp-cache"), BRAINFS_EMBEDDER="none",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(k, None)
    return env


def _session(args: list[str], env: dict[str, str], body) -> object:
    """Start ``brainfs mcp ARGS`` over stdio, run ``body(client)`` in a real session, and
    return what it returns (the server process is ended by the SDK's client on exit)."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "brainfs.front.cli", "mcp", *args],
                                   env=env)
    out: list[object] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            out.append(await body(client))

    anyio.run(main)
    return out[0]


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _dream_ended(client, timeout: float = 600) -> dict:
    """Poll ``dream_status`` until the run asked for here is no longer running; its status."""
    import anyio

    deadline = time.monotonic() + timeout
    while True:
        st = json.loads(_text(await client.call_tool("dream_status", {})))
        if st["requested_here"]["state"] != "running":
            return st
        assert time.monotonic() < deadline, st
        await anyio.sleep(0.5)


def _indexed(store: ObjectStore, cfg: Config, tmp_path: Path) -> None:
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    build_index(store, tmp_path / "build-index.sqlite", None)
    build_pack(store, cfg)


@pytest.mark.s3
def test_mcp_tools_and_resources_over_stdio(tmp_path: Path, cfg: Config, corpus: CorpusURL,
                                            store: ObjectStore) -> None:
    _indexed(store, cfg, tmp_path)

    async def body(client) -> dict:
        got: dict = {"server": client.server_info.name if client.server_info else None}
        got["tools"] = {t.name for t in (await client.list_tools()).tools}
        got["resources"] = {str(r.uri) for r in (await client.list_resources()).resources}
        got["recall"] = _text(await client.call_tool("recall", {"query": "Kyoto", "k": 2}))
        got["recall_json"] = json.loads(_text(await client.call_tool(
            "recall", {"query": "Kyoto", "k": 3, "as_json": True})))
        got["read"] = _text(await client.call_tool("read", {"path": "notes/pets/dog.md"}))
        got["list"] = _text(await client.call_tool("list", {"folder": "notes"}))
        got["note"] = _text(await client.call_tool("write_note", {"text": "Mara books aisle seats.",
                                                                  "topic": "travel"}))
        await client.call_tool("write", {"path": "notes/agent/log.md", "text": "- a\n"})
        got["append"] = _text(await client.call_tool("write", {"path": "notes/agent/log.md",
                                                               "text": "- b\n", "append": True}))
        got["context"] = _text(await client.call_tool("context", {"task": "plan the Kyoto trip",
                                                                  "budget": 2000, "format": "json"}))
        got["correct"] = _text(await client.call_tool("correct", {"text": "Biscuit is a beagle"}))
        guide = await client.read_resource("memory://GUIDE.md")
        got["guide"] = "".join(getattr(c, "text", "") for c in guide.contents)
        bad = await client.call_tool("read", {"path": "../../etc/passwd"})
        got["bad"] = (bad.is_error, _text(bad))
        missing = await client.call_tool("recall", {"query": "  "})
        got["missing"] = (missing.is_error, _text(missing))
        typo = await client.call_tool("list", {"foldr": "notes"})
        got["typo"] = (typo.is_error, _text(typo))
        return got

    got = _session([str(corpus)], _env(cfg, tmp_path), body)
    assert got["server"] == "brainfs"
    assert got["tools"] == READING | WRITING
    assert got["resources"] == {"memory://knowledge/INDEX.md", "memory://GUIDE.md"}
    # The same synthesis and cards the CLI prints.
    assert "Kyoto" in got["recall"] and len([ln for ln in got["recall"].splitlines() if ln.startswith("- `")]) == 2
    assert len(got["recall_json"]["cards"]) == 3
    assert got["read"] == CLI_TREE["notes/pets/dog.md"]
    assert got["list"].split() == sorted(p for p in CLI_TREE if p.startswith("notes/"))
    note_path = got["note"].split()[-1]
    assert note_path.startswith("notes/travel/") and b"Mara books aisle seats." in store.get(note_path)[0]
    assert store.get("notes/agent/log.md")[0] == b"- a\n- b\n" and "appended to" in got["append"]
    ctx = json.loads(got["context"])
    assert ctx["budget"] == 2000 and any("Kyoto" in (i.get("text") or "") for i in ctx["items"])
    assert got["correct"].startswith("recorded corrections/")
    assert got["guide"] == CLI_TREE["GUIDE.md"]
    # Bad input: a tool error with one line naming the fix, never a crash of the server.
    assert got["bad"][0] and "relative" in got["bad"][1] and "\n" not in got["bad"][1].strip()
    assert got["missing"][0] and "empty query" in got["missing"][1]
    # A misspelt argument is refused by name, not dropped (which would list everything).
    assert got["typo"][0] and "'foldr'" in got["typo"][1] and "folder" in got["typo"][1]


@pytest.mark.mount
def test_mcp_through_a_mount_read_only(tmp_path: Path, cfg: Config, corpus: CorpusURL,
                                       store: ObjectStore, mounter) -> None:
    """--mount: recall materializes through the mount; --read-only offers no writing tool."""
    _indexed(store, cfg, tmp_path)
    m = mounter(corpus, env_extra={"BRAINFS_EMBEDDER": "none"})
    deadline = time.monotonic() + 30
    while json.loads((m.mountpoint / ".brainfs/status").read_text())["recall"] != "ready":
        assert time.monotonic() < deadline, "recall never ready"
        time.sleep(0.05)

    async def body(client) -> dict:
        tools = {t.name for t in (await client.list_tools()).tools}
        r = json.loads(_text(await client.call_tool("recall", {"query": "Kyoto shelters",
                                                               "as_json": True})))
        refused = await client.call_tool("write", {"path": "notes/x.md", "text": "x"})
        return {"tools": tools, "recall": r, "refused": refused.is_error}

    got = _session(["--mount", str(m.mountpoint), "--read-only"], _env(cfg, tmp_path), body)
    assert got["tools"] == READING
    assert got["recall"]["cards"] and "sessions/s1/transcript.md" in got["recall"]["materialized"]
    assert got["refused"]
    with pytest.raises(NoSuchKey):
        store.head("notes/x.md")
