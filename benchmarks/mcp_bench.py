"""The MCP recall round trip beside the CLI's and the Python API's (issue 14).

    python -m benchmarks.mcp_bench [--files 200] [--questions 8] [--reps 3]

Builds the sample memory, imports and indexes it with the real model, mounts it, then times
one recall per question in each way an agent can ask (medians over questions × reps; the
model is warm in every long-lived form, as it is for an agent that keeps its server):

- ``brainfs recall Q --mount MP --json``: a new process per question (interpreter start and
  imports included: what a shell tool call costs);
- ``cat MP/.recall/Q.json``: the mount's magic file itself;
- MCP ``recall`` through ``brainfs mcp --mount MP`` and ``brainfs mcp s3://…``: one stdio
  session (the SDK's client), round trip of each ``tools/call``;
- the Python API, ``Memory(MP).recall`` and ``Memory("s3://…").recall``, in this process.

Each call gets its own question text (a tag appended), so the mount's 2-second answer cache
never serves one method's question to another. Writes ``benchmarks/results/mcp-recall.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brainfs.backend.server import LocalS3
from brainfs.tools.sample import generate

from benchmarks.recall_bench import QUESTIONS


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms" if xs else "—"


def _mcp_times(args: list[str], env: dict[str, str], questions: list[str]) -> list[float]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "brainfs.front.cli", "mcp", *args], env=env)
    times: list[float] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await client.call_tool("recall", {"query": "warm up the model"})
            for q in questions:
                t0 = time.perf_counter()
                r = await client.call_tool("recall", {"query": q, "as_json": True})
                times.append(time.perf_counter() - t0)
                assert not r.is_error and json.loads(r.content[0].text)["cards"], q

    anyio.run(main)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="brainfs-mcpbench-"))
    cli = [sys.executable, "-m", "brainfs.front.cli"]
    mp = tmp / "mnt"
    mp.mkdir()
    qs = QUESTIONS[: args.questions]
    results: dict[str, list[float]] = {}
    try:
        generate(tmp / "src", files=args.files)
        with LocalS3(tmp / "s3") as s3:
            env = dict(os.environ, BRAINFS_CONFIG="/dev/null", AWS_ENDPOINT_URL=s3.url,
                       BRAINFS_CACHE_DIR=str(tmp / "cache"))
            for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
                env.pop(k, None)
            url = "s3://memory/bench"
            for step in (["import", str(tmp / "src"), url], ["index", url], ["mount", url, str(mp)]):
                t0 = time.perf_counter()
                subprocess.run([*cli, "-q", *step], env=env, check=True)
                print(f"{step[0]}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            try:
                deadline = time.monotonic() + 600
                while json.loads((mp / ".brainfs/status").read_text()).get("recall") != "ready":
                    assert time.monotonic() < deadline, "recall never ready"
                    time.sleep(0.2)
                (mp / ".recall" / "warm up the model.json").read_text()

                def tagged(method: str, rep: int) -> list[str]:
                    return [f"{q} {method}{rep}" for q in qs]

                for rep in range(args.reps):
                    for q in tagged("cli", rep):
                        t0 = time.perf_counter()
                        subprocess.run([*cli, "recall", q, "--mount", str(mp), "--json"], env=env,
                                       check=True, capture_output=True)
                        results.setdefault("brainfs recall --mount (new process each)", []).append(
                            time.perf_counter() - t0)
                    for q in tagged("cat", rep):
                        t0 = time.perf_counter()
                        (mp / ".recall" / f"{q}.json").read_text()
                        results.setdefault("cat .recall/Q.json (the mount itself)", []).append(
                            time.perf_counter() - t0)
                    results.setdefault("MCP recall, brainfs mcp --mount (one session)", []).extend(
                        _mcp_times(["--mount", str(mp)], env, tagged("mcpm", rep)))
                    results.setdefault("MCP recall, brainfs mcp s3://… (one session)", []).extend(
                        _mcp_times([url], env, tagged("mcps", rep)))
                # The API in this process: the environment the commands had.
                os.environ.update({k: env[k] for k in ("BRAINFS_CONFIG", "AWS_ENDPOINT_URL", "BRAINFS_CACHE_DIR")})
                from brainfs import Memory

                for n, (label, where) in enumerate((("Python API, Memory(MP).recall", str(mp)),
                                                    ("Python API, Memory(\"s3://…\").recall", url))):
                    with Memory(where) as m:
                        m.recall("warm up the model")
                        for rep in range(args.reps):
                            for q in tagged(f"api{n}-", rep):
                                t0 = time.perf_counter()
                                assert m.recall(q).cards
                                results.setdefault(label, []).append(time.perf_counter() - t0)
            finally:
                subprocess.run([*cli, "umount", str(mp)], env=env, check=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        "# Recall round trip: MCP beside the CLI and the Python API",
        "",
        f"`python -m benchmarks.mcp_bench --files {args.files} --questions {args.questions} --reps {args.reps}`"
        f" — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, local S3 "
        "(`rclone serve s3` on loopback, no added delay), the real embedding model, warm.",
        "",
        "| how the agent asks | median | min | max | calls |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, xs in results.items():
        lines.append(f"| {label} | {_ms(xs)} | {min(xs) * 1000:.0f} ms | {max(xs) * 1000:.0f} ms | {len(xs)} |")
    lines += ["", "Through a mount every form also materializes the files behind the hits; the "
              "s3:// forms search the index downloaded to the cache and fetch nothing."]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mcp-recall.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
