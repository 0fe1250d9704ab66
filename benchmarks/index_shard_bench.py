"""The search index as one file against the index in parts (issue 17): what a mount with an
empty cache downloads before its first recall answers, and how long that takes.

    python -m benchmarks.index_shard_bench --files 2000,20000 --rtt-ms 20 --reps 3 --out DIR

For each corpus size the sample memory (``brainfs.tools.sample.generate``, seed 7) is
written twice into the directory an embedded S3 server (``rclone serve s3``) serves, behind
a proxy adding ``--rtt-ms`` per request: prefix ``whole`` holds the index as one file
(``.brainfs/index.sqlite``, as before issue 17), prefix ``parts`` the same index split into
parts by ``brainfs index`` (the migration path: the one file is split, its vectors copied).

The index is built once per size with a cheap deterministic embedder (a hashed bag of words
and numbers in 384 dimensions — the model's dimension) instead of the model: building it
with the model takes ~40 min of both CPUs at 20,000 files, and the index's size and layout
do not depend on which embedder filled the vectors. The vectors are labelled with the
installed model's name, so a mount's recall embeds its question with the real model and
runs the whole hybrid search over them: latencies are real, rankings meaningless.

Each repetition mounts each layout with a fresh cache (``brainfs mount``, which returns
once the mount is usable), reads ``.recall/<question>.json`` at once (mount → first recall
answered: the index download, the model's load, the search and the fetch of the hits),
waits until every part is local, then asks the other questions (warm recall). Then, for the
parts layout, one transcript changes and ``brainfs index`` runs again (what a refresh
uploads). Medians of the repetitions; the two layouts alternate within a repetition.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from benchmarks.s3proxy import S3Proxy
from brainfs.backend.config import Config
from brainfs.backend.keys import INDEX_KEY, CorpusURL
from brainfs.backend.server import LocalS3
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.pack import build_pack
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.localindex import build_index, is_indexable
from brainfs.cache.search.shardmap import shard_of
from brainfs.tools.sample import generate

BUCKET = "bench"
QUESTIONS = ["which organizations did I meet in Kyoto", "what is the codename of the braille label printer",
             "who leads Quiet Routes", "what format do I prefer for figures", "where does Nadia live now",
             "what is the threshold for caption latency", "budget for sign language interpretation",
             "consent form gift card amount", "which screen readers did we test with"]


class HashedWords:
    """A deterministic hashed bag of words and numbers (plumbing, no meaning): fills the
    index's vectors at thousands of chunks a second. ``name`` is the installed model's, so
    that a mount searches these vectors with its real query embeddings."""

    dim = 384

    def __init__(self, name: str) -> None:
        self.name = name

    def embed(self, texts: list[str]):
        import numpy as np

        out = np.full((len(texts), self.dim), 1e-3, dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def brainfs(*args: str, env: dict[str, str], timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run the brainfs command line."""
    return subprocess.run([sys.executable, "-m", "brainfs.front.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def whole_index(tree: Path, dest: Path, embedder: HashedWords) -> dict:
    """The index of ``tree`` as one file, each file's hash its MD5 (the ETag the server
    gives it), built once per size and kept in the work directory."""
    if dest.exists():
        return {"reused": True}
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    files = [f for f in files if is_indexable(f)]
    tmp = dest.with_suffix(".building")
    for p in tmp.parent.glob(tmp.name + "*"):
        p.unlink()
    t0 = time.monotonic()
    ix = SearchIndex(tmp)
    os.environ["BRAINFS_EMBED_CACHE"] = "off"  # every vector made here, none reused
    st = ix.refresh([(f, hashlib.md5((tree / f).read_bytes()).hexdigest()) for f in files],
                    lambda f: (tree / f).read_bytes(), embedder)
    ix.close()
    os.replace(tmp, dest)
    return {"seconds": round(time.monotonic() - t0, 1), "chunks": st["chunks"], "files": len(files)}


def mount_first_recall(env: dict[str, str], url: str, mp: Path, cache: Path, parts: bool) -> dict:
    """Mount with an empty cache, time the first recall, wait for every part, ask the rest."""
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(env, BRAINFS_CACHE_DIR=str(cache))
    t0 = time.monotonic()
    r = brainfs("mount", url, str(mp), env=env)
    usable = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"mount failed: {r.stderr.strip() or r.stdout.strip()}")
    try:
        t1 = time.monotonic()
        first = json.loads((mp / ".recall" / f"{QUESTIONS[0]}.json").read_text())
        answered = time.monotonic() - t1
        if "error" in first:
            raise SystemExit(f"recall failed: {first['error']}")
        status = json.loads((mp / ".brainfs/status").read_text())
        info = dict(status["index"])
        deadline = time.monotonic() + 600
        while parts and info.get("parts_local", 0) < info.get("parts", 0):
            if time.monotonic() > deadline:
                raise SystemExit(f"parts never all arrived: {info}")
            time.sleep(0.1)
            info = json.loads((mp / ".brainfs/status").read_text())["index"]
        all_local = time.monotonic() - t1
        warm = []
        for q in QUESTIONS[1:]:
            t = time.monotonic()
            out = json.loads((mp / ".recall" / f"{q}.json").read_text())
            warm.append({"wall_ms": (time.monotonic() - t) * 1000, **out["timings"], "mode": out["mode"]})
        mem = daemon_memory(status["pid"])
        if os.environ.get("BENCH_SMAPS"):  # where the memory is, for a closer look
            shutil.copyfile(f"/proc/{status['pid']}/smaps", Path(os.environ["BENCH_SMAPS"]) /
                            f"smaps-{mp.name}-{'parts' if parts else 'whole'}-{time.time():.0f}")
    finally:
        u = brainfs("umount", str(mp), "--timeout", "120", env=env)
        if u.returncode != 0:
            subprocess.run(["fusermount3", "-u", str(mp)], check=False)
    return {"usable_s": usable, "first_recall_s": answered, "first_mode": first["mode"],
            "first_timings": first.get("timings"),
            "first_why": first["why"], "first_bytes": info.get("first_bytes"),
            "first_index_s": info.get("first_seconds"), "all_local_s": all_local,
            "downloaded_bytes": info.get("downloaded_bytes", info.get("bytes")),
            "index_bytes": info.get("bytes"), "warm": warm, "peak_rss_kib": mem["VmHWM"],
            "rss_kib": mem["VmRSS"], "rss_anon_kib": mem["RssAnon"], "rss_file_kib": mem["RssFile"]}


def daemon_memory(pid: int) -> dict[str, int]:
    """The daemon's resident memory now (KiB): VmRSS (anonymous + file-backed pages, the
    model's mapped weights among the latter) and its peak VmHWM."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])
    return out


def bench_size(files: int, args: argparse.Namespace, work: Path, model_name: str) -> dict:
    tree = work / f"tree-{files}"
    if not tree.exists():
        generate(tree, files=files, seed=7)
    built = whole_index(tree, work / f"whole-{files}.sqlite", HashedWords(model_name))
    root = work / f"s3root-{files}"
    shutil.rmtree(root, ignore_errors=True)
    for prefix in ("whole", "parts"):
        shutil.copytree(tree, root / BUCKET / prefix)
        (root / BUCKET / prefix / ".brainfs").mkdir()
        shutil.copy(work / f"whole-{files}.sqlite", root / BUCKET / prefix / INDEX_KEY)
    s3 = LocalS3(root).start()
    for prefix in ("whole", "parts"):  # as `brainfs import` leaves a corpus: the preload pack
        store = ObjectStore(CorpusURL.parse(f"s3://{BUCKET}/{prefix}"), Config().override(endpoint_url=s3.url))
        try:
            build_pack(store, store.cfg)
        finally:
            store.close()
    proxy = S3Proxy(("127.0.0.1", s3.port), delay=args.rtt_ms / 1000.0)
    proxy.start()
    out: dict = {"files": files, "build": built}
    try:
        cfg = Config().override(endpoint_url=proxy.url)
        store = ObjectStore(CorpusURL.parse(f"s3://{BUCKET}/parts"), cfg)
        try:
            t = time.monotonic()
            st = build_index(store, work / f"build-{files}", HashedWords(model_name))
            out["split"] = {"seconds": round(time.monotonic() - t, 1), "parts": st["parts"],
                            "migrated": st["migrated"], "chunks": st["chunks"],
                            "index_bytes": st["index_bytes"]}
            manifest = json.loads(store.get(".brainfs/index/manifest.json")[0])
            out["parts"] = {n: s["bytes"] for n, s in manifest["shards"].items()}
            print(f"{files} files: {len(out['parts'])} parts, {st['index_bytes'] / 1e6:.1f} MB", flush=True)
        finally:
            store.close()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
        env.update({"AWS_ENDPOINT_URL": proxy.url, "BRAINFS_CONFIG": "/dev/null"})
        mp = work / f"mnt-{files}"
        mp.mkdir(exist_ok=True)
        runs: dict[str, list[dict]] = {"whole": [], "parts": []}
        for rep in range(args.reps):
            for layout in ("whole", "parts"):
                r = mount_first_recall(env, f"s3://{BUCKET}/{layout}", mp, work / f"cache-{layout}",
                                       layout == "parts")
                runs[layout].append(r)
                print(f"{files} files, rep {rep + 1}, {layout}: usable {r['usable_s']:.2f} s, first recall "
                      f"{r['first_recall_s']:.2f} s after ({(r['first_bytes'] or 0) / 1e6:.1f} MB first), "
                      f"all local {r['all_local_s']:.1f} s, peak RSS {r['peak_rss_kib'] / 1024:.0f} MiB",
                      flush=True)
        out["runs"] = runs
        out["refresh"] = refresh_one(tree, root, files, proxy.url, work, model_name)
    finally:
        proxy.stop()
        s3.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out


def refresh_one(tree: Path, root: Path, files: int, endpoint: str, work: Path, model_name: str) -> dict:
    """One transcript of the newest quarter grows; ``brainfs index`` refreshes the parts."""
    newest = sorted(tree.glob("sessions/*/transcript.md"))[-1]
    rel = newest.relative_to(tree).as_posix()
    (root / BUCKET / "parts" / rel).write_text(newest.read_text() + "\n[D9999:1] Nadia: One more line.\n")
    cfg = Config().override(endpoint_url=endpoint)
    store = ObjectStore(CorpusURL.parse(f"s3://{BUCKET}/parts"), cfg)
    try:
        t = time.monotonic()
        st = build_index(store, work / f"build-{files}", HashedWords(model_name))
        return {"seconds": round(time.monotonic() - t, 2), "part": shard_of(rel),
                "parts_refreshed": st["parts_refreshed"], "uploaded_bytes": st["uploaded_bytes"],
                "index_bytes": st["index_bytes"], "files_indexed": st["files_indexed"]}
    finally:
        store.close()


def med(rs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rs)


def render(results: list[dict], args: argparse.Namespace) -> str:
    mb = lambda b: f"{b / 1e6:.1f}"  # noqa: E731
    lines = [
        "# The search index in parts: mount → first recall answered",
        "",
        f"`python -m benchmarks.index_shard_bench --files {args.files} --rtt-ms {args.rtt_ms} "
        f"--reps {args.reps}` on {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Embedded S3 server (`rclone serve s3`) "
        f"behind a proxy adding {args.rtt_ms} ms per request; the sample memory (seed 7); medians of "
        "the repetitions (the layouts alternate). Vectors from a hashed bag of words in 384 "
        "dimensions labelled as the installed model (see the benchmark's docstring): sizes and "
        "latencies are those of the real index, rankings are not.",
        "",
        "| files | layout | index MB | parts | downloaded before the first recall, MB | mount → usable s "
        "| usable → first recall answered s | of which index fetch s | all parts local s "
        "| warm recall p50 ms (search) | daemon RSS after warm recall MiB (anon + file) "
        "| daemon peak RSS MiB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for layout in ("whole", "parts"):
            rs = r["runs"][layout]
            warm = [w["search_ms"] + w["embed_ms"] for x in rs for w in x["warm"]]
            first_mb = mb(med(rs, "first_bytes")) if layout == "parts" else mb(rs[0]["index_bytes"])
            lines.append(
                f"| {r['files']:,} | {layout} | {mb(rs[0]['index_bytes'])} | "
                f"{len(r['parts']) if layout == 'parts' else 1} | {first_mb} | {med(rs, 'usable_s'):.2f} | "
                f"{med(rs, 'first_recall_s'):.2f} | {med(rs, 'first_index_s'):.2f} | "
                f"{med(rs, 'all_local_s'):.1f} | {statistics.median(warm):.0f} | "
                f"{med(rs, 'rss_kib') / 1024:.0f} ({med(rs, 'rss_anon_kib') / 1024:.0f} + "
                f"{med(rs, 'rss_file_kib') / 1024:.0f}) | {med(rs, 'peak_rss_kib') / 1024:.0f} |")
    lines += ["", "Parts (MB): " + "; ".join(
        f"{r['files']:,} files: " + ", ".join(f"{n} {mb(b)}" for n, b in sorted(r["parts"].items()))
        for r in results), ""]
    lines += ["A refresh after one transcript of the newest quarter changed (`brainfs index`, "
              "the parts layout; the one-file layout uploads the whole file every time):", "",
              "| files | parts refreshed | uploaded MB | of an index of MB | seconds |",
              "|---:|---|---:|---:|---:|"]
    for r in results:
        f = r["refresh"]
        lines.append(f"| {r['files']:,} | {', '.join(f['parts_refreshed'])} | {mb(f['uploaded_bytes'])} | "
                     f"{mb(f['index_bytes'])} | {f['seconds']:.1f} |")
    lines += ["", "Splitting the one-file index (the first `brainfs index` after the upgrade; "
              "nothing embedded again): " + "; ".join(
                  f"{r['files']:,} files {r['split']['seconds']:.0f} s" for r in results) + ".", ""]
    lines += ["`mount → usable`: `brainfs mount`, start to return. `usable → first recall "
              "answered`: `cat .recall/<question>.json` issued at once — the index download "
              "(whole file, or the parts fetched first), the model's load (in the background "
              "from the mount on), the search and the fetch of the hits' files; `of which index "
              "fetch` is the daemon's own figure. `warm recall`: the other questions once every "
              "part is local (embed + search, the daemon's timings). RSS after warm recall: the "
              "daemon's VmRSS once the last question is answered (RssAnon + RssFile: file-backed "
              "pages are the libraries and the model's weights mapped from their file); peak RSS: "
              "its VmHWM then."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default="2000,20000", help="corpus sizes, comma-separated")
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", type=Path, default=None,
                    help="keep the trees and built indexes here between runs (default: a temporary dir)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from brainfs.cache.search.embedder import load_embedder

    model_name = load_embedder(None).name
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="brainfs-shardbench-") as t:
        work = args.work or Path(t)
        work.mkdir(parents=True, exist_ok=True)
        for files in (int(f) for f in args.files.split(",")):
            results.append(bench_size(files, args, work, model_name))
    (args.out / "index-shards.json").write_text(json.dumps(results, indent=1))
    (args.out / "index-shards.md").write_text(render(results, args))
    print((args.out / "index-shards.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
