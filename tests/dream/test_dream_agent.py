"""The agent as the wiki's writer (dream/agentwork.py, the MCP tools ``dream_pending`` and
``dream_submit``): dream hands out the pages whose evidence has no accepted text, takes the
agent's texts back through the same verification as a model's, and commits naming the
agent. Over a local tree, then through a real ``brainfs mcp`` over stdio against the real S3
server on loopback."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.agentwork import pending, submit
from brainfs.dream.core import LocalTree, dream, run_local
from brainfs.dream.synth import DeterministicSynthesizer

from dream_helpers import S1, S2, S3_, write
from test_dream_llm import _paraphrase


def _write(item: dict) -> str:
    """What a careful agent writes for one item: a cited sentence or bullet per evidence."""
    return "\n".join(_paraphrase(item["evidence"], "summarize" in item["instructions"]))


def _local(tree: Path):
    return (lambda s: dream(LocalTree(tree), synthesizer=s, force=True),
            lambda s: run_local(tree, None, apply=True, synthesizer=s, force=True))


@pytest.mark.unit
def test_pending_work_goes_out_and_checked_text_comes_back(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})
    dry, apply = _local(tree)
    work = pending(dry, limit=100)
    paths = [i["path"] for i in work["items"]]
    assert work["pending"] == len(paths) > 3 and "knowledge/mara.md" in paths
    assert "sessions/s1/summary.md" in paths and paths.index("knowledge/mara.md") < paths.index("sessions/s1/summary.md")
    mara = next(i for i in work["items"] if i["path"] == "knowledge/mara.md")
    assert "[1] (" in mara["evidence"] and "[cite:N]" in mara["instructions"] and "[cite:N]" in work["how"]
    assert pending(dry, limit=2)["returned"] == 2
    # the agent writes every item; one of them invents a fact
    answers = {i["key"]: _write(i) for i in work["items"]}
    answers[mara["key"]] += "\nMara is an astronaut who lives on the Moon [cite:1]."
    got = submit(apply, answers | {"0" * 24: "- stale [cite:1]"}, "claude-code")
    assert got["items"]["0" * 24]["status"] == "stale"
    assert got["items"][mara["key"]] == {"path": "knowledge/mara.md", "status": "rejected",
                                         "why": got["items"][mara["key"]]["why"]}
    assert got["items"][mara["key"]]["why"].startswith("failed verification: 1 of ")
    assert got["published"] == len(paths) - 1 and got["rejected"] == 2
    assert "written by agent claude-code: " in got["message"] and "knowledge/mara.md" in got["message"]
    page = (tree / "knowledge/mara.md").read_text()
    assert "astronaut" not in page and split_frontmatter(page)[0]["generator"] == DeterministicSynthesizer.name
    ana = (tree / "knowledge/ana.md").read_text()
    assert split_frontmatter(ana)[0]["generator"] == "agent" and "According to Ana" in ana
    # what passed is not pending any more; the rejected page is, with the same key
    again = pending(dry, limit=100)
    assert [i["path"] for i in again["items"]] == ["knowledge/mara.md"] and again["items"][0]["key"] == mara["key"]
    got = submit(apply, {mara["key"]: _write(mara)}, "claude-code")
    assert got["items"][mara["key"]]["status"] == "published" and pending(dry)["pending"] == 0
    # a new session: only what it changed is pending again
    write(tree, {"sessions/s3/transcript.md": S3_})
    later = {i["path"] for i in pending(dry, limit=100)["items"]}
    assert "sessions/s3/summary.md" in later and "sessions/s1/summary.md" not in later
    # a scheduled run with the agent as the synthesizer keeps the agent's pages
    res = run_local(tree, None, synthesizer=__import__("brainfs.dream.llm", fromlist=["x"]).AgentSynthesizer())
    assert split_frontmatter(res.staged["knowledge/ana.md"])[0]["generator"] == "agent"
    assert res.state.synthesizer == "agent"


@pytest.mark.s3
def test_an_agent_writes_the_wiki_through_mcp(tmp_path: Path, cfg, corpus, store) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from brainfs.dream.sync import wiki_log

    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2}.items():
        store.put(p, t.encode())
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "mcp-cache"), BRAINFS_EMBEDDER="none",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(k, None)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "brainfs.front.cli", "mcp", str(corpus)], env=env)
    out: dict = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=240) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"dream_pending", "dream_submit"} <= tools
            r = await client.call_tool("dream_pending", {"limit": 50})
            out["work"] = json.loads("".join(c.text for c in r.content))
            answers = {i["key"]: _write(i) for i in out["work"]["items"]}
            r = await client.call_tool("dream_submit", {"answers": answers, "agent": "test-agent"})
            out["got"] = json.loads("".join(c.text for c in r.content))
            r = await client.call_tool("dream_pending", {})
            out["after"] = json.loads("".join(c.text for c in r.content))

    anyio.run(main)
    work, got = out["work"], out["got"]
    assert work["pending"] == work["returned"] > 3
    assert got["published"] == work["pending"] and got["rejected"] == 0 and got["commit"]
    assert out["after"]["pending"] == 0
    page = store.get("knowledge/ana.md")[0].decode()
    assert "generator: agent" in page and "According to Ana" in page
    log = wiki_log(store, tmp_path / "log")
    assert log[0][0] == got["commit"] and "written by agent test-agent: " in log[0][1]
