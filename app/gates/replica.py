"""The grounding gate's reads on a read replica, with zero staleness (docs/scale-out.md).

The gate reads a retrieval's audit row, which may have been committed a moment ago, and the
chunks the person may see now. A replica may serve those reads only when it already holds
everything the primary had committed when the request started:

1. the primary's ``pg_current_wal_lsn()`` is taken on the request's primary transaction, at
   its start: before the person's budget is charged, whose commit the reads do not need (taken
   after it, a replica that had not yet replayed that very commit looked behind, and the
   reads went to the primary, depending on how fast the replica replayed it);
2. on the replica, a statement run BEFORE the read transaction checks that
   ``pg_last_wal_replay_lsn()`` is at or past it (a snapshot taken later holds all of it);
3. the reads run in ONE read-only repeatable-read transaction there, resolving the person
   with the replica's own policy version (the matrix snapshot read in that transaction), at
   the primary's clock read with the position in step 1 (never the replica host's: a wall
   starts or ends by the clock, and the replica's may run behind or ahead);
4. fence: on the primary, in the transaction that writes the gate event, the policy version
   is read ``FOR SHARE`` (no wall can commit until the event has) and must still be the
   one the replica read, and no wall may have started or ended by the primary's clock
   since the instant of step 3 (walls take effect by the clock, with no new version);
   otherwise the reads are redone on the primary.

A replica that is behind, fails, or is fenced costs a redo on the primary, never a wrong or
missing answer. The gate event is always written on the primary, with the policy version
that was enforced.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from functools import partial

from psycopg import OperationalError
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from app.db.engine import begin_snapshot
from app.db.replicas import Busy, PrimaryStart, Replica, primary_lsn_at, replayed_past
from app.gates.grounding import GroundingResult, Support, check_grounding, read_support
from app.resources import Resources
from app.search.replica import PRIMARY, replica_snapshot
from app.walls import policy

log = logging.getLogger("ewall.gates.replica")


class _Behind(Exception):
    """The replica has not replayed up to the primary's position at request start."""


def _count(resources: Resources, replica: str, outcome: str) -> None:
    metrics = resources.metrics
    if metrics is not None:
        metrics.replica_grounding.labels(replica, outcome).inc()


def _read_on_replica(
    replica: Replica, resources: Resources, person_id: str, rid: uuid.UUID, start: PrimaryStart
) -> Support:
    conn = replica.connect_now()  # Busy: its pool has no free connection
    try:
        replayed = replayed_past(conn, start.lsn)
        conn.commit()  # that check's snapshot ends here; the read snapshot starts after it
        if not replayed:
            raise _Behind
        begin_snapshot(conn)
        version = policy.current_version(conn)  # the transaction's snapshot starts here
        snap = replica_snapshot(resources, conn, version)
        # judged at the primary's clock at the request's start, not this replica host's
        return read_support(conn, resources, person_id, rid, snapshot=(snap, start.at))
    finally:
        try:
            conn.close()  # ends the read-only transaction
        except Exception:
            log.debug("closing a replica connection failed", exc_info=True)


def request_start(conn: Connection, resources: Resources) -> PrimaryStart | None:
    """The primary's WAL position now, where replicas may serve the gate's reads (step 1),
    and its clock: the instant the reads on a replica decide access at."""
    return primary_lsn_at(conn) if resources.replicas else None


def routed_grounding(
    conn: Connection,
    resources: Resources,
    person_id: str,
    retrieval_id: str | uuid.UUID,
    sentences: Sequence[str],
    start: PrimaryStart | None = None,
) -> tuple[GroundingResult, str]:
    """Check grounding with the reads on a healthy, caught-up replica when there is one;
    ``conn`` is the request's primary transaction (the gate event is written on it after
    this returns; the fence's share lock on policy_state holds until then), ``start``
    its WAL position and clock at the request's start (`request_start`). Returns the result and who
    served the reads (a replica's name or "primary")."""
    replicas = resources.replicas
    # a healthy replica with a free connection; a full pool sends the reads to the next one
    for replica in replicas.candidates() if replicas else []:
        begun = start if start is not None else primary_lsn_at(conn)  # before any read
        outcome = "served"
        try:
            result = check_grounding(
                conn,
                resources,
                person_id,
                retrieval_id,
                sentences,
                read=partial(_read_on_replica, replica, resources, person_id, start=begun),
            )
        except Busy:
            _count(resources, replica.name, "busy")
            continue
        except _Behind:
            outcome = "behind"
        except DBAPIError as exc:
            outcome = "failed"
            if exc.connection_invalidated or isinstance(exc.orig, OperationalError):
                replica.mark_down(type(exc.orig).__name__)
            log.warning(
                "replica grounding reads failed; reading on the primary",
                extra={"replica": replica.name, "error": type(exc.orig).__name__},
            )
        else:
            current = policy.lock_current_version(conn)
            # the reads were judged at the request's start: no wall may have begun or ended
            # by the clock since (no write, no new version), or they judged a stale instant
            if current == result.policy_version and policy.unchanged_since(conn, begun.at):
                _count(resources, replica.name, outcome)
                return result, replica.name
            outcome = "fenced"
            log.info(
                "replica grounding fenced; reading on the primary",
                extra={"replica": replica.name, "seen": result.policy_version, "now": current},
            )
        _count(resources, replica.name, outcome)
        break
    result = check_grounding(conn, resources, person_id, retrieval_id, sentences)
    if replicas:
        _count(resources, PRIMARY, "served")
    return result, PRIMARY
