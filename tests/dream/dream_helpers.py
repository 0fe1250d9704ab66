"""What the dream tests share: three short sessions of one friendship (S1, S2, S3_, in
date order), writing them into a tree, and reading what a dream run staged."""

from __future__ import annotations

from pathlib import Path

from brainfs.dream.validate import CorpusView

S1 = """---
session: s1
date: 2023-05-08T10:00:00
participants: ["Mara", "Ana"]
---

[D1:1] Mara: Hi Ana! I adopted a dog last weekend. His name is Max and he is a beagle.

[D1:2] Ana: Wow, congrats! Where did you find him?

[D1:3] Mara: At the Kyoto Animal Shelter. I volunteer there with Sora City Lab on weekends.

[D1:4] Ana: I love hiking in Kyoto. The trails near Arashiyama are beautiful in spring.

[D1:5] Mara: I live in Osaka now, but I go to Kyoto every month for the shelter.

[D1:6] Ana: I decided to join Sora City Lab next month as a designer.
"""

S2 = """---
session: s2
date: 2023-06-20T18:30:00
participants: ["Mara", "Ana"]
---

[D2:1] Mara: Max learned to sit yesterday! He is the smartest beagle in Kyoto.

[D2:2] Ana: Ha! How is the move going?

[D2:3] Mara: I moved to Kyoto last week, so the shelter is now a short walk away.

[D2:4] Ana: My first week at Sora City Lab was great. The team builds maps for wheelchair users.

[D2:5] Mara: My favorite park is Maruyama Park because Max loves the ducks there.
"""

S3_ = """---
session: s3
date: 2023-07-02T09:00:00
participants: ["Mara", "Ana"]
---

[D3:1] Ana: Sora City Lab shipped the wheelchair map for Kyoto yesterday.

[D3:2] Mara: Max and I tested it on the walk to Maruyama Park.
"""


def write(root: Path, files: dict[str, str]) -> Path:
    """Create text files under ``root`` from a {relative path: text} dict."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def pages(res) -> dict[str, str]:
    """The wiki pages a dream run staged, by path."""
    return {p: t for p, t in res.staged.items() if p.startswith("knowledge/") and p.endswith(".md")}


def view_of(root: Path, res) -> CorpusView:
    """The corpus as validation sees it after ``res``: the files of ``root`` and what the run
    staged."""
    from brainfs.dream.text import parse_transcript

    def turns(p: str):
        f = root / p
        return {t.anchor for t in parse_transcript(p, f.read_text()).turns} if f.exists() else None

    return CorpusView(lambda p: (root / p).exists() or p in res.staged, turns)


def transcript(n: int, date: str, turns: list[str], speaker: str) -> str:
    """A one-day transcript ``sessions/s<n>/transcript.md`` between the assistant and
    ``speaker``: ``turns`` as written ("Name: text"), anchored D<n>:1, D<n>:2, …"""
    body = "\n\n".join(f"[D{n}:{i}] {t}" for i, t in enumerate(turns, 1))
    return (f"---\nsession: s{n}\ndate: {date}T10:00:00\nparticipants: [\"Assistant\", \"{speaker}\"]\n---\n\n"
            f"# Session s{n}\n\n{body}\n")


def relations_of(sentence: str) -> list[tuple[str, str, str, str]]:
    """(subject, attribute, value, op) of each relation the patterns read in ``sentence``."""
    from brainfs.dream import relations

    return [(r.subject, r.attr, r.value, r.op) for r in relations.extract(sentence)]


def records_of(days: list[tuple[str, list[str]]], speaker: str, attr: str) -> list:
    """The fact records of ``attr`` dream keeps of one transcript per (day, turns) with
    ``speaker``."""
    from brainfs.cache.facts.records import FACTS_PATH, loads
    from brainfs.dream.core import DictTree, dream

    tree = DictTree({f"sessions/s{i}/transcript.md": transcript(i, day, lines, speaker)
                     for i, (day, lines) in enumerate(days, 1)})
    return [r for r in loads(dream(tree).staged.get(FACTS_PATH, "")) if r.attribute == attr]
