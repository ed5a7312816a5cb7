"""Searches on read replicas, fenced on the primary (invariant 8, docs/scale-out.md).

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
fails (connection lost, killed, cancelled by a recovery conflict) before the primary
committed the audit row, the search runs again on the primary too; after that commit, a
replica error is ignored (the result stands, its audit row exists exactly once).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from psycopg import OperationalError
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.audit import chain
from app.auth.service import Principal
from app.db.engine import Database
from app.db.replicas import Replica, begin_read_only
from app.resources import Resources
from app.search.schemas import SearchIn
from app.search.service import ReadRoute, SearchResult, run_search
from app.search.session import SessionBinding, resolve_binding
from app.walls import policy
from app.walls.access import Access, apply
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import load_snapshot

log = logging.getLogger("ewall.search.replica")

PRIMARY = "primary"


class Fenced(Exception):
    """The primary moved past what the replica's search saw; its results are discarded."""


class ReplicaBehind(Exception):
    """The replica has not replayed a policy version this process already served."""


def fenced_append(
    primary: Database, row: dict[str, Any], results: list[dict[str, Any]], access: Access
) -> chain.Appended:
    """Append the audit row on the primary if the fence holds; raise Fenced otherwise.
    Returns after the primary committed."""
    fence = chain.Fence(access.wall_groups, access.source_acl_ids)
    with primary.transaction() as conn:
        apply(conn, access)  # row-level security reads the same sets as the fence
        appended = chain.append_fenced_retrieval(conn, row, results, fence)
        if appended is None:
            # leaving the block with an exception rolls back (no audit row, no results)
            raise Fenced
        return appended


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


def primary_binding(
    resources: Resources, principal: Principal, request: SearchIn
) -> SessionBinding:
    """The session's binding read on the primary: it lives in audit rows committed there,
    which a replica may not have replayed yet (a replica would see the session unbound)."""
    if request.session_id is None:
        return SessionBinding()
    with resources.database.transaction() as conn:
        return resolve_binding(conn, principal.person_id, request)


def _on_replica(
    replica: Replica,
    snapshots: ReplicaSnapshots,
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    qvec: str,
    started: float,
    purpose: str,
    session: SessionBinding,
) -> SearchResult:
    conn = replica.database.engine.connect().execution_options(isolation_level="REPEATABLE READ")
    try:
        conn.begin()
        begin_read_only(conn)
        version = policy.current_version(conn)  # the transaction's snapshot starts here
        if version < snapshots.newest_served:
            raise ReplicaBehind
        snap = snapshots.get(conn, version)

        def append(row: dict[str, Any], results: list[dict[str, Any]], access: Access) -> None:
            fenced_append(resources.database, row, results, access)

        return run_search(
            conn,
            resources,
            principal,
            request,
            qvec=qvec,
            purpose=purpose,
            started=started,
            read=ReadRoute(snap, append, session),
        )
    finally:
        try:
            conn.close()  # ends the read-only transaction; a dead replica changes nothing now
        except Exception:
            log.debug("closing a replica connection failed", exc_info=True)


def _count(resources: Resources, replica: str, outcome: str) -> None:
    metrics = resources.metrics
    if metrics is not None:
        metrics.replica_searches.labels(replica, outcome).inc()


def routed_search(
    resources: Resources,
    principal: Principal,
    request: SearchIn,
    *,
    qvec: str,
    started: float | None = None,
    purpose: str = "search",
) -> tuple[SearchResult, str]:
    """Run one search where it should run; returns the result and who served it (a replica's
    name or "primary"). With no replica configured this is exactly the primary search."""
    started = started if started is not None else time.perf_counter()
    replicas = resources.replicas
    replica = replicas.choose() if replicas else None
    if replicas is not None and replica is not None:
        snapshots = _snapshots(resources)
        session = primary_binding(resources, principal, request)
        try:
            result = _on_replica(
                replica, snapshots, resources, principal, request, qvec, started, purpose, session
            )
        except Fenced:
            _count(resources, replica.name, "fenced")
            log.info(
                "replica search fenced; running it on the primary", extra={"replica": replica.name}
            )
        except ReplicaBehind:
            _count(resources, replica.name, "behind")
        except DBAPIError as exc:
            _count(resources, replica.name, "failed")
            if exc.connection_invalidated or isinstance(exc.orig, OperationalError):
                replica.mark_down(type(exc.orig).__name__)
            log.warning(
                "replica search failed; running it on the primary",
                extra={"replica": replica.name, "error": type(exc.orig).__name__},
            )
        else:
            _count(resources, replica.name, "served")
            snapshots.served(result.policy_version)
            return result, replica.name
    with resources.database.transaction() as conn:
        result = run_search(
            conn, resources, principal, request, qvec=qvec, purpose=purpose, started=started
        )
    if replicas is not None:
        _count(resources, PRIMARY, "served")
        _snapshots(resources).served(result.policy_version)
    return result, PRIMARY
