"""The job claim's fence on the writes of an ingestion job's handler.

A job worker holds its claim by a session advisory lock on an idle lease connection
(app/jobs/queue.py). When that connection drops while the worker is alive, another worker
claims the job as an orphan and runs it beside the first; the queue then ignores the first
one's outcome (its claim token is no longer the row's), but its handler is still writing:
the document, its chunks, the run's events, counts and status.

So the run of a background push carries the claim (`JobClaim`: the job and the token its
claim raised ``jobs.claim_token`` to), and each of the handler's committing transactions
checks it first (`check`, or `transaction` for a transaction of its own): the job's row is
read FOR SHARE, and unless it still holds this token and runs, `JobClaimLostError` rolls the
transaction back and stops the handler. The share lock orders the write against a claim: a
claim's UPDATE waits for the write to commit (and the claim's FOR UPDATE SKIP LOCKED passes
the row over meanwhile), so a write that found its token commits before any other worker
owns the job, and every write after the claim finds the token raised.

A run without a claim (a push written at once, a CLI run, a connector run's documents)
checks nothing: the statement is not even sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from app.db.engine import Database
from app.ingest import repository
from app.jobs import repository as jobs

if TYPE_CHECKING:
    from app.ingest.pipeline import IngestRun


@dataclass(frozen=True)
class JobClaim:
    """The claim of a job that a run carries out (``Job.claim_token`` as claimed)."""

    job_id: int
    token: int


class JobClaimLostError(RuntimeError):
    """The job was claimed again by another worker (this worker's lease connection had
    dropped): this handler writes nothing more, and the other worker's writes stand."""


def check(conn: Connection, claim: JobClaim | None) -> None:
    """In a write transaction (``conn``), before it writes: go on only while ``claim`` is
    still the job's; its row stays share-locked until ``conn``'s transaction ends."""
    if claim is None:
        return
    now = jobs.check_claim(conn, claim.job_id)
    if now is not None and now.claim_token == claim.token and now.status == "running":
        return
    held = (
        f"claim {now.claim_token}, {now.status}, by {now.locked_by or 'nobody'}"
        if now is not None
        else "gone"
    )
    raise JobClaimLostError(
        f"job {claim.job_id} was claimed again (this claim {claim.token}; the job now: "
        f"{held}): its handler writes nothing more"
    )


@contextmanager
def transaction(database: Database, claim: JobClaim | None) -> Iterator[Connection]:
    """``database.transaction()`` whose first statement is `check`."""
    with database.transaction() as conn:
        check(conn, claim)
        yield conn


def superseded(conn: Connection, run: IngestRun) -> bool:
    """A background push's write, under the document's lock: `check` (after the document's
    lock, as every writer of a document locks it before a job row), then whether a later
    write of the document came first (it stands)."""
    check(conn, run.claim)
    return run.job_id is not None and bool(repository.job_superseded(conn, run.job_id))
