"""The console's own reads (sql/console.sql). Everything else goes through the services
that the API routes call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles
from app.walls.access import mark_writer


def chunks_per_matter(conn: Connection, matter_ids: Sequence[str]) -> dict[str, int]:
    """Chunk counts per matter, over every chunk (documents private to others included), for
    the conflicts partner's issue page: writer mode under mark_writer's rule (counts only),
    so use a transaction of its own that reads nothing else."""
    if not matter_ids:
        return {}
    mark_writer(conn)
    rows = conn.execute(
        sqlfiles.query("console.chunks_per_matter"), {"matter_ids": list(matter_ids)}
    )
    return {str(r.matter_id): int(r.n_chunks) for r in rows}


def retag_progress(conn: Connection, matter_ids: Sequence[str]) -> list[dict[str, Any]]:
    if not matter_ids:
        return []
    rows = conn.execute(
        sqlfiles.query("console.retag_progress"), {"matter_ids": list(matter_ids)}
    ).mappings()
    return [dict(r) for r in rows]


def gate_events_for_retrieval(conn: Connection, retrieval_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        sqlfiles.query("console.gate_events_for_retrieval"), {"retrieval_id": retrieval_id}
    ).mappings()
    return [dict(r) for r in rows]
