"""A forget request reaches the search index: recall cannot bring back what the wiki forgot."""

from __future__ import annotations

from pathlib import Path

import pytest

from brainfs.backend.store import ObjectStore
from brainfs.cache.search.forget import forgotten_by, request_phrases
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.localindex import build_index

pytestmark = pytest.mark.s3

TALK = ("---\nsession: s1\ndate: 2023-05-08T10:00:00\nparticipants: [Mara, Ana]\n---\n\n"
        "[D1:1] Mara: Max the dog loves the beach near Kamakura.\n\n"
        "[D1:2] Ana: The Kyoto workshop moved to next Tuesday.\n")


def texts(db: Path) -> list[str]:
    # build_index keeps the index in parts in the folder db; session s1 is undated
    ix = SearchIndex(db / "undated.sqlite")
    try:
        return [t for (t,) in ix.conn.execute("SELECT text FROM chunks").fetchall()]
    finally:
        ix.close()


@pytest.mark.unit
def test_phrases_match_whole_words_only() -> None:
    phrases = request_phrases("---\ncreated: 2023-07-01\n---\n- Max\n# a comment\n\nKyoto workshop\n")
    assert phrases == ["max", "kyoto workshop"]
    assert forgotten_by("Max the dog.", phrases) == "max"
    assert forgotten_by("The maximum is 3.", phrases) is None
    assert forgotten_by("the KYOTO  workshop, moved", phrases) == "kyoto workshop"


def test_forget_request_removes_chunks_from_the_index(store: ObjectStore, tmp_path: Path, embedder) -> None:
    db = tmp_path / "index.sqlite"
    store.put("sessions/s1/transcript.md", TALK.encode())
    build_index(store, db, embedder)
    assert any("Max the dog" in t for t in texts(db))

    store.put("forget/2023-07-01-max.md", b"---\ncreated: 2023-07-01\n---\nMax\n")
    stats = build_index(store, db, embedder)
    assert stats["forgotten_chunks"] == 1
    left = texts(db)
    assert not any("Max" in t for t in left), left
    assert any("Kyoto workshop" in t for t in left)  # the rest of the session stays findable
    # Not in the whole-file search either, nor anywhere in the part's bytes (free pages,
    # FTS segments, the WAL: build_index closes it, which checkpoints).
    raw = b"".join(f.read_bytes() for f in db.glob("undated.sqlite*"))
    assert b"Kamakura" not in raw and b"kamakura" not in raw
    ix = SearchIndex(db / "undated.sqlite")
    try:
        assert ix.conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH 'kamakura'"
                               ).fetchall()[0][0] == 0
        assert ix.conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH 'kyoto'"
                               ).fetchall()[0][0] == 1
        assert not any(p.startswith("forget/") for p in ix.file_hashes())  # the log itself is not indexed
        assert ix.conn.execute("SELECT count(*) FROM chunks WHERE vec = 1").fetchall()[0][0] == len(left)
    finally:
        ix.close()

    # A session that grows with another mention does not bring it back.
    store.put("sessions/s1/transcript.md", (TALK + "\n[D1:3] Mara: Max also swims in the sea.\n").encode())
    build_index(store, db, embedder)
    assert not any("Max" in t for t in texts(db))
