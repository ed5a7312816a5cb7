"""A party named twice on one matter, in one role, is stored once (app/matrix/schemas.py
``MatterIn._once_each``): it was stored, listed and matched twice. The first spelling is
kept; a legal form that differs ("N.V." beside "B.V.") or another role is another party."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, superuser_rows

GIVEN = [
    {"name": "Acme B.V.", "role": "adverse"},
    {"name": "ACME  b.v.", "role": "adverse"},
    {"name": "Acme N.V.", "role": "adverse"},
    {"name": "Ａｃｍｅ B.V.", "role": "adverse"},
    {"name": "Acme B.V.", "role": "related"},
]
KEPT = [GIVEN[0], GIVEN[2], GIVEN[4]]


def test_a_party_given_twice_is_stored_once(client: TestClient, auth: Tokens, db: DbHandle) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1")
    body = {"client_id": "C-1", "title": "T", "parties": GIVEN, "team": []}
    assert ok(client.put("/v1/matters/M-1", json=body, headers=firm.h))["parties"] == KEPT
    assert ok(client.get("/v1/matters/M-1", headers=firm.h))["parties"] == KEPT
    imported = {"matters": [{**body, "matter_id": "M-2"}]}
    ok(client.post("/v1/matrix/import", json=imported, headers=firm.h))
    assert ok(client.get("/v1/matters/M-2", headers=firm.h))["parties"] == KEPT
    stored = superuser_rows(
        db,
        "SELECT matter_id, name, role FROM matter_parties ORDER BY matter_id, position",
    )
    assert stored == [(m, p["name"], p["role"]) for m in ("M-1", "M-2") for p in KEPT]
