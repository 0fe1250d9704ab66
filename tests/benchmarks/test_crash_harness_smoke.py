"""Smoke test of the crash harness: a few cycles against brainfs and rclone run to the end,
write their report, and leave no mount or process behind (no numbers are asserted: the
harness reports defects, it is not the place to require their absence).

Runs ``python -m benchmarks.crash_harness --cycles 4 --target both`` in a subprocess with
small files and one fresh-cache check, and reads its JSON and Markdown.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.crash_harness import (
    DEFECTS, INFO, LABELS, WS, Generator, Op, judge, link_value, read_mount,
)
from helpers import REPO

pytestmark = pytest.mark.mount


def _mounts_under(root: Path) -> list[str]:
    base = str(root.resolve()) + "/"
    with open("/proc/mounts") as f:
        return [p[1] for p in (line.split() for line in f) if len(p) > 1 and p[1].startswith(base)]


def _run_harness(tmp_path: Path, *args: str) -> tuple[Path, Path, str]:
    """Run ``python -m benchmarks.crash_harness ARGS`` into tmp_path/results with its work
    directory in tmp_path/work (skipped where FUSE cannot mount); returns the results
    directory, the work directory and the output for assertion messages. Exit 0 (no defect)
    and 1 (defects found: a finding, not a harness failure) both pass; 2 fails."""
    if shutil.which("fusermount3") is None:
        pytest.skip("fusermount3 is not installed")
    out, work = tmp_path / "results", tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.crash_harness", *args, "--out", str(out),
         "--work", str(work)],
        cwd=REPO, capture_output=True, text=True, timeout=280,
    )
    log = f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    assert proc.returncode in (0, 1), log
    return out, work, log


@pytest.mark.timeout(300)
def test_crash_harness_runs_a_few_cycles(tmp_path: Path) -> None:
    out, work, log = _run_harness(tmp_path, "--cycles", "4", "--seed", "3", "--target", "both",
                                  "--max-size", "65536", "--fresh-every", "4")
    data = json.loads((out / "crash-4-seed3.json").read_text())
    md = (out / "crash-4-seed3.md").read_text()
    assert [r["target"] for r in data["results"]] == ["brainfs", "rclone"]
    for r in data["results"]:
        assert r["error"] is None, f"{r['target']}: {r['error']}\n{log}"
        assert r["cycles"] == 4, log
        assert set(r["counts"]) == set(DEFECTS + INFO)
        assert sum(r["landed"].values()) == 4
        assert r["fresh_checks"] == 1
        assert len(r["cycle_log"]) == 4
        for d in r["defects"]:  # every defect says where and what
            assert d["kind"] in DEFECTS and d["path"] and d["op"] and d["view"]
    assert "python -m benchmarks.crash_harness" in md
    assert "Symbolic links (rclone): none" in md  # rclone mount without --links has none
    assert not any(k in data["results"][1]["ops"] for k in ("symlink", "rename_link"))
    for k in DEFECTS:
        assert LABELS[k] in md
    # Every mount was unmounted and the work directory removed, pass or fail.
    assert not _mounts_under(tmp_path), _mounts_under(tmp_path)
    assert not any(work.iterdir())


@pytest.mark.timeout(300)
def test_crash_harness_runs_link_cycles(tmp_path: Path) -> None:
    """Link operations only, against brainfs: made, renamed and unlinked through a real
    mount, killed, and read back from the mount, the bucket and a fresh cache."""
    out, work, log = _run_harness(tmp_path, "--cycles", "5", "--seed", "8", "--target", "brainfs",
                                  "--ops", "symlink,rename_link,unlink_link", "--fresh-every", "5")
    [r] = json.loads((out / "crash-5-seed8-brainfs.json").read_text())["results"]
    assert r["error"] is None and r["cycles"] == 5 and r["links"], log
    assert set(r["ops"]) <= {"symlink", "rename_link", "unlink_link"} and r["ops"].get("symlink"), r["ops"]
    assert r["fresh_checks"] == 1
    assert "Symbolic links (brainfs): " in (out / "crash-5-seed8-brainfs.md").read_text()
    assert not _mounts_under(tmp_path), _mounts_under(tmp_path)
    assert not any(work.iterdir())


def test_links_are_read_without_following_them(tmp_path: Path) -> None:
    """The views read a link as its target (lstat/readlink), never the file it points to,
    and keep a dangling link; a directory is walked into, not taken for a file."""
    ws = tmp_path / WS / "d"
    ws.mkdir(parents=True)
    (ws / "f.md").write_bytes(b"#1 file\n")
    (ws / "l.lnk").symlink_to("f.md")
    (ws / "gone.lnk").symlink_to("../nowhere/x.md")
    (tmp_path / WS / "dirlink.lnk").symlink_to("d")  # a link to a directory is a link too
    view = read_mount(tmp_path, {f"{WS}/d/absent.md"})
    assert view == {f"{WS}/d/f.md": b"#1 file\n", f"{WS}/d/l.lnk": link_value(b"f.md"),
                    f"{WS}/d/gone.lnk": link_value(b"../nowhere/x.md"),
                    f"{WS}/dirlink.lnk": link_value(b"d")}


def test_a_link_is_judged_like_a_file() -> None:
    """A link's wrong target, a file in a link's place and a missing link are defects of
    the existing categories; the right link is none."""
    before = {f"{WS}/a.md": b"#1 a\n"}
    after = dict(before, **{f"{WS}/l.lnk": link_value(b"a.md")})
    op = Op("symlink", "symlink", [], [before, after], {f"{WS}/l.lnk"})
    history = {f"{WS}/a.md": set(), f"{WS}/l.lnk": set()}

    def defects(view):
        return judge(op, [after], view, before, set(), history, True, True)

    assert defects(after) == []
    [(kind, path, detail)] = defects(dict(after, **{f"{WS}/l.lnk": link_value(b"b.md")}))
    assert (kind, path) == ("corrupted", f"{WS}/l.lnk") and "wrong target" in detail
    [(kind, _, detail)] = defects(dict(after, **{f"{WS}/l.lnk": b"a.md"}))
    assert kind == "corrupted" and "where a link" in detail
    assert [d[0] for d in defects(before)] == ["lost"]
    # a file renamed over a link, killed in flight: old or new whole, never a mix
    over = {f"{WS}/l.lnk": b"#1 a\n"}
    op = Op("file_over_link", "rename file over link", [], [after, over], {f"{WS}/a.md", f"{WS}/l.lnk"})
    assert judge(op, [after, over], over, after, set(), history, True, False) == []
    both = dict(after, **{f"{WS}/l.lnk": b"#1 a\n"})
    assert [d[0] for d in judge(op, [after, over], both, after, set(), history, True, False)] \
        == ["renames_split"]


def test_link_operations_are_about_a_tenth() -> None:
    """The generator draws link operations, in about a tenth of the cycles, and never for
    a target without links."""
    for links in (True, False):
        gen, tree, kinds = Generator(1, 65536, shared=True, links=links), {}, []
        for _ in range(600):
            op = gen.next(tree)
            kinds.append(op.kind)
            tree = op.worlds[-1]
        n = sum(k in ("symlink", "rename_link", "file_over_link", "unlink_link") for k in kinds)
        if links:
            assert 0.05 * len(kinds) < n < 0.2 * len(kinds), n
            assert {"symlink", "rename_link", "file_over_link", "unlink_link"} <= set(kinds)
        else:
            assert n == 0


@pytest.mark.timeout(300)
def test_crash_harness_runs_quiet_commits(tmp_path: Path) -> None:
    """brainfs with quiet commits, half the writes ending with close alone: the harness
    runs to the end and says which mode it ran."""
    out, _work, log = _run_harness(tmp_path, "--cycles", "4", "--seed", "5", "--target", "brainfs",
                                   "--commit", "quiet", "--close-only", "0.5",
                                   "--max-size", "65536", "--fresh-every", "4")
    [r] = json.loads((out / "crash-4-seed5-brainfs.json").read_text())["results"]
    assert r["error"] is None and r["cycles"] == 4, log
    md = (out / "crash-4-seed5-brainfs.md").read_text()
    assert "brainfs commits at quiet, 50% of writes end with close alone" in md
    assert LABELS["torn_in_flight"] in md
    assert not _mounts_under(tmp_path), _mounts_under(tmp_path)


def test_a_write_kept_as_far_as_it_got_is_allowed_only_with_quiet_commits() -> None:
    """Killed in flight, a write kept as a prefix of its new content (an append: the old
    content and a prefix of the addition) is torn_in_flight with --commit quiet and a
    defect otherwise; anything else (an append that lost old bytes) is a defect either way."""
    p = f"{WS}/a.md"
    before, after = {p: b"#1 old\n"}, {p: b"#1 old\n#2 appended\n"}
    op = Op("append", "append", [], [before, after], {p})
    history: dict[str, set[str]] = {p: set()}

    def kinds(view, quiet):
        return [k for k, _, _ in judge(op, [before, after], view, before, set(), history,
                                       True, False, partial_ok=quiet)]

    half = {p: b"#1 old\n#2 app"}
    assert kinds(half, quiet=True) == ["torn_in_flight"]
    assert kinds(half, quiet=False) == ["corrupted"]
    assert kinds({p: b"#1 o"}, quiet=True) == ["corrupted"]  # the old bytes cut
    assert kinds(after, quiet=True) == [] and kinds(before, quiet=True) == []
    over = Op("overwrite", "overwrite", [], [before, {p: b"#3 new content\n"}], {p})
    assert [k for k, _, _ in judge(over, over.worlds, {p: b""}, before, set(), history,
                                   True, False, partial_ok=True)] == ["torn_in_flight"]


def test_close_only_writes_are_drawn_only_when_asked() -> None:
    """--close-only 0 draws nothing more from the generator: a seed's operations are the
    same as before the option existed."""
    a, b = Generator(4, 65536, shared=True), Generator(4, 65536, shared=True, close_only=0.0)
    ta: dict = {}
    tb: dict = {}
    for _ in range(50):
        oa, ob = a.next(ta), b.next(tb)
        assert oa.desc == ob.desc
        ta, tb = oa.worlds[-1], ob.worlds[-1]


def test_a_second_writer_rewriting_the_same_bytes_may_be_ordered_first() -> None:
    """B rewrites the bytes the shared file already held while A overwrites it: A's version
    alone is no loss (B's write, first, changed nothing); B's different bytes lost are."""
    p = f"{WS}/s/f0.md"
    before, after = {p: b""}, {p: b"#2 A's new content\n"}
    for b_data, lost in ((b"", False), (b"#3 B's own\n", True)):
        op = Op("shared", "shared", [], [before, after], {p}, shared_path=p, b_data=b_data)
        kinds = [k for k, _, _ in judge(op, [after], after, before, set(), {p: set()},
                                        True, True)]
        assert ("other_writer_lost" in kinds) == lost, (b_data, kinds)


def test_a_conflict_copy_of_a_write_killed_in_flight_is_allowed_only_with_quiet_commits() -> None:
    """Seed 16's one finding: A's overwrite killed in flight while B's version landed; with
    quiet commits A's write, kept as far as it got, goes to a conflict copy beside B's."""
    p = f"{WS}/s/f2.md"
    before, after = {p: b"#1 old\n"}, {p: b"#2 A's long new content\n"}
    b_data = b"#3 B's version\n"
    op = Op("shared", "shared", [("overwrite", lambda fd: None)], [before, after], {p},
            shared_path=p, b_data=b_data)
    copy = f"{WS}/s/f2.conflict-20261201T085200000-vm.md"
    view = {p: b_data, copy: b"#2 A's lo"}
    for quiet, want in ((True, ["torn_in_flight"]), (False, ["corrupted"])):
        kinds = [k for k, _, _ in judge(op, [before, after], view, before, set(), {p: set()},
                                        True, False, partial_ok=quiet)]
        assert kinds == want, (quiet, kinds)
    wrong = {p: b_data, copy: b"#9 unrelated"}
    assert [k for k, _, _ in judge(op, [before, after], wrong, before, set(), {p: set()},
                                   True, False, partial_ok=True)] == ["corrupted"]
