"""A replica URL that names another ewall database of the standby (a typo in the database
name; every database of the primary's cluster is replayed there, schema and all) is not a
replica of the primary's database: the monitor marks it down, and searches stay on the
primary. Before (attack round of 2026-12-08, fourth) /readyz called it "ok" and searches ran
there: each was fenced and ran again on the primary, and one that found nothing there under
the same policy version as the primary's passed the fence and was answered empty though the
primary holds matches (invariant 3). On a real streaming replica (tests/replication.py), with
the fixtures of tests/search/test_replicas.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.db.engine import Database, DatabaseUrls
from app.db.replicas import ReplicaSet
from app.main import create_app
from tests import pg
from tests.conftest import DbHandle, Tokens, make_settings
from tests.helpers import ok, retag, unreachable_database_url
from tests.replication import Pair
from tests.search import test_replicas as base
from tests.search.test_replicas import LAWYER, build_firm, policy_version, primary, wait_state

pair = base.pair
dbname = base.dbname


@pytest.fixture
def other_database(pair: Pair) -> Iterator[str]:
    """Another migrated ewall database of the same cluster (on the standby too)."""
    name = pg.create_database(pair.server)
    try:
        yield name
    finally:
        pg.drop_database(pair.server, name)


def test_a_replica_url_naming_another_ewall_database_is_down(
    pair: Pair, dbname: str, other_database: str, embedder: Any, auth: Tokens
) -> None:
    settings = make_settings(
        replica_urls=pair.replica_url(other_database),
        replica_check_interval_s=0.05,
        replica_max_lag_ms=600_000,
    )
    database = base.primary_database(pair, dbname)
    try:
        with TestClient(
            create_app(settings, database, embedder=embedder, start_worker=False),
            raise_server_exceptions=False,
        ) as client:
            build_firm(client, auth)
            retag(client)
            # the other database at the same policy version (a copy of the firm's matrix
            # without its documents would be)
            with primary(pair, other_database) as conn:
                conn.execute(
                    "UPDATE policy_state SET version = %s WHERE id = 1",
                    (policy_version(pair, dbname),),
                )
            pair.wait_replayed()

            wait_state(client, "down")
            (state,) = ok(client.get("/readyz"))["checks"]["replicas"]
            assert "another database" in state["error"], state
            response = client.post(
                "/v1/search",
                json={"query": "octrooi inbreuk retard-tablet", "k": 5},
                headers=auth(LAWYER, "lawyer"),
            )
            assert response.status_code == 200, response.text
            assert response.headers["X-Ewall-Read-From"] == "primary"
            assert len(response.json()["results"]) == 5
    finally:
        database.dispose()


def test_a_replica_is_down_while_the_primary_identity_is_unknown(db: DbHandle) -> None:
    """The identity was compared only once the primary had answered the monitor: before
    that (a primary that did not answer its first sample) any database with the schema
    passed, a wrong one included. Here a database that is no standby at all: it was
    ``not_standby``; unknown, it is down, whatever else it is."""
    settings = make_settings(replica_urls=db.app_url, replica_check_interval_s=0.05)
    nowhere = unreachable_database_url()
    primary = Database(DatabaseUrls(nowhere, nowhere), app_role=settings.app_role)
    replicas = ReplicaSet(settings, primary)
    try:
        (state,) = replicas.check_all()
        assert state.state == "down", state
        assert "not known yet" in (state.error or ""), state
    finally:
        for replica in replicas.replicas:
            replica.database.dispose()
        primary.dispose()
