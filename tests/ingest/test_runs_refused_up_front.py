"""A folder run that cannot start (no metadata sidecar) is refused when it is asked for, in
the error envelope, as ``ewall ingest folder`` refuses it; a queued run whose folder lost
its sidecar before its turn fails once with that reason, not three times (invariant 7: a
deterministic failure is not a job worth another attempt)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.jobs.queue import JobWorker
from tests.conftest import DbHandle, Tokens
from tests.helpers import ADMIN, ok, superuser_rows

SIDECAR = '{"external_id": "R-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}\n'


def _run_jobs(client: TestClient) -> None:
    resources = client.app.state.resources  # type: ignore[attr-defined]
    worker = JobWorker(
        resources.database,
        ingest_handlers(resources),
        retry_base_s=0,
        on_failed=mark_run_failed(resources),
    )
    try:
        while worker.run_once():
            pass
    finally:
        worker.close()


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
    client: TestClient, auth: Tokens, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    (tmp_path / "metadata.jsonl").write_text(SIDECAR, encoding="utf-8")
    admin = auth(*ADMIN)
    r = client.post(
        "/v1/ingest/runs", json={"connector": "folder", "path": str(tmp_path)}, headers=admin
    )
    assert r.status_code == 202, r.text
    (tmp_path / "metadata.jsonl").unlink()  # gone before the job's turn
    _run_jobs(client)
    report = ok(client.get(f"/v1/ingest/runs/{r.json()['run_id']}", headers=admin))
    assert report["status"] == "failed", (report["job"], report.get("progress"))
    assert "no metadata sidecar" in report["error"], report
    assert report["job"]["status"] == "failed" and report["job"]["attempts"] == 1, report["job"]
