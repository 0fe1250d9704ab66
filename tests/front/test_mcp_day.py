"""An agent's day through ``brainfs mcp`` and the official SDK's client: any file as a
resource, a page's history and diff, asking for a dream run and its status, a dream-managed
file refused with the way to correct the memory, and rejected arguments answered in one
line like the other tool errors (not pydantic's report and its documentation link)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE

from test_mcp import _dream_ended, _env, _indexed, _session, _text

pytest.importorskip("mcp", reason="the MCP SDK (extra 'mcp') is not installed")


@pytest.mark.s3
def test_mcp_history_dream_resource_template_and_argument_errors(tmp_path: Path, cfg: Config,
                                                                 corpus: CorpusURL,
                                                                 store: ObjectStore) -> None:
    _indexed(store, cfg, tmp_path)

    async def body(client) -> dict:
        got: dict = {}
        got["templates"] = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        dog = await client.read_resource("memory://notes/pets/dog.md")
        got["dog"] = "".join(getattr(c, "text", "") for c in dog.contents)
        for key, args in (("no_query", {}), ("k_ten", {"query": "Kyoto", "k": "ten"})):
            r = await client.call_tool("recall", args)
            got[key] = (r.is_error, _text(r))
        r = await client.call_tool("write", {"path": "knowledge/INDEX.md", "text": "oops"})
        got["index_write"] = (r.is_error, _text(r))
        kept = await client.call_tool("read", {"path": "knowledge/INDEX.md"})
        got["index_kept"] = (kept.is_error, _text(kept))
        got["before"] = json.loads(_text(await client.call_tool("dream_status", {})))
        got["started"] = _text(await client.call_tool("dream", {}))
        got["after"] = await _dream_ended(client)
        got["history"] = _text(await client.call_tool("history", {"path": "knowledge/INDEX.md"}))
        got["diff"] = _text(await client.call_tool("diff", {"path": "knowledge/INDEX.md"}))
        bad = await client.call_tool("diff", {"path": "knowledge/INDEX.md", "old": "--output=/tmp/x"})
        got["bad_diff"] = (bad.is_error, _text(bad))
        got["no_history"] = _text(await client.call_tool("history", {"path": "notes/pets/dog.md"}))
        return got

    # The dream run is a process of its own talking to the loopback server; on a loaded
    # machine the fast test timeouts would fail it for reasons that are not this test's.
    env = dict(_env(cfg, tmp_path), BRAINFS_READ_TIMEOUT="60", BRAINFS_CONNECT_TIMEOUT="10")
    got = _session([str(corpus)], env, body)
    assert "memory://{+path}" in got["templates"]
    assert got["dog"] == CLI_TREE["notes/pets/dog.md"]
    for key, want in (("no_query", "recall: query is required (a string)"),
                      ("k_ten", 'recall: k must be a whole number, got "ten"')):
        is_error, text = got[key]
        assert is_error and text.startswith(want), text
        assert "pydantic" not in text and "http" not in text and "\n" not in text.strip()
    is_error, text = got["index_write"]
    assert is_error and "rewritten from the memory on every dream run" in text and "brainfs correct" in text
    assert "knowledge/INDEX.md" not in CLI_TREE and got["index_kept"][0], got["index_kept"]
    assert "no such file" in got["index_kept"][1], got["index_kept"]  # and not "oops"
    assert got["before"]["last_commit"] is None and got["before"]["requested_here"]["state"] == "none asked"
    assert got["started"].startswith("started a dream run")
    after = got["after"]
    log = Path(after["requested_here"].get("log") or "/nonexistent")
    assert after["requested_here"]["state"] == "done", (after, log.read_text() if log.exists() else "")
    assert after["running"] is False and after["last_commit"]["commit"], after
    commit = after["last_commit"]["commit"]
    assert got["history"].split()[0] == commit[:12]
    assert got["diff"].startswith("diff --git a/knowledge/INDEX.md") and "\n+" in got["diff"]
    assert got["bad_diff"][0] and "give a commit as history lists it" in got["bad_diff"][1]
    assert "dream never wrote it" in got["no_history"]
