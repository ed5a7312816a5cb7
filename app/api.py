"""All routers of the HTTP API, in one place."""

from __future__ import annotations

from fastapi import FastAPI

from app.audit.router import router as audit_router
from app.caselaw.router import router as caselaw_router
from app.console.router import install as install_console
from app.errors import ERROR_RESPONSES
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
