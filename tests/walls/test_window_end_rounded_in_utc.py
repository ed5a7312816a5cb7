"""A window's end (or an audit bound) finer than a microsecond is rounded up in UTC when its
local time has no next microsecond (app/types.py ``rounded_up_to_microseconds``):
"9999-12-31T23:59:59.9999999+01:00" is 22:59:59.9999999Z, which rounds up to 23:00:00Z, a
time a datetime holds. The microsecond was added to the local time, which overflowed, and
the wall (or the audit read) was refused with 422 "out of range once rounded up", although
the same instant written in UTC was taken."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

ENDS = {
    "9999-12-31T23:59:59.9999999+01:00": "9999-12-31T23:00:00",
    "9999-12-31T23:59:59.999999001+14:00": "9999-12-31T10:00:00",
    # the last instant a datetime holds (.NET's "no end"): that instant, not a 422
    "9999-12-31T23:59:59.9999999Z": "9999-12-31T23:59:59.999999",
}


def test_an_end_whose_local_time_has_no_next_microsecond_is_rounded_in_utc(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("bob@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    compliance = auth("c@firm.nl", "compliance")
    for end, stored in ENDS.items():
        body = {
            "kind": "exclusionary",
            "title": "screen",
            "protects": {"matters": ["M-1"]},
            "screened": ["bob@firm.nl"],
            "effective_until": end,
        }
        wall_id = ok(client.post("/v1/walls", json=body, headers=firm.h), 201)["wall_id"]
        wall = ok(client.get(f"/v1/walls/{wall_id}", headers=firm.h))
        assert wall["effective_until"].startswith(stored), (end, wall)
        for path in ("/v1/audit/retrievals", "/v1/audit/policy-events"):
            read = client.get(path, params={"until": end}, headers=compliance)
            assert read.status_code == 200, (path, end, read.text)
    # past year 9999 once in UTC: 422, in the envelope
    late = client.get(
        "/v1/audit/retrievals",
        params={"until": "9999-12-31T23:59:59.9999999-01:00"},
        headers=compliance,
    )
    assert late.status_code == 422 and late.json()["error"]["details"]["field"] == "until"
