"""Policy changes take their turn in a lane, never every pooled connection (app/deps.py).

PostgreSQL runs changes of the policy one at a time (the policy_state row). Each change that
waits there held a pooled connection: while one long matrix import held the row, twenty PUTs
of one administrator's script held all sixteen connections of the pool, and a lawyer's
search waited for the pool's timeout and failed (or, with the statement timeout shorter than
the pool's, for the writes to fail)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from fastapi.testclient import TestClient
from sqlalchemy.pool import QueuePool

from app.db.engine import Database
from app.main import create_app
from tests import pg
from tests.conftest import DbHandle, Tokens, make_settings
from tests.gates.test_limits import wait_for
from tests.helpers import lock_waiters

CALLS = 20  # more than the pool's 8 + 8 connections (the default sizes)


@contextmanager
def policy_held(db: DbHandle) -> Iterator[None]:
    """The policy_state row locked as a long change holds it, until the block ends."""
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("SELECT version FROM policy_state WHERE id = 1 FOR UPDATE")
        yield
        conn.rollback()


def test_a_search_runs_while_matrix_writes_wait_for_the_policy(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    # the writes wait at the policy row until the test frees it, not until a timeout
    database = Database(
        db.database.urls, app_role=pg.APP_ROLE, pool_size=8, max_overflow=8,
        statement_timeout_ms=600_000,
    )  # fmt: skip
    pool_full = 16
    app = create_app(make_settings(), database, embedder=embedder, start_worker=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        pool = database.engine.pool
        assert isinstance(pool, QueuePool)
        ended: list[int] = []
        lock = threading.Lock()

        def put_client(i: int) -> None:
            r = client.put(
                f"/v1/clients/C-LANE-{i}",
                json={"name": f"Client {i}", "parent_id": None},
                headers=auth("admin@firm.nl", "admin"),
            )
            with lock:
                ended.append(r.status_code)

        def parked() -> bool:
            """Every write waits: at the policy row, for its turn, or for the pool."""
            lanes = getattr(client.app.state, "lanes", {})  # type: ignore[attr-defined]
            lane = lanes.get("policy")
            waiting = lane.statistics().tasks_waiting if lane is not None else 0
            return len(lock_waiters(db)) + waiting == CALLS or pool.checkedout() >= pool_full

        with policy_held(db):
            writers = [
                threading.Thread(target=put_client, args=(i,), daemon=True) for i in range(CALLS)
            ]
            for t in writers:
                t.start()
            wait_for(parked, "the writes waiting for the policy")
            found: list[int] = []
            threading.Thread(
                target=lambda: found.append(
                    client.post(
                        "/v1/search",
                        json={"query": "werkgever"},
                        headers=auth("alice@firm.nl", "lawyer"),
                    ).status_code
                ),
                daemon=True,
            ).start()
            wait_for(lambda: bool(found), "a search beside the waiting writes")
            assert found == [200]
            assert ended == [], "a write ended while the policy was held"
            assert len(lock_waiters(db)) < pool_full, "the waiting writes hold the pool"
        wait_for(lambda: len(ended) == CALLS, "the writes, once the policy is free")
        assert set(ended) == {200}
    database.dispose()
