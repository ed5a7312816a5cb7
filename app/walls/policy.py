"""policy_version and the policy-event log.

Every access-relevant change bumps policy_version in its own transaction and appends one
hash-chained policy event naming who, what, when, why and the new version. The UPDATE of the
single policy_state row also serialises concurrent policy changes.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.audit import chain
from app.db.clock import db_now
from app.walls import repository


def current_version(conn: Connection) -> int:
    """The policy version this transaction sees."""
    return repository.policy_version(conn)


def lock_current_version(conn: Connection) -> int:
    """The policy version, share-locked until commit: no policy change can commit first."""
    return repository.policy_version_for_share(conn)


def unchanged_since(conn: Connection, at: datetime) -> bool:
    """Whether access judged at ``at`` (the database's clock, earlier in this request) is
    access now: no wall started or ended by the clock in between. With the version locked
    (`lock_current_version`), nothing else changes access before this transaction commits."""
    return repository.no_window_edge_since(conn, at)


def lock_for_change_at(conn: Connection) -> tuple[int, datetime]:
    """The policy version, locked until commit: every other policy change (a bump, another
    matrix write) waits for this transaction, so what it reads before writing stays true;
    and the database's clock when the change began."""
    return repository.policy_version_for_update_at(conn)


def bump_at(conn: Connection) -> tuple[int, datetime]:
    """Bump; the new version and the database's clock once the bump took the row (the
    instant the change's policy event records: app/db/clock.py)."""
    return repository.bump_policy_version(conn)


def current_version_at(conn: Connection) -> tuple[int, datetime]:
    """The policy version this transaction sees, and the database's clock."""
    return repository.policy_version_at(conn)


def record_change(
    conn: Connection,
    *,
    actor: str,
    action: str,
    object_type: str,
    object_id: str,
    details: dict[str, Any],
    reason: str | None = None,
    version: int | None = None,
    at: datetime | None = None,
) -> int:
    """Log the change under ``version``, bumping policy_version first when none is given
    (a bulk import bumps once and logs each object under the same version). ``at``: the
    instant the event records, the database's clock as the caller read it with the version
    (``bump_at``, ``current_version_at``); read here when not given. Never the API host's
    clock: a wall issued "now" by one host is judged by every other host's searches."""
    if version is None:
        version, at = bump_at(conn)
    elif at is None:
        at = db_now(conn)
    chain.append_policy_event(
        conn,
        {
            "event_id": uuid.uuid4(),
            "at": at,
            "actor": actor,
            "action": action,
            "object_type": object_type,
            "object_id": object_id,
            "reason": reason,
            "details": details,
            "policy_version": version,
        },
    )
    return version
