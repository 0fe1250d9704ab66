"""The ONNX export's second layout (issue 17, a mount's memory): the weights in a file of
their own, which onnxruntime maps instead of copying. The embedder loads it when the export
lists it and gives bitwise the vectors of the file with its weights inside; an export made
before that layout gets it from the next ``onnx_export`` run without running torch again.

Uses the export ``.ci/setup`` made in the venv (the real model, offline).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from brainfs.cache.search import onnx_export
from brainfs.cache.search.onnx_embedder import (MANIFEST, VARIANT_FILES, OnnxMiniLMEmbedder,
                                                default_onnx_dir, external_names)

pytestmark = pytest.mark.model

TEXTS = ["where does Nadia live now", "the crosswalk sensor prototype and its budget for 2025",
         "word " * 300, "dog", "Ana: we met at the Kyoto accessibility meetup, remember?"]


@pytest.fixture(scope="module")
def export_dir() -> Path:
    d = default_onnx_dir()
    # .ci/setup exports it: a missing or old export is a failed install, not a reason to skip.
    if not (d / MANIFEST).is_file():  # pragma: no cover
        pytest.fail(f"no ONNX export in {d} (run .ci/setup)")
    man = json.loads((d / MANIFEST).read_text())
    if not man["files"]["int8"].get("external"):  # pragma: no cover
        pytest.fail(f"the export in {d} predates the external layout (run .ci/setup)")
    return d


def inline_only(src: Path, dest: Path) -> Path:
    """An export as made before the external layout: the inline files (linked) and a
    manifest without ``external``."""
    dest.mkdir()
    man = json.loads((src / MANIFEST).read_text())
    for entry in man["files"].values():
        entry.pop("external", None)
        (dest / entry["file"]).symlink_to(src / entry["file"])
    (dest / MANIFEST).write_text(json.dumps(man))
    return dest


def test_external_layout_gives_the_same_vectors(export_dir: Path, tmp_path: Path) -> None:
    for variant in ("int8", "fp32"):
        mapped = OnnxMiniLMEmbedder(variant, onnx_dir=export_dir)
        inline = OnnxMiniLMEmbedder(variant, onnx_dir=inline_only(export_dir, tmp_path / variant))
        assert mapped.path.name == external_names(variant)[0]
        assert inline.path.name == VARIANT_FILES[variant]
        assert mapped.model_id == inline.model_id  # the embedding cache stays valid
        assert np.array_equal(mapped.embed(TEXTS), inline.embed(TEXTS)), variant


def test_a_missing_weights_file_falls_back_to_the_inline_file(export_dir: Path, tmp_path: Path) -> None:
    d = inline_only(export_dir, tmp_path / "x")
    man = json.loads((export_dir / MANIFEST).read_text())
    (d / MANIFEST).write_text(json.dumps(man))  # lists the layout, whose files are absent
    emb = OnnxMiniLMEmbedder("int8", onnx_dir=d)
    assert emb.path.name == VARIANT_FILES["int8"]
    graph, data = external_names("int8")
    (d / graph).symlink_to(export_dir / graph)
    (d / data).write_bytes(b"")  # truncated weights: onnxruntime refuses the layout
    emb = OnnxMiniLMEmbedder("int8", onnx_dir=d)
    assert emb.path.name == VARIANT_FILES["int8"]
    assert emb.embed(["dog"]).shape == (1, 384)


def test_an_older_export_gets_the_layout_without_torch(export_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    d = inline_only(export_dir, tmp_path / "old")
    model_dir = onnx_export.minilm_model_dir()
    assert not onnx_export.is_current(d, model_dir)

    def no_torch(*_a: object) -> None:
        raise AssertionError("the inline files are current: nothing to export again")

    monkeypatch.setattr(onnx_export, "_export_fp32", no_torch)
    man = onnx_export.export(d)
    assert onnx_export.is_current(d, model_dir)
    for variant in VARIANT_FILES:
        graph, data = external_names(variant)
        assert man["files"][variant]["external"]["file"] == graph
        assert (d / data).stat().st_mode & 0o044 == 0o044  # readable by every user's mount
        assert (d / VARIANT_FILES[variant]).is_symlink()  # the inline file untouched
    emb = OnnxMiniLMEmbedder("int8", onnx_dir=d)
    assert emb.path.name == external_names("int8")[0]
    assert np.array_equal(emb.embed(TEXTS), OnnxMiniLMEmbedder("int8", onnx_dir=export_dir).embed(TEXTS))
    shutil.rmtree(d)
