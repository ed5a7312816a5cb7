"""The SQL of the run loop's persisted state (``sql/connectors.sql``): sync state per
(source, scope), the ids a full crawl has seen, and the advisory lock and fencing token of a
sync. The only module of ``connectors`` that runs SQL; `connectors.state` and
`connectors.fence` decide when."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection

from app.db import sqlfiles


def load_sync_state(conn: Connection, source: str, scope: str) -> dict[str, Any] | None:
    value = conn.execute(
        sqlfiles.query("connectors.sync_state"), {"source": source, "scope": scope}
    ).scalar_one_or_none()
    return value if isinstance(value, dict) else None


def save_sync_state(conn: Connection, source: str, scope: str, state: dict[str, Any]) -> None:
    conn.execute(
        sqlfiles.query("connectors.save_sync_state"),
        {"source": source, "scope": scope, "state": json.dumps(state)},
    )


def mark_seen(
    conn: Connection, source: str, scope: str, crawl_id: str, external_ids: Sequence[str]
) -> None:
    """Record ids as seen by the crawl ``crawl_id`` (ids already recorded stay as they are)."""
    if external_ids:
        conn.execute(
            sqlfiles.query("connectors.mark_seen"),
            {
                "source": source,
                "scope": scope,
                "crawl_id": crawl_id,
                "external_ids": list(external_ids),
            },
        )


def seen_ids(conn: Connection, source: str, scope: str, crawl_id: str) -> set[str]:
    rows = conn.execute(
        sqlfiles.query("connectors.seen_ids"),
        {"source": source, "scope": scope, "crawl_id": crawl_id},
    ).scalars()
    return {str(x) for x in rows}


def seen_count(conn: Connection, source: str, scope: str, crawl_id: str) -> int:
    return int(
        conn.execute(
            sqlfiles.query("connectors.seen_count"),
            {"source": source, "scope": scope, "crawl_id": crawl_id},
        ).scalar_one()
    )


def forget_crawls(conn: Connection, source: str, scope: str, keep: str | None) -> None:
    """Drop the seen ids of every crawl of (source, scope) but ``keep``."""
    if keep is None:
        conn.execute(
            sqlfiles.query("connectors.forget_all_crawls"), {"source": source, "scope": scope}
        )
    else:
        conn.execute(
            sqlfiles.query("connectors.forget_crawls_except"),
            {"source": source, "scope": scope, "keep": keep},
        )


def try_advisory_lock(conn: Connection, namespace: int, key: int) -> bool:
    """A session-level advisory lock; False when another session holds it."""
    return bool(
        conn.execute(
            sqlfiles.query("connectors.try_advisory_lock"), {"namespace": namespace, "key": key}
        ).scalar_one()
    )


def advisory_unlock(conn: Connection, namespace: int, key: int) -> None:
    conn.execute(sqlfiles.query("connectors.advisory_unlock"), {"namespace": namespace, "key": key})


def holds_advisory_lock(conn: Connection, namespace: int, key: int) -> bool:
    """Whether this connection's session holds the advisory lock (raises when it is gone)."""
    return bool(
        conn.execute(
            sqlfiles.query("connectors.holds_advisory_lock"), {"namespace": namespace, "key": key}
        ).scalar_one()
    )


class Fence(NamedTuple):
    """Who took the lock of a sync last, and the token they took."""

    token: int
    holder: str
    backend_pid: int
    taken_at: datetime


def take_fence(conn: Connection, source: str, scope: str, holder: str) -> int:
    """Raise the fencing token of (source, scope) for a sync that has just taken its lock;
    returns the new token."""
    return int(
        conn.execute(
            sqlfiles.query("connectors.take_fence"),
            {"source": source, "scope": scope, "holder": holder},
        ).scalar_one()
    )


def fence(conn: Connection, source: str, scope: str) -> Fence | None:
    """The fencing token of (source, scope), share-locked until this transaction ends (a
    sync taking the lock meanwhile waits to raise it)."""
    row = conn.execute(
        sqlfiles.query("connectors.fence"), {"source": source, "scope": scope}
    ).one_or_none()
    if row is None:
        return None
    return Fence(int(row.token), str(row.holder), int(row.backend_pid), row.taken_at)
