"""One decision's case-law state: read it, list decisions by state, confirm a held one.

A held decision (it was withdrawn, voided or set aside and the source now reads it as
active, or its status could not be read on first sight) stays out of search until a person
confirms it; the confirmation is written to the policy-event chain.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection

from app.caselaw import repository
from app.caselaw.repository import StoredCase
from app.caselaw.state import CaseLawState, NotHeldError, Status, confirm
from app.db.engine import Database
from app.ecli import normalize_ecli
from app.walls import policy

SOURCE = "rechtspraak"

__all__ = [
    "SOURCE",
    "CaseNotFoundError",
    "NotHeldError",
    "confirm_case",
    "confirm_case_in",
    "get_case",
    "held_cases",
    "list_cases",
    "state_from_row",
]


class CaseNotFoundError(LookupError):
    """No ``case_law`` row for this ECLI."""


def state_from_row(row: StoredCase) -> CaseLawState:
    """The state machine's view of a stored row.

    ``case_law`` has columns for the withdrawal marker, isReplacedBy and the set-aside target
    only; ``voided`` through a vervallenverklaring and "set aside by an unnamed decision" are
    read back from ``state``. That loses nothing the machine uses: a relation-based marker is
    re-observed on every ingestion (it never errors, so the previous value is never kept),
    and a held row always has every marker falsy (held means "the markers read active").
    """
    state = Status(row.state)
    return CaseLawState(
        ecli=row.ecli,
        state=state,
        withdrawn=row.withdrawn,
        voided=True if row.replaced_by else None,
        replaced_by=row.replaced_by,
        vervallen=True if state is Status.VOIDED and not row.replaced_by else None,
        vervallen_by=None,
        set_aside=True if row.set_aside_by or state is Status.SET_ASIDE else None,
        set_aside_by=row.set_aside_by,
        held_reason=row.held_reason,
    )


def _day(value: datetime | date | None) -> str | None:
    if value is None:
        return None
    return (value.date() if isinstance(value, datetime) else value).isoformat()


def held_cases(conn: Connection, limit: int = 1000) -> list[dict[str, Any]]:
    """Every held decision (not searchable until a person confirms it), oldest first."""
    return [
        {
            "ecli": c.ecli,
            "reason": c.reason,
            "since": c.since.isoformat(),
            "confirm": f"POST /v1/caselaw/{c.ecli}/confirm",
        }
        for c in repository.held_cases(conn, limit)
    ]


def _case_dict(conn: Connection, row: StoredCase) -> dict[str, Any]:
    doc = repository.case_document(conn, SOURCE, row.ecli)
    state = state_from_row(row)
    return {
        "ecli": row.ecli,
        "state": row.state,
        "searchable": state.searchable,
        "search_state": state.search_state,
        "held_reason": row.held_reason,
        "court": row.court,
        "decision_date": _day(row.decision_date),
        "area_of_law": row.area_of_law,
        "procedure": row.procedure,
        "withdrawn": row.withdrawn,
        "replaced_by": row.replaced_by,
        "set_aside_by": row.set_aside_by,
        "relations": row.relations,
        "crosscheck": row.crosscheck,
        "updated_at": row.updated_at.isoformat(),
        "document": {
            "document_id": doc.document_id,
            "search_state": doc.search_state,
            "title": doc.title,
            "chunks": doc.chunks,
            "searchable_chunks": doc.searchable_chunks,
        }
        if doc is not None
        else None,
    }


def get_case(conn: Connection, ecli: str) -> dict[str, Any]:
    canonical = normalize_ecli(ecli) or ecli
    row = repository.load_case(conn, canonical, lock=False)
    if row is None:
        raise CaseNotFoundError(canonical)
    return _case_dict(conn, row)


def list_cases(conn: Connection, state: str | None, limit: int) -> list[dict[str, Any]]:
    return [
        {
            "ecli": c.ecli,
            "state": c.state,
            "held_reason": c.held_reason,
            "court": c.court,
            "decision_date": _day(c.decision_date),
            "updated_at": c.updated_at.isoformat(),
        }
        for c in repository.list_cases(conn, state, limit)
    ]


def confirm_case_in(conn: Connection, ecli: str, actor: str) -> dict[str, Any]:
    """Confirm a held decision inside the caller's transaction (see ``confirm_case``)."""
    canonical = normalize_ecli(ecli) or ecli
    row = repository.load_case(conn, canonical, lock=True)
    if row is None:
        raise CaseNotFoundError(canonical)
    previous = state_from_row(row)
    new = confirm(previous)  # NotHeldError when there is nothing to confirm
    repository.confirm_case_state(conn, canonical, new.state.value)
    moved = repository.set_document_search_state(conn, SOURCE, canonical, new.search_state)
    # A person made a decision searchable again: that belongs in the hash-chained log. It is
    # not an access-policy change, so policy_version is not bumped (no cache needs flushing).
    version, at = policy.current_version_at(conn)  # with the database's clock
    policy.record_change(
        conn,
        actor=actor,
        action="caselaw.confirm",
        object_type="case_law",
        object_id=canonical,
        reason=previous.held_reason,
        details={"from": Status.HELD.value, "to": new.state.value, "chunks_changed": moved},
        version=version,
        at=at,
    )
    updated = repository.load_case(conn, canonical, lock=False)
    if updated is None:  # cannot happen: the row is locked by this transaction
        raise CaseNotFoundError(canonical)
    return _case_dict(conn, updated)


def confirm_case(database: Database, ecli: str, actor: str) -> dict[str, Any]:
    """A person confirmed a held decision: it takes the state its markers describe (active:
    searchable again). Raises CaseNotFoundError or NotHeldError."""
    with database.transaction() as conn:
        return confirm_case_in(conn, ecli, actor)
