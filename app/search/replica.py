"""Which connection a search reads on, and the fence behind a replica read (invariant 8,
docs/scale-out.md). The search itself, and the choice of a replica or the primary, is
app/search/service.py's ``search``; this module opens a replica's read transaction and
appends the audit row behind the fence.

A search routed to a healthy replica runs there in ONE repeatable-read, read-only
transaction: the policy_version, the matrix snapshot it resolves with (cached per version),
the allowed source ACLs, the group sizes, the query analysis and the hybrid statement all
see the same replayed state. Its audit row then goes to the primary through the fenced
append (sql/replica.sql): in the same statement as the chain step, the primary checks that
its policy_version is still the one the replica saw and that every returned chunk is still
visible there under the same allowed sets. The primary commits the audit row before
anything is released.

When the fence fails, the primary transaction rolls back (no audit row, no results) and
the search runs again on the primary, which writes the one audit row. When the replica
fails (connection lost, killed, cancelled by a recovery conflict) before its reads are
done, the search runs again on the primary too; the audit row is appended after the
replica's transaction ended, so a replica failure after that changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from psycopg import OperationalError
from psycopg import errors as pg_errors
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.audit import chain
from app.db.engine import Database, begin_snapshot
from app.db.replicas import Busy, Replica
from app.errors import AppError
from app.resources import Resources
from app.search import repository
from app.walls import policy
from app.walls.access import Access, apply
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import load_snapshot

__all__ = ["PRIMARY", "Busy", "Fenced", "Replica", "ReplicaBehind", "ReplicaSnapshots"]

log = logging.getLogger("ewall.search.replica")

PRIMARY = "primary"
# a replica that fails a search so is taken out of routing until the monitor sees it well: it
# is gone, or its database lacks the schema (a URL naming another database)
REPLICA_DOWN_ERRORS = (
    OperationalError,
    pg_errors.UndefinedTable,
    pg_errors.UndefinedColumn,
    pg_errors.UndefinedFunction,
)
T = TypeVar("T")


class Fenced(Exception):
    """The primary moved past what the replica's search saw; its results are discarded."""


class ReplicaBehind(Exception):
    """The replica has not replayed a policy version this process already served."""


class ReplicaSnapshots:
    """The matrix snapshot per policy version, as replayed on the replicas (read once per
    version in a replica's own transaction, so it matches that transaction exactly)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap: MatrixSnapshot | None = None
        self.newest_served = 0  # the highest policy version any search of this process used

    def get(self, conn: Connection, version: int) -> MatrixSnapshot:
        with self._lock:
            snap = self._snap
        if snap is not None and snap.version == version:
            return snap
        fresh = load_snapshot(conn, full=False)
        with self._lock:
            if self._snap is None or fresh.version >= self._snap.version:
                self._snap = fresh
        return fresh

    def served(self, version: int) -> None:
        with self._lock:
            self.newest_served = max(self.newest_served, version)


def _snapshots(resources: Resources) -> ReplicaSnapshots:
    if resources.replica_snapshots is None:  # create_app builds it with the replica set
        raise RuntimeError("replica snapshots are built with the replicas")
    return resources.replica_snapshots


def replica_snapshot(resources: Resources, conn: Connection, version: int) -> MatrixSnapshot:
    """The matrix snapshot of ``version`` as this replica transaction sees it (shared cache
    with the searches; the grounding gate resolves with it on a replica too)."""
    return _snapshots(resources).get(conn, version)


@contextmanager
def read_transaction(
    replica: Replica, resources: Resources
) -> Iterator[tuple[Connection, MatrixSnapshot]]:
    """A repeatable-read, read-only transaction on ``replica`` and the matrix snapshot its
    policy version resolves with; raises ReplicaBehind when the replica has not replayed a
    policy version this process already served, or when the block finds the replica's live
    embedding model is not this service's. Ended (rolled back) on leaving."""
    snapshots = _snapshots(resources)
    conn = replica.connect_now()  # Busy: its pool has no free connection
    try:
        begin_snapshot(conn)
        version = policy.current_version(conn)  # the transaction's snapshot starts here
        if version < snapshots.newest_served:
            raise ReplicaBehind
        try:
            yield conn, snapshots.get(conn, version)
        except AppError as exc:
            # the replica has not replayed a re-embed's switch to this service's model (or
            # holds another model): the primary decides whether the model is live. Answered
            # 503 here, every search routed to it failed until it replayed the switch (an
            # attack round of 2026-12-08), telling the operator to restart with the old model
            if exc.code != "model_not_live":
                raise
            raise ReplicaBehind from None
    finally:
        try:
            conn.close()  # ends the read-only transaction; a dead replica changes nothing now
        except Exception:
            log.debug("closing a replica connection failed", exc_info=True)


def on_replica(resources: Resources, search: Callable[[Replica], T]) -> T | None:
    """``search`` on the first healthy replica (round robin) that has a free connection;
    None: the primary runs it. A replica whose pool is full is skipped at once for the next
    (``busy``, its state unchanged); a fenced, behind or failed search goes to the primary (a
    failed replica is marked down when it is gone)."""
    for replica in resources.replicas.candidates() if resources.replicas else []:
        try:
            return search(replica)
        except Busy:
            count(resources, replica.name, "busy")
            continue
        except Fenced:
            count(resources, replica.name, "fenced")
            log.info(
                "replica search fenced; running it on the primary", extra={"replica": replica.name}
            )
        except ReplicaBehind:
            count(resources, replica.name, "behind")
        except DBAPIError as exc:
            count(resources, replica.name, "failed")
            if exc.connection_invalidated or isinstance(exc.orig, REPLICA_DOWN_ERRORS):
                replica.mark_down(type(exc.orig).__name__)
            log.warning(
                "replica search failed; running it on the primary",
                extra={"replica": replica.name, "error": type(exc.orig).__name__},
            )
        return None
    return None


def fenced_append(
    primary: Database,
    entry: chain.Retrieval,
    results: list[chain.RetrievedChunk],
    access: Access,
    *,
    session_id: str | None = None,
    bound_before: str | None = None,
) -> chain.Appended:
    """Append the audit row on the primary if the fence holds; raise Fenced otherwise.
    Returns after the primary committed. With ``session_id`` found unbound before the
    search (``bound_before`` None), the fence also holds only while it is still unbound: a
    concurrent search of the session may have bound it meanwhile (a binding, once made,
    never changes)."""
    fence = chain.Fence(access.wall_groups, access.source_acl_ids)
    with primary.transaction() as conn:
        if session_id is not None and bound_before is None:
            binds = entry.session_matter_id is not None
            repository.lock_session(conn, session_id, entry.person_id, exclusive=binds)
            if repository.session_binding(conn, session_id, entry.person_id) is not None:
                raise Fenced
        apply(conn, access)  # row-level security reads the same sets as the fence
        appended = chain.append_fenced_retrieval(
            conn, entry, results, fence, within_s=chain.APPEND_LAG_MAX_S
        )
        if appended is None:
            # leaving the block with an exception rolls back (no audit row, no results)
            raise Fenced
        return appended


def count(resources: Resources, replica: str, outcome: str) -> None:
    """One search's outcome on ``replica`` ("primary" too, when replicas are configured)."""
    metrics = resources.metrics
    if metrics is not None:
        metrics.replica_searches.labels(replica, outcome).inc()


def served(resources: Resources, version: int) -> None:
    """A search of this process used ``version``: no replica behind it serves the next."""
    _snapshots(resources).served(version)
