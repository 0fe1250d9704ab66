"""Dream at scale: the first run over a sample memory, then a run after 10 new sessions.

    python -m benchmarks.dream_scale --files 2000,5000,20000 --out benchmarks/results

For each corpus size the sample memory (``brainfs.tools.sample.generate``, seed 7) is
written to a local directory and dream runs over it as :func:`brainfs.dream.core.run_local`
does with ``apply=True``: ``dream(LocalTree(dir))`` then ``apply_to_dir`` — the state
(``.brainfs/dream-state.json``) and every managed file are written back into the directory,
so the next run starts from them, as ``brainfs dream`` starts from the bucket. (Not measured
here: what ``brainfs dream s3://…`` adds around the same run — lease, git bundle commit,
upload, preload pack, re-index.) Runs, each in its own process (peak RSS is that process's):

1. ``first``: a fresh memory, no state;
2. ``incremental``: after 10 new sessions (transcripts in the generator's format, dated
   after every other session, numbered after the last one), as an importer adds them;
3. ``nothing new``: the same tree again, which dream stops at orientation.

Also, the incremental run once more over a copy of the same tree without the records dream
keeps for reuse (``incremental no reuse``): it must publish the same files, byte for byte.

Verification uses the real embedding model, as ``brainfs dream`` does (``--no-embed``:
lexical only). The per-run budgets (``max_sessions_per_run`` 1000, ``time_budget_seconds``
600) are lifted so that the first run reads every session; with them a first run stops at
1,000 sessions and the rest wait for the following runs (the report says how many).
The phase times are dream's own (``Progress`` phases: reading sessions, writing the wiki,
verifying claims); ``orient`` is before the first, ``validate+diff`` after the last.

``--max-first-s``: a first run that exceeds this budget is stopped (the corpus is then
reported as not measured, with what was); the default has no limit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from brainfs.cache.layout import in_knowledge
from brainfs.dream.progress import Progress

NEW_SESSIONS = 10
NO_BUDGET = {"max_sessions_per_run": 10**9, "time_budget_seconds": 10.0**9}
_FRONT_RE = re.compile(r"^---\n(.*?)\n---\n", re.S)
_ANCHOR_RE = re.compile(r"^\[D(\d+):(\d+)\]", re.M)


class PhaseTimes(Progress):
    """A silent :class:`Progress` that records how long each phase took."""

    def __init__(self) -> None:
        super().__init__(enabled=False)
        self.times: dict[str, float] = {}
        self.first_phase_at: float | None = None
        self.last_done_at: float | None = None

    def phase(self, name: str, total: int | None = None) -> None:
        if self.first_phase_at is None:
            self.first_phase_at = time.monotonic()
        super().phase(name, total)

    def done(self, note: str = "") -> None:
        if self.name:
            now = time.monotonic()
            self.times[self.name] = round(self.times.get(self.name, 0.0) + now - self.phase_t0, 3)
            self.last_done_at = now
        super().done(note)


# --------------------------------------------------------------------------- the corpus


def session_dates(root: Path) -> tuple[str, int]:
    """(the newest session's date, the highest session ordinal) of a memory tree."""
    newest, top = "", 0
    for tp in (root / "sessions").glob("*/transcript.md"):
        head = tp.read_text(encoding="utf-8")
        m = _FRONT_RE.match(head)
        if m:
            d = re.search(r"^date: *(\S+)", m.group(1), re.M)
            if d:
                newest = max(newest, d.group(1)[:10])
        top = max([top] + [int(a) for a, _t in _ANCHOR_RE.findall(head)])
    return newest, top


def add_sessions(root: Path, n: int = NEW_SESSIONS, seed: int = 1007) -> list[str]:
    """Add ``n`` new transcripts to the memory at ``root``, as an importer would: the
    newest ``n`` sessions of another sample memory (same persona, another seed), re-dated
    one day apart after the newest session of ``root`` and numbered after its last
    (``[D<s>:<t>]``). Returns the new session ids."""
    import datetime as dt

    from brainfs.tools.sample import generate

    newest, top = session_dates(root)
    if not newest:
        raise ValueError(f"{root} holds no dated session")
    day0 = dt.date.fromisoformat(newest)
    with tempfile.TemporaryDirectory(prefix="brainfs-dreamscale-donor-") as t:
        donor = Path(t) / "mem"
        # about a third of a sample's files are sessions' transcripts: enough for n
        generate(donor, files=max(80, 8 * n), seed=seed)
        picked = sorted((donor / "sessions").glob("*/transcript.md"))[-n:]
        if len(picked) < n:
            raise ValueError(f"the donor memory has only {len(picked)} sessions")
        made = []
        for i, tp in enumerate(picked):
            text = tp.read_text(encoding="utf-8")
            old_sid = tp.parent.name
            day = (day0 + dt.timedelta(days=i + 1)).isoformat()
            sid = f"{day}-{old_sid[11:]}"
            ordinal = top + i + 1
            text = re.sub(r"^session: .*$", f"session: {sid}", text, count=1, flags=re.M)
            text = re.sub(r"^date: \d{4}-\d{2}-\d{2}", f"date: {day}", text, count=1, flags=re.M)
            text = _ANCHOR_RE.sub(lambda m, o=ordinal: f"[D{o}:{m.group(2)}]", text)
            dst = root / "sessions" / sid / "transcript.md"
            if dst.exists():
                raise ValueError(f"{dst} exists already")
            dst.parent.mkdir(parents=True)
            dst.write_text(text, encoding="utf-8")
            made.append(sid)
    return made


# --------------------------------------------------------------------------- one run


def one_run(root: Path, embed: bool, settings: dict) -> dict:
    """One dream run over the directory, applied to it (``run_local(apply=True)``'s two
    steps, timed apart); the figures of this process."""
    t_start = time.monotonic()
    from brainfs.dream.core import LocalTree, apply_to_dir, dream
    from brainfs.dream.entities import get_extractor
    from brainfs.dream.state import STATE_PATH

    embedder = None
    if embed:
        from brainfs.cache.search.embedder import load_embedder
        embedder = load_embedder()
    get_extractor(settings.get("extractor", "auto"))  # spaCy loaded before the clock starts
    t_loaded = time.monotonic()
    prog = PhaseTimes()
    res = dream(LocalTree(root), embedder=embedder, settings=settings, progress=prog)
    t_dream = time.monotonic()
    if not res.nothing_new:
        apply_to_dir(res, root)
    t_end = time.monotonic()
    acts = Counter(c.action for c in res.changes)
    knowledge = Counter(c.action for c in res.changes
                        if in_knowledge(c.path))
    phases = dict(prog.times)
    if prog.first_phase_at is not None:
        phases = {"orient": round(prog.first_phase_at - t_loaded, 3), **phases,
                  "validate+diff": round(t_dream - (prog.last_done_at or t_dream), 3)}
    state = root / STATE_PATH
    pages_threads_only = sum(
        1 for c in res.changes if in_knowledge(c.path) and c.action == "modify"
        and res.previous.get(c.path) is not None
        and without_threads(res.previous[c.path]) == without_threads(res.staged[c.path]))
    return {
        "nothing_new": res.nothing_new,
        "load_s": round(t_loaded - t_start, 3),
        "dream_s": round(t_dream - t_loaded, 3),
        "apply_s": round(t_end - t_dream, 3),
        "run_s": round(t_end - t_loaded, 3),
        "phases": phases,
        "files_written": acts.get("add", 0) + acts.get("modify", 0),
        "files_deleted": acts.get("delete", 0),
        "pages_written": knowledge.get("add", 0) + knowledge.get("modify", 0),
        "pages_added": knowledge.get("add", 0),
        "pages_deleted": knowledge.get("delete", 0),
        "pages_threads_only": pages_threads_only,
        "summaries_written": sum(1 for c in res.changes if c.path.endswith("/summary.md")
                                 and c.action != "delete"),
        "state_bytes": state.stat().st_size if state.exists() else 0,
        "stats": {k: v for k, v in res.stats.items() if not isinstance(v, (list, dict))},
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


_THREADS_RE = re.compile(r"\n## Threads\n.*?(?=\n## |\Z)", re.S)


def without_threads(page: str) -> str:
    """A page without its ``## Threads`` section (to count pages changed only there)."""
    return _THREADS_RE.sub("\n", page)


def run_child(root: Path, embed: bool, settings: dict, timeout: float | None) -> dict:
    """:func:`one_run` in a fresh process (its own peak RSS); None-free dict or raises."""
    cmd = [sys.executable, "-m", "benchmarks.dream_scale", "--one-run", str(root),
           "--settings", json.dumps(settings)] + ([] if embed else ["--no-embed"])
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          cwd=Path(__file__).resolve().parent.parent)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"dream run failed ({proc.returncode}): {proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = round(wall, 3)
    return out


# --------------------------------------------------------------------------- a corpus size


def bench_size(files: int, args: argparse.Namespace, tmp: Path) -> dict:
    from brainfs.tools.sample import generate

    root = tmp / f"mem-{files}"
    gen = generate(root, files=files, seed=args.seed)
    settings = {**NO_BUDGET, "extractor": args.extractor}
    row: dict = {"files": gen["files"], "bytes": gen["bytes"], "sessions": gen["sessions"],
                 "load_start": os.getloadavg()}
    say(f"{files} files: {gen['sessions']} sessions; first run…")
    try:
        row["first"] = run_child(root, args.embed, settings, args.max_first_s)
    except subprocess.TimeoutExpired:
        row["first"] = None
        row["first_timeout_s"] = args.max_first_s
        say(f"{files} files: first run stopped after {args.max_first_s} s")
        return row
    say(f"  first: {row['first']['run_s']:.1f} s, {row['first']['pages_written']} pages, "
        f"peak RSS {row['first']['peak_rss_mib']} MiB")
    row["new_sessions"] = add_sessions(root, NEW_SESSIONS, seed=args.seed + 1000)
    # the same incremental run without what the last run recorded for reuse (every claim
    # checked, every page and fact read again): it must publish the same files
    again = tmp / f"mem-{files}-no-reuse"
    shutil.copytree(root, again)
    forget_reuse_records(again)
    row["incremental"] = run_child(root, args.embed, settings, None)
    row["incremental_no_reuse"] = run_child(again, args.embed, settings, None)
    row["identical"] = same_files(root, again)
    shutil.rmtree(again, ignore_errors=True)
    say(f"  incremental without reuse records: {row['incremental_no_reuse']['run_s']:.1f} s; "
        f"same files: {row['identical']}")
    say(f"  incremental: {row['incremental']['run_s']:.1f} s, "
        f"{row['incremental']['stats'].get('sessions_read')} sessions read, "
        f"{row['incremental']['pages_written']} pages written")
    row["nothing_new"] = run_child(root, args.embed, settings, None)
    say(f"  nothing new: {row['nothing_new']['run_s']:.2f} s")
    row["load_end"] = os.getloadavg()
    shutil.rmtree(root, ignore_errors=True)
    return row


#: What a run records for the next one to reuse (dream/README.md, *Incremental runs*).
REUSE_RECORDS = ("checked", "contradicted", "relations")


def forget_reuse_records(root: Path) -> None:
    """Drop what dream keeps for reuse (:data:`REUSE_RECORDS`) from the state of the memory
    at ``root``."""
    from brainfs.dream.state import STATE_PATH

    p = root / STATE_PATH
    state = json.loads(p.read_text(encoding="utf-8"))
    for k in REUSE_RECORDS:
        state.pop(k, None)
    p.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def same_files(a: Path, b: Path) -> bool:
    """Whether two memory trees hold the same files with the same bytes, dream's state
    aside (it records the run's time)."""
    from brainfs.dream.state import STATE_PATH

    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file() and p.relative_to(root).as_posix() != STATE_PATH}
    return files(a) == files(b)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- report


def _git_head() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parent.parent)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "dream"], capture_output=True,
                           text=True, cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    return r.stdout.strip() + (" (dream/ with uncommitted changes)" if dirty else "")


def render(data: dict) -> str:
    m = data["meta"]
    lines = [
        "# Dream at scale: first run and a run after 10 new sessions",
        "",
        f"`{m['command']}` — {m['date']}, commit {m['git']}, {m['nproc']} CPUs "
        f"({m['cpu']}), Python {m['python']}; verification: "
        f"{'embedding model (as `brainfs dream`)' if m['embed'] else 'lexical only'}; extractor "
        f"`{m['extractor']}`. Each run is its own process; budgets lifted (see below).",
        "",
        "| files | sessions | run | sessions read | run s | pages written | of which only Threads | "
        "files written | peak RSS MiB | state MB | incremental ÷ first |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in data["sizes"]:
        first = r.get("first")
        for kind in ("first", "incremental", "incremental_no_reuse", "nothing_new"):
            x = r.get(kind)
            if x is None:
                if kind == "first":
                    lines.append(f"| {r['files']:,} | {r['sessions']:,} | first | — | "
                                 f"> {r['first_timeout_s']:.0f} (stopped) | — | — | — | — | — | |")
                continue
            ratio = "" if kind == "first" or not first else f"{x['run_s'] / first['run_s']:.3f}"
            lines.append(
                f"| {r['files']:,} | {r['sessions']:,} | {kind.replace('_', ' ')} | "
                f"{x['stats'].get('sessions_read', 0) if not x['nothing_new'] else 0} | "
                f"{x['run_s']:.2f} | {x['pages_written']} | {x.get('pages_threads_only', '—')} | "
                f"{x['files_written']} | "
                f"{x['peak_rss_mib']:.0f} | {x['state_bytes'] / 1e6:.1f} | {ratio} |")
    lines += ["", "Phases (seconds, dream's own; `apply` = writing the changed files into the "
              "directory):", "",
              "| files | run | orient | reading sessions | writing the wiki | verifying claims | "
              "validate+diff | apply | process start (imports, spaCy, model) |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["sizes"]:
        for kind in ("first", "incremental", "incremental_no_reuse", "nothing_new"):
            x = r.get(kind)
            if not x:
                continue
            ph = x["phases"]
            cells = [f"{ph[k]:.2f}" if k in ph else "—" for k in
                     ("orient", "reading sessions", "writing the wiki", "verifying claims",
                      "validate+diff")]
            if x["nothing_new"]:
                cells[0] = f"{x['dream_s']:.2f}"
            lines.append(f"| {r['files']:,} | {kind.replace('_', ' ')} | " + " | ".join(cells)
                         + f" | {x['apply_s']:.2f} | {x['load_s']:.1f} |")
    lines += ["", "`incremental no reuse`: the same incremental run over a copy of the tree "
              "whose state has none of the records kept for reuse (`checked`, `contradicted`, "
              "`relations`: every claim checked, every page's contradictions and every fact's "
              "relations read again). Same files published by both (byte for byte, the state's "
              "run time aside): " + "; ".join(
                  f"{r['files']:,}: {'yes' if r.get('identical') else 'NO'}"
                  for r in data["sizes"] if "identical" in r) + "."]
    lines += ["", "Load average (1, 5, 15 min) at the start and end of each size: " + "; ".join(
        f"{r['files']:,}: {' '.join(f'{v:.1f}' for v in r['load_start'])} → "
        f"{' '.join(f'{v:.1f}' for v in r.get('load_end', r['load_start']))}"
        for r in data["sizes"]) + "."]
    return "\n".join(lines) + "\n"


def machine() -> dict:
    cpu = "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "nproc": os.cpu_count(), "python": sys.version.split()[0], "git": _git_head()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default="2000,5000,20000", help="corpus sizes, comma-separated")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-embed", dest="embed", action="store_false",
                    help="lexical verification only (brainfs dream --no-embed)")
    ap.add_argument("--extractor", default="auto", choices=("auto", "spacy", "rules"))
    ap.add_argument("--max-first-s", type=float, default=None,
                    help="stop a first run after this many seconds")
    ap.add_argument("--out", type=Path, default=None, help="write dream-scale.md/.json here")
    ap.add_argument("--name", default="dream-scale", help="file stem of the results")
    ap.add_argument("--one-run", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--settings", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one_run:
        print(json.dumps(one_run(args.one_run, args.embed, json.loads(args.settings))))
        return 0
    sizes = [int(f) for f in args.files.split(",")]
    meta = {"command": "python -m benchmarks.dream_scale " + " ".join(
                (argv if argv is not None else sys.argv[1:])),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "embed": args.embed, "extractor": args.extractor, "seed": args.seed,
            "new_sessions": NEW_SESSIONS, **machine()}
    data = {"meta": meta, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="brainfs-dreamscale-") as t:
        for files in sizes:
            data["sizes"].append(bench_size(files, args, Path(t)))
            if args.out:  # each size as soon as it is measured
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"{args.name}.json").write_text(json.dumps(data, indent=1))
                (args.out / f"{args.name}.md").write_text(render(data))
    print(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
