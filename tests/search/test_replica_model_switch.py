"""A replica that has not replayed a re-embed's switch holds the old model's vectors: a
service started with the new (live) model must not answer 503 ``model_not_live`` there while
the primary, which has switched, can serve the search (attack round of 2026-12-08, fourth:
every search routed to such a replica failed with 503 until it replayed the switch, though
api.md's replicas are to fail over). On a real streaming replica (tests/replication.py),
with the fixtures of tests/search/test_replicas.py and a real re-embed to the tiny model of
tests/reembed/tiny_model.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.embeddings import Embedder
from app.reembed.service import Reembedder
from tests.conftest import Tokens, make_settings
from tests.reembed.tiny_model import DIMENSION, build_tiny_model
from tests.replication import Pair
from tests.search import test_replicas as base
from tests.search.test_replicas import LAWYER, QUERY, AppFactory, build_firm, counter, wait_state

pair = base.pair
dbname = base.dbname
replica_app = base.replica_app


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("models"))


def _started(pair: Pair, dbname: str, embedder: Embedder, overrides: dict[str, Any]) -> TestClient:
    from app.main import create_app

    settings = make_settings(
        replica_urls=pair.replica_url(dbname),
        replica_check_interval_s=0.05,
        replica_max_lag_ms=600_000,
        **overrides,
    )
    app = create_app(
        settings, base.primary_database(pair, dbname), embedder=embedder, start_worker=False
    )
    return TestClient(app, raise_server_exceptions=False)


def test_a_replica_behind_a_model_switch_sends_the_search_to_the_primary(
    pair: Pair, dbname: str, replica_app: AppFactory, auth: Tokens, tiny_path: Path
) -> None:
    old = replica_app()
    build_firm(old, auth)
    pair.wait_replayed()
    wait_state(old, "ok")
    tiny_settings: dict[str, Any] = {
        "embedding_model": str(tiny_path),
        "embedding_dim": DIMENSION,
        "embedding_bulk_process": False,
    }
    tiny = Embedder(make_settings(**tiny_settings))
    pair.pause()
    try:
        Reembedder(old.app.state.resources.database, tiny, batch_size=64).run(started_by="test")
        # the service restarted with the new model, as `ewall reembed` tells the operator
        with _started(pair, dbname, tiny, tiny_settings) as new:
            wait_state(new, "ok")
            replica = new.app.state.resources.replicas.replicas[0]  # type: ignore[attr-defined]
            with replica.database.connect() as conn:  # the replica is behind the switch
                live = conn.execute(text("SELECT model_id FROM embedding_live")).scalar_one()
            assert live != tiny.model_id

            response = new.post(
                "/v1/search", json={"query": QUERY, "k": 5}, headers=auth(LAWYER, "lawyer")
            )

            assert response.status_code == 200, response.text
            assert response.headers["X-Ewall-Read-From"] == "primary"
            assert len(response.json()["results"]) == 5
            assert counter(new, "behind") == 1

            pair.resume()
            pair.wait_replayed()
            response = new.post(
                "/v1/search", json={"query": QUERY, "k": 5}, headers=auth(LAWYER, "lawyer")
            )
            assert response.status_code == 200, response.text
            assert response.headers["X-Ewall-Read-From"] == "replica"
    finally:
        pair.resume()
