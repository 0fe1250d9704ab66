"""The LLM synthesizer against a real HTTP server on loopback speaking the OpenAI
``/v1/chat/completions`` protocol: a good answer, an unsupported claim, garbage, a malformed
citation, HTTP 500 and a timeout. Each run must end in a validated wiki with nothing lost."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from brainfs.backend.config import Config, ConfigError
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.core import run_local
from brainfs.dream.llm import LLMSettings, LLMSynthesizer, parse_answer, synthesizer_from_config
from brainfs.dream.synth import DeterministicSynthesizer

from dream_helpers import S1, S2, S3_, pages, view_of, write

_EVIDENCE_RE = re.compile(r"^\[(\d+)\] \(([^,]+), (\w+)\) (.*)$")
_SPEAKER_QUOTE_RE = re.compile(r"(\w[\w ]*): “([^”]+)”")


def _paraphrase(user: str, summary: bool) -> list[str]:
    """What a well-behaved model answers: one third-person bullet per evidence item,
    under the section the evidence came from, citing its number."""
    by_section: dict[str, list[str]] = {}
    for line in user.splitlines():
        m = _EVIDENCE_RE.match(line)
        if not m:
            continue
        n, section = m.group(1), m.group(3).capitalize()
        q = _SPEAKER_QUOTE_RE.search(m.group(4))
        speaker, said = (q.group(1), q.group(2)) if q else ("Someone", m.group(4))
        said = re.sub(r"\bI\b", speaker, said).replace(" my ", f" {speaker}'s ")
        by_section.setdefault(section, []).append(f"- According to {speaker}, {said} [cite:{n}]")
    if summary:
        return [b for bs in by_section.values() for b in bs]
    out = []
    for section, bs in by_section.items():
        out += [f"## {section}", *bs, ""]
    return out


class FakeLLM(BaseHTTPRequestHandler):
    """Answers chat completions according to ``server.mode``."""

    def log_message(self, *a) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        mode = srv.mode
        if mode == "busy" and len(srv.requests) == 1:
            self.send_response(429)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "500":
            self.send_error(500, "model crashed")
            return
        if mode == "timeout":
            time.sleep(1.5)
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        summary = "summarize" in system
        lines = _paraphrase(user, summary)
        if mode == "unsupported" and not summary and "Subject: Mara" in user:
            lines.insert(1, "- Mara is an astronaut who lives on the Moon with three robots. [cite:1]")
        elif mode == "garbage":
            lines = ["I'm sorry, I can't help with that.", "```", "{{{ <<< lorem ipsum", "```"]
        elif mode == "badcite" and not summary and "Subject: Mara" in user:
            lines.append("- Mara also likes trains. [cite:99]")
        content = "Here is the page:\n```markdown\n" + "\n".join(lines) + "\n```\n"
        data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out first (the timeout case)


@pytest.fixture
def llm() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeLLM)
    srv.daemon_threads = True
    srv.mode = "good"
    srv.requests = []
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(5)


def synth(srv, timeout: float = 5.0) -> LLMSynthesizer:
    return LLMSynthesizer(LLMSettings(srv.url, "fake-model", "sk-test", timeout=timeout, max_attempts=2))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write(tmp_path / "tree", {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2})


def assert_valid(root: Path, res, reference) -> None:
    """Validated (no error left), and nothing lost: the same pages as the deterministic run."""
    from brainfs.dream.validate import validate_tree

    files = {p: t for p, t in res.staged.items() if not p.startswith(".brainfs/")}
    errs = [p for p in validate_tree(files, view_of(root, res)) if p.severity == "error"]
    assert errs == [], errs
    assert set(pages(res)) == set(pages(reference))
    assert res.stats["share_valid_citations"] == 1.0


# --------------------------------------------------------------------------- parsing


@pytest.mark.unit
def test_parse_answer_is_defensive() -> None:
    ans = ("---\ntitle: x\n---\nSure! Here you go.\n```\n# Mara\n## Facts:\n"
           "1. Mara adopted Max [3]\n* Lives near [[kyoto]] and [[atlantis]] [cite: 1, 2]\n"
           "- A claim citing nothing\n- Bad number [cite:7]\n## Hobbies\n- Hikes [cite 2]\n```\n")
    p = parse_answer(ans, 3, {"kyoto"}, sections=("Facts",))
    assert p.bullets == [("Facts", "- Mara adopted Max [cite:3]"),
                         ("Facts", "- Lives near [[kyoto]] and atlantis [cite:1,2]"),
                         ("Facts", "- A claim citing nothing"),
                         ("Facts", "- Bad number [cite:7?]"),
                         ("Facts", "- Hikes [cite:2]")]
    assert p.usable and p.dropped >= 6
    assert not parse_answer("I cannot help with that.", 3, set()).usable


# --------------------------------------------------------------------------- the protocol cases


@pytest.mark.unit
def test_good_answer_is_published_and_cached(llm, tree: Path) -> None:
    det = run_local(tree, None)
    s = synth(llm)
    res = run_local(tree, None, apply=True, synthesizer=s)
    assert_valid(tree, res, det)
    r0 = llm.requests[0]
    assert r0["path"] == "/v1/chat/completions" and r0["auth"] == "Bearer sk-test"
    assert r0["body"]["model"] == "fake-model" and r0["body"]["messages"][0]["role"] == "system"
    # numbered evidence in the prompt, so the model cites by number
    assert any(re.search(r"^\[1\] \(2023-05-08, ", r["body"]["messages"][1]["content"], re.M)
               for r in llm.requests)
    mara = res.staged["knowledge/mara.md"]
    meta = split_frontmatter(mara)[0]
    assert meta["generator"] == "llm:fake-model" and "According to Mara" in mara
    assert "## Superseded" in mara and "lived in Osaka" in mara.split("## Superseded")[1]
    # the same page shape as the deterministic writer: current lines, Timeline, Superseded
    assert "- Mara lives in Kyoto (since 20 June 2023) [cite:" in mara.split("## Timeline")[0]
    assert "According to Mara" in mara.split("## Timeline")[1].split("## Superseded")[0]
    assert "According to Mara" in res.staged["sessions/s1/summary.md"]
    assert res.stats["rejected"] == 0 and res.stats["synth"]["fallbacks"] == {}
    assert res.stats["synth_note"] is None
    # a forced rerun asks nothing and changes nothing (answers are cached in the state)
    n = len(llm.requests)
    again = run_local(tree, None, synthesizer=synth(llm), force=True)
    assert len(llm.requests) == n and [c.path for c in again.changes] == [".brainfs/dream-state.json"]


@pytest.mark.unit
def test_unsupported_claim_is_dropped(llm, tree: Path) -> None:
    llm.mode = "unsupported"
    res = run_local(tree, None, synthesizer=synth(llm))
    assert_valid(tree, res, run_local(tree, None))
    mara = res.staged["knowledge/mara.md"]
    assert "astronaut" not in mara and "According to Mara" in mara
    assert res.stats["rejected"] == 1
    assert any(p.code == "unsupported-claim" and "astronaut" in p.message for p in res.problems)


@pytest.mark.unit
def test_garbage_answer_falls_back_to_deterministic(llm, tree: Path) -> None:
    det = run_local(tree, None)
    llm.mode = "garbage"
    s = synth(llm)
    res = run_local(tree, None, synthesizer=s)
    assert_valid(tree, res, det)
    # nothing from the model was usable: every file is the deterministic one, and said so
    for p in pages(det):
        if p != "knowledge/INDEX.md":
            assert split_frontmatter(res.staged[p])[0]["generator"] == DeterministicSynthesizer.name, p
    assert set(res.stats["synth"]["fallbacks"].values()) == {"answer had no cited bullet"}
    assert "rendered deterministically" in res.commit_message()
    assert json.loads(res.staged[".brainfs/dream-state.json"])["synthesizer"] == "llm:fake-model+fallback"
    # garbage is not cached: the next run asks again
    assert json.loads(res.staged[".brainfs/dream-state.json"])["synth_cache"] == {}


@pytest.mark.unit
def test_malformed_citation_keeps_previous_version(llm, tree: Path) -> None:
    det = run_local(tree, None)
    first = run_local(tree, None, apply=True, synthesizer=synth(llm))
    before = (tree / "knowledge/mara.md").read_text()
    assert "According to Mara" in before
    llm.mode = "badcite"
    write(tree, {"sessions/s3/transcript.md": S3_})
    res = run_local(tree, None, apply=True, synthesizer=synth(llm))
    assert any(p.path == "knowledge/mara.md" and p.code == "cite-syntax" and "99?" in p.message
               for p in res.problems)
    assert "knowledge/mara.md" in res.stats["excluded"]
    assert (tree / "knowledge/mara.md").read_text() == before  # previous version kept
    assert "knowledge/mara.md" not in [c.path for c in res.changes]
    assert set(pages(first)) <= set(pages(res)) and set(pages(det)) <= set(pages(res))
    # the other pages took the new session
    assert "s3" in res.staged["sessions/index.md"]


@pytest.mark.unit
def test_malformed_new_page_gets_the_deterministic_rendering(llm, tree: Path) -> None:
    llm.mode = "badcite"
    res = run_local(tree, None, synthesizer=synth(llm))
    assert_valid(tree, res, run_local(tree, None))
    mara = res.staged["knowledge/mara.md"]
    assert split_frontmatter(mara)[0]["generator"] == DeterministicSynthesizer.name and "trains" not in mara
    assert any(p.code == "synth-fallback" and p.path == "knowledge/mara.md" for p in res.problems)


@pytest.mark.unit
@pytest.mark.parametrize("mode", ["500", "timeout"])
def test_endpoint_down_falls_back_for_the_run(llm, tree: Path, mode: str) -> None:
    det = run_local(tree, None)
    llm.mode = mode
    s = synth(llm, timeout=0.3)
    t0 = time.monotonic()
    res = run_local(tree, None, synthesizer=s)
    assert time.monotonic() - t0 < 10
    assert_valid(tree, res, det)
    # one file's attempts, then the circuit breaker: no request per page
    assert len(llm.requests) == 2
    err = res.stats["synth"]["endpoint_error"]
    assert ("HTTP 500" in err) if mode == "500" else ("timed out" in err)
    assert "rendered deterministically" in res.commit_message() and "unavailable" in res.commit_message()
    assert {p: t for p, t in res.staged.items() if not p.startswith(".brainfs/")} == \
        {p: t for p, t in det.staged.items() if not p.startswith(".brainfs/")}
    # the endpoint is back: the next run renders with the model (the state says it fell back)
    llm.mode = "good"
    run_local(tree, None, apply=True, synthesizer=s)
    res2 = run_local(tree, None, synthesizer=synth(llm))
    assert not res2.nothing_new and "According to" in res2.staged["knowledge/mara.md"]


def test_a_busy_endpoint_is_retried_after_what_it_asks(llm) -> None:
    """429 with Retry-After: the client waits that long, then gets its answer."""
    from brainfs.dream.llm import ChatClient, _retry_after

    llm.mode = "busy"
    c = ChatClient(LLMSettings(llm.url, "fake-model", "sk-test", timeout=5.0, max_attempts=3))
    t0 = time.monotonic()
    out = c.complete("write a page", "Subject: Mara\n[cite:1] Mara lives in Kyoto.")
    assert time.monotonic() - t0 >= 0.9, "Retry-After: 1 was not honoured"
    assert "```" in out and c.calls == 2 and len(llm.requests) == 2
    assert llm.requests[0]["auth"] == "Bearer sk-test"
    assert _retry_after("2.5") == 2.5 and _retry_after("999") == 30.0
    assert _retry_after(None) == 0.0 and _retry_after("soon") == 0.0


# --------------------------------------------------------------------------- configuration


@pytest.mark.unit
def test_config_precedence_and_synthesizer_choice(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('llm_base_url = "http://toml/v1"\nllm_model = "m-toml"\n')
    assert Config.load(toml, env={}).llm_base_url == "http://toml/v1"
    env = {"OPENAI_BASE_URL": "http://openai/v1", "OPENAI_API_KEY": "k1"}
    c = Config.load(toml, env=env)
    assert (c.llm_base_url, c.llm_api_key, c.llm_model) == ("http://openai/v1", "k1", "m-toml")
    env |= {"BRAINFS_LLM_BASE_URL": "http://brainfs/v1", "BRAINFS_LLM_API_KEY": "k2",
            "BRAINFS_DREAM_SYNTHESIZER": "llm", "BRAINFS_LLM_TIMEOUT": "7"}
    c = Config.load(toml, env=env)
    assert (c.llm_base_url, c.llm_api_key, c.llm_timeout) == ("http://brainfs/v1", "k2", 7.0)
    s = synthesizer_from_config(c)
    assert isinstance(s, LLMSynthesizer) and s.settings.base_url == "http://brainfs/v1"
    assert synthesizer_from_config(c, "deterministic").name == DeterministicSynthesizer.name
    with pytest.raises(ConfigError, match="BRAINFS_LLM_MODEL"):
        synthesizer_from_config(Config.load(None, env={"BRAINFS_CONFIG": "/dev/null",
                                                       "OPENAI_BASE_URL": "http://x/v1"}), "llm")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        synthesizer_from_config(Config.load(None, env={"BRAINFS_CONFIG": "/dev/null"}), "llm")


@pytest.mark.s3
def test_cli_dream_with_llm_over_s3(llm, store, corpus, cfg, tmp_path: Path, monkeypatch, capsys) -> None:
    from brainfs.dream.sync import wiki_log
    from brainfs.fs.cli import main

    monkeypatch.setenv("AWS_ENDPOINT_URL", cfg.endpoint_url)
    monkeypatch.setenv("BRAINFS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BRAINFS_CONFIG", "/dev/null")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
    monkeypatch.setenv("BRAINFS_LLM_MODEL", "fake-model")
    monkeypatch.setenv("BRAINFS_LLM_TIMEOUT", "0.3")
    for p, t in {"sessions/s1/transcript.md": S1, "sessions/s2/transcript.md": S2}.items():
        store.put(p, t.encode())
    url = str(corpus)
    llm.mode = "500"
    assert main(["dream", url, "--synth", "llm", "--no-embed", "--no-index"]) == 0
    out = capsys.readouterr().out
    assert "rendered deterministically" in out and "HTTP 500" in out
    mara = store.get("knowledge/mara.md")[0].decode()
    assert f"generator: {DeterministicSynthesizer.name}" in mara
    llm.mode = "good"
    assert main(["dream", url, "--synth", "llm", "--no-embed", "--no-index"]) == 0
    assert "M knowledge/mara.md" in capsys.readouterr().out
    assert "According to Mara" in store.get("knowledge/mara.md")[0].decode()
    log = wiki_log(store, tmp_path / "log")
    assert len(log) == 2 and "HTTP 500" in log[1][1] and "rendered deterministically" not in log[0][1]


@pytest.mark.model
def test_llm_paraphrases_pass_and_inventions_fail_with_the_real_embedder(llm, tree: Path, embedder) -> None:
    # The model paraphrases (lexical overlap is partial); the embedding decides those.
    llm.mode = "unsupported"
    res = run_local(tree, None, synthesizer=synth(llm), embedder=embedder)
    assert res.stats["verify_method"] == "embedding"
    mara = res.staged["knowledge/mara.md"]
    assert "astronaut" not in mara and mara.count("According to Mara") >= 3
    assert res.stats["rejected"] == 1
