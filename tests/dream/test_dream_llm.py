"""The LLM synthesizer against a real HTTP server on loopback speaking the OpenAI
``/v1/chat/completions`` protocol and Anthropic's ``/v1/messages`` (a scripted server: the
clients are the official ``openai`` and ``anthropic`` SDKs): a good answer, an unsupported
claim, garbage, a malformed citation, HTTP 500, a timeout, a busy server, a spent budget.
Each run must end in a validated wiki with nothing lost. The same path against a real model
server is tests/dream/test_dream_llm_server.py."""

from __future__ import annotations

import io
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
from brainfs.dream.progress import Progress
from brainfs.dream.synth import DeterministicSynthesizer

from dream_helpers import S1, S2, S3_, pages, view_of, write

_EVIDENCE_RE = re.compile(r"^\[(\d+)\] \((?:([^,)]+), )?(\w+)\) (.*)$")
_SPEAKER_QUOTE_RE = re.compile(r"(\w[\w ]*): “([^”]+)”")


def _paraphrase(user: str, summary: bool) -> list[str]:
    """What a well-behaved model answers: for a page, a summary sentence per current line
    ("now") and a third-person timeline bullet per event, each citing its number; for a
    session, a bullet per evidence item."""
    now: list[str] = []
    events: list[str] = []
    for line in user.splitlines():
        m = _EVIDENCE_RE.match(line)
        if not m:
            continue
        n, label = m.group(1), m.group(3)
        if label == "now":
            now.append(f"{m.group(4).split(' / ')[0]} [cite:{n}].")
            continue
        q = _SPEAKER_QUOTE_RE.search(m.group(4))
        speaker, said = (q.group(1), q.group(2)) if q else ("Someone", m.group(4))
        said = re.sub(r"\bI\b", speaker, said).replace(" my ", f" {speaker}'s ")
        events.append(f"- According to {speaker}, {said} [cite:{n}]")
    if summary:
        return events
    return (["## Summary", *now, ""] if now else []) + ["## Timeline", *events]


class FakeLLM(BaseHTTPRequestHandler):
    """Answers chat completions (and Anthropic messages) according to ``server.mode``."""

    def log_message(self, *a) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                 "x-api-key": self.headers.get("x-api-key"), "body": body})
            srv.inflight += 1
            srv.max_inflight = max(srv.max_inflight, srv.inflight)
        self._counted = True
        try:
            self._answer(srv, body)
        finally:
            self._answered()

    def _answered(self) -> None:
        # no longer in flight once its answer starts: the client may send its next request
        # as soon as it reads this one, before this thread would get back to a finally
        if getattr(self, "_counted", False):
            self._counted = False
            with self.server.lock:
                self.server.inflight -= 1

    def send_response(self, *a, **kw) -> None:
        self._answered()
        super().send_response(*a, **kw)

    def _answer(self, srv, body: dict) -> None:
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
        if srv.delay:
            time.sleep(srv.delay)
        anthropic = self.path.endswith("/messages")
        system = body["system"] if anthropic else body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        summary = "summarize" in system
        lines = _paraphrase(user, summary)
        if mode == "unsupported" and not summary and "Subject: Mara" in user:
            lines.insert(1, "Mara is an astronaut who lives on the Moon with three robots [cite:1].")
        elif mode == "garbage":
            lines = ["I'm sorry, I can't help with that.", "```", "{{{ <<< lorem ipsum", "```"]
        elif mode == "badcite" and not summary and "Subject: Mara" in user:
            lines.append("- Mara also likes trains. [cite:99]")
        content = "Here is the page:\n```markdown\n" + "\n".join(lines) + "\n```\n"
        if anthropic:
            out = {"id": "msg_x", "type": "message", "role": "assistant", "model": body["model"],
                   "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
                   "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 50}}
        else:
            out = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content}}],
                   "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}
        data = json.dumps(out).encode()
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
    srv.delay = 0.0
    srv.requests = []
    srv.lock = threading.Lock()
    srv.inflight = srv.max_inflight = 0
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(5)


def synth(srv, timeout: float = 5.0, **kw) -> LLMSynthesizer:
    kw.setdefault("concurrency", 1)
    return LLMSynthesizer(LLMSettings(srv.url, "fake-model", "sk-test", timeout=timeout,
                                      max_attempts=2, **kw))


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


def generator(res, path: str) -> str:
    return split_frontmatter(res.staged[path])[0]["generator"]


# --------------------------------------------------------------------------- parsing


@pytest.mark.unit
def test_parse_answer_is_defensive() -> None:
    ans = ("---\ntitle: x\n---\nSure! Here you go:\n```\n# Mara\n## Summary\n"
           "Mara lives near [[kyoto]] [cite: 1]. She has a dog [3]. She is happy.\n"
           "## Timeline:\n1. Mara adopted Max [3]\n* Walks in [[atlantis]] [cite: 1, 2]\n"
           "- A claim citing nothing\n- Bad number [cite:7]\n## Hobbies\n- Hikes [cite 2]\n```\n")
    p = parse_answer(ans, 3, {"kyoto"})
    assert p.sentences == ["Mara lives near [[kyoto]] [cite:1].", "She has a dog [cite:3]."]
    assert p.bullets == ["- Mara adopted Max [cite:3]", "- Walks in atlantis [cite:1,2]",
                         "- Bad number [cite:7]", "- Hikes [cite:2]"]
    # uncited prose and bullets are never published, only counted
    assert p.uncited == 2 and p.bad_cites == ["7"] and p.written == 6
    assert p.usable and p.dropped >= 6
    assert not parse_answer("I cannot help with that.", 3, set()).usable
    # an answer cut to its citations says nothing: not a sentence (verification would pass it)
    assert not parse_answer("[cite:1].\n- [2]\n", 3, set()).usable


# --------------------------------------------------------------------------- the protocol cases


@pytest.mark.unit
def test_good_answer_is_published_and_cached(llm, tree: Path) -> None:
    det = run_local(tree, None)
    s = synth(llm)
    shown = io.StringIO()
    res = run_local(tree, None, apply=True, synthesizer=s, progress=Progress(shown, enabled=True))
    assert_valid(tree, res, det)
    assert "asking LLM fake-model" in shown.getvalue()  # progress, on a terminal
    r0 = llm.requests[0]
    assert r0["path"] == "/v1/chat/completions" and r0["auth"] == "Bearer sk-test"
    assert r0["body"]["model"] == "fake-model" and r0["body"]["messages"][0]["role"] == "system"
    assert r0["body"]["max_tokens"] == 600 and r0["body"]["temperature"] == 0.0
    # numbered evidence in the prompt, so the model cites by number; current lines are "now"
    prompts = [r["body"]["messages"][1]["content"] for r in llm.requests]
    assert any(re.search(r"^\[\d+\] \(2023-05-08, event\) ", u, re.M) for u in prompts)
    assert any(re.search(r"^\[\d+\] \(now\) Mara lives in Kyoto \(since 20 June 2023\)", u, re.M)
               for u in prompts)
    mara = res.staged["knowledge/mara.md"]
    meta = split_frontmatter(mara)[0]
    assert meta["generator"] == "llm:fake-model" and "According to Mara" in mara
    # the synthesis: prose under the intro, before the current lines, each sentence cited
    head = mara.split("## Timeline")[0]
    assert re.search(r"^Mara lives in Kyoto \(since 20 June 2023\) \[cite:\d+\]\.$", head, re.M)
    assert "## Superseded" in mara and "lived in Osaka" in mara.split("## Superseded")[1]
    # the same page shape as the deterministic writer: current lines, Timeline, Superseded
    assert "- Mara lives in Kyoto (since 20 June 2023) [cite:" in head
    assert "According to Mara" in mara.split("## Timeline")[1].split("## Superseded")[0]
    assert "According to Mara" in res.staged["sessions/s1/summary.md"]
    rep = res.stats["synth"]
    assert res.stats["rejected"] == 0 and rep["fallbacks"] == {} and rep["files_fallback"] == 0
    assert rep["files_by_model"] == rep["asked"] == len(llm.requests) > 3
    assert rep["sentences_checked"] > rep["files_by_model"] and rep["sentences_rejected"] == 0
    assert rep["input_tokens"] == 100 * len(llm.requests) and rep["output_tokens"] == 50 * len(llm.requests)
    assert res.stats["synth_note"] == f"LLM fake-model: {rep['files_by_model']} file(s) written"
    # a forced rerun asks nothing and changes nothing (answers are cached in the state)
    n = len(llm.requests)
    again = run_local(tree, None, synthesizer=synth(llm), force=True)
    assert len(llm.requests) == n and [c.path for c in again.changes] == [".brainfs/dream-state.json"]
    # a new session: only the pages and summaries whose evidence changed are asked
    write(tree, {"sessions/s3/transcript.md": S3_})
    run_local(tree, None, synthesizer=synth(llm))
    asked = [r["body"]["messages"][1]["content"].split("\n")[0] for r in llm.requests[n:]]
    assert any(a.startswith("Session s3 on 2023-07-02") for a in asked)
    assert not any(a.startswith("Session s1") or a.startswith("Session s2") for a in asked)
    assert len(asked) < n


@pytest.mark.unit
def test_a_page_with_an_unsupported_sentence_falls_back_whole(llm, tree: Path) -> None:
    llm.mode = "unsupported"
    det = run_local(tree, None)
    res = run_local(tree, None, apply=True, synthesizer=synth(llm))
    assert_valid(tree, res, det)
    mara = res.staged["knowledge/mara.md"]
    # not the model's page minus a line: the deterministic page, whole
    assert "astronaut" not in mara and "According to Mara" not in mara
    assert mara.split("generator:")[1] == det.staged["knowledge/mara.md"].split("generator:")[1]
    assert generator(res, "knowledge/mara.md") == DeterministicSynthesizer.name
    assert generator(res, "knowledge/ana.md") == "llm:fake-model"  # the other pages are the model's
    rep = res.stats["synth"]
    assert rep["fallbacks"] == {"knowledge/mara.md": "failed verification: 1 of "
                                + str(rep["fallbacks"]["knowledge/mara.md"].split(" of ")[1])}
    assert rep["fallback_reasons"] == {"failed verification": 1} and rep["sentences_rejected"] == 1
    assert any(p.code == "unsupported-claim" and "astronaut" in p.message for p in res.problems)
    assert any(p.code == "synth-fallback" and p.path == "knowledge/mara.md" for p in res.problems)
    assert "1 file(s) rendered deterministically" in res.commit_message()
    # an answer verification rejected is kept: the model is not asked again for it
    st = json.loads(res.staged[".brainfs/dream-state.json"])
    assert st["synthesizer"] == "llm:fake-model"
    n = len(llm.requests)
    run_local(tree, None, synthesizer=synth(llm), force=True)
    assert len(llm.requests) == n


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
            assert generator(res, p) == DeterministicSynthesizer.name, p
    assert set(res.stats["synth"]["fallbacks"].values()) == {"answer had no cited sentence"}
    assert "rendered deterministically" in res.commit_message()
    assert json.loads(res.staged[".brainfs/dream-state.json"])["synthesizer"] == "llm:fake-model+fallback"
    # garbage is not cached: the next run asks again
    assert json.loads(res.staged[".brainfs/dream-state.json"])["synth_cache"] == {}


@pytest.mark.unit
def test_malformed_citation_falls_back_to_the_deterministic_rendering(llm, tree: Path) -> None:
    first = run_local(tree, None, apply=True, synthesizer=synth(llm))
    assert "According to Mara" in (tree / "knowledge/mara.md").read_text()
    llm.mode = "badcite"
    write(tree, {"sessions/s3/transcript.md": S3_})
    det = run_local(tree, None)
    res = run_local(tree, None, apply=True, synthesizer=synth(llm))
    assert_valid(tree, res, det)
    mara = (tree / "knowledge/mara.md").read_text()
    # the page took the new session, in the deterministic rendering: never "[cite:99]"
    assert "trains" not in mara and "s3/transcript.md" in mara
    assert split_frontmatter(mara)[0]["generator"] == DeterministicSynthesizer.name
    assert res.stats["synth"]["fallbacks"]["knowledge/mara.md"] == "cited evidence it was not given: 99"
    assert set(pages(first)) <= set(pages(res))
    assert "s3" in res.staged["sessions/index.md"]


@pytest.mark.unit
@pytest.mark.parametrize("mode", ["500", "timeout"])
def test_endpoint_down_falls_back_for_the_run(llm, tree: Path, mode: str) -> None:
    det = run_local(tree, None)
    llm.mode = mode
    s = synth(llm, timeout=0.3)
    t0 = time.monotonic()
    res = run_local(tree, None, synthesizer=s)
    assert time.monotonic() - t0 < 20
    assert_valid(tree, res, det)
    # one file's attempts (the SDK's retry), then the circuit breaker: no request per page
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
    """429 with Retry-After: the SDK waits that long, then gets its answer."""
    from brainfs.dream.llmclient import OpenAIChat

    llm.mode = "busy"
    c = OpenAIChat(LLMSettings(llm.url, "fake-model", "sk-test", timeout=5.0, max_attempts=3))
    t0 = time.monotonic()
    out = c.complete("write a page", "Subject: Mara\n[cite:1] Mara lives in Kyoto.")
    assert time.monotonic() - t0 >= 0.9, "Retry-After: 1 was not honoured"
    assert "```" in out.text and out.input_tokens == 100 and len(llm.requests) == 2
    assert llm.requests[0]["auth"] == "Bearer sk-test"


@pytest.mark.unit
def test_requests_run_at_most_the_concurrency_limit_at_once(llm, tree: Path) -> None:
    llm.delay = 0.3
    det = run_local(tree, None)
    res = run_local(tree, None, synthesizer=synth(llm, concurrency=2))
    assert_valid(tree, res, det)
    assert len(llm.requests) == res.stats["synth"]["asked"] > 3
    assert llm.max_inflight <= 2


@pytest.mark.unit
def test_a_spent_budget_stops_the_asking(llm, tree: Path) -> None:
    det = run_local(tree, None)
    # every answer costs 150 tokens: the budget allows two requests
    res = run_local(tree, None, synthesizer=synth(llm, max_tokens_per_run=300))
    assert_valid(tree, res, det)
    rep = res.stats["synth"]
    assert len(llm.requests) == 2 and rep["files_by_model"] == 2
    assert "token budget of 300 spent" in rep["endpoint_error"]
    # every other page and summary: rendered deterministically, and asked again next run
    assert rep["files_fallback"] >= 3 and set(rep["fallbacks"].values()) == {"budget spent"}
    assert res.state.synthesizer == "llm:fake-model+fallback"
    # a cost budget too (at the prices set): 1 request of 100 + 50 tokens is $0.0011
    res = run_local(tree, None, synthesizer=synth(llm, max_cost_per_run=0.001,
                                                  price_input_per_mtok=1.0,
                                                  price_output_per_mtok=20.0), force=True)
    assert "cost budget of 0.001 spent" in res.stats["synth"]["endpoint_error"]


@pytest.mark.unit
def test_anthropic_messages_through_the_anthropic_sdk(llm, tree: Path) -> None:
    det = run_local(tree, None)
    base = llm.url.removesuffix("/v1")
    c = Config.load(None, env={"BRAINFS_CONFIG": "/dev/null", "ANTHROPIC_API_KEY": "sk-ant",
                               "ANTHROPIC_BASE_URL": base, "BRAINFS_LLM_MODEL": "claude-x",
                               "BRAINFS_LLM_CONCURRENCY": "1"})
    assert (c.llm_provider, c.llm_base_url, c.llm_api_key) == ("anthropic", base, "sk-ant")
    s = synthesizer_from_config(c, "llm")
    res = run_local(tree, None, synthesizer=s)
    assert_valid(tree, res, det)
    r0 = llm.requests[0]
    assert r0["path"] == "/v1/messages" and "sk-ant" in (r0["x-api-key"] or r0["auth"] or "")
    assert r0["body"]["model"] == "claude-x" and "numbered evidence" in r0["body"]["system"]
    assert generator(res, "knowledge/mara.md") == "llm:claude-x"
    assert "According to Mara" in res.staged["knowledge/mara.md"]
    assert res.stats["synth"]["fallbacks"] == {}


# --------------------------------------------------------------------------- configuration


@pytest.mark.unit
def test_config_precedence_and_synthesizer_choice(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('llm_base_url = "http://toml/v1"\nllm_model = "m-toml"\nllm_concurrency = 3\n')
    assert Config.load(toml, env={}).llm_base_url == "http://toml/v1"
    env = {"OPENAI_BASE_URL": "http://openai/v1", "OPENAI_API_KEY": "k1"}
    c = Config.load(toml, env=env)
    assert (c.llm_base_url, c.llm_api_key, c.llm_model) == ("http://openai/v1", "k1", "m-toml")
    assert c.llm_provider == "openai" and c.llm_concurrency == 3
    env |= {"BRAINFS_LLM_BASE_URL": "http://brainfs/v1", "BRAINFS_LLM_API_KEY": "k2",
            "BRAINFS_DREAM_SYNTHESIZER": "llm", "BRAINFS_LLM_TIMEOUT": "7",
            "BRAINFS_LLM_MAX_TOKENS_PER_RUN": "5000"}
    c = Config.load(toml, env=env)
    assert (c.llm_base_url, c.llm_api_key, c.llm_timeout) == ("http://brainfs/v1", "k2", 7.0)
    s = synthesizer_from_config(c)
    assert isinstance(s, LLMSynthesizer) and s.settings.base_url == "http://brainfs/v1"
    assert s.settings.max_tokens_per_run == 5000 and s.settings.concurrency == 3
    assert synthesizer_from_config(c, "deterministic").name == DeterministicSynthesizer.name
    assert synthesizer_from_config(c, "agent").name == "agent"
    # Anthropic's variables, when only they are set (or the provider says so)
    c = Config.load(None, env={"BRAINFS_CONFIG": "/dev/null", "ANTHROPIC_API_KEY": "ka"})
    assert (c.llm_provider, c.llm_api_key, c.llm_base_url) == ("anthropic", "ka", None)
    c = Config.load(None, env={"BRAINFS_CONFIG": "/dev/null", "ANTHROPIC_API_KEY": "ka",
                               "OPENAI_API_KEY": "ko"})
    assert (c.llm_provider, c.llm_api_key) == ("openai", "ko")
    c = Config.load(None, env={"BRAINFS_CONFIG": "/dev/null", "ANTHROPIC_API_KEY": "ka",
                               "OPENAI_API_KEY": "ko", "BRAINFS_LLM_PROVIDER": "anthropic"})
    assert (c.llm_provider, c.llm_api_key) == ("anthropic", "ka")
    with pytest.raises(ConfigError, match="llm_provider"):
        Config.load(None, env={"BRAINFS_CONFIG": "/dev/null", "BRAINFS_LLM_PROVIDER": "bard"})
    with pytest.raises(ConfigError, match="BRAINFS_LLM_MODEL"):
        synthesizer_from_config(Config.load(None, env={"BRAINFS_CONFIG": "/dev/null",
                                                       "OPENAI_BASE_URL": "http://x/v1"}), "llm")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        synthesizer_from_config(Config.load(None, env={"BRAINFS_CONFIG": "/dev/null"}), "llm")


@pytest.mark.s3
def test_cli_dream_with_llm_over_s3(llm, store, corpus, cfg, tmp_path: Path, monkeypatch, capsys) -> None:
    from brainfs.dream.sync import wiki_log
    from brainfs.front.cli import main

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
    out = capsys.readouterr().out
    assert "M knowledge/mara.md" in out and "LLM fake-model: " in out and " file(s) written" in out
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
    assert "astronaut" not in mara and generator(res, "knowledge/mara.md") == DeterministicSynthesizer.name
    ana = res.staged["knowledge/ana.md"]
    # Ana's events the model retold in its own words ("According to Ana, …"): the turn of her
    # love of hiking is a current line's evidence too, given to the model once, as "now"
    assert generator(res, "knowledge/ana.md") == "llm:fake-model" and ana.count("According to Ana") >= 1
    assert res.stats["rejected"] == 1 and res.stats["synth"]["sentences_rejected"] == 1
