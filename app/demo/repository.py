"""The demo load's reads of the database it loaded into (sql/demo.sql)."""

from __future__ import annotations

from sqlalchemy import Connection

from app.db import sqlfiles
from app.walls.access import mark_writer

SUMMARY_COUNTS = (
    "people",
    "clients",
    "matters",
    "walls",
    "active_walls",
    "documents",
    "chunks",
    "quarantined_documents",
    "policy_version",
)


def summary_counts(conn: Connection) -> dict[str, int]:
    """People, clients, matters, walls (all and active now), documents, chunks, quarantined
    documents and the policy version. Marks the transaction as a writer to count chunks past
    RLS: use a transaction that returns nothing but these numbers."""
    mark_writer(conn)
    row = conn.execute(sqlfiles.query("demo.summary_counts")).one()
    return {name: int(getattr(row, name)) for name in SUMMARY_COUNTS}


def quarantined_documents(conn: Connection) -> list[dict[str, str | None]]:
    rows = conn.execute(sqlfiles.query("demo.quarantined_documents"))
    return [
        {
            "source": r.source,
            "external_id": r.external_id,
            "title": r.title,
            "reason": r.quarantine_reason,
        }
        for r in rows
    ]


def has_matters_or_documents(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("demo.has_matters_or_documents")).scalar_one())
