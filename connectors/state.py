"""Persisted sync state per (source, scope), and the ids seen by a full crawl.

``sync_state.state`` (jsonb) holds a `SyncState`; ``sync_seen`` holds the external ids each
full crawl has seen, for mark-and-sweep. Crash safety comes from the order of writes, which
`connectors.sync` follows: a document is ingested (the pipeline commits it) before the
checkpoint after it is written, and a checkpoint writes the seen ids and the new position in
ONE transaction. A crash therefore resumes from a position whose documents are all in the
index and all marked seen; the ones after it are crawled again, which ingestion absorbs
(same content, same chunk ids). Nothing is lost and nothing is counted twice.

One sync per (source, scope) writes at a time: `SyncStateStore.lock` takes the sync's lock
and gives the store that sync writes through, whose every transaction first checks that the
lock is still its own (`connectors.fence`: a sync that lost it to another writes nothing more).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import Connection

from app.db.engine import Database
from connectors import repository
from connectors.fence import SyncLock

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
    # what that crawl has read: "all" (every document) or "changed" (some left unread,
    # connectors.full_read); None: a crawl begun before this was kept (every release before
    # it read all: EWALL_FULL_CRAWL_READS came with it)
    crawl_reads: str | None = None
    crawl_started_at: str | None = None
    crawl_errors: int = 0  # errors so far in that crawl; any error forbids its sweep
    crawl_error_reasons: list[str] = field(default_factory=list)
    last_complete_crawl_id: str | None = None
    last_complete_crawl_at: str | None = None
    last_delta_at: str | None = None
    last_security_pass_at: str | None = None  # the last whole one (connectors.security_pass)
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
    """The persisted state over the service's `Database` (SQL in `connectors.repository`);
    every method is its own transaction. The store that `lock` gives checks its sync's
    fencing token at the start of each (`connectors.fence.SyncLock.check`)."""

    def __init__(self, database: Database, held: SyncLock | None = None) -> None:
        self.database = database
        self.held = held

    @contextmanager
    def _transaction(self, source: str, scope: str) -> Iterator[Connection]:
        with self.database.transaction() as conn:
            if self.held is not None:
                self.held.check(conn, source, scope)
            yield conn

    def load(self, source: str, scope: str) -> SyncState:
        with self._transaction(source, scope) as conn:
            return SyncState.from_json(repository.load_sync_state(conn, source, scope))

    def save(self, source: str, scope: str, state: SyncState) -> None:
        with self._transaction(source, scope) as conn:
            repository.save_sync_state(conn, source, scope, state.to_json())

    @staticmethod
    def _mark(conn: Connection, source: str, scope: str, crawl_id: str,
              external_ids: Iterable[str]) -> None:
        batch: list[str] = []
        for external_id in external_ids:
            batch.append(external_id)
            if len(batch) >= _SEEN_BATCH:
                repository.mark_seen(conn, source, scope, crawl_id, batch)
                batch = []
        repository.mark_seen(conn, source, scope, crawl_id, batch)

    def mark_seen(self, source: str, scope: str, crawl_id: str,
                  external_ids: Iterable[str]) -> None:
        with self._transaction(source, scope) as conn:
            self._mark(conn, source, scope, crawl_id, external_ids)

    def checkpoint(self, source: str, scope: str, state: SyncState,
                   seen: Iterable[str] = ()) -> None:
        """Seen ids of the crawl in progress and the new state, atomically."""
        with self._transaction(source, scope) as conn:
            if state.crawl_id is not None:
                self._mark(conn, source, scope, state.crawl_id, seen)
            repository.save_sync_state(conn, source, scope, state.to_json())

    def seen_ids(self, source: str, scope: str, crawl_id: str) -> set[str]:
        with self._transaction(source, scope) as conn:
            return repository.seen_ids(conn, source, scope, crawl_id)

    def seen_count(self, source: str, scope: str, crawl_id: str) -> int:
        with self._transaction(source, scope) as conn:
            return repository.seen_count(conn, source, scope, crawl_id)

    def forget_crawls(self, source: str, scope: str, keep: str | None = None) -> None:
        """Drop seen ids of finished or abandoned crawls (all but ``keep``)."""
        with self._transaction(source, scope) as conn:
            repository.forget_crawls(conn, source, scope, keep)

    @contextmanager
    def lock(self, source: str, scope: str) -> Iterator[SyncStateStore]:
        """The lock of a sync of (source, scope), held for its length, so a full crawl and a
        delta of the same scope never interleave their checkpoints; gives the store the sync
        writes through, which writes only while the lock is still this sync's. Raises
        `SyncBusyError` when another sync holds it."""
        key = zlib.crc32(f"{source}\x00{scope}".encode()) & 0x7FFFFFFF
        held = SyncLock(self.database, source, scope, _LOCK_NAMESPACE, key)
        if not held.take():
            raise SyncBusyError(f"a sync of {source} ({scope}) is already running")
        try:
            yield SyncStateStore(self.database, held)
        finally:
            held.release()


class StateStore(Protocol):
    """`SyncStateStore`, as the run loop (`connectors.sync`) uses it."""

    def load(self, source: str, scope: str) -> SyncState: ...

    def save(self, source: str, scope: str, state: SyncState) -> None: ...

    def checkpoint(self, source: str, scope: str, state: SyncState,
                   seen: Iterable[str] = ()) -> None: ...

    def mark_seen(self, source: str, scope: str, crawl_id: str,
                  external_ids: Iterable[str]) -> None: ...

    def seen_ids(self, source: str, scope: str, crawl_id: str) -> set[str]: ...

    def forget_crawls(self, source: str, scope: str, keep: str | None = None) -> None: ...

    def lock(self, source: str, scope: str) -> AbstractContextManager[StateStore]: ...


class RunLocalState:
    """The state of a source that keeps none between runs (no checkpoints, no sweep): the
    run loop's bookkeeping lives for one run only and nothing is written or locked."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], SyncState] = {}
        self.seen: dict[tuple[str, str, str], set[str]] = {}

    def load(self, source: str, scope: str) -> SyncState:
        return self.states.get((source, scope)) or SyncState()

    def save(self, source: str, scope: str, state: SyncState) -> None:
        self.states[(source, scope)] = state

    def checkpoint(self, source: str, scope: str, state: SyncState,
                   seen: Iterable[str] = ()) -> None:
        if state.crawl_id is not None:
            self.mark_seen(source, scope, state.crawl_id, seen)
        self.save(source, scope, state)

    def mark_seen(self, source: str, scope: str, crawl_id: str,
                  external_ids: Iterable[str]) -> None:
        self.seen.setdefault((source, scope, crawl_id), set()).update(external_ids)

    def seen_ids(self, source: str, scope: str, crawl_id: str) -> set[str]:
        return set(self.seen.get((source, scope, crawl_id), set()))

    def forget_crawls(self, source: str, scope: str, keep: str | None = None) -> None:
        for key in [k for k in self.seen if k[:2] == (source, scope) and k[2] != keep]:
            del self.seen[key]

    def lock(self, source: str, scope: str) -> AbstractContextManager[StateStore]:
        return nullcontext(self)


def age_s(stamp: str) -> float:
    """Seconds since a stamp the sync state holds (``%Y-%m-%dT%H:%M:%SZ``, UTC)."""
    then = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return (datetime.now(UTC) - then).total_seconds()


def full_crawl_due(st: SyncState, every_s: float | None) -> str | None:
    """Why a delta should run as a full crawl now, or None."""
    if not every_s:
        return None
    if st.crawl_id is not None:
        return "a full crawl is unfinished; it resumes"
    if not st.last_complete_crawl_at:
        return "no complete full crawl yet"
    age = age_s(st.last_complete_crawl_at)
    if age >= every_s or age < 0:  # a stamp in the future (another clock) is no reason to wait
        return f"the last complete full crawl is {int(age)} s old (EWALL_FULL_CRAWL_EVERY)"
    return None
