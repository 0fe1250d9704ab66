"""Dense search through int8 codes (issue 17: a mount's memory) gives what the float32
vectors give: the same ids in the same order, scores within float32 rounding.

The reference is the search as it was before the codes: every stored float32 vector times
the query (one matrix product), best first, ties in stored order. Fixtures: random vectors
with duplicates (the bound's corner cases), an index of the sample memory filled by a hashed
bag of words (one file, and the same split into parts), and the same index filled by the
real model (ONNX int8, loaded offline) with recall's top 10 compared end to end.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search import int8vectors
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.int8vectors import exact_top, quantize
from brainfs.cache.search.localindex import is_indexable
from brainfs.cache.search.retrieval import retrieve
from brainfs.cache.search.sharded import ShardedIndex
from brainfs.cache.search.shardsync import split_index
from brainfs.tools.sample import generate

from helpers import BowEmbedder

QUESTIONS = ["which organizations did I meet in Kyoto", "who leads Quiet Routes",
             "what is the codename of the braille label printer", "where does Nadia live now",
             "budget for sign language interpretation", "consent form gift card amount",
             "what format do I prefer for figures", "when is the ethics amendment due",
             "dog", "Osaka"]
NOW = _dt.datetime(2026, 6, 1, tzinfo=_dt.timezone.utc)


def brute_force(mat: np.ndarray, q: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The float32 search: rows best first, ties in row order, and their scores."""
    sims = mat @ q
    order = np.argsort(-sims, kind="stable")[:n]
    return order, sims[order]


class Float32Index(SearchIndex):
    """The index with the float32 matrix search of before the int8 codes (the reference)."""

    def dense_search(self, qvec, n):
        ids, mat = stored(self)
        order, sims = brute_force(mat, np.asarray(qvec, dtype=np.float32), n)
        return [(int(ids[i]), float(s)) for i, s in zip(order, sims)]


def stored(ix: SearchIndex) -> tuple[np.ndarray, np.ndarray]:
    rows = ix.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return ids, mat


def refs(ix, hits) -> list[str]:
    rows = ix.chunks_by_id([c for c, _ in hits])
    return [f"{rows[c]['path']}#{rows[c]['anchor']}" for c, _ in hits]


def tie_groups(ix, hits) -> list[tuple[float, set[str]]]:
    """Hits as (score, the chunks of that score) best first, the last group left out (the
    cut at n may split it): rows of equal vectors tie, and ties are taken in the order of
    ids, which differ between one index and its parts."""
    groups: list[tuple[float, set[str]]] = []
    for (_, s), r in zip(hits, refs(ix, hits)):
        if groups and groups[-1][0] == s:
            groups[-1][1].add(r)
        else:
            groups.append((s, {r}))
    return groups[:-1]


def assert_same(got: list[tuple[int, float]], want: list[tuple[int, float]], ctx: object) -> None:
    assert [c for c, _ in got] == [c for c, _ in want], ctx
    assert np.allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-6), ctx


# ---------------------------------------------------------------------- the bound alone

@pytest.mark.parametrize("extra", [0, int8vectors.EXTRA])
def test_exact_top_is_the_float32_top(monkeypatch: pytest.MonkeyPatch, extra: int) -> None:
    """Random unit vectors, a tenth of them duplicated (exact ties), peaked ones (a large
    scale), a zero vector; queries unit and not; every n up to past the end. With EXTRA 0
    the candidates must grow several times before the bound lets go."""
    monkeypatch.setattr(int8vectors, "EXTRA", extra)
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((3000, 64)).astype(np.float32)
    mat[::50, 0] *= 40  # one dominant component: a coarse scale
    mat[2000:2300] = mat[100:400]  # duplicates: ties broken by row
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    mat[7] = 0.0
    vecs = quantize(np.arange(len(mat)) * 3, mat)
    assert vecs.codes.dtype == np.int8 and vecs.nbytes < mat.nbytes / 3
    calls = []

    def exact(rows: np.ndarray) -> np.ndarray:
        calls.append(len(rows))
        return mat[rows]

    for qi, scale in ((100, 1.0), (5, 1.0), (2100, 3.5), (7, 1.0)):
        q = (mat[qi] + 0.3 * mat[qi + 1]) * scale
        for n in (1, 10, 50, 299, 3000, 5000):
            calls.clear()
            rows, scores = exact_top(q, n, vecs.approx(q), vecs.slack, exact)
            want, sims = brute_force(mat, q, n)
            assert rows.tolist() == want.tolist(), (qi, n)
            assert np.allclose(scores, sims, rtol=0, atol=1e-6)
            if n <= 50:  # the point of the codes: few float32 vectors are read back
                assert sum(calls) < len(mat) // 10, (qi, n, calls)


def test_exact_top_drops_a_vector_removed_meanwhile() -> None:
    rng = np.random.default_rng(4)
    mat = rng.standard_normal((500, 32)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    vecs = quantize(np.arange(500), mat)
    q = mat[10]
    best = brute_force(mat, q, 5)[0]
    gone = mat.copy()
    gone[best[0]] = np.nan  # what exact_vectors gives for an id without a vector
    rows, _ = exact_top(q, 5, vecs.approx(q), vecs.slack, lambda r: gone[r])
    assert rows.tolist() == brute_force(np.delete(mat, best[0], 0), q, 5)[0].tolist() \
        or rows.tolist() == [r for r in brute_force(mat, q, 6)[0].tolist() if r != best[0]]


def test_bound_holds_for_every_row() -> None:
    """What the exactness rests on: |approximate − exact| ≤ slack · ‖q‖ for every row."""
    rng = np.random.default_rng(5)
    mat = rng.standard_normal((4000, 384)).astype(np.float32)
    mat[::7] = np.abs(mat[::7]) ** 3
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    vecs = quantize(np.arange(len(mat)), mat)
    for q in (mat[0], mat[1] * 2.5, rng.standard_normal(384).astype(np.float32)):
        err = np.abs(vecs.approx(q).astype(np.float64) - mat.astype(np.float64) @ q)
        assert (err <= vecs.slack * np.linalg.norm(q)).all()


# ---------------------------------------------------------------------- an index

class Bow(BowEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=384, name="test-bow-384", words=r"[a-z0-9]+")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample")
    generate(root, files=300, seed=7)
    return root


def build(tree: Path, db: Path, embedder, cls=SearchIndex) -> SearchIndex:
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    ix = SearchIndex(db)
    ix.refresh([(f, "x") for f in files if is_indexable(f)], lambda f: (tree / f).read_bytes(), embedder)
    ix.close()
    return cls(db)


def queries(ix: SearchIndex, embedder) -> np.ndarray:
    """The questions, and some stored chunks' own texts (a query equal to a stored vector)."""
    texts = [r[0] for r in ix.conn.execute("SELECT text FROM chunks ORDER BY id LIMIT 400")][::40]
    return embedder.embed(QUESTIONS + texts)


@pytest.fixture(scope="module")
def bow_index(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bow") / "whole.sqlite"
    build(tree, db, Bow()).close()
    return db


def test_index_answers_as_the_float32_matrix(bow_index: Path) -> None:
    emb = Bow()
    ix, ref = SearchIndex(bow_index), Float32Index(bow_index)
    try:
        ids, mat = stored(ref)
        codes = ix._vector_matrix()
        assert codes is not None and len(codes) == len(ids) > 2000
        assert codes.nbytes < 0.3 * mat.nbytes  # the memory the codes are for
        for i, q in enumerate(queries(ix, emb)):
            for n in (10, 50):
                assert_same(ix.dense_search(q, n), ref.dense_search(q, n), (i, n))
        some = ids[::97].tolist()
        got = ix.vectors(some)
        assert set(got) == set(some)
        assert all(np.array_equal(got[c], mat[ids.tolist().index(c)]) for c in some)
        # Whole files: the mean of each file's float32 vectors, as the matrix gave it.
        where = dict(ref.conn.execute("SELECT id, path FROM chunks WHERE vec = 1").fetchall())
        paths = sorted(set(where.values()))
        cent = np.zeros((len(paths), mat.shape[1]), dtype=np.float32)
        np.add.at(cent, [paths.index(where[int(c)]) for c in ids], mat)
        cent /= np.linalg.norm(cent, axis=1, keepdims=True)
        for q in queries(ix, emb)[:5]:
            sims = cent @ q
            top = np.argsort(-sims, kind="stable")[:20]
            want = [(paths[i], float(sims[i])) for i in top]
            got_files = ix.file_dense_scores(q, 20)
            assert [p for p, _ in got_files] == [p for p, _ in want]
            assert np.allclose([s for _, s in got_files], [s for _, s in want], atol=1e-6)
    finally:
        ix.close()
        ref.close()


def test_parts_answer_as_the_float32_matrix(bow_index: Path, tmp_path: Path) -> None:
    """The index split into parts: the exact top is taken over every part's codes at once."""
    emb = Bow()
    names = split_index(bow_index, tmp_path, period="month")
    assert len(names) > 6
    parts = ShardedIndex({n: SearchIndex(tmp_path / f"{n}.sqlite") for n in names})
    ref = Float32Index(bow_index)
    try:
        for i, q in enumerate(queries(ref, emb)):
            for n in (10, 50):
                got, want = parts.dense_search(q, n), ref.dense_search(q, n)
                a, b = tie_groups(parts, got), tie_groups(ref, want)
                assert [r for _, r in a] == [r for _, r in b], (i, n)
                assert np.allclose([s for s, _ in a], [s for s, _ in b], rtol=0, atol=1e-6)
    finally:
        parts.close()
        ref.close()


# ---------------------------------------------------------------------- the real model

@pytest.mark.model
def test_real_model_recall_top10_unchanged(tree: Path, tmp_path: Path) -> None:
    """The index filled by the installed model: dense top 10 and 50 and recall's top 10
    (ids and order) are the float32 search's."""
    from brainfs.cache.search.embedder import load_embedder

    emb = load_embedder(None)  # the default, as a mount loads it (.ci/setup installs it)
    small = tmp_path / "tree"
    for p in sorted(p for p in tree.rglob("*") if p.is_file())[::3]:  # a third of the sample
        (small / p.relative_to(tree)).parent.mkdir(parents=True, exist_ok=True)
        (small / p.relative_to(tree)).write_bytes(p.read_bytes())
    db = tmp_path / "model.sqlite"
    build(small, db, emb).close()
    ix, ref = SearchIndex(db), Float32Index(db)
    try:
        assert ix.stats()["vectors"] > 500
        for i, q in enumerate(queries(ix, emb)):
            for n in (10, 50):
                assert_same(ix.dense_search(q, n), ref.dense_search(q, n), (i, n))
        for question in QUESTIONS:
            a = retrieve(ix, question, k=10, embedder=emb, now=NOW)
            b = retrieve(ref, question, k=10, embedder=emb, now=NOW)
            assert a.mode == b.mode == "hybrid"
            assert [c.ref for c in a.cards] == [c.ref for c in b.cards], question
            assert np.allclose([c.score for c in a.cards], [c.score for c in b.cards], atol=1e-6)
    finally:
        ix.close()
        ref.close()


def test_float32_copy_leaves_no_file_and_follows_writes(tree: Path, tmp_path: Path) -> None:
    """The float32 rows behind the codes live in an unnamed temporary file (nothing left in
    the index's folder); after a write the codes and that copy are made again, and until
    then ``vectors`` reads the index file."""
    emb = Bow()
    small = tmp_path / "tree"
    for p in sorted(p for p in tree.rglob("*") if p.is_file())[:40]:
        (small / p.relative_to(tree)).parent.mkdir(parents=True, exist_ok=True)
        (small / p.relative_to(tree)).write_bytes(p.read_bytes())
    db = tmp_path / "ix" / "index.sqlite"
    build(small, db, emb).close()
    ix, ref = SearchIndex(db), Float32Index(db)
    try:
        before = sorted(p.name for p in db.parent.iterdir())
        ix.warm()
        assert ix._floats is not None and ix._floats.rows == ix.stats()["vectors"]
        assert sorted(p.name for p in db.parent.iterdir()) == before
        q = emb.embed([QUESTIONS[3]])[0]
        assert_same(ix.dense_search(q, 10), ref.dense_search(q, 10), "before")
        ids, mat = stored(ref)
        ix.upsert_file("notes/new.md", "h", "# Nadia\n\nNadia lives in Leeds now, near the station.\n", emb)
        got = ix.vectors(ids[:5].tolist())  # the codes are stale: read from the index file
        assert all(np.array_equal(got[int(c)], mat[i]) for i, c in enumerate(ids[:5]))
        hits = ix.dense_search(q, 10)
        assert_same(hits, ref.dense_search(q, 10), "after")
        assert "notes/new.md#" in refs(ix, hits)[0]
    finally:
        ix.close()
        ref.close()
    assert sorted(p.name for p in db.parent.iterdir() if not p.name.endswith(("-wal", "-shm"))) == ["index.sqlite"]
