"""The statements of re-embedding and of the live model (sql/reembed.sql).

Two kinds of connection: the service's (app role; the fill runs in writer mode because it
writes every chunk) and the owner's (the migrations URL) for the DDL a re-embed needs: the new
vector column has the new model's dimension, known only when the run starts. DDL blocks
carry ``{dim}``, ``{index}``, ``{table}``, ``{parent}`` and ``{child}``, formatted here with
an integer or with names that PostgreSQL quoted itself (``layout``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles

MISSING_INDEX = "ix_chunks_embedding_next_missing"
HNSW_INDEX = "ix_chunks_embedding_next_hnsw"


@dataclass(frozen=True)
class LiveModel:
    model_id: str | None
    model_name: str | None
    dimension: int | None


@dataclass(frozen=True)
class Run:
    run_id: uuid.UUID
    target_model: str
    target_model_id: str
    dimension: int
    from_model_id: str | None
    status: str
    total: int
    done: int
    started_by: str
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Layout:
    partitioned: bool
    partitions: list[str]  # quoted, schema-qualified leaf partitions
    partition_indexes: list[str]  # quoted index names, one per partition


def _live(row: Any) -> LiveModel:
    if row is None:
        return LiveModel(None, None, None)
    return LiveModel(row.model_id, row.model_name, row.dimension)


def live_model(conn: Connection) -> LiveModel:
    return _live(conn.execute(sqlfiles.query("reembed.live_model")).one_or_none())


def live_model_at(conn: Connection) -> tuple[LiveModel, datetime]:
    """The live model and the database's clock, in one statement (a search's first read)."""
    row = conn.execute(sqlfiles.query("reembed.live_model_at")).one()
    return _live(row), row.at


def live_model_for_share(conn: Connection) -> LiveModel:
    return _live(conn.execute(sqlfiles.query("reembed.live_model_for_share")).one_or_none())


def claim_live_model(conn: Connection, model_id: str, model_name: str, dimension: int) -> None:
    conn.execute(
        sqlfiles.query("reembed.claim_live_model"),
        {"model_id": model_id, "model_name": model_name, "dimension": dimension},
    )


def lock_chunks_shared(conn: Connection) -> None:
    conn.execute(sqlfiles.query("reembed.lock_chunks_shared"))


def _run(row: Any) -> Run | None:
    return None if row is None else Run(**row._mapping)


def active_run(conn: Connection) -> Run | None:
    return _run(conn.execute(sqlfiles.query("reembed.active_run")).one_or_none())


def last_run(conn: Connection) -> Run | None:
    return _run(conn.execute(sqlfiles.query("reembed.last_run")).one_or_none())


def insert_run(conn: Connection, params: Mapping[str, Any]) -> None:
    conn.execute(sqlfiles.query("reembed.insert_run"), dict(params))


def set_run_status(conn: Connection, run_id: uuid.UUID, status: str) -> None:
    conn.execute(sqlfiles.query("reembed.set_run_status"), {"run_id": run_id, "status": status})


def set_run_counts(conn: Connection, run_id: uuid.UUID, total: int, done: int) -> None:
    conn.execute(
        sqlfiles.query("reembed.set_run_counts"), {"run_id": run_id, "total": total, "done": done}
    )


def count_chunks(conn: Connection) -> tuple[int, int]:
    row = conn.execute(sqlfiles.query("reembed.count_chunks")).one()
    return int(row.total), int(row.missing)


@dataclass(frozen=True)
class Passage:
    """A chunk still without a new vector, and what its encoder input is made of."""

    chunk_id: str
    row_version: str  # the version of the row read: the write skips a row changed since
    body: str
    section_path: str
    title: str | None
    summary: str | None


def missing_batch(conn: Connection, limit: int) -> list[Passage]:
    rows = conn.execute(sqlfiles.query("reembed.missing_batch"), {"limit": limit})
    return [
        Passage(str(r.chunk_id), str(r.row_version), str(r.body), str(r.section_path), r.title,
                r.summary)
        for r in rows
    ]


def any_missing(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("reembed.any_missing")).scalar_one())


def write_batch(
    conn: Connection,
    run_id: uuid.UUID,
    model_id: str,
    passages: Sequence[Passage],
    embeddings: Sequence[str],
) -> int:
    """Write the new vectors of ``passages`` (as ``missing_batch`` read them); returns how many
    were written: a chunk deleted, filled or changed since it was read is skipped."""
    row = conn.execute(
        sqlfiles.query("reembed.write_batch"),
        {
            "run_id": run_id,
            "model_id": model_id,
            "chunk_ids": [p.chunk_id for p in passages],
            "row_versions": [p.row_version for p in passages],
            "embeddings": list(embeddings),
        },
    ).one_or_none()
    return 0 if row is None else int(row.written)


def chunk_models(conn: Connection) -> dict[str, int]:
    rows = conn.execute(sqlfiles.query("reembed.chunk_models"))
    return {str(r.model_id): int(r.n) for r in rows}


# --- the owner's connection: catalog reads and DDL ---------------------------------------


def layout(conn: Connection, suffix: str) -> Layout:
    row = conn.execute(sqlfiles.query("reembed.layout"), {"suffix": suffix}).one()
    return Layout(row.relkind == "p", list(row.partitions), list(row.partition_indexes))


def column_dimension(conn: Connection, column: str) -> int | None:
    found = conn.execute(
        sqlfiles.query("reembed.column_dimension"), {"column": column}
    ).scalar_one_or_none()
    return None if found is None else int(found)


def index_valid(conn: Connection, name: str) -> bool | None:
    found = conn.execute(sqlfiles.query("reembed.index_valid"), {"name": name}).scalar_one_or_none()
    return None if found is None else bool(found)


def index_attached(conn: Connection, parent: str, child: str) -> bool:
    return bool(
        conn.execute(
            sqlfiles.query("reembed.index_attached"), {"parent": parent, "child": child}
        ).scalar_one()
    )


def set_lock_timeout(conn: Connection, milliseconds: int) -> None:
    conn.execute(sqlfiles.query("reembed.set_lock_timeout"), {"value": f"{int(milliseconds)}ms"})


def ddl(conn: Connection, block: str, **names: str | int) -> None:
    """Run a DDL block; ``names`` are integers or names quoted by PostgreSQL (``layout``)."""
    statement = sqlfiles.raw(f"reembed.{block}")
    for key, value in names.items():
        text = str(int(value)) if isinstance(value, int) else value
        statement = statement.replace("{" + key + "}", text)
    # straight to psycopg without parameters: simple protocol, so a block may hold several
    # statements (and CONCURRENTLY needs the connection's autocommit, set by the caller)
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def embedding_nullable(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("reembed.embedding_nullable")).scalar_one_or_none())


def check_constraint_exists(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("reembed.check_constraint_exists")).scalar_one())


def switch_live_model(conn: Connection, model_id: str, model_name: str, dimension: int) -> None:
    conn.execute(
        sqlfiles.query("reembed.switch_live_model"),
        {"model_id": model_id, "model_name": model_name, "dimension": dimension},
    )


def owner_sees_every_chunk(conn: Connection) -> None:
    """For the schema owner's switch transaction only (the service role cannot use it)."""
    conn.execute(sqlfiles.query("reembed.owner_sees_every_chunk"))


def lock_chunks_exclusive(conn: Connection) -> None:
    conn.execute(sqlfiles.query("reembed.lock_chunks_exclusive"))


def try_run_lock(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("reembed.try_run_lock")).scalar_one())


def release_run_lock(conn: Connection) -> None:
    conn.execute(sqlfiles.query("reembed.release_run_lock"))
