"""Passage vectors a model has already encoded, reused by ingestion instead of encoding again.

The demo firm ships its texts' vectors for the default encoder (app/demo/vectors.py), and the
test suite caches the real model's (tests/known_vectors.py); both hand them to ingestion
through ``KnownVectors``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from app.embeddings import Embedder, Vector

log = logging.getLogger("ewall.embeddings")

KNOWN_MIN_COSINE = 0.999


class KnownVectors:
    """Passage vectors one model has already encoded, by the exact encoder input (its
    sha256): ingestion takes a chunk's vector from here instead of encoding it (the demo
    firm ships its own, app/demo/vectors.py). The first vector taken is checked against the
    live encoder; one that differs (other weights under the same model id) discards them
    all, so a stale set costs time, never a wrong vector. Vectors encoded meanwhile are
    added, so a later identical input is not encoded twice."""

    def __init__(self, model_id: str, vectors: dict[bytes, Vector] | None = None) -> None:
        self.model_id = model_id
        self.vectors: dict[bytes, Vector] = dict(vectors or {})
        self.checked = False
        self.taken = 0

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8")).digest()

    def take(self, embedder: Embedder, texts: Sequence[str]) -> list[Vector | None]:
        """The known vector of each input, None where it must be encoded."""
        if embedder.model_id != self.model_id or not self.vectors:
            return [None] * len(texts)
        found = [self.vectors.get(self.key(t)) for t in texts]
        first = next((i for i, v in enumerate(found) if v is not None), None)
        if first is not None and not self.checked:
            self.checked = True
            live = embedder.embed_passages([texts[first]])[0]
            stored = np.asarray(found[first], dtype=np.float32)
            cosine = (
                float(live @ stored) / float(np.linalg.norm(live) * np.linalg.norm(stored) or 1)
                if live.shape == stored.shape
                else 0.0
            )
            if cosine < KNOWN_MIN_COSINE:
                log.warning(
                    "known vectors differ from the live encoder's; encoding every input",
                    extra={"model": self.model_id, "cosine": round(cosine, 6)},
                )
                self.vectors = {}
                return [None] * len(texts)
        self.taken += sum(v is not None for v in found)
        return found

    def add(self, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        for text, vector in zip(texts, vectors, strict=True):
            self.vectors[self.key(text)] = np.asarray(vector, dtype=np.float32)
