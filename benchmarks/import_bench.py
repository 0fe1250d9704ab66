"""Import speed of `brainfs import-sessions`, per format, on 1,000 generated sessions.

    .venv/bin/python -m benchmarks.import_bench [--sessions 1000] [--turns 20] [--json]

For each format: a generated source (synthetic text, never anyone's data) of N sessions of
T turns (every fifth turn a tool call with 40 lines of output), imported into a fresh corpus
on the embedded S3 server (`rclone serve s3` on loopback); then imported again (nothing to
write: the idempotent pass); then grown by two turns per session and imported a third time.
Reports sessions and turns per second for each pass.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from brainfs.cache.sessions.sessionfile import import_sessions

WORDS = ("buoy tide sensor harbour kelp survey drift gauge backoff retry worker seed ingest "
         "starter flour boat calibration lagoon schedule budget flight bergen report").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))).capitalize() + "."


def _turns(rng: random.Random, n: int, start: float):
    """(role, text or tool, time) tuples: alternating user/assistant, every fifth a tool call."""
    for i in range(n):
        t = start + 30 * i
        if i % 5 == 4:
            yield "tool", ("ls -la " + rng.choice(WORDS), "\n".join(_sentence(rng) for _ in range(40))), t
        else:
            yield ("user" if i % 2 == 0 else "assistant"), _sentence(rng), t


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


def write_claude(d: Path, sessions: int, turns: int, extra: int = 0) -> None:
    for s in range(sessions):
        rng = random.Random(s)
        start = 1767225600 + s * 86400 / 3
        recs = []
        for i, (role, text, t) in enumerate(_turns(rng, turns + extra, start)):
            base = {"sessionId": f"sess-{s:05d}", "cwd": "/home/mara/src", "timestamp": _iso(t),
                    "isSidechain": False}
            if role == "tool":
                recs.append({**base, "type": "assistant", "message": {"id": f"m{s}-{i}", "role": "assistant", "content": [
                    {"type": "tool_use", "id": f"tu{s}-{i}", "name": "Bash", "input": {"command": text[0]}}]}})
                recs.append({**base, "type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"tu{s}-{i}", "content": text[1]}]}})
            else:
                recs.append({**base, "type": role, "message": {"id": f"m{s}-{i}", "role": role,
                                                               "content": [{"type": "text", "text": text}]}})
        (d / f"sess-{s:05d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def write_chatgpt(d: Path, sessions: int, turns: int, extra: int = 0) -> None:
    convs = []
    for s in range(sessions):
        rng = random.Random(s)
        start = 1767225600 + s * 86400 / 3
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        prev = "root"
        for i, (role, text, t) in enumerate(_turns(rng, turns + extra, start)):
            pairs = ([("assistant", text[0], "python"), ("tool", text[1], "all")] if role == "tool"
                     else [(role, text, "all")])
            for j, (r, body, recipient) in enumerate(pairs):
                nid = f"n{i}-{j}"
                mapping[nid] = {"id": nid, "parent": prev, "children": [], "message": {
                    "id": nid, "author": {"role": r, "name": "python" if r == "tool" else None},
                    "create_time": t, "recipient": recipient, "metadata": {},
                    "content": {"content_type": "text", "parts": [body]}}}
                mapping[prev]["children"].append(nid)
                prev = nid
        convs.append({"id": f"conv-{s:05d}", "title": f"Conversation {s}", "create_time": start,
                      "current_node": prev, "mapping": mapping})
    (d / "conversations.json").write_text(json.dumps(convs))


def write_messages(d: Path, sessions: int, turns: int, extra: int = 0) -> None:
    for s in range(sessions):
        rng = random.Random(s)
        msgs = []
        for i, (role, text, _t) in enumerate(_turns(rng, turns + extra, 0)):
            if role == "tool":
                msgs.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": "shell",
                                                                     "arguments": json.dumps({"cmd": text[0]})}}]})
                msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": text[1]})
            else:
                msgs.append({"role": role, "content": text})
        (d / f"chat-{s:05d}.json").write_text(json.dumps({
            "id": f"chat-{s:05d}", "created_at": _iso(1767225600 + s * 86400 / 3), "messages": msgs}))


def write_text(d: Path, sessions: int, turns: int, extra: int = 0) -> None:
    for s in range(sessions):
        rng = random.Random(s)
        lines = [f"# Standup {s}", "", f"Date: {_iso(1767225600 + s * 86400 / 3)[:10]}", ""]
        for role, text, _t in _turns(rng, turns + extra, 0):
            who = "Mara" if role == "user" else "Tomas"
            lines += [f"{who}: {text if role != 'tool' else text[0]}", ""]
        (d / f"standup-{s:05d}.md").write_text("\n".join(lines))


WRITERS = {"claude-code": write_claude, "chatgpt": write_chatgpt, "messages": write_messages,
           "text": write_text}


def run(sessions: int, turns: int) -> dict:
    out: dict = {"sessions": sessions, "turns_per_session": turns, "formats": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = LocalS3(root / "s3").start()
        try:
            cfg = Config().override(endpoint_url=server.url, cache_dir=root / "cache")
            for fmt, write in WRITERS.items():
                src = root / "src" / fmt
                src.mkdir(parents=True)
                write(src, sessions, turns)
                url = CorpusURL.parse(f"s3://bench-{fmt}/u")
                store = ObjectStore(url, cfg)
                store.create_bucket()
                res = {}
                for label in ("first", "again", "grown"):
                    if label == "grown":
                        for p in src.iterdir():
                            p.unlink()
                        write(src, sessions, turns, extra=2)
                    t0 = time.perf_counter()
                    rep = import_sessions(src, store, fmt, workers=cfg.max_workers)
                    dt = time.perf_counter() - t0
                    n = rep.new + rep.grown + rep.unchanged
                    res[label] = {"seconds": round(dt, 2), "sessions_per_s": round(n / dt, 1),
                                  "turns_written_per_s": round(rep.turns_added / dt, 1),
                                  "new": rep.new, "grown": rep.grown, "unchanged": rep.unchanged,
                                  "turns_written": rep.turns_added}
                store.close()
                out["formats"][fmt] = res
        finally:
            server.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.sessions, a.turns)
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{a.sessions} sessions x {a.turns} turns (+2 when grown), embedded S3 on loopback")
    for fmt, r in res["formats"].items():
        print(f"{fmt:12s} " + "   ".join(
            f"{k}: {v['seconds']:.1f}s, {v['sessions_per_s']:.0f} sessions/s, {v['turns_written_per_s']:.0f} turns/s"
            for k, v in r.items()))


if __name__ == "__main__":
    main()
