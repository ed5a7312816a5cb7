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
from tests.helpers import ADMIN, ok


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


# --- a person's name ------------------------------------------------------------------------


def test_a_person_keeps_their_name_when_a_put_leaves_it_out(
    client: TestClient, auth: Tokens
) -> None:
    admin = auth(*ADMIN)
    url = "/v1/people/named@firm.nl"
    # a new person needs a name; an empty or null one is never a name
    _refused(client.put(url, json={}, headers=admin), 422, "name")
    _refused(client.put(url, json={"name": ""}, headers=admin), 422, "name")
    _refused(client.put(url, json={"name": "  "}, headers=admin), 422, "name")
    bulk = {"people": [{"person_id": "named@firm.nl", "active": True}]}
    _refused(client.post("/v1/matrix/import", json=bulk, headers=admin), 422, "name")
    ok(client.put(url, json={"name": "Anna Named"}, headers=admin))
    # a PUT that only switches the person off keeps the name, and says so
    out = ok(client.put(url, json={"active": False}, headers=admin))
    assert (out["name"], out["active"]) == ("Anna Named", False)
    stored = ok(client.get(url, headers=admin))
    assert (stored["name"], stored["active"]) == ("Anna Named", False)
    _refused(client.put(url, json={"name": None}, headers=admin), 422, "name")
    _refused(client.put(url, json={"name": ""}, headers=admin), 422, "name")
    bulk = {"people": [{"person_id": "named@firm.nl", "active": True}]}
    ok(client.post("/v1/matrix/import", json=bulk, headers=admin))
    stored = ok(client.get(url, headers=admin))
    assert (stored["name"], stored["active"]) == ("Anna Named", True)
    # a name given replaces it, as before
    assert ok(client.put(url, json={"name": "Anna"}, headers=admin))["name"] == "Anna"
    assert ok(client.get(url, headers=admin))["name"] == "Anna"
