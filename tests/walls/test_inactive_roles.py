"""A person the conflict matrix marks inactive keeps no conflicts, compliance or admin role
(attack round of 2026-12-07, third). Inactive people see no matter, but the roles came from
the token alone: a compliance officer who had left the firm read the whole audit log (every
lawyer's questions) with a token still valid, a conflicts partner deactivated issued and
lifted walls, and an admin deactivated could put themselves back. The identity provider
says who someone is; the matrix says whether they still act for the firm."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.console.conftest import console_client, sign_in
from tests.helpers import Firm, ok

GONE = "gone@firm.nl"


def test_an_inactive_person_keeps_no_staff_role(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.person(GONE)
    # while active: each role answers
    assert client.get("/v1/audit/retrievals", headers=auth(GONE, "compliance")).status_code == 200
    assert client.get("/v1/walls", headers=auth(GONE, "conflicts")).status_code == 200
    firm.person(GONE, active=False)
    wall: dict[str, Any] = {
        "kind": "exclusionary", "title": "t", "reason": "r",
        "protects": {"matters": ["M-1"]}, "screened": ["alice@firm.nl"],
    }  # fmt: skip
    refused = [
        client.get("/v1/audit/retrievals", headers=auth(GONE, "compliance")),
        client.get("/v1/audit/verify", headers=auth(GONE, "compliance")),
        client.get("/v1/walls", headers=auth(GONE, "conflicts")),
        client.post("/v1/walls", json=wall, headers=auth(GONE, "conflicts")),
        client.put(
            f"/v1/people/{GONE}",
            json={"name": "Gone", "active": True},
            headers=auth(GONE, "admin", "conflicts"),
        ),
        client.get("/v1/documents/api/x", headers=auth(GONE, "admin")),
    ]
    for response in refused:
        assert response.status_code == 403, (response.request.url, response.text)
        error = response.json()["error"]
        assert error["code"] == "forbidden", error
        if response.request.url.path != "/v1/audit/retrievals":  # its own words for a role
            assert "inactive" in error["message"], error
    assert ok(client.get("/v1/walls", headers=firm.h))["items"] == []
    # the lawyer role stays what it was: a search that sees nothing (tests/search)
    assert (
        ok(client.post("/v1/search", json={"query": "x"}, headers=auth(GONE, "lawyer")))["results"]
        == []
    )
    # someone the matrix does not know keeps their roles (service accounts, api.md)
    assert client.get("/v1/walls", headers=auth("svc@firm.nl", "conflicts")).status_code == 200
    # active again (by someone else): the roles apply again
    firm.person(GONE)
    assert client.get("/v1/walls", headers=auth(GONE, "conflicts")).status_code == 200


def test_an_inactive_person_gets_no_console_pages(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person(GONE)
    signed_in = console_client(firm)
    assert sign_in(signed_in, auth, GONE, "compliance").status_code == 303
    assert signed_in.get("/console/audit", follow_redirects=False).status_code == 200
    firm.person(GONE, active=False)
    # a session begun before: refused from the next page on
    assert signed_in.get("/console/audit", follow_redirects=False).status_code == 403
    # and a new sign-in has no console pages, and says why
    refused = sign_in(console_client(firm), auth, GONE, "compliance")
    assert refused.status_code == 403
    assert "marked inactive" in refused.text, refused.text
