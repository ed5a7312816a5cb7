"""Route x role matrix, generated from the application's own route table.

Every route the app serves must appear in ROLES below (the access policy of the HTTP
contract); a new route that is not listed fails `test_every_route_is_in_the_matrix`, and every
listed route is called with a token of each role: a role outside its set gets 403, a role
inside it gets past the check, and no token gets 401. So a route added without a role
check, or a check loosened to a wider role, fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client

ALL_ROLES = ("lawyer", "conflicts", "compliance", "admin")
PUBLIC = "public"  # no token needed (operations, docs, the rating page shell)
ANY = "any authenticated"  # the route itself narrows (e.g. own retrieval or compliance)

ROLES: dict[tuple[str, str], str | frozenset[str]] = {
    ("GET", "/openapi.json"): PUBLIC,
    ("GET", "/docs"): PUBLIC,
    ("GET", "/docs/oauth2-redirect"): PUBLIC,
    ("GET", "/redoc"): PUBLIC,
    ("GET", "/healthz"): PUBLIC,
    ("GET", "/readyz"): PUBLIC,
    ("GET", "/metrics"): PUBLIC,
    ("GET", "/rate"): PUBLIC,
    ("GET", "/rate/rate.js"): PUBLIC,
    ("POST", "/v1/search"): frozenset({"lawyer"}),
    ("GET", "/v1/search/synonyms"): frozenset({"admin"}),
    ("PUT", "/v1/search/synonyms"): frozenset({"admin"}),
    ("DELETE", "/v1/search/synonyms"): frozenset({"admin"}),
    ("PUT", "/v1/people/{person_id}"): frozenset({"conflicts", "admin"}),
    ("GET", "/v1/people/{person_id}"): frozenset({"conflicts", "admin"}),
    ("PUT", "/v1/groups/{source}/{group_id}"): frozenset({"conflicts", "admin"}),
    ("PUT", "/v1/clients/{client_id}"): frozenset({"conflicts", "admin"}),
    ("GET", "/v1/clients/{client_id}"): frozenset({"conflicts", "admin"}),
    ("PUT", "/v1/matters/{matter_id}"): frozenset({"conflicts", "admin"}),
    ("GET", "/v1/matters/{matter_id}"): frozenset({"conflicts", "admin"}),
    ("POST", "/v1/matrix/import"): frozenset({"conflicts", "admin"}),
    ("POST", "/v1/walls"): frozenset({"conflicts"}),
    ("GET", "/v1/walls"): frozenset({"conflicts", "compliance"}),
    ("GET", "/v1/walls/{wall_id}"): frozenset({"conflicts", "compliance"}),
    ("POST", "/v1/walls/{wall_id}/lift"): frozenset({"conflicts"}),
    ("POST", "/v1/walls/preview"): frozenset({"conflicts"}),
    ("GET", "/v1/walls/{wall_id}/exposure"): frozenset({"conflicts", "compliance"}),
    ("GET", "/v1/people/{person_id}/access"): frozenset({"conflicts", "compliance"}),
    ("GET", "/v1/conflicts"): frozenset({"conflicts"}),
    ("GET", "/v1/admin/retag"): frozenset({"conflicts", "admin", "compliance"}),
    ("POST", "/v1/documents"): frozenset({"admin"}),
    ("DELETE", "/v1/documents/{source}/{external_id:path}"): frozenset({"admin"}),
    ("GET", "/v1/documents/{source}/{external_id:path}"): frozenset({"admin"}),
    ("POST", "/v1/ingest/runs"): frozenset({"admin"}),
    ("GET", "/v1/ingest/runs/{run_id}"): frozenset({"admin"}),
    ("POST", "/v1/ingest/runs/{run_id}/confirm-sweep"): frozenset({"admin"}),
    ("GET", "/v1/audit/retrievals"): frozenset({"compliance"}),
    # compliance reads any, a lawyer their own; no other token (a fuzz read its own rows
    # with roles [] or ["admin"])
    ("GET", "/v1/audit/retrievals/{retrieval_id}"): frozenset({"compliance", "lawyer"}),
    ("GET", "/v1/audit/verify"): frozenset({"compliance"}),
    ("GET", "/v1/audit/export"): frozenset({"compliance"}),
    ("GET", "/v1/audit/policy-events"): frozenset({"compliance"}),
    ("GET", "/v1/audit/gate-events"): frozenset({"compliance"}),
    ("POST", "/v1/gates/citations"): frozenset({"lawyer"}),
    ("POST", "/v1/gates/grounding"): frozenset({"lawyer"}),
    ("POST", "/v1/gates/session"): frozenset({"lawyer", "compliance"}),
    ("GET", "/v1/caselaw"): frozenset({"admin"}),
    ("GET", "/v1/caselaw/{ecli}"): frozenset({"admin"}),
    ("POST", "/v1/caselaw/{ecli}/confirm"): frozenset({"admin"}),
    ("GET", "/v1/eval/sets"): frozenset({"lawyer", "admin"}),
    ("GET", "/v1/eval/sets/{name}"): frozenset({"lawyer", "admin"}),
    ("PUT", "/v1/eval/sets/{name}"): frozenset({"admin"}),
    ("GET", "/v1/eval/sets/{name}/queries/{n}/results"): frozenset({"lawyer"}),
    ("POST", "/v1/eval/judgements"): frozenset({"lawyer"}),
}

# The writes and admin routes through which access itself can be widened: a lawyer must
# never reach them (team membership, aliases and walls decide what everyone may see).
LAWYER_MUST_NOT = [
    ("POST", "/v1/walls"),
    ("POST", "/v1/walls/{wall_id}/lift"),
    ("PUT", "/v1/matters/{matter_id}"),
    ("PUT", "/v1/people/{person_id}"),
    ("PUT", "/v1/groups/{source}/{group_id}"),
    ("PUT", "/v1/clients/{client_id}"),
    ("POST", "/v1/matrix/import"),
    ("POST", "/v1/documents"),
    ("DELETE", "/v1/documents/{source}/{external_id:path}"),
    ("POST", "/v1/ingest/runs"),
    ("GET", "/v1/admin/retag"),
    ("PUT", "/v1/search/synonyms"),
    ("DELETE", "/v1/search/synonyms"),
    ("PUT", "/v1/eval/sets/{name}"),
    ("POST", "/v1/caselaw/{ecli}/confirm"),
]


@pytest.fixture(scope="module")
def client(module_db: DbHandle, settings: Any, embedder: Any) -> Iterator[TestClient]:
    """The app exactly as create_app builds it (one per module: the calls change little)."""
    with make_client(module_db, settings, embedder) as test_client:
        yield test_client


def app_routes(client: TestClient) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        path = route.path
        assert path is not None
        for method in route.methods or ():
            if method != "HEAD":
                out.add((method, path))
    return out


def _url(path: str) -> str:
    """A concrete URL for a route path: integers where one is expected, names elsewhere."""
    return re.sub(
        r"\{([a-z_]+)(:path)?\}", lambda m: "1" if m.group(1) == "n" else f"x-{m.group(1)}", path
    )


def _call(client: TestClient, method: str, path: str, headers: dict[str, str]) -> Any:
    url = _url(path)
    if method in ("POST", "PUT"):
        return client.request(method, url, headers=headers, json={})
    return client.request(method, url, headers=headers)


# The console (/console) signs in with a cookie session, never a bearer token; its pages x
# roles are tested in tests/console/test_console_http.py. Here: every console route is known,
# and each one outside CONSOLE_OPEN refuses a caller without a console session, whatever
# bearer token it brings (a bearer token must not open a console page).
CONSOLE_OPEN = {
    ("GET", "/console/static/console.css"),
    ("GET", "/console/signin"),
    ("POST", "/console/signin"),
    ("GET", "/console/oidc/start"),
    ("GET", "/console/oidc/callback"),
    ("POST", "/console/signout"),
}
CONSOLE_SESSION = {
    ("GET", "/console"),
    ("GET", "/console/"),
    ("GET", "/console/walls"),
    ("GET", "/console/walls/new"),
    ("POST", "/console/walls/preview"),
    ("POST", "/console/walls/edit"),
    ("POST", "/console/walls"),
    ("GET", "/console/walls/{wall_id}"),
    ("POST", "/console/walls/{wall_id}/lift"),
    ("GET", "/console/access"),
    ("GET", "/console/conflicts"),
    ("GET", "/console/audit"),
    ("GET", "/console/audit/export.{fmt}"),
    ("GET", "/console/audit/retrievals/{retrieval_id}"),
    ("GET", "/console/audit/matter"),
}


@pytest.mark.parametrize("route", sorted(CONSOLE_SESSION))
def test_console_routes_refuse_callers_without_a_console_session(
    client: TestClient, auth: Tokens, route: tuple[str, str]
) -> None:
    method, path = route
    callers: list[dict[str, str]] = [{}, *(auth("someone@firm.nl", r) for r in ALL_ROLES)]
    for headers in callers:
        client.cookies.clear()
        url = _url(path)
        response = client.request(method, url, headers=headers, follow_redirects=False)
        assert response.status_code in (303, 403), (route, headers, response.status_code)
        if response.status_code == 303:
            assert response.headers["location"].startswith("/console/signin"), route


def test_every_route_is_in_the_matrix(client: TestClient) -> None:
    served = app_routes(client)
    console = {r for r in served if r[1] == "/console" or r[1].startswith("/console/")}
    unknown = sorted(console - CONSOLE_OPEN - CONSOLE_SESSION)
    assert not unknown, f"console routes in neither CONSOLE_OPEN nor CONSOLE_SESSION: {unknown}"
    served -= console
    missing = sorted(served - set(ROLES))
    assert not missing, f"routes without an entry in the role matrix: {missing}"
    gone = sorted(set(ROLES) - served)
    assert not gone, f"routes in the matrix that the app no longer serves: {gone}"
    assert set(LAWYER_MUST_NOT) <= served


@pytest.mark.parametrize("route", sorted(ROLES), ids=lambda r: f"{r[0]} {r[1]}")
def test_route_x_role(client: TestClient, auth: Tokens, route: tuple[str, str]) -> None:
    method, path = route
    allowed = ROLES[route]
    anonymous = _call(client, method, path, {})
    if allowed == PUBLIC:
        assert anonymous.status_code not in (401, 403), anonymous.text
        return
    assert anonymous.status_code == 401, anonymous.text
    assert anonymous.json()["error"]["code"]
    for role in ALL_ROLES:
        r = _call(client, method, path, auth("someone@firm.nl", role))
        if allowed == ANY or role in allowed:
            assert r.status_code not in (401, 403), (role, r.status_code, r.text)
            assert r.status_code < 500, (role, r.text)
        else:
            assert r.status_code == 403, (role, r.status_code, r.text)
            assert r.json()["error"]["code"], r.text
    if isinstance(allowed, frozenset):
        # every role it should not have, all at once, is still refused
        others = [r for r in ALL_ROLES if r not in allowed]
        if others:
            r = _call(client, method, path, auth("someone@firm.nl", *others))
            assert r.status_code == 403, (others, r.text)


def test_lawyers_are_refused_on_every_write_and_admin_route(
    client: TestClient, auth: Tokens
) -> None:
    served = app_routes(client)
    for method, path in LAWYER_MUST_NOT:
        assert (method, path) in served
        r = _call(client, method, path, auth("lawyer@firm.nl", "lawyer"))
        assert r.status_code == 403, (method, path, r.status_code, r.text)
