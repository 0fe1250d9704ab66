"""``brainfs context --as-of DAY`` (issue 28, item 3): the context window as the memory stood
at the end of a day — recall as of it, freshness judged then, a page's lines, INDEX.md,
GUIDE.md and the links between cards read as they stood.

One small memory as dream leaves it after a job move: Amara Mensah worked at Sendai Youth
Network from 5 January 2026 and moved to Sora City Lab on 2 February 2026. Both records are
in ``knowledge/.facts.jsonl`` (the old one closed by the new), her page says the new
employer now and the old one under ``## Superseded``, INDEX.md and GUIDE.md state the new
value, and the card of the old employer is superseded by a card written on the day of the
move. As of 20 January the window must give the old employer, unmarked, and nothing of the
new one; as of 1 March the new one, the old marked. Asked of a plain tree (the assembly
itself), the Python API and the command line over the real S3 server, and the MCP server
over stdio (the official client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.facts.records import FACTS_PATH, FactRecord, dumps, record_id

from helpers import upload_tree, write_tree

TASK = "where does Amara Mensah work"
BEFORE, AFTER = "2026-01-20", "2026-03-01"
OLD = "Sendai Youth Network"
NEW = "Sora City Lab"
OLD_TURN = "sessions/2026-01-05-intro/transcript.md"
NEW_TURN = "sessions/2026-02-02-move/transcript.md"
OLD_CARD = "notes/people/amara-employer.md"
NEW_CARD = "notes/corrections/2026-02-02-amara-sora.md"
PAGE = "knowledge/amara-mensah.md"

_old = record_id("amara-mensah", "employer", "", OLD, f"{OLD_TURN}#D1:1")
_new = record_id("amara-mensah", "employer", "", NEW, f"{NEW_TURN}#D2:1")
RECORDS = [
    FactRecord(id=_old, subject="amara-mensah", attribute="employer", value=OLD,
               text=f"Amara Mensah works at {OLD}", valid_from="2026-01-05",
               valid_until="2026-02-02", superseded_by=_new, recorded_at="2026-01-05",
               sources=(f"{OLD_TURN}#D1:1",)),
    FactRecord(id=_new, subject="amara-mensah", attribute="employer", value=NEW,
               text=f"Amara Mensah works at {NEW}", valid_from="2026-02-02",
               recorded_at="2026-02-02", sources=(f"{NEW_TURN}#D2:1",)),
]


def _transcript(session: str, date: str, turns: list[str]) -> str:
    return (f"---\nsession: {session}\ndate: {date}T09:00:00\nparticipants: [Amara, Assistant]\n"
            f"---\n# {session}\n\n" + "\n\n".join(turns) + "\n")


TREE = {
    OLD_TURN: _transcript("2026-01-05-intro", "2026-01-05", [
        f"[D1:1] Amara: I work at {OLD} as a community organizer, Amara Mensah, nice to meet you.",
        "[D1:2] Assistant: Nice to meet you, Amara."]),
    NEW_TURN: _transcript("2026-02-02-move", "2026-02-02", [
        f"[D2:1] Amara: Big day: today I start at {NEW}, my new job.",
        "[D2:2] Assistant: Congratulations on the new work!"]),
    "sessions/2026-01-12-garden/transcript.md": _transcript("2026-01-12-garden", "2026-01-12", [
        "[D3:1] Amara: The community garden needs new seed trays before spring.",
        "[D3:2] Assistant: I will order them."]),
    "sessions/index.md": ("# Sessions\n\n"
                          "- 2026-01-05-intro | 2026-01-05 | Meeting Amara\n"
                          "- 2026-01-12-garden | 2026-01-12 | Seed trays\n"
                          "- 2026-02-02-move | 2026-02-02 | Amara's new job\n"),
    OLD_CARD: ("---\ntype: fact\nconfidence: 0.8\ncreated: 2026-01-05\nupdated: '2026-02-02'\n"
               f"record: {_old}\nsuperseded_by: {NEW_CARD}\nstatus: superseded\n---\n\n"
               f"Amara Mensah works at {OLD}, her employer.\n\nSource: {OLD_TURN}#D1:1\n"),
    NEW_CARD: ("---\ntype: correction\nconfidence: 0.9\ncreated: '2026-02-02T10:00:00Z'\n"
               f"updated: '2026-02-02T10:00:00Z'\nsupersedes: {OLD_CARD}\nrecord: {_new}\n---\n\n"
               f"Amara Mensah works at {NEW} now, her new employer.\n\nSource: {NEW_TURN}#D2:1\n"),
    PAGE: ("---\ntitle: Amara Mensah\ntype: person\nupdated: 2026-02-02\nsources:\n"
           f"  - {OLD_TURN}#D1:1\n  - {NEW_TURN}#D2:1\n---\n# Amara Mensah\n\n"
           "Amara Mensah is a person; 2 mentions in 2 sessions.\n\n"
           f"- Amara Mensah works at {NEW} (since 2 February 2026) [cite:2]\n\n"
           "## Superseded\n\n"
           f"- Amara Mensah worked at {OLD} (from 5 January 2026) [cite:1] — until 2 February "
           f"2026, replaced by {NEW} [cite:2]\n"),
    "knowledge/INDEX.md": ("# Knowledge index\n\n1 pages, the user first, then by recent relevance. "
                           "Open `knowledge/<slug>.md` for the cited facts.\n\n"
                           f"- [[amara-mensah]] Amara Mensah — person; works at {NEW}\n"),
    "GUIDE.md": ("# Guide\n\n- Answer briefly.\n"
                 f"- Amara's employer: {NEW}. (corrected 2026-02-02; was {OLD})\n"),
    FACTS_PATH: dumps(RECORDS),
}

MARKS = ("superseded", "no longer true", "replaced by", "ended (")


def _prompt(window: dict) -> str:
    """The text the model gets (admitted items, headers and text)."""
    return "\n".join(f"{i['source']} {i['text']}" for i in window["items"] if i["status"] != "skipped")


def _check_before(window: dict) -> None:
    """As of 20 January: the old employer, unmarked; nothing of the new one, in any item."""
    assert window["as_of"] == BEFORE and window["now"].startswith(f"{BEFORE}T23:59:59"), window["now"]
    prompt = _prompt(window)
    assert OLD in prompt, prompt
    for it in window["items"]:
        assert NEW not in it["text"], (it["source"], it["status"], it["text"])
        assert NEW_CARD not in it["source"], it["source"]
        for line in it["text"].splitlines():
            if OLD in line:
                assert not any(m in line.lower() for m in MARKS), (it["source"], line)
    # the old card is not skipped as superseded by a card written later
    old_card = [i for i in window["items"] if i["source"].startswith(OLD_CARD)]
    assert all("superseded" not in i["reason"] for i in old_card), old_card
    # the reasons say which day the window is of
    assert f"as of {BEFORE}" in window["items"][0]["reason"]
    recalled = [i for i in window["items"] if i["lane"] in ("cards", "thread", "files")]
    assert recalled and all(f"as of {BEFORE}" in i["reason"] for i in recalled), \
        [i["reason"] for i in recalled]
    assert f"as of {BEFORE}" in window["why"], window["why"]
    # freshness is judged at the end of that day: the first session was 15 days old then
    turn = next(i for i in window["items"] if i["source"] == f"{OLD_TURN}#D1:1")
    assert turn["freshness"] == "2 weeks ago", turn


def _check_after(window: dict) -> None:
    """As of 1 March: the new employer first among the recalled items; the old one, where
    it is still shown, marked."""
    assert window["as_of"] == AFTER
    prompt = _prompt(window)
    assert NEW in prompt, prompt
    for it in window["items"]:
        if it["status"] == "skipped":
            continue
        last = it["text"].splitlines()[-1]  # a recalled passage's mark is its last line
        for line in it["text"].splitlines():
            if OLD in line and NEW not in line:
                assert any(m in line.lower() or m in last.lower() for m in MARKS), (it["source"], line)
    first = next(i for i in window["items"] if i["lane"] == "cards" and i["status"] != "skipped")
    assert NEW in first["text"], first


def test_assembly_of_a_plain_tree_before_and_after_the_move(tmp_path: Path) -> None:
    """The assembly itself over a tree on disk and a real (keyword) index."""
    from brainfs.cache.context.assembly import MemorySource, WikiUse, assemble
    from brainfs.cache.search.index import SearchIndex

    root = write_tree(tmp_path / "memory", TREE)
    ix = SearchIndex(tmp_path / "index.sqlite")
    try:
        ix.refresh([(rel, str(hash(text))) for rel, text in TREE.items()],
                   lambda rel: TREE[rel].encode("utf-8"), None)
        src = MemorySource(root, ix, embedder=None, global_guide=tmp_path / "no-guide.md")
        before = assemble(TASK, src, budget=3000, reserve=500, as_of=BEFORE)
        after = assemble(TASK, src, budget=3000, reserve=500, as_of=AFTER)
        now = assemble(TASK, src, budget=3000, reserve=500)
        # the page's lines even where a recalled turn states the same (dedupe off)
        lines = {day: assemble(TASK, src, budget=3000, reserve=500, as_of=day,
                               wiki=WikiUse(dedupe=False))
                 for day in (BEFORE, AFTER)}
        with pytest.raises(ValueError, match="not a day"):
            assemble(TASK, src, as_of="20 January")
    finally:
        ix.close()
    _check_before(before.to_json())
    _check_after(after.to_json())
    md = before.to_markdown()
    assert md.startswith(f"# Context for: {TASK} (as of {BEFORE})"), md[:200]
    # the page's replaced line is shown as the current value of the day, in the present
    # tense; the current line of today is not there; after the move, the other way round
    page = next(i for i in lines[BEFORE].items if i.source == PAGE)
    assert page.status == "admitted" and page.text == f"- Amara Mensah works at {OLD} (since 5 January 2026)", \
        (page.status, page.text, page.reason)
    assert "as of 2026-01-20: 1 line not yet said or true left out, 1 replaced only later" in page.reason
    page = next(i for i in lines[AFTER].items if i.source == PAGE)
    assert page.status == "admitted" and page.text.split("\n") == [
        f"- Amara Mensah works at {NEW} (since 2 February 2026)",
        f"- no longer true: Amara Mensah worked at {OLD} (from 5 January 2026) — until 2 February "
        f"2026, replaced by {NEW}"], page.text
    _check_before(lines[BEFORE].to_json())
    _check_after(lines[AFTER].to_json())
    # the map keeps the page, not its summary of the later value; the guide drops the line
    index = next(i for i in before.items if i.source == "knowledge/INDEX.md")
    assert "[[amara-mensah]] Amara Mensah — person" in index.text and "1 summary" in index.reason
    guide = next(i for i in before.items if i.source == "GUIDE.md")
    assert "Answer briefly" in guide.text and "1 line a correction after 2026-01-20" in guide.reason
    # the scope counts the sessions held by then and tells the model which day it is
    scope = before.items[0]
    assert "2 sessions, newest 2026-01-12" in scope.text and f"As of: {BEFORE}" in scope.text
    # now (no day): the new value, and nothing said about a day
    assert now.as_of is None and NEW in now.to_prompt() and "As of:" not in now.to_prompt()


@pytest.fixture
def memory(store: ObjectStore, cfg: Config, tmp_path: Path) -> CorpusURL:
    """The memory above in the bucket, indexed (keyword search)."""
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build-index", None)
    return store.url


def _env(cfg: Config, tmp_path: Path, name: str) -> dict[str, str]:
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / name), BRAINFS_EMBEDDER="none",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(k, None)
    return env


@pytest.mark.s3
def test_python_api_before_and_after_the_move(memory: CorpusURL, cfg: Config,
                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from brainfs.front.api import Memory, UsageError

    monkeypatch.setenv("BRAINFS_GLOBAL_GUIDE", str(tmp_path / "no-global-guide.md"))
    with Memory(str(memory), cfg.override(embedder="none")) as m:
        before = m.context(TASK, budget=3000, as_of=BEFORE).to_json()
        after = m.context(TASK, budget=3000, as_of=AFTER).to_json()
        history = m.context(TASK, budget=3000, history=True)
        with pytest.raises(UsageError, match="give as_of or history, not both"):
            m.context(TASK, as_of=BEFORE, history=True)
        with pytest.raises(UsageError) as bad:
            m.context(TASK, as_of="February")
        with pytest.raises(UsageError) as bad_recall:
            m.recall(TASK, as_of="February")
    _check_before(before)
    _check_after(after)
    assert str(bad.value) == str(bad_recall.value) == "not a day: 'February' (give it as YYYY-MM-DD)"
    # history: the superseded card is kept, marked, instead of skipped
    card = [i for i in history.items if i.source.startswith(OLD_CARD)]
    assert card and card[0].status != "skipped" and "history: kept" in card[0].reason, \
        [(i.source, i.status, i.reason) for i in history.items]
    assert "superseded by" in card[0].text


@pytest.mark.s3
def test_cli_before_and_after_the_move(memory: CorpusURL, cfg: Config, tmp_path: Path) -> None:
    env = _env(cfg, tmp_path, "cli-cache")

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "brainfs.front.cli", "context", TASK, str(memory),
                               "--budget", "3000", *extra], env=env, capture_output=True,
                              text=True, timeout=300)

    got = {}
    for day in (BEFORE, AFTER):
        r = run("--json", "--as-of", day)
        assert r.returncode == 0, r.stderr
        got[day] = json.loads(r.stdout)
    _check_before(got[BEFORE])
    _check_after(got[AFTER])
    text = run("--as-of", BEFORE)
    assert text.returncode == 0 and text.stdout.startswith(f"# Context for: {TASK} (as of {BEFORE})")
    bad = run("--as-of", "February")
    recall_bad = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "recall", TASK, str(memory),
                                 "--as-of", "February"], env=env, capture_output=True, text=True,
                                timeout=300)
    assert bad.returncode == recall_bad.returncode != 0
    assert bad.stderr.strip() == recall_bad.stderr.strip() and "not a day: 'February'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    both = run("--as-of", BEFORE, "--history")
    assert both.returncode == 2 and "not allowed with" in both.stderr


@pytest.mark.s3
def test_mcp_context_before_and_after_the_move(memory: CorpusURL, cfg: Config, tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK (extra 'mcp') is not installed")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "brainfs.front.cli", "mcp", str(memory)],
                                   env=_env(cfg, tmp_path, "mcp-cache"))
    got: dict = {}

    def text(result) -> str:
        return "".join(getattr(c, "text", "") for c in result.content)

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            for day in (BEFORE, AFTER):
                got[day] = json.loads(text(await client.call_tool(
                    "context", {"task": TASK, "budget": 3000, "format": "json", "as_of": day})))
            got["prompt"] = text(await client.call_tool(
                "context", {"task": TASK, "budget": 3000, "format": "prompt", "as_of": BEFORE}))
            for tool, args in (("context", {"task": TASK}), ("recall", {"query": TASK})):
                bad = await client.call_tool(tool, {**args, "as_of": "February"})
                got[f"bad {tool}"] = (bad.is_error, text(bad).removeprefix(f"{tool}: "))

    anyio.run(main)
    _check_before(got[BEFORE])
    _check_after(got[AFTER])
    assert OLD in got["prompt"] and NEW not in got["prompt"], got["prompt"]
    # a bad day: the same one-line error as recall's
    assert got["bad context"] == got["bad recall"], got
    assert got["bad context"][0] and got["bad context"][1].endswith(
        "not a day: 'February' (give it as YYYY-MM-DD)"), got["bad context"]
