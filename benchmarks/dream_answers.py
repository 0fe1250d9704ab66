"""Answers in 1,000 tokens: does what an agent reads of the wiki hold the answer?

Two ways of reading, in one run:

**Through recall** (LoCoMo only; the issue's own measure, the ``answers`` of ``brainfs eval
locomo --json``): the first 1,000 tokens (MiniLM word pieces) of the cards recall returns
for the question, per retriever (bm25, dense, hybrid), from the conversation's transcripts
alone and from the transcripts plus the wiki dream writes from them, in one index as a
dreamt memory's mount holds them. The wiki's page shape (a few dream settings,
:data:`PAGE_SHAPES`) is chosen by leave-one-conversation-out; the cross-validated figure is
the one to quote.

**Through context** (``--context-only``, LoCoMo only; written to dream-answers-context.md):
the window of 1,000 tokens ``brainfs context`` (``assembly.assemble``) makes for the
question, headers and all, from the transcripts alone and from the transcripts plus the
wiki, the wiki read in each way of :func:`wiki_uses` (``assembly.WikiUse``: pages as
recall's chunks, or as claim lines); the way is chosen by leave-one-conversation-out.

**Wiki lines left to their turns** (``--restated-only``, LoCoMo only; written to
dream-answers-restated.md): the through-recall measure for the transcripts alone and for
the transcripts plus the wiki as dream writes it, the latter read twice from one index —
recall returning its page chunks whole (``recall(leave_to_turns=False)``, as recall did
before) and as recall returns them (a wiki line whose cited
turns all stand among the returned turns dropped, the list filled up again:
``cache/search/restated.py``). A rule, not a tuned choice: the dev figure is the result.

**The wiki read directly**: an agent with a question about someone or something opens
``knowledge/INDEX.md`` and the page of each subject the question names (a title or an alias,
whole words), and reads them in that order until its budget — 1,000 tokens, estimated as
characters / 4 — is spent.

Either way a question is **answered** when every content word of its gold answer
(``tools.locomo.content_words``: lower case, punctuation and stop words dropped, numbers
kept, plurals folded, an ISO date read as "7 May 2023") stands inside what was read; read
directly, all of them also within 30 content words of each other.

Questions:

* **LoCoMo dev** (``--data FILE`` or ``$BRAINFS_LOCOMO_DIR/locomo-dev.json``): categories 1
  (multi-hop), 2 (temporal) and 4 (single-hop), yes/no answers left out; each conversation
  is one memory, dreamt once (lexical verification, the ablation settings of
  ``tools.locomo_wiki``).
* **Personas** (``tests/personas/*.yaml``): each ``now`` label is a question about its
  subject whose answer is the current value ("Ines Okafor" → "Corvid Analytics").

Columns, all from the same run:

* ``wiki``: INDEX.md + the named pages' bodies (frontmatter left out), 1,000 tokens;
* ``wiki as read``: the same files as ``cat`` shows them, frontmatter (``sources:``) included;
* ``page, no cap``: the named pages whole — is the answer on the page at all;
* ``transcripts``: the baseline without a wiki, the same budget filled with the turns that
  the subject speaks or that name it, newest session first (what ``grep`` gives).

``python benchmarks/dream_answers.py [--data FILE] [--budget 1000] [--out benchmarks/results]
[--embed-cache /tmp/FILE.npz] [--context-only | --restated-only [--retrievers hybrid]]``
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from pathlib import Path

from brainfs.cache.search.chunker import split_frontmatter
from brainfs.tools.locomo import ANSWER_K, content_words
from brainfs.cache.layout import INDEX_PATH, SESSIONS, in_knowledge
from brainfs.cache.search.text import CHARS_PER_TOKEN, estimate_tokens
from brainfs.dream.text import parse_transcript
from brainfs.dream.core import DictTree, dream

PERSONAS = Path(__file__).resolve().parent.parent / "tests" / "personas"
CATEGORIES = {1: "multi-hop", 2: "temporal", 4: "single-hop"}
INDEX = INDEX_PATH
ARMS = ("wiki", "wiki as read", "page, no cap", "transcripts")


# --------------------------------------------------------------------------- matching

def answer_words(answer: str) -> set[str]:
    """The content words of a gold answer: the one rule of ``tools.locomo.content_words``
    (the same as the answer measure of ``brainfs eval locomo``)."""
    return set(content_words(answer))


#: The answer's words must stand together: within this many words of each other (so that
#: "7 May 2023" is not credited to a 7, a May and a 2023 from three different lines).
WINDOW = 30


def _tokens(text: str) -> list[str]:
    """The content words of what was read, in order (an ISO date reads as a person writes it)."""
    return content_words(text)


def answered(answer: str, text: str) -> bool:
    """Every content word of ``answer`` in ``text``, all within :data:`WINDOW` words."""
    want = answer_words(answer)
    if not want:
        return False
    pos: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(_tokens(text)):
        if w in want:
            pos[w].append(i)
    if len(pos) < len(want):
        return False
    rarest = min(want, key=lambda w: len(pos[w]))
    return any(all(any(abs(j - i) <= WINDOW for j in pos[w]) for w in want) for i in pos[rarest])


def cut(text: str, budget: int) -> str:
    """The first ``budget`` tokens of ``text`` (characters / 4)."""
    return text[: budget * CHARS_PER_TOKEN] if estimate_tokens(text) > budget else text


# --------------------------------------------------------------------------- reading

def named_pages(question: str, wiki: dict[str, str]) -> list[str]:
    """The pages whose title or an alias the question names, in the order it names them."""
    low = f" {' '.join(re.findall(r'[a-z0-9]+', question.lower()))} "
    hits = []
    for p, text in wiki.items():
        if not in_knowledge(p) or p == INDEX:
            continue
        meta = split_frontmatter(text)[0] or {}
        names = [str(meta.get("title") or "")] + [str(a) for a in meta.get("aliases") or []]
        at = [low.find(f" {' '.join(re.findall(r'[a-z0-9]+', n.lower()))} ") for n in names if n]
        at = [i for i in at if i >= 0]
        if at:
            hits.append((min(at), p))
    return [p for _i, p in sorted(hits)]


def body(text: str) -> str:
    return split_frontmatter(text)[1]


def read_wiki(pages: list[str], wiki: dict[str, str], budget: int | None, frontmatter: bool) -> str:
    parts = [wiki.get(INDEX, "")] + [wiki[p] if frontmatter else body(wiki[p]) for p in pages]
    text = "\n".join(parts)
    return cut(text, budget) if budget else text


def read_transcripts(pages: list[str], wiki: dict[str, str], tree: dict[str, str], budget: int) -> str:
    """The baseline: turns the named subjects speak or that name them, newest session first."""
    names = set()
    for p in pages:
        meta = split_frontmatter(wiki[p])[0] or {}
        names |= {str(meta.get("title") or "")} | {str(a) for a in meta.get("aliases") or []}
    names.discard("")
    rx = [re.compile(rf"(?<!\w){re.escape(n)}(?!\w)", re.I) for n in names]
    sessions = []
    for path, text in tree.items():
        if path.endswith("/transcript.md"):
            tr = parse_transcript(path, text)
            sessions.append((tr.date or "", path, tr))
    out, size = [], 0
    for _d, _p, tr in sorted(sessions, key=lambda s: (s[0], s[1]), reverse=True):
        for t in tr.turns:
            line = f"{t.speaker} ({tr.date}): {t.text}"
            if t.speaker in names or any(r.search(t.text) for r in rx):
                out.append(line)
                size += len(line) + 1
        if size > budget * CHARS_PER_TOKEN:
            break
    return cut("\n".join(out), budget)


def judge(question: str, answer: str, wiki: dict[str, str], tree: dict[str, str], budget: int) -> dict:
    pages = named_pages(question, wiki)
    return {"pages": pages, **{arm: answered(answer, text) for arm, text in (
        ("wiki", read_wiki(pages, wiki, budget, False)),
        ("wiki as read", read_wiki(pages, wiki, budget, True)),
        ("page, no cap", read_wiki(pages, wiki, None, False)),
        ("transcripts", read_transcripts(pages, wiki, tree, budget)))}}


# --------------------------------------------------------------------------- questions

def locomo_questions(path: Path, budget: int) -> list[dict]:
    from brainfs.tools.locomo import conversation_tree
    from brainfs.tools.locomo_wiki import ABLATION_SETTINGS

    out = []
    for sample in json.loads(path.read_text()):
        tree = conversation_tree(sample)
        res = dream(DictTree(dict(tree)), settings=dict(ABLATION_SETTINGS))
        wiki = res.staged
        for q in sample["qa"]:
            cat = q.get("category")
            ans = str(q.get("answer", "")).strip()
            if cat not in CATEGORIES or not ans or ans.lower() in ("yes", "no"):
                continue
            out.append({"set": "locomo", "group": CATEGORIES[cat], "conversation": sample.get("sample_id"),
                        "question": q["question"], "answer": ans,
                        **judge(q["question"], ans, wiki, tree, budget)})
        print(f"locomo {sample.get('sample_id')}: {res.stats['pages']} pages", file=sys.stderr, flush=True)
    return out


def persona_questions(budget: int) -> list[dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.dream_personas import load, transcripts
    from brainfs.dream.core import run_local

    out = []
    for f in sorted(PERSONAS.glob("*.yaml")):
        persona = load(f)
        tree = transcripts(persona)
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            for rel, text in tree.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
            res = run_local(root, None, now=_dt.datetime(2026, 7, 1, tzinfo=_dt.timezone.utc))
        for lab in persona["labels"].get("now", []):
            q = f"What about {lab['subject']} is true now?"
            out.append({"set": "personas", "group": f.stem, "question": q, "answer": str(lab["current"]),
                        **judge(q, str(lab["current"]), res.staged, tree, budget)})
    return out


# --------------------------------------------------------------------------- through recall

#: Recall's mode behind each retriever of ``brainfs eval locomo``.
RECALL_MODES = {"bm25": "sparse", "dense": "dense", "hybrid": "hybrid"}
#: Page shapes (dream settings) a ``+ wiki`` memory may be dreamt with; which one is chosen
#: by leave-one-conversation-out. The first is dream's own default, the one the eval uses.
PAGE_SHAPES: dict[str, dict] = {
    "as dream writes it": {},
    "no Threads": {"thread_max_topics": 0},
    "no Threads, Timeline <= 60 lines": {"thread_max_topics": 0, "max_timeline": 60},
    "no Threads, no Timeline": {"thread_max_topics": 0, "max_timeline": 0},
}


def recall_questions(path: Path, budget: int, embedder) -> list[dict]:
    """The answer measure of ``brainfs eval locomo`` for every retriever, on each
    conversation's transcripts alone and on its transcripts plus the wiki dreamt in each of
    :data:`PAGE_SHAPES` (one index, as a dreamt memory's mount holds them). One row per
    question and retriever: ``transcripts`` and each shape → found or not; ``wiki_tokens``
    per shape: how much of the budget wiki passages took."""
    from brainfs.tools import locomo
    from brainfs.cache.search.model import token_counter
    from brainfs.cache.search.index import SearchIndex
    from brainfs.tools.locomo_wiki import build_wiki

    count = token_counter()
    rows: list[dict] = []
    for sample in locomo.read_samples(path):
        cid = str(sample.get("sample_id"))
        tree = locomo.conversation_tree(sample)
        now = locomo.question_time(sample)
        qs = [(i, q) for i, q in enumerate(sample.get("qa", [])) if locomo.answer_scored(q)]
        memories = {"transcripts": tree}
        for shape, settings in PAGE_SHAPES.items():
            memories[shape] = {**tree, **build_wiki(tree, settings=settings)}
        by_key: dict[tuple[int, str], dict] = {}
        with tempfile.TemporaryDirectory(prefix="brainfs-answers-") as tmp:
            for m, (name, files) in enumerate(memories.items()):
                ix = SearchIndex(Path(tmp) / f"memory-{m}.db")
                try:
                    ix.refresh([(p, locomo._content_hash(t)) for p, t in files.items()],
                               lambda p: files[p].encode("utf-8"), embedder)
                    # the ceiling: the answer anywhere in the memory's passages, no budget
                    top = ix.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
                    everything = [r["text"] or "" for r in ix.chunks_by_id(range(1, top + 1)).values()]
                    for retriever, mode in RECALL_MODES.items():
                        for i, q in qs:
                            row = by_key.setdefault((i, retriever), {
                                "set": "locomo", "conversation": cid, "qa": i, "retriever": retriever,
                                "group": CATEGORIES[int(q["category"])], "wiki_tokens": {},
                                "anywhere": {}})
                            if retriever == "bm25":  # the same for every retriever
                                row["anywhere"][name] = locomo.answer_found(str(q["answer"]), everything)
                            else:
                                row["anywhere"] = by_key[(i, "bm25")]["anywhere"]
                            cards = locomo.recall_cards(ix, str(q["question"]), mode, embedder, now)
                            seen = locomo.read_within([c.text for c in cards], budget, count)
                            row[name] = locomo.answer_found(str(q["answer"]), seen)
                            if name != "transcripts":  # how much of the budget the wiki took
                                row["wiki_tokens"][name] = sum(
                                    n for c, n in zip(cards, count(seen)) if in_knowledge(c.path))
                finally:
                    ix.close()
        rows += list(by_key.values())
        if hasattr(embedder, "save"):
            embedder.save()
        print(f"recall {cid}: {len(qs)} questions", file=sys.stderr, flush=True)
    return rows


# --------------------------------------------------------------------------- wiki lines left to turns

#: The arms of :func:`restated_questions`: memory, and whether recall leaves a wiki line to
#: the returned turns it cites (``RecallParams.leave_to_turns``).
RESTATED_ARMS = {"transcripts alone": ("transcripts", True),
                 "+ wiki, pages whole": ("wiki", False),
                 "+ wiki, lines left to turns": ("wiki", True)}


def restated_questions(path: Path, budget: int, embedder, retrievers: list[str]) -> list[dict]:
    """The answer measure through recall (as :func:`recall_questions`) on each
    conversation's transcripts alone and with the wiki as dream writes it, the wiki memory
    read by recall with its pages whole and with lines left to the turns they cite
    (:data:`RESTATED_ARMS`). One row per question and retriever: each arm → found or not;
    ``wiki_tokens`` per wiki arm: how much of the budget wiki passages took."""
    from brainfs.cache.search.index import SearchIndex
    from brainfs.cache.search.model import token_counter
    from brainfs.tools import locomo
    from brainfs.tools.locomo_wiki import build_wiki

    count = token_counter()
    rows: list[dict] = []
    for sample in locomo.read_samples(path):
        cid = str(sample.get("sample_id"))
        tree = locomo.conversation_tree(sample)
        now = locomo.question_time(sample)
        qs = [(i, q) for i, q in enumerate(sample.get("qa", [])) if locomo.answer_scored(q)]
        memories = {"transcripts": tree, "wiki": {**tree, **build_wiki(tree)}}
        by_key: dict[tuple[int, str], dict] = {}
        with tempfile.TemporaryDirectory(prefix="brainfs-restated-") as tmp:
            for m, (name, files) in enumerate(memories.items()):
                ix = SearchIndex(Path(tmp) / f"memory-{m}.db")
                try:
                    ix.refresh([(p, locomo._content_hash(t)) for p, t in files.items()],
                               lambda p: files[p].encode("utf-8"), embedder)
                    for arm, (memory, leave) in RESTATED_ARMS.items():
                        if memory != name:
                            continue
                        for retriever in retrievers:
                            for i, q in qs:
                                row = by_key.setdefault((i, retriever), {
                                    "set": "locomo", "conversation": cid, "qa": i, "retriever": retriever,
                                    "group": CATEGORIES[int(q["category"])], "wiki_tokens": {}})
                                cards = locomo.recall_cards(ix, str(q["question"]),
                                                            RECALL_MODES[retriever], embedder, now,
                                                            leave_to_turns=leave)
                                seen = locomo.read_within([c.text for c in cards], budget, count)
                                row[arm] = locomo.answer_found(str(q["answer"]), seen)
                                if memory == "wiki":
                                    row["wiki_tokens"][arm] = sum(
                                        n for c, n in zip(cards, count(seen)) if in_knowledge(c.path))
                finally:
                    ix.close()
        rows += list(by_key.values())
        if hasattr(embedder, "save"):
            embedder.save()
        print(f"restated {cid}: {len(qs)} questions", file=sys.stderr, flush=True)
    return rows


def restated_report(rows: list[dict], budget: int) -> tuple[list[str], dict]:
    """Markdown tables and a JSON summary of :func:`restated_questions`."""
    arms = list(RESTATED_ARMS)

    def pct(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    retrievers = list(dict.fromkeys(r["retriever"] for r in rows))
    lines = ["| retriever | questions | " + " | ".join(arms) + " | lines left − pages whole | "
             "lines left − transcripts |", "|---|---:|" + "---:|" * (len(arms) + 2)]
    cat = ["| retriever | category | questions | " + " | ".join(arms) + " |",
           "|---|---|---:|" + "---:|" * len(arms)]
    per = ["| retriever | conversation | questions | " + " | ".join(arms) + " |",
           "|---|---|---:|" + "---:|" * len(arms)]
    summary: dict = {}
    for retriever in retrievers:
        rs = [r for r in rows if r["retriever"] == retriever]
        v = {a: pct([r[a] for r in rs]) for a in arms}
        tok = {a: sum(r["wiki_tokens"][a] for r in rs) / len(rs) for a in arms[1:]}
        summary[retriever] = {"questions": len(rs), **{a: round(x, 4) for a, x in v.items()},
                              "wiki_tokens_mean": {a: round(t, 1) for a, t in tok.items()}}
        lines.append(f"| {retriever} | {len(rs)} | " + " | ".join(
            f"{v[a]:.1%}" + (f" ({tok[a]:.0f})" if a in tok else "") for a in arms)
            + f" | **{100 * (v[arms[2]] - v[arms[1]]):+.1f} points** "
            f"| **{100 * (v[arms[2]] - v[arms[0]]):+.1f} points** |")
        for key, table in (("group", cat), ("conversation", per)):
            for g in dict.fromkeys(r[key] for r in rs):
                gs = [r for r in rs if r[key] == g]
                table.append(f"| {retriever} | {g} | {len(gs)} | " + " | ".join(
                    f"{pct([r[a] for r in gs]):.1%}" for a in arms) + " |")
    return [*lines, "", f"(In brackets: the mean tokens of the {budget:,} that wiki passages took.)", "",
            "By category:", "", *cat, "", "By conversation:", "", *per], summary


def restated_main(args: argparse.Namespace, data: Path | None, t0: float) -> int:
    """``--restated-only``: :func:`restated_questions` and its report."""
    if data is None:
        print("error: --restated-only needs LoCoMo (--data FILE or BRAINFS_LOCOMO_DIR)", file=sys.stderr)
        return 1
    from brainfs.cache.search.embedder import load_embedder
    from brainfs.tools.locomo import EmbeddingCache, _QueryCache

    retrievers = args.retrievers.split(",") if args.retrievers else list(RECALL_MODES)
    emb = (EmbeddingCache(load_embedder(), args.embed_cache) if args.embed_cache
           else _QueryCache(load_embedder()))
    rows = restated_questions(data, args.budget, emb, retrievers)
    lines, summary = restated_report(rows, args.budget)
    cmd = (f'python benchmarks/dream_answers.py --restated-only --data "$BRAINFS_LOCOMO_DIR"/{data.name}'
           + (f" --retrievers {args.retrievers}" if args.retrievers else "")
           + (f" --budget {args.budget}" if args.budget != 1000 else "")
           + (f" --out {args.out}" if args.out else "")
           + (f" --embed-cache {args.embed_cache}" if args.embed_cache else ""))
    md = [f"# Answers in the first {args.budget:,} tokens recall returns: wiki lines left to their turns", "",
          f"`{cmd}` ({time.monotonic() - t0:.0f} s)", "",
          "The measure of `brainfs eval locomo --json` under `answers` (`tools/locomo.py`): for each LoCoMo "
          "dev question of categories 1, 2 and 4 (yes/no answers left out), recall is asked for "
          f"{ANSWER_K} passages, and the question counts when every content word of its gold answer "
          f"stands in the first {args.budget:,} MiniLM word pieces of the cards' texts. `transcripts "
          "alone`: the sessions indexed as a memory; `+ wiki`: the same memory with the pages dream "
          "writes from it, one index; `pages whole`: recall returning page chunks as they are "
          "(`recall(leave_to_turns=False)`); `lines left to turns`: as recall returns them, a "
          "wiki line whose cited turns all stand among the returned turns dropped, a chunk left with "
          "no line dropped and the list filled up to k again (`cache/search/restated.py`).", "",
          *lines, ""]
    print("\n".join(md))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dream-answers-restated.md").write_text("\n".join(md), encoding="utf-8")
        body = {"command": cmd, "summary": summary, "arms": list(RESTATED_ARMS),
                "columns": ["conversation", "qa", "retriever", "category", "found per arm (0/1)"],
                "rows": [[r["conversation"], r["qa"], r["retriever"], r["group"],
                          "".join("1" if r[a] else "0" for a in RESTATED_ARMS)] for r in rows]}
        (args.out / "dream-answers-restated.json").write_text(json.dumps(body, indent=1), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------- through context

#: How ``brainfs context`` may read the wiki (``assembly.WikiUse``); which one is chosen by
#: leave-one-conversation-out. ``pages as chunks`` is context before claims: each recall
#: hit on a page is its chunk, as recall returns it.
def wiki_uses() -> dict[str, dict]:
    """The grid of :class:`~brainfs.cache.context.assembly.WikiUse` settings compared. Earlier
    runs (results/dream-answers-context.md history) measured pool 2 and 8, share 0.6, lines
    after turns and lines over turns worse; the grid now varies what is new: the turns'
    weak-match floor when pages are in recall's lists (``turn_floor``), which recalled turns
    a line is left to (``dedupe_share``) and the gathered lines."""
    grid: dict[str, dict] = {"pages as chunks": {"claims": False}}
    # a diagnosis, not a candidate: the pages are in the index (recall ranks the turns among
    # them) but no line of theirs is admitted (only current facts of a page the question names)
    grid["no wiki line, pool 4"] = {"claims": True, "pool": 4.0, "overlap": 99, "turn_floor": 0.25}
    grid["no wiki line, pool 4, turn floor 0.1"] = {"claims": True, "pool": 4.0, "overlap": 99,
                                                    "turn_floor": 0.1}
    points = [(0.25, 0.3, None), (0.25, 0.3, 0.4)]
    for floor in (0.1, 0.05):
        points += [(floor, 0.15, None), (floor, 0.15, 0.4)]
        points += [(floor, 0.3, dd) for dd in (None, 0.2, 0.3, 0.4, 0.6)]
    points.append((0.05, 0.3, 0.8))
    for floor, share, dd in points:
        grid[f"lines, pool 4, share {share:g}, turn floor {floor:g}"
             + (f", dedupe within {dd:g}" if dd else "")] = {
            "claims": True, "pool": 4.0, "share": share, "turn_floor": floor, "dedupe_share": dd}
    # what the gathered lines add: the setting chosen on dev, without them
    grid["lines, pool 4, share 0.3, turn floor 0.05, dedupe within 0.4, no gathered line"] = {
        "claims": True, "pool": 4.0, "share": 0.3, "turn_floor": 0.05, "dedupe_share": 0.4,
        "gathered": False}
    # a diagnosis, never chosen: the shipped reading with SHORT_HEADERS (against the
    # transcripts alone read with them too)
    grid[f"diagnosis: {SHORT_HEADERS}, lines, pool 4, share 0.3, turn floor 0.05, dedupe within 0.4"] = {
        "claims": True, "pool": 4.0, "share": 0.3, "turn_floor": 0.05, "dedupe_share": 0.4,
        "_short": True}
    return grid


#: Diagnoses, not candidates: the transcripts alone with a lower weak-match floor for every
#: hit (``assembly.RELATIVE_FLOOR``), to tell what the turn floor gains from what the wiki does.
TRANSCRIPT_FLOORS = (0.1, 0.05)


#: Diagnosis, not a candidate: the same windows with a turn's header cut to its lane and
#: source (``### [thread] sessions/…/transcript.md#D8:2``): the freshness ("3 months ago")
#: repeats the date the turn's own text carries and a transcript's confidence is the same
#: for every turn, yet together they take ~12 of the ~35 word pieces of a header.
SHORT_HEADERS = "short turn headers"
#: How deep recall is read to find where a missed answer stands (:func:`miss_class`).
MISS_DEPTH = 96
#: Why a question is missed, in the order :func:`miss_class` tests them.
MISS_CLASSES = ("words not in the memory", f"not in recall's first {MISS_DEPTH} turns",
                "turns ranked 41+", "turns ranked 21-40", "turns ranked 11-20",
                "turns ranked 1-10 (window spent)")


def miss_class(diag: dict) -> str:
    """Why a missed question is missed, from its diagnosis (:func:`context_questions`):
    its answer's words are nowhere in the conversation's turns; or the turns that hold them
    are not among recall's first :data:`MISS_DEPTH`; or the rank at which recall's turns,
    read in order, first hold every answer word (a window holds about ten turns)."""
    if not diag["anywhere"]:
        return MISS_CLASSES[0]
    d = diag["depth"]
    if d is None:
        return MISS_CLASSES[1]
    return MISS_CLASSES[2] if d > 40 else MISS_CLASSES[3] if d > 20 else MISS_CLASSES[4] if d > 10 else MISS_CLASSES[5]


@contextmanager
def _short_turn_headers():
    """:data:`SHORT_HEADERS` for the windows made inside (a diagnosis: the benchmark's
    own patch of ``ContextItem.header``, restored on exit)."""
    from brainfs.cache.context import assembly

    full = assembly.ContextItem.header

    def header(self) -> str:
        if self.kind != "turn":
            return full(self)
        return f"### [{self.lane}] {self.source}" + (" (truncated)" if self.status == "truncated" else "")

    assembly.ContextItem.header = header
    try:
        yield
    finally:
        assembly.ContextItem.header = full


def _diagnose(ix, question: str, answer: str, embedder, now, budget: int, everything: list[str],
              count) -> dict:
    """Where a question's answer stands in the transcripts-alone memory: anywhere in its
    turns; the rank at which recall's turns (hybrid, :data:`MISS_DEPTH` deep, as context
    asks it) first hold every answer word; and whether the first ``budget`` tokens of those
    turns' texts, read without any header, hold them (the ceiling of packing)."""
    from brainfs.cache.context import recalled
    from brainfs.tools import locomo

    cards = recalled.retrieve(ix, question, k=MISS_DEPTH, embedder=embedder, now=now,
                              stale_days=180, max_chars=100_000).cards
    turns = [c.text for c in cards if c.path.startswith(SESSIONS)]
    want = set(locomo.content_words(answer))
    have: set[str] = set()
    depth = None
    for n, t in enumerate(turns, 1):
        have.update(locomo.content_words(t))
        if want <= have:
            depth = n
            break
    return {"anywhere": locomo.answer_found(answer, everything), "depth": depth,
            "bare": locomo.answer_found(answer, locomo.read_within(turns, budget, count)),
            "_turns": [(c.ref, c.text) for c in cards if c.path.startswith(SESSIONS)]}


def _diagnose_lines(diag: dict, answer: str, cited: dict[str, list[str]], budget: int, count) -> None:
    """The wiki's lines as a digest of the turns: recall's turns (``diag["_turns"]``, in its
    order) each replaced by the wiki claim lines that cite it, read without headers as in
    ``bare`` — ``lines``: a turn no line cites is left out; ``lines or turns``: it is read
    itself. Against ``bare``, what reading the wiki's lines instead of the turns they cite
    keeps of the answers."""
    from brainfs.tools import locomo

    turns = diag.pop("_turns")
    only = [ln for ref, _t in turns for ln in cited.get(ref, [])]
    either = [x for ref, t in turns for x in (cited.get(ref) or [t])]
    diag["lines"] = locomo.answer_found(
        answer, locomo.read_within(list(dict.fromkeys(only)), budget, count))
    diag["lines_or_turns"] = locomo.answer_found(
        answer, locomo.read_within(list(dict.fromkeys(either)), budget, count))


class _MemoRecall:
    """``recalled.retrieve`` remembered per (index, question, k): every setting of the grid
    asks the same recall, which is the costly part (the cards are not modified)."""

    def __init__(self, inner) -> None:
        self.inner, self.memo = inner, {}

    def __call__(self, index, query, k=10, **kw):
        key = (id(index), query, k)
        if key not in self.memo:
            self.memo[key] = self.inner(index, query, k=k, **kw)
        return self.memo[key]


def context_questions(path: Path, budget: int, embedder, uses: dict[str, dict] | None = None,
                      with_index: bool = False, diagnose: bool = True) -> list[dict]:
    """The answer measure through ``brainfs context``: for each question, the window
    :func:`assembly.assemble` makes of ``budget`` tokens (reserve 0; headers, scope and
    all, as ``to_prompt`` gives it to a model) from the conversation's transcripts alone
    and from the transcripts plus the wiki, read in each way of :func:`wiki_uses`; found
    when every content word of the gold answer stands in it. ``with_index`` also puts
    ``knowledge/INDEX.md`` in the memory (the index lane). ``diagnose``: each row also gets
    ``diag`` (:func:`_diagnose`, and ``in_line``: one wiki claim line holds every answer
    word), and the transcripts alone are read with :data:`SHORT_HEADERS` too."""
    from brainfs.cache.context import assembly
    from brainfs.cache.context import recalled
    from brainfs.cache.context.claims import page_claims
    from brainfs.cache.search.index import SearchIndex
    from brainfs.cache.search.model import token_counter
    from brainfs.tools import locomo

    count = token_counter()

    uses = uses if uses is not None else wiki_uses()
    rows: list[dict] = []
    real_recall = recalled.retrieve
    floor0 = recalled.RELATIVE_FLOOR
    try:
        recalled.retrieve = _MemoRecall(real_recall)
        for sample in locomo.read_samples(path):
            cid = str(sample.get("sample_id"))
            tree = locomo.conversation_tree(sample)
            now = locomo.question_time(sample)
            qs = [(i, q) for i, q in enumerate(sample.get("qa", [])) if locomo.answer_scored(q)]
            staged = dream(DictTree(dict(tree)), settings=dict(_ablation())).staged
            wiki = {p: t for p, t in staged.items() if in_knowledge(p) and p.endswith(".md")
                    and (with_index or p != INDEX)}
            by_q = {i: {"set": "locomo", "conversation": cid, "qa": i, "retriever": "hybrid",
                        "group": CATEGORIES[int(q["category"])], "tokens": {}} for i, q in qs}
            with tempfile.TemporaryDirectory(prefix="brainfs-context-") as tmp:
                for name, files in (("transcripts", tree), ("wiki", {**tree, **wiki})):
                    root = Path(tmp) / name
                    for rel, text in files.items():
                        (root / rel).parent.mkdir(parents=True, exist_ok=True)
                        (root / rel).write_text(text, encoding="utf-8")
                    ix = SearchIndex(Path(tmp) / f"{name}.db")
                    try:
                        ix.refresh([(p, locomo._content_hash(t)) for p, t in files.items()],
                                   lambda p: files[p].encode("utf-8"), embedder)
                        src = assembly.MemorySource(root, index=ix, embedder=embedder,
                                                    global_guide=Path(tmp) / "no-global-guide.md")
                        arms = ({"transcripts": {}, **{f"transcripts, floor {f:g}": {"_floor": f}
                                                         for f in TRANSCRIPT_FLOORS},
                                 f"transcripts, {SHORT_HEADERS}": {"_short": True}}
                                if name == "transcripts" else uses)
                        for arm, kw in arms.items():
                            kw = dict(kw)
                            recalled.RELATIVE_FLOOR = kw.pop("_floor", floor0)
                            short = kw.pop("_short", False)
                            use = assembly.WikiUse(**kw)
                            with _short_turn_headers() if short else nullcontext():
                                for i, q in qs:
                                    w = assembly.assemble(str(q["question"]), src, budget=budget,
                                                          reserve=0, now=now, wiki=use)
                                    by_q[i][arm] = locomo.answer_found(str(q["answer"]), [w.to_prompt()])
                                    by_q[i]["tokens"][arm] = {
                                        lane: u["tokens"] for lane, u in w.lane_usage().items()}
                            recalled.RELATIVE_FLOOR = floor0
                        if diagnose and name == "transcripts":
                            top = ix.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
                            everything = [r["text"] or "" for r in ix.chunks_by_id(range(1, top + 1)).values()]
                            for i, q in qs:
                                by_q[i]["diag"] = _diagnose(ix, str(q["question"]), str(q["answer"]),
                                                            embedder, now, budget, everything, count)
                        if diagnose and name == "wiki":
                            claims = [cl for p, t in wiki.items() for cl in page_claims(p, t).values()]
                            lines = [cl.render() for cl in claims]
                            cited: dict[str, list[str]] = defaultdict(list)
                            for cl in claims:  # a thread fragment is a cut of a timeline line
                                if cl.section in ("now", "timeline", "superseded"):
                                    for ref in cl.sources:
                                        cited[ref].append(cl.render())
                            for i, q in qs:  # one wiki line holds every answer word
                                by_q[i]["diag"]["in_line"] = any(
                                    locomo.answer_found(str(q["answer"]), [ln]) for ln in lines)
                                _diagnose_lines(by_q[i]["diag"], str(q["answer"]), cited, budget, count)
                    finally:
                        ix.close()
            rows += list(by_q.values())
            if hasattr(embedder, "save"):
                embedder.save()
            print(f"context {cid}: {len(qs)} questions", file=sys.stderr, flush=True)
    finally:
        recalled.retrieve = real_recall
        recalled.RELATIVE_FLOOR = floor0
    return rows


def _ablation() -> dict:
    from brainfs.tools.locomo_wiki import ABLATION_SETTINGS

    return ABLATION_SETTINGS


def compact(rows: list[dict]) -> dict:
    """:func:`recall_questions`' rows for the JSON file, one short list per row: found and
    the ceiling as one "0"/"1" per memory, in the order ``memories`` names them."""
    memories = ["transcripts", *PAGE_SHAPES]
    return {"memories": memories,
            "columns": ["conversation", "qa", "retriever", "category", "found", "anywhere",
                        "wiki_tokens"],
            "rows": [[r["conversation"], r["qa"], r["retriever"], r["group"],
                      "".join("1" if r[m] else "0" for m in memories),
                      "".join("1" if r["anywhere"][m] else "0" for m in memories),
                      [r["wiki_tokens"][m] for m in memories[1:]]] for r in rows]}


def loco(rows: list[dict], shapes: list[str]) -> tuple[list[bool], dict[str, str], str]:
    """Leave-one-conversation-out choice among ``shapes`` for one retriever's rows: each
    conversation is scored with the shape best on the others (ties: the earlier shape).
    Returns the held-out outcomes, each conversation's choice, and the shape best on all."""
    convs = list(dict.fromkeys(r["conversation"] for r in rows))

    def best(keep: list[dict]) -> str:
        return max(shapes, key=lambda s: (sum(r[s] for r in keep) / max(1, len(keep)), -shapes.index(s)))

    found: list[bool] = []
    chosen: dict[str, str] = {}
    for c in convs:
        chosen[c] = best([r for r in rows if r["conversation"] != c])
        found += [r[chosen[c]] for r in rows if r["conversation"] == c]
    return found, chosen, best(rows)


def recall_report(rows: list[dict], budget: int) -> tuple[list[str], dict]:
    """Markdown tables and a JSON summary of :func:`recall_questions`."""
    shapes = list(PAGE_SHAPES)
    default = shapes[0]

    def pct(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    lines = ["| retriever | questions | transcripts alone | + wiki as dream writes it | "
             "+ wiki, page shape tuned on all | **+ wiki, cross-validated** | "
             "**cross-validated − transcripts** |", "|---|---:|---:|---:|---|---:|---:|"]
    summary: dict = {}
    folds: list[str] = []
    for retriever in RECALL_MODES:
        rs = [r for r in rows if r["retriever"] == retriever]
        cv, chosen, tuned = loco(rs, shapes)
        t, d, tu, x = (pct([r["transcripts"] for r in rs]), pct([r[default] for r in rs]),
                       pct([r[tuned] for r in rs]), pct(cv))
        summary[retriever] = {"questions": len(rs), "transcripts": round(t, 4), "wiki_default": round(d, 4),
                              "wiki_tuned_on_all": round(tu, 4), "tuned_shape": tuned,
                              "wiki_cross_validated": round(x, 4), "fold_choices": chosen,
                              "by_category": {}, "wiki_tokens_mean": {
                                  s: round(sum(r["wiki_tokens"][s] for r in rs) / len(rs), 1) for s in shapes}}
        for g in CATEGORIES.values():
            gs = [r for r in rs if r["group"] == g]
            gcv = [f for r, f in zip(rs, cv) if r["group"] == g]  # loco keeps the rows' order by conversation
            summary[retriever]["by_category"][g] = {"questions": len(gs), "transcripts": round(pct([r["transcripts"] for r in gs]), 4),
                                                    "wiki_default": round(pct([r[default] for r in gs]), 4),
                                                    "wiki_cross_validated": round(pct(gcv), 4)}
        lines.append(f"| {retriever} | {len(rs)} | {t:.1%} | {d:.1%} | {tu:.1%} ({tuned}) | **{x:.1%}** | "
                     f"**{100 * (x - t):+.1f} points** |")
        folds.append(f"- **{retriever}**: tuned on all → {tuned}; " + "; ".join(
            f"held out {c} → {s}" for c, s in chosen.items()))
    cat = ["| retriever | category | questions | transcripts alone | + wiki as dream writes it | + wiki, cross-validated |",
           "|---|---|---:|---:|---:|---:|"]
    for retriever, sm in summary.items():
        for g, v in sm["by_category"].items():
            cat.append(f"| {retriever} | {g} | {v['questions']} | {v['transcripts']:.1%} | "
                       f"{v['wiki_default']:.1%} | {v['wiki_cross_validated']:.1%} |")
    tok = ["| memory | " + " | ".join(RECALL_MODES) + " | anywhere in the memory |",
           "|---|" + "---:|" * (len(RECALL_MODES) + 1)]
    one = [r for r in rows if r["retriever"] == "bm25"]
    for s in ["transcripts"] + shapes:
        tok.append(f"| {'transcripts alone' if s == 'transcripts' else '+ wiki, ' + s} | " + " | ".join(
            f"{pct([r[s] for r in rows if r['retriever'] == m]):.1%}"
            + (f" ({summary[m]['wiki_tokens_mean'][s]:.0f})" if s != "transcripts" else "")
            for m in RECALL_MODES) + f" | {pct([r['anywhere'][s] for r in one]):.1%} |")
    summary["anywhere"] = {s: round(pct([r["anywhere"][s] for r in one]), 4) for s in ["transcripts"] + shapes}
    return [*lines, "", "By category:", "", *cat, "",
            f"Each memory: share answered, and (in brackets) the mean tokens of the {budget:,} "
            "that wiki passages took; the last column is the ceiling, the share whose answer stands "
            "anywhere in the memory's passages (no budget, the same rule):", "", *tok, "", "What each fold chose:", "", *folds], summary


def context_report(rows: list[dict], budget: int) -> tuple[list[str], dict]:
    """Markdown tables and a JSON summary of :func:`context_questions`: each way of reading
    the wiki, and the one chosen by leave-one-conversation-out (the figure to quote)."""
    uses = [k for k in rows[0] if k not in ("set", "conversation", "qa", "retriever", "group",
                                             "tokens", "diag") and not k.startswith("transcripts")]
    diag = [k for k in rows[0] if k.startswith("transcripts, ")]

    def pct(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    # the "no wiki line" rows are diagnoses (the pages in the index, none of their lines
    # read): not candidates of the cross-validated choice
    cv, chosen, tuned = loco(rows, [u for u in uses if not u.startswith(("no wiki line", "diagnosis"))])
    t, x = pct([r["transcripts"] for r in rows]), pct(cv)
    old = pct([r["pages as chunks"] for r in rows]) if "pages as chunks" in uses else float("nan")
    summary = {"questions": len(rows), "transcripts": round(t, 4), "pages_as_chunks": round(old, 4),
               "tuned_on_all": tuned, "wiki_tuned_on_all": round(pct([r[tuned] for r in rows]), 4),
               "wiki_cross_validated": round(x, 4), "fold_choices": chosen,
               "by_use": {u: round(pct([r[u] for r in rows]), 4) for u in uses}, "by_category": {}}
    lines = ["| memory | questions | answered | − transcripts |", "|---|---:|---:|---:|",
             f"| transcripts alone | {len(rows)} | {t:.1%} | |"]
    for u in diag:  # diagnoses: the transcripts alone read otherwise (not candidates)
        v = pct([r[u] for r in rows])
        lines.append(f"| {u} (diagnosis) | {len(rows)} | {v:.1%} | {100 * (v - t):+.1f} |")
    for u in uses:
        v = pct([r[u] for r in rows])
        lines.append(f"| + wiki, {u} | {len(rows)} | {v:.1%} | {100 * (v - t):+.1f} |")
    lines.append(f"| **+ wiki, cross-validated** | {len(rows)} | **{x:.1%}** | **{100 * (x - t):+.1f}** |")
    cat = ["| category | questions | transcripts alone | + wiki, pages as chunks | + wiki, cross-validated |",
           "|---|---:|---:|---:|---:|"]
    for g in CATEGORIES.values():
        gs = [r for r in rows if r["group"] == g]
        gcv = [f for r, f in zip(rows, cv) if r["group"] == g]  # loco keeps the rows' order
        summary["by_category"][g] = {"questions": len(gs), "transcripts": round(pct([r["transcripts"] for r in gs]), 4),
                                     "wiki_cross_validated": round(pct(gcv), 4)}
        cat.append(f"| {g} | {len(gs)} | {pct([r['transcripts'] for r in gs]):.1%} | "
                   f"{pct([r['pages as chunks'] for r in gs]) if 'pages as chunks' in uses else float('nan'):.1%} | "
                   f"{pct(gcv):.1%} |")
    lost = sum(1 for r, f in zip(rows, cv) if r["transcripts"] and not f)
    won = sum(1 for r, f in zip(rows, cv) if f and not r["transcripts"])
    lanes = ["| memory | scope | cards | thread | unused |", "|---|---:|---:|---:|---:|"]
    for u in ["transcripts", *diag, *uses]:
        tok = [r["tokens"].get(u, {}) for r in rows]
        m = {ln: sum(tk.get(ln, 0) for tk in tok) / len(tok) for ln in ("scope", "cards", "thread")}
        lanes.append(f"| {'transcripts alone' if u == 'transcripts' else u if u in diag else '+ wiki, ' + u} | "
                     + " | ".join(f"{m[ln]:.0f}" for ln in ("scope", "cards", "thread"))
                     + f" | {budget - sum(sum(tk.values()) for tk in tok) / len(tok):.0f} |")
    folds = [f"- tuned on all → {tuned}"] + [f"- held out {c} → {u}" for c, u in chosen.items()]
    misses = miss_report(rows, cv, budget, summary) if "diag" in rows[0] else []
    return [*lines, "", f"Cross-validated against transcripts alone: {won} questions gained, {lost} lost.",
            "", "By category:", "", *cat, "", f"Mean tokens of the {budget:,} by lane:", "", *lanes,
            "", "What each fold chose:", "", *folds, *misses], summary


def miss_report(rows: list[dict], cv: list[bool], budget: int, summary: dict) -> list[str]:
    """Why the questions are missed (:func:`miss_class`), for the transcripts alone and for
    the cross-validated wiki, by category; and the ceilings: the first ``budget`` tokens of
    recall's turns read without headers, and the answer in one wiki line."""
    def pct(xs: list[bool]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    groups = list(CATEGORIES.values())
    out = ["", "## Why questions are missed", "",
           f"Each missed question by where its answer's words stand in the transcripts-alone memory: "
           f"nowhere in its turns (a gold answer's typo, \"3June\", or its own words); not in the "
           f"turns of recall's first {MISS_DEPTH} (hybrid, as context asks it); else the rank at which "
           f"recall's turns, read in order, first hold every answer word — a {budget:,}-token window "
           "holds about nine turns with their headers.", "",
           "| missed by | class | " + " | ".join(groups) + " | all |", "|---|---|" + "---:|" * (len(groups) + 1)]
    summary["misses"] = {}
    for arm, found in (("transcripts alone", [r["transcripts"] for r in rows]), ("+ wiki, cross-validated", cv)):
        per = {c: defaultdict(int) for c in MISS_CLASSES}
        for r, f in zip(rows, found):
            if not f:
                per[miss_class(r["diag"])][r["group"]] += 1
        summary["misses"][arm] = {c: dict(v) for c, v in per.items()}
        for c in MISS_CLASSES:
            out.append(f"| {arm} | {c} | " + " | ".join(str(per[c][g]) for g in groups)
                       + f" | {sum(per[c].values())} |")
    bare = pct([r["diag"]["bare"] for r in rows])
    only = pct([r["diag"].get("lines", False) for r in rows])
    either = pct([r["diag"].get("lines_or_turns", False) for r in rows])
    line = [r for r, f in zip(rows, cv) if not f and r["diag"].get("in_line")]
    summary["ceilings"] = {"turns_without_headers": round(bare, 4), "wiki_lines_for_turns": round(only, 4),
                           "wiki_lines_or_turns": round(either, 4), "wiki_missed_in_one_line": len(line)}
    out += ["", f"Ceilings (the same questions, the first {budget:,} tokens of each text read in order, "
            "nothing else in the window):", "",
            f"- recall's turns, in its order, read without any header: **{bare:.1%}** "
            f"(transcripts alone as context reads them: {pct([r['transcripts'] for r in rows]):.1%}); "
            "what packing the same turns tighter can give at most, with or without a wiki;",
            f"- the same turns each replaced by the wiki lines (now, timeline, superseded) that cite it: "
            f"**{only:.1%}**, a turn no line cites left out; **{either:.1%}**, such a turn read itself — "
            "what the wiki's lines keep of the answers when read as a digest of the turns;",
            f"- questions the cross-validated wiki misses whose every answer word stands in one wiki "
            f"claim line: **{len(line)}** ({100 * len(line) / len(rows):.1f} points at most)."]
    return out


# --------------------------------------------------------------------------- report

def table(rows: list[dict]) -> tuple[list[str], dict]:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["set"], r["group"])].append(r)
        groups[(r["set"], "all")].append(r)
    lines = ["| set | questions | named page found | " + " | ".join(ARMS) + " |",
             "|---|---:|---:|" + "---:|" * len(ARMS)]
    summary = {}
    for (s, g), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1])):
        share = {arm: sum(r[arm] for r in rs) / len(rs) for arm in ARMS}
        found = sum(bool(r["pages"]) for r in rs) / len(rs)
        summary[f"{s}/{g}"] = {"questions": len(rs), "named_page": round(found, 3),
                               **{a: round(v, 3) for a, v in share.items()}}
        name = f"**{s}, all**" if g == "all" else f"{s}: {g}"
        lines.append(f"| {name} | {len(rs)} | {found:.0%} | " + " | ".join(f"{share[a]:.1%}" for a in ARMS) + " |")
    return lines, summary


def write_json(cmd: str, summary: dict, kept: list[dict], rrows: list[dict]) -> str:
    """The JSON file: summary and the direct-reading questions indented, the recall rows
    (thousands) one per line."""
    head = json.dumps({"command": cmd, "summary": summary, "questions": kept}, indent=1)
    rec = compact(rrows)
    rows = ",\n  ".join(json.dumps(r) for r in rec["rows"])
    return (head[:-2] + ',\n "recall_questions": {"memories": ' + json.dumps(rec["memories"])
            + ', "columns": ' + json.dumps(rec["columns"]) + ',\n  "rows": [\n  ' + rows + "]}\n}\n")


def context_main(args: argparse.Namespace, data: Path | None, t0: float) -> int:
    """``--context-only``: :func:`context_questions` and its report."""
    if data is None:
        print("error: --context-only needs LoCoMo (--data FILE or BRAINFS_LOCOMO_DIR)", file=sys.stderr)
        return 1
    from brainfs.cache.search.embedder import load_embedder
    from brainfs.tools.locomo import EmbeddingCache, _QueryCache

    emb = (EmbeddingCache(load_embedder(), args.embed_cache) if args.embed_cache
           else _QueryCache(load_embedder()))
    rows = context_questions(data, args.budget, emb)
    lines, summary = context_report(rows, args.budget)
    cmd = (f'python benchmarks/dream_answers.py --context-only --data "$BRAINFS_LOCOMO_DIR"/{data.name}'
           + (f" --budget {args.budget}" if args.budget != 1000 else "")
           + (f" --out {args.out}" if args.out else "")
           + (f" --embed-cache {args.embed_cache}" if args.embed_cache else ""))
    md = [f"# Answers in {args.budget:,} tokens of `brainfs context`", "",
          f"`{cmd}` ({time.monotonic() - t0:.0f} s)", "",
          "For each LoCoMo dev question of categories 1, 2 and 4 (yes/no answers left out), "
          f"`assembly.assemble` makes a window of {args.budget:,} tokens (reserve 0) from the "
          "conversation's memory, and the question counts when every content word of its gold "
          "answer (`tools.locomo.content_words`) stands in the window as the model gets it "
          "(`to_prompt`: item headers and the scope item count). `transcripts alone`: the sessions; "
          "`+ wiki`: the same memory with the pages dream writes from it (`knowledge/*.md`, "
          "INDEX.md left out), read as `assembly.WikiUse` says: `pages as chunks` is each recall "
          "hit on a page as its chunk (context before claim lines); `lines` is one item per page "
          "of its recalled chunks' claim lines that share a word with the question, dated, without "
          "markers, a line whose turn recall found too left to the turn; `lines over turns` keeps "
          "the line and skips the turn it cites; `pool` is how much deeper recall is asked so "
          "that page hits leave k turns; `share` the cards lane's share of the budget. The "
          "cross-validated row scores each conversation with the setting best on the other four.",
          "", *lines, ""]
    print("\n".join(md))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dream-answers-context.md").write_text("\n".join(md), encoding="utf-8")
        uses = [k for k in rows[0] if k not in ("set", "conversation", "qa", "retriever", "group", "tokens", "diag")]
        body = {"command": cmd, "summary": summary, "uses": uses,
                "columns": ["conversation", "qa", "category", "found per use (0/1, in uses order)"],
                "rows": [[r["conversation"], r["qa"], r["group"], "".join("1" if r[u] else "0" for u in uses)]
                         for r in rows]}
        (args.out / "dream-answers-context.json").write_text(json.dumps(body, indent=1), encoding="utf-8")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None,
                    help="LoCoMo-format JSON (default: $BRAINFS_LOCOMO_DIR/locomo-dev.json; none: personas only)")
    ap.add_argument("--budget", type=int, default=1000, help="tokens an agent reads (chars / 4)")
    ap.add_argument("--out", type=Path, default=None, help="write dream-answers.md/json here")
    ap.add_argument("--embed-cache", type=Path, default=None, metavar="FILE.npz",
                    help="keep the embeddings of the recall part in FILE (outside the repository)")
    ap.add_argument("--context-only", action="store_true",
                    help="only the measure through brainfs context (writes dream-answers-context.md/json)")
    ap.add_argument("--restated-only", action="store_true",
                    help="only recall with wiki lines left to their turns against pages whole "
                         "(writes dream-answers-restated.md/json)")
    ap.add_argument("--retrievers", default=None,
                    help="with --restated-only: a comma-separated subset of bm25,dense,hybrid")
    args = ap.parse_args()
    data = args.data
    if data is None and os.environ.get("BRAINFS_LOCOMO_DIR"):
        data = Path(os.environ["BRAINFS_LOCOMO_DIR"]).expanduser() / "locomo-dev.json"
    if data is not None and not data.is_file():
        print(f"error: {data}: no such file (give --data FILE or set BRAINFS_LOCOMO_DIR)", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    if args.context_only:
        return context_main(args, data, t0)
    if args.restated_only:
        return restated_main(args, data, t0)
    rows = persona_questions(args.budget)
    if data is not None:
        rows += locomo_questions(data, args.budget)
    lines, summary = table(rows)
    rlines: list[str] = []
    rrows: list[dict] = []
    if data is not None:
        from brainfs.cache.search.embedder import load_embedder
        from brainfs.tools.locomo import EmbeddingCache, _QueryCache

        emb = (EmbeddingCache(load_embedder(), args.embed_cache) if args.embed_cache
               else _QueryCache(load_embedder()))
        rrows = recall_questions(data, args.budget, emb)
        rlines, summary["recall"] = recall_report(rrows, args.budget)
    cmd = "python benchmarks/dream_answers.py" + (f' --data "$BRAINFS_LOCOMO_DIR"/{data.name}' if data else "") + (
        f" --budget {args.budget}" if args.budget != 1000 else "") + (
        f" --out {args.out}" if args.out else "") + (
        f" --embed-cache {args.embed_cache}" if args.embed_cache else "")
    md = [f"# Answers in {args.budget:,} tokens of the wiki", "",
          f"`{cmd}` ({time.monotonic() - t0:.0f} s; LoCoMo from `$BRAINFS_LOCOMO_DIR` or `--data`)", "",
          "A question is answered when every content word of its gold answer stands in what an agent "
          f"reads within {args.budget:,} tokens: `knowledge/INDEX.md`, then the page of each subject the "
          "question names. `wiki as read` counts the frontmatter (`sources:`) as `cat` shows it; `page, "
          "no cap` reads the named pages whole; `transcripts` fills the same budget with the turns the "
          "subject speaks or that name it, newest first (the baseline without a wiki).", "", *lines, ""]
    if rlines:
        md += [f"## Through recall: answers in the first {args.budget:,} tokens that recall returns", "",
               "The issue's own measure, as `brainfs eval locomo --json` reports it under `answers` "
               "(`tools/locomo.py`: `content_words`, `read_within`, `answer_found`): for each "
               "question of categories 1, 2 and 4 (yes/no answers left out), recall is asked for "
               f"{ANSWER_K} passages — what a mount's `.recall/<question> [k={ANSWER_K}].json` returns "
               "(`tests/tools/test_answer_tokens_mount.py` checks the two agree) — and the question counts "
               f"when every content word of its gold answer stands in the first {args.budget:,} "
               "MiniLM word pieces of the cards' texts (the tokens the context budget counts). "
               "`transcripts alone`: the conversation's sessions indexed as a memory; `+ wiki`: the same "
               "memory with the pages dream writes from it (`knowledge/*.md`) in the same index, "
               "searched by the same recall. The page shape (dream settings, below) is the tuned "
               "choice: the cross-validated column scores each conversation with the shape best "
               "on the other four (leave-one-conversation-out).", "", *rlines, ""]
    print("\n".join(md))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dream-answers.md").write_text("\n".join(md), encoding="utf-8")
        # LoCoMo's questions and answers are not ours to publish: their outcomes only
        kept = [{k: v for k, v in r.items() if r["set"] != "locomo" or k not in ("question", "answer")}
                for r in rows]
        (args.out / "dream-answers.json").write_text(write_json(cmd, summary, kept, rrows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
