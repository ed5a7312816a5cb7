"""create_app and the lifespan: database, encoder, resolver and the re-tag worker."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response

from app import __version__
from app.api import include_routers
from app.audit.refusals import install_throttle_audit
from app.audit.schedule import CheckpointSchedule
from app.auth.service import TokenVerifier
from app.chunks import service as chunks_service
from app.console.oidc import OidcClient
from app.db import migrate
from app.db.engine import REQUIRED_ENCODING, Database
from app.db.replicas import ReplicaSet
from app.embeddings import Embedder
from app.errors import envelope, install_error_handlers
from app.guard import RequestGuard
from app.head import HeadAsGet
from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.ingest.pipeline import IngestPipeline
from app.jobs.queue import RETRY_BASE_S, JobRunner, JobWorkers
from app.jobs.supervisor import WorkerSupervisor
from app.matrix import rekey
from app.metrics import Metrics, install_request_middleware
from app.readiness import Readiness
from app.reembed.service import awaiting_switch, claim_live_model, live_model, model_not_live
from app.resources import Resources
from app.search.replica import ReplicaSnapshots
from app.settings import Settings
from app.walls.resolution import AccessResolver
from app.walls.retag import RetagWorker

log = logging.getLogger("ewall.main")


class StartupError(RuntimeError):
    """A configuration problem that must stop the service with a clear message."""


def advise_layout(database: Database) -> str | None:
    """Log what the measurements advise for the chunks layout at this size (docs/scale-out.md);
    converting is the operator's step, so the service only says so."""
    try:
        advised = chunks_service.startup_advice(database)
    except Exception:  # advice only: a start-up must not fail on it
        log.warning("could not read the chunks layout", exc_info=True)
        return None
    if advised is not None:
        log.warning("chunks layout: %s", advised)
    return advised


def check_dimensions(
    settings: Settings, database: Database, model_dim: int, model_id: str | None = None
) -> None:
    """The model fits the database: its dimension is the column's and (with ``model_id``)
    it is the live model, claimed here on a database that has none recorded yet. A model
    that an active re-embed targets may start before the switch: it answers 503 and is not
    ready until then (start the new services early, so that the switch costs no downtime)."""
    column = migrate.embedding_dimension(database)
    waiting = model_id is not None and awaiting_switch(database, model_id, model_dim)
    if model_dim != settings.embedding_dim:
        raise StartupError(
            f"The embedding model {settings.embedding_model!r} produces {model_dim}-dimensional "
            f"vectors but EWALL_EMBEDDING_DIM is {settings.embedding_dim}. Set "
            f"EWALL_EMBEDDING_DIM={model_dim} on a new database, or choose a "
            f"{settings.embedding_dim}-dimensional model."
        )
    if column is not None and column != model_dim and not waiting:
        live = live_model(database) if model_id is not None else None
        hint = (
            f" The live model is {live.model_id!r} (EWALL_EMBEDDING_MODEL={live.model_name!r})."
            if live is not None and live.model_id is not None
            else ""
        )
        raise StartupError(
            f"chunks.embedding is vector({column}) but the model {settings.embedding_model!r} "
            f"produces {model_dim} dimensions. Use a database created for this model (the "
            f"migration reads EWALL_EMBEDDING_DIM), re-embed it (`ewall reembed run`) or go "
            f"back to a {column}-d model.{hint}"
        )
    if model_id is None or waiting or column is None:
        return
    live = live_model(database)
    if live.model_id is None:
        live = claim_live_model(database, model_id, settings.embedding_model, model_dim)
    if live.model_id != model_id:
        raise StartupError(model_not_live(model_id, live).message)


def create_app(
    settings: Settings,
    database: Database,
    *,
    embedder: Any = None,
    start_worker: bool | None = None,
    job_process: bool = False,
    run_jobs: bool = True,
    on_shutdown: Callable[[], object] | None = None,
) -> FastAPI:
    """``job_process``: background jobs run in a supervised worker process (``ewall serve``
    passes ``EWALL_JOB_PROCESS``); otherwise in ``EWALL_JOB_WORKERS`` threads of this one.
    ``run_jobs`` False: neither (an API worker of `ewall serve --workers N` whose parent
    supervises the job process)."""
    metrics = Metrics()
    resources = Resources(
        settings=settings, database=database, verifier=TokenVerifier(settings), metrics=metrics
    )
    replicas = ReplicaSet(settings, database)  # empty unless EWALL_REPLICA_URLS is set
    if replicas:
        resources.replicas = replicas
        resources.replica_snapshots = ReplicaSnapshots()
        metrics.watch_replicas(replicas)
    if settings.oidc_issuer and settings.console_oidc_client_id:
        resources.console_oidc = OidcClient(settings, database)

    ids_look = rekey.IdsLook(database)  # at start, then again when the policy moved

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if embedder is None:
            resources.embedder = Embedder(settings)
        else:
            resources.embedder = embedder
        model = resources.require_embedder()
        check_dimensions(settings, database, model.dimension, model.model_id)
        advise_layout(database)
        rekey.warn_at_start(ids_look)
        resources.resolver = AccessResolver()
        resources.pipeline = IngestPipeline(database, resources.require_embedder(), settings)
        worker: RetagWorker | None = None
        schedule: CheckpointSchedule | None = None
        run_worker = settings.retag_worker if start_worker is None else start_worker
        if run_worker:
            worker = RetagWorker(database, settings)
            worker.start()
            # once per service, as the re-tag worker (app/audit/schedule.py)
            schedule = CheckpointSchedule(settings, database)
            schedule.start()
        resources.retag_worker = worker
        jobs: JobRunner | None = None
        if run_jobs and settings.job_workers > 0 and job_process:
            # jobs run in a supervised child process at a lower OS priority; no job
            # threads here (app/jobs/supervisor.py)
            supervisor = WorkerSupervisor(settings, database)
            supervisor.start()
            jobs = supervisor
        elif run_jobs and settings.job_workers > 0:
            threads = JobWorkers(
                database,
                ingest_handlers(resources),
                count=settings.job_workers,
                poll_s=settings.job_poll_s,
                retry_base_s=RETRY_BASE_S,
                on_failed=mark_run_failed(resources),
            )
            threads.start()
            jobs = threads
        resources.jobs = jobs
        app.state.resources = resources
        replicas.start()
        try:
            yield
        finally:
            replicas.stop()
            if schedule is not None:
                schedule.stop()
            if worker is not None:
                worker.stop()
            if jobs is not None:
                jobs.stop()
            resources.limiter.close()
            if on_shutdown is not None:
                on_shutdown()

    app = FastAPI(
        title="ewall",
        version=__version__,
        description="Retrieval with ethical walls, inside PostgreSQL.",
        lifespan=lifespan,
        # the API answers the paths it documents; a redirect from `/v1/walls/` would be built
        # from the request's Host header (http://evil.example/v1/walls)
        redirect_slashes=False,
    )
    app.state.resources = resources
    install_error_handlers(app)
    install_throttle_audit(app)
    # innermost: the routes see a HEAD as its GET (app/head.py)
    app.add_middleware(HeadAsGet)
    # added before the metrics, so it runs inside the request-id/metrics middleware (its
    # answers are logged)
    app.add_middleware(RequestGuard, settings=settings, verifier=resources.verifier)
    install_request_middleware(app, metrics)

    # async: answered on the event loop, never queued behind request threads that wait
    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    def readiness_checks() -> tuple[bool, dict[str, Any]]:
        checks: dict[str, Any] = {}
        checks["database"] = database.ping()
        # not UTF8: `ewall serve` refuses such a database; a worker attached to one never
        # serves (the migrations cannot reach head there either, but that says less)
        encoding = database.server_encoding
        encoding_ok = encoding in (None, REQUIRED_ENCODING)
        if checks["database"]:
            checks["database_encoding"] = {"encoding": encoding, "ok": encoding_ok}
        head = migrate.head_revision()
        try:
            current = migrate.current_revision(database.urls.app) if checks["database"] else None
        except Exception:  # reported as not ready, never as a 500
            log.warning("could not read the migration revision", exc_info=True)
            current = None
        checks["migrations"] = {"current": current, "head": head, "ok": current == head}
        model = resources.embedder
        checks["model"] = {
            "loaded": model is not None,
            "name": settings.embedding_model,
            "dim": getattr(model, "dimension", None),
        }
        dim_ok = False
        if model is not None and checks["database"]:
            try:
                column = migrate.embedding_dimension(database)
                dim_ok = column == model.dimension == settings.embedding_dim
            except Exception:
                log.warning("could not read the vector dimension", exc_info=True)
        checks["dimension_matches"] = dim_ok
        live_ok = False
        if model is not None and checks["database"]:
            try:
                live = live_model(database)
                checks["model"]["id"] = model.model_id
                checks["model"]["live"] = live.model_id
                live_ok = live.model_id == model.model_id
            except Exception:
                log.warning("could not read the live model", exc_info=True)
        checks["model_live"] = live_ok
        if checks["database"]:
            # informational: ids stored decomposed before the upgrade (app/matrix/rekey.py);
            # the service serves on, the firm decides when to re-key them
            stored = ids_look()
            if stored is not None:
                checks["ids_nfc"] = {"ok": not stored, "check": rekey.COMMAND}
        if replicas:
            # informational: a replica that is down or lagging only sends searches to the
            # primary, so it never makes the service unready
            checks["replicas"] = [s.as_dict() for s in replicas.states()]
        ready = bool(
            checks["database"]
            and encoding_ok
            and checks["migrations"]["ok"]
            and model is not None
            and dim_ok
            and live_ok
        )
        return ready, checks

    readiness = Readiness(readiness_checks)

    @app.get("/readyz", tags=["operations"])
    async def readyz() -> JSONResponse:
        ready, checks = await readiness.check()
        if ready:
            return JSONResponse({"status": "ready", "checks": checks})
        body = envelope("not_ready", "The service is not ready; see details.", checks)
        body.update({"status": "not_ready", "checks": checks})
        return JSONResponse(body, status_code=503)

    @app.get("/metrics", tags=["operations"])
    async def prometheus_metrics() -> Response:
        return metrics.render()

    include_routers(app)
    return app
