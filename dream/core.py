"""The dream run over a memory tree: orient, summarize, attach facts, update the wiki,
validate, verify — producing a staged tree and the list of changes. No S3 here: the tree is
anything with ``paths()`` and ``read()`` (:class:`LocalTree` for a directory);
:mod:`brainfs.dream.sync` puts the S3 layer, git history, lease and re-index on top.

Incremental: the state (``.brainfs/dream-state.json``) keeps, per session, the transcript's
ETag and what was extracted from it (summary sentences, facts with their turn). A run reads
only new or grown transcripts, then re-renders every managed file from the state; because
rendering is deterministic, an unchanged input gives byte-identical files and no change.

The run's phases live in modules of their own, in order: :mod:`.run` (the run's record,
orient, the state, reading sessions), :mod:`.writing` (the wiki), :mod:`.checking`
(verification and validation), :mod:`.changes` (what changed, the result). The trees dream
reads are in :mod:`.trees`, the result in :mod:`.results`; this module runs the phases and
names what the rest of brainfs imports of dream.
"""

from __future__ import annotations

import datetime as _dt
import time
from pathlib import Path

from .changes import diff_against_previous, finish
from .checking import verify_and_validate
# `brainfs correct` (front/cli, front/api) imports the event writer from here
from .corrections import correction_event as correction_event
from .progress import Progress
from .results import RunResult
from .run import inputs_changed, orient, read_sessions, start_state
# the state's path, for the callers that read a run's staged tree
from .state import STATE_PATH as STATE_PATH
from .synth import DeterministicSynthesizer, Synthesizer
# a tree held in memory, for the benchmarks and tools that run dream on one
from .trees import DictTree as DictTree
from .trees import LocalTree, Tree
from .validate import clear_parsed
from .writing import write_wiki


def dream(tree: Tree, *, synthesizer: Synthesizer | None = None, embedder=None,
          settings: dict | None = None, force: bool = False,
          now: _dt.datetime | None = None, progress: Progress | None = None) -> RunResult:
    """One run over ``tree``; nothing is written (see :func:`run_local` and sync).
    ``progress``: where phases and counts go (default: standard error when it is a terminal)."""
    t0 = time.monotonic()
    run = orient(tree, synthesizer or DeterministicSynthesizer(), settings,
                 progress if progress is not None else Progress(), t0, now)
    if not (run.new_sessions or run.gone or force or inputs_changed(run)):
        return RunResult(nothing_new=True, stats={"seconds": round(time.monotonic() - t0, 3)})
    start_state(run)
    read_sessions(run)
    write_wiki(run)
    try:
        verify_and_validate(run, embedder)
        diff_against_previous(run)
    finally:
        clear_parsed()
    return finish(run)



def run_local(tree_dir: Path | str, staged_dir: Path | str | None = None, *,
              apply: bool = False, **kw) -> RunResult:
    """Run dream on a local memory tree. The staged tree (every file dream manages, as it
    would publish it) is written to ``staged_dir``; with ``apply`` the changes are also
    written into ``tree_dir`` (changed files replaced, deleted files removed)."""
    tree_dir = Path(tree_dir)
    res = dream(LocalTree(tree_dir), **kw)
    if res.nothing_new:
        return res
    if staged_dir is not None:
        staged = Path(staged_dir)
        for p, txt in res.staged.items():
            dst = staged / p
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(txt, encoding="utf-8")
    if apply:
        apply_to_dir(res, tree_dir)
    return res


def apply_to_dir(res: RunResult, root: Path) -> None:
    """Write a run's changes into the tree at ``root``: each changed file replaced whole
    (through a temporary file), each deleted one removed."""
    for p, txt in res.changed.items():
        dst = root / p
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".dream-tmp")
        tmp.write_text(txt, encoding="utf-8")
        tmp.replace(dst)
    for p in res.deleted:
        (root / p).unlink(missing_ok=True)
