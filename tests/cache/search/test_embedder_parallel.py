"""int8 passes run side by side (one session, one Python thread per pass) give the vectors
of one pass at a time, bit for bit, and a pass that fails stops the call with a clear
error instead of hanging it or returning a half-filled result.

The model is the real int8 export (loaded offline); the only fake is a thin wrapper
around its session that raises on one call, to make a worker fail.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from brainfs.cache.search.onnx_embedder import EmbeddingFailed, OnnxMiniLMEmbedder

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """48 chunks of the demo sample as the index gives them, short and long (some cut at
    256 word pieces), plus an empty one and a query."""
    from brainfs.cache.search.chunker import chunk_file, decode, embed_texts
    from brainfs.tools.sample import generate

    root = tmp_path_factory.mktemp("sample") / "tree"
    generate(root, files=60, seed=7)
    out: list[str] = []
    for p in sorted(root.rglob("*.md")):
        out += embed_texts(chunk_file(str(p.relative_to(root)), decode(p.read_bytes())))
    step = max(1, len(out) // 48)
    return out[::step][:48] + ["", "where does Nadia work?"]


def test_parallel_passes_equal_one_at_a_time_bit_for_bit(texts: list[str]) -> None:
    serial = OnnxMiniLMEmbedder("int8", workers=1, threads=1)
    before = OnnxMiniLMEmbedder("int8", workers=1, threads=2)  # as int8 ran before this path
    parallel = OnnxMiniLMEmbedder("int8", workers=3)  # more workers than CPUs: still concurrent
    assert parallel.threads == 1 and parallel.workers == 3
    lengths = parallel.word_pieces(texts)
    assert max(lengths) == 256 and min(lengths) <= 16  # long (truncated) and short texts

    ref = serial.embed(texts)
    assert ref.shape == (len(texts), 384)
    np.testing.assert_array_equal(before.embed(texts), ref)
    for _ in range(2):  # the order workers take texts in varies from run to run
        np.testing.assert_array_equal(parallel.embed(texts), ref)
    # A text's row is its own: alone, or in a call with other texts around it.
    np.testing.assert_array_equal(parallel.embed([texts[5]]), ref[5:6])
    np.testing.assert_array_equal(parallel.embed(texts[::-1]), ref[::-1])
    assert parallel.model_id == serial.model_id  # the cache may mix them: same vectors


class _FailingSession:
    """The real session, except that the calls ``fail`` picks raise ``error``."""

    def __init__(self, real: object, fail: object, error: type[BaseException] = RuntimeError) -> None:
        self.real, self.fail, self.error, self.calls = real, fail, error, 0
        self.lock = threading.Lock()

    def run(self, names: object, feed: dict) -> list:
        with self.lock:
            self.calls += 1
            n = self.calls
        if self.fail(n):
            raise self.error("simulated onnxruntime failure")
        return self.real.run(names, feed)


def _embed_in_thread(emb: OnnxMiniLMEmbedder, texts: list[str]) -> BaseException | None:
    """``emb.embed(texts)`` in a thread; its exception. The join's generous timeout only
    turns a hang (the failure this test guards against) into a failed assertion."""
    box: list[BaseException | None] = []

    def run() -> None:
        try:
            emb.embed(texts)
            box.append(None)
        except BaseException as e:  # noqa: BLE001 - examined by the test
            box.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=600)
    assert not t.is_alive(), "embed hung after a worker failed"
    return box[0]


@pytest.mark.parametrize("where", ["background worker", "calling thread"])
def test_a_failing_pass_is_a_clear_error(texts: list[str], where: str) -> None:
    emb = OnnxMiniLMEmbedder("int8", workers=2)
    real = emb._session
    caller: list[threading.Thread] = []

    def fail(n: int) -> bool:
        me = threading.current_thread()
        if where == "background worker":
            return me.name.startswith("brainfs-embed-") and n >= 3
        return bool(caller) and me is caller[0] and n >= 3

    emb._session = _FailingSession(real, fail)

    def call() -> BaseException | None:
        caller.append(threading.current_thread())
        try:
            emb.embed(texts)
        except BaseException as e:  # noqa: BLE001 - examined by the test
            return e
        return None

    box: list[BaseException | None] = []
    t = threading.Thread(target=lambda: box.append(call()), daemon=True)
    t.start()
    t.join(timeout=600)
    assert not t.is_alive(), "embed hung after a worker failed"
    err = box[0]
    assert isinstance(err, EmbeddingFailed), err
    assert "simulated onnxruntime failure" in str(err) and f"of {len(texts)}" in str(err)
    assert isinstance(err.__cause__, RuntimeError)
    # Stopped early: the other worker took at most the text it held when the failure
    # happened, not the rest of the call.
    assert emb._session.calls < len(texts)
    # Nothing is left locked or running: the embedder works again once the session does.
    emb._session = real
    assert _embed_in_thread(emb, texts[:6]) is None
    assert not [th for th in threading.enumerate() if th.name.startswith("brainfs-embed-")]


def test_an_interrupt_in_the_calling_thread_goes_up_as_is(texts: list[str]) -> None:
    """Ctrl-C during ``brainfs index`` must stop the build, not become an embedding error
    that the index logs and carries on past."""
    emb = OnnxMiniLMEmbedder("int8", workers=2)
    real = emb._session
    caller: list[threading.Thread] = []
    emb._session = _FailingSession(real, lambda n: bool(caller) and n >= 3
                                   and threading.current_thread() is caller[0],
                                   error=KeyboardInterrupt)
    box: list[BaseException | None] = []

    def call() -> None:
        caller.append(threading.current_thread())
        try:
            emb.embed(texts)
            box.append(None)
        except BaseException as e:  # noqa: BLE001 - examined by the test
            box.append(e)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(timeout=600)
    assert not t.is_alive(), "embed hung after an interrupt"
    assert type(box[0]) is KeyboardInterrupt
    assert emb._session.calls < len(texts)  # the other worker stopped too
    assert not [th for th in threading.enumerate() if th.name.startswith("brainfs-embed-")]
