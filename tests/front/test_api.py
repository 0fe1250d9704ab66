"""The Python API (``from brainfs import Memory``, front/api.py) against the real S3 server on
loopback and a real FUSE mount: recall, read, list, write, append, note, context, correct,
forget, and the one-line errors for bad input. The example in docs/USAGE.md runs as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.errors import NoSuchKey
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, upload_tree, wait_for, write_tree


def _indexed(store: ObjectStore, cfg: Config, tmp_path: Path) -> None:
    """The CLI_TREE uploaded and a keyword index built and uploaded (no model)."""
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    build_index(store, tmp_path / "build-index.sqlite", None)
    build_pack(store, cfg)


@pytest.fixture
def quiet_cfg(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("BRAINFS_GLOBAL_GUIDE", str(tmp_path / "no-global-guide.md"))
    return cfg.override(embedder="none")


@pytest.mark.s3
def test_memory_on_a_corpus(tmp_path: Path, quiet_cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    from brainfs import Memory, UsageError

    _indexed(store, quiet_cfg, tmp_path)
    with Memory(str(corpus), quiet_cfg) as m:
        r = m.recall("Kyoto", k=2)
        assert len(r.cards) == 2 and all(c.path in CLI_TREE for c in r.cards)
        assert "Kyoto" in r.text() and r.to_dict()["cards"][0]["path"] == r.cards[0].path
        assert len(m.recall("Kyoto", k=4).cards) == 4
        assert m.read("notes/pets/dog.md") == CLI_TREE["notes/pets/dog.md"]
        assert m.list("notes") == sorted(p for p in CLI_TREE if p.startswith("notes/"))
        assert ".brainfs/index.sqlite" not in m.list()

        assert m.write("notes/agent/today.md", "- one\n") == "notes/agent/today.md"
        m.append("notes/agent/today.md", "- two\n")
        m.append("notes/agent/new.md", "first line\n")  # append creates a missing file
        assert store.get("notes/agent/today.md")[0] == b"- one\n- two\n"
        assert store.get("notes/agent/new.md")[0] == b"first line\n"

        p1 = m.note("Mara prefers window seats on trains.", topic="travel")
        p2 = m.note("Mara prefers window seats on trains.", topic="travel")
        assert p1.startswith("notes/travel/") and p1.endswith("-mara-prefers-window-seats-on-trains.md")
        assert p2 != p1  # the same note twice: a second card, never an overwrite
        import frontmatter

        card = frontmatter.loads(store.get(p1)[0].decode())
        assert card["type"] == "fact" and card.content == "Mara prefers window seats on trains."

        w = m.context("plan the Kyoto trip", budget=2000)
        assert w.reserve == 500 and w.mode != "none"
        assert any(i.path == "GUIDE.md" for i in w.admitted())
        assert any(i.path in CLI_TREE and "Kyoto" in i.text for i in w.admitted())

        cpath = m.correct("Mara met Sora City Lab in Osaka, not Kyoto")
        assert "Osaka" in store.get(cpath)[0].decode()
        fpath = m.forget("Biscuit")
        assert fpath.startswith("forget/") and store.get(fpath)[0].decode().rstrip().endswith("Biscuit")

        # Bad input: one line naming the fix, nothing written.
        for call, words in [
            (lambda: m.read("../outside.md"), "relative"),
            (lambda: m.read("/etc/passwd"), "relative"),
            (lambda: m.read("notes/none.md"), "no such file"),
            (lambda: m.write(".brainfs/index.sqlite", "x"), "belongs to brainfs"),
            (lambda: m.write(".recall/q", "x"), "belongs to brainfs"),
            (lambda: m.recall("   "), "empty query"),
            (lambda: m.recall("Kyoto", k=0), "k must be"),
            (lambda: m.context("trip", budget=100, reserve=100), "reserve"),
            (lambda: m.note("  "), "empty note"),
            (lambda: m.list("nowhere"), "no such folder"),
        ]:
            with pytest.raises(UsageError) as e:
                call()
            assert words in str(e.value) and "\n" not in str(e.value)
        with pytest.raises(NoSuchKey):
            store.head(".brainfs/index.sqlite.x")


@pytest.mark.s3
def test_memory_refuses_a_corpus_without_index(tmp_path: Path, quiet_cfg: Config, corpus: CorpusURL,
                                                store: ObjectStore) -> None:
    from brainfs import Memory, UsageError

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    with Memory(str(corpus), quiet_cfg) as m:
        with pytest.raises(UsageError, match="no search index.*brainfs index"):
            m.recall("Kyoto")
        # context still assembles (guide, pinned lanes); its recall lanes say why they are empty
        assert m.context("plan the Kyoto trip").why == "no search index"


@pytest.mark.mount
def test_memory_through_a_mount(tmp_path: Path, quiet_cfg: Config, corpus: CorpusURL,
                                store: ObjectStore, mounter) -> None:
    """Through a mount: recall asks .recall/ (beyond the mount's recall_k too) and makes the
    files behind the hits local; writes go through the tree and reach the bucket."""
    from brainfs import Memory, UsageError

    _indexed(store, quiet_cfg, tmp_path)
    mnt = mounter(corpus, env_extra={"BRAINFS_EMBEDDER": "none", "BRAINFS_RECALL_K": "2"})
    status = lambda: json.loads((mnt.mountpoint / ".brainfs/status").read_text())  # noqa: E731
    wait_for(lambda: status()["recall"] == "ready", timeout=30.0, what="recall ready")
    with Memory(mnt.mountpoint, quiet_cfg) as m:
        assert m.url == corpus
        assert len(m.recall("Kyoto").cards) == 2  # the mount's recall_k
        r = m.recall("Kyoto", k=4)  # beyond it: the mount honours k
        assert len(r.cards) == 4 and set(r.materialized) >= {c.path for c in r.cards}
        assert r.to_dict()["materialized"] == r.materialized
        assert m.read("sessions/s1/transcript.md") == CLI_TREE["sessions/s1/transcript.md"]
        m.write("notes/agent/mounted.md", "- one\n")
        m.append("notes/agent/mounted.md", "- two\n")

        def landed() -> bool:
            try:
                return store.get("notes/agent/mounted.md")[0] == b"- one\n- two\n"
            except NoSuchKey:
                return False

        wait_for(landed, timeout=30.0, what="the mount's upload")
        w = m.context("plan the Kyoto trip", budget=2000)
        assert w.mode != "none" and any("Kyoto" in i.text for i in w.admitted())
        with pytest.raises(UsageError, match="k must be between 1 and 200"):
            m.recall("Kyoto", k=201)
    with pytest.raises(UsageError, match="not a running brainfs mount"):
        Memory(tmp_path / "src", quiet_cfg)


@pytest.mark.s3
def test_usage_example_runs(tmp_path: Path, repo_root: Path, cfg: Config, corpus: CorpusURL,
                            store: ObjectStore) -> None:
    """The Python example of docs/USAGE.md, as written, on a real corpus (its URL swapped in)."""
    import os
    import re
    import subprocess
    import sys

    import brainfs
    from brainfs.front import api

    _indexed(store, cfg, tmp_path)
    text = (repo_root / "docs" / "USAGE.md").read_text()
    block = re.search(r"```python\n(from brainfs import Memory\n.*?)```", text, re.S)
    assert block, "docs/USAGE.md lost its Python example"
    code = block.group(1).replace('"s3://memory/demo"', repr(str(corpus)))
    assert str(corpus) in code
    env = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
               BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Kyoto" in r.stdout and "Answer briefly" in r.stdout  # the recall, then the prompt
    assert store.get("notes/agent/log.md")[0] == b"- booked the Kyoto hotel\n"
    assert any(p.startswith("notes/travel/") and p.endswith("-prefers-aisle-seats-on-long-flights.md")
               for p in (o.path for o in store.list("notes/travel")))
    assert brainfs.Memory is api.Memory and brainfs.UsageError is api.UsageError
    with pytest.raises(AttributeError):
        brainfs.nothing  # noqa: B018


@pytest.mark.s3
@pytest.mark.model
def test_memory_imports_sessions_and_dreams(tmp_path: Path, quiet_cfg: Config, corpus: CorpusURL,
                                            store: ObjectStore) -> None:
    """import_sessions and dream: the library calls behind `brainfs import-sessions` and
    `brainfs dream`, through the API (dream's NER model loads: marked `model`)."""
    from brainfs import Memory, UsageError

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    chat = tmp_path / "standup.md"
    chat.write_text("---\ntitle: Standup\ndate: 2026-05-04\n---\n\nUser: Mara Lind adopted a dog named "
                    "Biscuit.\n\nAssistant: Noted: Biscuit is Mara Lind's dog.\n\nUser: Mara Lind works "
                    "at Sora City Lab now.\n")
    with Memory(str(corpus), quiet_cfg) as m:
        rep = m.import_sessions(chat)
        assert len(rep.paths) == 1 and rep.paths[0].startswith("sessions/")
        assert "Biscuit" in store.get(rep.paths[0])[0].decode()
        assert m.import_sessions(chat).paths == []  # idempotent
        bad = tmp_path / "bad.md"
        bad.write_text("---\ntitle: [unclosed\n---\nUser: hi\n")
        with pytest.raises(UsageError, match="nothing imported"):
            m.import_sessions(bad)
        run = m.dream(embed=False, reindex=False)
        assert run.commit and run.uploaded
        assert "knowledge/INDEX.md" in m.list("knowledge")
        assert m.dream(embed=False, reindex=False).result.nothing_new
