"""Dream's subject and supersession figures on labelled synthetic personas.

A persona (``tests/personas/<name>.yaml``) is a list of dated sessions (``Speaker: text``
turns) and labels: the key subjects a person would want a page for, junk that must not get
one, and the current and replaced values of facts that change. This script writes each
persona as a memory tree, runs dream on it and reports, per persona:

* page precision and recall of key subjects (a page matches a key subject when its title or
  one of its ``aliases`` is the subject's name or one of its labelled aliases, case-insensitive);
* type accuracy of the matched pages;
* junk pages (a page whose title or alias is a junk name);
* stale facts stated as current: a replaced value in the current section (before the first
  ``## Timeline`` / ``## Superseded`` heading) of the subject's page, or missing current values.

``python benchmarks/dream_personas.py [--json] [--tune] [--user-role] [--only a,b]``
(``--tune``: pick ``min_mentions``/``min_sessions`` on the other personas and report each held
out; ``--user-role``: the user speaks as "User"; ``--only``: these personas alone, e.g. the
first run of a new one before any change for it).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml
from brainfs.cache.layout import in_knowledge, transcript_path

PERSONAS = Path(__file__).resolve().parent.parent / "tests" / "personas"


def load(path: Path | str) -> dict:
    """A persona file as a dict."""
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def transcripts(persona: dict) -> dict[str, str]:
    """The persona's sessions as transcript files (corpus path → text)."""
    out = {}
    for i, s in enumerate(persona["sessions"], 1):
        speakers: list[str] = []
        body = []
        for j, turn in enumerate(s["turns"], 1):
            spk, _, text = turn.partition(": ")
            if spk not in speakers:
                speakers.append(spk)
            body.append(f"[D{i}:{j}] {spk}: {text}")
        sid = f"p{i:02d}"
        day = s["date"] if isinstance(s["date"], str) else s["date"].isoformat()
        head = f"---\nsession: {sid}\ndate: {day}T10:00:00\nparticipants: {json.dumps(speakers)}\n---\n\n"
        out[transcript_path(sid)] = head + "\n\n".join(body) + "\n"
    return out


def as_user_role(persona: dict, role: str = "User") -> dict:
    """The same persona with the user speaking as ``role`` ("User: …"): dream must learn
    their name from the conversation ("I'm Ines Okafor", "Nice to meet you, Noor")."""
    first = persona["user"].split()[0]
    out = dict(persona)
    out["sessions"] = [{**s, "turns": [(role + t[len(first):]) if t.startswith(first + ":") else t
                                       for t in s["turns"]]} for s in persona["sessions"]]
    return out


def write_tree(persona: dict, root: Path) -> Path:
    for rel, text in transcripts(persona).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def _current(body: str) -> str:
    return re.split(r"^## (?:Timeline|Superseded)\b", body, maxsplit=1, flags=re.M)[0]


def score(pages: dict[str, str], labels: dict) -> dict:
    """Figures of one wiki (``knowledge/*.md`` path → text) against a persona's labels."""
    from brainfs.cache.search.chunker import split_frontmatter

    names: dict[str, tuple[str, str, str]] = {}  # lower name → (path, type, body)
    for p, text in pages.items():
        if not in_knowledge(p) or not p.endswith(".md") or p.endswith("INDEX.md"):
            continue
        meta, body, _bad = split_frontmatter(text)
        meta = meta or {}
        for n in [meta.get("title") or ""] + list(meta.get("aliases") or []):
            names.setdefault(str(n).lower(), (p, str(meta.get("type") or ""), body))
    page_paths = {p for p in pages if in_knowledge(p) and p.endswith(".md")
                  and not p.endswith("INDEX.md")}
    found, typed, matched_paths = [], [], set()
    for k in labels["key"]:
        hit = next((names[n.lower()] for n in [k["name"], *k.get("aliases", [])]
                    if n.lower() in names), None)
        if hit:
            found.append(k["name"])
            matched_paths.add(hit[0])
            if hit[1] == k["type"]:
                typed.append(k["name"])
    junk = sorted({names[j.lower()][0] for j in labels.get("junk", []) if j.lower() in names})
    stale, missing = [], []
    for n in labels.get("now", []):
        hit = names.get(n["subject"].lower())
        cur = _current(hit[2]) if hit else ""
        if str(n["current"]).lower() not in cur.lower():
            missing.append(f"{n['subject']}: {n['current']}")
        for old in n.get("stale", []):
            if re.search(rf"(?<![\w.]){re.escape(str(old).lower())}(?![\w])", cur.lower()):
                stale.append(f"{n['subject']}: {old}")
    extra = sorted(page_paths - matched_paths)
    return {
        "pages": len(page_paths), "key": len(labels["key"]), "found": len(found),
        "recall": round(len(found) / len(labels["key"]), 3),
        "precision": round(len(matched_paths) / len(page_paths), 3) if page_paths else 0.0,
        "type_accuracy": round(len(typed) / len(found), 3) if found else 0.0,
        "junk_pages": junk, "stale_as_current": stale, "current_missing": missing,
        "missed": [k["name"] for k in labels["key"] if k["name"] not in found],
        "unlabelled_pages": extra,
    }


def run(persona: dict, settings: dict | None = None) -> tuple[dict, dict]:
    """Dream over the persona; (figures, staged files)."""
    from brainfs.dream.core import run_local

    with tempfile.TemporaryDirectory() as d:
        root = write_tree(persona, Path(d) / "tree")
        t0 = time.monotonic()
        res = run_local(root, None, settings=settings or {},
                        now=_dt.datetime(2026, 7, 1, tzinfo=_dt.timezone.utc))
        figs = score(res.staged, persona["labels"])
        figs["seconds"] = round(time.monotonic() - t0, 2)
        figs["rejected"] = res.stats.get("rejected")
        return figs, res.staged


def _f1(fig: dict) -> float:
    p, r = fig["precision"], fig["recall"]
    return 0.0 if p + r == 0 else 2 * p * r / (p + r) - 0.2 * len(fig["junk_pages"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--tune", action="store_true", help="leave-one-out choice of min_mentions")
    ap.add_argument("--show", help="print the pages of this persona")
    ap.add_argument("--only", help="comma-separated persona names (e.g. a new, held-out one)")
    ap.add_argument("--user-role", action="store_true",
                    help='the user speaks as "User" instead of by name')
    args = ap.parse_args(argv)
    files = sorted(PERSONAS.glob("*.yaml"))
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {f.stem for f in files}
        if unknown:
            ap.error(f"no persona {', '.join(sorted(unknown))} in {PERSONAS}")
        files = [f for f in files if f.stem in wanted]
    personas = {f.stem: load(f) for f in files}
    if args.user_role:
        personas = {n: as_user_role(p) for n, p in personas.items()}
    out: dict = {}
    if args.tune:
        grid = [{"min_mentions": m, "min_sessions": s} for m in (2, 3) for s in (1, 2)]
        for held in personas:
            best, best_f = None, -1e9
            for g in grid:
                f = sum(_f1(run(p, g)[0]) for n, p in personas.items() if n != held)
                if f > best_f:
                    best, best_f = g, f
            out[held] = {"chosen_on_others": best, "held_out": run(personas[held], best)[0]}
    else:
        for n, p in personas.items():
            figs, staged = run(p)
            out[n] = figs
            if args.show == n:
                for path in sorted(staged):
                    if in_knowledge(path):
                        print(f"==== {path}\n{staged[path]}")
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for n, f in out.items():
            print(n, json.dumps(f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
