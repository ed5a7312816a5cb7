"""A deny that names a group is enforced through the group's members: while ewall holds no
membership for the group, the document is visible to nobody (a fuzz of the connectors
found such denies lapsing: a tenant without a groups endpoint, a members list that failed
to read, and the screened people saw the document)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok, retag

TEXT = "octrooi inbreuk retard-tablet medivastine"


def test_a_group_deny_with_unknown_members_admits_nobody(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl", aliases=["api:user:alice"])
    firm.person("bob@firm.nl", aliases=["api:user:bob"])
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["alice@firm.nl", "bob@firm.nl"])
    screened = {"default": "public", "deny": ["api:group:screen"]}
    firm.document("screened", TEXT, client_id="C-1", matter_id="M-1", acl=screened)
    firm.document("open", TEXT, client_id="C-1", matter_id="M-1")
    retag(client)

    # no membership held for "screen": its deny cannot be enforced, so it admits nobody
    for person in ("alice@firm.nl", "bob@firm.nl"):
        assert firm.documents_found(person, TEXT) == ["open"], person

    # once the members are known, the deny screens exactly them
    group = {"members": ["api:user:bob"]}
    ok(client.put("/v1/groups/api/screen", json=group, headers=auth(*ADMIN)))
    assert sorted(firm.documents_found("alice@firm.nl", TEXT)) == ["open", "screened"]
    assert firm.documents_found("bob@firm.nl", TEXT) == ["open"]

    # a known group without members denies nobody
    ok(client.put("/v1/groups/api/screen", json={"members": []}, headers=auth(*ADMIN)))
    assert sorted(firm.documents_found("bob@firm.nl", TEXT)) == ["open", "screened"]


def test_a_deny_of_a_group_holding_an_unknown_group_admits_nobody(
    client: TestClient, auth: Tokens
) -> None:
    """Groups nest: the deny of "screen", whose member "sub" has no members ewall holds,
    lapsed for sub's members (a review found it). Until sub is known, nobody passes."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl", aliases=["api:user:alice"])
    firm.person("bob@firm.nl", aliases=["api:user:bob"])
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["alice@firm.nl", "bob@firm.nl"])
    firm.document(
        "screened", TEXT, client_id="C-1", matter_id="M-1",
        acl={"default": "public", "deny": ["api:group:screen"]},
    )
    retag(client)
    admin = auth(*ADMIN)
    ok(client.put("/v1/groups/api/screen", json={"members": ["api:group:sub"]}, headers=admin))
    for person in ("alice@firm.nl", "bob@firm.nl"):
        assert firm.documents_found(person, TEXT) == [], person
    ok(client.put("/v1/groups/api/sub", json={"members": ["api:user:bob"]}, headers=admin))
    assert firm.documents_found("alice@firm.nl", TEXT) == ["screened"]
    assert firm.documents_found("bob@firm.nl", TEXT) == []
