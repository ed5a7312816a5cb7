"""A job claimed again while its first worker still runs it (app/jobs/queue.py, app/ingest/
job_fence.py), on a real PostgreSQL: the backend of the first worker's lease connection is
terminated while its handler runs, so its advisory lock goes and a second worker claims the
job as an orphan and finishes it. The first worker, let go, writes nothing: neither its
outcome nor (an ingestion job) its handler's document, chunks, events or run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.db.locks import LockNamespace
from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.jobs.queue import JobWorker, NotForThisWorker
from app.jobs.repository import Job, enqueue
from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import ADMIN, ok, superuser_rows
from tests.isolation.test_async_ingest import LONG_TEXT, _document, _firm

# a guard against a hang, never a timing: every wait below is for a condition
GUARD_S = 600.0

_LEASE = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s AND objid = %s AND objsubid = 2"
)


def _lease_backends(db: DbHandle, job_id: int) -> list[int]:
    return [int(row[0]) for row in superuser_rows(db, _LEASE, int(LockNamespace.JOB), job_id)]


def _drop_lease(db: DbHandle, job_id: int) -> None:
    """Terminate the backend that holds the job's lock (the worker's lease connection, idle
    while its handler runs), and wait until it is gone and the lock with it."""
    [pid] = _lease_backends(db, job_id)
    assert superuser_rows(db, "SELECT pg_terminate_backend(%s, 120000)", pid) == [(True,)]
    assert _lease_backends(db, job_id) == []


def _job_row(db: DbHandle, job_id: int) -> dict[str, Any]:
    [row] = superuser_rows(db, "SELECT to_jsonb(j) FROM jobs j WHERE job_id = %s", job_id)
    value: dict[str, Any] = row[0]
    return value


class _Blocked:
    """Runs the first worker's ``run_once`` in a thread of its own. Its handler calls
    ``hold``: ``entered`` is set, and the handler waits for ``release``."""

    def __init__(self, worker: JobWorker) -> None:
        self.worker = worker
        self.entered = threading.Event()
        self.release = threading.Event()
        self.result: list[bool] = []
        self.error: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="first-worker", daemon=True)

    def hold(self) -> None:
        self.entered.set()
        assert self.release.wait(GUARD_S), "the test never let the first worker go"

    def _run(self) -> None:
        try:
            self.result.append(self.worker.run_once())
        except BaseException as exc:  # reported by outcome()
            self.error.append(exc)
            self.entered.set()

    def start(self) -> None:
        self._thread.start()
        assert self.entered.wait(GUARD_S), "the first worker's handler never started"
        assert not self.error, self.error

    def finish(self) -> None:
        self.release.set()
        self._thread.join(GUARD_S)
        assert not self._thread.is_alive(), "the first worker never finished"

    def outcome(self) -> bool:
        """What the first worker's ``run_once`` returned (it must not raise)."""
        assert not self.error, f"the first worker raised {self.error[0]!r}"
        return self.result[0]


def _enqueue(db: DbHandle, max_attempts: int) -> int:
    with db.database.transaction() as conn:
        return enqueue(
            conn, kind="test", person_id="admin@firm.nl", payload={"n": 1},
            max_attempts=max_attempts,
        )


@pytest.mark.parametrize("outcome", ["succeeds", "retries", "fails", "puts_back"])
def test_a_worker_whose_job_was_claimed_again_writes_no_outcome(
    db: DbHandle, caplog: pytest.LogCaptureFixture, outcome: str
) -> None:
    # "fails": the first worker runs the last allowed attempt (a worker died on the first),
    # so the second marks the orphan failed instead of running it
    job_id = _enqueue(db, max_attempts=2 if outcome == "fails" else 3)
    if outcome == "fails":
        dead = JobWorker(db.database, {}, retry_base_s=0, name="dead")
        assert dead.claim() is not None
        dead.die()
    failed: list[str] = []
    first_ran: list[Job] = []

    def first_handler(job: Job) -> None:
        first_ran.append(job)
        blocked.hold()
        if outcome == "puts_back":
            raise NotForThisWorker("not the live model")
        if outcome != "succeeds":
            raise RuntimeError("the source answered 503")

    first = JobWorker(db.database, {"test": first_handler}, retry_base_s=0, name="first",
                      on_failed=lambda job, error: failed.append(error))
    blocked = _Blocked(first)
    second_ran: list[Job] = []
    second = JobWorker(db.database, {"test": second_ran.append}, retry_base_s=0, name="second")
    try:
        blocked.start()
        [claim] = first_ran
        assert second.run_once() is False  # the first worker's lock holds the job
        _drop_lease(db, job_id)
        assert second.run_once() is (outcome != "fails")
        after_second = _job_row(db, job_id)
        assert after_second["claim_token"] == claim.claim_token + 1
        if outcome == "fails":
            assert after_second["status"] == "failed" and second_ran == []
        else:
            assert after_second["status"] == "succeeded" and after_second["attempts"] == 2
            assert [j.claim_token for j in second_ran] == [claim.claim_token + 1]
        with caplog.at_level(logging.WARNING, logger="ewall.jobs"):
            blocked.finish()
        # the second worker's outcome stands; the first's is counted and logged, not written
        assert _job_row(db, job_id) == after_second
        assert blocked.outcome() is (outcome != "puts_back")
        assert first.claims_lost == 1 and failed == []
        [lost] = [r for r in caplog.records if r.getMessage().startswith("job outcome not")]
        assert lost.__dict__["job_id"] == job_id
        assert lost.__dict__["claim_token"] == claim.claim_token
        assert lost.__dict__["now_claim_token"] == claim.claim_token + 1
        # the first worker goes on claiming (on a new connection), and finds nothing
        first.paused_until = 0.0
        assert first.run_once() is False
    finally:
        blocked.release.set()
        first.close()
        second.close()


def test_a_worker_whose_lease_dropped_and_nobody_took_over_writes_its_outcome(
    db: DbHandle,
) -> None:
    """Its token says nobody claimed the job since: the outcome is written on a new
    connection, and the job is not run again as an orphan."""
    job_id = _enqueue(db, max_attempts=3)
    worker = JobWorker(db.database, {"test": lambda job: blocked.hold()}, retry_base_s=0)
    blocked = _Blocked(worker)
    try:
        blocked.start()
        _drop_lease(db, job_id)
        blocked.finish()
        assert blocked.outcome() is True
        row = _job_row(db, job_id)
        assert row["status"] == "succeeded" and row["attempts"] == 1
        assert row["claim_token"] == 1 and row["locked_by"] is None
        assert worker.claims_lost == 0
        assert worker.run_once() is False
    finally:
        blocked.release.set()
        worker.close()


# --- an ingestion job ------------------------------------------------------------------------

# what each ingestion table holds, row by row: whole statements (a table name is no bind value)
_READS = {
    "jobs": "SELECT to_jsonb(t) FROM jobs t ORDER BY CAST(to_jsonb(t) AS text)",
    "ingest_runs": "SELECT to_jsonb(t) FROM ingest_runs t ORDER BY CAST(to_jsonb(t) AS text)",
    "ingest_run_events": "SELECT to_jsonb(t) FROM ingest_run_events t ORDER BY CAST(to_jsonb(t) AS text)",
    "documents": "SELECT to_jsonb(t) FROM documents t ORDER BY CAST(to_jsonb(t) AS text)",
    "chunks": "SELECT to_jsonb(t) FROM chunks t ORDER BY CAST(to_jsonb(t) AS text)",
    "source_acls": "SELECT to_jsonb(t) FROM source_acls t ORDER BY CAST(to_jsonb(t) AS text)",
    "policy_events": "SELECT to_jsonb(t) FROM policy_events t ORDER BY CAST(to_jsonb(t) AS text)",
    "search_postings": "SELECT to_jsonb(t) FROM search_postings t ORDER BY CAST(to_jsonb(t) AS text)",
    "textless_documents": "SELECT to_jsonb(t) FROM textless_documents t ORDER BY CAST(to_jsonb(t) AS text)",
    "audit_retrievals": "SELECT to_jsonb(t) FROM audit_retrievals t ORDER BY CAST(to_jsonb(t) AS text)",
}


def _stored(db: DbHandle) -> dict[str, list[str]]:
    """What the ingestion tables hold, row by row."""
    return {
        table: [str(r[0]) for r in superuser_rows(db, statement)]
        for table, statement in _READS.items()
    }


class _GatedEncoder:
    """The pipeline's encoder, its first call held until the test lets it go: the first
    worker stops in the middle of its document, between reading what is stored and writing."""

    def __init__(self, inner: Any, first_call: Callable[[], None]) -> None:
        self._inner = inner
        self._first_call: Callable[[], None] | None = first_call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_passages(self, texts: list[str]) -> Any:
        hold, self._first_call = self._first_call, None
        if hold is not None:
            hold()
        return self._inner.embed_passages(texts)


class _GatedPacer:
    """A pacer whose first call is held: the first worker stops as its document starts,
    before it reads what is stored."""

    def __init__(self, first_call: Callable[[], None]) -> None:
        self._first_call: Callable[[], None] | None = first_call

    def pace(self) -> float:
        hold, self._first_call = self._first_call, None
        if hold is not None:
            hold()
        return 0.0

    def reset(self) -> None:
        pass


def _queued() -> Settings:
    """A long document goes to the queue; no job worker of the app's own (each test runs
    its workers by hand)."""
    return make_settings(document_async_chars=len(LONG_TEXT) - 1, job_workers=0)


def _queue_document(client: TestClient, auth: Tokens) -> tuple[dict[str, str], Any]:
    """The firm, and a document long enough to be queued for a job: (the admin's headers,
    the 202)."""
    _firm(client, auth)
    admin = auth(*ADMIN)
    queued = client.post("/v1/documents", json=_document("LARGE-1", LONG_TEXT), headers=admin)
    assert queued.status_code == 202, queued.text
    return admin, queued


@pytest.mark.parametrize("held", ["encoding", "starting"])
def test_an_ingestion_job_claimed_again_commits_nothing_of_the_first_worker(
    db: DbHandle, embedder: Any, auth: Tokens, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch, held: str,
) -> None:
    """Held while encoding, the first worker is refused its document's write; held as its
    document starts, it finds the document stored as it would write it, and is refused the
    "unchanged" supersede (the run's counts and end would follow)."""
    with make_client(db, _queued(), embedder) as client:
        admin, queued = _queue_document(client, auth)
        run_url = f"/v1/ingest/runs/{queued.json()['run_id']}"
        resources = client.app.state.resources  # type: ignore[attr-defined]
        pipeline = resources.require_pipeline()
        handlers = ingest_handlers(resources)

        def worker(name: str) -> JobWorker:
            return JobWorker(resources.database, handlers, retry_base_s=0, name=name,
                             on_failed=mark_run_failed(resources))

        first, second = worker("first"), worker("second")
        blocked = _Blocked(first)
        if held == "encoding":
            gated = _GatedEncoder(pipeline.embedder, blocked.hold)
            monkeypatch.setattr(pipeline, "embedder", gated)
        else:
            monkeypatch.setattr(pipeline, "pacer", _GatedPacer(blocked.hold))
        try:
            blocked.start()  # the first worker encodes the document's chunks
            [(job_id,)] = superuser_rows(db, "SELECT job_id FROM jobs")
            _drop_lease(db, job_id)
            assert second.run_once() is True
            report = ok(client.get(run_url, headers=admin))
            assert report["status"] == "succeeded" and report["counts"]["added"] == 1, report
            assert report["job"]["status"] == "succeeded" and report["job"]["attempts"] == 2
            stored = _stored(db)
            with caplog.at_level(logging.WARNING, logger="ewall.jobs"):
                blocked.finish()
            # the first worker's document write was refused, and so was its outcome
            assert _stored(db) == stored
            assert ok(client.get(run_url, headers=admin)) == report
            assert blocked.outcome() is True
            assert first.claims_lost == 1
            failed = [r for r in caplog.records if r.getMessage() == "job failed"]
            assert [r.__dict__["error"] for r in failed] == ["JobClaimLostError"]
            assert any(r.getMessage().startswith("job outcome not written")
                       for r in caplog.records)
        finally:
            blocked.release.set()
            first.close()
            second.close()


def test_a_document_job_still_runs_as_before(
    db: DbHandle, embedder: Any, auth: Tokens
) -> None:
    """The fence costs the normal path nothing it did: one attempt, succeeded, one token."""
    with make_client(db, _queued(), embedder) as client:
        admin, queued = _queue_document(client, auth)
        resources = client.app.state.resources  # type: ignore[attr-defined]
        worker = JobWorker(resources.database, ingest_handlers(resources), retry_base_s=0)
        try:
            assert worker.run_once() is True
            assert worker.run_once() is False
        finally:
            worker.close()
        report = ok(client.get(f"/v1/ingest/runs/{queued.json()['run_id']}", headers=admin))
        assert report["status"] == "succeeded" and report["counts"]["added"] == 1, report
        assert report["job"]["status"] == "succeeded" and report["job"]["attempts"] == 1
        [(token,)] = superuser_rows(db, "SELECT claim_token FROM jobs")
        assert token == 1 and worker.claims_lost == 0
