"""One policy for the matrix roles (invariant 11): conflicts and compliance read the metadata
of every matter, so exposure reports, wall previews and wall details are complete for them,
whether or not they are people in the matrix and whatever walls say about them."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok, retrieved

# a conflicts partner and a compliance officer who are not people in the matrix: to the
# walls they are strangers, who may see no walled matter
PARTNER = ("partner@firm.nl", "conflicts")
AUDITOR = ("auditor@firm.nl", "compliance")
ALICE = "alice@firm.nl"
BOB = "bob@firm.nl"


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in (ALICE, BOB):
        firm.person(person)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=[ALICE], title="Acme v. Beta")
    firm.matter("M-2", "C-1", team=[BOB], title="Acme lease")
    return firm


def test_exposure_is_complete_for_a_partner_outside_the_matrix(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    retrieved(client, ALICE, "M-1", "run-1")
    partner = auth(*PARTNER)
    body = {
        "kind": "exclusionary",
        "title": "Screen Alice",
        "reason": "acted for the other side",
        "protects": {"matters": ["M-1"]},
        "screened": [ALICE],
    }
    wall_id = ok(client.post("/v1/walls", json=body, headers=partner), 201)["wall_id"]
    for reader in (partner, auth(*AUDITOR)):
        report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=reader))
        assert report["partial"] is False
        assert [(i["person_id"], i["session_id"], i["matters"]) for i in report["items"]] == [
            (ALICE, "run-1", ["M-1"])
        ]


def test_exposure_is_complete_for_a_reader_the_wall_screens(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    # the compliance officer is a person in the matrix and screened from M-1 themselves
    firm.person(AUDITOR[0])
    retrieved(client, ALICE, "M-1", "run-1")
    wall_id = firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[ALICE])
    firm.wall(kind="exclusionary", protects={"matters": ["M-1"]}, screened=[AUDITOR[0]])
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=auth(*AUDITOR)))
    assert report["partial"] is False
    assert [i["person_id"] for i in report["items"]] == [ALICE]


def test_api_preview_is_complete_for_a_partner_outside_the_matrix(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    # M-1 already sits behind a wall, so a stranger to the matrix may not see it
    firm.wall(kind="inclusionary", protects={"matters": ["M-1"]}, allowed=[BOB])
    retrieved(client, BOB, "M-1", "run-2")
    body = {
        "kind": "exclusionary",
        "title": "Screen Bob",
        "reason": "lateral hire",
        "protects": {"clients": ["C-1"]},
        "screened": [BOB],
    }
    preview = ok(client.post("/v1/walls/preview", json=body, headers=auth(*PARTNER)))
    assert preview["partial"] is False
    assert preview["matters"] == ["M-1", "M-2"]
    assert preview["loses"] == [{"person_id": BOB, "matters": ["M-1", "M-2"]}]
    assert preview["exposure"]["partial"] is False
    assert [i["person_id"] for i in preview["exposure"]["items"]] == [BOB]


def test_wall_details_name_every_covered_matter(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    wall_id = firm.wall(kind="exclusionary", protects={"clients": ["C-1"]}, screened=[ALICE])
    for reader in (auth(*PARTNER), auth(*AUDITOR)):
        wall = ok(client.get(f"/v1/walls/{wall_id}", headers=reader))
        assert wall["covered_matters"] == ["M-1", "M-2"]
