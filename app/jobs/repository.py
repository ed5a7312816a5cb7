"""The job table (sql/jobs.sql): enqueueing, claiming with advisory locks, finishing.

The claim protocol itself (which statement when, and on which connection) is
``app.jobs.queue``; these functions run one statement each.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import Connection

from app.audit.chain import canonical_json
from app.db import sqlfiles
from app.db.locks import LockNamespace


@dataclass(frozen=True)
class Job:
    job_id: int
    kind: str
    person_id: str
    run_id: uuid.UUID | None
    payload: Mapping[str, Any]
    attempt: int
    max_attempts: int
    # the claim's fencing token (jobs.claim_token as this claim raised it): the worker's and
    # the handler's writes go through only while the row still holds it
    claim_token: int


class Candidate(NamedTuple):
    job_id: int
    status: str
    attempts: int
    max_attempts: int
    claim_token: int


class Claim(NamedTuple):
    """A job row's claim as it stands (``check_claim``)."""

    claim_token: int
    status: str
    locked_by: str | None


def enqueue(
    conn: Connection,
    *,
    kind: str,
    person_id: str,
    payload: Mapping[str, Any],
    max_attempts: int,
    run_id: uuid.UUID | None = None,
) -> int:
    """Writes a job row in the caller's transaction: the job exists exactly when that
    transaction commits."""
    job_id = conn.execute(
        sqlfiles.query("jobs.enqueue"),
        {
            "kind": kind,
            "person_id": person_id,
            "run_id": run_id,
            "payload": canonical_json(dict(payload)),
            "max_attempts": max_attempts,
        },
    ).scalar_one()
    return int(job_id)


def pending_for_person(conn: Connection, person_id: str) -> int:
    """Queued or running jobs of the person; holds the person's enqueue lock until the
    caller's transaction ends (check, then enqueue, without a race)."""
    conn.execute(
        sqlfiles.query("jobs.lock_person_queue"),
        {"namespace": int(LockNamespace.PERSON_QUEUE), "person_id": person_id},
    )
    return int(
        conn.execute(
            sqlfiles.query("jobs.pending_for_person"), {"person_id": person_id}
        ).scalar_one()
    )


def job_of_run(conn: Connection, run_id: uuid.UUID) -> dict[str, Any] | None:
    """The latest job of an ingest run, its times as ISO strings (for the run report)."""
    row = conn.execute(sqlfiles.query("jobs.job_of_run"), {"run_id": run_id}).mappings().first()
    if row is None:
        return None
    out = dict(row)
    for name in ("created_at", "started_at", "finished_at", "run_after"):
        if out.get(name) is not None:
            out[name] = out[name].isoformat()
    return out


def get_job(conn: Connection, job_id: int) -> dict[str, Any] | None:
    row = conn.execute(sqlfiles.query("jobs.get_job"), {"job_id": job_id}).mappings().first()
    return dict(row) if row is not None else None


def claim_candidates(conn: Connection, limit: int) -> list[Candidate]:
    """Orphaned running jobs first, then due queued ones; the rows stay locked
    (``FOR UPDATE SKIP LOCKED``) until the transaction ends."""
    rows = conn.execute(sqlfiles.query("jobs.claim_candidates"), {"limit": limit})
    return [
        Candidate(
            int(r.job_id), str(r.status), int(r.attempts), int(r.max_attempts),
            int(r.claim_token),
        )
        for r in rows
    ]


def _lock_key(job_id: int) -> dict[str, int]:
    return {"namespace": int(LockNamespace.JOB), "job_id": job_id}


def try_lock(conn: Connection, job_id: int) -> bool:
    """Takes the job's session advisory lock; False when a living worker holds it."""
    return bool(conn.execute(sqlfiles.query("jobs.try_lock"), _lock_key(job_id)).scalar_one())


def unlock(conn: Connection, job_id: int) -> None:
    conn.execute(sqlfiles.query("jobs.unlock"), _lock_key(job_id))


def unlock_all(conn: Connection) -> None:
    conn.execute(sqlfiles.query("jobs.unlock_all"))


def backend_pid(conn: Connection) -> int:
    return int(conn.execute(sqlfiles.query("jobs.backend_pid")).scalar_one())


def session_holds_locks(conn: Connection, pid: int) -> bool:
    return bool(conn.execute(sqlfiles.query("jobs.session_holds_locks"), {"pid": pid}).scalar_one())


def claim(conn: Connection, job_id: int, worker: str) -> Job:
    row = conn.execute(sqlfiles.query("jobs.claim"), {"job_id": job_id, "worker": worker}).one()
    return _job(row)


def _job(row: Any) -> Job:
    return Job(
        job_id=int(row.job_id),
        kind=str(row.kind),
        person_id=str(row.person_id),
        run_id=row.run_id,
        payload=dict(row.payload),
        attempt=int(row.attempts),
        max_attempts=int(row.max_attempts),
        claim_token=int(row.claim_token),
    )


def check_claim(conn: Connection, job_id: int) -> Claim | None:
    """The job's claim now, its row share-locked until the transaction ends (a claim's
    UPDATE waits for it); None when the row is gone."""
    row = conn.execute(sqlfiles.query("jobs.check_claim"), {"job_id": job_id}).first()
    if row is None:
        return None
    return Claim(int(row.claim_token), str(row.status), row.locked_by)


# The outcome writes: each changes the row only while it is still the claim ``token`` (the
# row running with that token), and says whether it did.


def _outcome(conn: Connection, name: str, job_id: int, token: int, **params: Any) -> bool:
    done = conn.execute(
        sqlfiles.query(name), {"job_id": job_id, "claim_token": token, **params}
    )
    return done.rowcount == 1


def mark_succeeded(conn: Connection, job_id: int, token: int) -> bool:
    return _outcome(conn, "jobs.succeed", job_id, token)


def mark_failed(conn: Connection, job_id: int, token: int, error: str) -> bool:
    return _outcome(conn, "jobs.fail", job_id, token, error=error)


def fail_orphan(conn: Connection, job_id: int, token: int, error: str) -> Job | None:
    """Another worker's claim ``token``, ended failed (it stopped during the last allowed
    attempt); raises the token, so that worker, alive after all, writes no more. The job as
    failed, or None when the row was no longer that claim."""
    row = conn.execute(
        sqlfiles.query("jobs.fail_orphan"),
        {"job_id": job_id, "claim_token": token, "error": error},
    ).first()
    return None if row is None else _job(row)


def retry_later(conn: Connection, job_id: int, token: int, error: str, delay_s: float) -> bool:
    return _outcome(conn, "jobs.retry_later", job_id, token, error=error, delay_s=delay_s)


def put_back(conn: Connection, job_id: int, token: int) -> bool:
    return _outcome(conn, "jobs.put_back", job_id, token)


def retrieval_head(conn: Connection) -> int:
    """The sequence number of the last audited retrieval (0 before the first)."""
    seq = conn.execute(sqlfiles.query("jobs.retrieval_head")).scalar_one_or_none()
    return int(seq or 0)
