"""Commands about the wiki: ``dream`` (one run of the maintainer), ``correct`` and ``graph``."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from brainfs.backend.config import ConfigError

from .common import (
    config_of,
    embedder_or_none,
    open_corpus,
    quiet,
    refuse_empty,
    URL_HELP,
    UsageError,
)
from .common import command as make_command

# dream, the API and the graph's drawing are imported inside the commands that use them: the
# parser loads this module, and `brainfs --help` and `brainfs status` must start without them.


def cmd_dream(args: argparse.Namespace) -> int:
    from brainfs.dream.llm import synthesizer_from_config
    from brainfs.dream.sync import LeaseHeld, run_s3

    cfg, url, store = open_corpus(args)
    refuse_empty(store, url, cfg, "nothing to dream about")
    try:
        synth = synthesizer_from_config(cfg, args.synth)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    embedder = None if args.no_embed else embedder_or_none(cfg, quiet=True)
    workdir = cfg.cache_dir_for(url.bucket, url.prefix) / "dream"
    try:
        rep = run_s3(store, workdir, dry_run=args.dry_run, wait=args.wait, embedder=embedder,
                     reindex=not args.no_index, index_embedder=embedder, force=args.force,
                     synthesizer=synth)
    except LeaseHeld as e:
        raise UsageError(str(e)) from None
    res = rep.result
    if res.nothing_new:
        print(f"dream {url}: nothing new since the last run; nothing changed")
        return 0
    st = res.stats
    if args.dry_run:
        sys.stdout.write(res.diff())
        print(f"dry run: {len(res.changes)} change(s) would be made; nothing written")
    else:
        if not quiet():  # -q: the summary lines only
            for c in res.changes:
                print(c)
        print(f"commit {rep.commit[:12] if rep.commit else '(none: wiki unchanged)'}; "
              f"{len(rep.uploaded)} uploaded, {len(rep.deleted)} deleted"
              + (f", {len(rep.conflicts)} conflict(s) kept the other version: {', '.join(rep.conflicts)}"
                 if rep.conflicts else ""))
    print(f"sessions read {st['sessions_read']}/{st['sessions_total']}"
          + (f" ({st['sessions_deferred']} deferred by budget)" if st["sessions_deferred"] else "")
          + f"; pages {st['pages']}; claims {st['claims']}, rejected by verification "
          f"{st['rejected']} ({st['verify_method']}); citations valid {st['share_valid_citations']:.1%}; "
          f"{rep.seconds:.1f}s")
    if st.get("synth_note"):
        print(st["synth_note"])
    for pr in res.problems:
        print(f"  {pr}", file=sys.stderr)
    return 0


def cmd_correct(args: argparse.Namespace) -> int:
    from brainfs.dream.core import correction_event

    if not args.text.strip():
        raise UsageError("empty correction")
    cfg, url, store = open_corpus(args)
    refuse_empty(store, url, cfg, "nothing to correct")
    path, content = correction_event(args.text, scope=args.scope)
    store.put(path, content.encode("utf-8"), if_none_match=True)
    print(f"recorded {url}/{path}; the next `brainfs dream {url}` turns it into a memory card")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from brainfs.front.api import Memory

    cfg = config_of(args)
    mem = Memory(args.where, cfg)  # checks the bucket, or that the mount answers
    try:
        refuse_empty(mem.store, mem.url, cfg, "nothing to forget")
        path = mem.forget(args.phrase)
        url = mem.url
    finally:
        mem.close()
    print(f"recorded {url}/{path}. The next `brainfs index {url}` drops every chunk holding it "
          f"from the search index; the next `brainfs dream {url}` redacts it in transcripts "
          "(turn ids kept), GUIDE.md, cards and pages, and leaves it out of every page it writes. "
          "The wiki's git history keeps earlier versions of pages.")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from brainfs.dream.graph import FORMATS, render_graph

    out = Path(args.out)
    if out.suffix.lower() not in FORMATS:
        raise UsageError(f"--out {out}: the graph is written as {', '.join(FORMATS)} "
                         "(chosen by the file's suffix; .html is the interactive page)")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: directory {out.parent} does not exist")
    cfg, url, store = open_corpus(args)
    paths = [o.path for o in store.list("knowledge") if o.path.endswith(".md")]
    if not paths:
        raise UsageError(f"{url} has no knowledge/ pages yet: run `brainfs dream {url}`")
    files: dict[str, str] = {}

    def got(path: str, data, etag: str, err) -> None:
        if data is not None:
            files[path] = data.decode("utf-8", errors="replace")

    store.get_many(paths, got)
    counts = render_graph(files, out, title=str(url), sessions=args.sessions)
    print(f"wrote {out}: {counts['pages']} pages, {counts['links']} links, "
          f"{counts['cite_edges']} citation edges"
          + (f", {counts['sessions']} sessions" if args.sessions else " (sessions hidden: --sessions shows them)"))
    return 0




def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the ``brainfs`` parser."""
    command = functools.partial(make_command, common=common)
    dr = command(sub, "dream", "one run of the wiki maintainer: summarize new sessions, "
                 "update knowledge/ with cited facts, commit, upload, re-index",
                 ["brainfs dream s3://memory/alice --dry-run",
                  "brainfs dream s3://memory/alice --synth llm   # BRAINFS_LLM_BASE_URL, BRAINFS_LLM_MODEL"])
    dr.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    dr.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    dr.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                    help="wait this long for another running dream to finish (0: exit at once)")
    dr.add_argument("--force", action="store_true", help="re-render even when nothing is new")
    dr.add_argument("--no-embed", action="store_true",
                    help="verify claims lexically and index without vectors (no model load)")
    dr.add_argument("--no-index", action="store_true", help="skip the re-index after the run")
    dr.add_argument("--synth", choices=("deterministic", "llm", "agent"),
                    help="who writes pages and summaries (default: dream_synthesizer in the config, "
                    "deterministic); llm uses BRAINFS_LLM_BASE_URL/OPENAI_BASE_URL (or ANTHROPIC_*) and "
                    "BRAINFS_LLM_MODEL; agent keeps the pages an agent wrote through MCP (dream_submit)")
    dr.set_defaults(func=cmd_dream)

    co = command(sub, "correct", "record a correction; the next dream run turns it into a "
                 "memory card (notes/corrections/) and updates the affected pages",
                 ['brainfs correct "Mara moved to Osaka in May 2024" s3://memory/alice',
                  'brainfs correct "use metric units" s3://memory/alice --scope preferences'])
    co.add_argument("text", metavar="TEXT", help="the correction, as one statement")
    co.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    co.add_argument("--scope", default="global", help="what the correction applies to")
    co.set_defaults(func=cmd_correct)

    fo = command(sub, "forget", "ask the memory to forget a phrase: the index drops it, "
                 "dream redacts it from transcripts, cards and pages",
                 ["brainfs forget \"Ana's phone number\" s3://memory/alice",
                  "brainfs forget \"Nakazakicho\" ~/memory    # through a mount"])
    fo.add_argument("phrase", metavar="PHRASE", help="the words to forget (whole words, any case)")
    fo.add_argument("where", metavar="s3://BUCKET/PREFIX|MOUNTPOINT",
                    help="the corpus, or a mount of it")
    fo.set_defaults(func=cmd_forget)

    gr = command(sub, "graph", "draw the wiki's link and citation graph: a picture or an "
                 "interactive page",
                 ["brainfs graph s3://memory/alice --out graph.html   # hover, filter by type, find",
                  "brainfs graph s3://memory/alice --out graph.svg --sessions"],
                 description="Draw the wiki's graph: pages coloured by type (legend beside), "
                 "[[links]] between them, sized by how much they cite. A picture (.png, .svg, "
                 ".pdf; only the best-connected pages are labelled when there are many) or one "
                 "self-contained interactive page (.html: hover a page for its links, click a "
                 "type to hide it, find by title).")
    gr.add_argument("url", metavar="s3://BUCKET/PREFIX", help=URL_HELP)
    gr.add_argument("--out", required=True, metavar="FILE",
                    help="file to write; its suffix picks the format: .png, .svg, .pdf or .html")
    gr.add_argument("--sessions", action="store_true",
                    help="draw the cited sessions too (grey dots, one edge per citing page)")
    gr.set_defaults(func=cmd_graph)
