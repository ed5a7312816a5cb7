"""A replica whose pool has no free connection is skipped for that search: the next healthy
replica serves it, else the primary, at once, with the same wall-respecting results and its
one audit row. Before (attack round of 2026-12-08, fourth) the search waited for the
replica's pool timeout (30 s) and answered 503 ``busy`` though the primary was free: every
connection held by searches stuck on a frozen replica that the monitor had not yet marked
down, or by a burst of searches on a healthy one. The primary's own exhausted pool still
answers 503 ``busy``. On a real streaming replica (tests/replication.py), with the fixtures
of tests/search/test_replicas.py."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.db.engine import Database
from app.db.replicas import Replica
from app.main import create_app
from tests.conftest import Tokens, make_settings
from tests.helpers import retag
from tests.replication import Pair, wait_for
from tests.search import test_replicas as base
from tests.search.test_replicas import (
    LAWYER,
    QUERY,
    SCREENED,
    WALLED,
    audit_rows,
    build_firm,
    counter,
    ground,
    matters,
    policy_version,
    screen,
    search,
    wait_state,
    walled_results,
)

pair = base.pair
dbname = base.dbname


@contextmanager
def service(
    pair: Pair,
    dbname: str,
    embedder: Any,
    *,
    copies: int = 1,
    interval_s: float = 0.05,
    database: Database | None = None,
) -> Iterator[TestClient]:
    """The service on the primary with ``copies`` replica URLs naming the standby (each its
    own pool of two connections, no overflow)."""
    url = pair.replica_url(dbname)
    settings = make_settings(
        replica_urls=",".join([url] * copies),
        replica_check_interval_s=interval_s,
        replica_max_lag_ms=600_000,
        pool_size=2,  # the replicas' pools (the primary's is ``database``'s own)
        pool_max_overflow=0,
    )
    database = database or base.primary_database(pair, dbname)
    try:
        with TestClient(
            create_app(settings, database, embedder=embedder, start_worker=False),
            raise_server_exceptions=False,
        ) as client:
            yield client
    finally:
        database.dispose()


@contextmanager
def held(engine: Engine, count: int | None = None) -> Iterator[list[Connection]]:
    """``count`` connections checked out of ``engine``'s pool until the block ends (None:
    every one it hands out, the service's own background work holding some)."""
    with ExitStack() as stack:
        conns: list[Connection] = []
        while count is None or len(conns) < count:
            try:
                conns.append(stack.enter_context(engine.connect()))
            except PoolTimeout:
                if count is not None:
                    raise
                break
        yield conns


def replicas_of(client: TestClient) -> list[Replica]:
    return list(client.app.state.resources.replicas.replicas)  # type: ignore[attr-defined]


def shown(body: Any) -> list[tuple[str, str | None]]:
    return [(r["chunk_id"], r["matter_id"]) for r in body["results"]]


def walled_firm(client: TestClient, auth: Tokens, pair: Pair) -> None:
    firm = build_firm(client, auth)
    screen(firm)
    retag(client)
    pair.wait_replayed()


def probed_since(replica: Replica, at: float) -> bool:
    checked = replica.state.checked_at
    return checked is not None and checked > at


def test_a_replica_with_no_free_connection_is_skipped_for_the_primary(
    pair: Pair, dbname: str, embedder: Any, auth: Tokens
) -> None:
    with service(pair, dbname, embedder) as client:
        _skipped_for_the_primary(pair, dbname, client, auth)


def _skipped_for_the_primary(pair: Pair, dbname: str, client: TestClient, auth: Tokens) -> None:
    walled_firm(client, auth, pair)
    wait_state(client, "ok")
    (replica,) = replicas_of(client)
    on_replica, served = search(client, auth, SCREENED)
    assert served == "replica" and on_replica["results"]
    assert WALLED not in matters(on_replica)
    before = audit_rows(pair, dbname)

    with held(replica.database.engine, 2):
        body, served = search(client, auth, SCREENED)
        # the grounding gate's reads skip it the same way
        rid = search(client, auth, LAWYER)[0]["retrieval_id"]
        grounded, grounded_on = ground(client, auth, LAWYER, rid)
        # a skipped replica keeps its health: the monitor probes it on a connection of its
        # own, and a full pool says nothing of the server
        probe_from = replica.state.checked_at or 0.0
        wait_for(lambda: probed_since(replica, probe_from), "a probe round")
        assert replica.state.state == "ok"

    assert served == "primary"
    assert shown(body) == shown(on_replica)  # the full answer, under the wall
    assert WALLED not in matters(body)
    assert body["policy_version"] == policy_version(pair, dbname)
    after = audit_rows(pair, dbname)
    assert after[len(before)] == (body["retrieval_id"], SCREENED, body["policy_version"])
    assert len(after) == len(before) + 2  # this search's row and the lawyer's
    assert walled_results(pair, dbname, body["retrieval_id"]) == 0
    assert counter(client, "busy", replica.name) == 2
    assert counter(client, "failed") == 0
    assert grounded_on == "primary" and grounded["ok"] is True
    # a free connection again: the replica serves
    _, served = search(client, auth, SCREENED)
    assert served == "replica"


def test_the_next_healthy_replica_serves_before_the_primary(
    pair: Pair, dbname: str, embedder: Any, auth: Tokens
) -> None:
    """Two replicas (the same standby under two URLs: two pools): with the first's pool
    full, every search runs on the second, whichever the round robin tries first."""
    with service(pair, dbname, embedder, copies=2) as client:
        walled_firm(client, auth, pair)
        first, second = replicas_of(client)
        wait_for(lambda: first.state.state == second.state.state == "ok", "both replicas ok")
        with held(first.database.engine, 2):
            for _ in range(2):  # one of the two starts at the first replica
                body, served = search(client, auth, SCREENED)
                assert served == "replica"
                assert body["results"] and WALLED not in matters(body)
        assert counter(client, "busy", first.name) == 1
        assert counter(client, "served", second.name) == 2
        assert counter(client, "served", "primary") == 0


def test_searches_stuck_on_a_frozen_replica_do_not_stop_the_next(
    pair: Pair, dbname: str, embedder: Any, auth: Tokens
) -> None:
    """Every connection of the replica's pool held by a search waiting on the frozen replica,
    before the monitor marks it down (its next round in a minute): a new search is answered
    by the primary while they still wait, and they finish once the replica runs again."""
    with service(pair, dbname, embedder, interval_s=60) as client:
        _frozen(pair, dbname, client, auth)


def _frozen(pair: Pair, dbname: str, client: TestClient, auth: Tokens) -> None:
    walled_firm(client, auth, pair)
    wait_state(client, "ok")
    (replica,) = replicas_of(client)
    expected, served = search(client, auth, SCREENED)
    assert served == "replica"
    pool = replica.database.engine.pool
    with held(replica.database.engine, 2):
        pass  # both pooled connections open: the stuck searches wait on them, not on a connect
    frozen = base._replica_processes(pair)
    answers: list[int] = []

    def stuck(person: str) -> None:
        response = client.post(
            "/v1/search", json={"query": QUERY, "k": 10}, headers=auth(person, "lawyer")
        )
        answers.append(response.status_code)

    threads = [
        threading.Thread(target=stuck, args=(person,), daemon=True)
        for person in (LAWYER, "tvisser@firm.nl")
    ]
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        for thread in threads:
            thread.start()
        wait_for(lambda: pool.checkedout() == 2, "every replica connection held")  # type: ignore[attr-defined]
        before = len(audit_rows(pair, dbname))

        body, served = search(client, auth, SCREENED)

        assert served == "primary"
        assert shown(body) == shown(expected)
        assert all(thread.is_alive() for thread in threads)  # they still wait on the replica
        assert len(audit_rows(pair, dbname)) == before + 1
        assert replica.state.state == "ok"  # not yet probed: skipped, not marked down
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        for thread in threads:  # before the service stops, whatever happened above
            if thread.ident is not None:
                thread.join(timeout=120)
    assert answers == [200, 200]


def test_the_primary_with_no_free_connection_still_answers_busy(
    pair: Pair, dbname: str, embedder: Any, auth: Tokens
) -> None:
    database = base.primary_database(
        pair, dbname, pool_size=2, max_overflow=0, pool_timeout=0.5  # its own wait
    )
    with service(pair, dbname, embedder, database=database) as client:
        walled_firm(client, auth, pair)
        wait_state(client, "ok")
        (replica,) = replicas_of(client)
        before = audit_rows(pair, dbname)
        for replica_held in (0, 2):  # the replica free (its fenced append waits), or not
            with held(database.engine), held(replica.database.engine, replica_held):
                response = client.post(
                    "/v1/search", json={"query": QUERY, "k": 10}, headers=auth(SCREENED, "lawyer")
                )
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "busy"
        assert audit_rows(pair, dbname) == before
