"""The job worker process: ``ewall worker`` (docs/isolation.md).

Runs the background jobs (large documents, connector runs) outside the API process, so their
Python work (extraction, chunking, the pipeline's bookkeeping) never holds the GIL that the
search threads need, and at a lower OS priority (``EWALL_JOB_PROCESS_NICE``), so the kernel
runs the query path first. Two ways to start it:

- ``ewall worker``: a service of its own (docker-compose's ``worker``); stops on SIGTERM or
  SIGINT.
- ``ewall worker --supervised``: started by ``ewall serve`` (app/jobs/supervisor.py), which
  writes the settings as one JSON line on stdin and keeps the pipe open: ``wake`` lines cut
  the poll short, and end-of-file or a new parent process (the API process is gone) stops
  the worker.

Either way it loads the model at normal priority, lowers its own priority, prints ``ready``
on stdout and runs ``EWALL_JOB_WORKERS`` (at least one) worker threads until told to stop.
While people search, its documents give way to them (``EWALL_JOB_SEARCH_DUTY``,
app/jobs/pacing.py). A
job still running then is left to the queue: its advisory lock ends with this process's
sessions, and the next worker claims it again (the handlers are idempotent).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from types import FrameType
from typing import IO

from app.auth.service import TokenVerifier
from app.db.backend_priority import lower_local_backends
from app.db.engine import Database
from app.embeddings import Embedder
from app.ingest.jobs import ingest_handlers, mark_run_failed
from app.ingest.pipeline import IngestPipeline
from app.jobs.pacing import PAUSE_MAX_S, QUIET_S, SearchPacer
from app.jobs.queue import RETRY_BASE_S, JobWorkers
from app.jobs.supervisor import READY, STOP_S
from app.main import check_dimensions
from app.resources import Resources
from app.settings import Settings

log = logging.getLogger("ewall.jobs")


def read_settings(stream: IO[str]) -> Settings | None:
    """The supervisor's first line; None when the pipe closed before it came."""
    line = stream.readline()
    if not line.strip():
        return None
    return Settings(**json.loads(line))


def _listen(commands: IO[str], workers: JobWorkers, stop: threading.Event) -> None:
    try:
        for line in commands:
            if line.strip() == "wake":
                workers.wake()
    except (OSError, ValueError):
        pass
    stop.set()  # the supervisor (the API process) is gone


def run_worker(
    settings: Settings,
    database: Database,
    *,
    commands: IO[str] | None = None,
    parent_pid: int | None = None,
) -> int:
    """Serve jobs until SIGTERM/SIGINT, or until ``commands`` ends (supervised).

    Supervised, the worker also stops once ``parent_pid`` (the API process; by default the
    parent it had on entry) is no longer its parent.
    """
    stop = threading.Event()
    # taken first: a parent read only after the model load could already be init, when the
    # API process was killed in between (seen on a busy CI machine)
    parent = (parent_pid or os.getppid()) if commands is not None else None

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if settings.job_process_db_nice:
        # before the first connection of this process's pool; any made earlier are dropped
        lower_local_backends(database, settings.job_process_nice)
        database.engine.dispose()
    # the model loads at normal priority (at a low one, on a busy machine, it takes minutes)
    embedder = Embedder(settings)
    check_dimensions(settings, database, embedder.dimension)
    if settings.embedding_bulk_process:
        # start the bulk encoder child now (it loads its model at normal priority), not
        # in the middle of the first job
        embedder.embed_passages(["warm up"])
    if settings.job_process_nice > 0:
        os.nice(settings.job_process_nice)
    resources = Resources(settings=settings, database=database, verifier=TokenVerifier(settings))
    resources.embedder = embedder
    resources.pipeline = IngestPipeline(database, embedder, settings)
    # documents give way to searches (app/jobs/pacing.py); the pauses end with the process
    pacer = SearchPacer.for_database(
        database,
        duty=settings.job_search_duty,
        pause_max_s=PAUSE_MAX_S,
        quiet_s=QUIET_S,
        stop=stop,
    )
    resources.pipeline.pacer = pacer
    workers = JobWorkers(
        database,
        ingest_handlers(resources),
        count=max(1, settings.job_workers),
        poll_s=settings.job_poll_s,
        retry_base_s=RETRY_BASE_S,
        on_failed=mark_run_failed(resources),
    )
    resources.jobs = workers
    if stop.is_set():
        return 0
    workers.start()
    sys.stdout.write(READY + "\n")  # the supervisor's cue (wait_ready)
    sys.stdout.flush()
    log.info(
        "job worker process ready",
        extra={"pid": os.getpid(), "nice": os.nice(0), "workers": max(1, settings.job_workers)},
    )
    if commands is not None:
        threading.Thread(
            target=_listen,
            args=(commands, workers, stop),
            name="ewall-job-commands",
            daemon=True,
        ).start()
    # supervised: the API process is our parent. Its pipe closing says it is gone, unless
    # another process still holds the pipe's other end (a child it forked), so its pid is
    # watched too: a dead parent's children are handed to another (init or a subreaper).
    while not stop.wait(0.5):
        if parent is not None and os.getppid() != parent:
            log.warning("the API process is gone; the job worker process stops")
            stop.set()
    log.info(
        "job worker process stopping",
        extra={"pid": os.getpid(), "pauses": pacer.pauses, "paused_s": round(pacer.paused_s, 1)},
    )
    # a job in flight gets a moment to finish; otherwise the next worker takes it over
    workers.stop(timeout=max(0.1, STOP_S - 1.0))
    # no polite close of the encoder: its bulk child (at nice 19, on a busy machine slow to
    # get the CPU for a goodbye) stops by itself when its pipe closes as this process exits
    return 0
