"""The cache of vectors by text hash and model id (cache/search/embedcache.py), with the real ONNX
embedders, and through the index build that uses it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search.embedcache import (STALE_DAYS, CachedEmbedder, EmbeddingStore, text_key,
                                      with_cache)
from brainfs.cache.search.onnx_embedder import OnnxMiniLMEmbedder

pytestmark = pytest.mark.model

TEXTS = ["Nadia: I moved to Osaka in March.", "Assistant: Noted — Osaka since March.",
         "The QC spike threshold is 30 cm now, not 40.", "", "Nadia: I moved to Osaka in March."]


class Counting:
    """The real embedder, counting the texts it is asked for."""

    def __init__(self, inner: OnnxMiniLMEmbedder) -> None:
        self.inner, self.name, self.dim, self.model_id = inner, inner.name, inner.dim, inner.model_id
        self.asked: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def int8() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder("int8")


@pytest.fixture(scope="module")
def fp32() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder("fp32")


def test_hits_are_identical_to_fresh_vectors(tmp_path: Path, int8: OnnxMiniLMEmbedder) -> None:
    store = EmbeddingStore(tmp_path / "e.sqlite")
    inner = Counting(int8)
    cached = CachedEmbedder(inner, store)
    first = cached.embed(TEXTS)
    assert inner.asked == TEXTS[:4]  # the repeated text is embedded once
    assert cached.misses == 5 and cached.hits == 0
    again = CachedEmbedder(Counting(int8), EmbeddingStore(tmp_path / "e.sqlite"))  # new process
    second = again.embed(list(reversed(TEXTS)))
    assert again.inner.asked == [] and again.hits == 5
    assert np.array_equal(second[::-1], first)  # bit for bit
    assert np.array_equal(first, int8.embed(TEXTS))
    assert store.count(int8.model_id) == 4


def test_a_model_change_misses(tmp_path: Path, int8: OnnxMiniLMEmbedder,
                               fp32: OnnxMiniLMEmbedder) -> None:
    store = EmbeddingStore(tmp_path / "e.sqlite")
    v8 = CachedEmbedder(int8, store).embed(TEXTS[:3])
    other = Counting(fp32)
    v32 = CachedEmbedder(other, store).embed(TEXTS[:3])
    assert other.asked == TEXTS[:3]  # nothing served from int8's rows
    assert np.array_equal(v32, fp32.embed(TEXTS[:3]))
    assert not np.array_equal(v32, v8)
    assert store.count(int8.model_id) == 3 and store.count(fp32.model_id) == 3


def test_stale_models_are_dropped(tmp_path: Path, int8: OnnxMiniLMEmbedder) -> None:
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path)
    store.put_many("old-model", 384, [(text_key("a"), np.zeros(384, np.float32).tobytes())])
    store.put_many("recent-model", 384, [(text_key("a"), np.zeros(384, np.float32).tobytes())])
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE models SET used = ? WHERE model = 'old-model'",
                    (time.time() - (STALE_DAYS + 1) * 86400,))
    con.close()
    CachedEmbedder(int8, EmbeddingStore(path)).embed(["b"])
    assert store.count("old-model") == 0
    assert store.count("recent-model") == 1 and store.count(int8.model_id) == 1


def test_off_and_unidentified_embedders_pass_through(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, int8: OnnxMiniLMEmbedder) -> None:
    monkeypatch.setenv("BRAINFS_EMBED_CACHE", "off")
    assert with_cache(int8) is int8

    class NoId:
        name, dim = "x", 384

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), 384), np.float32)

    monkeypatch.setenv("BRAINFS_EMBED_CACHE", str(tmp_path / "e.sqlite"))
    plain = NoId()
    assert with_cache(plain) is plain  # no identity: caching could mix models
    assert isinstance(with_cache(int8), CachedEmbedder)


def test_a_corrupt_cache_file_costs_only_speed(tmp_path: Path, int8: OnnxMiniLMEmbedder,
                                               caplog: pytest.LogCaptureFixture) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with caplog.at_level("WARNING"):
        got = with_cache(int8, bad)
        vecs = got.embed(TEXTS)
    assert np.array_equal(vecs, int8.embed(TEXTS))
    assert "embedding cache" in caplog.text and str(bad) in caplog.text
    assert bad.read_bytes().startswith(b"this is not a database")  # left as it was


def test_index_build_embeds_only_new_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            int8: OnnxMiniLMEmbedder) -> None:
    """A transcript grows by two turns: the rebuild, even of a fresh index (a dream work
    directory), embeds only the chunks whose text is new, and stores the same vectors."""
    from brainfs.cache.search.index import SearchIndex

    monkeypatch.setenv("BRAINFS_EMBED_CACHE", str(tmp_path / "emb.sqlite"))
    head = ("---\ntitle: Planning\ndate: 2026-05-04\n---\n# Planning\n\n"
            + "".join(f"[D1:{i}] {'Nadia' if i % 2 else 'Assistant'}: turn {i} about the "
                      f"Osaka study, item {i * 7}.\n\n" for i in range(1, 21)))
    grown = head + "[D1:21] Nadia: And the deadline moved to July.\n\n[D1:22] Assistant: July it is.\n\n"
    files = {"sessions/s1/transcript.md": head, "notes/a.md": "# A\n\nNadia prefers SVG figures.\n"}
    first = Counting(int8)
    with SearchIndex(tmp_path / "one.sqlite") as idx:
        st1 = idx.refresh([(p, str(hash(t))) for p, t in files.items()],
                          lambda p: files[p].encode(), first)
        n1 = st1["chunks"]
    assert len(first.asked) == n1 > 10 and st1["embed_cache_hits"] == 0

    files["sessions/s1/transcript.md"] = grown
    second = Counting(int8)
    with SearchIndex(tmp_path / "two.sqlite") as idx:  # from scratch
        st2 = idx.refresh([(p, str(hash(t))) for p, t in files.items()],
                          lambda p: files[p].encode(), second)
        rows = idx.conn.execute("SELECT c.text, v.embedding FROM chunks c "
                                "JOIN chunks_vec v ON v.rowid = c.id").fetchall()
    assert st2["chunks"] == n1 + 2
    assert len(second.asked) == 2 and "July" in second.asked[0]
    assert st2["embed_cache_hits"] == n1
    # The same vectors as a build without the cache.
    monkeypatch.setenv("BRAINFS_EMBED_CACHE", "off")
    with SearchIndex(tmp_path / "three.sqlite") as idx:
        idx.refresh([(p, str(hash(t))) for p, t in files.items()], lambda p: files[p].encode(), int8)
        plain = dict(idx.conn.execute("SELECT c.text, v.embedding FROM chunks c "
                                      "JOIN chunks_vec v ON v.rowid = c.id").fetchall())
    assert len(rows) == len(plain) == n1 + 2
    # Bit for bit: int8 embeds one text per pass, so a vector never depends on the texts
    # built with it (fp32 batches, and its vectors vary in the last bits with the batch).
    assert all(plain[text] == emb for text, emb in rows)
