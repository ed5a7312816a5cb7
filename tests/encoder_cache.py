"""The suite's encoder with its passage vectors kept by exact input, for the session.

Most test modules build a small firm per test, and many tests ingest the same texts again
(a module's fixture firm, the gates' returned chunks): on two cores the bulk process spent
more time re-encoding them than the tests spent on anything else (py-spy over
tests/search/test_search_api.py: 55 % of the samples, issue 27). ``CachedPassages`` is the
real model (no stand-in: every vector it hands out is one the model computed for exactly
that input, prompt included) that encodes each distinct passage input once per test
process. Its request counters stay what the uncached encoder would show (a request served
from the cache counts as the request and the texts it asked for), so tests that assert
"nothing was re-embedded" or "one more text was encoded" read the same.

Tests that watch the encoder's own machinery (the bulk process, its lanes and queues, the
forward passes) must see every passage go through it: they use the ``uncached_encoder``
fixture (tests/conftest.py), as tests/isolation/test_bulk_process.py and the gate's
concurrency test in tests/gates/test_limits.py do.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from app.embeddings import Embedder, Priority
from app.settings import Settings


class CachedPassages(Embedder):
    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.cache_passages = True
        self.cache_hits = 0
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._vectors_lock = threading.Lock()

    def embed_passages(
        self, texts: Sequence[str], *, priority: Priority = "bulk"
    ) -> npt.NDArray[np.float32]:
        if not self.cache_passages or not texts:
            return super().embed_passages(texts, priority=priority)
        keys = [self.passage_prompt + t for t in texts]
        with self._vectors_lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if missing:
            prompt = len(self.passage_prompt)
            fresh = super().embed_passages([k[prompt:] for k in missing], priority=priority)
            with self._vectors_lock:
                self._vectors.update(zip(missing, fresh, strict=True))
        with self._ready:  # the counters of the request as the uncached encoder keeps them
            if not missing:
                self.encode_calls += 1
            self.encoded_texts += len(keys) - len(missing)
            self.cache_hits += len(keys) - len(missing)
        with self._vectors_lock:
            return np.stack([self._vectors[k] for k in keys]).astype(np.float32, copy=False)
