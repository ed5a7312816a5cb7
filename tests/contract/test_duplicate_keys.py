"""A name given twice in one object of a JSON body is a 422 naming it, on every route.

Found by probing the running service (2026-12-07): the parser kept the last of two equal
names, so ``{"filters": {"matter_ids": ["M-1"]}, "filters": null}`` searched every matter
the lawyer may see and was audited as a search without filters, and a wall body giving
``"screened"`` twice screened only the second list. A gateway or the caller's own log that
keeps the first name reads another request than the one ewall ran and audited.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import text

from app.json_keys import duplicate_key_path
from tests.conftest import DbHandle, Tokens
from tests.contract.test_error_shape import assert_envelope
from tests.contract.test_hardening import EVERY_ROLE, _minimal
from tests.helpers import Firm, ok

JSON = {"Content-Type": "application/json"}


def _refused(r: Any, field: str) -> None:
    assert r.status_code == 422, r.text
    body = r.json()
    assert_envelope(body, "validation_error")
    assert body["error"]["details"]["field"] == field, body
    assert body["error"]["details"]["errors"][0]["type"] == "duplicate_key", body


def test_a_repeated_filters_does_not_widen_a_search_nor_reach_the_audit(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    firm = Firm(client, auth)
    firm.person("l@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    firm.matter("M-2", "C-1")
    firm.document(
        "d1", "Huurachterstand en ontruiming van de woning.", client_id="C-1", matter_id="M-1"
    )
    firm.document(
        "d2", "Huurachterstand en ontruiming van het pand.", client_id="C-1", matter_id="M-2"
    )
    narrowed = firm.matters_seen(
        "l@firm.nl", "huurachterstand ontruiming", filters={"matter_ids": ["M-1"]}
    )
    assert narrowed == {"M-1"}
    h = {**auth("l@firm.nl", "lawyer"), **JSON}
    with db.database.connect() as conn:
        before = conn.execute(text("SELECT count(*) FROM audit_retrievals")).scalar()
    body = (
        b'{"query": "huurachterstand ontruiming", '
        b'"filters": {"matter_ids": ["M-1"]}, "filters": null}'
    )
    _refused(client.post("/v1/search", content=body, headers=h), "filters")
    nested = (
        b'{"query": "huurachterstand ontruiming", '
        b'"filters": {"matter_ids": ["M-1"], "matter_ids": ["M-2"]}}'
    )
    _refused(client.post("/v1/search", content=nested, headers=h), "filters.matter_ids")
    # the same name spelled with an escape is the same name
    escaped = b'{"query": "huur", "k": 5, "\\u006b": 6}'
    _refused(client.post("/v1/search", content=escaped, headers=h), "k")
    with db.database.connect() as conn:
        after = conn.execute(text("SELECT count(*) FROM audit_retrievals")).scalar()
    assert after == before


def test_a_wall_whose_screened_list_is_repeated_is_not_issued(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    for person in ("a@firm.nl", "b@firm.nl"):
        firm.person(person)
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    body = (
        json.dumps(
            {
                "kind": "exclusionary",
                "title": "screen",
                "reason": "r",
                "protects": {"matters": ["M-1"]},
            }
        )[:-1]
        + ', "screened": ["a@firm.nl"], "screened": ["b@firm.nl"]}'
    )
    h = {**auth("cp@firm.nl", "conflicts"), **JSON}
    _refused(client.post("/v1/walls", content=body, headers=h), "screened")
    assert ok(client.get("/v1/walls", headers=h))["items"] == []
    assert firm.access("a@firm.nl", "M-1")["allowed"] is True


def test_equal_names_in_different_objects_are_no_repetition(
    client: TestClient, auth: Tokens
) -> None:
    body = {
        "people": [
            {"person_id": "a@firm.nl", "name": "A", "active": True, "aliases": []},
            {"person_id": "b@firm.nl", "name": "B", "active": True, "aliases": []},
        ],
        "clients": [{"client_id": "C-1", "name": "C", "parent_id": None}],
        "matters": [],
    }
    ok(client.post("/v1/matrix/import", json=body, headers=auth("ad@firm.nl", "admin")))


def test_a_repeated_name_is_a_422_naming_it_on_every_route_with_a_json_body(
    client: TestClient, auth: Tokens
) -> None:
    spec = client.get("/openapi.json").json()
    h = {**auth(*EVERY_ROLE), **JSON}
    cases = 0
    failures = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            schema = (op.get("requestBody", {}).get("content", {}).get("application/json", {})).get(
                "schema"
            )
            if not schema:
                continue
            params = op.get("parameters", [])
            url = path.format(
                **{p["name"]: str(_minimal(spec, p["schema"])) for p in params if p["in"] == "path"}
            )
            query = {
                p["name"]: _minimal(spec, p["schema"])
                for p in params
                if p["in"] == "query" and p.get("required")
            }
            body = _minimal(spec, schema)
            if not isinstance(body, dict) or not body:
                continue
            name = next(iter(body))
            repeated = json.dumps(body)[:-1] + f", {json.dumps(name)}: {json.dumps(body[name])}}}"
            cases += 1
            r = client.request(method.upper(), url, params=query, content=repeated, headers=h)
            field = r.json().get("error", {}).get("details", {}).get("field")
            if r.status_code != 422 or field != name:
                failures.append((method, url, name, r.status_code, r.text[:200]))
    assert cases >= 12
    assert not failures, failures


def test_the_place_of_a_repeated_name() -> None:
    assert duplicate_key_path(b'{"a": 1, "b": 2}') is None
    assert duplicate_key_path(b'{"a": 1, "a": 2}') == ("a",)
    assert duplicate_key_path(b'{"m": [{"x": 1}, {"y": 1, "y": 2}]}') == ("m", "1", "y")
    assert duplicate_key_path(b'[{"a": {"b": 1, "b": 1}}]') == ("0", "a", "b")
    # no JSON, or JSON nested past the parser's depth: the route's own parser answers
    assert duplicate_key_path(b'{"a": 1, "a": ') is None
    assert duplicate_key_path(b"[" * 100_000 + b"]" * 100_000) is None
