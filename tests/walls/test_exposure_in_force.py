"""Exposure names the people a wall denies when it acts: a wall that is lifted, or whose
window is over, denies nobody, so its exposure is empty (a check of 2026-12-06 found the
preview answering ``in_force: false`` and no one losing access beside an exposure that
listed a lawyer, and lifted or ended walls listing people as screened)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

TEXT = "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1."
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"
BOB = "bob@firm.nl"


def _wall(**window: Any) -> dict[str, Any]:
    return {
        "kind": "exclusionary",
        "title": "Screen",
        "reason": "conflict",
        "protects": {"matters": ["K-001"]},
        "screened": [BOB],
        **window,
    }


def test_exposure_counts_only_a_wall_that_acts(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    for person in (BOB, "alice@firm.nl"):
        firm.person(person)
    firm.client_("K", "Kraan Logistiek B.V.")
    firm.matter("K-001", "K", team=[])
    firm.document("k1", TEXT, client_id="K", matter_id="K-001")
    assert firm.documents_found(BOB, QUERY, session_id="s-bob", mode="sparse") == ["k1"]
    compliance = auth("co@firm.nl", "compliance")

    def exposed(wall_id: str) -> tuple[list[str], bool]:
        report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=compliance))
        return [i["person_id"] for i in report["items"]], report["in_force"]

    over = _wall(effective_from="2001-01-01T00:00:00Z", effective_until="2002-01-01T00:00:00Z")
    preview = ok(client.post("/v1/walls/preview", json=over, headers=firm.h))
    assert preview["in_force"] is False and preview["loses"] == []
    assert preview["exposure"]["items"] == [], preview
    assert exposed(firm.wall(**over)) == ([], False)

    # a wall that starts later will deny bob then: its preview (what issuing it would do)
    # names him; its exposure now (api.md: "now screened") does not, until it starts
    later = _wall(effective_from="2100-01-01T00:00:00Z")
    assert [i["person_id"] for i in ok(
        client.post("/v1/walls/preview", json=later, headers=firm.h)
    )["exposure"]["items"]] == [BOB]  # fmt: skip
    assert exposed(firm.wall(**later)) == ([], False)

    now = firm.wall(**_wall())
    assert exposed(now) == ([BOB], True)
    ok(client.post(f"/v1/walls/{now}/lift", json={"reason": "cleared"}, headers=firm.h))
    assert exposed(now) == ([], False)
