"""Fixtures of the gate tests: the fake judiciary endpoint and an app that serves the gates."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, make_client, make_settings
from tests.fakes.rechtspraak import FakeRechtspraak


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeRechtspraak]:
    with FakeRechtspraak() as fake:
        yield fake


@pytest.fixture
def rechtspraak(fake_server: FakeRechtspraak) -> Iterator[FakeRechtspraak]:
    """The shared fake with no knobs set and no hits counted."""
    fake_server.reset()
    yield fake_server
    fake_server.reset()


def include_gates(app: FastAPI) -> None:
    """Until app/api.py includes the gate router, tests include it themselves."""
    if not any(getattr(r, "path", "").startswith("/v1/gates") for r in app.routes):
        from app.gates.router import router

        app.include_router(router)


GateClient = Callable[..., TestClient]


@pytest.fixture
def gate_client(db: DbHandle, embedder: Any) -> Iterator[GateClient]:
    """Factory: a started TestClient whose settings take the given overrides."""
    opened: list[TestClient] = []

    def build(**overrides: Any) -> TestClient:
        client = make_client(db, make_settings(**overrides), embedder)
        include_gates(client.app)  # type: ignore[arg-type]
        client.__enter__()
        opened.append(client)
        return client

    yield build
    for client in opened:
        client.__exit__(None, None, None)
