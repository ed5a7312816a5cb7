"""The demo firm's passage vectors for the default encoder, shipped in the package.

Every machine that loads the demo encodes the same public texts with the same model: on two
CPU cores that was most of a first `make run` (minutes). ``data/vectors.npz`` holds the
vector of every encoder input a demo load produces with the default encoder, by its sha256,
for both case-law selections (the shared corpus's starter set and the packaged sample). The
load takes them through ``KnownVectors`` (app/known_vectors.py): the first one is checked
against the live encoder, an input not in the file (changed chunking, other documents) is
encoded as before, and another encoder uses none of them.

Rebuild after changing the demo data, chunking or the encoder input: ``make demo-vectors``
(app/demo/build_vectors.py: it loads the demo twice into throwaway embedded databases).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.embeddings import Embedder
from app.known_vectors import KnownVectors

FILE = Path(__file__).parent / "data" / "vectors.npz"


def load(embedder: Embedder, path: Path = FILE) -> KnownVectors | None:
    """The shipped vectors when they are this encoder's (by model id), else None."""
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as data:
        model_id = str(data["model_id"])
        if model_id != embedder.model_id:
            return None
        keys, vectors = data["keys"], data["vectors"].astype(np.float32)
    return KnownVectors(model_id, {k.tobytes(): v for k, v in zip(keys, vectors, strict=True)})


def save(known: KnownVectors, path: Path = FILE) -> None:
    """Float16 halves the file; the cosine to the float32 vector stays above 0.99999. The
    keys are rows of 32 bytes (numpy's fixed-width bytes type would drop a digest's trailing
    zero bytes)."""
    keys = sorted(known.vectors)
    np.savez(
        path,
        model_id=np.array(known.model_id),
        keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32),
        vectors=np.stack([known.vectors[k] for k in keys]).astype(np.float16),
    )
