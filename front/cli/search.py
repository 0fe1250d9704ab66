"""Commands that search a memory: ``recall``, ``context`` and ``eval locomo``."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from brainfs.backend.keys import INDEX_DIR, INDEX_KEY
from brainfs.front.usage import RESERVE_MAX, default_reserve

from .common import (
    FlagError,
    config_of,
    positive_int,
    quiet,
    UsageError,
    warn,
)
from .common import command as make_command

# The API (and the search stack with it), the mount's recall module, the context page and the
# LoCoMo evaluation are imported inside the commands that use them: the parser loads this
# module, and `brainfs --help` and `brainfs status` must start without them.


def recall_k(text: str) -> int:
    """argparse's type for recall's ``-k``: a whole number from 1 to MAX_K (a value out of
    range is a malformed command line, exit 2, as ``-k 0`` is)."""
    from brainfs.fs.recall import MAX_K  # only when -k is given: the mount's module is not light

    n = positive_int(text)
    if n > MAX_K:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_K} (got {n})")
    return n


def cmd_recall(args: argparse.Namespace) -> int:
    """Recall through a mount (which materializes the files behind the hits) or from the
    corpus's index (the Python API's :meth:`Memory.recall` either way)."""
    from brainfs.front.api import Memory

    if not args.query.strip():
        raise UsageError('empty query: give the question to recall, e.g. brainfs recall "where did I meet Ana"')
    if args.mount and args.url:
        raise UsageError("give either --mount MOUNTPOINT or a corpus URL, not both")
    if not args.mount and not args.url:
        raise UsageError("give --mount MOUNTPOINT or a corpus URL s3://BUCKET/PREFIX")
    with Memory(args.mount or args.url, config_of(args)) as memory:
        r = memory.recall(args.query, args.k, as_of=args.as_of, history=args.history)
    if args.json:
        sys.stdout.write(json.dumps(r.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(r.text())
    return 0


def cmd_eval_locomo(args: argparse.Namespace) -> int:
    from brainfs.tools.locomo import LocomoInputError, evaluate, read_samples

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: {'not a file' if path.exists() else 'no such file'} "
                         "(expected LoCoMo JSON)")
    try:
        samples = read_samples(path)  # a malformed file fails here, before any model loads
    except LocomoInputError as e:
        raise UsageError(str(e)) from None
    if not samples:
        raise UsageError(f"{path}: no samples (an empty list): nothing to evaluate")
    extra = {}
    if not args.no_wiki:
        # The ablation of the seed: the same hybrid retrieval plus the wiki dream builds
        # from the same sessions (a wiki passage counts for the turns its claims cite).
        from brainfs.tools.locomo import wiki_retriever
        from brainfs.tools.locomo_wiki import build_wiki

        extra["hybrid+wiki"] = wiki_retriever(build_wiki)
    try:
        result = evaluate(path, limit_conversations=args.conversations,
                          limit_questions=args.questions,
                          progress=sys.stderr.isatty() and not args.json and not quiet(),
                          extra_retrievers=extra, answer_budget=args.answer_budget,
                          per_question=args.per_question)
    except LocomoInputError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['questions']} questions")
    for name, r in result["retrievers"].items():
        t, s = r["turn"], r["session"]
        print(f"{name:12s} turn  " + "  ".join(f"{k} {v:.3f}" for k, v in t.items())
              + "   session  " + "  ".join(f"{k} {v:.3f}" for k, v in s.items()))
    for name, r in result["retrievers"].items():
        a = r.get("answers")
        if a:
            print(f"{name:12s} answer in the first {a['budget_tokens']:,} tokens of recall: "
                  f"{a['share']:.1%} of {a['questions']} questions (categories 1, 2, 4)")
        a = r.get("answers_context")
        if a:
            print(f"{name:12s} answer in a {a['budget_tokens']:,}-token context window: "
                  f"{a['share']:.1%} of {a['questions']} questions (categories 1, 2, 4)")
    return 0



def cmd_context(args: argparse.Namespace) -> int:
    """Assemble the context for one turn: lanes under a token budget, with reasons."""
    from brainfs.cache.context.assembly import MemorySource
    from brainfs.front.api import Memory, assemble_context

    given = [x for x in (args.mount, args.dir, args.url) if x]
    if len(given) != 1:
        raise FlagError("give exactly one of --mount MOUNTPOINT, --dir DIR or s3://BUCKET/PREFIX")
    if not args.task.strip():
        raise UsageError("empty task")
    if args.budget <= 0:
        raise FlagError(f"--budget must be a positive number of tokens (got {args.budget})")
    if args.reserve is None:
        args.reserve = default_reserve(args.budget)
    elif args.reserve < 0 or args.reserve >= args.budget:
        raise FlagError(f"--reserve must be at least 0 and below the budget {args.budget} (got {args.reserve})")
    cfg = config_of(args)
    if args.index and not Path(args.index).exists():
        raise UsageError(f"{args.index}: no such index file or folder")
    if args.dir:
        root = Path(args.dir)
        if not root.is_dir():
            raise UsageError(f"{root} is not a directory")
        spec = cfg.recall.embedder or "auto"
        window = assemble_context(args.task, lambda ix: MemorySource(root, ix, embedder=spec),
                                  Path(args.index) if args.index else
                                  (root / INDEX_DIR if (root / INDEX_DIR).is_dir() else root / INDEX_KEY),
                                  cfg, args.budget, args.reserve, args.k, args.drop_stale,
                                  args.as_of, args.history)
    else:
        with Memory(args.mount or args.url, cfg) as memory:
            corpus = memory.url
            window = memory.context(args.task, budget=args.budget, reserve=args.reserve, k=args.k,
                                    drop_stale=args.drop_stale, index=args.index,
                                    as_of=args.as_of, history=args.history)
    if window.why == "no search index" and args.dir:
        warn(f"no search index in {args.dir}; the cards, thread and files lanes stay empty "
             f"(pass one with --index FILE, or import the tree: `brainfs import {args.dir} "
             "s3://B/P && brainfs index s3://B/P`, then use the corpus or a mount of it)")
    elif window.why == "no search index":
        warn("no search index found; the cards, thread and files lanes stay empty "
             f"(run `brainfs index {corpus}`, or pass --index FILE)")
    if args.json:
        print(json.dumps(window.to_json(), indent=2))
    elif args.html:
        try:
            from brainfs.cache.context.page import link_base

            base = link_base(args.mount or args.dir or args.url)
            Path(args.html).write_text(window.to_html(base), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"cannot write {args.html}: {e.strerror or e}") from None
        print(f"wrote {args.html}: {window.used} of {window.available} tokens used, "
              f"{len(window.admitted())} items admitted, {len(window.skipped())} skipped, mode {window.mode}")
    else:
        sys.stdout.write(window.to_markdown())
    return 0




def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the ``brainfs`` parser."""
    command = functools.partial(make_command, common=common)
    _add_recall(sub, command)
    _add_context(sub, command)
    _add_eval(sub, command)


def _add_recall(sub: argparse._SubParsersAction, command: Callable[..., argparse.ArgumentParser]) -> None:
    """``brainfs recall``."""
    rc = command(sub, "recall", "hybrid semantic search; through a mount it also "
                 "materializes the files behind the hits",
                 ['brainfs recall "which orgs did I meet in Kyoto" --mount ~/memory',
                  'brainfs recall "dog adoption" s3://memory/alice -k 3 --json'])
    rc.add_argument("query", metavar="QUERY", help="the question, in plain words")
    rc.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX",
                    help="search the corpus directly (its index is downloaded to the cache)")
    rc.add_argument("--mount", metavar="MOUNTPOINT",
                    help="a running mount to ask (files get materialized there)")
    rc.add_argument("-k", type=recall_k, default=None, metavar="N",
                    help="number of passages, at most 200 (default: recall_k in the config, 10; "
                    "through a mount: the mount's)")
    rc.add_argument("--json", action="store_true", help="the cards as JSON instead of the synthesis")
    when = rc.add_mutually_exclusive_group()
    when.add_argument("--as-of", metavar="YYYY-MM-DD", default=None,
                      help="answer with what was true on that day: later turns and records "
                      "left out, only changes made by then marked")
    when.add_argument("--history", action="store_true",
                      help="replaced values keep their rank (still marked superseded); "
                      "default: what is true now first")
    rc.set_defaults(func=cmd_recall)


def _add_context(sub: argparse._SubParsersAction, command: Callable[..., argparse.ArgumentParser]) -> None:
    """``brainfs context``."""
    cx = command(sub, "context", "assemble what reaches the model for a task: lanes "
                 "(scope, guide, index, pinned, cards, thread, files) under a token "
                 "budget, every item with its reason",
                 ['brainfs context "plan the Kyoto trip" --mount ~/memory --budget 2000',
                  'brainfs context "plan the Kyoto trip" s3://memory/alice --json | jq .used',
                  'brainfs context "plan the Kyoto trip" --dir ./memory --html context.html',
                  'brainfs context "where does Amara work" --mount ~/memory --as-of 2026-01-15'])
    cx.add_argument("task", metavar="TASK", help="the task or message of this turn")
    cx.add_argument("url", nargs="?", metavar="s3://BUCKET/PREFIX", help="read the corpus directly")
    where = cx.add_mutually_exclusive_group()
    where.add_argument("--mount", metavar="MOUNTPOINT",
                       help="a running mount (files read through it, index from its cache)")
    where.add_argument("--dir", metavar="DIR",
                       help="a plain memory tree on disk (index: DIR/.brainfs/index/, DIR/.brainfs/index.sqlite or --index)")
    cx.add_argument("--index", metavar="FILE",
                    help="search index file or folder of parts to use (default: from the mount, dir or corpus)")
    cx.add_argument("--budget", type=positive_int, default=8000, metavar="TOKENS",
                    help="context budget in tokens")
    cx.add_argument("--reserve", type=int, default=None, metavar="TOKENS",
                    help="tokens kept free for the model's answer (default: a quarter of the "
                    f"budget, at most {RESERVE_MAX})")
    cx.add_argument("-k", type=positive_int, default=None, metavar="N",
                    help="recall pool size (default: scales with the budget)")
    cx.add_argument("--drop-stale", action="store_true",
                    help="skip items older than stale_days instead of flagging them")
    when = cx.add_mutually_exclusive_group()
    when.add_argument("--as-of", metavar="YYYY-MM-DD", default=None,
                      help="the window as the memory stood at the end of that day: recall as "
                      "of it, freshness judged then, page lines and cards as they stood")
    when.add_argument("--history", action="store_true",
                      help="replaced values keep their place (still marked superseded); "
                      "default: what is true now first")
    out = cx.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the window as JSON: budget, lanes, every item with its reason and tokens")
    out.add_argument("--html", metavar="FILE", help="write the context-window page to FILE")
    cx.set_defaults(func=cmd_context)


def _add_eval(sub: argparse._SubParsersAction, command: Callable[..., argparse.ArgumentParser]) -> None:
    """``brainfs eval locomo``."""
    ev = command(sub, "eval", "retrieval quality",
                 ["brainfs eval locomo data/locomo/locomo-dev.json --no-wiki"]
                 ).add_subparsers(dest="evalcmd", required=True, metavar="SUBCOMMAND")
    lo = command(ev, "locomo", "evidence recall@k, and answers in the first 1,000 tokens "
                 "of recall, on LoCoMo-format data",
                 ["brainfs eval locomo locomo10.json --conversations 1 --questions 20",
                  "brainfs eval locomo locomo10.json --json > result.json"])
    lo.add_argument("file", metavar="FILE.json", help="a LoCoMo-format file (a list of samples)")
    lo.add_argument("--json", action="store_true", help="recall@k per retriever and category as JSON")
    lo.add_argument("--conversations", type=positive_int, metavar="N", help="only the first N conversations")
    lo.add_argument("--questions", type=positive_int, metavar="N",
                    help="only the first N questions per conversation")
    lo.add_argument("--no-wiki", action="store_true", help="skip the hybrid+wiki retriever (no dream run)")
    lo.add_argument("--answer-budget", type=positive_int, default=1000, metavar="TOKENS",
                    help="tokens of recall read for the answer measure")
    lo.add_argument("--per-question", action="store_true",
                    help="with --json: each question's metrics and answer outcome")
    lo.set_defaults(func=cmd_eval_locomo)
