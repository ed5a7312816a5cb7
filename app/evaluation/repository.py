"""Relevance sets, queries, judgements and saved runs in the database (sql/evaluation.sql).

The records here are what the evaluation code passes around; checking and parsing them is
``app.evaluation.sets``.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Connection

from app.db import sqlfiles

TargetKind = Literal["document", "chunk"]


@dataclass(frozen=True)
class SetInfo:
    set_id: int
    name: str
    description: str
    created_by: str
    created_at: datetime
    queries: int = 0


@dataclass(frozen=True)
class QueryRow:
    query_id: int
    key: str
    text: str
    as_person: str | None


@dataclass(frozen=True)
class Judgement:
    query_key: str
    target_kind: TargetKind
    target_id: str
    grade: int
    judged_by: str
    judged_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "target_kind": self.target_kind,
            "target_id": self.target_id,
            "grade": self.grade,
            "judged_by": self.judged_by,
            "judged_at": self.judged_at.isoformat() if self.judged_at else None,
        }


@dataclass
class QueryIn:
    key: str
    text: str
    as_person: str | None = None
    judgements: list[Judgement] = field(default_factory=list)


@dataclass(frozen=True)
class JudgementRow:
    """One judgement as stored: (query, target, rater) is its key."""

    query_id: int
    target_kind: str
    target_id: str
    grade: int
    judged_by: str
    judged_at: datetime


@dataclass(frozen=True)
class SavedRun:
    run_id: str
    config: dict[str, Any]
    metrics: dict[str, Any]
    per_query: dict[str, Any]


def _set_info(row: Any) -> SetInfo:
    return SetInfo(
        int(row.set_id), row.name, row.description, row.created_by, row.created_at, int(row.queries)
    )


def get_set(conn: Connection, name: str) -> SetInfo | None:
    row = conn.execute(sqlfiles.query("evaluation.set_by_name"), {"name": name}).first()
    return None if row is None else _set_info(row)


def list_sets(conn: Connection) -> list[SetInfo]:
    return [_set_info(r) for r in conn.execute(sqlfiles.query("evaluation.all_sets"))]


def ensure_set(conn: Connection, name: str, description: str, created_by: str) -> int:
    """The set's id; created when absent, its description updated when given."""
    params = {"name": name, "description": description, "created_by": created_by}
    conn.execute(sqlfiles.query("evaluation.insert_set_if_absent"), params)
    if description:
        conn.execute(sqlfiles.query("evaluation.update_set_description"), params)
    set_id = conn.execute(sqlfiles.query("evaluation.set_id_by_name"), params).scalar_one()
    return int(set_id)


def delete_set(conn: Connection, set_id: int) -> None:
    """The set, its queries and judgements, and its saved runs."""
    conn.execute(sqlfiles.query("evaluation.delete_runs_of_set"), {"set_id": set_id})
    conn.execute(sqlfiles.query("evaluation.delete_set"), {"set_id": set_id})


def upsert_queries(conn: Connection, set_id: int, queries: Sequence[QueryIn]) -> dict[str, int]:
    """key -> query_id; existing keys get the new text and person."""
    if not queries:
        return {}
    rows = conn.execute(
        sqlfiles.query("evaluation.upsert_queries"),
        {
            "set_id": set_id,
            "keys": [q.key for q in queries],
            "texts": [q.text for q in queries],
            "as_persons": [q.as_person for q in queries],
        },
    )
    return {r.query_key: int(r.query_id) for r in rows}


def delete_queries_except(conn: Connection, set_id: int, keep: Iterable[str]) -> int:
    """Drops the set's other queries with their judgements; returns how many went."""
    result = conn.execute(
        sqlfiles.query("evaluation.delete_queries_except"), {"set_id": set_id, "keep": list(keep)}
    )
    return int(result.rowcount)


def delete_judgements_of_queries(conn: Connection, query_ids: Sequence[int]) -> None:
    if query_ids:
        conn.execute(
            sqlfiles.query("evaluation.delete_judgements_of_queries"),
            {"query_ids": list(query_ids)},
        )


def upsert_judgements(conn: Connection, rows: Sequence[JudgementRow]) -> None:
    """Insert or re-grade; the rows' keys must be distinct (one statement writes them all)."""
    if not rows:
        return
    conn.execute(
        sqlfiles.query("evaluation.upsert_judgements"),
        {
            "query_ids": [r.query_id for r in rows],
            "target_kinds": [r.target_kind for r in rows],
            "target_ids": [r.target_id for r in rows],
            "grades": [r.grade for r in rows],
            "judged_by": [r.judged_by for r in rows],
            "judged_at": [r.judged_at for r in rows],
        },
    )


def load_queries(conn: Connection, set_id: int) -> list[QueryRow]:
    rows = conn.execute(sqlfiles.query("evaluation.queries_of_set"), {"set_id": set_id})
    return [QueryRow(int(r.query_id), r.query_key, r.text, r.as_person) for r in rows]


def load_judgements(
    conn: Connection, set_id: int, judged_by: str | None = None
) -> dict[str, list[Judgement]]:
    """query key -> its judgements (of one rater when ``judged_by`` is given)."""
    rows = conn.execute(
        sqlfiles.query("evaluation.judgements_of_set"),
        {"set_id": set_id, "judged_by": judged_by},
    )
    out: dict[str, list[Judgement]] = defaultdict(list)
    for r in rows:
        out[r.query_key].append(
            Judgement(
                r.query_key, r.target_kind, r.target_id, int(r.grade), r.judged_by, r.judged_at
            )
        )
    return dict(out)


def query_id(conn: Connection, set_id: int, query_key: str) -> int | None:
    """The query's id, its row kept from deletion until the transaction ends."""
    found = conn.execute(
        sqlfiles.query("evaluation.query_id_by_key"), {"set_id": set_id, "query_key": query_key}
    ).scalar_one_or_none()
    return None if found is None else int(found)


def count_rated_queries(conn: Connection, set_id: int, person_id: str) -> int:
    return int(
        conn.execute(
            sqlfiles.query("evaluation.count_rated_queries"),
            {"set_id": set_id, "person_id": person_id},
        ).scalar_one()
    )


def chunks_of_documents(
    conn: Connection,
    documents: Sequence[tuple[str, str]],
    wall_groups: Sequence[str],
    source_acl_ids: Sequence[str],
) -> list[tuple[str, str, str]]:
    """(source, external_id, chunk_id) of the chunks of these (source, external_id)
    documents that a person with these allowed sets may read (the RLS access applies too)."""
    rows = conn.execute(
        sqlfiles.query("evaluation.chunks_of_documents"),
        {
            "sources": [s for s, _ in documents],
            "external_ids": [e for _, e in documents],
            "wall_groups": list(wall_groups),
            "source_acl_ids": list(source_acl_ids),
        },
    )
    return [(str(r.source), str(r.external_id), str(r.chunk_id)) for r in rows]


def insert_run(
    conn: Connection,
    *,
    run_id: uuid.UUID,
    set_id: int,
    person_id: str,
    config: dict[str, Any],
    metrics: dict[str, Any],
    per_query: dict[str, Any],
) -> None:
    conn.execute(
        sqlfiles.query("evaluation.insert_run"),
        {
            "run_id": run_id,
            "set_id": set_id,
            "person_id": person_id,
            "config": json.dumps(config),
            "metrics": json.dumps(metrics),
            "per_query": json.dumps(per_query),
        },
    )


def get_run(conn: Connection, run_id: uuid.UUID) -> SavedRun | None:
    row = conn.execute(sqlfiles.query("evaluation.run_by_id"), {"run_id": run_id}).first()
    if row is None:
        return None
    return SavedRun(str(row.run_id), row.config, row.metrics, row.per_query)
