"""A query parameter that a /v1 route does not declare is a 422 naming it, never ignored.

`GET /v1/audit/retrievals?person=bob@firm.nl` (a typo of ``person_id``) answered every
retrieval of the firm, unfiltered. Every query parameter the contract (api.md) names is
declared, so the check refuses none of them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from fastapi import FastAPI, Query
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from app.query_names import declared_query_names, repeatable_query_names, repeated_names
from tests.conftest import Tokens
from tests.contract.test_error_shape import assert_envelope
from tests.helpers import Firm, ok

COMPLIANCE = ("c@firm.nl", "compliance")
LAWYER = ("alice@firm.nl", "lawyer")

# every query parameter api.md names, by route (its "?a=&b=" forms and its prose:
# retrievals "also filters by session_id"; gate-events "filtered and paged like retrievals",
# whose parameters docs/design.md lists)
DOCUMENTED: dict[tuple[str, str], tuple[str, ...]] = {
    ("get", "/v1/walls"): ("active",),
    ("get", "/v1/people/{person_id}/access"): ("matter_id",),
    ("get", "/v1/conflicts"): ("name",),
    ("get", "/v1/audit/retrievals"): (
        "person_id",
        "matter_id",
        "chunk_id",
        "since",
        "until",
        "limit",
        "cursor",
        "session_id",
    ),
    ("get", "/v1/audit/export"): ("since", "until"),
    ("get", "/v1/walls/{wall_id}/exposure"): ("lookback_days",),
    ("get", "/v1/audit/gate-events"): (
        "person_id",
        "gate",
        "ok",
        "session_id",
        "since",
        "until",
        "limit",
        "cursor",
    ),
}

API_MD = Path(__file__).resolve().parents[2] / ".." / "shared" / "docs" / "api.md"


def _refused(response: Any, name: str, *accepted: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert_envelope(body, "validation_error")
    details = body["error"]["details"]
    assert details["field"] == name, body
    assert details["errors"][0] == {
        "field": name,
        "message": details["errors"][0]["message"],
        "type": "extra_forbidden",
    }, body
    message = body["error"]["message"]
    assert message.startswith(f"Invalid request: {name}: "), message
    for known in accepted:
        assert known in message, message


def _repeated(response: Any, name: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert_envelope(body, "validation_error")
    details = body["error"]["details"]
    assert details["field"] == name, body
    assert details["errors"][0]["type"] == "repeated_parameter", body
    assert body["error"]["message"].startswith(f"Invalid request: {name}: "), body


def _query_params(schema: dict[str, Any], method: str, path: str) -> set[str]:
    operation = schema["paths"][path][method]
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}


def test_every_documented_query_parameter_is_declared(client: TestClient) -> None:
    schema = client.app.openapi()  # type: ignore[attr-defined]
    for (method, path), names in DOCUMENTED.items():
        declared = _query_params(schema, method, path)
        assert set(names) <= declared, (method, path, set(names) - declared)


def test_the_list_holds_every_query_parameter_api_md_writes_out() -> None:
    """api.md's `GET /v1/...?a=&b=` forms are all in DOCUMENTED (the prose ones are added
    by hand): a parameter the contract gains is not refused unnoticed."""
    if not API_MD.is_file():
        pytest.skip(f"{API_MD} is not present on this machine")
    written = re.findall(r"`(GET|POST|PUT|DELETE) (/v1/[^?` ]+)\?([^` ]+)`", API_MD.read_text())
    assert len(written) >= 6, written
    for method, path, query in written:
        template = re.sub(r"\{[^}]+\}", "{}", path)
        matches = [
            names
            for (m, p), names in DOCUMENTED.items()
            if m == method.lower() and re.sub(r"\{[^}]+\}", "{}", p) == template
        ]
        assert matches, (method, path)
        for pair in query.split("&"):
            assert pair.split("=", 1)[0] in matches[0], (method, path, pair)


def test_an_unknown_parameter_on_the_audit_listing_is_refused_not_ignored(
    client: TestClient, auth: Tokens
) -> None:
    comp = auth(*COMPLIANCE)
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.search("alice@firm.nl", "huurovereenkomst")
    everyone = ok(client.get("/v1/audit/retrievals", headers=comp))["items"]
    assert everyone, "the listing has a retrieval to filter"
    typo = client.get("/v1/audit/retrievals", params={"person": "bob@firm.nl"}, headers=comp)
    _refused(typo, "person", "person_id", "matter_id", "session_id")
    # the declared name filters, as before
    filtered = client.get("/v1/audit/retrievals", params={"person_id": "bob@firm.nl"}, headers=comp)
    assert ok(filtered)["items"] == []
    # a known name repeated is refused too (test_a_parameter_given_twice_is_refused_...)
    again = client.get("/v1/audit/retrievals?limit=5&limit=7", headers=comp)
    _repeated(again, "limit")
    # every unknown name is listed; the first is the field
    two = client.get("/v1/audit/retrievals?limit=5&persn=x&matter=M-1&persn=y", headers=comp)
    _refused(two, "persn")
    assert [e["field"] for e in two.json()["error"]["details"]["errors"]] == ["persn", "matter"]


def test_an_unknown_parameter_on_other_audit_routes(client: TestClient, auth: Tokens) -> None:
    comp = auth(*COMPLIANCE)
    _refused(
        client.get("/v1/audit/gate-events", params={"matter_id": "M-1"}, headers=comp),
        "matter_id",
        "person_id",
        "gate",
    )
    _refused(
        client.get("/v1/audit/export", params={"from": "2026-01-01T00:00:00Z"}, headers=comp),
        "from",
        "since",
        "until",
        "after_seq",
    )
    verify = client.get("/v1/audit/verify", params={"full": "1"}, headers=comp)
    _refused(verify, "full")
    assert "(it takes: none)" in verify.json()["error"]["message"]
    # a value without a name is refused too, named as the query string
    _refused(client.get("/v1/audit/verify?=1", headers=comp), "query")


def test_an_unknown_parameter_on_search_refuses_before_anything_runs(
    client: TestClient, auth: Tokens
) -> None:
    lawyer = auth(*LAWYER)
    comp = auth(*COMPLIANCE)
    Firm(client, auth).person("alice@firm.nl")
    body = {"query": "huurovereenkomst ontbinding"}
    refused = client.post("/v1/search", params={"top_k": "50"}, json=body, headers=lawyer)
    _refused(refused, "top_k", "none")
    # nothing was searched, so nothing was audited
    assert ok(client.get("/v1/audit/retrievals", headers=comp))["items"] == []
    ok(client.post("/v1/search", json=body, headers=lawyer))
    assert len(ok(client.get("/v1/audit/retrievals", headers=comp))["items"]) == 1


def test_an_unknown_parameter_on_wall_routes(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.person("bob@firm.nl")
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    wall_id = firm.wall(
        kind="exclusionary", protects={"matters": ["M-1"]}, screened=["bob@firm.nl"]
    )
    _refused(client.get("/v1/walls", params={"activ": "true"}, headers=firm.h), "activ", "active")
    assert [
        w["wall_id"]
        for w in ok(client.get("/v1/walls", params={"active": "true"}, headers=firm.h))["items"]
    ] == [wall_id]
    access = "/v1/people/bob@firm.nl/access"
    _refused(client.get(access, params={"matter": "M-1"}, headers=firm.h), "matter", "matter_id")
    assert ok(client.get(access, params={"matter_id": "M-1"}, headers=firm.h))["allowed"] is False
    _refused(client.get("/v1/conflicts", params={"q": "Acme"}, headers=firm.h), "q", "name")
    # a lift with a parameter it does not take lifts nothing
    lift = f"/v1/walls/{wall_id}/lift"
    refused = client.post(lift, params={"force": "1"}, json={"reason": "done"}, headers=firm.h)
    _refused(refused, "force", "none")
    assert ok(client.get(f"/v1/walls/{wall_id}", headers=firm.h))["active"] is True
    firm.lift(wall_id)


def test_unauthenticated_is_still_401_and_other_routes_are_not_checked(
    client: TestClient, auth: Tokens
) -> None:
    r = client.get("/v1/audit/retrievals", params={"person": "bob@firm.nl"})
    assert r.status_code == 401
    assert_envelope(r.json(), "unauthenticated")
    # probes may carry a load balancer's cache-busting parameter; the console takes its own
    assert client.get("/healthz", params={"_": "1712"}).status_code == 200
    assert client.get("/readyz", params={"_": "1712"}).status_code != 422
    assert client.get("/console/signin", params={"utm_source": "mail"}).status_code == 200
    assert client.get("/openapi.json", params={"v": "2"}).status_code == 200


def test_the_guard_takes_exactly_the_query_parameters_openapi_documents(
    client: TestClient,
) -> None:
    """The names the guard lets through are those /openapi.json lists for the route (its
    dependencies' included), on every /v1 operation: none refused that a client is told to
    send, none let through that no route reads."""
    app: Any = client.app
    schema = app.openapi()
    checked = 0
    for context in iter_route_contexts(app.router.routes):
        route = context.original_route
        path = str(context.path_format)
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        declared = declared_query_names(path, context.dependant)
        if not path.startswith("/v1/"):
            assert declared is None, path
            continue
        assert declared is not None, path
        for method in context.methods or ():
            assert set(declared) == _query_params(schema, method.lower(), path), (method, path)
            checked += 1
    assert checked >= 40, checked


def test_a_parameter_given_twice_is_refused_not_read_as_the_last(
    client: TestClient, auth: Tokens
) -> None:
    """``?matter_id=M-1&matter_id=M-2`` named two matters and FastAPI answered for the last
    alone: the access check said "not allowed" for M-2 while a proxy, a log or a gateway that
    keeps the first value (many do) read it as M-1's answer; a compliance officer's
    ``person_id`` given twice listed one person's retrievals as if for both (a probe of
    2026-12-07). A declared name given twice is a 422 naming it, before anything runs."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.person("bob@firm.nl")
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    firm.matter("M-2", "C-1")
    firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=["bob@firm.nl"])
    access = "/v1/people/bob@firm.nl/access"
    assert ok(client.get(f"{access}?matter_id=M-1", headers=firm.h))["allowed"] is True
    _repeated(client.get(f"{access}?matter_id=M-1&matter_id=M-2", headers=firm.h), "matter_id")
    _repeated(client.get("/v1/walls?active=true&active=false", headers=firm.h), "active")
    comp = auth(*COMPLIANCE)
    firm.search("alice@firm.nl", "huurovereenkomst")
    listing = "/v1/audit/retrievals?person_id=alice@firm.nl&person_id=bob@firm.nl"
    _repeated(client.get(listing, headers=comp), "person_id")
    # an empty value counts, and each name is named once, in order
    both = client.get("/v1/audit/gate-events?ok=&ok=true&limit=1&gate=x&limit=2", headers=comp)
    _repeated(both, "ok")
    assert [e["field"] for e in both.json()["error"]["details"]["errors"]] == ["ok", "limit"]
    # the same value twice is refused as well: the guard does not guess which was meant
    _repeated(client.get("/v1/audit/retrievals?limit=1&limit=1", headers=comp), "limit")
    # names given once each pass as before
    assert ok(client.get(f"{access}?matter_id=M-2", headers=firm.h))["allowed"] is False


def test_a_list_parameter_may_be_given_more_than_once() -> None:
    """Only parameters that take one value are refused when repeated: one that takes a list
    (none of the routes has one today) is read whole, as FastAPI reads it."""
    app = FastAPI()

    @app.get("/v1/probe")
    def probe(
        one: str | None = None, many: Annotated[list[str] | None, Query()] = None
    ) -> dict[str, Any]:
        return {}

    (context,) = [
        c for c in iter_route_contexts(app.router.routes) if str(c.path_format) == "/v1/probe"
    ]
    repeatable = repeatable_query_names(context.dependant)
    assert repeatable == frozenset({"many"})
    assert repeated_names("many=a&many=b&one=x", repeatable) == []
    assert repeated_names("one=x&many=a&one=y&one=z", repeatable) == ["one"]
