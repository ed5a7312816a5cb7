"""A wall's exposure counts a document by where the firm holds it now as well as by where it
was read: a document read under an open matter and refiled under the protected one was read
all the same (GET /v1/walls/{id}/exposure, the preview, the policy event's summary)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok

HIRE = "bdevries@firm.nl"
PEER = "ldekker@firm.nl"
TEXT = "Pleitnota inbreuk retard-tablet medivastine: de vrijgiftecurve valt binnen conclusie 1."
QUERY = "inbreuk retard-tablet medivastine vrijgiftecurve"
WALL = {
    "kind": "exclusionary",
    "title": "Lateral hire screen",
    "reason": "acted for Genova at his previous firm",
    "protects": {"matters": ["M-MED"]},
    "screened": [HIRE],
}


def _firm(client: TestClient, auth: Tokens, *, med_team: list[str]) -> Firm:
    firm = Firm(client, auth)
    for person in (HIRE, PEER):
        firm.person(person)
    firm.client_("C-OPEN", "Helderglas B.V.")
    firm.client_("C-MED", "Medivers B.V.")
    firm.matter("M-OPEN", "C-OPEN", team=[HIRE, PEER])
    firm.matter("M-MED", "C-MED", team=med_team)
    return firm


def test_a_document_refiled_under_the_protected_matter_is_exposure(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth, med_team=[PEER])
    # "LIB!7" moves; "LIB!7:1" (whose chunk ids begin with the same characters) stays
    for external_id in ("LIB!7", "LIB!7:1"):
        firm.document(external_id, TEXT, client_id="C-OPEN", matter_id="M-OPEN")
    found = firm.documents_found(HIRE, QUERY, session_id="s-hire", mode="sparse")
    assert sorted(found) == ["LIB!7", "LIB!7:1"], found
    firm.documents_found(PEER, QUERY, session_id="s-peer", mode="sparse")

    firm.document("LIB!7", TEXT, client_id="C-MED", matter_id="M-MED")
    preview = ok(client.post("/v1/walls/preview", json=WALL, headers=firm.h))
    assert [i["person_id"] for i in preview["exposure"]["items"]] == [HIRE]

    wall_id = firm.wall(**WALL)
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=firm.h))
    (item,) = report["items"]
    assert item["person_id"] == HIRE and item["session_id"] == "s-hire"
    assert item["matters"] == ["M-MED"] and item["documents"] == ["api:LIB!7"]
    assert item["chunks"] == 1
    compliance = auth("compliance@firm.nl", "compliance")
    events = ok(
        client.get("/v1/audit/policy-events", params={"object_id": wall_id}, headers=compliance)
    )["items"]
    assert events[0]["details"]["exposure"]["people"] == 1


def test_a_document_refiled_away_from_the_protected_matter_still_counts_there(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth, med_team=[PEER, HIRE])
    firm.document("LIB!8", TEXT, client_id="C-MED", matter_id="M-MED")
    assert firm.documents_found(HIRE, QUERY, mode="sparse") == ["LIB!8"]
    firm.document("LIB!8", TEXT, client_id="C-OPEN", matter_id="M-OPEN")

    wall_id = firm.wall(**WALL)
    (item,) = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=firm.h))["items"]
    assert item["matters"] == ["M-MED"] and item["documents"] == ["api:LIB!8"]
