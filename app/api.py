"""All routers of the HTTP API, in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI

from app.audit.router import router as audit_router
from app.caselaw.router import router as caselaw_router
from app.console.router import install as install_console
from app.console.router import router as console_router
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
        _include(app, router, responses=ERROR_RESPONSES)
    _include(app, console_router)
    install_console(app)
    app.openapi = _with_error_bodies(app.openapi)  # type: ignore[method-assign]


# FastAPI (0.165) builds the contexts of an included router's routes (dependants, body
# and response validators, the handler) on the first request that reaches the router, once
# per inclusion, that is per app: 0.15-0.25 s of CPU for this API's routers. A service
# builds one app; the tests build one per test and paid it every time (a fifth of the
# samples of a py-spy over tests of walls, ingest, audit, gates and search, issue 27). The
# routers are this module's and included alike into every app, so the process keeps the
# first inclusion of each and hands it to the next app: the same route objects, contexts
# built once. The API takes no dependency overrides (nothing in ewall sets any): the kept
# inclusion reads none, whichever app serves it.
_KEPT: dict[int, tuple[APIRouter, Any]] = {}


def _include(app: FastAPI, router: APIRouter, **include: Any) -> None:
    app.include_router(router, **include)
    included = app.router.routes[-1]
    context = getattr(included, "include_context", None)
    if getattr(included, "original_router", None) is not router or context is None:
        return  # a FastAPI that includes otherwise: keep what it built
    context.dependency_overrides_provider = None
    kept = _KEPT.get(id(router))
    if kept is not None and kept[0] is router and kept[1].include_context == context:
        app.router.routes[-1] = kept[1]
    else:
        _KEPT[id(router)] = (router, included)


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
