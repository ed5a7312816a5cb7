"""Persisted sync state per (source, scope), and the ids seen by a full crawl.

``sync_state.state`` (jsonb) holds a `SyncState`; ``sync_seen`` holds the external ids each
full crawl has seen, for mark-and-sweep. Crash safety comes from the order of writes, which
`connectors.sync` follows: a document is ingested (the pipeline commits it) before the
checkpoint after it is written, and a checkpoint writes the seen ids and the new position in
ONE transaction. A crash therefore resumes from a position whose documents are all in the
index and all marked seen; the ones after it are crawled again, which ingestion absorbs
(same content, same chunk ids). Nothing is lost and nothing is counted twice.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sqlalchemy import Connection, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert

from app.db.engine import Database
from app.db.schema import sync_seen, sync_state

_SEEN_BATCH = 1000
_LOCK_NAMESPACE = zlib.crc32(b"ewall.connectors.sync") & 0x7FFFFFFF


class SyncBusyError(RuntimeError):
    """Another sync of the same source and scope holds the lock."""


@dataclass
class SyncState:
    cursor: str | None = None  # the connector's delta cursor (opaque)
    watermark: str | None = None  # ISO time up to which the source is known to be mirrored
    crawl_id: str | None = None  # the full crawl in progress, None when there is none
    crawl_cursor: str | None = None  # that crawl's last checkpoint
    crawl_started_at: str | None = None
    crawl_errors: int = 0  # errors so far in that crawl; any error forbids its sweep
    crawl_error_reasons: list[str] = field(default_factory=list)
    last_complete_crawl_id: str | None = None
    last_complete_crawl_at: str | None = None
    last_delta_at: str | None = None
    # A sweep held because it would remove too much: {"run_id", "crawl_id", "at", "ids":
    # [[external_id, reason], ...]}; applied only by `connectors.sync.confirm_sweep`.
    held_sweep: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> SyncState:
        if not isinstance(data, dict):
            return cls()
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class SyncStateStore:
    """SQLAlchemy Core over the service's `Database`; every method is its own transaction
    unless a connection is passed."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def load(self, source: str, scope: str) -> SyncState:
        with self.database.transaction() as conn:
            value = conn.execute(
                select(sync_state.c.state).where(
                    (sync_state.c.source == source) & (sync_state.c.scope == scope))
            ).scalar_one_or_none()
        return SyncState.from_json(value)

    def _save(self, conn: Connection, source: str, scope: str, state: SyncState) -> None:
        stmt = insert(sync_state).values(source=source, scope=scope, state=state.to_json())
        conn.execute(stmt.on_conflict_do_update(
            index_elements=[sync_state.c.source, sync_state.c.scope],
            set_={"state": stmt.excluded.state, "updated_at": func.now()},
        ))

    def save(self, source: str, scope: str, state: SyncState) -> None:
        with self.database.transaction() as conn:
            self._save(conn, source, scope, state)

    def _mark(self, conn: Connection, source: str, scope: str, crawl_id: str,
              external_ids: Iterable[str]) -> None:
        batch: list[dict[str, str]] = []
        for external_id in external_ids:
            batch.append({"source": source, "scope": scope, "crawl_id": crawl_id,
                          "external_id": external_id})
            if len(batch) >= _SEEN_BATCH:
                conn.execute(insert(sync_seen).on_conflict_do_nothing(), batch)
                batch = []
        if batch:
            conn.execute(insert(sync_seen).on_conflict_do_nothing(), batch)

    def mark_seen(self, source: str, scope: str, crawl_id: str,
                  external_ids: Iterable[str]) -> None:
        with self.database.transaction() as conn:
            self._mark(conn, source, scope, crawl_id, external_ids)

    def checkpoint(self, source: str, scope: str, state: SyncState,
                   seen: Iterable[str] = ()) -> None:
        """Seen ids of the crawl in progress and the new state, atomically."""
        with self.database.transaction() as conn:
            if state.crawl_id is not None:
                self._mark(conn, source, scope, state.crawl_id, seen)
            self._save(conn, source, scope, state)

    def seen_ids(self, source: str, scope: str, crawl_id: str) -> set[str]:
        with self.database.transaction() as conn:
            return set(conn.execute(
                select(sync_seen.c.external_id).where(
                    (sync_seen.c.source == source) & (sync_seen.c.scope == scope)
                    & (sync_seen.c.crawl_id == crawl_id))
            ).scalars())

    def seen_count(self, source: str, scope: str, crawl_id: str) -> int:
        with self.database.transaction() as conn:
            return int(conn.execute(
                select(func.count()).select_from(sync_seen).where(
                    (sync_seen.c.source == source) & (sync_seen.c.scope == scope)
                    & (sync_seen.c.crawl_id == crawl_id))
            ).scalar_one())

    def forget_crawls(self, source: str, scope: str, keep: str | None = None) -> None:
        """Drop seen ids of finished or abandoned crawls (all but ``keep``)."""
        condition = (sync_seen.c.source == source) & (sync_seen.c.scope == scope)
        if keep is not None:
            condition = condition & (sync_seen.c.crawl_id != keep)
        with self.database.transaction() as conn:
            conn.execute(delete(sync_seen).where(condition))

    @contextmanager
    def lock(self, source: str, scope: str) -> Iterator[None]:
        """A session advisory lock per (source, scope) for the length of a sync, so a full
        crawl and a delta of the same scope never interleave their checkpoints."""
        key = zlib.crc32(f"{source}\x00{scope}".encode()) & 0x7FFFFFFF
        with self.database.connect() as conn:
            got = conn.execute(text("SELECT pg_try_advisory_lock(:ns, :key)"),
                               {"ns": _LOCK_NAMESPACE, "key": key}).scalar_one()
            conn.commit()
            if not got:
                raise SyncBusyError(f"a sync of {source} ({scope}) is already running")
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:ns, :key)"),
                             {"ns": _LOCK_NAMESPACE, "key": key})
                conn.commit()
