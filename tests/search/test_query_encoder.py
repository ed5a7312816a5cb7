"""The ONNX query encoder: the same vectors as torch, exported once, atomically, reused, keyed
by the weights, and a fallback to torch that never stops the service from starting.

The test session exports into a temporary folder (tests/conftest.py, ENCODER_CACHE); the
session's Embedder already did, so these tests reuse that export rather than make another.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import torch

from app import onnx_encoder
from app.embeddings import Embedder, _forward
from app.onnx_encoder import (
    MANIFEST,
    MODEL_FILE,
    OnnxQueryEncoder,
    cache_root,
    complete,
    ensure_export,
    export_key,
    load_query_encoder,
    model_hash,
)
from app.settings import Settings
from tests.conftest import make_settings

EVAL_DATA = Path(__file__).resolve().parents[2] / "app" / "evaluation" / "data"

# measured on the 100 questions of the two Dutch evaluation sets (docs/latency.md)
FP32_MIN_COSINE = 0.999
INT8_MIN_COSINE = 0.98


def dutch_questions() -> list[str]:
    """The evaluation sets' questions: real Dutch questions over the shared corpus."""
    texts = []
    for name in ("corpus_nl.jsonl", "corpus_nl_heldout.jsonl"):
        for line in (EVAL_DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "text" in row:
                texts.append(str(row["text"]))
    assert len(texts) >= 50
    # every fourth: 25 questions of every type, short and long, keep the session quick
    return texts[::4]


def cosines(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    na = a / np.linalg.norm(a, axis=1, keepdims=True)
    nb = b / np.linalg.norm(b, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (na * nb).sum(axis=1)
    return out


@pytest.fixture(scope="module")
def questions() -> list[str]:
    return dutch_questions()


@pytest.fixture(scope="module")
def torch_vectors(embedder: Embedder, questions: list[str]) -> npt.NDArray[np.float32]:
    """What the torch model gives for the questions (the reference), in one pass."""
    return _forward(embedder._model, questions)


def test_the_default_encodes_queries_with_onnx_and_gives_the_torch_vectors(
    embedder: Embedder, questions: list[str], torch_vectors: npt.NDArray[np.float32]
) -> None:
    assert Settings.model_fields["query_encoder_backend"].default == "onnx"
    assert embedder.query_backend == "onnx"
    assert embedder.query_encoder is not None
    before = embedder.forward_passes
    single = np.vstack([embedder.embed_query(q) for q in questions[:20]])
    assert embedder.forward_passes > before
    assert cosines(single, torch_vectors[:20]).min() >= FP32_MIN_COSINE
    # a micro-batch pads the short questions to the longest one: still the same vectors
    batch = embedder.embed_queries(questions)
    assert cosines(batch, torch_vectors).min() >= FP32_MIN_COSINE
    assert np.abs(batch - torch_vectors).max() < 1e-4


def test_int8_vectors_stay_close(
    embedder: Embedder, questions: list[str], torch_vectors: npt.NDArray[np.float32]
) -> None:
    settings = make_settings()
    folder = ensure_export(embedder._model, embedder.name, "onnx-int8", cache_root(settings))
    encoder = OnnxQueryEncoder(embedder._model, folder, "onnx-int8", threads=1)
    vectors = encoder.encode(questions)
    similarity = cosines(vectors, torch_vectors)
    assert similarity.min() >= INT8_MIN_COSINE
    # and it is a different model file: quantised, about a quarter of the size
    fp32 = ensure_export(embedder._model, embedder.name, "onnx", cache_root(settings))
    assert (folder / MODEL_FILE).stat().st_size < (fp32 / MODEL_FILE).stat().st_size / 2


def test_an_export_is_reused_not_made_again(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = cache_root(make_settings())
    first = ensure_export(embedder._model, embedder.name, "onnx", root)
    stamp = (first / MODEL_FILE).stat().st_mtime_ns

    def no_export(*_: Any) -> None:
        raise AssertionError("exported again although a complete export exists")

    monkeypatch.setattr(onnx_encoder, "_export_fp32", no_export)
    again = ensure_export(embedder._model, embedder.name, "onnx", root)
    assert again == first
    assert (again / MODEL_FILE).stat().st_mtime_ns == stamp


def test_a_half_written_export_is_never_loaded(embedder: Embedder, tmp_path: Path) -> None:
    source = ensure_export(embedder._model, embedder.name, "onnx", cache_root(make_settings()))
    key = source.name
    # a process died while writing: the file is cut short, the manifest still names the whole
    damaged = tmp_path / key
    damaged.mkdir()
    (damaged / MANIFEST).write_bytes((source / MANIFEST).read_bytes())
    (damaged / MODEL_FILE).write_bytes((source / MODEL_FILE).read_bytes()[:100_000])
    # and an export that never got as far as its manifest, in a temporary folder
    leftover = tmp_path / f".{key}.abc123"
    leftover.mkdir()
    (leftover / MODEL_FILE).write_bytes(b"\0" * 1000)
    assert not complete(damaged)
    assert not complete(leftover)

    folder = ensure_export(embedder._model, embedder.name, "onnx", tmp_path)
    assert folder == damaged
    assert complete(folder)
    assert (folder / MODEL_FILE).read_bytes() == (source / MODEL_FILE).read_bytes()
    # the damaged one is kept aside, not deleted and not loaded
    kept = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(kept) == 1
    assert (kept[0] / MODEL_FILE).stat().st_size == 100_000
    encoder = OnnxQueryEncoder(embedder._model, folder, "onnx", threads=1)
    text = "huurachterstand ontruiming"
    assert cosines(encoder.encode([text]), _forward(embedder._model, [text]))[0] >= 0.999


def test_the_key_changes_with_the_weights(embedder: Embedder) -> None:
    before = model_hash(embedder._model)
    weight = embedder._model[0].auto_model.embeddings.word_embeddings.weight
    with torch.no_grad():
        old = float(weight[1000, 0])
        weight[1000, 0] += 0.5
        try:
            changed = model_hash(embedder._model)
        finally:
            weight[1000, 0] = old
    assert changed != before
    assert model_hash(embedder._model) == before
    assert export_key(embedder.name, "onnx", changed) != export_key(embedder.name, "onnx", before)
    assert export_key(embedder.name, "onnx", before) != export_key(
        embedder.name, "onnx-int8", before
    )


def test_a_failed_export_falls_back_to_torch(
    embedder: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    settings = make_settings(query_encoder_cache_dir=blocked, embedding_bulk_process=False)
    with caplog.at_level(logging.WARNING, logger="ewall.embeddings"):
        fallback = Embedder(settings)
    try:
        assert fallback.query_backend == "torch"
        assert fallback.query_encoder is None
        assert any("using torch" in r.getMessage() for r in caplog.records)
        text = "inbreuk octrooi retard-tablet"
        vector = fallback.embed_query(text)
        assert cosines(vector[None], _forward(embedder._model, [text]))[0] >= 0.9999
    finally:
        fallback.close()


def test_a_missing_onnxruntime_falls_back_to_torch(
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    settings = make_settings(query_encoder_cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="ewall.embeddings"):
        assert load_query_encoder(embedder._model, settings, threads=1) is None
    assert any("onnxruntime is not installed" in r.getMessage() for r in caplog.records)
    assert list(tmp_path.iterdir()) == []


def test_torch_stays_selectable(embedder: Embedder) -> None:
    settings = make_settings(query_encoder_backend="torch")
    assert load_query_encoder(embedder._model, settings, threads=1) is None
