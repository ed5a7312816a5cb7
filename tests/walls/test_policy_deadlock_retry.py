"""A policy change that PostgreSQL fails to break a deadlock is run again, whole, in a fresh
transaction; when every try is failed, the answer is 503 ``conflict_retry`` (a concurrent
change met the request, nothing was changed), not ``database_unavailable``.

A real deadlock, made deterministic: issuing a wall share-locks its matter (the protected
matter's foreign key), then its screened person (wall_people's), then takes the policy row.
The test holds the policy row (``holder``, which never looks for deadlocks itself in time)
and the person's row (``gate``). The wall's try waits at the gate with its matter
share-locked; the holder then asks for the matter's row and waits for the try; the gate
opens and the try asks for the policy row: a cycle that the try closed, so its own deadlock
check finds it and PostgreSQL fails the try. A table lock (``door``), asked while the try
still held its insert's lock, holds the next try before the matter, so that the holder
takes the matter first (a next try that took it first deadlocked unscripted). Every step
waits on pg_locks (who blocks whom), never on a clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.deps import POLICY_ATTEMPTS
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, superuser_rows
from tests.replication import wait_for

INSIDER, SCREENED, MATTER = "alice@firm.nl", "bob@firm.nl", "M-1"
COMPLIANCE = ("comp@firm.nl", "compliance")

# the service's backends that wait for a lock the given backend holds
BLOCKED_BY = (
    "SELECT a.pid FROM pg_stat_activity a WHERE a.datname = current_database() "
    "AND a.application_name = 'ewall' AND CAST(%s AS integer) = ANY(pg_blocking_pids(a.pid))"
)
# (blocker, waiter): whether the waiter waits for a lock the blocker holds
WAITS_FOR = "SELECT CAST(%s AS integer) = ANY(pg_blocking_pids(CAST(%s AS integer)))"
DOOR = "LOCK TABLE wall_protected_matters IN EXCLUSIVE MODE"
MATTER_ROW = "SELECT 1 FROM matters WHERE matter_id = %s FOR UPDATE"
Conn = psycopg.Connection[Any]


def _firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person(INSIDER)
    firm.person(SCREENED)
    firm.client_("C-1", "Acme B.V.")
    firm.matter(MATTER, "C-1", team=[INSIDER])
    return firm


def _issue(firm: Firm) -> Any:
    body = {"kind": "exclusionary", "title": "screen", "reason": "lateral hire",
            "protects": {"matters": [MATTER]}, "screened": [SCREENED]}  # fmt: skip
    return firm.client.post("/v1/walls", json=body, headers=firm.h)


def _blocked_by(db: DbHandle, pid: int) -> list[int]:
    return [int(r[0]) for r in superuser_rows(db, BLOCKED_BY, pid)]


class Deadlocks:
    """Three superuser connections: the holder (the policy row, from the start), the gate
    (the screened person's row) and the door (the protected matters' table, which a try
    inserts into before it share-locks the matter), closed and opened round by round."""

    def __init__(self, db: DbHandle, holder: Conn, gate: Conn, door: Conn) -> None:
        self.db = db
        self.holder, self.gate, self.door = holder, gate, door
        self.holder_pid = holder.info.backend_pid
        self.gate_pid = gate.info.backend_pid
        self.door_pid = door.info.backend_pid
        self.rounds = 0
        for conn in (holder, door):
            # the try must be the one that finds the cycle: these never look in time
            conn.execute("SET deadlock_timeout = '10min'")
        holder.execute("SELECT 1 FROM policy_state FOR UPDATE")

    def one(self, answer: Future[Any] | None, start: Callable[[], Future[Any]]) -> Future[Any]:
        """Make the route's current try (the first: ``start`` it) a deadlock's victim; its
        next try, if any, waits at the closed door."""
        self.gate.execute("SELECT 1 FROM people WHERE person_id = %s FOR UPDATE", (SCREENED,))
        if answer is None:
            answer = start()
        else:
            self.door.rollback()
        wait_for(
            lambda: answer.done() or bool(_blocked_by(self.db, self.gate_pid)),
            "the wall's try to wait at the gate, its matter share-locked",
        )
        if answer.done():
            self.gate.rollback()
            return answer
        (route_pid,) = _blocked_by(self.db, self.gate_pid)
        self.holder.execute("SAVEPOINT matter")
        with ThreadPoolExecutor(2) as side:
            # both wait for the try: the door for its insert's table lock, the holder for
            # its share lock on the matter
            closing = side.submit(self.door.execute, DOOR)
            wait_for(lambda: self._waits(self.door_pid, route_pid), "the door to wait")
            take = side.submit(self.holder.execute, MATTER_ROW, (MATTER,))
            wait_for(lambda: self._waits(self.holder_pid, route_pid), "the holder to wait")
            self.gate.rollback()  # the try goes on to the policy row: the cycle closes
            take.result()  # granted once PostgreSQL failed the try
            closing.result()
        self.rounds += 1
        wait_for(
            lambda: answer.done() or bool(_blocked_by(self.db, self.door_pid)),
            "the route to answer or try again",
        )
        self.holder.execute("ROLLBACK TO SAVEPOINT matter")
        return answer

    def _waits(self, pid: int, for_pid: int) -> bool:
        return superuser_rows(self.db, WAITS_FOR, for_pid, pid) == [(True,)]


@contextmanager
def _deadlocks(db: DbHandle) -> Iterator[Deadlocks]:
    with (
        psycopg.connect(db.superuser_url) as holder,
        psycopg.connect(db.superuser_url) as gate,
        psycopg.connect(db.superuser_url) as door,
    ):
        try:
            yield Deadlocks(db, holder, gate, door)
        finally:
            for conn in (gate, door, holder):
                conn.rollback()


def _policy_events(client: TestClient, auth: Tokens) -> list[dict[str, Any]]:
    page = ok(client.get("/v1/audit/policy-events", params={"limit": 500},
                         headers=auth(*COMPLIANCE)))  # fmt: skip
    return list(page["items"])


def _retries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        str(getattr(r, "sqlstate", ""))
        for r in caplog.records
        if r.name == "ewall.db" and "trying it again" in r.getMessage()
    ]


def _in_deadlocks(
    db: DbHandle, firm: Firm, call: Callable[[Firm], Any], rounds_wanted: int | None
) -> tuple[Any, int]:
    """``call`` with its tries made deadlock victims: ``rounds_wanted`` of them, then let
    through (None: every try, until it answers). The answer and the rounds made."""
    with ThreadPoolExecutor(1) as pool:
        with _deadlocks(db) as rounds:
            answer: Future[Any] | None = None
            while rounds_wanted is None or rounds.rounds < rounds_wanted:
                answer = rounds.one(answer, lambda: pool.submit(call, firm))
                if answer.done():
                    break
            assert answer is not None
            if rounds_wanted is not None:
                assert not answer.done(), answer.result().text
        # the holder let go: a try still waiting goes through
        return answer.result(), rounds.rounds


def test_a_wall_issued_through_a_deadlock_is_issued_once(
    client: TestClient, auth: Tokens, db: DbHandle, caplog: pytest.LogCaptureFixture
) -> None:
    firm = _firm(client, auth)
    before = _policy_events(client, auth)
    caplog.set_level(logging.WARNING, logger="ewall.db")

    answer, made = _in_deadlocks(db, firm, _issue, rounds_wanted=1)

    assert made == 1
    assert answer.status_code == 201, answer.text
    assert _retries(caplog) == ["40P01"]  # the first try was PostgreSQL's victim
    wall_id = answer.json()["wall_id"]
    walls = ok(client.get("/v1/walls", headers=firm.h))["items"]
    assert [w["wall_id"] for w in walls] == [wall_id]  # the failed try left no wall
    events = _policy_events(client, auth)
    new = events[: len(events) - len(before)]
    assert [(e["action"], e["object_id"]) for e in new] == [("wall.issued", wall_id)]
    assert new[0]["policy_version"] == answer.json()["policy_version"]
    verified = ok(client.get("/v1/audit/verify", headers=auth(*COMPLIANCE)))
    assert verified["ok"] is True, verified
    assert firm.access(SCREENED, MATTER)["allowed"] is False


def test_a_wall_failed_on_every_try_answers_conflict_retry(
    client: TestClient, auth: Tokens, db: DbHandle, caplog: pytest.LogCaptureFixture
) -> None:
    firm = _firm(client, auth)
    before = _policy_events(client, auth)
    caplog.set_level(logging.WARNING, logger="ewall.db")

    answer, made = _in_deadlocks(db, firm, _issue, rounds_wanted=None)

    assert made == POLICY_ATTEMPTS
    assert _retries(caplog) == ["40P01"] * (POLICY_ATTEMPTS - 1)
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == "conflict_retry"
    assert "nothing was changed" in body["error"]["message"]
    assert "not reachable" not in body["error"]["message"]
    assert body["error"]["details"]["sqlstate"] == "40P01"
    assert answer.headers["Retry-After"] == "1"
    assert answer.headers["X-Request-ID"] == body["error"]["details"]["request_id"]
    assert ok(client.get("/v1/walls", headers=firm.h))["items"] == []
    assert _policy_events(client, auth) == before
    assert ok(client.get("/v1/audit/verify", headers=auth(*COMPLIANCE)))["ok"] is True
    assert firm.access(SCREENED, MATTER)["allowed"] is True  # nothing was issued
    assert firm.wall(kind="exclusionary", protects={"matters": [MATTER]}, screened=[SCREENED])


def test_a_matter_write_through_a_deadlock_is_written_once(
    client: TestClient, auth: Tokens, db: DbHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """A matrix write takes the policy row first and its matter's row later. The holder
    holds the matter's row and asks for the policy row while the write is held at a door
    (the clients table, which it reads in between); the door opens and the write asks for
    the matter's row, closing the cycle: PostgreSQL fails the write's try. A table lock on
    the policy row's table, asked before that, holds the next try until the holder has the
    row (the next try would otherwise take it first and deadlock again); the next try then
    writes the matter once."""
    firm = _firm(client, auth)
    before = _policy_events(client, auth)
    caplog.set_level(logging.WARNING, logger="ewall.db")
    body = {"client_id": "C-1", "title": "Renamed", "team": [INSIDER], "parties": []}
    with (
        ThreadPoolExecutor(3) as pool,
        psycopg.connect(db.superuser_url) as holder,
        psycopg.connect(db.superuser_url) as door,
        psycopg.connect(db.superuser_url) as queue,
    ):
        for conn in (holder, queue):
            conn.execute("SET deadlock_timeout = '10min'")
        holder.execute(MATTER_ROW, (MATTER,))
        door.execute("LOCK TABLE clients IN ACCESS EXCLUSIVE MODE")
        answer = pool.submit(firm.client.put, f"/v1/matters/{MATTER}", json=body, headers=firm.h)
        door_pid, holder_pid = door.info.backend_pid, holder.info.backend_pid
        queue_pid = queue.info.backend_pid
        wait_for(lambda: answer.done() or bool(_blocked_by(db, door_pid)), "the write at the door")
        assert not answer.done(), answer.result().text
        (route_pid,) = _blocked_by(db, door_pid)
        take = pool.submit(holder.execute, "SELECT 1 FROM policy_state FOR UPDATE")
        waits = [(True,)]
        wait_for(lambda: superuser_rows(db, WAITS_FOR, route_pid, holder_pid) == waits, "holder")
        queued = pool.submit(queue.execute, "LOCK TABLE policy_state IN EXCLUSIVE MODE")
        wait_for(lambda: superuser_rows(db, WAITS_FOR, holder_pid, queue_pid) == waits, "queue")
        door.rollback()  # the write goes on to the matter's row: the cycle closes
        take.result()  # granted once PostgreSQL failed the write's try
        wait_for(lambda: answer.done() or bool(_blocked_by(db, queue_pid)), "the next try")
        holder.rollback()
        queued.result()
        queue.rollback()
        written = ok(answer.result())
    assert _retries(caplog) == ["40P01"]
    assert firm.client.get(f"/v1/matters/{MATTER}", headers=firm.h).json()["title"] == "Renamed"
    events = _policy_events(client, auth)
    new = events[: len(events) - len(before)]
    assert [(e["action"], e["policy_version"]) for e in new] == [
        ("matter.upsert", written["policy_version"])
    ]
    assert ok(client.get("/v1/audit/verify", headers=auth(*COMPLIANCE)))["ok"] is True
