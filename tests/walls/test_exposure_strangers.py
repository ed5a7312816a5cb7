"""A reader who is not in the conflict matrix sees only unwalled matters, so any wall over a
matter they read takes it from them. A fuzz found them missing from the exposure and the
preview of an exclusionary wall (only the screened were counted), and their session's wall
reason naming no wall."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

STRANGER = "temp@firm.nl"  # authenticates, but the matrix does not know them
TEXT = "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1."
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"
WALL = {
    "kind": "exclusionary",
    "title": "Screen",
    "reason": "conflict",
    "protects": {"matters": ["K-001"]},
    "screened": ["bob@firm.nl"],
}


def test_a_stranger_who_read_a_matter_is_in_its_exposure(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    for person in ("bob@firm.nl", "alice@firm.nl", "carol@firm.nl"):  # fewer denied than not
        firm.person(person)
    firm.client_("K", "Kraan Logistiek B.V.")
    firm.matter("K-001", "K", team=[])
    firm.document("k1", TEXT, client_id="K", matter_id="K-001")
    assert firm.documents_found(STRANGER, QUERY, session_id="s-temp", mode="sparse") == ["k1"]
    firm.documents_found("alice@firm.nl", QUERY, session_id="s-alice", mode="sparse")

    preview = ok(client.post("/v1/walls/preview", json=WALL, headers=firm.h))
    assert [i["person_id"] for i in preview["exposure"]["items"]] == [STRANGER], preview
    wall_id = firm.wall(**WALL)
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure",
                           headers=auth("co@firm.nl", "compliance")))
    assert [(i["person_id"], i["matters"]) for i in report["items"]] == [(STRANGER, ["K-001"])]
    assert report["partial"] is False
    gate = ok(client.post("/v1/gates/session", json={"session_id": "s-temp"},
                          headers=auth(STRANGER, "lawyer")))
    assert gate["status"] == "tainted"
    assert [r["walls"] for r in gate["reasons"]] == [[wall_id]], gate
