"""The iManage /security answer read whole: a deny anywhere in it must not be lost, and an
answer we cannot read makes the document visible to nobody (fail closed)."""

from __future__ import annotations

import pytest

from connectors.base import SourceAcl
from connectors.imanage.acl import acl_entries, build_acl
from tests.connectors.conftest import ImanageFactory
from tests.connectors.recording import documents
from tests.fakes.imanage import FakeIManage


@pytest.mark.parametrize(
    "acl",
    [
        {"entries": [{"id": "BOB", "type": "user", "access_level": "no_access"}]},
        "BOB:no_access",
        ["BOB|no_access"],
        [{"id": "BOB", "type": "user", "access_level": "no_access"}, "ALICE|read"],
    ],
)
def test_an_access_list_in_an_unreadable_shape_fails_closed(
    imanage_fake: FakeIManage, imanage: ImanageFactory, acl: object
) -> None:
    """A fuzz of the connectors: an ``acl`` that was not a list of objects was read as "no
    entries", and the deny it carried was lost (the document public to everyone)."""
    imanage_fake.add_document(
        "ACTIVE", 1, default_security="public", security={"default_security": "public", "acl": acl}
    )
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert doc.acl is not None and doc.acl.resolvable is False


@pytest.mark.parametrize("body", [{}, {"data": None}])
def test_a_security_answer_without_its_data_fails_closed(
    imanage_fake: FakeIManage, imanage: ImanageFactory, body: object
) -> None:
    """Read as "no entries", the listing row's "public" stood and a deny was lost."""
    imanage_fake.add_document("ACTIVE", 1, default_security="public")
    imanage_fake.inject(r"/security$", 200, body=body, times=50)
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert doc.acl is not None and doc.acl.resolvable is False


def test_entries_under_every_key_name_are_read() -> None:
    deny = [{"id": "BOB", "type": "user", "access_level": "no_access"}]
    for security in ({"acl": None, "permissions": deny}, {"acl": [], "access_list": deny}):
        assert acl_entries(security) == deny, security


def test_entries_under_users_and_groups_keys_are_read(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """A server that lists users and groups under keys of their own: the deny there was
    skipped with the unknown key, and the document stood public to the denied user."""
    security = {
        "default_security": "public",
        "users": [{"id": "BOB", "access_level": "no_access"}],
        "groups": [{"id": "LIT", "access_level": "read"}],
        "inherited_from": [{"id": "WS1"}],  # rows without an access level are no entries
    }
    imanage_fake.add_document("ACTIVE", 1, default_security="public", security=security)
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert doc.acl is not None and doc.acl.resolvable, doc.acl
    assert "imanage:user:bob" in doc.acl.deny and "imanage:group:lit" in doc.acl.allow
    stray = {"default_security": "public", "users": [{"id": "BOB", "access": 0}, "ALICE"]}
    assert acl_entries(stray) is None


def _acl(security: dict[str, object]) -> SourceAcl | None:
    entries = acl_entries(security)
    if entries is None:
        return None
    return build_acl(library="ACTIVE", document_id="ACTIVE!1.1",
                     default_security=security.get("default_security"), entries=entries)


def test_a_row_keeps_its_own_kind_under_a_users_key() -> None:
    """Review: the key's kind overrode the row's own group_id, and a group's deny became a
    deny of a user of the same name (the group's members kept the document)."""
    acl = _acl({"default_security": "public",
                "users": [{"group_id": "LIT", "access_level": "no_access"},
                          {"id": "BOB", "access_level": "no_access"}]})
    assert acl is not None and acl.resolvable
    assert acl.deny == frozenset({"imanage:group:lit", "imanage:user:bob"})


def test_rows_of_other_lists_give_denies_never_grants() -> None:
    """Review: any list whose rows carried an access field was read as entries, so a
    checked-out-by row granted a private document."""
    acl = _acl({"default_security": "private",
                "checked_out": [{"user_id": "ANN", "access": "read_write"},
                                {"user_id": "BOB", "access": 0}]})
    assert acl is not None and acl.resolvable
    assert "imanage:user:ann" not in acl.allow
    assert "imanage:user:bob" in acl.deny


@pytest.mark.parametrize(
    "extra",
    [{"users": {"data": [{"id": "BOB", "access_level": "no_access"}]}},
     {"denied_users": ["BOB"]},
     {"denied_trustees": {"users": ["BOB"]}}],
)
def test_a_list_about_access_we_cannot_read_fails_closed(extra: dict[str, object]) -> None:
    assert acl_entries({"default_security": "public", **extra}) is None


def test_scalars_beside_the_entries_are_no_entries() -> None:
    security = {"default_security": "public", "access": "full_access", "acl": []}
    assert acl_entries(security) == []


def test_other_lists_fail_closed_on_levels_we_do_not_know() -> None:
    """Second review: only "no_access" rows of other lists were kept, so a deny written
    another way ("deny", "No Access") or a row of a deny list without a level was lost."""
    for rows in ([{"user_id": "BOB", "access_level": "deny"}],
                 [{"user_id": "BOB", "access": "No Access"}]):
        acl = _acl({"default_security": "public", "ethical_wall": rows})
        assert acl is not None and not acl.resolvable, rows
    acl = _acl({"default_security": "public", "denied_users": [{"user_id": "BOB"}]})
    assert acl is not None and acl.resolvable and "imanage:user:bob" in acl.deny
    # an object under a singular key (an owner, say) is no access list
    owner = {"default_security": "public", "user": {"id": "JSMITH"}, "acl": []}
    assert acl_entries(owner) == []
