"""A group's members are known only when they were read in full: an answer that failed,
says it holds more, or comes in a shape we cannot read leaves the group unknown (members
None), never empty, so that a deny naming it does not lapse (sql/walls.sql)."""

from __future__ import annotations

import pytest

from tests.connectors.conftest import ImanageFactory, NetDocumentsFactory
from tests.fakes.imanage import FakeIManage
from tests.fakes.netdocuments import FakeNetDocuments


def test_group_members_not_read_in_full_are_unknown_not_empty(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """A fuzz of the connectors: a members list that answered 500, or one page of a paged
    list (paging is [U] there), was kept or read as the whole group, and a deny naming the
    group lapsed for the members missed. Such a group's members are unknown (None)."""
    imanage_fake.add_group("LITIGATION", ["JSMITH", "AKHAN"])
    imanage_fake.add_group("SCREEN", ["BOB", "DAVE", "EVE"])
    imanage_fake.add_group("WALL", ["CAROL"])
    imanage_fake.members_page = 2
    imanage_fake.inject(r"/groups/WALL/members$", 500, times=50)
    connector = imanage()
    groups: dict[str, object] = {g.group_id: g.members for g in connector.groups()}
    assert groups == {
        "litigation": {"imanage:user:jsmith", "imanage:user:akhan"},
        "screen": None,
        "wall": None,
    }
    assert any("SCREEN" in w and "paged" in w for w in connector.warnings), connector.warnings



@pytest.mark.parametrize(
    "body",
    [
        {"members": [{"id": "BOB"}]},  # not under data
        {"data": ["BOB", "DAVE"]},  # not objects
        {"data": {"members": [{"id": "BOB"}]}},
        {"data": [{"id": "BOB"}, {"name": "Dave"}]},  # a row without an id
    ],
)
def test_group_members_in_a_shape_we_cannot_read_are_unknown(
    imanage_fake: FakeIManage, imanage: ImanageFactory, body: object
) -> None:
    """Read as an empty list, such an answer made the group known and empty, and a deny of
    it screened nobody (a review found it)."""
    imanage_fake.add_group("SCREEN", ["BOB"])
    imanage_fake.inject(r"/groups/SCREEN/members$", 200, body=body, times=50)
    groups = {g.group_id: g.members for g in imanage().groups()}
    assert groups == {"screen": None}


def test_group_members_that_fail_to_read_are_unknown_not_kept(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """A fuzz of the connectors: a members list answering 500 failed the whole membership
    sync and the old members stayed, so a person added to a denied group kept seeing the
    document. That group is unknown now (None); the others are synced."""
    netdocuments_fake.add_group("UG-LIT", "Litigation", [{"id": "JS1"}])
    netdocuments_fake.add_group("UG-WALL", "Wall", [{"id": "BOB"}])
    netdocuments_fake.inject(r"/v1/Group/UG-WALL/members$", 500, times=50)
    connector = netdocuments()
    groups: dict[str, object] = {g.group_id: g.members for g in connector.groups()}
    assert groups == {"ug-lit": {"netdocuments:user:js1"}, "ug-wall": None}
    assert any("UG-WALL" in w for w in connector.warnings), connector.warnings


def test_netdocuments_group_members_in_a_shape_we_cannot_read_are_unknown(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    netdocuments_fake.add_group("UG-WALL", "Wall", [{"id": "BOB"}])
    netdocuments_fake.inject(
        r"/v1/Group/UG-WALL/members$", 200, body={"members": [{"name": "Bob"}]}, times=50
    )
    groups = {g.group_id: g.members for g in netdocuments().groups()}
    assert groups == {"ug-wall": None}
