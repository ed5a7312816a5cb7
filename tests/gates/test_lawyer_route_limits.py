"""Every lawyer route has a per-person budget (issue 31, point 7): the search, the session
gate and the reads of one's own sessions answer 429 rate_limited with Retry-After, in the
envelope, once the person's budget is spent; another person is unaffected, and a refused
call takes nothing (the budgets are token buckets on a stopped clock here)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.conftest import DbHandle, Tokens
from tests.gates.conftest import GateClient
from tests.gates.test_limits import _frozen_limiter, assert_rate_limited, wait_for


def _exhaust(
    client: TestClient, call: Any, allowed: int, scope: str, ok_status: int
) -> dict[str, Any]:
    for _ in range(allowed):
        assert call().status_code == ok_status
    return assert_rate_limited(call(), scope)


def test_searches_per_person_are_limited(
    db: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(search_per_minute=2)
    _frozen_limiter(client)
    alice, bob = auth("alice", "lawyer"), auth("bob", "lawyer")

    def search(headers: dict[str, str]) -> Any:
        return client.post(
            "/v1/search", json={"query": "huurovereenkomst", "k": 3}, headers=headers
        )

    error = _exhaust(client, lambda: search(alice), 2, "searches", 200)
    assert error["details"]["limit"] == 2
    assert search(bob).status_code == 200  # per person
    # the refused search wrote no audit row
    with db.database.engine.connect() as conn:
        count = conn.execute(
            text("SELECT count(*) FROM audit_retrievals WHERE person_id = 'alice'")
        ).scalar_one()
    assert count == 2


def test_searches_in_flight_per_person_are_limited(
    gate_client: GateClient, auth: Tokens, embedder: Any
) -> None:
    """One person's searches waiting on the encoder are bounded (a fuzz saw 45 concurrent
    long questions of one lawyer hold every request thread, so that another lawyer's sparse
    search took 10 s); the next one is 429 at once, and others are served meanwhile."""
    client = gate_client(search_max_concurrent_per_person=2)
    alice, bob = auth("alice", "lawyer"), auth("bob", "lawyer")
    answers: list[int] = []

    def search(headers: dict[str, str], query: str, mode: str = "hybrid") -> Any:
        body = {"query": query, "k": 3, "mode": mode}
        return client.post("/v1/search", json=body, headers=headers)

    threads: list[threading.Thread] = []
    third: list[Any] = []
    try:
        with embedder.held("query"):  # Alice's searches wait at the encoder until released
            for query in ("huurovereenkomst ontbinding", "octrooi inbreuk"):
                threads.append(
                    threading.Thread(
                        target=lambda q=query: answers.append(search(alice, q).status_code)
                    )
                )
                threads[-1].start()
            wait_for(lambda: embedder.pending()["query"] == 2, "two searches at the encoder")
            threads.append(
                threading.Thread(target=lambda: third.append(search(alice, "onrechtmatige daad")))
            )
            threads[-1].start()
            wait_for(lambda: bool(third) or embedder.pending()["query"] > 2, "the third search")
            assert third, "a third search of Alice's reached the encoder"
            assert_rate_limited(third[0], "search_concurrent")
            assert search(bob, "huurovereenkomst", "sparse").status_code == 200  # per person
            assert search(alice, "huurovereenkomst", "sparse").status_code == 429
    finally:  # every request ends before the client does
        for thread in threads:
            thread.join(timeout=300)
    assert answers == [200, 200]
    assert search(alice, "onrechtmatige daad").status_code == 200  # the slots are free again


def test_session_gate_calls_per_person_are_limited(
    db: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(session_gate_per_minute=2)
    _frozen_limiter(client)
    alice, bob = auth("alice", "lawyer"), auth("bob", "lawyer")

    def gate(headers: dict[str, str]) -> Any:
        return client.post("/v1/gates/session", json={"session_id": "s-1"}, headers=headers)

    _exhaust(client, lambda: gate(alice), 2, "session_gate_calls", 404)
    assert gate(bob).status_code == 404  # no session of bob's: unknown, not limited


def test_own_session_audit_reads_per_person_are_limited(
    db: DbHandle, gate_client: GateClient, auth: Tokens
) -> None:
    client = gate_client(own_audit_reads_per_minute=2)
    _frozen_limiter(client)
    alice, compliance = auth("alice", "lawyer"), auth("carol", "compliance")

    def read(headers: dict[str, str]) -> Any:
        return client.get("/v1/audit/retrievals", params={"session_id": "s-1"}, headers=headers)

    _exhaust(client, lambda: read(alice), 2, "own_audit_reads", 200)
    # compliance reads the whole audit and is not charged on this lawyer budget
    for _ in range(3):
        assert read(compliance).status_code == 200
    # reading one retrieval is on the same budget: a fuzz wrote 300 refused reads of another
    # person's retrieval to the gates chain in a second
    bob = auth("bob", "lawyer")

    def read_one(headers: dict[str, str]) -> Any:
        return client.get(f"/v1/audit/retrievals/{uuid.uuid4()}", headers=headers)

    _exhaust(client, lambda: read_one(bob), 2, "own_audit_reads", 404)
    assert read_one(compliance).status_code == 404
