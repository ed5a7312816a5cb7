"""The chunk layout's SQL (sql/chunks.sql): the only module of app/chunks that runs
statements."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass(frozen=True)
class Layout:
    partitions: int  # 1: a plain table
    storage: str  # vector or halfvec
    estimated_rows: int
    counted_rows: int = 0  # corpus_stats: exact, also before the table was ever analysed


@dataclass(frozen=True)
class Archive:
    name: str
    bytes: int


def layout(conn: Connection) -> Layout:
    row = conn.execute(sqlfiles.query("chunks.layout")).one()
    return Layout(
        max(1, int(row.partitions or 0)),
        str(row.storage),
        max(0, int(row.estimated_rows or 0)),
        max(0, int(row.counted_rows or 0)),
    )


def archives(conn: Connection) -> list[Archive]:
    return [
        Archive(str(r.name), int(r.bytes)) for r in conn.execute(sqlfiles.query("chunks.archives"))
    ]


def relayout(conn: Connection, partitions: int, storage: str, *, lock_timeout_ms: int) -> str:
    """Rebuild chunks in the layout (one transaction, the caller's); the old table's name."""
    conn.execute(sqlfiles.query("chunks.lock_timeout"), {"ms": lock_timeout_ms})
    archive = conn.execute(
        sqlfiles.query("chunks.relayout"), {"partitions": partitions, "storage": storage}
    ).scalar_one()
    return str(archive)
