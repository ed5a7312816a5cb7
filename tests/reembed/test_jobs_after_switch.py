"""After a re-embed switched, a service left on the old model shares the job queue with the
new model's. It refused its own searches and writes (503 model_not_live) but queued
background pushes (202) that its worker could never finish: three attempts, then the run
failed and the document was never stored. Its worker also claimed jobs that the new
model's service had queued, and spent their attempts (a check of 2026-12-06)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
from fastapi.testclient import TestClient

from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.jobs.queue import JobWorker
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ADMIN, Firm, ok
from tests.isolation.test_async_ingest import LONG_TEXT

LAWYER = "l@firm.nl"


def _sql(db: DbHandle, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(db.superuser_url, autocommit=True) as conn:
        cur = conn.execute(statement, params or None)
        return cur.fetchall() if cur.description else []


def _worker(client: TestClient) -> JobWorker:
    resources = client.app.state.resources  # type: ignore[attr-defined]
    return JobWorker(
        resources.database,
        ingest_handlers(resources),
        retry_base_s=0.01,
        on_failed=mark_run_failed(resources),
    )


def _firm(client: TestClient, auth: Tokens) -> dict[str, str]:
    """The lawyer on matter M1 of client C1; the admin's headers."""
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.client_("C1")
    firm.matter("M1", "C1", team=[LAWYER])
    return auth(*ADMIN)


def _push(external_id: str) -> dict[str, Any]:
    return {"source": "api", "external_id": external_id, "client_id": "C1",
            "matter_id": "M1", "title": "Memo", "text": LONG_TEXT}  # fmt: skip


def test_an_old_model_service_queues_nothing_and_leaves_the_queue_to_the_live_model(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    settings = make_settings(document_async_chars=len(LONG_TEXT) - 1, job_workers=0)
    with make_client(db, settings, embedder) as client:
        admin = _firm(client, auth)
        queued = client.post("/v1/documents", json=_push("D-1"), headers=admin)
        assert queued.status_code == 202, queued.text
        run_url = f"/v1/ingest/runs/{queued.json()['run_id']}"
        live = _sql(db, "SELECT model_id, model_name FROM embedding_live WHERE id = 1")[0]
        assert live[0] == embedder.model_id
        # a re-embed switched to another model (its service queued D-1 as well, say)
        _sql(db, "UPDATE embedding_live SET model_id = 'other@1', model_name = 'other'")

        refused = client.post("/v1/documents", json=_push("D-2"), headers=admin)
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "model_not_live"

        old = _worker(client)
        try:
            assert old.run_once() is False  # claimed, found not its own, put back
            assert old.run_once() is False  # and it pauses: nothing claimed meanwhile
        finally:
            old.close()
        jobs = _sql(db, "SELECT status, attempts FROM jobs ORDER BY job_id")
        assert jobs == [("queued", 0)]  # D-2 never queued; D-1's attempt not counted
        assert ok(client.get(run_url, headers=admin))["status"] not in ("failed", "succeeded")
        assert _sql(db, "SELECT count(*) FROM chunks WHERE external_id IN ('D-1', 'D-2')") == [
            (0,)
        ]

        # the live model's process (here the same model, live again) runs it in full
        _sql(db, "UPDATE embedding_live SET model_id = %s, model_name = %s", *live)
        new = _worker(client)
        try:
            assert new.run_once() is True
        finally:
            new.close()
        assert _sql(db, "SELECT status, attempts FROM jobs") == [("succeeded", 1)]
        assert ok(client.get(run_url, headers=admin))["status"] == "succeeded"
        hits = Firm(client, auth).search(LAWYER, "pakhuis Zeeuwse gracht", mode="sparse")[
            "results"
        ]
        assert {h["document"]["external_id"] for h in hits} == {"D-1"}


def test_a_switch_while_a_connector_run_job_runs_puts_the_job_back(
    db: DbHandle, embedder: Any, auth: Tokens, tmp_path: Path
) -> None:
    """The handler checked the model before the run, and a crawl can run for hours: a
    switch during it failed the job on its last attempt, the run with it (a review). It goes
    back, as a document job does."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Memo over de huurovereenkomst.", encoding="utf-8")
    (tmp_path / "metadata.jsonl").write_text(json.dumps(
        {"external_id": "R-1", "path": "docs/a.txt", "client_id": "C1", "matter_id": "M1"}
    ), encoding="utf-8")  # fmt: skip
    settings = make_settings(job_workers=0, job_max_attempts=1)
    with make_client(db, settings, embedder) as client:
        admin = _firm(client, auth)
        run = client.post("/v1/ingest/runs", json={"connector": "folder", "path": str(tmp_path)},
                          headers=admin)  # fmt: skip
        assert run.status_code == 202, run.text
        pipeline = client.app.state.resources.pipeline  # type: ignore[attr-defined]
        resume = pipeline.resume_run

        def resume_then_switch(run_id: Any) -> Any:  # the switch lands after the check
            resumed = resume(run_id)
            _sql(db, "UPDATE embedding_live SET model_id = 'other@1', model_name = 'other'")
            return resumed

        pipeline.resume_run = resume_then_switch
        worker = _worker(client)
        try:
            worker.run_once()
        finally:
            worker.close()
        jobs = _sql(db, "SELECT kind, status, attempts FROM jobs ORDER BY job_id")
        assert jobs == [("ingest.run", "queued", 0)], jobs
        report = ok(client.get(f"/v1/ingest/runs/{run.json()['run_id']}", headers=admin))
        assert report["status"] == "running", report  # not failed: its job waits
