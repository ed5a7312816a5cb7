"""A run that cannot start (a folder without its metadata sidecar, a connector whose
settings its class refuses) is refused when it is asked for, in the error envelope, as
``ewall ingest`` refuses it; a queued run whose folder lost its sidecar before its turn fails
once with that reason, not three times, and so does a folder run whose report ends failed
(its folder gone, its sidecar unreadable) (invariant 7: a deterministic failure is not a job
worth another attempt); a DMS run's failure is tried again."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from app.ingest.jobs import DOCUMENT_JOB, RUN_JOB, ingest_handlers, mark_run_failed
from app.jobs.queue import JobWorker
from app.jobs.repository import enqueue, get_job
from connectors.files import open_regular, read_regular
from connectors.folder import source as folder_source
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ADMIN, ok, superuser_rows, unreachable_database_url

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


def test_a_sidecar_gone_between_found_and_read_is_named_missing(
    client: TestClient, auth: Tokens, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removed after the folder's check found it and before it was read, the sidecar was
    "cannot be read: No such file or directory" (sidecar_invalid), and by an earlier reading
    "No folder at ..." (the folder is there): it is the sidecar that is missing."""
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    sidecar = tmp_path / "metadata.jsonl"
    sidecar.write_text(SIDECAR, encoding="utf-8")
    real = open_regular

    def removed_first(path: Path, limit: int) -> Any:
        Path(path).unlink(missing_ok=True)
        return real(path, limit)

    monkeypatch.setattr(folder_source, "open_regular", removed_first)
    r = client.post(
        "/v1/ingest/runs", json={"connector": "folder", "path": str(tmp_path)}, headers=auth(*ADMIN)
    )
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "sidecar_missing" and error["details"]["field"] == "path", error
    assert error["message"].startswith(
        f"the metadata sidecar metadata.jsonl in {tmp_path} is gone"
    ), error
    assert "No folder" not in error["message"], error


def test_a_rechtspraak_folder_without_records_is_refused_up_front(
    client: TestClient, auth: Tokens, db: DbHandle, tmp_path: Path
) -> None:
    """It was queued, loaded nothing and ended "succeeded" without a word."""
    (tmp_path / "records.zip").write_bytes(b"PK")
    r = client.post("/v1/ingest/runs", json={"connector": "rechtspraak", "path": str(tmp_path)},
                    headers=auth(*ADMIN))
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "no_records" and error["details"]["field"] == "path", error
    assert "no Rechtspraak records (*.xml files)" in error["message"], error
    assert superuser_rows(db, "SELECT count(*) FROM jobs") == [(0,)]


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
        report = run_queued_jobs(client, r.json()["run_id"], admin)
    assert report["status"] == "failed", (report["job"], report.get("progress"))
    assert "no metadata sidecar" in report["error"], report
    assert report["job"]["status"] == "failed" and report["job"]["attempts"] == 1, report["job"]


@pytest.mark.parametrize("kind", [DOCUMENT_JOB, RUN_JOB])
def test_an_ingest_job_without_its_run_fails_once(
    db: DbHandle, embedder: object, kind: str
) -> None:
    """No attempt finds a run the job does not name: it was tried three times (ValueError)."""
    with make_client(db, make_settings(job_workers=0), embedder) as client:
        resources = client.app.state.resources  # type: ignore[attr-defined]
        with db.database.transaction() as conn:
            job_id = enqueue(conn, kind=kind, person_id=ADMIN[0], payload={}, max_attempts=3)
        worker = JobWorker(resources.database, ingest_handlers(resources), retry_base_s=0)
        try:
            while worker.run_once():
                pass
        finally:
            worker.close()
        with db.database.transaction() as conn:
            job = get_job(conn, job_id)
    assert job is not None and job["status"] == "failed" and job["attempts"] == 1, job
    assert job["last_error"] == "JobRefused: an ingest job without its run", job


def run_queued_jobs(client: TestClient, run_id: str, headers: dict[str, str]) -> Any:
    """Run the queued jobs here, each attempt until none is due (no backoff), and return
    the run's report as the route gives it."""
    resources = client.app.state.resources  # type: ignore[attr-defined]
    worker = JobWorker(resources.database, ingest_handlers(resources), retry_base_s=0,
                       on_failed=mark_run_failed(resources))
    try:
        while worker.run_once():
            pass
    finally:
        worker.close()
    return ok(client.get(f"/v1/ingest/runs/{run_id}", headers=headers))


@pytest.mark.parametrize(
    ("connector", "files", "said"),
    [
        ("rechtspraak", {"a.xml": "<open-rechtspraak/>"}, "no folder"),
        ("folder", {"a.txt": "Memo over de huur.", "metadata.jsonl": SIDECAR}, "does not exist"),
    ],
)
def test_a_queued_run_whose_folder_went_fails_once_with_the_reason(
    db: DbHandle, embedder: object, auth: Tokens, tmp_path: Path, connector: str,
    files: dict[str, str], said: str,
) -> None:
    """The folder is read when the job runs: gone by then, the run's report ended failed
    and the job was tried twice more on a folder that was no more there than before. The
    route refuses a folder that is not there (422 path_not_found), so the job meets one only
    when it went in between, and it is not tried again: an unmounted share most often leaves
    its mount point, an empty folder (sidecar_missing, refused alike), and the retries end
    within seconds, the run reading "running" between them."""
    folder = tmp_path / "records"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    admin = auth(*ADMIN)
    with make_client(db, make_settings(job_workers=0), embedder) as client:
        body = {"connector": connector, "path": str(folder)}
        r = client.post("/v1/ingest/runs", json=body, headers=admin)
        assert r.status_code == 202, r.text
        shutil.rmtree(folder)
        report = run_queued_jobs(client, r.json()["run_id"], admin)
    assert report["status"] == "failed" and said in report["error"], report
    assert report["job"]["status"] == "failed" and report["job"]["attempts"] == 1, report["job"]
    assert report["job"]["last_error"].startswith("JobRefused:"), report["job"]


def test_a_queued_folder_run_whose_sidecar_cannot_be_read_fails_once_with_the_reason(
    db: DbHandle, embedder: object, auth: Tokens, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sidecar that cannot be read (its permissions changed since the run was asked for;
    the tests run as root, so the read is refused here) ends the run failed: the same read
    would fail on the next attempt, and the job was tried three times."""
    (tmp_path / "a.txt").write_text("Memo over de huur.", encoding="utf-8")
    sidecar = tmp_path / "metadata.jsonl"
    sidecar.write_text(SIDECAR, encoding="utf-8")

    def refused(path: Path, limit: int) -> bytes:
        if path == sidecar:
            raise PermissionError(13, "Permission denied", str(path))
        return read_regular(path, limit)

    admin = auth(*ADMIN)
    with make_client(db, make_settings(job_workers=0), embedder) as client:
        body = {"connector": "folder", "path": str(tmp_path)}
        r = client.post("/v1/ingest/runs", json=body, headers=admin)
        assert r.status_code == 202, r.text
        monkeypatch.setattr("connectors.folder.source.read_regular", refused)
        report = run_queued_jobs(client, r.json()["run_id"], admin)
    assert report["status"] == "failed" and "Permission denied" in report["error"], report
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


def test_a_queued_dms_run_that_fails_is_tried_again(
    db: DbHandle, embedder: object, auth: Tokens
) -> None:
    """A DMS's network faults pass: its failed run is worth another attempt, unlike a
    folder's (nothing listens on the port here: each attempt fails alike)."""
    port = urlsplit(unreachable_database_url()).port
    settings = make_settings(**{**IMANAGE, "imanage_url": f"http://127.0.0.1:{port}"},
                             job_workers=0, connector_max_attempts=1)
    admin = auth(*ADMIN)
    with make_client(db, settings, embedder) as client:
        r = client.post("/v1/ingest/runs", json={"connector": "imanage"}, headers=admin)
        assert r.status_code == 202, r.text
        report = run_queued_jobs(client, r.json()["run_id"], admin)
    assert report["status"] == "failed", report
    assert report["job"]["status"] == "failed" and report["job"]["attempts"] == 3, report["job"]


def test_a_queued_document_that_cannot_be_ingested_ends_its_run_failed(
    db: DbHandle, embedder: object, auth: Tokens
) -> None:
    """A run of one pushed document that was not ingested (a corrupt PDF: the same push
    answers 422 when it is small) ended "partial", which reads as "some of it went in"."""
    pdf = b"%PDF-1.7\n" + b"\x00 not a pdf at all " * 40
    body = {"source": "api", "external_id": "PDF-1", "client_id": "C-1", "matter_id": "M-1",
            "content_base64": base64.b64encode(pdf).decode(), "mime_type": "application/pdf"}
    admin = auth(*ADMIN)
    with make_client(db, make_settings(job_workers=0, document_async_chars=100), embedder) as client:
        r = client.post("/v1/documents", json=body, headers=admin)
        assert r.status_code == 202, r.text
        report = run_queued_jobs(client, r.json()["run_id"], admin)
    assert report["status"] == "failed", report
    [error] = report["errors"]
    assert error["external_id"] == "PDF-1" and error["reason"] in report["error"], report
    assert report["job"]["attempts"] == 1, report["job"]
