"""Case-law state (admin): read a decision's state, list held ones, confirm a held one.

A held decision (it was withdrawn, voided or set aside and the source now reads it as
active, or its status could not be read on first sight) stays out of search until a person
confirms it here; the confirmation is written to the policy-event chain.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from app.caselaw.cases import (
    CaseNotFoundError,
    NotHeldError,
    confirm_case_in,
    get_case,
    list_cases,
)
from app.deps import Admin, ConnDep, PolicyTx
from app.ecli import normalize_ecli
from app.errors import Conflict, NotFound, Unprocessable

router = APIRouter(prefix="/v1/caselaw", tags=["case law"])

StateFilter = Literal["active", "withdrawn", "voided", "set_aside", "held"]


def _ecli(value: str) -> str:
    canonical = normalize_ecli(value)
    if canonical is None:
        raise Unprocessable(
            "invalid_ecli",
            f"{value[:80]!r} is not an ECLI (e.g. ECLI:NL:HR:2013:477).",
            field="ecli",
        )
    return canonical


@router.get("")
def list_case_law(
    principal: Admin,
    conn: ConnDep,
    state: StateFilter | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Decisions by state, e.g. ``?state=held`` for those awaiting confirmation."""
    return {"cases": list_cases(conn, state, limit)}


@router.get("/{ecli}")
def read_case(ecli: str, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    canonical = _ecli(ecli)
    try:
        return get_case(conn, canonical)
    except CaseNotFoundError:
        raise NotFound("Case", canonical) from None


@router.post("/{ecli}/confirm")
def confirm_held_case(ecli: str, principal: Admin, tx: PolicyTx) -> dict[str, Any]:
    """Confirm a held decision: it takes the state its markers describe (usually active).
    Its policy event is appended in a transaction run again on a deadlock (``PolicyTx``)."""
    canonical = _ecli(ecli)
    try:
        return tx(lambda conn: confirm_case_in(conn, canonical, principal.person_id))
    except CaseNotFoundError:
        raise NotFound("Case", canonical) from None
    except NotHeldError as exc:
        raise Conflict("not_held", str(exc), {"ecli": canonical}) from None
