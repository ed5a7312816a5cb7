"""Throttled calls (429) written to the gates chain, so compliance sees refused attempts
(GET /v1/audit/gate-events, gate ``throttle``). Only ids and the limit that was hit are
recorded: never the body of the refused call."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from app.audit.chain import record_refusal
from app.errors import RateLimited, envelope

log = logging.getLogger("ewall.audit.refusals")


def _record(request: Request, exc: RateLimited) -> None:
    person_id = getattr(request.state, "person_id", None)
    resources = getattr(request.app.state, "resources", None)
    if person_id is None or resources is None:
        return
    route = request.scope.get("route")
    path = getattr(route, "path", None) or "unknown"
    details = {"method": request.method, "route": path, "scope": exc.details.get("scope")}
    try:
        with resources.database.transaction() as conn:
            record_refusal(conn, person_id=person_id, gate="throttle", request=details, error=exc)
    except Exception:  # the caller still gets its 429; the failure is logged, not hidden
        log.exception("recording a throttled call in the gates chain failed")


def install_throttle_audit(app: FastAPI) -> None:
    """A 429 handler that answers exactly like the AppError one and records the refusal."""

    @app.exception_handler(RateLimited)
    async def _throttled(request: Request, exc: RateLimited) -> JSONResponse:
        await run_in_threadpool(_record, request, exc)
        return JSONResponse(
            envelope(exc.code, exc.message, exc.details),
            status_code=exc.status,
            headers={"Retry-After": str(exc.retry_after_s)},
        )
