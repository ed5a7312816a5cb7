"""The SQL of the run loop's persisted state (``sql/connectors.sql``): sync state per
(source, scope), the ids a full crawl has seen, and the advisory lock of a sync. The only
module of ``connectors`` that runs SQL; `connectors.state` decides when."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

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
