"""Fixtures for the evaluation tests: the app with the evaluation router included.

The lead's ``app/api.py`` includes the router once it is wired in; until then (and in any
case without harm) the test app gets it here, exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.conftest import DbHandle, make_client


def with_eval_router(app: FastAPI) -> FastAPI:
    from app.evaluation.router import router

    paths = {getattr(r, "path", None) for r in app.router.routes}
    if "/v1/eval/judgements" not in paths:
        app.include_router(router)
    return app


@pytest.fixture
def client(db: DbHandle, settings: Settings, embedder: Any) -> Iterator[TestClient]:
    test_client = make_client(db, settings, embedder)
    with_eval_router(test_client.app)  # type: ignore[arg-type]
    with test_client:
        yield test_client
