"""A wall's window given finer than a microsecond holds for at least the window asked: its
start is cut (rounded down), its end rounded up (app/types.py ``_rfc3339_rounded_up``). Both
were cut, so "…00.123456789Z" ended the wall 789 ns before the time asked."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok


def _wall(firm: Firm, start: str, end: str) -> Any:
    body = {
        "kind": "exclusionary",
        "title": "screen",
        "protects": {"matters": ["M-1"]},
        "screened": ["bob@firm.nl"],
        "effective_from": start,
        "effective_until": end,
    }
    return firm.client.post("/v1/walls", json=body, headers=firm.h)


def test_a_window_finer_than_a_microsecond_is_widened_not_narrowed(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("bob@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    wall_id = ok(
        _wall(firm, "2030-01-01T00:00:00.123456789Z", "2030-01-02T01:00:00.999999001+01:00"),
        201,
    )["wall_id"]
    stored = ok(client.get(f"/v1/walls/{wall_id}", headers=firm.h))
    assert stored["effective_from"].startswith("2030-01-01T00:00:00.123456"), stored
    assert stored["effective_until"].startswith("2030-01-02T00:00:01"), stored
    # exact microseconds stay as given
    exact = ok(_wall(firm, "2030-01-01T00:00:00.5Z", "2030-01-03T00:00:00.250000000Z"), 201)
    stored = ok(client.get(f"/v1/walls/{exact['wall_id']}", headers=firm.h))
    assert stored["effective_until"].startswith("2030-01-03T00:00:00.25"), stored
    # a window inside one microsecond is a microsecond long, not empty
    ok(_wall(firm, "2030-01-05T00:00:00.000000001Z", "2030-01-05T00:00:00.000000002Z"), 201)
    # no microsecond after the last a datetime holds: that last one (.NET's "no end")
    last = ok(_wall(firm, "2030-01-01T00:00:00Z", "9999-12-31T23:59:59.9999999Z"), 201)
    stored = ok(client.get(f"/v1/walls/{last['wall_id']}", headers=firm.h))
    assert stored["effective_until"].startswith("9999-12-31T23:59:59.999999"), stored
    # past year 9999 once in UTC: 422 in the envelope, not 500
    late = _wall(firm, "2030-01-01T00:00:00Z", "9999-12-31T23:59:59.9999999-01:00")
    assert late.status_code == 422, late.text
    assert late.json()["error"]["details"]["field"] == "effective_until"
