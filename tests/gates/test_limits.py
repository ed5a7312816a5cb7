"""Per-person limits on the gates (429 rate_limited with Retry-After, in the envelope),
the per-call caps, ECLI dedup and the cap on distinct ECLIs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.errors import RateLimited
from app.gates import grounding
from app.gates.judge import Calibration
from app.limits import SEARCH_SLOT_LEASE_S, SLOT_LEASE_S, PersonLimiter
from tests.conftest import DbHandle, Tokens
from tests.fakes.rechtspraak import FakeRechtspraak
from tests.gates.conftest import GateClient
from tests.gates.test_citations import live_eclis
from tests.gates.test_grounding import (
    ALICE,
    BOB,
    NOT_RETURNED,
    RETURNED,
    ground,
    insert_chunks,
    record_retrieval,
)
from tests.helpers import ok

ANSWER = (
    "De werkgever is aansprakelijk voor de schade van de werknemer. De termijn voor hoger "
    "beroep is drie maanden. Het weer was zonnig. De markt was druk."
)  # four sentences


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait on a condition (the deadline only turns a hang into a failure)."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def assert_rate_limited(response: Any, scope: str) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    error = response.json()["error"]
    assert error["code"] == "rate_limited" and error["message"]
    assert error["details"]["scope"] == scope
    retry_after = response.headers["Retry-After"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert int(retry_after) == error["details"]["retry_after_s"]
    return dict(error)


def _frozen_limiter(client: TestClient) -> PersonLimiter:
    """Budgets refill with time; a stopped clock keeps the test free of timing."""
    limiter: PersonLimiter = client.app.state.resources.limiter  # type: ignore[attr-defined]
    limiter.clock = lambda: 1000.0
    return limiter


@pytest.fixture
def corpus(db: DbHandle, embedder: Any) -> DbHandle:
    insert_chunks(db, embedder, {**RETURNED, **NOT_RETURNED})
    return db


# --- gates ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("uncached_encoder")  # the calls must wait at the encoder
def test_concurrent_grounding_calls_per_person_are_limited(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens, embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a calibration that weighs the cosine in, so a call has an encoder step to be held at
    # (at the shipped lexical weight 1 the gate encodes nothing and answers at once)
    monkeypatch.setattr(
        grounding, "calibration_for",
        lambda model_id, override=None: Calibration(0.8, 0.5, "test"),
    )
    client = gate_client(gate_max_concurrent_per_person=2)
    limiter = _frozen_limiter(client)
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    bob_rid = record_retrieval(corpus, BOB, [])  # nothing to encode against: answers at once
    answers: list[Any] = []

    def call() -> None:
        answers.append(ground(client, auth, ALICE, rid, ANSWER))

    with embedder.held():  # Alice's two calls stay at the encoder until released
        threads = [threading.Thread(target=call) for _ in range(2)]
        for thread in threads:
            thread.start()
        wait_for(lambda: limiter.in_flight("gate", ALICE) == 2, "two calls in flight")
        wait_for(lambda: embedder.pending()["bulk"] >= 2, "both calls at the encoder")
        third = ground(client, auth, ALICE, rid, ANSWER)
        assert_rate_limited(third, "gate_concurrent")
        # the limit is per person: Bob is served meanwhile
        assert ground(client, auth, BOB, bob_rid, ANSWER).status_code == 200
    for thread in threads:
        thread.join(timeout=300)
    assert [a.status_code for a in answers] == [200, 200]
    assert limiter.in_flight("gate", ALICE) == 0
    # the slots are free again
    assert ground(client, auth, ALICE, rid, ANSWER).status_code == 200


def test_grounding_sentence_budget_per_person(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(grounding_sentences_per_minute=5)
    _frozen_limiter(client)
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    assert ground(client, auth, ALICE, rid, ANSWER).status_code == 200  # 4 of 5
    refused = ground(client, auth, ALICE, rid, ANSWER)
    error = assert_rate_limited(refused, "grounding_sentences")
    # 3 sentences short at 5 a minute: 36 s
    assert refused.headers["Retry-After"] == "36" and error["details"]["limit"] == 5
    bob_rid = record_retrieval(corpus, BOB, list(RETURNED))
    assert ground(client, auth, BOB, bob_rid, ANSWER).status_code == 200
    # the refusal is in the gates chain for compliance: who, which route, which limit; no text
    events = ok(
        client.get(
            "/v1/audit/gate-events",
            params={"gate": "throttle"},
            headers=auth("cora@firm.nl", "compliance"),
        )
    )["items"]
    assert len(events) == 1, events
    assert events[0]["person_id"] == ALICE and events[0]["ok"] is False
    assert "De werkgever" not in str(events[0])
    assert "grounding_sentences" in str(events[0])


def test_grounding_character_budget_per_person(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(grounding_chars_per_minute=len(ANSWER) + 10)
    _frozen_limiter(client)
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    assert ground(client, auth, ALICE, rid, ANSWER).status_code == 200
    assert_rate_limited(ground(client, auth, ALICE, rid, ANSWER), "grounding_characters")


def test_grounding_per_call_caps_are_settings(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(grounding_max_sentences=3, grounding_max_chars=len(ANSWER) + 50)
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    r = ground(client, auth, ALICE, rid, ANSWER)
    assert r.status_code == 422 and r.json()["error"]["code"] == "too_many_sentences"
    r = ground(client, auth, ALICE, rid, "Een zin. " + "x" * (len(ANSWER) + 60))
    assert r.status_code == 422 and r.json()["error"]["code"] == "answer_too_long"
    assert r.json()["error"]["details"]["field"] == "answer"


def test_citation_gate_checks_each_distinct_ecli_once(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    first, second = live_eclis(2)
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_max_distinct=2)
    lower = "ecli:" + first.removeprefix("ECLI:")
    draft = " ".join(f"Zie {first}, ook {lower}." for _ in range(300)) + f" En {second}."
    r = client.post("/v1/gates/citations", json={"text": draft}, headers=auth(ALICE, "lawyer"))
    assert r.status_code == 200, r.text
    assert [c["ecli"] for c in r.json()["citations"]] == [first, second]
    assert rechtspraak.hits(first) == 1 and rechtspraak.hits(second) == 1


def test_citation_gate_caps_distinct_eclis(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    eclis = live_eclis(4)
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_max_distinct=3)
    r = client.post(
        "/v1/gates/citations", json={"text": " ".join(eclis)}, headers=auth(ALICE, "lawyer")
    )
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "too_many_citations" and error["details"]["limit"] == 3
    assert error["details"]["field"] == "text"
    assert all(rechtspraak.hits(e) == 0 for e in eclis), "nothing goes out over the cap"


def test_citation_budget_per_person(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens
) -> None:
    eclis = live_eclis(4)
    client = gate_client(rechtspraak_url=rechtspraak.url, citations_per_minute=3)
    _frozen_limiter(client)
    alice = auth(ALICE, "lawyer")
    ok(client.post("/v1/gates/citations", json={"text": " ".join(eclis[:2])}, headers=alice))
    refused = client.post("/v1/gates/citations", json={"text": " ".join(eclis[2:])}, headers=alice)
    assert_rate_limited(refused, "citations")
    assert rechtspraak.hits(eclis[2]) == 0
    bob = auth(BOB, "lawyer")
    ok(client.post("/v1/gates/citations", json={"text": " ".join(eclis[2:])}, headers=bob))


# --- several API processes ------------------------------------------------------------------


def test_a_budget_is_counted_across_two_processes(
    corpus: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    """Two apps on one database, as two processes of `ewall serve --workers 2`: what the
    person spent on one is spent on the other."""
    first = gate_client(grounding_sentences_per_minute=5)
    second = gate_client(grounding_sentences_per_minute=5)
    assert first.app is not second.app
    _frozen_limiter(first)
    _frozen_limiter(second)
    rid = record_retrieval(corpus, ALICE, list(RETURNED))
    assert ground(first, auth, ALICE, rid, ANSWER).status_code == 200  # 4 of 5
    refused = ground(second, auth, ALICE, rid, ANSWER)
    assert_rate_limited(refused, "grounding_sentences")
    assert refused.headers["Retry-After"] == "36"


def test_slots_are_shared_and_a_dead_holders_slot_lapses(gate_client: GateClient) -> None:
    first = _frozen_limiter(gate_client())
    second = _frozen_limiter(gate_client())
    with first.slot("gate", ALICE, 1):
        assert second.in_flight("gate", ALICE) == 1
        with pytest.raises(RateLimited) as refused, second.slot("gate", ALICE, 1):
            pass
        assert refused.value.details["scope"] == "gate_concurrent"
        with second.slot("gate", BOB, 1):  # per person
            assert first.in_flight("gate", BOB) == 1
    with second.slot("gate", ALICE, 1):  # released on the way out
        pass
    # a process that dies in a call never releases its slot: the lease lapses
    held = first.slot("gate", ALICE, 1)
    held.__enter__()
    with pytest.raises(RateLimited), second.slot("gate", ALICE, 1):
        pass
    second.clock = lambda: 1000.0 + SLOT_LEASE_S + 1
    with second.slot("gate", ALICE, 1):
        assert second.in_flight("gate", ALICE) == 1
    # closed here, not by a later test's garbage collection (its release would fail on a
    # dropped database and log, tests/sources.py says what that once broke)
    held.__exit__(None, None, None)


def test_searches_in_flight_are_counted_across_two_processes(gate_client: GateClient) -> None:
    """A check of 2026-12-06 ran two API processes with one search in flight per person
    allowed: the same person had one in flight on each. The slot is now shared, and a
    search refused for its slot or its budget takes neither."""
    first = _frozen_limiter(gate_client())
    second = _frozen_limiter(gate_client())
    with first.search(ALICE, 1, 100):
        with pytest.raises(RateLimited) as refused, second.search(ALICE, 1, 100):
            pass
        assert refused.value.details["scope"] == "search_concurrent"
        with second.search(BOB, 1, 100):  # per person
            pass
    with second.search(ALICE, 1, 100):  # released on the way out
        pass
    # a budget that cannot pay leaves the slot free (and a refused slot spends nothing)
    with first.search(ALICE, 2, 1):
        with pytest.raises(RateLimited) as spent, second.search(ALICE, 2, 1):
            pass
        assert spent.value.details["scope"] == "searches"
        assert second.in_flight("search", ALICE) == 1
    # a process that dies in its searches frees its slots within a minute, not the gates' ten
    carol = "carol@firm.nl"
    held = first.search(carol, 1, 100)
    held.__enter__()
    with pytest.raises(RateLimited), second.search(carol, 1, 100):
        pass
    second.clock = lambda: 1000.0 + SEARCH_SLOT_LEASE_S + 1
    with second.search(carol, 1, 100):
        pass
    held.__exit__(None, None, None)  # closed here, not by a later test's collection


def test_spent_budgets_that_refilled_and_ended_slots_are_swept(
    gate_client: GateClient, db: DbHandle
) -> None:
    limiter = _frozen_limiter(gate_client())
    limiter.spend_all(ALICE, [("citations", 3, 6), ("grounding_sentences", 2, 60)])
    with limiter.slot("gate", ALICE, 2):
        pass
    with psycopg.connect(db.superuser_url) as su:
        assert su.execute("SELECT count(*) FROM limit_buckets").fetchone() == (2,)
    assert limiter.sweep() == 0  # nothing has refilled yet, a lease is still running
    limiter.clock = lambda: 1000.0 + 31  # both buckets are full again; the lease still runs
    assert limiter.sweep() == 2
    limiter.clock = lambda: 1000.0 + SLOT_LEASE_S
    assert limiter.sweep() == 1
    with psycopg.connect(db.superuser_url) as su:
        left = su.execute(
            "SELECT (SELECT count(*) FROM limit_buckets), (SELECT count(*) FROM limit_slots)"
        ).fetchone()
    assert left == (0, 0)


def test_a_refusal_by_one_budget_takes_nothing_from_the_others(gate_client: GateClient) -> None:
    limiter = _frozen_limiter(gate_client())
    limiter.spend("citations", ALICE, 5, 5)
    with pytest.raises(RateLimited) as refused:
        limiter.spend_all(ALICE, [("grounding_sentences", 10, 10), ("citations", 1, 5)])
    assert refused.value.details["scope"] == "citations"
    limiter.spend("grounding_sentences", ALICE, 10, 10)  # still full
