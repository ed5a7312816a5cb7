"""Fixtures of the gate tests: the fake judiciary endpoint and an app that serves the gates."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
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


GateClient = Callable[..., TestClient]


@pytest.fixture
def gate_client(db: DbHandle, embedder: Any) -> Iterator[GateClient]:
    """Factory: a started TestClient whose settings take the given overrides (the app as
    create_app builds it: no router is added here)."""
    opened: list[TestClient] = []

    def build(**overrides: Any) -> TestClient:
        client = make_client(db, make_settings(**overrides), embedder)
        client.__enter__()
        opened.append(client)
        return client

    yield build
    for client in opened:
        client.__exit__(None, None, None)
