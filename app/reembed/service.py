"""Re-embed every chunk with another model, online, and the live-model checks.

A run (``ewall reembed --model NAME``) goes through its phases, each resumable:

1. ``filling``: the owner adds ``chunks.embedding_next vector(<new dimension>)`` and
   ``embedding_next_model`` (catalog-only) and a partial index on the chunks still without a
   new vector; batches of those are encoded with the new model (passage prompt) and written
   with the run's progress, one transaction per batch. Searches and ingestion go on, on the
   old column; a crash loses at most one batch and re-running continues with what is left.
2. ``indexing``: the new column's HNSW index is built CONCURRENTLY (reads and writes go on).
   An interrupted build leaves an invalid index, which the next run drops and rebuilds.
3. ``switching``: chunks ingested meanwhile (old model only) are caught up; then ONE short
   transaction: the live model row, an ACCESS EXCLUSIVE lock on chunks under a lock_timeout
   (so searches wait at most that long; on timeout the switch retries), a last check that
   no chunk lacks its new vector (else catch up and retry), and catalog-only renames that
   make the new column ``embedding``. Status ``switched`` commits with it.
4. NOT NULL is restored on ``embedding`` without a long lock (a NOT VALID check, validated
   while reads and writes go on, lets SET NOT NULL skip its scan).

The live model (``embedding_live``) is what queries must be encoded with: a search takes
ACCESS SHARE on chunks and then reads it, so it sees either the old columns and model or the
new ones; a service whose model is not the live one answers 503 ``model_not_live`` (fail
closed), and ingestion refuses to write vectors of another model.

Partitioned ``chunks`` (hash partitions): CREATE INDEX CONCURRENTLY is not supported on a
partitioned parent, so each leaf partition's index is built CONCURRENTLY and attached to an
index created ON ONLY the parent; the columns are added and renamed on the parent.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from psycopg import errors as pg_errors
from sqlalchemy import Connection, Engine, create_engine, pool
from sqlalchemy.exc import DBAPIError

from app.db.engine import Database, sqlalchemy_url
from app.embeddings import Embedder, passage_input, vector_literal
from app.errors import AppError
from app.reembed import repository
from app.reembed.repository import HNSW_INDEX, MISSING_INDEX, LiveModel, Run
from app.walls.access import mark_writer

log = logging.getLogger("ewall.reembed")

Progress = Callable[[str, int, int], None]  # (phase, done, total)


# --- the live model: what queries and new chunks must be encoded with ---------------------


def model_not_live(own: str, live: LiveModel) -> AppError:
    return AppError(
        "model_not_live",
        f"The chunks' embeddings are from the model {live.model_id!r} but this service "
        f"encodes with {own!r}; it refuses to rank with mismatched vectors. Restart it with "
        f"EWALL_EMBEDDING_MODEL={live.model_name or live.model_id!r} and "
        f"EWALL_EMBEDDING_DIM={live.dimension} (`ewall reembed status` shows the live model), "
        f"or move the chunks to {own!r} first with `ewall reembed run`.",
        503,
        {"live_model": live.model_id, "service_model": own},
    )


def claim_live_model(
    database: Database, model_id: str, model_name: str, dimension: int
) -> LiveModel:
    """At startup: record this model as live when none is yet (a database from before model
    ids were recorded, or a new one), and return the live model."""
    with database.transaction() as conn:
        repository.claim_live_model(conn, model_id, model_name, dimension)
        return repository.live_model(conn)


def live_model(database: Database) -> LiveModel:
    with database.transaction() as conn:
        return repository.live_model(conn)


def awaiting_switch(database: Database, model_id: str, dimension: int) -> bool:
    """An active re-embed targets this model: a service started with it before the switch
    may start (it answers 503 and is not ready until the switch)."""
    with database.transaction() as conn:
        run = repository.active_run(conn)
    return run is not None and run.target_model_id == model_id and run.dimension == dimension


def check_query_model(conn: Connection, model_id: str | None) -> datetime:
    """In a search's transaction, before it reads chunks: the query was encoded with the
    live model (``model_id`` None: no encoder, nothing to check). ACCESS SHARE on chunks
    first, so a switch is either fully visible or not started (it waits for this
    transaction). Returns the database's clock, read by the same statement: the instant the
    search decides access at (app/db/clock.py)."""
    if model_id is not None:
        repository.lock_chunks_shared(conn)
    live, at = repository.live_model_at(conn)
    if model_id is not None and live.model_id is not None and live.model_id != model_id:
        raise model_not_live(model_id, live)
    return at


def check_job_model(conn: Connection, model_id: str) -> None:
    """Before ingestion is queued or a queued one runs: this process would write the live
    model's vectors (none live yet: its first write claims it). After a switch, a service
    left on the old model must neither accept background work it could never finish nor
    spend the attempts of jobs the new model's processes will run."""
    live = repository.live_model(conn)
    if live.model_id is not None and live.model_id != model_id:
        raise model_not_live(model_id, live)


def check_write_model(conn: Connection, model_id: str, model_name: str, dimension: int) -> None:
    """In an ingestion write transaction: the new vectors are the live model's (a switch in
    progress is waited for, then seen)."""
    live = repository.live_model_for_share(conn)
    if live.model_id is None:
        repository.claim_live_model(conn, model_id, model_name, dimension)
        return
    if live.model_id != model_id:
        raise model_not_live(model_id, live)


# --- the re-embed run ----------------------------------------------------------------------


@dataclass
class ReembedReport:
    run_id: str | None
    target_model_id: str | None
    status: str
    total: int = 0
    done: int = 0
    encoded: int = 0  # texts this invocation encoded (a resumed run encodes only the rest)
    batches: int = 0
    switch_attempts: int = 0
    switch_ms: float = 0.0  # the switch transaction, lock wait included (searches wait <= this)
    live_model: dict[str, Any] = field(default_factory=dict)
    chunk_models: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def owner_engine(database: Database, *, autocommit: bool) -> Engine:
    """The schema owner's connections (migrations URL): DDL, CONCURRENTLY in autocommit."""
    return create_engine(
        sqlalchemy_url(database.urls.migrations),
        poolclass=pool.NullPool,
        isolation_level="AUTOCOMMIT" if autocommit else "READ COMMITTED",
        connect_args={"prepare_threshold": None, "application_name": "ewall-reembed"},
    )


SWITCH_ATTEMPTS = 20  # tries of a DDL step's brief lock (lock_timeout each), then give up


def _lock_timeout(exc: BaseException) -> bool:
    """A lock not had in time (or a deadlock), raised by SQLAlchemy (wrapped) or by the
    driver itself (a DDL block runs on the raw cursor: ``repository.ddl``)."""
    orig = getattr(exc, "orig", exc)
    return isinstance(orig, (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected))


def ddl_retrying(conn: Connection, block: str, attempts: int, **names: str | int) -> None:
    """A DDL step that needs a brief ACCESS EXCLUSIVE lock: under the lock_timeout, so a
    long search is never queued behind; tried again after a pause, ``attempts`` times."""
    for attempt in range(1, attempts + 1):
        try:
            repository.ddl(conn, block, **names)
            return
        except (DBAPIError, pg_errors.Error) as exc:
            if not _lock_timeout(exc) or attempt == attempts:
                raise
            log.info("lock not available for %s; retrying", block)
            time.sleep(min(0.05 * attempt, 1.0))


class Reembedder:
    """One re-embed of every chunk with ``target`` (see the module docstring)."""

    def __init__(
        self,
        database: Database,
        target: Embedder,
        *,
        batch_size: int = 256,
        lock_timeout_ms: int = 2000,
        pause_s: float = 0.0,
        switch_attempts: int = SWITCH_ATTEMPTS,
        progress: Progress | None = None,
        refresh: bool = False,
    ) -> None:
        self.database = database
        self.target = target
        # re-encode under the live model itself: what the encoder reads for a chunk changed
        # (its document's context, docs/quality.md eleventh round), the model did not
        self.refresh = refresh
        self.batch_size = batch_size
        self.lock_timeout_ms = lock_timeout_ms
        self.pause_s = pause_s
        self.switch_attempts = switch_attempts
        self.progress = progress
        self.encoded = 0
        self.batches = 0
        self.attempts = 0
        self.switch_ms = 0.0

    # --- owner connections -------------------------------------------------------------

    @contextmanager
    def _owner(self, *, lock_timeout: bool = True) -> Iterator[Connection]:
        engine = owner_engine(self.database, autocommit=True)
        try:
            with engine.connect() as conn:
                repository.set_lock_timeout(conn, self.lock_timeout_ms if lock_timeout else 0)
                yield conn
        finally:
            engine.dispose()

    def _ddl_retrying(self, conn: Connection, block: str, **names: str | int) -> None:
        ddl_retrying(conn, block, self.switch_attempts, **names)

    def _ensure_index(self, name: str, block: str, parent_block: str, suffix: str) -> None:
        """Build an index CONCURRENTLY on chunks or, when chunks is partitioned, on each leaf
        partition, attached to an index made ON ONLY the parent. An invalid index (an
        interrupted build) is dropped and built again."""
        with self._owner(lock_timeout=False) as conn:
            layout = repository.layout(conn, suffix)
            if not layout.partitioned:
                if repository.index_valid(conn, name) is False:
                    repository.ddl(conn, "drop_index", index=name)
                if repository.index_valid(conn, name) is None:
                    repository.ddl(conn, block, index=name, table="chunks")
                return
            repository.ddl(conn, parent_block, index=name)
            for table, index in zip(layout.partitions, layout.partition_indexes, strict=True):
                if repository.index_valid(conn, index) is False:
                    repository.ddl(conn, "drop_index", index=index)
                if repository.index_valid(conn, index) is None:
                    repository.ddl(conn, block, index=index, table=table)
                if not repository.index_attached(conn, name, index):
                    repository.ddl(conn, "attach_index", parent=name, child=index)

    # --- phases --------------------------------------------------------------------------

    def start(self, started_by: str) -> Run:
        """The active run for this target (resumed), or a new one; 409 when another
        target's run is active or the target is live already (unless ``refresh``)."""
        with self.database.transaction() as conn:
            live = repository.live_model(conn)
            active = repository.active_run(conn)
            if active is not None:
                if active.target_model_id != self.target.model_id:
                    raise AppError(
                        "reembed_in_progress",
                        f"A re-embed to {active.target_model_id!r} is in progress "
                        f"({active.done}/{active.total}); resume it or cancel it first "
                        "(`ewall reembed cancel`).",
                        409,
                    )
                return active
            if live.model_id == self.target.model_id and not self.refresh:
                raise AppError(
                    "reembed_not_needed",
                    f"{self.target.model_id!r} is the live model already; `ewall reembed run "
                    "MODEL --refresh` re-encodes every chunk under it.",
                    409,
                )
            repository.insert_run(
                conn,
                {
                    "run_id": uuid.uuid4(),
                    "target_model": self.target.name,
                    "target_model_id": self.target.model_id,
                    "dimension": self.target.dimension,
                    "from_model_id": live.model_id,
                    "total": 0,
                    "started_by": started_by,
                },
            )
            run = repository.active_run(conn)
        if run is None:  # pragma: no cover - inserted just above
            raise RuntimeError("the re-embed run was not recorded")
        return run

    def prepare(self, run: Run) -> None:
        """The new columns (the new model's dimension) and the index of missing vectors."""
        with self._owner() as conn:
            existing = repository.column_dimension(conn, "embedding_next")
            if existing is not None and existing != run.dimension:
                # left by a cancelled run whose drop did not finish: not this run's vectors
                self._ddl_retrying(conn, "drop_next_columns")
            self._ddl_retrying(conn, "add_next_columns", dim=run.dimension)
            self._ddl_retrying(conn, "forget_next_trigger")
        self._ensure_index(
            MISSING_INDEX, "create_missing_index", "create_missing_index_parent",
            "embedding_next_missing",
        )  # fmt: skip

    def _counts(self, run: Run) -> tuple[int, int]:
        with self.database.transaction() as conn:
            mark_writer(conn)  # counts every chunk (numbers only)
            total, missing = repository.count_chunks(conn)
            repository.set_run_counts(conn, run.run_id, total, total - missing)
        return total, total - missing

    def fill(self, run: Run, *, max_batches: int | None = None) -> int:
        """Encode and write the chunks still without a new vector; returns how many."""
        total, done = self._counts(run)
        written_total = 0
        batches = 0
        previous: list[tuple[str, str]] = []
        while max_batches is None or batches < max_batches:
            with self.database.transaction() as conn:
                mark_writer(conn)  # reads every chunk's text to write its new vector
                batch = repository.missing_batch(conn, self.batch_size)
            if not batch:
                break
            # the same rows, unchanged, as the batch that wrote nothing: never spin (a row that
            # changed since is read again with its new version and is progress)
            read = [(p.chunk_id, p.row_version) for p in batch]
            if read == previous:
                raise RuntimeError(f"re-embed made no progress on {read[:3]}...")
            limit = self.target.max_passage_tokens
            inputs = [
                passage_input(self.target, limit, p.body, p.section_path, p.title, p.summary)
                for p in batch
            ]
            vectors = self.target.embed_passages(inputs, priority="bulk")
            written = self._write(run, batch, [vector_literal(v) for v in vectors])
            previous = read if written == 0 else []
            self.encoded += len(batch)
            self.batches += 1
            batches += 1
            written_total += written
            done += written
            if self.progress is not None:
                self.progress("filling", done, max(total, done))
            if self.pause_s > 0:
                time.sleep(self.pause_s)
        return written_total

    def _write(self, run: Run, batch: list[repository.Passage], vectors: list[str]) -> int:
        """One batch in one transaction; a deadlock with a concurrent writer of the same
        chunks (re-tagging, ingestion) is tried again, the batch is small."""
        for attempt in range(1, 4):
            try:
                with self.database.transaction() as conn:
                    mark_writer(conn)  # writes the new vectors
                    return repository.write_batch(
                        conn, run.run_id, self.target.model_id, batch, vectors
                    )
            except DBAPIError as exc:
                if not _lock_timeout(exc) or attempt == 3:
                    raise
                time.sleep(0.1 * attempt)
        raise AssertionError("unreachable")

    def _ensure_forget_trigger(self) -> None:
        """The trigger that forgets a next vector whose context changed (sql/reembed.sql),
        also on a run that a version without it prepared."""
        with self._owner() as conn:
            self._ddl_retrying(conn, "forget_next_trigger")

    def build_index(self, run: Run) -> None:
        self._ensure_forget_trigger()
        self._set_status(run, "indexing")
        if self.progress is not None:
            self.progress("indexing", 0, 1)
        self._ensure_index(
            HNSW_INDEX, "create_hnsw_index", "create_hnsw_index_parent", "embedding_next_hnsw"
        )
        self._set_status(run, "switching")

    def switch(self, run: Run) -> None:
        """Catch up, then the one short switch transaction; retried on a lock timeout or
        when chunks arrived after the catch-up."""
        self._ensure_forget_trigger()
        engine = owner_engine(self.database, autocommit=False)
        try:
            for attempt in range(1, self.switch_attempts + 1):
                self.attempts = attempt
                self.fill(run)
                started = time.perf_counter()
                try:
                    with engine.connect() as conn, conn.begin():
                        repository.set_lock_timeout(conn, self.lock_timeout_ms)
                        # the last check must see every chunk; an owner's connection
                        # stays the owner (the writer role could not rename columns)
                        repository.owner_sees_every_chunk(conn)
                        self._switch_in(conn, run)
                    self.switch_ms = round((time.perf_counter() - started) * 1000, 1)
                    if self.progress is not None:
                        self.progress("switched", 1, 1)
                    return
                except _CaughtUpTooLate:
                    log.info("chunks arrived before the switch; catching up again")
                except DBAPIError as exc:
                    if not _lock_timeout(exc):
                        raise
                    log.info("switch lock not available (attempt %s); retrying", attempt)
                time.sleep(min(0.05 * attempt, 1.0))
        finally:
            engine.dispose()
        raise AppError(
            "reembed_switch_busy",
            f"The switch did not get its lock in {self.switch_attempts} attempts; run "
            "`ewall reembed` again (it resumes here).",
            503,
        )

    def _switch_in(self, conn: Connection, run: Run) -> None:
        repository.switch_live_model(conn, self.target.model_id, self.target.name, run.dimension)
        repository.lock_chunks_exclusive(conn)
        if repository.any_missing(conn):
            raise _CaughtUpTooLate
        repository.ddl(conn, "switch_columns")
        repository.set_run_status(conn, run.run_id, "switched")

    def finalise(self) -> None:
        """NOT NULL on the (new) embedding column, without a long lock."""
        with self._owner() as conn:
            if not repository.embedding_nullable(conn):
                return
            if repository.column_dimension(conn, "embedding_next") is not None:
                return  # not switched yet: the old column is still NOT NULL
            if not repository.check_constraint_exists(conn):
                self._ddl_retrying(conn, "not_null_check_add")
            repository.ddl(conn, "not_null_check_validate")
            self._ddl_retrying(conn, "not_null_set")

    def _set_status(self, run: Run, status: str) -> None:
        with self.database.transaction() as conn:
            repository.set_run_status(conn, run.run_id, status)

    # --- the whole run -------------------------------------------------------------------

    def run(self, started_by: str) -> ReembedReport:
        with self._exclusive():
            self.finalise()  # a previous run that switched but stopped before this
            run = self.start(started_by)
            if run.status == "filling":
                self.prepare(run)
                self.fill(run)
            if run.status in ("filling", "indexing"):
                self.build_index(run)
            self.switch(run)
            self.finalise()
        return report(self.database, self)

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """One re-embed at a time: a second caller gets 409 at once, never waits."""
        engine = owner_engine(self.database, autocommit=True)
        try:
            with engine.connect() as conn:
                if not repository.try_run_lock(conn):
                    raise AppError("reembed_running", "Another `ewall reembed` is running.", 409)
                try:
                    yield
                finally:
                    repository.release_run_lock(conn)
        finally:
            engine.dispose()


class _CaughtUpTooLate(Exception):
    """Chunks without a new vector arrived between the catch-up and the switch's lock."""


def cancel(database: Database, *, lock_timeout_ms: int = 2000) -> ReembedReport:
    """Drop the active run's columns and indexes; the live model is untouched. Refused (409)
    while an `ewall reembed run` is running."""
    with database.transaction() as conn:
        run = repository.active_run(conn)
    engine = owner_engine(database, autocommit=True)
    try:
        with engine.connect() as conn:
            if not repository.try_run_lock(conn):
                raise AppError("reembed_running", "An `ewall reembed run` is running.", 409)
            repository.set_lock_timeout(conn, 0)
            for suffix, name in (
                ("embedding_next_hnsw", HNSW_INDEX),
                ("embedding_next_missing", MISSING_INDEX),
            ):
                layout = repository.layout(conn, suffix)
                if layout.partitioned:
                    repository.ddl(conn, "drop_index_parent", index=name)
                else:
                    repository.ddl(conn, "drop_index", index=name)
            repository.set_lock_timeout(conn, lock_timeout_ms)
            ddl_retrying(conn, "drop_next_columns", SWITCH_ATTEMPTS)
            repository.release_run_lock(conn)
    finally:
        engine.dispose()
    if run is not None:
        with database.transaction() as conn:
            repository.set_run_status(conn, run.run_id, "cancelled")
    return report(database, None)


def report(database: Database, reembedder: Reembedder | None) -> ReembedReport:
    with database.transaction() as conn:
        run = repository.active_run(conn) or repository.last_run(conn)
        live = repository.live_model(conn)
        mark_writer(conn)  # counts every chunk per model (numbers only)
        models = repository.chunk_models(conn)
    out = ReembedReport(
        run_id=str(run.run_id) if run else None,
        target_model_id=run.target_model_id if run else None,
        status=run.status if run else "none",
        total=run.total if run else 0,
        done=run.done if run else 0,
        live_model={
            "model_id": live.model_id, "model_name": live.model_name, "dimension": live.dimension
        },
        chunk_models=models,
    )  # fmt: skip
    if reembedder is not None:
        out.encoded = reembedder.encoded
        out.batches = reembedder.batches
        out.switch_attempts = reembedder.attempts
        out.switch_ms = reembedder.switch_ms
    return out
