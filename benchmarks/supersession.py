"""Precision and recall of dream's supersession on a labelled set (issue 28).

``tests/data/supersession.yaml`` holds small memories in the sessions' own style, each with
the changes a person would see in it (subject, attribute, old value → new value) or none.
Each case is written as a memory tree (its sessions and correction events), dream runs on
it, and its fact records (``knowledge/.facts.jsonl``) are compared with the labels:

* a **true supersession**: a closed record on the labelled subject and attribute whose value
  is the old one and whose successor's value is the new one (or with no successor, for a
  value that ended);
* a **false supersession**: any other closed record, in any case;
* **recall**: true supersessions / labelled changes; **precision**: true / (true + false).

Every case's views are also checked against its records (:func:`dream.facts.check_views`).

``python -m brainfs.benchmarks.supersession [--cases FILE] [--write] [--show ID] [--locomo FILE]``
(``--cases``: another labelled set in the same format, such as the held-out
``tests/data/supersession-heldout.yaml``, printed only; ``--write``: the tuned set's figures to
``benchmarks/results/supersession.md``; ``--locomo``: run dream over a LoCoMo file and list
the supersessions it makes there).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from brainfs.cache.layout import in_knowledge, transcript_path
from brainfs.dream.facts import same_phone

LABELS = Path(__file__).resolve().parent.parent / "tests" / "data" / "supersession.yaml"
RESULTS = Path(__file__).resolve().parent / "results" / "supersession.md"
#: where the results file's held-out section starts (``--write`` keeps it)
HELDOUT_HEADING = "## Held-out set"


def load(path: Path | str = LABELS) -> dict:
    """The labelled set: ``{"changes": [case, …], "no_change": [case, …]}``."""
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def tree_of(case: dict) -> dict[str, str]:
    """A case as a memory tree: one transcript per session (``[D<n>:<t>] Speaker: text``),
    one correction event per correction."""
    import datetime as _dt

    from brainfs.dream.core import correction_event

    files: dict[str, str] = {}
    for n, ses in enumerate(case["sessions"], 1):
        speakers = sorted({t.split(":", 1)[0].strip() for t in ses["turns"]})
        body = "\n\n".join(f"[D{n}:{i}] {t}" for i, t in enumerate(ses["turns"], 1))
        files[transcript_path(f"s{n}")] = (
            f"---\nsession: s{n}\ndate: {ses['date']}T10:00:00\nparticipants: {json.dumps(speakers)}\n"
            f"---\n\n{body}\n")
    for c in case.get("corrections") or []:
        day = _dt.date.fromisoformat(str(c["date"]))
        p, text = correction_event(c["text"], now=_dt.datetime(day.year, day.month, day.day, 12,
                                                                tzinfo=_dt.timezone.utc))
        files[p] = text
    return files


def _expected(case: dict) -> list[dict]:
    e = case.get("expect")
    return [] if not e else e if isinstance(e, list) else [e]


_MONTHS = {m: i for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


def _month_day(value: str) -> tuple[int, int] | None:
    """(month, day) of a value that is one date, as a label or a record may write it
    ("2026-05-15", "15 May", "May 15th"); None for anything else."""
    v = value.strip().casefold()
    if m := re.fullmatch(r"\d{4}-(\d{2})-(\d{2})", v):
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]{3})[a-z]*\.?(?:\s+\d{4})?", v) or \
        re.fullmatch(r"([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+\d{4})?", v)
    if not m:
        return None
    day, mon = (m.group(1), m.group(2)) if m.group(1).isdigit() else (m.group(2), m.group(1))
    return (_MONTHS[mon], int(day)) if mon in _MONTHS else None


#: Words chat shortens in a title: a label "Backend Developer" is a record's "backend dev".
_SHORT = {"dev": "developer", "eng": "engineer", "mgr": "manager", "admin": "administrator", "sr": "senior",
          "jr": "junior"}
#: When a trip's value says when after where ("Kyoto in April", "Nairobi on 3-10 August",
#: "Vancouver for the August long weekend"): a label naming the place alone names that trip.
_TRIP_WHEN = re.compile(r"\s+(?:on|in|from|for)\s+(?:[a-z]+\s+){0,3}?(?:early\s+|mid-?|late\s+)?(?:\d|(?:jan|feb|mar|"
                        r"apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b).*$")


def _plain(value: str, names: frozenset[str] = frozenset()) -> str:
    """A value's words without the commas and the "on" that join a place and its dates
    ("Accra, 12-19 July" / "Accra on 12-19 July"), a title's short words written out, a
    plural's "s" left off ("window seats" / "window seat") but a name's (``names``: the words
    written with a capital, "Lucas" is not "Luca")."""
    return " ".join(_one(_SHORT.get(w, w), w in names) for w in re.sub(r"[,;:]", " ", value).split() if w != "on")


def _one(word: str, name: bool = False) -> str:
    return word[:-1] if not name and len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _capitals(*values: object) -> frozenset[str]:
    return frozenset(w.casefold() for v in values for w in str(v or "").split() if w[:1].isupper())


def _same(a: object, b: object, key: str = "") -> bool:
    """A record's value ``a`` is the label's ``b``: the same words (commas and a joining "on"
    aside), one of two words or more beginning or ending the other ("12 May" / "Oslo on 12
    May"), the same date however written (a label "2026-05-15" and a record's "15 May"), one
    phone number with or without its country code; with the record's ``key``, its value less
    the words the key names ("metric units" keyed "preference units" / "metric")."""
    # a label written as a bare date is a date object to YAML: compared as its ISO text
    x, y = str(a or "").casefold().strip(), str(b or "").casefold().strip()
    caps = _capitals(a, b)
    px, py = _plain(x, caps), _plain(y, caps)
    if px == py:
        return True
    kw = set(_plain(re.sub(r"^(?:preference|format(?:\s+of)?)\s+", "", key.casefold())).split())
    if kw and re.sub(r"\s+(?:for|of|in|on)$", "", " ".join(w for w in px.split() if w not in kw)) == py:
        return True
    # a phone number with or without its country code or trunk zero ("612 448 903" / "+34 612 448
    # 903", "07700 900123" / "+44 7700 900123"), as dream itself tells one number
    if all(re.fullmatch(r"[\d\s()+.-]{7,}", v) for v in (x, y)) and same_phone(x, y):
        return True
    # a label that gives a trip's date alone ("12 May") and the record's "Oslo on 12 May":
    # the shorter one, of two words or more, begins or ends the longer
    short, long_ = sorted((px, py), key=len)
    if len(short.split()) >= 2 and (long_.endswith(" " + short) or long_.startswith(short + " ")):
        return True
    if _TRIP_WHEN.sub("", x) == y or _TRIP_WHEN.sub("", y) == x:
        return True
    dx, dy = _month_day(x), _month_day(y)
    return dx is not None and dx == dy


@dataclass
class CaseResult:
    id: str
    expected: int
    found: int = 0
    false: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    view_errors: list[str] = field(default_factory=list)


def _subject_is(rec, label: dict) -> bool:
    """A record's subject is the label's: the same slug, or — for a date or a quantity, which
    dream keeps on the person who keeps it with the thing named in its key ("the Pebble
    launch": the user's, keyed "deadline|pebble launch") — a label that gives the thing itself
    as the subject ("pebble") and a key that names it."""
    if rec.subject == label["subject"]:
        return True
    # "Project Bluebell" is a page "project-bluebell" for a label "bluebell"
    bare = re.sub(r"^project-|-project$", "", rec.subject)
    if bare == re.sub(r"^project-|-project$", "", str(label["subject"])):
        return True
    words = str(label["subject"]).split("-")
    key = re.sub(r"[^a-z0-9]+", " ", (rec.key or "").casefold()).split()
    return rec.attribute in ("deadline", "number") and bool(words) and \
        any(key[i:i + len(words)] == words for i in range(len(key)))


def score_case(case: dict, staged: dict[str, str]) -> CaseResult:
    """One case's true, missed and false supersessions from its staged wiki."""
    from brainfs.cache.facts.records import FACTS_PATH, FactSet, loads
    from brainfs.dream.facts import check_views

    recs = FactSet([r for r in loads(staged.get(FACTS_PATH, "")) if r.kind != "procedure"])
    closed = [r for r in recs if not r.is_open]
    exp = _expected(case)
    out = CaseResult(case["id"], len(exp))
    matched: set[str] = set()
    for e in exp:
        hit = None
        for r in closed:
            nxt = recs.by_id.get(r.superseded_by or "")
            if _subject_is(r, e) and r.attribute == e["attribute"] \
                    and _same(r.value, str(e["old"]), r.key) \
                    and (_same(nxt.value if nxt else None, e["new"], nxt.key if nxt else "")
                         if e.get("new") is not None
                         else nxt is None):
                hit = r
                break
        if hit is not None:
            out.found += 1
            matched.add(hit.id)
        else:
            out.missed.append(f"{e['subject']}.{e['attribute']}: {e['old']} → {e.get('new')}")
    for r in closed:
        if r.id not in matched:
            nxt = recs.by_id.get(r.superseded_by or "")
            out.false.append(f"{r.subject}.{r.attribute}[{r.key}]: {r.value} → "
                             f"{nxt.value if nxt else 'ended'}")
    out.view_errors = check_views(staged)
    return out


def run(labels: dict | None = None, show: str | None = None) -> dict:
    """Run dream on every case; the figures (precision, recall, per-case results)."""
    from brainfs.dream.core import DictTree, dream

    labels = labels or load()
    cases = [(c, True) for c in labels["changes"]] + [(c, False) for c in labels["no_change"]]
    results: list[CaseResult] = []
    t0 = time.monotonic()
    for case, _is_change in cases:
        res = dream(DictTree(tree_of(case)))
        if show == case["id"]:
            for p in sorted(res.staged):
                if in_knowledge(p):
                    print(f"==== {p}\n{res.staged[p]}")
        results.append(score_case(case, res.staged))
    tp = sum(r.found for r in results)
    fp = sum(len(r.false) for r in results)
    n = sum(r.expected for r in results)
    return {
        "changes": n, "change_cases": len(labels["changes"]), "no_change_cases": len(labels["no_change"]),
        "true": tp, "false": fp,
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / n, 3) if n else 1.0,
        "view_errors": {r.id: r.view_errors for r in results if r.view_errors},
        "missed": {r.id: r.missed for r in results if r.missed},
        "false_supersessions": {r.id: r.false for r in results if r.false},
        "seconds": round(time.monotonic() - t0, 1),
    }


def locomo(path: Path | str, sample: int = 20, seed: int = 28) -> dict:
    """Dream over each conversation of a LoCoMo file (as ``benchmarks/dream_answers.py``
    builds its trees); every closed record, and a seeded sample to check by hand with the
    turns each side cites."""
    from brainfs.cache.facts.records import FACTS_PATH, FactSet, loads
    from brainfs.dream.core import DictTree, dream
    from brainfs.tools.locomo import conversation_tree, read_samples

    data = read_samples(Path(path))
    found = []
    records: Counter = Counter()
    for i, sample_ in enumerate(data):
        tree = conversation_tree(sample_)
        staged = dream(DictTree(dict(tree))).staged
        recs = FactSet(loads(staged.get(FACTS_PATH, "")))
        records.update(r.attribute for r in recs)
        for r in recs:
            if r.is_open:
                continue
            nxt = recs.by_id.get(r.superseded_by or "")

            def said(ref: str) -> str:
                path_, _, anchor = ref.partition("#")
                text = tree.get(path_) or staged.get(path_) or ""
                line = next((ln for ln in text.splitlines() if ln.startswith(f"[{anchor}]")), "")
                return line[:300]
            found.append({"conversation": i, "subject": r.subject, "attribute": r.attribute,
                          "old": r.value, "new": nxt.value if nxt else None,
                          "old_turn": said(r.sources[0]), "new_turn": said(nxt.sources[0]) if nxt else "",
                          "until": r.valid_until})
    rng = random.Random(seed)
    picked = rng.sample(found, min(sample, len(found)))
    return {"conversations": len(data), "records": sum(records.values()),
            "records_by_attribute": dict(records.most_common()), "supersessions": len(found),
            "by_attribute": dict(Counter(f["attribute"] for f in found)), "sample": picked}


def report(figs: dict, command: str, cases: str | None = None) -> str:
    """The results file's text."""
    lines = ["# Supersession on the labelled set", "",
             f"`{command}` — `{cases or 'tests/data/supersession.yaml'}`: {figs['change_cases']} "
             f"memories with {figs['changes']} labelled changes, {figs['no_change_cases']} with none.", "",
             "| changes | true | false | precision | recall |", "|---:|---:|---:|---:|---:|",
             f"| {figs['changes']} | {figs['true']} | {figs['false']} | {figs['precision']} | {figs['recall']} |",
             ""]
    if figs["missed"]:
        lines += ["Missed:", ""] + [f"- {k}: {'; '.join(v)}" for k, v in figs["missed"].items()] + [""]
    if figs["false_supersessions"]:
        lines += ["False supersessions:", ""] + [f"- {k}: {'; '.join(v)}"
                                                 for k, v in figs["false_supersessions"].items()] + [""]
    if figs["view_errors"]:
        lines += ["Views that disagree with the records:", ""] + [
            f"- {k}: {'; '.join(v)}" for k, v in figs["view_errors"].items()] + [""]
    else:
        lines += ["Every case's page, INDEX.md and cards agree with its records "
                  "(`dream.facts.check_views`).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    ap.add_argument("--show", help="print the wiki of one case")
    ap.add_argument("--locomo", help="a LoCoMo JSON file: the supersessions dream makes there")
    ap.add_argument("--cases", help="a labelled set in the same format (default: the tuned set)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.cases and args.write:
        ap.error("--write writes the tuned set's figures; the held-out figure is written by hand")
    if args.locomo:
        got = locomo(args.locomo)
        print(json.dumps(got, indent=1, ensure_ascii=False))
        return 0
    figs = run(load(args.cases) if args.cases else None, show=args.show)
    if args.json:
        print(json.dumps(figs, indent=1, ensure_ascii=False))
    else:
        cmd = "python -m brainfs.benchmarks.supersession" + (f" --cases {args.cases}" if args.cases else "")
        print(report(figs, cmd, args.cases))
    if args.write:
        # the held-out set's section is measured with --cases and kept as written
        _, mark, rest = (RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "").partition(
            HELDOUT_HEADING)
        RESULTS.write_text(report(figs, "python -m brainfs.benchmarks.supersession --write") + "\n"
                           + (f"\n{mark}{rest}" if mark else ""), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
