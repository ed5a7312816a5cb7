"""The grounding gate's replica reads are judged at the primary's clock at the request's
start (app/gates/replica.py); its fence must also refuse a wall that began or ended by the
clock since then, with no write and no new policy version. On a real streaming replica
(tests/replication.py), like tests/search/test_replicas.py, whose fixtures and helpers it
uses (a module of its own: that one is at the length limit)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event

from app.gates import router as gates_router
from app.gates.replica import request_start
from tests.conftest import Tokens
from tests.helpers import retag
from tests.replication import Pair, wait_for
from tests.search import test_replicas as base
from tests.search.test_replicas import (
    SCREENED,
    WALLED,
    AppFactory,
    build_firm,
    chain_ok,
    ground,
    grounding_counter,
    last_gate_event,
    matters,
    primary,
    search,
    wait_state,
)

# the fixtures of test_replicas.py: a primary and its streaming replica, a database on them,
# the service started with the replica configured
pair = base.pair
dbname = base.dbname
replica_app = base.replica_app


def primary_clock(pair: Pair, dbname: str) -> datetime:
    with primary(pair, dbname) as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def test_grounding_fenced_by_a_wall_that_began_during_the_replica_reads(
    pair: Pair,
    dbname: str,
    replica_app: AppFactory,
    auth: Tokens,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gate's replica reads are judged at the primary's clock at the request's start. A
    wall issued before the request (replayed: the same policy version) that begins, by the
    clock and with no write, after that instant but before the fence: the replica admitted
    the screened person at an instant already past, and the gate must redo its reads on the
    primary, where the wall screens. Before, the version alone was fenced and the replica's
    answer (supported, from the walled matter) was released."""
    client = replica_app()
    firm = build_firm(client, auth)
    pair.wait_replayed()
    wait_state(client, "ok")
    body, _ = search(client, auth, SCREENED)
    assert WALLED in matters(body)
    replica = client.app.state.resources.replicas.replicas[0]
    started: list[datetime] = []
    begins: list[datetime] = []
    reached: list[bool] = []

    def spied_start(conn: Any, resources: Any) -> Any:
        start = request_start(conn, resources)
        assert start is not None
        started.append(start.at)
        return start

    def wait_for_the_wall(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "audit_retrieval_results" in statement and not reached:
            reached.append(True)  # the reads are on the replica: let the wall begin
            wait_for(lambda: primary_clock(pair, dbname) > begins[-1], "the wall's start")

    monkeypatch.setattr(gates_router, "request_start", spied_start)
    for margin_s in (5, 20, 60, 180):  # time to issue, re-tag and replay it, then to start
        begins.append(primary_clock(pair, dbname) + timedelta(seconds=margin_s))
        wall_id = firm.wall(
            kind="exclusionary",
            protects={"matters": [WALLED]},
            screened=[SCREENED],
            effective_from=begins[-1].isoformat(),
        )
        retag(client)
        pair.wait_replayed()
        wait_state(client, "ok")
        reached.clear()
        event.listen(replica.database.engine, "before_cursor_execute", wait_for_the_wall)
        try:
            result, served = ground(client, auth, SCREENED, body["retrieval_id"])
        finally:
            event.remove(replica.database.engine, "before_cursor_execute", wait_for_the_wall)
        if started[-1] < begins[-1]:
            break  # the request started before the wall did: what this test is about
        firm.lift(wall_id)  # a machine too slow for the margin: again, with a wider one

    assert started[-1] < begins[-1], "the wall began before every request"
    assert reached, "the grounding reads never reached the replica"
    assert served == "primary"
    assert grounding_counter(client, "fenced") == 1
    assert result["ok"] is False and result["sentences"][0]["supported"] is False
    assert last_gate_event(pair, dbname)["read_from"] == "primary"
    pair.wait_replayed()
    chain_ok(pair, dbname)
