"""The SQL of case law (``sql/caselaw.sql``): ``case_law`` rows, the visibility of a
decision's stored document, and the case-law entries of a run's report. The only module of
``app.caselaw`` that runs SQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles
from app.walls.access import mark_writer


@dataclass(frozen=True)
class CaseFields:
    """What ingestion writes into a ``case_law`` row."""

    ecli: str
    court: str | None
    decision_date: datetime | None
    area_of_law: str | None
    procedure: str | None
    relations: list[dict[str, Any]]
    withdrawn: bool | None
    replaced_by: str | None
    set_aside_by: str | None
    state: str
    held_reason: str | None
    crosscheck: dict[str, Any] | None


@dataclass(frozen=True)
class StoredCase(CaseFields):
    updated_at: datetime


@dataclass(frozen=True)
class HeldCase:
    ecli: str
    reason: str | None
    since: datetime


@dataclass(frozen=True)
class CaseSummary:
    ecli: str
    state: str
    held_reason: str | None
    court: str | None
    decision_date: datetime | None
    updated_at: datetime


@dataclass(frozen=True)
class CaseDocument:
    document_id: int
    search_state: str
    title: str | None
    chunks: int
    searchable_chunks: int


@dataclass(frozen=True)
class RunEvent:
    kind: str
    external_id: str | None
    reason: str | None
    details: Any


def load_case(conn: Connection, ecli: str, *, lock: bool) -> StoredCase | None:
    """The stored row of ``ecli``; ``lock``: FOR UPDATE, for the rest of the transaction."""
    block = "caselaw.case_by_ecli_for_update" if lock else "caselaw.case_by_ecli"
    row = conn.execute(sqlfiles.query(block), {"ecli": ecli}).mappings().first()
    if row is None:
        return None
    return StoredCase(**{name: row[name] for name in row.keys()})  # noqa: SIM118 - a RowMapping


def _params(case: CaseFields) -> dict[str, Any]:
    return {
        "ecli": case.ecli,
        "court": case.court,
        "decision_date": case.decision_date,
        "area_of_law": case.area_of_law,
        "procedure": case.procedure,
        "relations": json.dumps(case.relations, ensure_ascii=False),
        "withdrawn": case.withdrawn,
        "replaced_by": case.replaced_by,
        "set_aside_by": case.set_aside_by,
        "state": case.state,
        "held_reason": case.held_reason,
        "crosscheck": (
            json.dumps(case.crosscheck, ensure_ascii=False) if case.crosscheck is not None else None
        ),
    }


def insert_case(conn: Connection, case: CaseFields) -> None:
    conn.execute(sqlfiles.query("caselaw.insert_case"), _params(case))


def update_case(conn: Connection, case: CaseFields) -> None:
    conn.execute(sqlfiles.query("caselaw.update_case"), _params(case))


def confirm_case_state(conn: Connection, ecli: str, state: str) -> None:
    """A held decision takes ``state``; its held reason is cleared."""
    conn.execute(sqlfiles.query("caselaw.confirm_case_state"), {"state": state, "ecli": ecli})


def set_document_search_state(conn: Connection, source: str, ecli: str, search_state: str) -> int:
    """Make the stored document of ``ecli`` (if any) take ``search_state``, and its chunks
    the matching suppression. Returns the number of chunks whose visibility changed."""
    mark_writer(conn)
    doc = conn.execute(
        sqlfiles.query("caselaw.set_document_search_state"),
        {"state": search_state, "source": source, "ecli": ecli},
    ).first()
    if doc is None:
        return 0
    suppressed = search_state != "active"
    return conn.execute(
        sqlfiles.query("caselaw.set_chunks_suppressed"),
        {"suppressed": suppressed, "document_id": doc.document_id},
    ).rowcount


def held_cases(conn: Connection, limit: int) -> list[HeldCase]:
    rows = conn.execute(sqlfiles.query("caselaw.held_cases"), {"limit": limit}).mappings()
    return [HeldCase(r["ecli"], r["held_reason"], r["updated_at"]) for r in rows]


def list_cases(conn: Connection, state: str | None, limit: int) -> list[CaseSummary]:
    rows = conn.execute(
        sqlfiles.query("caselaw.list_cases"), {"state": state, "limit": limit}
    ).mappings()
    return [
        CaseSummary(
            r["ecli"], r["state"], r["held_reason"], r["court"], r["decision_date"], r["updated_at"]
        )
        for r in rows
    ]


def case_document(conn: Connection, source: str, ecli: str) -> CaseDocument | None:
    mark_writer(conn)  # counting the document's chunks reads past the chunks RLS policy
    row = (
        conn.execute(sqlfiles.query("caselaw.case_document"), {"source": source, "ecli": ecli})
        .mappings()
        .first()
    )
    if row is None:
        return None
    return CaseDocument(
        row["document_id"],
        row["search_state"],
        row["title"],
        int(row["chunks"]),
        int(row["searchable_chunks"]),
    )


def run_events_of_kinds(
    conn: Connection, run_id: uuid.UUID, kinds: Sequence[str]
) -> list[RunEvent]:
    rows = conn.execute(
        sqlfiles.query("caselaw.run_events_of_kinds"), {"run_id": run_id, "kinds": list(kinds)}
    ).mappings()
    return [RunEvent(r["kind"], r["external_id"], r["reason"], r["details"]) for r in rows]
