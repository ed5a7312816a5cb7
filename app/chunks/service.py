"""Convert an existing database's chunks to another layout (docs/scale-out.md).

``ewall_chunks_relayout`` (migration 20261201_0031) does the work in one transaction as the
schema owner: hash partitions by document, each with its own HNSW and GIN index, and the
embedding as ``vector`` or ``halfvec``. It holds an ACCESS EXCLUSIVE lock on chunks while it
copies and indexes (searches and ingestion wait: a maintenance window), and gives up after
``lock_timeout_ms`` when another transaction holds chunks, rather than queueing (a queued
exclusive request would block every search behind it). The old table is kept, renamed
``chunks_before_<timestamp>``; nothing is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import create_engine, pool
from sqlalchemy.exc import DBAPIError

from app.chunks import repository
from app.chunks.repository import Archive, Layout
from app.db.engine import Database, sqlalchemy_url

STORAGES = ("vector", "halfvec")
MAX_PARTITIONS = 256

# The default (one table) follows the measurements up to the largest size measured. With the
# graph built with ef_construction 64, one table's HNSW recall@10 fell to 0.92 at 1M chunks,
# where 4 hash partitions kept 0.995-1.000; with the graph of migration 0049 (ef_construction
# 128) one table keeps 1.000 there too, and 4 partitions cost 1.9x (10%) and 5.7x (100%)
# dense p95 and 1.2-1.5x hybrid p95 (docs/scale-out.md). So one table is advised against
# only past the measured size, and then as something to measure first: converting takes an
# exclusive lock for minutes, so it stays the operator's step.
ADVICE_ROWS = 1_000_000
ADVISED_PARTITIONS = 4


class LayoutError(Exception):
    """The conversion was refused or failed; nothing changed."""


@dataclass(frozen=True)
class Relayout:
    before: Layout
    after: Layout
    archive: str | None  # None: already in that layout, nothing done


def current(owner_url: str) -> tuple[Layout, list[Archive]]:
    engine = create_engine(sqlalchemy_url(owner_url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return repository.layout(conn), repository.archives(conn)
    finally:
        engine.dispose()


def advice(layout: Layout, *, threshold: int | None = None) -> str | None:
    """What the measurements advise for this layout; None when it is the measured best.
    ``threshold``: the largest one-table size measured good (default ADVICE_ROWS)."""
    threshold = ADVICE_ROWS if threshold is None else threshold
    rows = max(layout.counted_rows, layout.estimated_rows)
    if layout.partitions > 1 or rows <= threshold:
        return None
    return (
        f"chunks holds {rows:,} rows in one table, more than the {threshold:,} at which one "
        f"table was measured (dense recall@10 1.000, docs/scale-out.md). Measure the dense "
        f"leg's recall at this size (`python -m bench.search --rows {rows}`); if it falls "
        f"below 0.98, {ADVISED_PARTITIONS} hash partitions keep it: in a maintenance window "
        f"run `ewall chunks relayout --partitions {ADVISED_PARTITIONS}` and set "
        f"EWALL_CHUNK_PARTITIONS={ADVISED_PARTITIONS}."
    )


def startup_advice(database: Database, *, threshold: int | None = None) -> str | None:
    """``advice`` for the service's own database (read as the app role)."""
    with database.connect() as conn:
        return advice(repository.layout(conn), threshold=threshold)


def relayout(
    owner_url: str, partitions: int, storage: str, *, lock_timeout_ms: int = 5000
) -> Relayout:
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise LayoutError(f"partitions must be 1..{MAX_PARTITIONS}, got {partitions}")
    if storage not in STORAGES:
        raise LayoutError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
    engine = create_engine(sqlalchemy_url(owner_url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            before = repository.layout(conn)
            conn.rollback()
            if (before.partitions, before.storage) == (partitions, storage):
                return Relayout(before, before, None)
            try:
                with conn.begin():
                    archive = repository.relayout(
                        conn, partitions, storage, lock_timeout_ms=lock_timeout_ms
                    )
            except DBAPIError as exc:
                raise LayoutError(
                    f"the relayout failed and was rolled back: {type(exc.orig).__name__}: "
                    f"{str(exc.orig).splitlines()[0] if exc.orig else exc}"
                ) from exc
            return Relayout(before, repository.layout(conn), archive)
    finally:
        engine.dispose()
