"""Dream with a model as the writer: how fast, and how much of what it writes passes.

On the first sessions of a LoCoMo dev conversation (``--sessions N``, as transcripts), one
dream run with the deterministic writer and one with the model (``dream.llm.LLMSynthesizer``,
one request at a time unless ``--concurrency``), both verified the same way (the real
embedder when it loads, else lexically), report:

* **files per minute**: files the model was asked for (pages and session summaries) over
  the wall time spent waiting for its answers (``stats["synth"]["ask_seconds"]``);
* **files that pass**: the share of asked files published as the model wrote them (the rest
  fell back whole to the deterministic rendering), with the reasons;
* **sentences that pass**: of the cited sentences the model wrote, the share verification
  accepted (``sentences_checked - sentences_rejected``); uncited sentences (never published)
  are counted apart and also reported against everything it wrote;
* **answers in 1,000 tokens**: of the conversation's questions (categories 1, 2, 4; yes/no
  left out) whose evidence lies in those sessions, the share whose gold answer's content
  words stand in the first 1,000 tokens of the wiki read directly (INDEX.md and the pages
  the question names; ``benchmarks/dream_answers.judge``), deterministic wiki vs the
  model's.

Without ``--endpoint`` it starts llama.cpp's server with SmolLM2-135M on this machine
(``brainfs.tools.llama_server``; ``.ci/setup --llm-server`` builds it). The same harness runs
against a stronger model by pointing it elsewhere::

    python -m benchmarks.dream_llm --sessions 4
    python -m benchmarks.dream_llm --endpoint https://api.openai.com/v1 --model gpt-4o-mini \\
        --api-key "$OPENAI_API_KEY" --concurrency 4
    python -m benchmarks.dream_llm --provider anthropic --model claude-haiku-4-5 --api-key "$ANTHROPIC_API_KEY"

Results: ``benchmarks/results/dream-llm.md`` (``--out``) and one JSON line per run in
``benchmarks/results/dream-llm.jsonl``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brainfs.dream.core import DictTree, dream
from brainfs.dream.llm import LLMSettings, LLMSynthesizer
from brainfs.tools.locomo_wiki import ABLATION_SETTINGS

RESULTS = Path(__file__).resolve().parent / "results"


def _slice(sample: dict, sessions: int) -> tuple[dict[str, str], list[dict], set[int]]:
    """The first ``sessions`` sessions of a conversation as a tree, and its questions whose
    evidence all lies in them."""
    from brainfs.tools.locomo import conversation_tree, session_path, turn_session

    tree = conversation_tree(sample)
    conv_id = str(sample.get("sample_id") or "conv")
    nums: set[int] = set()
    n = 0
    while len(nums) < sessions and n < 100:
        n += 1
        if session_path(conv_id, n) in tree:
            nums.add(n)
    small = {session_path(conv_id, k): tree[session_path(conv_id, k)] for k in sorted(nums)}
    qs = [q for q in sample.get("qa", [])
          if q.get("evidence") and all(turn_session(str(e).strip()) in nums for e in q["evidence"])]
    return small, qs, nums


def _answers(questions: list[dict], wiki: dict[str, str], tree: dict[str, str], budget: int) -> tuple[int, int]:
    from benchmarks.dream_answers import CATEGORIES, judge

    n = hit = 0
    for q in questions:
        ans = str(q.get("answer", "")).strip()
        if q.get("category") not in CATEGORIES or not ans or ans.lower() in ("yes", "no"):
            continue
        n += 1
        hit += bool(judge(q["question"], ans, wiki, tree, budget).get("wiki"))
    return hit, n


def run(args: argparse.Namespace) -> dict:
    from brainfs.tools.locomo import dev_split

    data = Path(args.data) if args.data else dev_split()
    if data is None or not data.exists():
        raise SystemExit("no LoCoMo dev split: give --data or set BRAINFS_LOCOMO_DIR")
    sample = json.loads(data.read_text())[args.conversation]
    tree, questions, nums = _slice(sample, args.sessions)
    embedder = None
    if not args.no_embed:
        from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

        try:
            embedder = load_embedder(None)
        except EmbedderUnavailable:
            embedder = None
    settings = dict(ABLATION_SETTINGS)

    t0 = time.monotonic()
    det = dream(DictTree(dict(tree)), settings=settings, embedder=embedder)
    det_s = time.monotonic() - t0

    server = None
    url = args.endpoint
    if url is None:
        from brainfs.tools import llama_server

        why = llama_server.missing()
        if why:
            raise SystemExit(f"no local model server: {why} (.ci/setup --llm-server, or --endpoint)")
        server = llama_server.start(Path(tempfile.mkdtemp()) / "server.log")
        url, model = server.url, llama_server.MODEL_ALIAS
    else:
        model = args.model
    try:
        s = LLMSynthesizer(LLMSettings(url, model, args.api_key, timeout=args.timeout, max_attempts=2,
                                       provider=args.provider, concurrency=args.concurrency,
                                       max_output_tokens=args.max_output_tokens))
        t0 = time.monotonic()
        res = dream(DictTree(dict(tree)), settings=settings, embedder=embedder, synthesizer=s)
        llm_s = time.monotonic() - t0
    finally:
        if server is not None:
            server.stop()
    rep = res.stats["synth"]
    asked = rep["asked"]
    model_s = max(1e-9, rep["ask_seconds"])  # the time spent waiting for the model's answers
    written = rep["sentences_checked"] + rep["sentences_uncited"]
    det_hit, n_q = _answers(questions, det.staged, tree, args.budget)
    llm_hit, _ = _answers(questions, res.staged, tree, args.budget)
    return {
        "date": _dt.date.today().isoformat(), "commit": _commit(), "machine": _machine(),
        "model": model, "endpoint": "local llama.cpp server" if server else url,
        "conversation": sample.get("sample_id"), "sessions": sorted(nums),
        "verify_method": res.stats["verify_method"], "concurrency": args.concurrency,
        "max_output_tokens": args.max_output_tokens,
        "files_asked": asked, "seconds_deterministic": round(det_s, 1), "seconds_llm": round(llm_s, 1),
        "files_per_minute": round(asked / (model_s / 60), 2) if asked else 0.0,
        "output_tokens_per_second": round(rep["output_tokens"] / model_s, 1),
        "files_by_model": rep["files_by_model"], "files_fallback": rep["files_fallback"],
        "share_files_pass": round(rep["files_by_model"] / asked, 3) if asked else None,
        "fallback_reasons": rep["fallback_reasons"],
        "sentences_checked": rep["sentences_checked"], "sentences_rejected": rep["sentences_rejected"],
        "sentences_uncited": rep["sentences_uncited"],
        "share_sentences_pass": (round((rep["sentences_checked"] - rep["sentences_rejected"])
                                       / rep["sentences_checked"], 3) if rep["sentences_checked"] else None),
        "share_written_sentences_pass": (round((rep["sentences_checked"] - rep["sentences_rejected"])
                                               / written, 3) if written else None),
        "input_tokens": rep["input_tokens"], "output_tokens": rep["output_tokens"],
        "endpoint_error": rep["endpoint_error"],
        "questions": n_q, "answers_in_budget_deterministic": det_hit, "answers_in_budget_llm": llm_hit,
        "budget": args.budget,
    }


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def write_markdown(rows: list[dict], out: Path) -> None:
    """The results file: one table row per run in the JSONL (newest last)."""
    lines = ["# Dream with a model as the writer", "",
             "`python -m benchmarks.dream_llm` (benchmarks/dream_llm.py): the first sessions of a "
             "LoCoMo dev conversation, dreamt once deterministically and once with the model "
             "(same settings, same verification). Files = pages + session summaries the model was "
             "asked for; a file passes when it is published as the model wrote it (one rejected "
             "sentence sends it whole to the deterministic rendering). Answers: questions whose "
             "evidence lies in those sessions, gold answer within 1,000 tokens of the wiki read "
             "directly.", "",
             "| date | commit | model | sessions | verify | files | files/min | out tok/s | files pass | "
             "sentences pass (cited) | uncited | answers det → llm | why files fell back |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['date']} | {r['commit']} | {r['model']} | {r['conversation']} s{min(r['sessions'])}–{max(r['sessions'])} "
            f"| {r['verify_method']} | {r['files_asked']} | {r['files_per_minute']} | {r['output_tokens_per_second']} "
            f"| {r['files_by_model']}/{r['files_asked']} | "
            f"{r['sentences_checked'] - r['sentences_rejected']}/{r['sentences_checked']} | {r['sentences_uncited']} "
            f"| {r['answers_in_budget_deterministic']} → {r['answers_in_budget_llm']} of {r['questions']} "
            f"| {', '.join(f'{k} {v}' for k, v in r['fallback_reasons'].items()) or '—'} |")
    lines += ["", f"Machine: {rows[-1]['machine']}. Endpoint of the last row: {rows[-1]['endpoint']}; "
              f"one request at a time unless the row's JSON says otherwise (dream-llm.jsonl).", ""]
    out.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="LoCoMo JSON (default: the dev split, BRAINFS_LOCOMO_DIR)")
    ap.add_argument("--conversation", type=int, default=0, help="which conversation (index)")
    ap.add_argument("--sessions", type=int, default=3, help="its first N sessions")
    ap.add_argument("--endpoint", help="OpenAI-compatible base URL (or Anthropic's with --provider); "
                    "default: start the local llama.cpp server with SmolLM2-135M")
    ap.add_argument("--model", default="gpt-4o-mini")
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--provider", default="openai", choices=("openai", "anthropic"))
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--max-output-tokens", type=int, default=300)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--no-embed", action="store_true", help="lexical verification")
    ap.add_argument("--out", default=str(RESULTS / "dream-llm.md"))
    args = ap.parse_args(argv)
    if args.provider == "anthropic" and args.endpoint is None and args.api_key:
        args.endpoint = "https://api.anthropic.com"
    row = run(args)
    print(json.dumps(row, indent=2))
    out = Path(args.out)
    jl = out.with_suffix(".jsonl")
    with jl.open("a") as f:
        f.write(json.dumps(row) + "\n")
    write_markdown([json.loads(x) for x in jl.read_text().splitlines() if x.strip()], out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
