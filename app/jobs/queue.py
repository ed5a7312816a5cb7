"""A small PostgreSQL table queue with crash-safe claims, bounded retries and workers.

- ``enqueue`` writes a job row in the caller's transaction (the job exists exactly when the
  transaction that asked for it commits).
- A ``JobWorker`` claims one job at a time on its own connection: ``FOR UPDATE SKIP LOCKED``
  picks a row no other worker is claiming, and a session advisory lock on the job id marks
  it as owned for as long as the worker's session lives. A ``running`` row whose lock can be
  taken belongs to a worker that died (its session ended): it is claimed again, counting as
  an attempt, so a job that kills its worker every time ends ``failed`` instead of looping.
- The lock cannot tell a dead worker from one whose lease connection dropped (a server
  restart, an idle-session timeout, a proxy, pg_terminate_backend): the job is claimed again
  and runs beside the first. So a claim is fenced: every claim raises the row's
  ``claim_token`` (``Job.claim_token`` keeps the value), and the outcome (succeed, retry,
  put back, fail) is written only while the row is running with that token. A worker whose
  job was claimed again writes nothing, logs it, counts it in ``claims_lost`` and claims on;
  its ``on_failed`` does not run. An outcome whose lease is gone goes on a new connection
  (the token says whether nobody took over). Handlers fence their own writes with the token:
  ingestion's in app/ingest/job_fence.py.
- A handler that raises is retried after ``retry_base_s * 2**(attempt-1)`` seconds until
  ``max_attempts``; then the job is ``failed`` with the last error.
- A handler that raises ``JobRefused`` (its input cannot work: a folder without its
  sidecar) fails the job at once: another attempt would fail the same way. A job of a kind
  that no handler takes is refused alike.
- A handler that raises ``NotForThisWorker`` (the process's encoder is not the live model
  since a re-embed switched) puts the job back as it was, the attempt not counted, and its
  worker claims nothing for ``PAUSE_S``: processes of the live model share the queue, and an
  old one must neither spend their jobs' attempts nor fail them.
- Handlers must be idempotent: a job may run again after a crash. Ingestion is (chunks are
  content-addressed, unchanged documents are skipped, sync cursors resume).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Protocol

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.db.engine import Database
from app.jobs import repository as repo

# The job rows' own functions are part of the queue's public API (callers such as
# app.ingest.router import the queue only).
from app.jobs.repository import Job
from app.logging import Failures

RETRY_BASE_S = 5.0  # the first retry's delay; it doubles with every attempt
PAUSE_S = 30.0  # a worker that cannot run the queue's jobs claims none for this long
ORPHAN_ERROR = "the worker stopped during the last allowed attempt"

log = logging.getLogger("ewall.jobs")

Handler = Callable[[Job], None]
OnFailed = Callable[[Job, str], None]


class NotForThisWorker(Exception):
    """Raised by a handler for a job that this process cannot run, though another can."""


class JobRefused(Exception):
    """Raised by a handler for a job that no attempt can run (a deterministic failure)."""


def _unknown_kind(job: Job) -> None:
    raise JobRefused(f"no handler for jobs of kind {job.kind!r}")  # no attempt finds one


class JobWorker:
    """Claims and runs jobs; ``run_once`` is the unit the threads (and the tests) drive."""

    def __init__(
        self,
        database: Database,
        handlers: Mapping[str, Handler],
        *,
        retry_base_s: float,
        on_failed: OnFailed | None = None,
        name: str | None = None,
    ) -> None:
        self.database = database
        self.handlers = dict(handlers)
        self.retry_base_s = retry_base_s
        self.on_failed = on_failed
        self.name = name or f"worker-{uuid.uuid4().hex[:8]}"
        self._lease: Connection | None = None
        self.claims_lost = 0  # outcomes not written: the job had been claimed again
        self.paused_until = 0.0  # time.monotonic(): no claims before (NotForThisWorker)

    # --- the lease connection -------------------------------------------------------------
    def _connection(self) -> Connection:
        if self._lease is None or self._lease.closed or self._lease.invalidated:
            self._lease = self.database.engine.connect()
        return self._lease

    def close(self) -> None:
        """Give the connection back without any advisory lock left on its session."""
        lease, self._lease = self._lease, None
        if lease is None or lease.closed or lease.invalidated:
            return
        try:
            lease.rollback()
            repo.unlock_all(lease)
            lease.commit()
            lease.close()
        except Exception:  # a broken session: close it for good, which frees its locks
            lease.invalidate()

    def abandon(self) -> None:
        """Drop the connection without a word (the database went away): its session's locks
        end with it on the server."""
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.invalidate()

    def die(self) -> None:
        """End this worker's session as a crash would (tests; nothing is released politely).

        Returns once the server has ended the session: closing the socket only asks the
        backend to exit, and until it has, its advisory locks still mark the job as owned."""
        lease, self._lease = self._lease, None
        if lease is None:
            return
        pid = repo.backend_pid(lease)
        lease.invalidate()
        with self.database.engine.connect() as watcher:
            for _ in range(6000):  # a condition, not a clock: about a minute at most
                held = repo.session_holds_locks(watcher, pid)
                watcher.rollback()
                if not held:
                    return
                time.sleep(0.01)
        raise RuntimeError(f"backend {pid} kept its locks after its connection was closed")

    # --- claiming -------------------------------------------------------------------------
    def claim(self) -> Job | None:
        """Take the next job (an orphan first), holding its advisory lock on success. An
        orphan whose worker died on its last allowed attempt ends failed, and ``on_failed``
        runs for it once that is committed (its ingest run ends failed too: before, it read
        "running" for good)."""
        conn = self._connection()
        claimed: Job | None = None
        failed: list[Job] = []
        with conn.begin():
            for cand in repo.claim_candidates(conn, limit=20):
                if not repo.try_lock(conn, cand.job_id):
                    continue  # its worker is alive and at it
                if cand.status == "running" and cand.attempts >= cand.max_attempts:
                    # its worker died on the last allowed attempt
                    ended = repo.fail_orphan(conn, cand.job_id, cand.claim_token, ORPHAN_ERROR)
                    if ended is not None:
                        failed.append(ended)
                    repo.unlock(conn, cand.job_id)
                    continue
                claimed = repo.claim(conn, cand.job_id, self.name)
                break
        for job in failed:
            self._report_failed(job, ORPHAN_ERROR)
        return claimed

    def _report_failed(self, job: Job, error: str) -> None:
        if self.on_failed is None:
            return
        try:
            self.on_failed(job, error)
        except Exception:  # the job's row says failed; its run stays as it was
            log.exception("on_failed of a failed job raised", extra={"job_id": job.job_id})

    def _release(self, job: Job, finish: Callable[[Connection], bool]) -> bool:
        """Record the job's outcome, then give up its lock (after the commit, so that no
        other worker claims it while its row still says running). False, logged and counted
        in ``claims_lost``, when the claim was no longer this worker's: its job was claimed
        again (the lease connection had dropped) and the outcome is the other worker's.

        The outcome goes through only while the row holds this claim's token, so when the
        lease turns out to be gone it is written on a new connection (which holds no lock,
        so none is given up): nobody took over, or the token says so."""
        conn = self._connection()
        try:
            with conn.begin():
                written = finish(conn)
        except DBAPIError as exc:
            if not (exc.connection_invalidated or conn.invalidated):
                raise
            self.abandon()
            log.warning(
                "job lease connection lost during the job; its outcome goes on a new one",
                extra={"job_id": job.job_id, "kind": job.kind, "claim_token": job.claim_token},
            )
            conn = self._connection()
            with conn.begin():
                written = finish(conn)
        else:
            try:
                repo.unlock(conn, job.job_id)
                conn.commit()
            except DBAPIError as exc:
                if not (exc.connection_invalidated or conn.invalidated):
                    raise
                self.abandon()  # the lock went with the session
        if written:
            return True
        with conn.begin():
            now = repo.get_job(conn, job.job_id) or {}
        if now.get("claim_token") == job.claim_token:
            return True  # written already: a commit whose answer was lost with its connection
        self.claims_lost += 1
        log.warning(
            "job outcome not written: the job was claimed again (its lease connection "
            "dropped) and the other worker's outcome stands",
            extra={
                "job_id": job.job_id,
                "kind": job.kind,
                "claim_token": job.claim_token,
                "now_claim_token": now.get("claim_token"),
                "now_status": now.get("status"),
                "now_locked_by": now.get("locked_by"),
            },
        )
        return False

    def run_once(self) -> bool:
        """Claim and run one job; False when there was none (or this worker pauses)."""
        if time.monotonic() < self.paused_until:
            return False
        job = self.claim()
        if job is None:
            return False
        handler = self.handlers.get(job.kind, _unknown_kind)
        job_id, token = job.job_id, job.claim_token
        try:
            handler(job)
        except NotForThisWorker as exc:
            log.warning("job put back: %s", exc, extra={"job_id": job_id, "kind": job.kind})
            self._release(job, lambda c: repo.put_back(c, job_id, token))
            self.paused_until = time.monotonic() + PAUSE_S
            return False
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc)[:500]}"
            log.warning(
                "job failed",
                extra={
                    "job_id": job_id,
                    "kind": job.kind,
                    "attempt": job.attempt,
                    "error": type(exc).__name__,
                },
            )
            if job.attempt < job.max_attempts and not isinstance(exc, JobRefused):
                delay = self.retry_base_s * 2 ** (job.attempt - 1)
                self._release(job, lambda c: repo.retry_later(c, job_id, token, error, delay))
            else:
                failed = self._release(job, lambda c: repo.mark_failed(c, job_id, token, error))
                # only when the failure is this worker's word (not a job claimed again)
                if failed:
                    self._report_failed(job, error)
            return True
        self._release(job, lambda c: repo.mark_succeeded(c, job_id, token))
        return True


class JobRunner(Protocol):
    """What the app holds of its job workers: threads here, or the worker process."""

    def wake(self) -> None: ...

    def stop(self) -> None: ...


class JobWorkers:
    """``count`` worker threads in this process; ``wake`` cuts a poll short after enqueue."""

    def __init__(
        self,
        database: Database,
        handlers: Mapping[str, Handler],
        *,
        count: int,
        poll_s: float,
        retry_base_s: float,
        on_failed: OnFailed | None = None,
    ) -> None:
        self._workers = [
            JobWorker(database, handlers, retry_base_s=retry_base_s, on_failed=on_failed)
            for _ in range(count)
        ]
        self._poll_s = poll_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for worker in self._workers:
            thread = threading.Thread(
                target=self._loop, args=(worker,), name=f"ewall-job-{worker.name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        self._wake.set()

    def _loop(self, worker: JobWorker) -> None:
        failures = Failures(self._poll_s)
        while not self._stop.is_set():
            wait = self._poll_s
            try:
                busy = worker.run_once()
                failures.succeeded(log, "job worker claims again")
            except Exception as exc:  # the database went away: back off, then try again
                wait = failures.failed(log, "job worker could not claim", exc)
                worker.abandon()
                busy = False
            if not busy:
                self._wake.wait(wait)
                self._wake.clear()
        worker.close()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)


__all__ = [
    "Handler",
    "Job",
    "JobRefused",
    "JobRunner",
    "JobWorker",
    "JobWorkers",
    "NotForThisWorker",
    "OnFailed",
]
