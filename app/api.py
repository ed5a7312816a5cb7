"""All routers of the HTTP API, in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from app.audit.router import router as audit_router
from app.caselaw.router import router as caselaw_router
from app.console.router import install as install_console
from app.errors import ERROR_RESPONSES, ERROR_SCHEMA_REF
from app.evaluation.router import router as eval_router
from app.gates.router import router as gates_router
from app.ingest.router import router as ingest_router
from app.matrix.router import router as matrix_router
from app.search.router import router as search_router
from app.walls.router import router as walls_router


def include_routers(app: FastAPI) -> None:
    for router in (
        search_router,
        matrix_router,
        walls_router,
        ingest_router,
        audit_router,
        gates_router,
        caselaw_router,
        eval_router,
    ):
        app.include_router(router, responses=ERROR_RESPONSES)
    install_console(app)
    app.openapi = _with_error_bodies(app.openapi)  # type: ignore[method-assign]


def _with_error_bodies(build: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """/openapi.json with the envelope's schema on every 4xx/5xx a route documents: a
    route's own entry for a status (its 429's description) replaces the routers' whole
    entry, schema included (a review found ten such refusals without one)."""

    def openapi() -> dict[str, Any]:
        schema = build()  # FastAPI builds it once and keeps it
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for status, response in operation.get("responses", {}).items():
                    if status[:1] in "45" and "content" not in response:
                        response["content"] = {
                            "application/json": {"schema": {"$ref": ERROR_SCHEMA_REF}}
                        }
        return schema

    return openapi
