"""Answers in 1,000 tokens: does what an agent reads of the wiki hold the answer?

An agent with a question about someone or something opens ``knowledge/INDEX.md`` and the
page of each subject the question names (a title or an alias, whole words), and reads them
in that order until its budget — 1,000 tokens, estimated as characters / 4 like every
budget of the project — is spent. A question is **answered** when every content word of
its gold answer (lower case, stopwords dropped, plural/verb endings stemmed; an ISO date
on the page also reads as "7 May 2023") stands inside what was read, all of them within 30
words of each other.

Questions:

* **LoCoMo dev** (``--data FILE`` or ``$BRAINFS_LOCOMO_DIR/locomo-dev.json``): categories 1
  (multi-hop), 2 (temporal) and 4 (single-hop), yes/no answers left out; each conversation
  is one memory, dreamt once (lexical verification, the ablation settings of
  ``dream.locomo``).
* **Personas** (``tests/personas/*.yaml``): each ``now`` label is a question about its
  subject whose answer is the current value ("Ines Okafor" → "Corvid Analytics").

Columns, all from the same run:

* ``wiki``: INDEX.md + the named pages' bodies (frontmatter left out), 1,000 tokens;
* ``wiki as read``: the same files as ``cat`` shows them, frontmatter (``sources:``) included;
* ``page, no cap``: the named pages whole — is the answer on the page at all;
* ``transcripts``: the baseline without a wiki, the same budget filled with the turns that
  the subject speaks or that name it, newest session first (what ``grep`` gives).

``python benchmarks/dream_answers.py [--data FILE] [--budget 1000] [--out benchmarks/results]``
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
from pathlib import Path

from brainfs.cache.chunker import human_date, split_frontmatter
from brainfs.cache.retrieval import STOPWORDS
from brainfs.cache.text import estimate_tokens
from brainfs.dream import text as T
from brainfs.dream.core import DictTree, dream

PERSONAS = Path(__file__).resolve().parent.parent / "tests" / "personas"
CATEGORIES = {1: "multi-hop", 2: "temporal", 4: "single-hop"}
INDEX = "knowledge/INDEX.md"
ARMS = ("wiki", "wiki as read", "page, no cap", "transcripts")


# --------------------------------------------------------------------------- matching

def _stem(w: str) -> str:
    for suf in ("ies", "ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def answer_words(answer: str) -> set[str]:
    """The content words of a gold answer (numbers kept, however short)."""
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", answer.lower().replace("’", "'"))
            if w not in STOPWORDS}


#: The answer's words must stand together: within this many words of each other (so that
#: "7 May 2023" is not credited to a 7, a May and a 2023 from three different lines).
WINDOW = 30


def _tokens(text: str) -> list[str]:
    """The stemmed words of what was read, an ISO date followed by how a person writes it."""
    text = re.sub(r"\b(\d{4}-\d{2}-\d{2})\b", lambda m: f"{m.group(1)} ({human_date(m.group(1)) or ''})", text)
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


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
    return text[: budget * 4] if estimate_tokens(text) > budget else text


# --------------------------------------------------------------------------- reading

def named_pages(question: str, wiki: dict[str, str]) -> list[str]:
    """The pages whose title or an alias the question names, in the order it names them."""
    low = f" {' '.join(re.findall(r'[a-z0-9]+', question.lower()))} "
    hits = []
    for p, text in wiki.items():
        if not p.startswith("knowledge/") or p == INDEX:
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
            tr = T.parse_transcript(path, text)
            sessions.append((tr.date or "", path, tr))
    out, size = [], 0
    for _d, _p, tr in sorted(sessions, key=lambda s: (s[0], s[1]), reverse=True):
        for t in tr.turns:
            line = f"{t.speaker} ({tr.date}): {t.text}"
            if t.speaker in names or any(r.search(t.text) for r in rx):
                out.append(line)
                size += len(line) + 1
        if size > budget * 4:
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
    from brainfs.cache.locomo import conversation_tree
    from brainfs.dream.locomo import ABLATION_SETTINGS

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None,
                    help="LoCoMo-format JSON (default: $BRAINFS_LOCOMO_DIR/locomo-dev.json; none: personas only)")
    ap.add_argument("--budget", type=int, default=1000, help="tokens an agent reads (chars / 4)")
    ap.add_argument("--out", type=Path, default=None, help="write dream-answers.md/json here")
    args = ap.parse_args()
    data = args.data
    if data is None and os.environ.get("BRAINFS_LOCOMO_DIR"):
        data = Path(os.environ["BRAINFS_LOCOMO_DIR"]).expanduser() / "locomo-dev.json"
    if data is not None and not data.is_file():
        print(f"error: {data}: no such file (give --data FILE or set BRAINFS_LOCOMO_DIR)", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    rows = persona_questions(args.budget)
    if data is not None:
        rows += locomo_questions(data, args.budget)
    lines, summary = table(rows)
    cmd = "python benchmarks/dream_answers.py" + (f' --data "$BRAINFS_LOCOMO_DIR"/{data.name}' if data else "") + (
        f" --budget {args.budget}" if args.budget != 1000 else "")
    md = [f"# Answers in {args.budget:,} tokens of the wiki", "",
          f"`{cmd}` ({time.monotonic() - t0:.0f} s; LoCoMo from `$BRAINFS_LOCOMO_DIR` or `--data`)", "",
          "A question is answered when every content word of its gold answer stands in what an agent "
          f"reads within {args.budget:,} tokens: `knowledge/INDEX.md`, then the page of each subject the "
          "question names. `wiki as read` counts the frontmatter (`sources:`) as `cat` shows it; `page, "
          "no cap` reads the named pages whole; `transcripts` fills the same budget with the turns the "
          "subject speaks or that name it, newest first (the baseline without a wiki).", "", *lines, ""]
    print("\n".join(md))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dream-answers.md").write_text("\n".join(md), encoding="utf-8")
        # LoCoMo's questions and answers are not ours to publish: their outcomes only
        kept = [{k: v for k, v in r.items() if r["set"] != "locomo" or k not in ("question", "answer")}
                for r in rows]
        (args.out / "dream-answers.json").write_text(json.dumps(
            {"command": cmd, "summary": summary, "questions": kept}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
