"""The passages of a chunk, with their vectors: the grain at which the grounding gate looks.

A chunk of case law holds ten or more sentences on several points; one vector for all of it
is near every sentence about the case and near none in particular. A sentence of an answer
is compared instead with each sentence of the returned chunks and each window of two or
three consecutive ones (a sentence of the answer may join two of the source).

Only the chunk's own sentences are encoded (with the encoder's passage side, as are the
answer's sentences: both are statements, compared symmetrically); a window's vector is the
normalised sum of its sentences' vectors. Passages depend only on a chunk's content and the
encoder, so they are cached per (model id, content hash) in a bounded LRU: the chunks of a
retrieval are encoded once, however often its answers are checked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.gates.evidence import (
    FactIndex,
    content_stems,
    extract_facts,
    index_facts,
    proper_names,
)
from app.gates.negation import negation_words
from app.gates.sentences import split_sentences

Matrix = npt.NDArray[np.float32]
Encode = Callable[[list[str]], Matrix]

WINDOWS = (1, 2, 3)  # sentences per passage
MAX_PASSAGE_SENTENCES = 400  # a pathological chunk: its later sentences are not windowed


@dataclass(frozen=True)
class ChunkPassages:
    """A chunk's passages in order, with what the gate compares of each."""

    texts: list[str]
    stems: list[frozenset[str]]
    words: list[tuple[str, ...]]
    facts: list[FactIndex]
    vectors: Matrix  # one normalised row per passage
    names: frozenset[str] = frozenset()  # its proper names (evidence.proper_names)


def passage_spans(sentences: Sequence[str]) -> list[tuple[int, int]]:
    """(first, end) sentence indices of every passage: each sentence, then the windows."""
    n = min(len(sentences), MAX_PASSAGE_SENTENCES)
    return [(i, i + size) for size in WINDOWS for i in range(n - size + 1)]


def normalized(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = np.asarray(rows / norms, dtype=np.float32)
    return out


def chunk_sentences(body: str) -> list[str]:
    """The sentences of a chunk that passages are made of."""
    return (split_sentences(body) or [body])[:MAX_PASSAGE_SENTENCES]


def build_passages(sentences: Sequence[str], sentence_vectors: Matrix) -> ChunkPassages:
    """A chunk's passages from its sentences and their vectors (one row each)."""
    spans = passage_spans(sentences)
    sentence_vectors = normalized(sentence_vectors)
    texts = [" ".join(sentences[a:b]) for a, b in spans]
    vectors = normalized(np.vstack([sentence_vectors[a:b].sum(axis=0) for a, b in spans]))
    facts = [extract_facts(t, skip_first_word=False) for t in texts]
    return ChunkPassages(
        texts=texts,
        stems=[frozenset(content_stems(t, f)) for t, f in zip(texts, facts, strict=True)],
        words=[tuple(negation_words(t)) for t in texts],
        facts=[index_facts(t, f) for t, f in zip(texts, facts, strict=True)],
        vectors=vectors,
        names=proper_names(sentences),
    )


class PassageCache:
    """Bounded LRU of chunk passages by (model id, content hash); thread-safe. Two threads
    missing the same chunk may both build it: the result is the same."""

    def __init__(self, max_chunks: int = 4096) -> None:
        self.max_chunks = max_chunks
        self._items: OrderedDict[tuple[str, str], ChunkPassages] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, model_id: str, content_sha256: str) -> ChunkPassages | None:
        with self._lock:
            found = self._items.get((model_id, content_sha256))
            if found is not None:
                self._items.move_to_end((model_id, content_sha256))
                self.hits += 1
            else:
                self.misses += 1
            return found

    def put(self, model_id: str, content_sha256: str, passages: ChunkPassages) -> None:
        with self._lock:
            self._items[(model_id, content_sha256)] = passages
            self._items.move_to_end((model_id, content_sha256))
            while len(self._items) > self.max_chunks:
                self._items.popitem(last=False)

    def passages(
        self, model_id: str, chunks: Sequence[tuple[str, str]], encode: Encode
    ) -> list[ChunkPassages]:
        """The passages of ``chunks`` ((content hash, body) pairs), the missing ones built
        with ONE encoder call for all their sentences."""
        out: list[ChunkPassages | None] = [self.get(model_id, sha) for sha, _ in chunks]
        missing = [i for i, found in enumerate(out) if found is None]
        if missing:
            split = {i: chunk_sentences(chunks[i][1]) for i in missing}
            vectors = encode([s for i in missing for s in split[i]])
            start = 0
            for i in missing:
                count = len(split[i])
                built = build_passages(split[i], vectors[start : start + count])
                start += count
                self.put(model_id, chunks[i][0], built)
                out[i] = built
        return [p for p in out if p is not None]
