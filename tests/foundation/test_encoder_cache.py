"""The suite's passage cache (tests/encoder_cache.py) hands out the model's own vectors and
keeps the request counters that tests read exactly as the uncached encoder keeps them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.encoder_cache import CachedPassages

TEXTS = [
    "De huurder vordert ontbinding van de huurovereenkomst wegens gebreken.",
    "Het hof bekrachtigt het vonnis van de rechtbank.",
    "De huurder vordert ontbinding van de huurovereenkomst wegens gebreken.",  # again
]


def _counters(embedder: CachedPassages) -> tuple[int, int]:
    return embedder.encode_calls, embedder.encoded_texts


def test_cached_vectors_are_the_models_and_the_counters_read_as_without_the_cache(
    embedder: CachedPassages, uncached_encoder: CachedPassages
) -> None:
    calls, texts = _counters(embedder)
    reference = embedder.embed_passages(TEXTS)  # uncached: through the bulk process
    assert _counters(embedder) == (calls + 1, texts + 3)
    embedder.cache_passages = True  # what every other test of the session gets
    hits = embedder.cache_hits
    first = embedder.embed_passages(TEXTS)  # fills the cache (one request, 3 texts)
    second = embedder.embed_passages(TEXTS[1:])  # served from it
    assert embedder.cache_hits - hits == 1 + 2  # the repeat within the first, then both
    assert _counters(embedder) == (calls + 3, texts + 3 + 3 + 2)
    np.testing.assert_allclose(first, reference, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(second, first[1:])
    np.testing.assert_array_equal(first[0], first[2])


@pytest.mark.usefixtures("uncached_encoder")
def test_uncached_passages_go_through_the_encoder(embedder: CachedPassages) -> None:
    embedder.embed_passages(TEXTS[:1])
    passes, hits = embedder.forward_passes, embedder.cache_hits
    embedder.embed_passages(TEXTS[:1])
    assert embedder.forward_passes == passes + 1 and embedder.cache_hits == hits
