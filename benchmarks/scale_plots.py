"""Issue 17's figures against corpus size (2k, 5k, 20k files), one PNG each.

    python -m benchmarks.scale_plots --results benchmarks/results

Reads what the benchmarks left in ``--results`` and draws every figure that has at least
one measured size:

* ``dream-scale.json`` (``benchmarks.dream_scale``): dream's first run, its run after 10
  new sessions, and the peak RSS of each;
* ``mount.md`` and ``mount-<N>.md`` (``benchmarks.mount_bench``; the table, since the
  committed 2k/20k run kept no JSON) and ``mount*.json`` where present: mount → usable with
  an empty cache, paginated LIST and listing snapshot;
* ``grep-*.json`` (``benchmarks.grep_bench``): warm ``grep -r`` on a writable mount over
  local (commits at close and ``--commit quiet``) and on a read-only one, mount → usable and
  daemon peak RSS of the brainfs mode; where two runs measured the same point, the newer
  (``meta.date``) is plotted;
* ``index-shards*.md`` (``benchmarks.index_shard_bench``, its table): index size and what a
  mount downloads before its first recall, usable → first recall answered, warm recall p50
  and the daemon's peak RSS with recall warm, per index layout.

A figure is plotted only at the sizes where it was measured (no interpolation); the
issue's target at 20,000 files, where there is one, is a dashed line. Writes
``scale-<figure>.png`` and ``scale.md`` (the table of every plotted point and where it
came from) into ``--out`` (default: ``--results``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Series:
    """One line of a figure: value per corpus size (files), and the file each came from."""

    label: str
    points: dict[int, float] = field(default_factory=dict)
    source: dict[int, str] = field(default_factory=dict)

    def add(self, files: int, value: float | None, src: str) -> None:
        if value is not None:
            self.points[files] = float(value)
            self.source[files] = src


@dataclass
class Figure:
    """One PNG: a quantity against corpus size."""

    name: str
    title: str
    ylabel: str
    series: dict[str, Series] = field(default_factory=dict)
    target: float | None = None
    notes: list[str] = field(default_factory=list)

    def line(self, label: str) -> Series:
        return self.series.setdefault(label, Series(label))

    @property
    def measured(self) -> bool:
        return any(s.points for s in self.series.values())


# --------------------------------------------------------------------------- readers


def read_dream(results: Path, figs: dict[str, Figure]) -> None:
    """dream-scale.json: first / incremental run seconds and peak RSS per size."""
    p = results / "dream-scale.json"
    if not p.exists():
        return
    data = json.loads(p.read_text())
    t, rss = figs["dream-time"], figs["dream-rss"]
    for r in data["sizes"]:
        for kind, label in (("first", "first run"), ("incremental", "after 10 new sessions")):
            x = r.get(kind)
            if x:
                t.line(label).add(r["files"], x["run_s"], p.name)
                rss.line(label).add(r["files"], x["peak_rss_mib"], p.name)
        first = r.get("first") or {}
        pages = (first.get("stats") or {}).get("pages", 0)
        if pages and first.get("pages_written", 0) < pages / 2:
            # the time is the work of every page, but most were not published
            t.notes.append(f"{r['files']:,} files: the first run wrote {first['pages_written']} "
                           f"of the {pages} pages it rendered (validation excluded the rest; "
                           f"see {p.name[:-5]}.md)")


_MOUNT_ROW = re.compile(r"^\|\s*([\d,]+)\s*\|\s*(list|snapshot|eager)\s*\|\s*([\d.]+)\s*\|")


def read_mount(results: Path, figs: dict[str, Figure]) -> None:
    """mount.md / mount-<N>.md tables (the JSON beside them, when there is one, holds the
    same medians): mount → usable per mode."""
    fig = figs["mount"]
    for p in sorted(results.glob("mount*.md")):
        for ln in p.read_text().splitlines():
            m = _MOUNT_ROW.match(ln)
            if m:
                fig.line(f"brainfs mount ({m.group(2)})").add(
                    int(m.group(1).replace(",", "")), float(m.group(3)), p.name)


_INDEX_ROW = re.compile(r"^\|\s*([\d,]+)\s*\|\s*(whole|parts)\s*\|(.*)\|\s*$")


def read_index(results: Path, figs: dict[str, Figure]) -> None:
    """index-shards*.md (``benchmarks.index_shard_bench``; medians as its table gives them):
    index size and what a mount downloads before its first recall, usable → first recall
    answered, warm recall p50 (search), daemon peak RSS with recall warm."""
    for p in sorted(results.glob("index-shards*.md")):
        seen: set[tuple[int, str]] = set()  # the newest run comes first; older ones follow
        for ln in p.read_text().splitlines():
            m = _INDEX_ROW.match(ln)
            if not m:
                continue
            cells = [c.strip() for c in m.group(3).split("|")]
            if len(cells) == 10:  # RSS after warm recall (anon + file), then the peak
                cells = cells[:8] + cells[9:]
            if len(cells) != 9:
                continue
            files, layout = int(m.group(1).replace(",", "")), m.group(2)
            if (files, layout) in seen:
                continue
            seen.add((files, layout))
            index_mb, _parts, down_mb, _usable, first, _fetch, _local, p50, rss = cells
            figs["index"].line(f"index size ({layout})").add(files, float(index_mb), p.name)
            figs["index"].line(f"downloaded before the first recall ({layout})").add(
                files, float(down_mb), p.name)
            figs["first-recall"].line(f"index {layout}").add(files, float(first), p.name)
            figs["recall-p50"].line(f"index {layout}").add(files, float(p50), p.name)
            figs["rss"].line(f"daemon, recall warm (index {layout})").add(files, float(rss), p.name)


def _median_s(mode: dict | None, op: str) -> float | None:
    if not mode:
        return None
    o = mode.get("ops", {}).get(op) or {}
    return o.get("median_s") if o.get("status") == "ok" else None


def read_grep(results: Path, figs: dict[str, Figure]) -> None:
    """grep-<N>.json: warm grep over local per brainfs mode, mount time, peak RSS."""
    runs = [(json.loads(p.read_text()), p) for p in sorted(results.glob("grep-*.json"))]
    # oldest first: where two runs measured the same point, the newer one is plotted
    for data, p in sorted(runs, key=lambda dp: str(dp[0].get("meta", {}).get("date", ""))):
        meta, modes = data.get("meta", {}), data.get("modes", {})
        files = meta.get("file_count") or meta.get("files")
        if not files:
            continue
        local = _median_s(modes.get("local"), "grep")
        for mode, label in (("brainfs-warm", "writable, close commits"),
                            ("brainfs-quiet-warm", "writable, quiet commits"),
                            ("brainfs-ro-warm", "read-only")):
            g = _median_s(modes.get(mode), "grep")
            if g is not None and local:
                figs["grep"].line(label).add(files, g / local, p.name)
        cold = modes.get("brainfs-cold") or {}
        figs["mount"].line("brainfs mount (grep bench, cold)").add(
            files, cold.get("mount_s_median"), p.name)
        if cold.get("peak_rss_kib"):
            figs["rss"].line("daemon, grep -r (no recall)").add(
                files, cold["peak_rss_kib"] / 1024, p.name)


def collect(results: Path) -> dict[str, Figure]:
    """Every figure, with whatever the results directory holds of it."""
    figs = {f.name: f for f in (
        Figure("dream-time", "dream: first run vs after 10 new sessions", "run time (s)"),
        Figure("dream-rss", "dream: peak RSS of the run", "peak RSS (MiB)"),
        Figure("mount", "mount → usable, empty cache, 20 ms per request", "seconds",
               target=2.0),
        Figure("grep", "warm grep -r over a mount ÷ local directory", "× local", target=1.5),
        Figure("rss", "daemon peak RSS", "MiB", target=300.0),
        Figure("index", "search index: size and download before the first recall", "MB"),
        Figure("first-recall", "mount usable → first recall answered, 20 ms per request",
               "seconds", target=3.0),
        Figure("recall-p50", "warm recall p50 (search; index bench vectors)", "ms",
               target=150.0),
    )}
    read_dream(results, figs)
    read_mount(results, figs)
    read_grep(results, figs)
    read_index(results, figs)
    return figs


# --------------------------------------------------------------------------- output


def plot(fig: Figure, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    xs_all: set[int] = set()
    for s in fig.series.values():
        if not s.points:
            continue
        xs = sorted(s.points)
        xs_all.update(xs)
        ax.plot(xs, [s.points[x] for x in xs], marker="o", label=s.label)
        for x in xs:
            ax.annotate(f"{s.points[x]:.3g}", (x, s.points[x]), textcoords="offset points",
                        xytext=(4, 4), fontsize=7)
    if fig.target is not None:
        ax.axhline(fig.target, linestyle="--", color="grey", linewidth=1,
                   label=f"issue 17 target at 20k ({fig.target:g})")
    ax.set_xscale("log")
    ticks = sorted(xs_all)
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{x / 1000:g}k" for x in ticks])
    ax.minorticks_off()
    ax.set_xlabel("corpus size (files, sample memory)")
    ax.set_ylabel(fig.ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(fig.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    f.tight_layout()
    f.savefig(path)
    plt.close(f)


def table(figs: dict[str, Figure], written: list[Path], argv: list[str]) -> str:
    lines = ["# Issue 17's figures against corpus size", "",
             f"`python -m benchmarks.scale_plots {' '.join(argv)}` — every point below was "
             "measured by the benchmark named in its source file (its command, machine, load "
             "and commit are there); sizes where a figure was not measured have no point.", "",
             "| figure | series | files | value | source |", "|---|---|---:|---:|---|"]
    for fig in figs.values():
        for s in fig.series.values():
            for x in sorted(s.points):
                lines.append(f"| {fig.title} ({fig.ylabel}) | {s.label} | {x:,} | "
                             f"{s.points[x]:.3g} | [{s.source[x]}]({s.source[x]}) |")
    for fig in figs.values():
        lines += [f"\n{fig.title}: {n}." for n in fig.notes]
    lines += ["", "Plots: " + ", ".join(f"[`{p.name}`]({p.name})" for p in written) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, default=Path("benchmarks/results"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    out = args.out or args.results
    out.mkdir(parents=True, exist_ok=True)
    figs = collect(args.results)
    written = []
    for fig in figs.values():
        if fig.measured:
            path = out / f"scale-{fig.name}.png"
            plot(fig, path)
            written.append(path)
    (out / "scale.md").write_text(table(figs, written, argv))
    print(f"wrote {', '.join(p.name for p in written)} and scale.md into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
