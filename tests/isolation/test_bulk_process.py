"""Bulk batches are encoded in a child process at low OS priority: the vectors are those of
the in-process model, queries never depend on the child, and a child that dies or hangs is
replaced or fails the batch with a clear error, never a hang.

No timing: a query is shown to be independent by holding the bulk lane while it is served;
a hung child is a stopped (SIGSTOP) one, which never answers; a starved one is pinned to a
CPU beside a hog, with a timeout set from its own CPU need.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import numpy as np
import pytest

from app import schedstat
from app.embeddings import BulkEncoderError, BulkProcess, Embedder, _forward
from app.schedstat import NS, run_queue_waits_ns
from app.settings import Settings
from tests.isolation.test_encoder_priority import PASSAGES, QUERIES, wait_for
from tests.isolation.test_runnable_clock import (
    burner,
    cpu_ns,
    max_wait_ns,
    needs_schedstat,
    one_cpu,
    pin,
)

# these tests watch the bulk process encode: no passage may come from the suite's cache
pytestmark = pytest.mark.usefixtures("uncached_encoder")


@pytest.fixture(scope="module")
def bulk(embedder: Embedder) -> BulkProcess:
    assert embedder.bulk_process is not None, "the bulk process is the default"
    return embedder.bulk_process


def in_process(embedder: Embedder, texts: list[str]) -> np.ndarray[Any, Any]:
    """What the in-process encoder computes for ``texts``: the same batches, the API
    process's own model."""
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for group in embedder._bulk_batches(texts):
        out[group] = _forward(embedder._model, [texts[i] for i in group])
    return out


def test_bulk_vectors_are_those_of_the_in_process_model(
    embedder: Embedder, bulk: BulkProcess
) -> None:
    texts = [embedder.passage_prompt + p for p in PASSAGES]
    passes = embedder.forward_passes
    vectors = embedder.embed_passages(PASSAGES)
    assert bulk.alive(), "the bulk batches went to the child process"
    assert embedder.forward_passes - passes == len(embedder._bulk_batches(texts))
    # one torch thread in the child: summation order may differ in the last bit or so
    np.testing.assert_allclose(vectors, in_process(embedder, texts), rtol=0, atol=1e-6)
    # each passage got its own vector (not a neighbour's): nearest is itself
    sims = vectors @ in_process(embedder, texts).T
    assert list(sims.argmax(axis=1)) == list(range(len(PASSAGES)))


def test_the_bulk_process_runs_at_the_lowest_priority(
    embedder: Embedder, bulk: BulkProcess, settings: Settings
) -> None:
    embedder.embed_passages(PASSAGES[:1])
    assert bulk.pid is not None and bulk.pid != os.getpid()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    expected = min(19, ours + settings.embedding_bulk_nice)
    assert os.getpriority(os.PRIO_PROCESS, bulk.pid) == expected
    assert settings.embedding_bulk_nice == 19


def test_queries_are_served_while_bulk_work_waits(embedder: Embedder) -> None:
    """Queries go through the API process's model: with the bulk lane held, and even with
    the child killed, a query is answered."""
    reference = embedder.embed_passages(PASSAGES)
    results: dict[str, Any] = {}
    batches = len(embedder._bulk_batches(PASSAGES))
    with embedder.held("bulk"):
        thread = threading.Thread(
            target=lambda: results.update(bulk=embedder.embed_passages(PASSAGES))
        )
        thread.start()
        wait_for(lambda: embedder.pending()["bulk"] == batches, "the bulk batches to queue")
        query = embedder.embed_query(QUERIES[0])  # served although bulk work is held
        assert embedder.pending()["bulk"] == batches
        assert embedder.bulk_process is not None and embedder.bulk_process.pid is not None
        os.kill(embedder.bulk_process.pid, signal.SIGKILL)
        again = embedder.embed_query(QUERIES[0])
        np.testing.assert_array_equal(query, again)
    thread.join(timeout=600)
    # the bulk batches then went to a fresh child, with the same vectors
    np.testing.assert_allclose(results["bulk"], reference, rtol=0, atol=1e-6)


def test_a_killed_bulk_process_is_replaced(embedder: Embedder, bulk: BulkProcess) -> None:
    reference = embedder.embed_passages(PASSAGES[:3])
    pid, starts = bulk.pid, bulk.starts
    assert pid is not None
    bulk.crash()  # the child exits without answering, as a killed one would
    vectors = embedder.embed_passages(PASSAGES[:3])
    assert bulk.starts == starts + 1 and bulk.pid != pid
    np.testing.assert_allclose(vectors, reference, rtol=0, atol=1e-6)


def test_a_hung_bulk_process_is_stopped_and_replaced(
    embedder: Embedder, bulk: BulkProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = embedder.embed_passages(PASSAGES[:2])
    pid, starts, timeout = bulk.pid, bulk.starts, bulk.timeout_s
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # alive, but it will never answer
    # The short deadline is for the stopped child alone, which never answers however fast
    # the machine is; its replacement (nice 19, a fresh model) gets the usual one, so a busy
    # machine cannot make the test see a second replacement.
    start = bulk.start

    def start_with_usual_deadline() -> None:
        start()
        if bulk.starts > starts:
            bulk.timeout_s = timeout

    monkeypatch.setattr(bulk, "start", start_with_usual_deadline)
    bulk.timeout_s = 2.0
    try:
        vectors = embedder.embed_passages(PASSAGES[:2])
    finally:
        bulk.timeout_s = timeout
    assert bulk.starts == starts + 1 and bulk.pid != pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the stopped one was killed and reaped
    np.testing.assert_allclose(vectors, reference, rtol=0, atol=1e-6)


@needs_schedstat
def test_a_bulk_batch_starved_of_cpu_is_not_taken_for_hung(
    embedder: Embedder, bulk: BulkProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy host the child (nice 19) waits for a CPU most of the time: a batch that
    needs little CPU then takes far longer than that in wall-clock time. Here the child is
    pinned to one CPU beside a hog at our priority, and the timeout is well above the
    batch's CPU need but below the time it waits: the batch is answered, by the same
    child. (A stopped child waits for no CPU: the test above still sees it stopped.)"""
    texts = [embedder.passage_prompt + p for p in PASSAGES[:2]]
    reference = bulk.encode(texts)  # the child is up, the batch seen once
    pid, starts, timeout = bulk.pid, bulk.starts, bulk.timeout_s
    assert pid is not None
    before = cpu_ns(pid)
    bulk.encode(texts)
    need_s = (cpu_ns(pid) - before) / NS
    # room for the CPU it needs, twice, and for a wait the kernel counts only once the
    # child next gets the CPU (app/schedstat.py)
    starved_timeout = 2 * need_s + 3.0
    # the run-queue wait alone: the clock's floor (schedstat.MIN_RATE, a bound for a child
    # that spins while hung) would count a share of the wall clock that other load on the
    # pinned CPU, not the batch, decides (tests/isolation/test_runnable_clock.py has it)
    monkeypatch.setattr(schedstat, "MIN_RATE", 0.0)
    cpu, allowed = one_cpu(), os.sched_getaffinity(pid)
    with burner(cpu):
        pin(pid, {cpu})
        waits = run_queue_waits_ns(pid)
        bulk.timeout_s = starved_timeout
        try:
            vectors = bulk.encode(texts)
        finally:
            bulk.timeout_s = timeout
            waits_after = run_queue_waits_ns(pid)
            with suppress(OSError):  # on the old clock it was killed and replaced
                pin(pid, allowed)
    assert (bulk.pid, bulk.starts) == (pid, starts), "a starved child was taken for hung"
    np.testing.assert_allclose(vectors, reference, rtol=0, atol=1e-6)
    # the test did starve it: counted in wall-clock time, the batch ran past the timeout
    assert max_wait_ns(waits, waits_after) / NS > starved_timeout


@pytest.fixture
def broken_bulk(embedder: Embedder) -> Iterator[BulkProcess]:
    """A bulk process that cannot load its model."""
    original = embedder.bulk_process
    broken = BulkProcess("/nonexistent/model", "cpu", nice=19, threads=1, timeout_s=60)
    embedder.bulk_process = broken
    try:
        yield broken
    finally:
        embedder.bulk_process = original
        broken.close()


def test_bulk_work_fails_clearly_when_the_process_cannot_work(
    embedder: Embedder, broken_bulk: BulkProcess
) -> None:
    # One batch: with two, the bulk lane goes on to the second (another start) while this
    # thread wakes with the first one's error, and the count would race the lane thread.
    assert len(embedder._bulk_batches(PASSAGES[:1])) == 1
    with pytest.raises(BulkEncoderError, match="bulk encoder failed while loading the model"):
        embedder.embed_passages(PASSAGES[:1])
    assert broken_bulk.starts == 1, "a failure the child reports is not retried"
    # queries never needed it
    assert embedder.embed_query(QUERIES[1]).shape == (embedder.dimension,)
