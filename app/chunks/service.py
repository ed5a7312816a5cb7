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
from app.db.engine import sqlalchemy_url

STORAGES = ("vector", "halfvec")
MAX_PARTITIONS = 256


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
