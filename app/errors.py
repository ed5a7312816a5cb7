"""One error class and one envelope for every 4xx/5xx answer.

Body shape (part of the HTTP contract; tests/contract/test_error_shape.py pins it):
``{"error": {"code": "...", "message": "...", "details": {...}}}``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg import errors as pg_errors
from pydantic import BaseModel
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.db.engine import RETRYABLE
from app.logging import redacted_traceback

log = logging.getLogger("ewall.errors")


class AppError(Exception):
    """A domain error that knows its HTTP status."""

    def __init__(
        self,
        code: str,
        message: str,
        status: int = 400,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details = details or {}


ECHO_MAX = 200  # characters of a caller's id echoed back in an error (ids are at most 200)


class NotFound(AppError):
    def __init__(self, what: str, ident: str) -> None:
        # a path may carry a 100,000-character id: the answer echoes only its start
        shown = ident if len(ident) <= ECHO_MAX else ident[:ECHO_MAX] + "…"
        super().__init__("not_found", f"{what} {shown!r} does not exist.", 404, {"id": shown})


class Conflict(AppError):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(code, message, 409, details)


class Unprocessable(AppError):
    def __init__(self, code: str, message: str, field: str | None = None, **details: Any) -> None:
        extra = dict(details)
        if field is not None:
            extra["field"] = field
        super().__init__(code, message, 422, extra)


class Unauthenticated(AppError):
    def __init__(self, message: str = "A valid bearer token is required.") -> None:
        super().__init__("unauthenticated", message, 401)


class Forbidden(AppError):
    def __init__(self, message: str = "Your role does not allow this.") -> None:
        super().__init__("forbidden", message, 403)


class RateLimited(AppError):
    """429 ``rate_limited``; the handler adds the Retry-After header."""

    def __init__(self, message: str, retry_after_s: int, **details: Any) -> None:
        super().__init__("rate_limited", message, 429, {"retry_after_s": retry_after_s, **details})
        self.retry_after_s = retry_after_s


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class ErrorOut(BaseModel):
    """The error envelope every 4xx and 5xx answers with (api.md, "Errors")."""

    error: ErrorBody


ERROR_SCHEMA_REF = "#/components/schemas/ErrorOut"
# what /openapi.json says of each route's refusals, so that a client (an agent) reads the
# envelope from the schema: a fuzz of 2026-12-06 found no 404, 409, 413 or 429 documented
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description}
    for status, description in (
        (401, "No valid token."),
        (403, "The caller's role may not use this route."),
        (404, "An id in the path names nothing."),
        (409, "The request conflicts with the current state (a lifted wall lifted again)."),
        (413, "The body is larger than the service takes."),
        (422, "Invalid input; details.field names the offending field."),
        (429, "Too many requests or jobs of this person, or calls waiting; see Retry-After."),
    )
}


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
}


# what FastAPI says of a body that is not UTF-8, or nested deeper than the JSON parser goes
_UNPARSED_BODY = "There was an error parsing the body"


def _field_name(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    # the first element says where the value came from (body, query string, path, header)
    if parts and parts[0] in ("body", "query", "path", "header", "cookie") and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts) if parts else "body"


CONCURRENT_CHANGE = "conflict_retry"


@dataclass(frozen=True)
class DatabaseFailure:
    code: str
    message: str
    log_message: str


_LOST_RACE = DatabaseFailure(
    CONCURRENT_CHANGE,
    "A concurrent change met this request and PostgreSQL rolled it back; nothing was "
    "changed. Try again.",
    "transaction rolled back for a concurrent one",
)
_TIMED_OUT = DatabaseFailure(
    "timeout", "The request took too long and was cancelled.", "statement timeout"
)
_UNREACHABLE = DatabaseFailure(
    "database_unavailable",
    "The database is not reachable right now; nothing was returned.",
    "database unavailable",
)
# Decided by the error's class (its SQLSTATE), not its words: the words made a lock
# timeout ("canceling statement due to lock timeout") a timeout, and a deadlock or a
# serialization failure an unreachable database. A lock not granted (55P03: NOWAIT, or a
# lock_timeout, which no statement of a request sets, a server or role setting can) is a
# concurrent change too.
_CONCURRENT = (
    *RETRYABLE,  # 40P01, 40001 (also a standby's recovery conflict): what a retry may pass
    pg_errors.LockNotAvailable,  # 55P03
)
_TIMEOUTS = (
    pg_errors.QueryCanceled,  # 57014: statement_timeout, or a cancel
    pg_errors.TransactionTimeout,  # 25P04
    pg_errors.IdleSessionTimeout,  # 57P05
    pg_errors.IdleInTransactionSessionTimeout,  # 25P03
)


def database_failure(orig: BaseException | None) -> DatabaseFailure:
    """What a 503 says of a driver error that reached a route's caller."""
    if isinstance(orig, _CONCURRENT):
        return _LOST_RACE
    if isinstance(orig, _TIMEOUTS):
        return _TIMED_OUT
    if getattr(orig, "sqlstate", None) is None:
        # libpq's own failures carry no SQLSTATE (refused, broken, a connect_timeout):
        # their words are all there is; a timeout among them keeps its answer
        words = str(orig).lower()
        if "timeout" in words or "cancel" in words:
            return _TIMED_OUT
    return _UNREACHABLE


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(request: Request, exc: AppError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if isinstance(exc, RateLimited):
            headers = {"Retry-After": str(exc.retry_after_s)}
        elif exc.status == 503:  # a passing condition (the audit, a policy change, a model)
            headers = {"Retry-After": "1"}
        return JSONResponse(
            envelope(exc.code, exc.message, exc.details), status_code=exc.status, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {
                # a body that is not JSON: its loc is ("body", <character offset>)
                "field": "body"
                if err.get("type") == "json_invalid"
                else _field_name(err.get("loc", ())),
                "message": str(err.get("msg", "invalid")),
                "type": str(err.get("type", "")),
            }
            for err in exc.errors()
        ]
        first = errors[0]["field"] if errors else "body"
        message = f"Invalid request: {first}: {errors[0]['message']}" if errors else "Invalid."
        return JSONResponse(
            envelope("validation_error", message, {"field": first, "errors": errors}),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        json_body = "json" in request.headers.get("content-type", "").lower()
        if exc.status_code == 400 and exc.detail == _UNPARSED_BODY and json_body:
            # not UTF-8, or JSON nested past what the parser follows: as unreadable as
            # JSON that does not parse, which is a 422 naming the body
            message = "Invalid request: body: not JSON that can be read (UTF-8, nested at most"
            message += " a few hundred levels)"
            error = {"field": "body", "message": message, "type": "json_invalid"}
            return JSONResponse(
                envelope("validation_error", message, {"field": "body", "errors": [error]}),
                status_code=422,
            )
        code = _STATUS_CODES.get(exc.status_code, "error" if exc.status_code < 500 else "internal")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return JSONResponse(
            envelope(code, message), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(OperationalError)
    async def _database_failed(request: Request, exc: OperationalError) -> JSONResponse:
        request_id = getattr(request.state, "request_id", "-")
        failure = database_failure(exc.orig)
        log_at = log.warning if failure.code == CONCURRENT_CHANGE else log.error
        log_at(
            failure.log_message,
            extra={
                "request_id": request_id,
                "path": request.url.path,
                "error": type(exc.orig).__name__,
            },
        )
        details: dict[str, Any] = {"request_id": request_id}
        if failure.code == CONCURRENT_CHANGE:
            details["sqlstate"] = getattr(exc.orig, "sqlstate", None)
        return JSONResponse(
            envelope(failure.code, failure.message, details),
            status_code=503,
            headers={"X-Request-ID": request_id, "Retry-After": "1"},
        )

    @app.exception_handler(PoolTimeout)
    async def _pool_exhausted(request: Request, exc: PoolTimeout) -> JSONResponse:
        # every connection of this process's pool stayed in use for the pool's timeout
        request_id = getattr(request.state, "request_id", "-")
        log.error(
            "no database connection free",
            extra={"request_id": request_id, "path": request.url.path},
        )
        return JSONResponse(
            envelope(
                "busy",
                "Every database connection of the service is in use; nothing was done. "
                "Try again shortly.",
                {"request_id": request_id},
            ),
            status_code=503,
            headers={"X-Request-ID": request_id, "Retry-After": "1"},
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        request_id = getattr(request.state, "request_id", "-")
        # no exc_info: whatever formatter a handler uses, the message (which may quote query
        # text or statement parameters) must not reach the log
        log.error(
            "unhandled exception",
            extra={
                "request_id": request_id,
                "path": request.url.path,
                "error": f"{type(exc).__module__}.{type(exc).__qualname__}",
                "traceback": redacted_traceback(exc),
            },
        )
        return JSONResponse(
            envelope(
                "internal",
                "Something went wrong on our side. Quote the request id when reporting it.",
                {"request_id": request_id},
            ),
            status_code=500,
            headers={"X-Request-ID": request_id},
        )
