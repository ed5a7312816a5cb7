"""Long ingest work: export folders, DMS syncs, case law. Runs in the CLI (with a progress
bar) or as a background job queued by POST /v1/ingest/runs (app/ingest/jobs.py)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.ingest.pipeline import IngestPipeline, IngestRun
from app.settings import Settings

log = logging.getLogger("ewall.ingest.runs")

Progress = Callable[[int, int | None], None]


def ingest_folder(
    pipeline: IngestPipeline,
    path: Path,
    *,
    started_by: str,
    source: str = "folder",
    on_progress: Progress | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    from connectors.folder.connector import FolderConnector, FolderEntryError

    connector = FolderConnector(path, source=source)
    total = connector.count()
    run = run or pipeline.start_run("folder", {"path": str(path), "source": source}, started_by)
    pipeline.progress(run, total=total, done=0)
    done = 0
    try:
        for item in connector.load_all():
            if isinstance(item, FolderEntryError):
                pipeline.record_error(
                    run, source, item.external_id, item.reason, {"line": item.line}
                )
            else:
                pipeline.ingest(run, item)
            done += 1
            if on_progress is not None:
                on_progress(done, total)
            if done % 25 == 0:
                pipeline.progress(run, total=total, done=done)
        pipeline.progress(run, total=total, done=done)
    except Exception as exc:
        log.exception("folder ingest failed")
        return pipeline.finish_run(run, status="failed", error=type(exc).__name__)
    return pipeline.finish_run(run)


def ingest_connector(
    pipeline: IngestPipeline,
    settings: Settings,
    name: str,
    *,
    mode: str,
    started_by: str,
    on_progress: Progress | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    from connectors import registry, state, sync

    store = state.SyncStateStore(pipeline.database)
    # connectors hold an HTTP client and a worker pool: always close them
    with registry.create(name, settings) as connector:
        return sync.run_sync(
            name,
            connector,
            pipeline,
            store,
            mode=mode,
            started_by=started_by,
            on_progress=on_progress,
            run=run,
            sweep_max_fraction=settings.sweep_max_fraction,
            full_crawl_every_s=settings.full_crawl_every or None,
        )


def confirm_sweep(
    pipeline: IngestPipeline, settings: Settings, run_id: uuid.UUID, *, started_by: str
) -> dict[str, Any]:
    """Apply the sweep that run ``run_id`` held (too many removals at once, see
    EWALL_SWEEP_MAX_FRACTION): every held id is point-checked again, then removed.

    Raises LookupError when there is no such run, `connectors.sync.SweepNotHeldError` when
    its sweep is not the one held (never held, already confirmed, or superseded).
    """
    from sqlalchemy import text

    from connectors import registry, state, sync

    with pipeline.database.transaction() as conn:
        name = conn.execute(
            text("SELECT connector FROM ingest_runs WHERE run_id = :r"), {"r": run_id}
        ).scalar_one_or_none()
    if name is None:
        raise LookupError(f"no ingest run {run_id}")
    if name not in ("imanage", "netdocuments"):
        raise sync.SweepNotHeldError(f"run {run_id} is a {name} run; it holds no sweep")
    store = state.SyncStateStore(pipeline.database)
    with registry.create(name, settings) as connector:
        return sync.confirm_sweep(
            name, connector, pipeline, store, held_run_id=str(run_id), started_by=started_by
        )


def ingest_rechtspraak(
    pipeline: IngestPipeline,
    path: Path,
    *,
    started_by: str,
    on_progress: Progress | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    from app.caselaw.ingest import ingest_rechtspraak_folder

    return ingest_rechtspraak_folder(
        pipeline, path, started_by=started_by, on_progress=on_progress, run=run
    )
