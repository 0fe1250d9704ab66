"""``brainfs mcp`` through the official SDK's client: a dream run asked for with the
``dream`` tool is a process of its own that finishes after the client has ended the server,
and the next server reports it; a ``--read-only`` server answers ``history``, ``diff`` and
``dream_status`` and refuses ``dream`` and ``write`` saying why; every tool error is one line
starting with the tool's name; a resource that cannot be read says why."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.front.api import Memory

from helpers import CLI_TREE

from test_mcp import READING, _dream_ended, _env, _indexed, _session, _text

pytest.importorskip("mcp", reason="the MCP SDK (extra 'mcp') is not installed")


def _stop_runs(cache: Path) -> None:
    """End a dream run a failed test left behind (by its pid, from its state file)."""
    for f in cache.glob("**/dream/asked.json"):
        try:
            st = json.loads(f.read_text())
            if st.get("state") == "running":
                os.kill(int(st["pid"]), signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass


@pytest.mark.s3
def test_mcp_dream_run_outlives_the_server_and_the_next_one_reports_it(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    _indexed(store, cfg, tmp_path)
    env = _env(cfg, tmp_path)

    async def ask(client) -> str:
        # The client ends the server (SIGTERM to its process group) right after the answer.
        return _text(await client.call_tool("dream", {}))

    async def follow(client) -> dict:
        st = await _dream_ended(client)
        again = _text(await client.call_tool("dream", {"dry_run": True}))
        hist = _text(await client.call_tool("history", {"path": "knowledge/INDEX.md"}))
        return {"status": st, "again": again, "history": hist}

    try:
        started = _session([str(corpus)], env, ask)
        got = _session([str(corpus)], env, follow)
    finally:
        _stop_runs(tmp_path / "mcp-cache")
    asked = got["status"]["requested_here"]
    assert asked["state"] == "done", asked
    assert started.startswith("started a dream run") and "(process " in started
    assert asked["commit"] and got["status"]["last_commit"]["commit"] == asked["commit"]
    assert got["history"].split()[0] == asked["commit"][:12]
    assert store.get("knowledge/INDEX.md")[0].strip()
    assert got["again"].startswith("started a dream run (dry run)")


@pytest.mark.s3
def test_mcp_read_only_answers_history_and_status_and_refuses_dream_saying_why(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    _indexed(store, cfg, tmp_path)
    with Memory(str(corpus), cfg) as m:
        commit = m.dream(embed=False).commit
    assert commit
    index_before = store.get("knowledge/INDEX.md")[0]

    async def body(client) -> dict:
        from mcp.shared.exceptions import MCPError

        got: dict = {"tools": {t.name for t in (await client.list_tools()).tools}}
        for key, name, args in (
                ("history", "history", {"path": "knowledge/INDEX.md"}),
                ("diff", "diff", {"path": "knowledge/INDEX.md"}),
                ("status", "dream_status", {}),
                ("dream", "dream", {}),
                ("write", "write", {"path": "knowledge/INDEX.md", "text": "oops"}),
                ("unknown", "remember", {"text": "x"}),
                ("missing", "read", {"path": "nope.md"}),
                ("bad_k", "recall", {"query": "Kyoto", "k": 0}),
                ("typo", "history", {"path": "knowledge/INDEX.md", "limt": 3})):
            r = await client.call_tool(name, args)
            got[key] = (r.is_error, _text(r))
        for key, uri in (("res_missing", "memory://nope.md"), ("res_page", "memory://knowledge/INDEX.md")):
            try:
                r = await client.read_resource(uri)
                got[key] = (False, "".join(getattr(c, "text", "") for c in r.contents))
            except MCPError as e:
                got[key] = (True, str(e))
        return got

    got = _session([str(corpus), "--read-only"], _env(cfg, tmp_path), body)
    assert got["tools"] == READING
    assert got["history"] == (False, got["history"][1]) and got["history"][1].split()[0] == commit[:12]
    assert not got["diff"][0] and got["diff"][1].startswith("diff --git a/knowledge/INDEX.md")
    status = json.loads(got["status"][1])
    assert status["last_commit"]["commit"] == commit and status["running"] is False
    is_error, text = got["dream"]
    assert is_error and text.startswith("dream: this server is read-only") and f"brainfs dream {corpus}" in text
    is_error, text = got["write"]
    assert is_error and text.startswith("write: this server is read-only") and "history" in text
    assert store.get("knowledge/INDEX.md")[0] == index_before
    is_error, text = got["unknown"]
    assert is_error and text.startswith("remember: no such tool; the tools are context, diff")
    # Every tool error is one line that starts with the tool's name, whatever raised it.
    for key, want in (("missing", "read: nope.md: no such file in"),
                      ("bad_k", "recall: k must be between 1 and 200"),
                      ("typo", "history: no argument 'limt'; its arguments are limit, path")):
        is_error, text = got[key]
        assert is_error and text.startswith(want) and "\n" not in text.strip(), (key, text)
    assert got["res_missing"][0] and "nope.md: no such file in" in got["res_missing"][1]
    assert got["res_page"] == (False, index_before.decode())


@pytest.mark.mount
def test_mcp_over_a_read_only_mount_is_read_only(tmp_path: Path, cfg: Config, corpus: CorpusURL,
                                                 store: ObjectStore, mounter) -> None:
    """Through a mount mounted --read-only, `brainfs mcp --mount` (without --read-only)
    offers the reading tools and says why it writes nothing, instead of a write failing
    with the mount's EROFS and a dream run writing the bucket behind the mount."""
    _indexed(store, cfg, tmp_path)
    m = mounter(corpus, env_extra={"BRAINFS_EMBEDDER": "none"}, args=["--read-only"])

    async def body(client) -> dict:
        got: dict = {"tools": {t.name for t in (await client.list_tools()).tools}}
        for name, args in (("write", {"path": "notes/a.md", "text": "x"}), ("dream", {}),
                           ("read", {"path": "notes/pets/dog.md"})):
            r = await client.call_tool(name, args)
            got[name] = (r.is_error, _text(r))
        return got

    got = _session(["--mount", str(m.mountpoint)], _env(cfg, tmp_path), body)
    assert got["tools"] == READING
    assert got["write"][0] and got["write"][1].startswith(
        f"write: this server is read-only ({m.mountpoint} is mounted read-only)"), got["write"]
    assert got["dream"][0] and "starts no dream run" in got["dream"][1]
    assert got["read"] == (False, CLI_TREE["notes/pets/dog.md"])
    assert not list((tmp_path / "mcp-cache").glob("**/dream/asked.json"))  # no run started


@pytest.mark.s3
def test_mcp_run_whose_process_id_is_now_another_process_is_not_running(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    """The state file outlives the run (a reboot, a killed run): a process id it names that
    is now another program's is no dream run, so dream_status does not say "running" and the
    dream tool starts a run instead of waiting on it forever."""
    import subprocess
    import sys

    _indexed(store, cfg, tmp_path)
    env = _env(cfg, tmp_path)
    state = tmp_path / "mcp-cache" / "dream" / "asked.json"
    state.parent.mkdir(parents=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        state.write_text(json.dumps({"state": "running", "dry_run": False, "pid": other.pid,
                                     "started": "2026-11-30T09:00:00+00:00", "log": "x"}))

        async def body(client) -> dict:
            st = json.loads(_text(await client.call_tool("dream_status", {})))
            return {"status": st["requested_here"],
                    "dream": _text(await client.call_tool("dream", {"dry_run": True}))}

        got = _session([str(corpus)], env, body)
    finally:
        other.kill()
        other.wait()
        _stop_runs(tmp_path / "mcp-cache")
    assert got["status"]["state"] == "failed" and "ended without a report" in got["status"]["error"], got
    assert got["dream"].startswith("started a dream run (dry run)"), got["dream"]


@pytest.mark.s3
def test_two_servers_asking_for_a_run_at_once_start_one(
        tmp_path: Path, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    """Two ``brainfs mcp`` servers of one memory on one machine asked for a dream at the same
    moment: one run starts, the other server says it is in progress (a lock beside the
    state file), instead of a second run the dream lease refuses writing "failed" over the
    first's state."""
    from concurrent.futures import ThreadPoolExecutor

    from brainfs.front.mcpserver import DreamRuns

    _indexed(store, cfg, tmp_path)
    quiet = cfg.override(embedder="none", cache_dir=tmp_path / "mcp-cache")
    with Memory(str(corpus), quiet) as a, Memory(str(corpus), quiet) as b:
        runs = [DreamRuns(a), DreamRuns(b)]
        try:
            with ThreadPoolExecutor(2) as pool:
                said = list(pool.map(lambda r: r.start(True), runs))
            started = [s for s in said if s.startswith("started a dream run")]
            assert len(started) == 1, said
            assert any("in progress" in s for s in said), said
            deadline = time.monotonic() + 300
            while runs[0].status()["state"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.3)
            assert runs[1].status()["state"] == "done", runs[1].status()
        finally:
            _stop_runs(tmp_path / "mcp-cache")
