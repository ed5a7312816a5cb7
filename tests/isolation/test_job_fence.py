"""A job claimed again while its first worker still runs it (app/jobs/queue.py), on a real
PostgreSQL: the backend of the first worker's lease connection is terminated while its
handler runs, so its advisory lock goes and a second worker claims the job as an orphan and
finishes it. The first worker, let go, writes no outcome."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from app.db.locks import LockNamespace
from app.jobs.queue import JobWorker, NotForThisWorker
from app.jobs.repository import Job, enqueue
from tests.conftest import DbHandle
from tests.helpers import superuser_rows

# a guard against a hang, never a timing: every wait below is for a condition
GUARD_S = 600.0

_LEASE = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    f"AND classid = {int(LockNamespace.JOB)} AND objid = %s AND objsubid = 2"
)


def _lease_backends(db: DbHandle, job_id: int) -> list[int]:
    return [int(row[0]) for row in superuser_rows(db, _LEASE, job_id)]


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
    """Runs ``inner`` in a thread of its own; ``entered`` is set when the first worker's
    handler has started, and the handler waits for ``release``."""

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
