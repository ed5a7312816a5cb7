"""Long ingest work: any source by its registry name (an export folder, Rechtspraak XML, an
iManage or NetDocuments sync), run through the one run loop (`connectors.sync.run_source`).
Runs in the CLI (with a progress bar) or as a background job queued by POST
/v1/ingest/runs (app/ingest/jobs.py)."""

from __future__ import annotations

import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

from app.ingest.pipeline import IngestPipeline, IngestRun
from app.ingest.repository import connector_of_run
from app.settings import Settings
from connectors import registry
from connectors.state import SyncStateStore
from connectors.sync import ProgressCallback, SweepNotHeldError, confirm_source_sweep, run_source

PROGRESS_EVERY = 25  # items between progress writes to the run (and progress-bar updates)


def run_named_source(
    pipeline: IngestPipeline,
    settings: Settings,
    name: str,
    *,
    started_by: str,
    mode: str = "delta",
    path: Path | str | None = None,
    source_name: str | None = None,
    on_progress: ProgressCallback | None = None,
    run: IngestRun | None = None,
    reread: bool = False,
) -> dict[str, Any]:
    """Build the source ``name`` from the registry and run it once; returns the run's report.

    ``path``: the folder of a path-configured source (export folder, Rechtspraak).
    ``source_name``: the source stored with an export folder's documents (default "folder").
    ``mode``: "full" or "delta" (a source without a change listing always loads fully).
    ``reread``: a full crawl reads every document's content again, not only what the index
    does not hold as listed (`connectors.full_read`).
    Raises `connectors.registry.SourceNotConfiguredError` when the source cannot be built
    (unknown, unconfigured, no path) and FileNotFoundError for an export folder that is not
    there; trouble while reading the source ends the run as failed, with a report.
    """
    registry.check_configured(name, settings)
    extra: dict[str, Any] = {"pipeline": pipeline}
    if source_name is not None:
        extra["source"] = source_name
    with closing(registry.create(name, settings, path=path, **extra)) as source:
        return run_source(
            source,
            pipeline,
            SyncStateStore(pipeline.database),
            mode=mode,
            started_by=started_by,
            on_progress=on_progress,
            run=run,
            progress_every=PROGRESS_EVERY,
            sweep_max_fraction=settings.sweep_max_fraction,
            full_crawl_every_s=settings.full_crawl_every or None,
            security_pass_every_s=settings.security_pass_every,
            reread=reread,
            full_reads=settings.full_crawl_reads,
        )


def ingest_folder(
    pipeline: IngestPipeline,
    path: Path,
    *,
    started_by: str,
    source: str = "folder",
    on_progress: ProgressCallback | None = None,
    run: IngestRun | None = None,
) -> dict[str, Any]:
    """`run_named_source` for an export folder."""
    return run_named_source(
        pipeline,
        pipeline.settings,
        "folder",
        path=path,
        source_name=source,
        started_by=started_by,
        on_progress=on_progress,
        run=run,
    )


def confirm_sweep(
    pipeline: IngestPipeline, settings: Settings, run_id: uuid.UUID, *, started_by: str
) -> dict[str, Any]:
    """Apply the sweep that run ``run_id`` held (too many removals at once, see
    EWALL_SWEEP_MAX_FRACTION): every held id is point-checked again, then removed.

    Raises LookupError when there is no such run, `connectors.sync.SweepNotHeldError` when
    its sweep is not the one held (never held, already confirmed, superseded, or a run of a
    source that never sweeps).
    """
    with pipeline.database.transaction() as conn:
        name = connector_of_run(conn, run_id)
    if name is None:
        raise LookupError(f"no ingest run {run_id}")
    if name not in registry.REGISTRY or registry.needs_path(name):
        raise SweepNotHeldError(f"run {run_id} is a {name} run; it holds no sweep")
    with closing(registry.create(name, settings)) as source:
        return confirm_source_sweep(
            source,
            pipeline,
            SyncStateStore(pipeline.database),
            held_run_id=str(run_id),
            started_by=started_by,
        )
