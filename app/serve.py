"""`ewall serve --workers N`: several API processes behind one address.

The parent does once what must not race: it starts the embedded PostgreSQL (when no
``EWALL_DATABASE_URL`` is set), applies the migrations, loads the model (exporting the query
encoder once) and claims the live model (``ewall serve`` in app/cli.py). It then runs what
must run once for the whole service, the re-tag worker, the scheduled audit checkpoints and
the supervised job worker process,
and hands the socket to uvicorn's process supervisor, which starts N API workers and restarts
one that dies. Each worker (``worker_app``) reads the same settings from the environment,
attaches to the same database without migrating (and, for the embedded server, without
starting or stopping it), loads its own copy of the model and serves; with
``EWALL_JOB_PROCESS=false`` each also runs its job threads (the queue is safe across
processes). Everything a request may need from another process (console sessions, OIDC
sign-ins, per-person limits, the signing keys in the data directory) is in the database or
the data directory, so any worker may answer any request.
"""

from __future__ import annotations

import logging

import uvicorn
from fastapi import FastAPI

from app.audit.schedule import CheckpointSchedule
from app.db.embedded import DATABASE_NAME, running_server_url
from app.db.engine import Database, DatabaseUrls
from app.http11 import uvicorn_options
from app.jobs.supervisor import WorkerSupervisor
from app.logging import configure_logging
from app.main import create_app
from app.settings import Settings, get_settings
from app.walls.retag import RetagWorker

log = logging.getLogger("ewall.serve")

WORKER_FACTORY = "app.serve:worker_app"
# A worker is ready only once it has loaded its model, which takes far longer than uvicorn's
# default 5 s: with that, a rolling restart (SIGHUP) killed every new worker as not ready and
# kept the old ones. Also how long a worker that stops answering the supervisor's ping lives.
WORKER_READY_S = 300


def attach_database(settings: Settings) -> Database:
    """The pool of an API worker: the configured database, or the parent's embedded server."""
    if settings.database_url:
        urls = DatabaseUrls(
            app=settings.database_url,
            migrations=settings.migrations_database_url or settings.database_url,
        )
    else:
        urls = DatabaseUrls(
            app=running_server_url(settings.data_dir, settings.app_role, DATABASE_NAME),
            migrations=running_server_url(settings.data_dir, "postgres", DATABASE_NAME),
        )
    return Database(
        urls,
        app_role=settings.app_role,
        pool_size=settings.pool_size,
        max_overflow=settings.pool_max_overflow,
        statement_timeout_ms=settings.statement_timeout_ms,
        prepare_marked=settings.db_prepare,
    )


def worker_app() -> FastAPI:
    """One API worker's app (uvicorn calls this in each worker process)."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    database = attach_database(settings)
    # the re-tag worker and the job process run once, in the parent (serve_workers)
    return create_app(
        settings,
        database,
        start_worker=False,
        run_jobs=not settings.job_process,
        on_shutdown=database.dispose,
    )


def serve_workers(
    settings: Settings, database: Database, host: str, port: int, workers: int
) -> None:
    """Run ``workers`` API processes on ``host:port`` until uvicorn's supervisor stops."""
    retag: RetagWorker | None = None
    schedule: CheckpointSchedule | None = None
    jobs: WorkerSupervisor | None = None
    if settings.retag_worker:
        retag = RetagWorker(database, settings)
        retag.start()
        schedule = CheckpointSchedule(settings, database)
        schedule.start()
    if settings.job_workers > 0 and settings.job_process:
        jobs = WorkerSupervisor(settings, database)
        jobs.start()
    try:
        uvicorn.run(
            WORKER_FACTORY,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            timeout_worker_healthcheck=WORKER_READY_S,
            **uvicorn_options(),
        )
    finally:
        if jobs is not None:
            jobs.stop()
        if schedule is not None:
            schedule.stop()
        if retag is not None:
            retag.stop()
