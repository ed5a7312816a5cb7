"""An audit filter given empty names nothing (a probe of 2026-12-07).

``GET /v1/audit/retrievals?matter_id=`` (a form's unset field, a script's unset variable)
matched no row and answered an empty page: "who saw anything from matter M" read as
"nobody". Such a filter is a 422 naming the parameter; leaving it out lists everything."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens

COMPLIANCE = ("compliance@firm.nl", "compliance")
FILTERS = [
    ("/v1/audit/retrievals", "person_id"),
    ("/v1/audit/retrievals", "matter_id"),
    ("/v1/audit/retrievals", "chunk_id"),
    ("/v1/audit/gate-events", "person_id"),
    ("/v1/audit/policy-events", "object_id"),
]


@pytest.mark.parametrize(("path", "name"), FILTERS)
@pytest.mark.parametrize("value", ["", " ", "\u3000"])
def test_an_empty_audit_filter_is_refused_naming_it(
    client: TestClient, auth: Tokens, path: str, name: str, value: str
) -> None:
    r = client.get(path, params={name: value}, headers=auth(*COMPLIANCE))
    assert r.status_code == 422, (path, name, r.text)
    error = r.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"]["field"] == name, error


@pytest.mark.parametrize("path", sorted({path for path, _ in FILTERS}))
def test_an_audit_list_without_filters_answers(
    client: TestClient, auth: Tokens, path: str
) -> None:
    r = client.get(path, headers=auth(*COMPLIANCE))
    assert r.status_code == 200, r.text
    assert "items" in r.json()
