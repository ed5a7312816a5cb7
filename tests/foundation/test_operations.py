"""/healthz, /readyz, /metrics, start-up checks and what the logs may contain."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import StartupError, check_dimensions
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm


def test_metrics_count_requests_by_route(client: TestClient, auth: Tokens) -> None:
    client.get("/healthz")
    client.post("/v1/search", json={"query": "x"})  # 401
    text = client.get("/metrics").text
    assert "ewall_http_requests_total" in text
    assert 'route="/healthz"' in text and 'status="401"' in text
    assert "ewall_http_request_duration_seconds_bucket" in text


def test_unknown_methods_share_one_metrics_label(client: TestClient) -> None:
    for n in range(5):
        client.request(f"PROBE{n}", "/healthz")
    text = client.get("/metrics").text
    assert 'method="other"' in text
    assert "PROBE" not in text


def test_dimension_mismatch_is_a_clear_startup_error(db: DbHandle, embedder: Any) -> None:
    wrong = make_settings(embedding_dim=768)
    with pytest.raises(StartupError, match="384-dimensional"):
        check_dimensions(wrong, db.database, embedder.dimension)
    with pytest.raises(StartupError), make_client(db, wrong, embedder):
        pass


def test_readyz_reports_what_is_wrong(client: TestClient, db: DbHandle) -> None:
    import psycopg

    assert client.get("/readyz").status_code == 200
    with psycopg.connect(db.superuser_url, autocommit=True) as su:
        su.execute("UPDATE alembic_version SET version_num = 'behind'")
    r = client.get("/readyz")
    assert r.status_code == 503
    body = r.json()
    assert body["error"]["code"] == "not_ready"
    assert body["checks"]["migrations"]["ok"] is False


def test_logs_never_contain_document_or_query_text(
    client: TestClient, auth: Tokens, caplog: pytest.LogCaptureFixture
) -> None:
    secret_doc = "Vertrouwelijkzeldzaamwoord over de overname van Kraanvogel."
    secret_query = "Kraanvogel overname geheim"
    with caplog.at_level(logging.DEBUG):
        firm = Firm(client, auth)
        firm.person("alice@firm.nl")
        firm.client_("C", "C")
        firm.matter("M", "C", team=["alice@firm.nl"])
        firm.document("secret", secret_doc, client_id="C", matter_id="M")
        firm.search("alice@firm.nl", secret_query)
    logged = "\n".join(r.getMessage() + " " + str(r.__dict__) for r in caplog.records)
    assert "Vertrouwelijkzeldzaamwoord" not in logged
    assert "Kraanvogel" not in logged


def test_a_readiness_check_the_database_does_not_answer_never_holds_the_probes(
    client: TestClient, db: DbHandle
) -> None:
    """A check blocked in the database (here: the migration revision, behind a lock; a
    frozen server blocks it the same way, where no statement_timeout can fire) does not
    hold the probes that follow: they answer 503 naming it at once, /healthz and /metrics
    answer, and once the database answers the service is ready again."""
    import threading
    import time

    import psycopg

    guard = time.monotonic() + 120  # a bound against a hang, never a timed assertion
    first: dict[str, Any] = {}
    with (
        psycopg.connect(db.superuser_url) as su,
        psycopg.connect(db.superuser_url, autocommit=True) as watch,
    ):
        su.execute("LOCK TABLE alembic_version IN ACCESS EXCLUSIVE MODE")
        probe = threading.Thread(target=lambda: first.update(r=client.get("/readyz")))
        probe.start()

        def blocked() -> bool:  # read outside the lock's transaction: a fresh snapshot
            rows = watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query ILIKE '%alembic_version%'"
            ).fetchone()
            return bool(rows and rows[0])

        while not blocked():
            assert time.monotonic() < guard, "the readiness check never reached the lock"
            time.sleep(0.05)
        # the lock is still held, so the first check still waits; this probe must not
        later: dict[str, Any] = {}
        other = threading.Thread(target=lambda: later.update(r=client.get("/readyz")))
        other.start()
        other.join(timeout=max(1.0, guard - time.monotonic()))
        assert "r" in later, "a second probe waited for the blocked check"
        second = later["r"]
        assert second.status_code == 503, second.text
        assert "still waits" in second.json()["checks"]["waiting"]
        assert client.get("/healthz").status_code == 200
        assert client.get("/metrics").status_code == 200
        su.rollback()  # the lock goes: the blocked check ends
    probe.join(timeout=120)
    assert not probe.is_alive()
    assert first["r"].status_code in (200, 503)
    while client.get("/readyz").status_code != 200:
        assert time.monotonic() < guard, "never ready again"
        time.sleep(0.05)
