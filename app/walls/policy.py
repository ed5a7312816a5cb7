"""policy_version and the policy-event log.

Every access-relevant change bumps policy_version in its own transaction and appends one
hash-chained policy event naming who, what, when, why and the new version. The UPDATE of the
single policy_state row also serialises concurrent policy changes.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection

from app.audit import chain
from app.walls import repository


def current_version(conn: Connection) -> int:
    """The policy version this transaction sees."""
    return repository.policy_version(conn)


def lock_current_version(conn: Connection) -> int:
    """The policy version, share-locked until commit: no policy change can commit first."""
    return repository.policy_version_for_share(conn)


def lock_for_change(conn: Connection) -> int:
    """The policy version, locked until commit: every other policy change (a bump, another
    matrix write) waits for this transaction, so what it reads before writing stays true."""
    return repository.policy_version_for_update(conn)


def bump(conn: Connection) -> int:
    return repository.bump_policy_version(conn)


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
) -> int:
    """Log the change under ``version``, bumping policy_version first when none is given
    (a bulk import bumps once and logs each object under the same version)."""
    if version is None:
        version = bump(conn)
    chain.append_policy_event(
        conn,
        {
            "event_id": uuid.uuid4(),
            "at": chain.now_utc(),
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
