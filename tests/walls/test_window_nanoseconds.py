"""A wall's window given finer than a microsecond holds for at least the window asked: its
start is cut (rounded down), its end rounded up (app/types.py ``_rfc3339_rounded_up``). Both
were cut, so "…00.123456789Z" ended the wall 789 ns before the time asked.

The rounding is in UTC when a local time has no next microsecond (app/types.py
``rounded_up_to_microseconds``): "9999-12-31T23:59:59.9999999+01:00" is 22:59:59.9999999Z,
which rounds up to 23:00:00Z. The microsecond was added to the local time, which overflowed,
and the wall (or the audit read) was refused with 422 "out of range once rounded up",
although the same instant written in UTC was taken."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

# an end given, its instant as stored
ENDS = {
    "9999-12-31T23:59:59.9999999+01:00": "9999-12-31T23:00:00",
    "9999-12-31T23:59:59.999999001+14:00": "9999-12-31T10:00:00",
    # the last instant a datetime holds (.NET's "no end"): that instant, not a 422
    "9999-12-31T23:59:59.9999999Z": "9999-12-31T23:59:59.999999",
}


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    firm.person("bob@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    return firm


def _wall(firm: Firm, start: str | None, end: str) -> Any:
    body: dict[str, Any] = {
        "kind": "exclusionary",
        "title": "screen",
        "protects": {"matters": ["M-1"]},
        "screened": ["bob@firm.nl"],
        "effective_until": end,
    }
    if start is not None:
        body["effective_from"] = start
    return firm.client.post("/v1/walls", json=body, headers=firm.h)


def _stored(firm: Firm, answer: Any) -> Any:
    return ok(firm.client.get(f"/v1/walls/{ok(answer, 201)['wall_id']}", headers=firm.h))


def test_a_window_finer_than_a_microsecond_is_widened_not_narrowed(firm: Firm) -> None:
    stored = _stored(
        firm, _wall(firm, "2030-01-01T00:00:00.123456789Z", "2030-01-02T01:00:00.999999001+01:00")
    )
    assert stored["effective_from"].startswith("2030-01-01T00:00:00.123456"), stored
    assert stored["effective_until"].startswith("2030-01-02T00:00:01"), stored
    # exact microseconds stay as given
    stored = _stored(firm, _wall(firm, "2030-01-01T00:00:00.5Z", "2030-01-03T00:00:00.250000000Z"))
    assert stored["effective_until"].startswith("2030-01-03T00:00:00.25"), stored
    # a window inside one microsecond is a microsecond long, not empty
    ok(_wall(firm, "2030-01-05T00:00:00.000000001Z", "2030-01-05T00:00:00.000000002Z"), 201)
    # past year 9999 once in UTC: 422 in the envelope, not 500
    late = _wall(firm, "2030-01-01T00:00:00Z", "9999-12-31T23:59:59.9999999-01:00")
    assert late.status_code == 422, late.text
    assert late.json()["error"]["details"]["field"] == "effective_until"


def test_an_end_whose_local_time_has_no_next_microsecond_is_rounded_in_utc(
    firm: Firm, auth: Tokens
) -> None:
    compliance = auth("c@firm.nl", "compliance")
    for end, at in ENDS.items():
        stored = _stored(firm, _wall(firm, None, end))
        assert stored["effective_until"].startswith(at), (end, stored)
        for path in ("/v1/audit/retrievals", "/v1/audit/policy-events"):
            read = firm.client.get(path, params={"until": end}, headers=compliance)
            assert read.status_code == 200, (path, end, read.text)
    # past year 9999 once in UTC: 422, in the envelope
    late = firm.client.get(
        "/v1/audit/retrievals",
        params={"until": "9999-12-31T23:59:59.9999999-01:00"},
        headers=compliance,
    )
    assert late.status_code == 422 and late.json()["error"]["details"]["field"] == "until"
