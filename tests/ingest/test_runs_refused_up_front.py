"""A run that cannot start (a folder without its metadata sidecar, a connector whose
settings its class refuses) is refused when it is asked for, in the error envelope, as
``ewall ingest`` refuses it; a queued run whose folder lost its sidecar before its turn fails
once with that reason, not three times (invariant 7: a deterministic failure is not a job
worth another attempt)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.jobs.queue import JobWorker
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ADMIN, ok, superuser_rows

SIDECAR = '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}\n'


IMANAGE = {"imanage_url": "https://dms.example", "imanage_username": "svc",
           "imanage_password": "x", "imanage_client_id": "ewall", "imanage_client_secret": "x"}
NETDOCUMENTS = {"netdocuments_url": "https://api.example", "netdocuments_client_id": "ewall",
                "netdocuments_client_secret": "x", "netdocuments_repository_id": "CA-1"}


def test_a_folder_without_a_sidecar_is_refused_up_front(
    client: TestClient, auth: Tokens, db: DbHandle, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    r = client.post(
        "/v1/ingest/runs", json={"connector": "folder", "path": str(tmp_path)}, headers=auth(*ADMIN)
    )
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "sidecar_missing", error
    assert error["details"]["field"] == "path"
    assert "metadata.jsonl" in error["message"]
    # nothing was queued: no run, no job
    assert superuser_rows(db, "SELECT count(*) FROM jobs") == [(0,)]
    assert superuser_rows(db, "SELECT count(*) FROM ingest_runs") == [(0,)]


def test_a_queued_folder_run_whose_sidecar_went_fails_once_with_the_reason(
    db: DbHandle, embedder: object, auth: Tokens, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    (tmp_path / "metadata.jsonl").write_text(SIDECAR, encoding="utf-8")
    admin = auth(*ADMIN)
    # no job workers of the service: the job runs below, after the sidecar is gone
    with make_client(db, make_settings(job_workers=0), embedder) as client:
        r = client.post(
            "/v1/ingest/runs", json={"connector": "folder", "path": str(tmp_path)}, headers=admin
        )
        assert r.status_code == 202, r.text
        (tmp_path / "metadata.jsonl").unlink()  # gone before the job's turn
        resources = client.app.state.resources  # type: ignore[attr-defined]
        worker = JobWorker(resources.database, ingest_handlers(resources), retry_base_s=0,
                           on_failed=mark_run_failed(resources))
        try:
            while worker.run_once():  # each attempt, until none is due
                pass
        finally:
            worker.close()
        report = ok(client.get(f"/v1/ingest/runs/{r.json()['run_id']}", headers=admin))
    assert report["status"] == "failed", (report["job"], report.get("progress"))
    assert "no metadata sidecar" in report["error"], report
    assert report["job"]["status"] == "failed" and report["job"]["attempts"] == 1, report["job"]


@pytest.mark.parametrize(
    ("connector", "given", "named"),
    [
        ("imanage", {**IMANAGE, "imanage_field_map": "ACTIVE"}, "EWALL_IMANAGE_FIELD_MAP"),
        ("imanage", {**IMANAGE, "imanage_url": "ftp://dms.example"}, "base URL must be http"),
        ("imanage", {"imanage_url": "https://dms.example"}, "missing EWALL_IMANAGE_USERNAME"),
        ("netdocuments", {**NETDOCUMENTS, "netdocuments_url": "dms.example"}, "base URL must"),
    ],
)
def test_a_connector_whose_settings_it_refuses_is_not_queued(
    db: DbHandle, embedder: object, auth: Tokens, connector: str, given: dict[str, str],
    named: str,
) -> None:
    """Only an unset URL was checked: the run was queued, and its job failed three times on
    the connector's own refusal, the run reading "running" until the last."""
    with make_client(db, make_settings(**given), embedder) as client:
        r = client.post("/v1/ingest/runs", json={"connector": connector}, headers=auth(*ADMIN))
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "connector_not_configured", error
    assert error["details"]["field"] == "connector" and named in error["message"], error
    assert superuser_rows(db, "SELECT count(*) FROM jobs") == [(0,)]
