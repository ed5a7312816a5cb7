"""A robustness review of the HTTP API (2026-12): bad input is a 4xx in the envelope, never a
200 that reads as an answer, never data lost on a guess; HEAD answers like GET.

Each test failed on the code before its fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client
from tests.contract.test_error_shape import assert_envelope
from tests.helpers import ok


@pytest.fixture(scope="module")
def client(module_db: DbHandle, settings: Any, embedder: Any) -> Iterator[TestClient]:
    with make_client(module_db, settings, embedder) as test_client:
        yield test_client


def _refused(response: Any, status: int, field: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert_envelope(body)
    if field is not None:
        assert body["error"]["details"]["field"] == field, body
    return dict(body["error"])


# --- enumerated query parameters: an unknown value is a 422, not an empty page -----------------


def test_an_unknown_gate_or_purpose_is_a_422_naming_it(client: TestClient, auth: Tokens) -> None:
    comp = auth("c@firm.nl", "compliance")
    for gate in ("citations", "grounding", "session", "retrieval_read", "throttle"):
        assert ok(client.get("/v1/audit/gate-events", params={"gate": gate}, headers=comp))
    for purpose in ("search", "rating", "evaluation"):
        assert ok(client.get("/v1/audit/retrievals", params={"purpose": purpose}, headers=comp))
    r = client.get("/v1/audit/gate-events", params={"gate": "unknown"}, headers=comp)
    _refused(r, 422, "gate")
    r = client.get("/v1/audit/retrievals", params={"purpose": "serach"}, headers=comp)
    _refused(r, 422, "purpose")
