"""Ingestion as background jobs: a large pushed document and connector syncs.

Both handlers continue the ingest run that the route created (same run id, counts and
events so far), so ``GET /v1/ingest/runs/{id}`` shows one run however many attempts it
took. Re-running is safe: chunks are content-addressed, an unchanged document is skipped
without re-embedding, and a connector resumes from its saved cursors.

Running twice at once is not: a worker whose lease connection dropped runs on while another
claims the job again. A pushed document's run carries the claim, and each of its writes
commits only while the job is still this worker's (app/ingest/job_fence.py); a connector
run's sync state has its own fence (connectors/fence.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.errors import AppError
from app.ingest.job_fence import JobClaim
from app.ingest.pipeline import STORE_FAILED
from app.ingest.router import DOCUMENT_JOB, RUN_JOB, pipeline_for, to_source_document
from app.ingest.runs import run_named_source
from app.ingest.schemas import DocumentIn
from app.jobs.queue import Handler, Job, JobRefused, NotForThisWorker, OnFailed
from app.matrix.repository import person_inactive
from app.reembed.service import check_job_model
from app.resources import Resources
from connectors import registry
from connectors.registry import SourceNotConfiguredError

__all__ = ["DOCUMENT_JOB", "RUN_JOB", "ingest_handlers", "mark_run_failed"]


def ingest_handlers(resources: Resources) -> dict[str, Handler]:
    def ours() -> None:
        """The job is for a process whose encoder is the live model (NotForThisWorker
        puts it back for one, its attempt not counted)."""
        try:
            with resources.database.transaction() as conn:
                check_job_model(conn, resources.require_embedder().model_id)
        except AppError as exc:
            raise NotForThisWorker(exc.message) from exc

    def standing(job: Job) -> None:
        """A job acts for the admin who queued it, and starts (each attempt) only while the
        matrix does not mark them inactive: one deactivated after queuing a run (an export
        folder's, a crawl) kept the admin role through it. Refused, the run fails naming why;
        nothing is undone, and an active admin may start it again."""
        with resources.database.transaction() as conn:
            inactive = person_inactive(conn, job.person_id)
        if inactive:
            raise JobRefused(
                f"{job.person_id}, who queued this job, is inactive in the conflict matrix: "
                "the job was not started"
            )

    def document(job: Job) -> None:
        pipeline = pipeline_for(resources)
        run_id = _run_of(job)
        standing(job)
        ours()
        # every write of the run checks that the job is still this worker's (job_fence)
        run = pipeline.resume_run(run_id, JobClaim(job.job_id, job.claim_token))
        run.job_id = job.job_id  # its write yields to any write of the document since
        pipeline.progress(run, state="running", attempt=job.attempt)
        doc = to_source_document(DocumentIn.model_validate(job.payload["document"]))
        with _switched_while_running():
            outcome = pipeline.ingest(run, doc)
        if outcome.status == "superseded":
            pipeline.progress(run, state="done", document=outcome.as_dict())
            pipeline.finish_run(
                run, status="failed", error="superseded: a later write or delete of the "
                "document came first, and stands"
            )
            return
        if outcome.status == "error" and outcome.reason == STORE_FAILED:
            # the write failed on our side: the job is tried again (the run continues)
            raise RuntimeError("the document's write did not go through")
        pipeline.progress(run, state="done", document=outcome.as_dict())
        if outcome.status == "error":  # its one document not ingested (a small push: 422)
            pipeline.finish_run(run, status="failed", error=outcome.reason)
            return
        pipeline.finish_run(run)

    def connector_run(job: Job) -> None:
        pipeline = pipeline_for(resources)
        run_id = _run_of(job)
        standing(job)
        ours()
        run = pipeline.resume_run(run_id)
        pipeline.progress(run, state="running", attempt=job.attempt)
        name = str(job.payload["connector"])
        path = job.payload.get("path")
        # a crawl can run for hours; the run it closed as interrupted waits for the job
        with (
            _refused_when_unusable(),
            _switched_while_running(reopen=lambda: pipeline.resume_run(run.run_id)),
        ):
            report = run_named_source(
                pipeline,
                resources.settings,
                name,
                mode=str(job.payload.get("mode", "delta")),
                path=str(path) if path is not None else None,
                started_by=job.person_id,
                run=run,
            )
        if report.get("status") == "failed":
            reason = f"the {name} run failed: {report.get('error') or 'see the run'}"
            if registry.needs_path(name):
                # a folder on this host (gone, its sidecar unreadable) reads the same on the
                # next attempt: it was tried three times, the run "running" between them
                raise JobRefused(reason)
            # a DMS crawl is worth another attempt (its server may be back)
            raise RuntimeError(reason)

    return {DOCUMENT_JOB: document, RUN_JOB: connector_run}


def _run_of(job: Job) -> uuid.UUID:
    """The ingest run the job continues; one without a run is refused (no attempt has one)."""
    if job.run_id is None:
        raise JobRefused("an ingest job without its run")
    return job.run_id


@contextmanager
def _refused_when_unusable() -> Iterator[None]:
    """A source that cannot be built (its folder or the folder's sidecar gone since the
    route checked it, its setting unset since) fails the job at once with the reason: it
    was tried three times, the run reading "running" between the attempts."""
    try:
        yield
    except (FileNotFoundError, NotADirectoryError, SourceNotConfiguredError) as exc:
        raise JobRefused(str(exc)) from exc


@contextmanager
def _switched_while_running(reopen: Callable[[], object] | None = None) -> Iterator[None]:
    """A re-embed switched while the job ran: the job is for the new model's workers (put
    back, its attempt not counted; ``reopen`` the run for it), not a failure (a review found
    a connector run's job failed on its last attempt, the run with it)."""
    try:
        yield
    except AppError as exc:
        if exc.code == "model_not_live":
            if reopen is not None:
                reopen()
            raise NotForThisWorker(exc.message) from exc
        raise


def mark_run_failed(resources: Resources) -> OnFailed:
    """on_failed for the workers: the run ends ``failed`` with the job's last error."""

    def on_failed(job: Job, error: str) -> None:
        if job.run_id is None:
            return
        pipeline = pipeline_for(resources)
        run = pipeline.resume_run(job.run_id)
        pipeline.finish_run(run, status="failed", error=error[:500])

    return on_failed
