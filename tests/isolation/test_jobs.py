"""The job queue on a real PostgreSQL: claims, crash-safe resumption, bounded retries."""

from __future__ import annotations

from typing import Any

from app.jobs.queue import JobRefused, JobWorker
from app.jobs.repository import Job, enqueue, get_job
from tests.conftest import DbHandle


def _enqueue(db: DbHandle, kind: str = "test", max_attempts: int = 3, **payload: Any) -> int:
    with db.database.transaction() as conn:
        return enqueue(
            conn, kind=kind, person_id="admin@firm.nl", payload=payload, max_attempts=max_attempts
        )


def _job(db: DbHandle, job_id: int) -> dict[str, Any]:
    with db.database.transaction() as conn:
        row = get_job(conn, job_id)
    assert row is not None
    return row


def test_two_workers_never_take_the_same_job(db: DbHandle) -> None:
    first, second = _enqueue(db, n=1), _enqueue(db, n=2)
    a = JobWorker(db.database, {}, retry_base_s=0)
    b = JobWorker(db.database, {}, retry_base_s=0)
    try:
        claimed_a, claimed_b = a.claim(), b.claim()
        assert claimed_a is not None and claimed_b is not None
        assert {claimed_a.job_id, claimed_b.job_id} == {first, second}
        assert JobWorker(db.database, {}, retry_base_s=0).claim() is None
    finally:
        a.close()
        b.close()


def test_a_job_whose_worker_died_is_resumed(db: DbHandle) -> None:
    ran: list[Job] = []
    job_id = _enqueue(db, document="big.txt")
    doomed = JobWorker(db.database, {"test": ran.append}, retry_base_s=0, name="doomed")
    survivor = JobWorker(db.database, {"test": ran.append}, retry_base_s=0, name="survivor")
    try:
        claimed = doomed.claim()
        assert claimed is not None and claimed.job_id == job_id
        assert _job(db, job_id)["status"] == "running"
        # while its worker lives, nobody else takes it
        assert survivor.run_once() is False
        doomed.die()  # its session ends as when the process is killed
        assert survivor.run_once() is True
        assert [j.job_id for j in ran] == [job_id]
        assert ran[0].attempt == 2 and ran[0].payload == {"document": "big.txt"}
        row = _job(db, job_id)
        assert row["status"] == "succeeded" and row["attempts"] == 2
        assert row["locked_by"] is None
        assert survivor.run_once() is False
    finally:
        survivor.close()


def test_a_worker_that_dies_every_time_ends_the_job_failed(db: DbHandle) -> None:
    """... and on_failed hears of it (a pushed document's run ends failed with it: before,
    the claimer failed the job alone and the run read "running" for good)."""
    job_id = _enqueue(db, max_attempts=2)
    for name in ("w1", "w2"):
        worker = JobWorker(db.database, {}, retry_base_s=0, name=name)
        assert worker.claim() is not None
        worker.die()
    told: list[tuple[Job, str]] = []
    worker = JobWorker(
        db.database, {}, retry_base_s=0, on_failed=lambda job, error: told.append((job, error))
    )
    try:
        assert worker.run_once() is False
        row = _job(db, job_id)
        assert row["status"] == "failed" and row["attempts"] == 2
        assert "stopped" in row["last_error"]
        assert [(job.job_id, error) for job, error in told] == [(job_id, row["last_error"])]
        assert worker.run_once() is False and len(told) == 1  # once
    finally:
        worker.close()


def test_a_failing_job_is_retried_a_bounded_number_of_times(db: DbHandle) -> None:
    attempts: list[int] = []
    failed: list[tuple[int, str]] = []

    def flaky(job: Job) -> None:
        attempts.append(job.attempt)
        raise RuntimeError("the source answered 503")

    job_id = _enqueue(db, max_attempts=3)
    worker = JobWorker(
        db.database,
        {"test": flaky},
        retry_base_s=0,
        on_failed=lambda job, error: failed.append((job.job_id, error)),
    )
    try:
        for _ in range(10):
            if not worker.run_once():
                break
        assert attempts == [1, 2, 3]
        row = _job(db, job_id)
        assert row["status"] == "failed" and row["attempts"] == 3
        assert "503" in row["last_error"]
        assert failed == [(job_id, row["last_error"])]
    finally:
        worker.close()


def test_a_retry_waits_for_its_backoff(db: DbHandle) -> None:
    calls: list[int] = []

    def once_broken(job: Job) -> None:
        calls.append(job.attempt)
        if job.attempt == 1:
            raise RuntimeError("first try fails")

    job_id = _enqueue(db)
    worker = JobWorker(db.database, {"test": once_broken}, retry_base_s=3600)
    try:
        assert worker.run_once() is True
        # queued again, but not due for an hour
        assert worker.run_once() is False
        row = _job(db, job_id)
        assert row["status"] == "queued" and "first try" in row["last_error"]
    finally:
        worker.close()


def test_an_unknown_kind_fails_without_retrying(db: DbHandle) -> None:
    """... as a refused job does (JobRefused), and on_failed hears of it."""
    job_id = _enqueue(db, kind="no-such-kind")
    told: list[tuple[int, str]] = []
    worker = JobWorker(
        db.database,
        {},
        retry_base_s=0,
        on_failed=lambda job, error: told.append((job.job_id, error)),
    )
    try:
        assert worker.run_once() is True
        row = _job(db, job_id)
        assert row["status"] == "failed" and row["attempts"] == 1
        assert row["last_error"] == "JobRefused: no handler for jobs of kind 'no-such-kind'"
        assert told == [(job_id, row["last_error"])]
    finally:
        worker.close()


def test_an_on_failed_that_raises_is_logged_and_the_worker_claims_on(db: DbHandle) -> None:
    """A failed job's on_failed that raises (its run could not be closed) is logged, as for
    an orphan's: it escaped run_once, and the worker loop read it as the database gone
    (dropped its connection, backed off, logged "could not claim")."""
    refused, later = _enqueue(db, kind="refused"), _enqueue(db, kind="test")
    ran: list[int] = []

    def refuse(job: Job) -> None:
        raise JobRefused("no sidecar")

    def on_failed(job: Job, error: str) -> None:
        raise RuntimeError("the run could not be closed")

    worker = JobWorker(
        db.database,
        {"refused": refuse, "test": lambda job: ran.append(job.job_id)},
        retry_base_s=0,
        on_failed=on_failed,
    )
    try:
        assert worker.run_once() is True
        assert _job(db, refused)["status"] == "failed"
        assert worker.run_once() is True
        assert ran == [later] and _job(db, later)["status"] == "succeeded"
    finally:
        worker.close()
