"""The SQL of ingest runs and of the admin's view of one document (``sql/ingest_runs.sql``).
The pipeline's own statements are run by ``app/ingest/repository.py``."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from app.db import sqlfiles
from app.walls.access import mark_writer


@dataclass(frozen=True)
class DocumentSummary:
    document_id: int
    source: str
    external_id: str
    version: str | None
    status: str
    quarantine_reason: str | None
    client_id: str | None
    matter_id: str | None
    client_raw: str | None
    matter_raw: str | None
    doc_type: str | None
    title: str | None
    author: str | None
    modified_at: datetime | None
    source_acl_id: str
    search_state: str
    ingested_at: datetime
    updated_at: datetime
    chunks: int


def connector_of_run(conn: Connection, run_id: uuid.UUID) -> str | None:
    """The registry name of the source a run read (``ingest_runs.connector``), or None when
    there is no such run."""
    value = conn.execute(
        sqlfiles.query("ingest_runs.connector_of_run"), {"run_id": run_id}
    ).scalar_one_or_none()
    return str(value) if value is not None else None


def document_summary(conn: Connection, source: str, external_id: str) -> DocumentSummary | None:
    """One document as stored, with its chunk count (counted past the chunks RLS policy:
    an administrator's view, not a search)."""
    mark_writer(conn)
    row = (
        conn.execute(
            sqlfiles.query("ingest_runs.document_summary"),
            {"source": source, "external_id": external_id},
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    return DocumentSummary(**{name: row[name] for name in row.keys()})  # noqa: SIM118
