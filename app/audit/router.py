"""Compliance API: retrievals, chain verification, export, policy events."""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy import Connection

from app.audit import service
from app.audit.chain import GateName, Purpose, escape_display_controls, record_refusal
from app.audit.checkpoints import verify_configured
from app.auth.service import Principal
from app.db.engine import begin_snapshot
from app.deps import (
    AuditTurn,
    Compliance,
    ConnDep,
    PrincipalDep,
    ResourcesDep,
    standing_of,
)
from app.errors import Forbidden, Unprocessable, envelope
from app.resources import Resources
from app.types import AwareDatetimeRoundedUp, ChunkFilter, IdFilter, SessionId
from app.walls.visibility import MatterView, matter_view


class AuditJSON(JSONResponse):
    """The audit's JSON answers with display controls escaped (``\\u202e``), as its JSON
    lines export writes them: the question a person typed may hold a bidi override, which
    JSON read by a program gives back unchanged, while a person reading the body (curl in a
    terminal, a browser's raw view, a log) saw the rest of the line reordered by it."""

    def render(self, content: Any) -> bytes:
        return escape_display_controls(super().render(content).decode("utf-8")).encode("utf-8")


router = APIRouter(prefix="/v1/audit", tags=["audit"], default_response_class=AuditJSON)

Limit = Annotated[int, Query(ge=1, le=500)]


# ``since`` (at >= since) and ``until`` (at < until) against times stored in microseconds:
# a bound finer than that, rounded up, selects exactly the rows the instant asked does. Cut
# (rounded down), until=...00.123456789Z left out a row at ...00.123456, and since= took one.
Bound = AwareDatetimeRoundedUp


def _ordered(since: datetime | None, until: datetime | None) -> None:
    """A window that ends before it starts is refused: read as empty, an export or a list
    would tell a compliance officer that nobody read anything then. Asked after the query's
    own validation: a request with other bad parameters is refused for those first."""
    if since is not None and until is not None and since > until:
        # in the shape of every other 422 (app/errors.py): the field, and the list of errors
        raise Unprocessable(
            "validation_error",
            "Invalid request: until: must not be before since.",
            "until",
            errors=[
                {"field": "until", "message": "must not be before since", "type": "value_error"}
            ],
        )


def _view(principal: Principal, conn: Connection, resources: Resources) -> MatterView:
    """The caller's view of the matters, read from the cached whole-matrix snapshot."""
    return matter_view(
        principal, lambda: resources.require_resolver().matrix_now(conn, resources.database)
    )


def _own_read_budget(principal: PrincipalDep, resources: ResourcesDep) -> Principal:
    """Compliance reads every retrieval; a lawyer, only their own (the searches that role
    makes), charged before the transaction opens (it reads the matrix to withhold matters).
    Any other token is the wrong role: a person whose lawyer role was withdrawn no longer
    reads the queries they made with it."""
    if not principal.has_any("compliance"):
        if not principal.has_any("lawyer"):
            raise Forbidden("This needs the compliance role, or the lawyer role for your own.")
        resources.limiter.spend(
            "own_audit_reads",
            principal.person_id,
            1,
            resources.settings.own_audit_reads_per_minute,
        )
    return principal


@router.get(
    "/retrievals",
    responses={429: {"description": "A per-person limit was reached (see Retry-After)."}},
)
def list_retrievals(
    principal: Annotated[Principal, Depends(_own_read_budget)],
    conn: ConnDep,
    resources: ResourcesDep,
    person_id: IdFilter | None = None,
    matter_id: IdFilter | None = None,
    chunk_id: ChunkFilter | None = None,
    purpose: Annotated[Purpose | None, Query()] = None,
    since: Bound | None = None,
    until: Bound | None = None,
    limit: Limit = 50,
    cursor: str | None = None,
    session_id: Annotated[SessionId | None, Query()] = None,
) -> dict[str, Any]:
    """Compliance reads every retrieval. Anyone else may list only their own sessions, and
    sees no matter that they may not see now (e.g. one a wall has since screened off): not in
    the items, and not through the matter and chunk filters either."""
    _ordered(since, until)
    view = _view(principal, conn, resources)
    if not view.full:
        if session_id is None or person_id not in (None, principal.person_id):
            raise Forbidden("This needs the compliance role (or: list one of your own sessions).")
        person_id = principal.person_id
    return service.list_retrievals(
        conn,
        person_id=person_id,
        matter_id=matter_id,
        chunk_id=chunk_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        purpose=purpose,
        cursor_secret=service.cursor_key(resources.settings),
        session_id=session_id,
        view=view,
    )


@router.get(
    "/retrievals/{retrieval_id}",
    response_model=None,
    responses={429: {"description": "A per-person limit was reached (see Retry-After)."}},
)
def get_retrieval(
    retrieval_id: str,
    principal: Annotated[Principal, Depends(_own_read_budget)],
    conn: ConnDep,
    resources: ResourcesDep,
) -> dict[str, Any] | JSONResponse:
    """Compliance sees every retrieval; a lawyer only their own, withheld as the list
    withholds it (no matter they may not see now, however old the retrieval), charged on the
    same budget as the list (each refused read is a gate event: unbounded, they flooded it).

    A refused read is written to the gates chain (no content, only who asked for which id)
    and answered, not raised, so that the event commits with the request's transaction.
    """
    item = service.get_retrieval(conn, retrieval_id)
    if not principal.has_any("compliance") and item["person_id"] != principal.person_id:
        refused = Forbidden("Only compliance and the person who made a retrieval may read it.")
        record_refusal(
            conn,
            person_id=principal.person_id,
            gate="retrieval_read",
            request={"retrieval_id": item["retrieval_id"]},
            error=refused,
        )
        return JSONResponse(
            envelope(refused.code, refused.message, refused.details), status_code=refused.status
        )
    return service.withhold(item, _view(principal, conn, resources))


@router.get("/verify")
def verify(principal: Compliance, turn: AuditTurn, resources: ResourcesDep) -> dict[str, Any]:
    # one committed state: a search committing between the read of a chain's head and the
    # read of its rows would look like rows removed from the end
    with resources.database.engine.connect() as conn:
        begin_snapshot(conn)
        return verify_configured(conn, resources.settings)


@router.get("/export")
def export(
    principal: Compliance,
    resources: ResourcesDep,
    since: Bound | None = None,
    until: Bound | None = None,
    after_seq: Annotated[int | None, Query(ge=0, le=2**63 - 1)] = None,
) -> StreamingResponse:
    # a page at a time, each in its own transaction: a slow reader holds no connection. The
    # first page is read before the answer starts, so that a database that cannot serve it
    # is a 503, not a 200 with an empty body; one that fails later cuts the body short, and
    # the export continues with after_seq (the last seq it wrote).
    _ordered(since, until)
    final = service.final_before(resources.database.transaction)
    # the caller's standing asked again before each page (service.export_lines)
    lines = service.export_lines(
        resources.database.transaction,
        since=since,
        until=until,
        after_seq=after_seq,
        standing=standing_of(principal, resources.settings.token_leeway_s),
    )
    first = list(itertools.islice(lines, 1))
    if first and "error" in json.loads(first[0]):
        # refused before any page was read (deactivated, or the token expired, since the
        # roles were checked): the answer has not started, so it is a 403, not a 200 whose
        # only line is the refusal
        raise Forbidden(json.loads(first[0])["error"]["message"])
    # A window that ended less than a few minutes ago may still gain rows: searches resolved
    # in it that are still running. The headers say whether this one is final, and from when.
    headers = {
        "X-Audit-Final-Before": final.isoformat(),
        "X-Audit-Window-Final": "true" if until is not None and until <= final else "false",
    }
    return StreamingResponse(
        itertools.chain(first, lines), media_type="application/x-ndjson", headers=headers
    )


@router.get("/policy-events")
def policy_events(
    principal: Compliance,
    conn: ConnDep,
    resources: ResourcesDep,
    since: Bound | None = None,
    until: Bound | None = None,
    # in NFC, as every id is stored since they are read so: typed decomposed, it matched
    # only events from before (the SQL also matches their decomposed spelling)
    object_id: IdFilter | None = None,
    limit: Limit = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    _ordered(since, until)
    return service.list_policy_events(
        conn,
        since=since,
        until=until,
        object_id=object_id,
        limit=limit,
        cursor=cursor,
        cursor_secret=service.cursor_key(resources.settings),
    )


@router.get("/gate-events")
def gate_events(
    principal: Compliance,
    conn: ConnDep,
    resources: ResourcesDep,
    person_id: IdFilter | None = None,
    gate: Annotated[GateName | None, Query()] = None,
    ok: bool | None = None,
    session_id: Annotated[SessionId | None, Query()] = None,
    since: Bound | None = None,
    until: Bound | None = None,
    limit: Limit = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    """The gates chain: citation and grounding checks and refused attempts, newest first.

    Each event holds hashes and counts, never the draft or the answer.
    """
    _ordered(since, until)
    return service.list_gate_events(
        conn,
        person_id=person_id,
        gate=gate,
        ok=ok,
        session_id=session_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        cursor_secret=service.cursor_key(resources.settings),
    )
