"""What is true now comes first (issue 28, item 3): a passage that states a replaced value
ranks below what replaced it and says ``superseded by <value> (<date>)``; ``--history``
keeps every passage where it matches (marked); ``--as-of DAY`` answers with what held then.

One small memory on the real S3 server, indexed for real, asked through every interface:
the Python API, the command line (text and JSON), the MCP server (the official client, over
stdio), ``.recall/`` through a real mount, and ``brainfs context``. Nadia wanted figures as
PDF (10 January 2026); on 2 March she changed to SVG. The replaced value is stated in all
four places the memory says so: a fact record closed by its successor
(``knowledge/.facts.jsonl``), a card with ``superseded_by``, a page's ``## Superseded`` line
and the turn both cite; the PDF passages match the question better than the SVG ones, so
ranking by match alone puts PDF first."""

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

QUESTION = "which file format for figures"
OLD_TURN = "sessions/2026-01-10-figures/transcript.md"
NEW_TURN = "sessions/2026-03-02-svg/transcript.md"
OLD_CARD = "notes/preferences/figures-format.md"
NEW_CARD = "notes/corrections/2026-03-02-figures-svg.md"
PAGE = "knowledge/nadia-rahman.md"

_pdf = record_id("nadia-rahman", "format", "figures", "PDF", f"{OLD_TURN}#D1:1")
_svg = record_id("nadia-rahman", "format", "figures", "SVG", f"{NEW_TURN}#D2:1")
RECORDS = [
    FactRecord(id=_pdf, subject="nadia-rahman", attribute="format", key="figures", value="PDF",
               text="Nadia Rahman wants the file format of figures to be PDF", kind="preference",
               valid_from="2026-01-10", valid_until="2026-03-02", superseded_by=_svg,
               recorded_at="2026-01-10", sources=(f"{OLD_TURN}#D1:1",)),
    FactRecord(id=_svg, subject="nadia-rahman", attribute="format", key="figures", value="SVG",
               text="Nadia Rahman wants figures as SVG", kind="preference",
               valid_from="2026-03-02", recorded_at="2026-03-02",
               sources=(f"{NEW_TURN}#D2:1", NEW_CARD), origin="corrected", date_basis="said"),
]


def _transcript(session: str, date: str, turns: list[str]) -> str:
    body = "\n\n".join(turns)
    return (f"---\nsession: {session}\ndate: {date}T09:00:00\nparticipants: [Nadia, Assistant]\n"
            f"---\n# {session}\n\n{body}\n")


TREE = {
    OLD_TURN: _transcript("2026-01-10-figures", "2026-01-10", [
        "[D1:1] Nadia: The file format for figures is PDF: export every figure file as PDF, "
        "figures in PDF format only.",
        "[D1:2] Assistant: Noted."]),
    NEW_TURN: _transcript("2026-03-02-svg", "2026-03-02", [
        "[D2:1] Nadia: Change of plan: SVG from now on, for every chart.",
        "[D2:2] Assistant: Understood."]),
    "sessions/2026-02-01-kyoto/transcript.md": _transcript("2026-02-01-kyoto", "2026-02-01", [
        "[D3:1] Nadia: The Kyoto trip is on, we visit the tactile map workshop.",
        "[D3:2] Assistant: I will book the train."]),
    "sessions/2026-02-15-budget/transcript.md": _transcript("2026-02-15-budget", "2026-02-15", [
        "[D4:1] Nadia: The grant budget is due on Friday; the spreadsheet needs a new column.",
        "[D4:2] Assistant: I will draft it."]),
    OLD_CARD: ("---\ntype: preference\nscope: global\nconfidence: 0.3\ncreated: 2026-01-10\n"
               f"updated: '2026-03-02'\nsuperseded_by: {NEW_CARD}\nstatus: superseded\n---\n\n"
               "Figures: file format PDF. Nadia wants figure files in PDF format.\n\n"
               f"Source: {OLD_TURN}#D1:1\n"),
    NEW_CARD: ("---\ntype: correction\nscope: global\nconfidence: 0.9\n"
               "created: '2026-03-02T10:00:00Z'\nupdated: '2026-03-02T10:00:00Z'\n"
               f"supersedes: {OLD_CARD}\nsource: corrections/20260302T100000Z-aa.md\n---\n\n"
               "figures as SVG, not PDF\n"),
    PAGE: ("---\ntitle: Nadia Rahman\ntype: person\nupdated: 2026-03-02\nsources:\n"
           f"  - {OLD_TURN}#D1:1\n  - {NEW_TURN}#D2:1\n---\n# Nadia Rahman\n\n"
           "Nadia Rahman wants charts as SVG (since 2 March 2026) [cite:2].\n\n"
           "## Superseded\n\n"
           "- Nadia Rahman wanted the file format of figures to be PDF (from 10 January 2026) "
           "[cite:1] — until 2 March 2026, replaced by SVG [cite:2]\n"),
    FACTS_PATH: dumps(RECORDS),
}

#: a passage that states the replaced value (and not the new one)
def _states_old(card: dict) -> bool:
    return "PDF" in card["text"] and "SVG" not in card["text"]


def _check_now(cards: list[dict]) -> None:
    """What is true now first; every replaced passage marked, below what replaced it."""
    assert cards, "no passages"
    first = cards[0]
    assert not _states_old(first) and first.get("superseded_by") is None, \
        [(c["ref"], c.get("superseded_by")) for c in cards]
    assert "SVG" in first["text"], first
    olds = [c for c in cards if _states_old(c)]
    assert olds, "the replaced value should still be found, below"
    for c in olds:
        sb = c.get("superseded_by")
        assert sb and sb["date"] == "2026-03-02" and "SVG" in sb["value"], (c["ref"], sb)
        assert sb["source"], c["ref"]
        assert sb["mark"].startswith("superseded by ") and "(2026-03-02)" in sb["mark"]


def _check_history(cards: list[dict]) -> None:
    """Every passage where it matches: the better-matching PDF passage first, marked."""
    assert _states_old(cards[0]), [c["ref"] for c in cards]
    assert cards[0]["superseded_by"]["value"] and "SVG" in cards[0]["superseded_by"]["value"]


def _check_before(cards: list[dict]) -> None:
    """As of 1 February 2026: PDF held; nothing said later, nothing marked."""
    refs = [c["ref"] for c in cards]
    assert _states_old(cards[0]), refs
    assert all(c.get("superseded_by") is None for c in cards), refs
    assert not any(c["path"] in (NEW_TURN, NEW_CARD) for c in cards), refs
    assert f"{FACTS_PATH}#{_svg}" not in refs


@pytest.fixture
def memory(store: ObjectStore, cfg: Config, tmp_path: Path) -> CorpusURL:
    """The memory above in the bucket, indexed (keyword search: the ranking rules under
    test do not depend on the model), with its preload pack."""
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build-index", None)
    build_pack(store, cfg)
    return store.url


def _env(cfg: Config, tmp_path: Path, name: str) -> dict[str, str]:
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / name), BRAINFS_EMBEDDER="none",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        env.pop(k, None)
    return env


@pytest.mark.s3
def test_python_api_current_first_history_and_as_of(memory: CorpusURL, cfg: Config) -> None:
    from brainfs.front.api import Memory, UsageError

    with Memory(str(memory), cfg.override(embedder="none")) as m:
        now = [c.to_dict() for c in m.recall(QUESTION, k=8).cards]
        history = [c.to_dict() for c in m.recall(QUESTION, k=8, history=True).cards]
        before = [c.to_dict() for c in m.recall(QUESTION, k=8, as_of="2026-02-01").cards]
        after = [c.to_dict() for c in m.recall(QUESTION, k=8, as_of="2026-04-01").cards]
        text = m.recall(QUESTION, k=8).text()
        with pytest.raises(UsageError):
            m.recall(QUESTION, as_of="2026-02-01", history=True)
        with pytest.raises(UsageError):
            m.recall(QUESTION, as_of="February")
    _check_now(now)
    _check_history(history)
    _check_before(before)
    _check_now(after)
    # the record that replaced the PDF record is found although only its value matches less
    assert f"{FACTS_PATH}#{_svg}" in [c["ref"] for c in now]
    assert "superseded by SVG (2026-03-02)" in text


@pytest.mark.s3
def test_cli_text_and_json(memory: CorpusURL, cfg: Config, tmp_path: Path) -> None:
    env = _env(cfg, tmp_path, "cli-cache")

    def run(*extra: str) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "recall", QUESTION, str(memory),
                            "-k", "8", *extra], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r

    _check_now(json.loads(run("--json").stdout)["cards"])
    _check_history(json.loads(run("--json", "--history").stdout)["cards"])
    _check_before(json.loads(run("--json", "--as-of", "2026-02-01").stdout)["cards"])
    text = run().stdout
    assert "superseded by SVG (2026-03-02)" in text
    # the first passage listed is a current one
    first = next(ln for ln in text.splitlines() if ln.startswith("- `"))
    assert "superseded by" not in first, text
    bad = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "recall", QUESTION, str(memory),
                          "--as-of", "2026-02-01", "--history"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode == 2 and "not allowed with" in bad.stderr


@pytest.mark.s3
def test_mcp_recall(memory: CorpusURL, cfg: Config, tmp_path: Path) -> None:
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
            for name, extra in (("now", {}), ("history", {"history": True}),
                                ("before", {"as_of": "2026-02-01"})):
                got[name] = json.loads(text(await client.call_tool(
                    "recall", {"query": QUESTION, "k": 8, "as_json": True, **extra})))["cards"]
            got["text"] = text(await client.call_tool("recall", {"query": QUESTION, "k": 8}))

    anyio.run(main)
    _check_now(got["now"])
    _check_history(got["history"])
    _check_before(got["before"])
    assert "superseded by SVG (2026-03-02)" in got["text"]


@pytest.mark.mount
def test_recall_folder_through_a_mount(memory: CorpusURL, mounter) -> None:
    m = mounter(memory, env_extra={"BRAINFS_EMBEDDER": "none"})
    rec = m.mountpoint / ".recall"

    def ask(suffix: str) -> list[dict]:
        data = json.loads((rec / f"{QUESTION}{suffix}.json").read_text())
        assert "cards" in data, data
        return data["cards"]

    _check_now(ask(" [k=8]"))
    _check_history(ask(" [history] [k=8]"))
    _check_before(ask(" [as-of=2026-02-01] [k=8]"))
    _check_now(ask(" [k=8] [as-of=2026-04-01]"))
    assert "superseded by SVG (2026-03-02)" in (rec / f"{QUESTION} [k=8]").read_text()
    refused = (rec / f"{QUESTION} [as-of=Feb]").read_text()
    assert refused.startswith("# Recall refused"), refused


@pytest.mark.s3
def test_context_prefers_current_and_marks_replaced(memory: CorpusURL, cfg: Config) -> None:
    from brainfs.front.api import Memory

    with Memory(str(memory), cfg.override(embedder="none")) as m:
        window = m.context(QUESTION, budget=3000)
    recalled = [it for it in window.items if it.lane in ("cards", "thread", "files")
                and it.status != "skipped" and it.kind not in ("scope", "guide", "index")]
    admitted = [it for it in recalled if it.status == "admitted"] or recalled
    assert admitted, window.to_markdown()
    first = admitted[0]
    assert "SVG" in first.text and "superseded by" not in first.text, window.to_markdown()
    olds = [it for it in admitted if "PDF" in it.text.split("\n(")[0] and "SVG" not in it.text.split("\n(")[0]]
    for it in olds:
        assert "superseded by SVG (2026-03-02)" in it.text, (it.source, it.text)
