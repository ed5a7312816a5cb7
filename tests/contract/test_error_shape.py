"""One error envelope for every 4xx/5xx, pinned here: it is part of the HTTP contract."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from app.auth.keys import dev_signing_key
from tests.conftest import Tokens


def assert_envelope(body: dict[str, Any], code: str | None = None) -> None:
    assert set(body) >= {"error"}, body
    err = body["error"]
    assert set(err) == {"code", "message", "details"}, err
    assert isinstance(err["code"], str) and err["code"] == err["code"].lower()
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["details"], dict)
    if code is not None:
        assert err["code"] == code, err


def test_401_missing_and_bad_tokens(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer nonsense"}, {"Authorization": "Basic abc"}):
        r = client.post("/v1/search", json={"query": "x"}, headers=headers)
        assert r.status_code == 401
        assert_envelope(r.json(), "unauthenticated")


def test_401_expired_and_wrongly_signed(client: TestClient, settings: Any) -> None:
    import time

    import jwt

    now = int(time.time())
    claims = {"sub": "a@firm.nl", "roles": ["lawyer"], "iss": settings.dev_issuer, "aud": "ewall"}
    expired = jwt.encode(
        {**claims, "iat": now - 7200, "exp": now - 3600},
        dev_signing_key(settings),
        algorithm="HS256",
    )
    forged = jwt.encode(
        {**claims, "exp": now + 3600}, "another-secret-of-enough-length-123456", algorithm="HS256"
    )
    unsigned = jwt.encode({**claims, "exp": now + 3600}, None, algorithm="none")  # type: ignore[arg-type]
    for token in (expired, forged, unsigned):
        r = client.post(
            "/v1/search", json={"query": "x"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 401, token
        assert_envelope(r.json(), "unauthenticated")


def test_403_wrong_role(client: TestClient, auth: Tokens) -> None:
    r = client.post("/v1/search", json={"query": "x"}, headers=auth("c@firm.nl", "compliance"))
    assert r.status_code == 403
    assert_envelope(r.json(), "forbidden")
    r = client.get("/v1/audit/verify", headers=auth("l@firm.nl", "lawyer"))
    assert r.status_code == 403
    assert_envelope(r.json(), "forbidden")


def test_404_unknown_ids(client: TestClient, auth: Tokens) -> None:
    r = client.get("/v1/walls/W-nope", headers=auth("cp@firm.nl", "conflicts"))
    assert r.status_code == 404
    assert_envelope(r.json(), "not_found")
    r = client.get("/v1/audit/retrievals/not-a-uuid", headers=auth("c@firm.nl", "compliance"))
    assert r.status_code == 404
    assert_envelope(r.json(), "not_found")
    r = client.get("/v1/no/such/route")
    assert r.status_code == 404
    assert_envelope(r.json(), "not_found")
    # a huge id is echoed by its start only (the answer stays small)
    r = client.get("/v1/walls/" + "A" * 60_000, headers=auth("cp@firm.nl", "conflicts"))
    assert r.status_code == 404 and len(r.content) < 1_000, len(r.content)
    assert_envelope(r.json(), "not_found")
    assert r.json()["error"]["details"]["id"] == "A" * 200 + "…"


def test_409_lifting_a_lifted_wall(client: TestClient, auth: Tokens) -> None:
    h = auth("cp@firm.nl", "conflicts")
    client.put("/v1/people/p@firm.nl", json={"name": "P"}, headers=h)
    client.put("/v1/clients/C", json={"name": "C"}, headers=h)
    client.put("/v1/matters/M", json={"client_id": "C"}, headers=h)
    wall = client.post(
        "/v1/walls",
        json={
            "kind": "exclusionary",
            "title": "t",
            "protects": {"matters": ["M"]},
            "screened": ["p@firm.nl"],
        },
        headers=h,
    ).json()["wall_id"]
    assert (
        client.post(f"/v1/walls/{wall}/lift", json={"reason": "done"}, headers=h).status_code == 200
    )
    r = client.post(f"/v1/walls/{wall}/lift", json={"reason": "again"}, headers=h)
    assert r.status_code == 409
    assert_envelope(r.json(), "already_lifted")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "filters": {"unknown": 1}}, "filters.unknown"),
        (
            {"query": "x", "filters": {"modified_from": "2020-01-01T00:00:00"}},
            "filters.modified_from",
        ),
        (
            {
                "query": "x",
                "filters": {
                    "modified_from": "2021-01-01T00:00:00Z",
                    "modified_to": "2020-01-01T00:00:00+01:00",
                },
            },
            "filters.modified_to",
        ),
        ({"k": 3}, "query"),
    ],
)
def test_422_names_the_field(
    client: TestClient, auth: Tokens, body: dict[str, Any], field: str
) -> None:
    r = client.post("/v1/search", json=body, headers=auth("l@firm.nl", "lawyer"))
    assert r.status_code == 422
    payload = r.json()
    assert_envelope(payload, "validation_error")
    assert payload["error"]["details"]["field"] == field
    assert field.rsplit(".", maxsplit=1)[-1] in payload["error"]["message"]


def test_an_inverted_range_is_listed_beside_the_other_errors(
    client: TestClient, auth: Tokens
) -> None:
    """Every 422 lists its errors in details.errors. The inverted range was checked before
    the filters' fields and reported alone: a body with an empty doc_types as well named
    only modified_to, and a caller mended one error to meet the next."""
    inverted_range = {
        "modified_from": "2021-01-01T00:00:00Z",
        "modified_to": "2020-01-01T00:00:00Z",
    }
    body = {"query": "x", "k": 0, "filters": {"doc_types": [], **inverted_range}}
    r = client.post("/v1/search", json=body, headers=auth("l@firm.nl", "lawyer"))
    assert r.status_code == 422, r.text
    details = r.json()["error"]["details"]
    assert {e["field"] for e in details["errors"]} == {
        "k",
        "filters.doc_types",
        "filters.modified_to",
    }, details
    inverted = next(e for e in details["errors"] if e["field"] == "filters.modified_to")
    assert "must not be before modified_from" in inverted["message"], inverted
    # alone, it is the field named, as before
    body = {"query": "x", "filters": inverted_range}
    alone = client.post("/v1/search", json=body, headers=auth("l@firm.nl", "lawyer")).json()
    assert alone["error"]["details"]["field"] == "filters.modified_to", alone
    assert [e["field"] for e in alone["error"]["details"]["errors"]] == ["filters.modified_to"]
    # the audit's inverted window: the same shape (the field, and the list of errors)
    backwards = {"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}
    compliance = auth("co@firm.nl", "compliance")
    refused = client.get("/v1/audit/export", params=backwards, headers=compliance)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["errors"] == [
        {"field": "until", "message": "must not be before since", "type": "value_error"}
    ], refused.text


def test_422_for_broken_json(client: TestClient, auth: Tokens) -> None:
    r = client.post(
        "/v1/search",
        content=b"{not json",
        headers={**auth("l@firm.nl", "lawyer"), "Content-Type": "application/json"},
    )
    assert r.status_code == 422
    assert_envelope(r.json(), "validation_error")
    # the body is what is wrong, not a field named by a character offset ("1")
    assert r.json()["error"]["details"]["field"] == "body"


def test_500_reveals_nothing_and_carries_a_request_id(client: TestClient) -> None:
    router = APIRouter()

    @router.get("/__boom")
    def boom() -> None:
        raise RuntimeError("secret internal detail: password=hunter2")

    client.app.include_router(router)  # type: ignore[attr-defined]
    r = client.get("/__boom", headers={"X-Request-ID": "req-123"})
    assert r.status_code == 500
    body = r.json()
    assert_envelope(body, "internal")
    assert "hunter2" not in r.text and "RuntimeError" not in r.text
    assert body["error"]["details"]["request_id"] == "req-123"
