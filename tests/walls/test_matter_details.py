"""Exposure, previews and wall details name every matter they concern with what the matrix
says of it (api.md, third round: "ids, titles, parties"): a fuzz found ids only, and the
compliance role has no other route to a matter's title or parties."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok
from tests.walls.test_exposure_strangers import WALL

KRAAN = {
    "matter_id": "K-001",
    "title": "Overslag kade",
    "status": "open",
    "client_id": "K",
    "client_name": "Kraan Logistiek B.V.",
    "parties": [{"name": "Nordwind Beheer B.V.", "role": "adverse"}],
}


def test_every_matter_named_comes_with_its_title_client_and_parties(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("bob@firm.nl")
    firm.client_("K", "Kraan Logistiek B.V.")
    firm.client_("N", "Nordwind Beheer B.V.")
    firm.matter("K-001", "K", title="Overslag kade",
                parties=[{"name": "Nordwind Beheer B.V.", "role": "adverse"}])
    firm.matter("N-001", "N", title="Windpark vergunning")
    compliance = auth("co@firm.nl", "compliance")

    preview = ok(client.post("/v1/walls/preview", json=WALL, headers=firm.h))
    assert [c["adverse_in"] for c in preview["conflicts"]] == ["K-001"]
    assert preview["matter_details"] == [
        KRAAN,
        {"matter_id": "N-001", "title": "Windpark vergunning", "status": "open",
         "client_id": "N", "client_name": "Nordwind Beheer B.V.", "parties": []},
    ]
    wall_id = firm.wall(**WALL)
    assert ok(client.get(f"/v1/walls/{wall_id}", headers=compliance))["matter_details"] == [KRAAN]
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=compliance))
    assert report["matter_details"] == [KRAAN]
