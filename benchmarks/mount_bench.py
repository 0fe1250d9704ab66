"""Mount → usable with an empty cache, from a paginated LIST or from the listing snapshot.

    python -m benchmarks.mount_bench --files 2000,20000 --rtt-ms 20 --reps 5 --out DIR

For each corpus size: the sample memory (``brainfs.tools.sample.generate``) is written
straight into the directory an embedded S3 server (``rclone serve s3``) serves, behind a
proxy adding ``--rtt-ms`` per request, with the preload pack built as ``brainfs import``
builds it. Each repetition mounts with a fresh cache dir
(``brainfs mount``, which returns once the mount is usable) and unmounts. ``list``: the
snapshot switched off (``BRAINFS_LISTING_SNAPSHOT=false``), the mount lists every page;
``snapshot``: the default, after one mount has written the snapshot (the preload pack's
files are written to disk while the mount serves); ``eager``: every preloaded file
written to disk before the mount answers, after the real LIST (cut into ranges at the
snapshot's keys) has checked the pack
(``BRAINFS_PRELOAD_UNPACK_BACKGROUND=false``, the behaviour before); ``serial``: the
snapshot, its background LIST page after page (``BRAINFS_LIST_RANGES=false``) rather than in
parallel key ranges. After each mount, ``cat GUIDE.md`` (a preloaded file) and then a
``grep -r`` over the whole mount (the working set) reads every preloaded file: ``mount +
grep`` is the time from the mount command to the end of that grep. The daemon's own
breakdown (``startup`` in ``.brainfs/status``) is reported beside the wall time. Medians of
``--reps``; the modes alternate within a repetition, so load from other jobs falls on both.

``--base DIR``: another brainfs tree (a ``git worktree`` of an earlier commit) mounts too,
each mode right after this tree's (imported through a ``PYTHONPATH`` link named
``brainfs``): a before/after comparison under the same load. Its rows are ``mode @ base``.
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

from benchmarks.s3proxy import S3Proxy
from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from brainfs.cache.layout import GUIDE_PATH
from brainfs.cache.local.pack import build_pack
from brainfs.tools.sample import generate

BUCKET, PREFIX = "bench", "mem"


def brainfs(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the brainfs command line (the venv's entry point)."""
    return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def mount_once(env: dict[str, str], mp: Path, cache: Path, grep: bool = True) -> dict:
    """Mount with an empty cache, read the startup breakdown, grep the whole mount (unless
    ``grep`` is false), unmount; times in seconds."""
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(env, BRAINFS_CACHE_DIR=str(cache))
    t0 = time.monotonic()
    r = brainfs("mount", f"s3://{BUCKET}/{PREFIX}", str(mp), env=env)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"mount failed: {r.stderr.strip() or r.stdout.strip()}")
    try:
        # A preloaded file read at once: from the pack, once the real LIST has vouched
        # for it when the mount started from the snapshot.
        (mp / GUIDE_PATH).read_bytes()
        first_read = time.monotonic() - t0
        startup = json.loads((mp / ".brainfs/status").read_text())["startup"]
        if not grep:
            return {"mount_s": wall, "first_read_s": first_read, "mount_grep_s": None,
                    "load1": os.getloadavg()[0], **startup}
        g = subprocess.run(["grep", "-r", "-l", "-F", "no such words xyzzy", str(mp)],
                           capture_output=True, text=True, timeout=600)
        grep_done = time.monotonic() - t0
        if g.returncode != 1:  # 1: read everything, matched nothing
            raise SystemExit(f"grep over the mount failed: {g.stderr.strip()[:500]}")
    finally:
        u = brainfs("umount", str(mp), "--timeout", "120", env=env)
        if u.returncode != 0:
            subprocess.run(["fusermount3", "-u", str(mp)], check=False)
    return {"mount_s": wall, "first_read_s": first_read, "mount_grep_s": grep_done,
            "load1": os.getloadavg()[0], **startup}


def base_env(base: Path, tmp: Path) -> dict[str, str]:
    """The environment that makes ``python -m brainfs...`` import the tree ``base``."""
    shim = tmp / "base-shim"
    shim.mkdir(exist_ok=True)
    link = shim / "brainfs"
    if not link.exists():
        link.symlink_to(base.resolve())
    return {"PYTHONPATH": str(shim)}


def bench_size(files: int, args: argparse.Namespace, tmp: Path) -> dict:
    root = tmp / f"s3root-{files}"
    generate(root / BUCKET / PREFIX, files=files, seed=7)
    n = sum(1 for p in (root / BUCKET / PREFIX).rglob("*") if p.is_file())
    s3 = LocalS3(root).start()
    # As `brainfs import` leaves a corpus: its newest transcripts in the preload pack.
    cfg = Config().override(endpoint_url=s3.url)
    store = ObjectStore(CorpusURL.parse(f"s3://{BUCKET}/{PREFIX}"), cfg)
    try:
        build_pack(store, cfg)
    finally:
        store.close()
    proxy = S3Proxy(("127.0.0.1", s3.port), delay=args.rtt_ms / 1000.0)
    proxy.start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
        env.update({"AWS_ENDPOINT_URL": proxy.url, "BRAINFS_CONFIG": "/dev/null",
                    "BRAINFS_RECALL_WARMUP": "0"})
        mp = tmp / f"mnt-{files}"
        mp.mkdir()
        # One mount writes the snapshot (at its unmount at the latest).
        mount_once(env, mp, tmp / "cache-seed")
        trees = {"": {}}
        if args.base is not None:
            trees[BASE] = base_env(args.base, tmp)
        modes = args.modes.split(",")
        runs: dict[str, list[dict]] = {m + t: [] for m in modes for t in trees}
        for rep in range(args.reps):
            for mode, tree in ((m, t) for m in modes for t in trees):
                e = dict(env, BRAINFS_LISTING_SNAPSHOT="false" if mode == "list" else "true",
                         BRAINFS_PRELOAD_UNPACK_BACKGROUND="false" if mode == "eager" else "true",
                         BRAINFS_LIST_RANGES="false" if mode == "serial" else "true", **trees[tree])
                r = mount_once(e, mp, tmp / f"cache-{mode}", grep=args.grep)
                # eager: the snapshot only cuts the real LIST into ranges, taken before answering
                if r.get("listing_from") != ("list" if mode in ("list", "eager") else "snapshot"):
                    raise SystemExit(f"{mode} mount started from {r.get('listing_from')!r}")
                runs[mode + tree].append(r)
                print(f"{files} files, rep {rep + 1}, {mode}{tree}: mount {r['mount_s']:.2f} s "
                      f"(listing {r['list_s']:.2f} s, preload {r['preload_s']:.2f} s), "
                      f"first read {r['first_read_s']:.2f} s, mount + grep "
                      + (f"{r['mount_grep_s']:.2f} s" if r["mount_grep_s"] is not None else "not run"),
                      flush=True)
        return {"files": n, "runs": runs}
    finally:
        proxy.stop()
        s3.stop()


#: list: paginated LIST; snapshot: the default; serial: the snapshot, its background LIST
#: page after page (not in parallel ranges); eager: the real LIST (cut at the snapshot's keys)
#: and the pack unpacked before the mount answers
MODES = ("list", "snapshot", "serial", "eager")
#: the suffix of a mode's name in the rows of the ``--base`` tree
BASE = " @ base"


def med(rs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rs)


def cell(rs: list[dict], key: str, ref: list[dict] | None = None) -> str:
    """The median of ``key`` (÷ that of ``ref``), or a dash when it was not measured."""
    if any(r.get(key) is None for r in rs + (ref or [])):
        return "—"
    return f"{med(rs, key) / med(ref, key):.2f}×" if ref else f"{med(rs, key):.2f}"


def render(results: list[dict], args: argparse.Namespace) -> str:
    loads = [r["load1"] for res in results for rs in res["runs"].values() for r in rs]
    # Ratios against the list mode when measured, else against the first mode
    ref_name = "list" if "list" in results[0]["runs"] else next(iter(results[0]["runs"]))
    load = f"{min(loads):.1f}–{max(loads):.1f} (median {statistics.median(loads):.1f})" if loads else "?"
    lines = [
        "# Mount → usable with an empty cache: paginated LIST, listing snapshot, pack unpacked first",
        "",
        f"`python -m benchmarks.mount_bench --files {args.files} --rtt-ms {args.rtt_ms} "
        f"--reps {args.reps}" + (f" --modes {args.modes}" if args.modes != ",".join(MODES) else "")
        + ("" if args.grep else " --no-grep") + (f" --base {args.base}" if args.base else "") + f"` on {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        f"Embedded S3 server (`rclone serve s3`) behind a proxy adding {args.rtt_ms} ms per request; "
        "default preload rules; medians of the repetitions (the modes alternate"
        + (f"; each one mounted by this tree, then by the base tree `{args.base}`)" if args.base else ")")
        + f". 1-minute load average at the runs' ends: {load}.",
        "",
        f"| files | mode | mount → usable s | ÷ {ref_name} | listing s | preload s | mount + first read s | ÷ {ref_name} | mount + grep -r s | ÷ {ref_name} |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ref = r["runs"][ref_name]
        for mode, rs in r["runs"].items():
            lines.append(f"| {r['files']:,} | {mode} | {cell(rs, 'mount_s')} | "
                         f"{cell(rs, 'mount_s', ref)} | {cell(rs, 'list_s')} | "
                         f"{cell(rs, 'preload_s')} | {cell(rs, 'first_read_s')} | "
                         f"{cell(rs, 'first_read_s', ref)} | {cell(rs, 'mount_grep_s')} | "
                         f"{cell(rs, 'mount_grep_s', ref)} |")
    lines += ["", "`mount → usable`: the `brainfs mount` command, start to return (it returns once "
              "the mount answers); `listing` and `preload` are the daemon's own `startup` figures. "
              "In `snapshot` mode the real LIST runs in the background from the moment the "
              "snapshot is read, cut into ranges at its keys (those holding the preloaded files "
              "first), and the preload pack's files are written to disk once it is all in "
              "(`preload` is the pack's download and the files not in it); in `eager` mode "
              "the real LIST (cut into ranges at the snapshot's keys) and the writing come before "
              "the mount answers; `serial` is `snapshot` with that LIST taken page after page "
              "(`BRAINFS_LIST_RANGES=false`) instead of in parallel ranges cut at the snapshot's "
              "keys. A preloaded file listed from the pack on the snapshot's word is read only "
              "once the range of the real LIST holding it has checked it: `mount + first read` "
              "is to the end of a `cat "
              "GUIDE.md` right after the mount. `mount + grep -r`: to the end of a `grep -r` over the "
              "whole mount started right after it, which reads every preloaded file."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default="2000,20000", help="corpus sizes, comma-separated")
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    ap.add_argument("--no-grep", dest="grep", action="store_false",
                    help="skip the grep -r after each mount (its column then shows a dash)")
    ap.add_argument("--base", type=Path, default=None,
                    help="another brainfs tree (a git worktree) to mount alternately with this one")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="brainfs-mountbench-") as t:
        for files in (int(f) for f in args.files.split(",")):
            results.append(bench_size(files, args, Path(t)))
    (args.out / "mount.json").write_text(json.dumps(results, indent=1))
    (args.out / "mount.md").write_text(render(results, args))
    print((args.out / "mount.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
