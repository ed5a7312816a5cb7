"""A group may hold another group (connectors.md rules it out for neither vendor; a NetDocuments
members row is ``{id, displayName}`` with no kind, so a nested group shows only as its ``UG-``
id). The connectors read such a member as a user id that matches nobody, and a deny of the
outer group lapsed for the inner group's members (fail open). A nested group is named as a
group now, read at any depth and once (a cycle ends), and the matrix expands it; a member whose
kind cannot be told, or a cabinet held by a group, makes a deny of the holder admit nobody.
Fake DMS -> run_sync -> the real ingest pipeline -> search through the API.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.base import SourceGroup
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory, NetDocumentsFactory
from tests.fakes.imanage import FakeIManage
from tests.fakes.netdocuments import CABINET, FakeNetDocuments
from tests.helpers import Firm

PEOPLE = ("alice", "bob", "dave", "erin")
DOC = "4824-5093-9170"
QUERY = "dagvaarding"


def _firm(client: TestClient, auth: Tokens, alias: str, place: tuple[str, str]) -> Firm:
    """PEOPLE, each with the alias ``alias`` names ({} for the person), and one matter."""
    firm = Firm(client, auth)
    for person in PEOPLE:
        firm.person(f"{person}@firm.nl", aliases=[alias.format(person)])
    firm.client_(place[0], "Acme")
    firm.matter(place[1], place[0])
    return firm


def _nd_firm(client: TestClient, auth: Tokens) -> Firm:
    return _firm(client, auth, "netdocuments:user:{}@firm.com", ("10025", "0008"))


def _user(name: str) -> dict[str, str]:
    return {"id": name.upper(), "displayName": name.title(), "email": f"{name}@firm.com"}


def _nd_sync(client: TestClient, db: DbFixture, netdocuments: NetDocumentsFactory) -> dict[
        str, object]:  # fmt: skip
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    report = run_sync("netdocuments", netdocuments(), pipeline, SyncStateStore(db.database),
                      mode="full", started_by="svc")  # fmt: skip
    assert report["sync"]["complete"] is True, report
    return dict(report["sync"])


def _who_finds(firm: Firm) -> set[str]:
    return {p for p in PEOPLE if DOC in firm.documents_found(f"{p}@firm.nl", QUERY, k=10, mode="sparse")}


def _nd_doc_denying(fake: FakeNetDocuments, group: str) -> None:
    """The document: UG-ALL may view it, ``group`` has no access (N beats everything)."""
    fake.add_document(DOC, client="10025", matter="0008", extension="txt",
                      acl=[{"principal": "UG-ALL", "rights": "VES"},
                           {"principal": group, "rights": "N"}],
                      content=b"Processtuk over de dagvaarding in de zaak Falcon.")  # fmt: skip
    fake.lookup[2] = []  # the matter table (profile-based security) holds no rows


@pytest.mark.parametrize("inner_listed", [True, False])
def test_a_person_in_a_group_nested_under_a_denied_group_does_not_see_the_document(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    inner_listed: bool,
) -> None:
    """SCREEN holds bob and INNER; INNER holds DEEP (a repository group no cabinet listing
    names); DEEP holds dave. The document denies SCREEN: bob and dave do not see it. A grant
    reaches through nesting the same way: erin is in ALL only through TEAM."""
    fake = netdocuments_fake
    firm = _nd_firm(client, auth)
    fake.add_group("UG-ALL", "Everyone", [_user("alice"), _user("bob"), _user("dave")])
    fake.add_group("UG-TEAM", "Team", [_user("erin")], listed=False)
    fake.nest("UG-ALL", "UG-TEAM", "Team")
    fake.add_group("UG-SCREEN", "Screened", [_user("bob")])
    fake.add_group("UG-INNER", "Inner", [], listed=inner_listed)
    fake.add_group("UG-DEEP", "Deep", [_user("dave")], listed=False)
    fake.nest("UG-SCREEN", "UG-INNER", "Inner")
    fake.nest("UG-INNER", "UG-DEEP", "Deep")
    _nd_doc_denying(fake, "UG-SCREEN")
    _nd_sync(client, db, netdocuments)
    assert _who_finds(firm) == {"alice", "erin"}

    # dave leaves the deep group at the DMS: the next sync lets him in
    fake.members["UG-DEEP"] = []
    _nd_sync(client, db, netdocuments)
    assert _who_finds(firm) == {"alice", "dave", "erin"}


@pytest.mark.timeout(300)  # a hang guard, no time bound: a walk without a cycle guard never ends
def test_a_cycle_of_groups_is_read_once_each_and_its_deny_holds(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
) -> None:
    """A holds B, B holds C, C holds A (C named by no listing): each members list is read
    once, the sync ends, and a deny of any of them screens the members of all three."""
    fake = netdocuments_fake
    firm = _nd_firm(client, auth)
    fake.add_group("UG-ALL", "Everyone", [_user(p) for p in PEOPLE])
    fake.add_group("UG-A", "A", [_user("bob")])
    fake.add_group("UG-B", "B", [])
    fake.add_group("UG-C", "C", [_user("dave")], listed=False)
    fake.nest("UG-A", "UG-B")
    fake.nest("UG-B", "UG-C")
    fake.nest("UG-C", "UG-A")
    groups = {g.group_id: g.members for g in netdocuments().groups()}
    assert groups["ug-c"] == frozenset({"netdocuments:group:ug-a", "netdocuments:user:dave",
                              "netdocuments:user:dave@firm.com"})  # fmt: skip
    for gid in ("UG-A", "UG-B", "UG-C"):
        assert len(fake.calls(rf"^/v1/Group/{gid}/members$")) == 1, gid

    _nd_doc_denying(fake, "UG-B")
    _nd_sync(client, db, netdocuments)
    assert _who_finds(firm) == {"alice", "erin"}


@pytest.mark.parametrize(
    ("member", "why"),
    [
        ({"id": "X1", "displayName": "Outside counsel", "type": "contact"}, "a kind we do not know"),
        ({"type": "group", "email": "lit@firm.com"}, "a group without an id"),
        ({"id": CABINET, "displayName": "Litigation cabinet"}, "a cabinet: members not synced"),
        ({"id": "UG-GONE", "displayName": "Gone"}, "a nested group that answers 404"),
    ],
)
def test_a_denied_group_holding_a_member_we_cannot_expand_admits_nobody(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    member: dict[str, str],
    why: str,
) -> None:
    """Read as a user, such a member matched nobody and the deny screened only bob."""
    fake = netdocuments_fake
    firm = _nd_firm(client, auth)
    fake.add_group("UG-ALL", "Everyone", [_user(p) for p in PEOPLE])
    fake.add_group("UG-SCREEN", "Screened", [_user("bob")])
    _nd_doc_denying(fake, "UG-SCREEN")
    _nd_sync(client, db, netdocuments)
    assert _who_finds(firm) == {"alice", "dave", "erin"}
    fake.members["UG-SCREEN"].append(member)
    _nd_sync(client, db, netdocuments)
    assert _who_finds(firm) == set(), why


# --- iManage ---------------------------------------------------------------------------------


def _im_firm(client: TestClient, auth: Tokens) -> Firm:
    return _firm(client, auth, "imanage:user:{}", ("C-1", "M-1"))


def _im_memo_denying(fake: FakeIManage, group: str) -> None:
    security = {"default_security": "public",
                "acl": [{"id": group, "type": "group", "access_level": "no_access"}]}  # fmt: skip
    fake.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", default_security="public",
                      security=security, filename="memo.txt",
                      content=b"Vertrouwelijk memo over de octrooiaanvraag van Acme.")  # fmt: skip


def _im_who_finds(firm: Firm) -> set[str]:
    return {
        p for p in PEOPLE if "ACTIVE!1" in firm.documents_found(f"{p}@firm.nl", "octrooiaanvraag", mode="sparse")
    }


@pytest.mark.timeout(300)  # a hang guard (the groups form a cycle)
@pytest.mark.parametrize("sync_api", [False, True])
def test_imanage_a_member_that_is_a_group(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
    sync_api: bool,
) -> None:
    """A member row typed ``group`` names a nested group (I16 lists and Sync rows alike), in
    a cycle too; an untyped member whose id is a group's (a user or that group: which is not
    said) leaves the holder unknown, and a deny of it admits nobody."""
    fake = imanage_fake
    fake.sync_api = sync_api
    firm = _im_firm(client, auth)
    fake.add_group("SCREEN", ["BOB"])
    fake.add_group("INNER", ["DAVE"])
    fake.nest("SCREEN", "INNER")
    fake.nest("INNER", "SCREEN")  # a cycle
    _im_memo_denying(fake, "SCREEN")
    groups: dict[str, object] = {g.group_id: g.members for g in imanage().groups()}
    assert groups == {
        "screen": {"imanage:user:bob", "imanage:group:inner"},
        "inner": {"imanage:user:dave", "imanage:group:screen"},
    }
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    assert _im_who_finds(firm) == {"alice", "erin"}

    fake.add_group("TEAM", ["ERIN"])
    fake.nest("INNER", "TEAM", typed=False)
    connector = imanage()
    assert [g for g in connector.groups() if g.group_id == "inner"] == [
        SourceGroup(source="imanage", group_id="inner", members=None)
    ]
    assert any("INNER" in w.upper() and "kind" in w for w in connector.warnings)
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    assert _im_who_finds(firm) == set()
