"""A robustness review of the HTTP API (2026-12): bad input is a 4xx in the envelope, never a
200 that reads as an answer, never data lost on a guess; HEAD answers like GET.

Each test failed on the code before its fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.contract.test_error_shape import assert_envelope
from tests.helpers import ADMIN, Firm, ok, superuser_rows


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
    # an empty or null name is never a name; a new person without one is named by their id
    _refused(client.put(url, json={"name": ""}, headers=admin), 422, "name")
    _refused(client.put(url, json={"name": "  "}, headers=admin), 422, "name")
    assert ok(client.put(url, json={}, headers=admin))["name"] == "named@firm.nl"
    bulk = {"people": [{"person_id": "bulk@firm.nl", "active": True}]}
    ok(client.post("/v1/matrix/import", json=bulk, headers=admin))
    assert ok(client.get("/v1/people/bulk@firm.nl", headers=admin))["name"] == "bulk@firm.nl"
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


# --- sources: one rule for a source name, nothing removed on a guess -------------------------


def test_a_group_source_must_be_a_source_name(
    client: TestClient, auth: Tokens, module_db: DbHandle
) -> None:
    admin = auth(*ADMIN)
    members = {"members": ["dms2:user:anna"]}
    for source in ("a%20b", "a:b", "x" * 41, "%C3%A9tude"):
        _refused(client.put(f"/v1/groups/{source}/lit", json=members, headers=admin), 422, "source")
    bulk = {"groups": [{"source": "a b", "group_id": "lit", "members": []}]}
    _refused(client.post("/v1/matrix/import", json=bulk, headers=admin), 422)
    # a source no connector reads is fine (a pushed document's access list may name it), and
    # a source or group id is folded as the principals naming the group are
    assert ok(client.put("/v1/groups/dms2/lit", json=members, headers=admin))["source"] == "dms2"
    out = ok(client.put("/v1/groups/DMS3/Lit", json=members, headers=admin))
    assert (out["source"], out["group_id"]) == ("dms3", "lit")
    bulk = {"groups": [{"source": "DMS4", "group_id": "LIT", "members": ["dms4:user:anna"]}]}
    ok(client.post("/v1/matrix/import", json=bulk, headers=admin))
    stored = superuser_rows(
        module_db, "SELECT source, group_id FROM source_groups WHERE source LIKE 'dms%%' "
        "OR source LIKE 'DMS%%' ORDER BY 1"
    )  # fmt: skip
    assert stored == [("dms2", "lit"), ("dms3", "lit"), ("dms4", "lit")]


def test_a_document_route_takes_the_source_exactly_as_a_push_does(
    client: TestClient, auth: Tokens
) -> None:
    admin = auth(*ADMIN)
    pushed = {"source": "api", "external_id": "D-5", "text": "Een brief over de huur."}
    ok(client.post("/v1/documents", json=pushed, headers=admin))
    _refused(client.post("/v1/documents", json={**pushed, "source": "API"}, headers=admin), 422)
    # DELETE used to fold "API" to api and remove api's document
    _refused(client.delete("/v1/documents/API/D-5", headers=admin), 422, "source")
    _refused(client.get("/v1/documents/API/D-5", headers=admin), 422, "source")
    _refused(client.delete("/v1/documents/a%20pi/D-5", headers=admin), 422, "source")
    assert ok(client.get("/v1/documents/api/D-5", headers=admin))["external_id"] == "D-5"
    assert ok(client.delete("/v1/documents/api/D-5", headers=admin))["source"] == "api"
    _refused(client.get("/v1/documents/api/D-5", headers=admin), 404)


def test_a_document_route_takes_the_external_id_as_a_push_stores_it(
    client: TestClient, auth: Tokens
) -> None:
    """A push strips the spaces around external_id; GET and DELETE took the path's id as
    written and answered 404 for the id a push had just taken."""
    admin = auth(*ADMIN)
    pushed = {"source": "api", "external_id": " D-6\t", "text": "Een brief over de huur."}
    ok(client.post("/v1/documents", json=pushed, headers=admin))
    assert ok(client.get("/v1/documents/api/%20D-6%09", headers=admin))["external_id"] == "D-6"
    _refused(client.get("/v1/documents/api/%20", headers=admin), 422, "external_id")
    # an id that is another one once trimmed is never read as this one
    _refused(client.delete("/v1/documents/api/D-6%20x", headers=admin), 404)
    _refused(client.delete("/v1/documents/api/d-6", headers=admin), 404)
    gone = ok(client.delete("/v1/documents/api/D-6%20", headers=admin))
    assert (gone["source"], gone["external_id"]) == ("api", "D-6"), gone
    _refused(client.get("/v1/documents/api/D-6", headers=admin), 404)


# --- HEAD is GET without the body ------------------------------------------------------------


def test_head_answers_as_get_without_the_body(client: TestClient, auth: Tokens) -> None:
    comp, lawyer = auth("c@firm.nl", "compliance"), auth("l@firm.nl", "lawyer")
    for url, headers in (("/healthz", {}), ("/v1/walls", comp), ("/v1/audit/verify", comp)):
        got, head = client.get(url, headers=headers), client.head(url, headers=headers)
        assert got.status_code == head.status_code == 200, (url, head.status_code)
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-length"] == str(len(got.content))
    # the same refusals as the GET: no token, the wrong role, an unknown id
    assert client.head("/v1/walls").status_code == 401
    assert client.head("/v1/walls", headers=lawyer).status_code == 403
    assert client.head("/v1/walls/nope", headers=comp).status_code == 404
    # the request log and the metrics name the HEAD and its route
    assert 'method="HEAD",route="/v1/walls",status="200"' in client.get("/metrics").text
    # a route without a GET still has no HEAD
    r = client.head("/v1/search", headers=lawyer)
    assert r.status_code == 405 and r.content == b"" and r.headers["allow"] == "POST"


def test_a_head_has_the_gets_effects(
    module_db: DbHandle, settings: Any, embedder: Any, auth: Tokens
) -> None:
    """A HEAD of a read that is audited or charged is audited and charged as its GET is."""
    with make_client(module_db, make_settings(own_audit_reads_per_minute=2), embedder) as c:
        comp, lawyer = auth("c@firm.nl", "compliance"), auth("probe@firm.nl", "lawyer")

        def refused_reads() -> int:
            params = {"gate": "retrieval_read", "person_id": "probe@firm.nl"}
            return len(ok(c.get("/v1/audit/gate-events", params=params, headers=comp))["items"])

        firm = Firm(c, auth)
        firm.person("owner@firm.nl")
        rid = firm.search("owner@firm.nl", "huurovereenkomst opzegging")["retrieval_id"]
        before = refused_reads()
        url = f"/v1/audit/retrievals/{rid}"  # someone else's: refused, and recorded
        assert c.head(url, headers=lawyer).status_code == 403
        assert refused_reads() == before + 1  # the refused read is in the gates chain
        assert c.get(url, headers=lawyer).status_code == 403
        # two reads a minute: the HEAD spent one of them
        assert c.get(url, headers=lawyer).status_code == 429
        assert c.head(url, headers=lawyer).status_code == 429
