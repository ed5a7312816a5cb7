"""Matrix changes that widen who may see a walled matter need the conflicts role (issue 31,
point 6): joining the team of a matter under an inclusionary wall, moving a matter or a
client out from under a wall, and giving a person a source alias that documents behind a
wall allow. The change is reviewed with the preview's comparison and its exposure, and the
review goes into the policy event. Changes that touch no walled matter stay open to admins."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok, retag, retrieved

ADMIN = "keeper@firm.nl"  # an admin who keeps the matrix, without the conflicts role
PARTNER = "partner@firm.nl"  # the conflicts partner, not a person in the matrix
ALICE, BOB, EVE = "alice@firm.nl", "bob@firm.nl", "eve@firm.nl"
SECRET_ALIAS = "imanage:user:ALICE"


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    firm = Firm(client, auth)
    for person in (ADMIN, ALICE, BOB, EVE):
        firm.person(person, aliases=[SECRET_ALIAS] if person == ALICE else None)
    firm.client_("C-PROT", "Protected Holding B.V.")
    firm.client_("C-SUB", "Protected Sub B.V.", parent="C-PROT")
    firm.client_("C-OPEN", "Open B.V.")
    firm.client_("C-SCR", "Screened B.V.")
    firm.matter("M-PROT", "C-PROT", team=[ALICE])
    firm.matter("M-SUB", "C-SUB", team=[ALICE])
    firm.matter("M-OPEN", "C-OPEN", team=[BOB])
    firm.matter("M-SCR", "C-SCR", team=[BOB])
    # only insiders (the team: alice) may see the protected family's matters
    firm.wall(kind="inclusionary", protects={"clients": ["C-PROT"]}, allowed=[])
    # eve may not see M-SCR; everyone else may, within the source's own rules
    firm.wall(kind="exclusionary", protects={"matters": ["M-SCR"]}, screened=[EVE])
    firm.document(
        "scr-private",
        "Vertrouwelijk memo over de schikking.",
        client_id="C-SCR",
        matter_id="M-SCR",
        acl={"default": "private", "allow": [SECRET_ALIAS, "imanage:group:deal-team"]},
    )
    return firm


def _matter(firm: Firm, matter_id: str, **change: Any) -> dict[str, Any]:
    current = ok(firm.client.get(f"/v1/matters/{matter_id}", headers=firm.h))
    return {
        "client_id": current["client_id"],
        "title": current["title"],
        "status": current["status"],
        "parties": current["parties"],
        "team": current["team"],
        **change,
    }


def _refused(response: Any) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "forbidden"
    assert error["details"]["required_role"] == "conflicts"
    return dict(error)


def _events(firm: Firm, object_id: str) -> list[dict[str, Any]]:
    auditor = firm.auth("auditor@firm.nl", "compliance")
    return list(
        ok(
            firm.client.get(
                "/v1/audit/policy-events", params={"object_id": object_id}, headers=auditor
            )
        )["items"]
    )


def test_admin_cannot_join_the_team_of_a_matter_under_an_inclusionary_wall(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    body = _matter(firm, "M-PROT", team=[ALICE, ADMIN])
    error = _refused(client.put("/v1/matters/M-PROT", json=body, headers=admin))
    # an insider of the wall sees every matter it covers, not only the one they joined
    gained = {(g["person_id"], g["matter_id"]) for g in error["details"]["gains"]}
    assert gained == {(ADMIN, "M-PROT"), (ADMIN, "M-SUB")}
    assert ok(client.get("/v1/matters/M-PROT", headers=admin))["team"] == [ALICE]
    assert firm.access(ADMIN, "M-PROT")["allowed"] is False
    # the same through the bulk import
    bulk = {"matters": [{"matter_id": "M-PROT", **body}]}
    _refused(client.post("/v1/matrix/import", json=bulk, headers=admin))

    # the conflicts partner may, and the policy event carries the review
    ok(client.put("/v1/matters/M-PROT", json=body, headers=auth(PARTNER, "conflicts")))
    assert firm.access(ADMIN, "M-SUB")["allowed"] is True
    review = _events(firm, "M-PROT")[0]["details"]["walled_access"]
    assert {(g["person_id"], g["matter_id"], g["via"]) for g in review["gains"]} == {
        (ADMIN, "M-PROT", "walls"),
        (ADMIN, "M-SUB", "walls"),
    }
    assert review["widening_approved_by"] == PARTNER


def test_admin_cannot_move_a_matter_out_from_under_a_wall(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    body = _matter(firm, "M-PROT", client_id="C-OPEN")
    error = _refused(client.put("/v1/matters/M-PROT", json=body, headers=admin))
    assert (BOB, "M-PROT") in {(g["person_id"], g["matter_id"]) for g in error["details"]["gains"]}
    assert ok(client.get("/v1/matters/M-PROT", headers=admin))["client_id"] == "C-PROT"
    # carrying a team under an inclusionary wall makes that team insiders of all its matters
    under = _matter(firm, "M-OPEN", client_id="C-SUB")
    error = _refused(client.put("/v1/matters/M-OPEN", json=under, headers=admin))
    assert (BOB, "M-PROT") in {(g["person_id"], g["matter_id"]) for g in error["details"]["gains"]}
    ok(client.put("/v1/matters/M-PROT", json=body, headers=auth(PARTNER, "conflicts")))
    assert firm.access(BOB, "M-PROT")["allowed"] is True


def test_admin_cannot_reparent_a_client_out_from_under_a_protected_parent(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    body = {"name": "Protected Sub B.V.", "parent_id": "C-OPEN"}
    error = _refused(client.put("/v1/clients/C-SUB", json=body, headers=admin))
    assert (EVE, "M-SUB") in {(g["person_id"], g["matter_id"]) for g in error["details"]["gains"]}
    assert ok(client.get("/v1/clients/C-SUB", headers=admin))["parent_id"] == "C-PROT"
    assert firm.access(EVE, "M-SUB")["allowed"] is False


def test_admin_cannot_move_a_source_alias_that_opens_walled_documents(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    # in one import, and in two steps (give it up, then claim it)
    bulk = {
        "people": [
            {"person_id": ALICE, "name": "Alice", "active": True, "aliases": []},
            {"person_id": BOB, "name": "Bob", "active": True, "aliases": [SECRET_ALIAS]},
        ]
    }
    error = _refused(client.post("/v1/matrix/import", json=bulk, headers=admin))
    assert error["details"]["gains"] == [{"person_id": BOB, "matter_id": "M-SCR", "via": "source"}]
    give_up = {"name": "Alice", "active": True, "aliases": []}
    ok(client.put(f"/v1/people/{ALICE}", json=give_up, headers=admin))
    claim = {"name": "Bob", "active": True, "aliases": [SECRET_ALIAS]}
    _refused(client.put(f"/v1/people/{BOB}", json=claim, headers=admin))
    # an alias that no walled document allows stays an admin's job
    other = {"name": "Bob", "active": True, "aliases": ["imanage:user:BOB"]}
    ok(client.put(f"/v1/people/{BOB}", json=other, headers=admin))
    # the screened person gains nothing from it either way: the wall still denies them
    eve = {"name": "Eve", "active": True, "aliases": [SECRET_ALIAS]}
    ok(client.put(f"/v1/people/{EVE}", json=eve, headers=admin))


def test_admin_cannot_add_a_person_to_a_source_group_that_walled_documents_allow(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    firm.person(BOB, aliases=["imanage:user:BOB"])
    members = {"members": ["imanage:user:BOB"]}
    error = _refused(client.put("/v1/groups/imanage/deal-team", json=members, headers=admin))
    assert error["details"]["gains"] == [{"person_id": BOB, "matter_id": "M-SCR", "via": "source"}]
    # a group no walled document allows stays an admin's job
    ok(client.put("/v1/groups/imanage/other-team", json=members, headers=admin))
    ok(client.put("/v1/groups/imanage/deal-team", json=members, headers=auth(PARTNER, "conflicts")))


def test_changes_that_touch_no_walled_matter_stay_with_admins(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    admin = auth(ADMIN, "admin")
    ok(
        client.put(
            "/v1/matters/M-OPEN", json=_matter(firm, "M-OPEN", team=[BOB, EVE]), headers=admin
        )
    )
    ok(client.put("/v1/clients/C-NEW", json={"name": "New B.V."}, headers=admin))
    ok(
        client.put(
            "/v1/matters/M-OPEN", json=_matter(firm, "M-OPEN", client_id="C-NEW"), headers=admin
        )
    )
    ok(
        client.put(
            "/v1/people/new@firm.nl",
            json={"name": "New", "aliases": ["imanage:user:NEW"]},
            headers=admin,
        )
    )
    # a walled matter's title, and leaving its team (narrower, never wider)
    ok(client.put("/v1/matters/M-SUB", json=_matter(firm, "M-SUB", title="Renamed"), headers=admin))
    ok(client.put("/v1/matters/M-SCR", json=_matter(firm, "M-SCR", team=[]), headers=admin))
    # moving an open matter under the protected parent narrows access: allowed, and its
    # policy event names who loses access and who had already read it
    retrieved(client, BOB, "M-OPEN", "run-1")
    closed = _matter(firm, "M-OPEN", client_id="C-PROT", team=[])
    ok(client.put("/v1/matters/M-OPEN", json=closed, headers=admin))
    review = _events(firm, "M-OPEN")[0]["details"]["walled_access"]
    assert review["gains"] == [] and review["widening_approved_by"] is None
    assert {(c["person_id"], c["matter_id"]) for c in review["losses"]} >= {
        (BOB, "M-OPEN"),
        (EVE, "M-OPEN"),
    }
    (exposure,) = review["exposure"].values()
    assert [i["person_id"] for i in exposure["items"]] == [BOB]


def test_reactivating_a_person_who_would_see_walled_matters_needs_the_conflicts_role(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    """An inactive person sees nothing; switching them back on restores what the walls admit
    them to (alice: the inclusionary family, as its team) and what the source lets their
    alias read. The conflicts partner may; an admin alone may not."""
    admin, partner = auth(ADMIN, "admin"), auth(PARTNER, "conflicts")
    retag(client)  # the walls' own re-tag (the fixture issued them)
    assert firm.matters_seen(ALICE, "vertrouwelijk memo schikking") == {"M-SCR"}
    off = {"name": "Alice", "active": False, "aliases": [SECRET_ALIAS]}
    ok(client.put(f"/v1/people/{ALICE}", json=off, headers=partner))
    on = {**off, "active": True}
    error = _refused(client.put(f"/v1/people/{ALICE}", json=on, headers=admin))
    gains = {(g["person_id"], g["matter_id"]) for g in error["details"]["gains"]}
    assert {(ALICE, "M-PROT"), (ALICE, "M-SUB"), (ALICE, "M-SCR")} <= gains, gains
    bulk = {"people": [{"person_id": ALICE, **on}]}
    _refused(client.post("/v1/matrix/import", json=bulk, headers=admin))
    assert firm.matters_seen(ALICE, "vertrouwelijk memo schikking") == set()
    ok(client.put(f"/v1/people/{ALICE}", json=on, headers=partner))
    assert firm.matters_seen(ALICE, "vertrouwelijk memo schikking") == {"M-SCR"}
    # a person with no walled matter to gain is switched on by an admin as before
    ok(client.put(f"/v1/people/{EVE}", json={"name": "Eve", "active": False}, headers=admin))
    ok(client.put(f"/v1/people/{EVE}", json={"name": "Eve", "active": True}, headers=admin))


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/people/bob@firm.nl", {"name": "Bob", "aliases": ["imanage:group:deal-team"]}),
        ("/v1/people/bob@firm.nl", {"name": "Bob", "aliases": ["imanage:user:b\u0001ob"]}),
        # whether a person is active decides their access: a JSON boolean, never "yes"
        ("/v1/people/bob@firm.nl", {"name": "Bob", "active": "yes"}),
        ("/v1/groups/imanage/lit", {"members": ["imanage:user:b\u0007ob"]}),
        ("/v1/people/bdevries%E2%80%8B@firm.nl", {"name": "B. de Vries"}),
        ("/v1/matters/M%E2%80%AE1", {"client_id": "C-OPEN", "title": "t"}),
    ],
)
def test_a_group_alias_a_control_character_or_an_invisible_one_is_refused(
    firm: Firm, client: TestClient, path: str, body: dict[str, Any]
) -> None:
    """A group as an alias would give the person the group's rights for good, whatever the
    group sync says; an invisible character makes an id that looks like another's."""
    response = client.put(path, json=body, headers=firm.h)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
