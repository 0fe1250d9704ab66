"""Checks of the sample memory tree generator (brainfs.tools.sample).

Each test reads the tree back from disk the way other components will (frontmatter with
PyYAML, turns with the documented regex), so a format drift in the generator fails here.
"""

from __future__ import annotations

import datetime as dt
import pathlib
import re

import pytest
import yaml

from brainfs.tools import sample

pytestmark = pytest.mark.unit

TURN_RE = re.compile(r"^\[D(\d+):(\d+)\] ([^:]+): ")
INDEX_RE = re.compile(r"^- (\S+) \| (\d{4}-\d{2}-\d{2}) \| (.+)$")
SOURCE_RE = re.compile(r"^sessions/([^/]+)/transcript\.md#D(\d+):(\d+)$")
LINK_RE = re.compile(r"\[\[([^\]|]+)\]\]")
CITE_RE = re.compile(r"\[cite:(\d+)\]")
# Words that say nothing about a fact; a cited turn must share at least one other word
# (length >= 3) with the claim that cites it.
STOP = set("""the and for with that this from are was were has have had its into not but our
you your they them their then than she her who what when where which will would can could
should about after before over under nadia team now""".split())


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in STOP}


def _split(text: str) -> tuple[dict, str]:
    """Frontmatter (parsed) and body of a Markdown file; fails if there is none."""
    assert text.startswith("---\n"), "missing frontmatter"
    _, fm, body = text.split("---\n", 2)
    meta = yaml.safe_load(fm)
    assert isinstance(meta, dict)
    return meta, body


def _files(root: pathlib.Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


class Tree:
    """A generated tree plus the parsed transcripts everything else is checked against."""

    def __init__(self, root: pathlib.Path, stats: dict):
        self.root = root
        self.stats = stats
        self.files = _files(root)
        self.sessions: list[tuple[str, str, str]] = []
        for line in (root / "sessions/index.md").read_text().splitlines():
            m = INDEX_RE.match(line)
            assert m, f"bad sessions/index.md line: {line!r}"
            self.sessions.append(m.groups())
        self.ordinal = {sid: i + 1 for i, (sid, _, _) in enumerate(self.sessions)}
        self.turns: dict[str, dict[tuple[int, int], str]] = {}

    def text(self, rel: str) -> str:
        return self.files[rel].decode("utf-8")

    def transcript_turns(self, sid: str) -> dict[tuple[int, int], str]:
        """(session ordinal, turn) -> the turn's text, parsed with the exact regex."""
        if sid not in self.turns:
            meta, body = _split(self.text(f"sessions/{sid}/transcript.md"))
            paras = [p for p in body.split("\n\n") if p.strip()]
            assert paras[0].startswith("# "), "transcript has no title heading"
            out = {}
            for p in paras[1:]:
                m = TURN_RE.match(p)
                assert m, f"{sid}: paragraph does not start with a turn anchor: {p[:80]!r}"
                assert "\n" not in p.strip(), f"{sid}: a turn spans several lines"
                out[(int(m.group(1)), int(m.group(2)))] = p
            self.turns[sid] = out
        return self.turns[sid]

    def resolve(self, source: str) -> str:
        """The text of the turn a citation source names; fails if it does not exist."""
        m = SOURCE_RE.match(source)
        assert m, f"malformed source {source!r}"
        sid, d, t = m.group(1), int(m.group(2)), int(m.group(3))
        assert f"sessions/{sid}/transcript.md" in self.files, f"no transcript for {source}"
        assert d == self.ordinal[sid], f"{source}: D{d} is not the ordinal of {sid}"
        turns = self.transcript_turns(sid)
        assert (d, t) in turns, f"{source}: no such turn"
        return turns[(d, t)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Tree:
    root = tmp_path_factory.mktemp("demo") / "memory"
    return Tree(root, sample.generate(root, files=sample.SIZES["demo"], seed=7))


@pytest.fixture(scope="module")
def mid(tmp_path_factory) -> Tree:
    root = tmp_path_factory.mktemp("mid") / "memory"
    return Tree(root, sample.generate(root, files=2000, seed=7))


@pytest.fixture(params=["demo", "mid"])
def tree(request) -> Tree:
    return request.getfixturevalue(request.param)


def test_public_api():
    assert sample.SIZES == {"demo": 200, "2000": 2000, "20000": 20000}
    assert re.fullmatch(r"[a-z]+", sample.RARE_WORD)


def test_same_seed_gives_identical_bytes(demo, tmp_path):
    again = tmp_path / "again"
    stats = sample.generate(again, files=200, seed=7)
    assert stats == demo.stats
    assert _files(again) == demo.files
    other = tmp_path / "other"
    sample.generate(other, files=200, seed=8)
    assert _files(other) != demo.files, "the seed has no effect"


@pytest.mark.parametrize("fixture,target", [("demo", 200), ("mid", 2000)])
def test_counts_and_sizes(request, fixture, target):
    t: Tree = request.getfixturevalue(fixture)
    n = len(t.files)
    assert abs(n - target) <= 0.05 * target, f"{n} files for a target of {target}"
    assert t.stats["files"] == n
    assert t.stats["bytes"] == sum(len(b) for b in t.files.values())
    assert t.stats["sessions"] == len(t.sessions)
    avg = t.stats["bytes"] / n
    assert 3000 < avg < 8000, f"average file size {avg:.0f} B is far from ~5 KB"
    kinds = {}
    for rel in t.files:
        kinds[rel.split("/")[0]] = kinds.get(rel.split("/")[0], 0) + 1
    # Every part of the tree scales, not just the sessions.
    assert kinds["notes"] >= 0.1 * n and kinds["knowledge"] >= 0.1 * n
    assert kinds["sessions"] == 2 * len(t.sessions) + 1
    assert kinds["rules"] >= 2


def test_session_index_and_transcripts(tree):
    ids = [sid for sid, _, _ in tree.sessions]
    assert len(ids) == len(set(ids))
    dates = [dt.date.fromisoformat(d) for _, d, _ in tree.sessions]
    assert dates == sorted(dates), "sessions/index.md is not oldest first"
    assert (dates[-1] - dates[0]).days >= 90, "sessions should span months"
    on_disk = {rel.split("/")[1] for rel in tree.files if rel.startswith("sessions/") and rel.count("/") == 2}
    assert on_disk == set(ids)
    last_stamp = None
    for sid, date, title in tree.sessions:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+", sid) and sid.startswith(date)
        meta, body = _split(tree.text(f"sessions/{sid}/transcript.md"))
        assert meta["session"] == sid
        assert meta["participants"] == ["Nadia", "Assistant"]
        stamp = dt.datetime.fromisoformat(str(meta["date"]))
        assert stamp.tzinfo is not None and stamp.date().isoformat() == date
        assert last_stamp is None or stamp >= last_stamp
        last_stamp = stamp
        assert body.splitlines()[0] == f"# {title}"
        turns = tree.transcript_turns(sid)
        d = tree.ordinal[sid]
        assert {k[0] for k in turns} == {d}
        numbers = sorted(k[1] for k in turns)
        assert numbers == list(range(1, len(numbers) + 1))
        assert 10 <= len(numbers) <= 40
        for (_, n), text in turns.items():
            speaker = TURN_RE.match(text).group(3)
            assert speaker == ("Nadia" if n % 2 else "Assistant")


def test_transcripts_vary(mid):
    # Search benchmarks need text that is not one paragraph copied around.
    bodies = [text.split(": ", 1)[1] for sid, _, _ in mid.sessions[:200]
              for text in mid.transcript_turns(sid).values()]
    assert len(set(bodies)) > 0.97 * len(bodies)


def test_summaries_cite_existing_turns(tree):
    for sid, date, title in tree.sessions:
        meta, body = _split(tree.text(f"sessions/{sid}/summary.md"))
        assert meta["session"] == sid and meta["type"] == "summary" and meta["title"] == title
        assert str(meta["date"]).startswith(date)
        anchors = re.findall(r"\[D(\d+):(\d+)\]", body)
        assert anchors, f"{sid}: summary mentions no turn"
        turns = tree.transcript_turns(sid)
        for d, t in anchors:
            assert (int(d), int(t)) in turns, f"{sid}: summary cites missing D{d}:{t}"


def test_every_wikilink_resolves(tree):
    pages = {rel[len("knowledge/"):-3] for rel in tree.files
             if rel.startswith("knowledge/") and rel != "knowledge/INDEX.md"}
    n_links = 0
    for rel in tree.files:
        if rel.startswith("knowledge/"):
            for slug in LINK_RE.findall(tree.text(rel)):
                n_links += 1
                assert slug in pages, f"{rel}: [[{slug}]] has no page"
    assert n_links > len(pages), "the wiki is barely linked"
    index = tree.text("knowledge/INDEX.md")
    listed = re.findall(r"^- \[\[([^\]]+)\]\] — \S", index, re.M)
    assert sorted(listed) == sorted(pages), "INDEX.md must list every page once"


def test_every_cite_resolves_to_a_turn_that_states_it(tree):
    n_cites = strong = 0
    types = set()
    for rel in tree.files:
        if not rel.startswith("knowledge/") or rel == "knowledge/INDEX.md":
            continue
        meta, body = _split(tree.text(rel))
        assert set(meta) >= {"title", "type", "updated", "sources"}
        types.add(meta["type"])
        sources = meta["sources"]
        assert isinstance(sources, list) and sources, f"{rel}: no sources"
        used = set()
        for line in body.splitlines():
            prev = 0
            for m in CITE_RE.finditer(line):
                n = int(m.group(1))
                assert 1 <= n <= len(sources), f"{rel}: [cite:{n}] beyond {len(sources)} sources"
                used.add(n)
                claim = line[prev:m.start()]
                prev = m.end()
                turn = tree.resolve(sources[n - 1])
                shared = _tokens(claim) & _tokens(turn.split(": ", 1)[1])
                assert shared, f"{rel}: [cite:{n}] {sources[n - 1]} does not state {claim!r}"
                n_cites += 1
                strong += len(shared) >= 2
        assert used == set(range(1, len(sources) + 1)), f"{rel}: uncited sources"
        latest = max(dt.date.fromisoformat(SOURCE_RE.match(s).group(1)[:10]) for s in sources)
        assert meta["updated"] == latest
    assert n_cites > 0 and strong >= 0.9 * n_cites
    assert types >= {"entity", "project", "organization", "place", "concept", "preference"}


def test_note_cards(tree):
    cards = [rel for rel in tree.files if rel.startswith("notes/")]
    assert cards
    seen_types = set()
    supersedes = 0
    for rel in cards:
        assert re.fullmatch(r"notes/[a-z0-9-]+/[a-z0-9-]+\.md", rel), rel
        meta, body = _split(tree.text(rel))
        seen_types.add(meta["type"])
        assert meta["type"] in {"fact", "preference", "decision", "correction"}
        assert re.fullmatch(r"global|project:[a-z0-9-]+", meta["scope"])
        assert isinstance(meta["confidence"], float) and 0 <= meta["confidence"] <= 1
        assert isinstance(meta["created"], dt.date) and meta["updated"] >= meta["created"]
        sources = re.findall(r"^Source: (\S+)$", body, re.M)
        assert len(sources) == 1, f"{rel}: needs exactly one Source line"
        turn = tree.resolve(sources[0])
        claim = body.split("\n", 1)[0]
        assert _tokens(claim) & _tokens(turn.split(": ", 1)[1]), f"{rel}: source does not say it"
        if "supersedes" in meta:
            supersedes += 1
            assert meta["type"] == "correction"
            older = meta["supersedes"]
            assert older in tree.files and older != rel, f"{rel}: supersedes missing {older}"
            old_meta, _ = _split(tree.text(older))
            assert old_meta["created"] <= meta["created"]
    assert supersedes >= 2, "the tree should contain corrections"
    assert seen_types >= {"fact", "preference", "decision", "correction"}


def test_guide_and_rules(tree):
    meta, body = _split(tree.text("GUIDE.md"))
    assert meta["type"] == "guide" and meta["title"] and isinstance(meta["updated"], dt.date)
    assert "PDF" in body
    rules = [rel for rel in tree.files if rel.startswith("rules/")]
    assert len(rules) >= 2
    for rel in rules:
        meta, _ = _split(tree.text(rel))
        assert meta["type"] == "rule" and meta["title"] and isinstance(meta["updated"], dt.date)


def test_rare_word_is_exactly_where_reported(tree):
    word = sample.RARE_WORD.encode()
    found = sorted(rel for rel, data in tree.files.items() if word in data.lower())
    assert found == tree.stats["rare_word_files"]
    assert 3 <= len(found) <= 6
    assert "knowledge/tactile-transit-maps.md" in found
    assert any(rel.endswith("/transcript.md") for rel in found)


def test_refuses_non_empty_destination(tmp_path):
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "keep.md").write_text("precious\n")
    with pytest.raises(ValueError):
        sample.generate(dest, files=200)
    assert [p.name for p in dest.iterdir()] == ["keep.md"]
    assert (dest / "keep.md").read_text() == "precious\n"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ValueError):
        sample.generate(a_file, files=200)
    with pytest.raises(ValueError):
        sample.generate(tmp_path / "tiny", files=5)
    assert not (tmp_path / "tiny").exists()


def test_accepts_an_empty_existing_directory(tmp_path):
    dest = tmp_path / "empty"
    dest.mkdir()
    stats = sample.generate(dest, files=60, seed=3)
    assert stats["files"] == len(_files(dest))
    assert stats["rare_word_files"]
