"""NetDocuments rules that could not be read lost their denies (a review of 2026-12-06 wrote
these from connectors.md): a typed user entry kept its ``U:`` prefix, string booleans of the
membership shape and rights in another form were skipped, profile access parts that did not
parse were dropped, rows with a parent never matched a document without one, and lookup rows
whose access could not be read were skipped. Each must deny, or make the document visible to
nobody."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.base import SourceAcl
from connectors.netdocuments.acl import LookupTable, build_acl, profile_parts
from tests.connectors.conftest import NetDocumentsFactory
from tests.connectors.nd_tenant import FALCON, Syncs, who_finds
from tests.connectors.recording import by_id, documents
from tests.fakes.netdocuments import FakeNetDocuments
from tests.helpers import Firm

JDOE = "netdocuments:user:jdoe@firm.example"


def _denied_or_closed(acl: SourceAcl, principal: str) -> bool:
    return (not acl.resolvable) or principal in acl.deny


# --- 1. typed entries keep the U: prefix --------------------------------------------------


def test_typed_user_entry_with_u_prefix_denies_the_user() -> None:
    acl = build_acl([
        {"principal": "UG-LIT", "type": "group", "rights": "VES"},
        {"principal": "U:jdoe@firm.example", "type": "user", "rights": "N"},
    ])
    assert _denied_or_closed(acl, JDOE), (acl.deny, acl.resolvable)


def test_typed_user_entry_with_u_prefix_grants_the_user() -> None:
    # narrower (not a fail open) but shows the same mis-normalisation
    acl = build_acl([{"principal": "U:jdoe@firm.example", "type": "user", "rights": "V"}])
    assert acl.allow == {JDOE}, acl.allow


# --- 2. membership shape (N20) with string booleans --------------------------------------


def test_membership_shape_noaccess_as_string_true_denies() -> None:
    acl = build_acl([
        {"principal": "UG-LIT", "view": True, "edit": True},
        {"principal": "U:jdoe@firm.example", "view": "true", "noAccess": "true"},
    ])
    assert _denied_or_closed(acl, JDOE), (acl.allow, acl.deny, acl.resolvable)


def test_membership_shape_noaccess_true_alongside_view_string() -> None:
    acl = build_acl([{"principal": "U:jdoe@firm.example", "view": True, "noAccess": "True"}])
    assert JDOE not in acl.allow or _denied_or_closed(acl, JDOE), (acl.allow, acl.deny)


# --- 3. rights we cannot read are dropped silently ---------------------------------------


def test_rights_as_a_list_is_not_dropped() -> None:
    acl = build_acl([
        {"principal": "UG-LIT", "rights": "VES"},
        {"principal": "U:jdoe@firm.example", "rights": ["N"]},
    ])
    assert _denied_or_closed(acl, JDOE), (acl.deny, acl.resolvable, acl.note)


def test_rights_under_an_unknown_key_is_not_dropped() -> None:
    acl = build_acl([
        {"principal": "UG-LIT", "rights": "VES"},
        {"principal": "U:jdoe@firm.example", "permissions": "N"},
    ])
    assert _denied_or_closed(acl, JDOE), (acl.deny, acl.resolvable, acl.note)


def test_rights_string_and_noaccess_flag_on_one_entry() -> None:
    acl = build_acl([{"principal": "U:jdoe@firm.example", "rights": "V", "noAccess": True}])
    assert JDOE not in acl.allow or _denied_or_closed(acl, JDOE), (acl.allow, acl.deny)


# --- 4. profile access strings: unparseable parts are dropped ----------------------------


def test_profile_part_with_trailing_pipe_is_not_dropped() -> None:
    acl = build_acl([{"principal": "UG-LIT", "rights": "VES"}],
                    profile_access=["Litigation|VES*U:jdoe@firm.example|N|"],
                    groups_by_name={"litigation": "UG-LIT"})
    assert _denied_or_closed(acl, JDOE), (acl.deny, acl.resolvable)


def test_profile_part_without_levels_is_not_dropped() -> None:
    acl = build_acl([{"principal": "UG-LIT", "rights": "VES"}],
                    profile_access=["Litigation|VES*U:jdoe@firm.example"],
                    groups_by_name={"litigation": "UG-LIT"})
    assert not acl.resolvable or JDOE in acl.deny, (acl.deny, acl.resolvable)


def test_profile_string_with_another_separator_is_not_read_as_a_grant() -> None:
    # ';' (or a newline) instead of '*': the N part is swallowed into the "who" of the last
    acl = build_acl([{"principal": "UG-LIT", "rights": "VES"}],
                    profile_access=["U:jdoe@firm.example|N;Litigation|VES"],
                    groups_by_name={"litigation": "UG-LIT"})
    assert _denied_or_closed(acl, JDOE), (acl.deny, acl.resolvable)


def test_profile_levels_with_unknown_letters_fail_closed() -> None:
    assert profile_parts("U:jdoe@firm.example|X") == ([], ["U:jdoe@firm.example|X"])
    acl = build_acl([], profile_access=["U:jdoe@firm.example|X"])
    assert not acl.resolvable, acl


# --- 5. lookup rows and the document's profile --------------------------------------------


def test_matter_row_with_parent_applies_when_the_document_has_no_client() -> None:
    table = LookupTable(2, True, [("10025", "0008", "U:jdoe@firm.example|N")])
    assert table.access_for("0008", None) == ["U:jdoe@firm.example|N"]


def _crawled_acl(
    fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    lookup: dict[int, list[dict[str, Any]]],
    settings: dict[str, Any] | None = None,
    **profile: Any,
) -> SourceAcl:
    """The rules a full crawl reads for one document profiled so, under these tables."""
    fake.add_document("1000-0000-0001", **profile)
    fake.lookup.update(lookup)
    acl = documents(list(netdocuments(settings).crawl_full(None)))[0].acl
    assert acl is not None
    return acl


ROW = {"key": "0008", "parent": "10025", "access": "U:jdoe@firm.example|N"}


@pytest.mark.parametrize(
    ("lookup", "settings", "profile"),
    [
        # a document without client: the row's parent never matched
        ({2: [ROW]}, None, {"matter": "0008"}),
        # profile security on a child attribute (3): its rows carry a parent; it was
        # compared with None and every row dropped
        ({2: [], 3: [{**ROW, "key": "court", "parent": "0008"}]},
         {"netdocuments_profile_security": "matter,3"},
         {"client": "10025", "matter": "0008", "custom": {1003: "court"}}),
        # a row whose key is under another name: access but no key
        ({2: [{"Value": "0008", "parent": "10025", "access": ROW["access"]}]}, None,
         {"client": "10025", "matter": "0008"}),
        # a row whose access is structured
        ({2: [{**ROW, "access": [{"principal": "U:jdoe@firm.example", "rights": "N"}]}]},
         None, {"client": "10025", "matter": "0008"}),
    ],
    ids=["no_client", "child_attribute", "no_key", "structured_access"],
)
def test_lookup_rows_deny_or_close_over_http(
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    lookup: dict[int, list[dict[str, Any]]],
    settings: dict[str, Any] | None,
    profile: dict[str, Any],
) -> None:
    acl = _crawled_acl(netdocuments_fake, netdocuments, lookup, settings, **profile)
    assert _denied_or_closed(acl, JDOE), (acl.allow, acl.deny, acl.resolvable)


def test_a_row_with_an_empty_key_is_passed_over_and_the_table_still_read(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """A placeholder row (its key empty) matches no document: it must not darken every
    document profiled with the attribute, as a table in another shape does."""
    lookup = {2: [{"key": "", "parent": "", "access": "U:amir@firm.com|N"}, ROW]}
    acl = _crawled_acl(netdocuments_fake, netdocuments, lookup, client="10025", matter="0008")
    assert acl.resolvable and acl.deny == {JDOE}


# --- 6. what was already sound -----------------------------------------------------


def test_sound_cases() -> None:
    for rights in ("n", " N ", "NV", "vn", "NN"):
        acl = build_acl([{"principal": "U:JDoe@Firm.Example ", "rights": rights}])
        assert acl.deny == {JDOE} and not acl.allow, rights
    for rights in ("V E", "-", "V,E", "R", "0"):
        assert not build_acl([{"principal": "UG-1", "rights": rights}]).resolvable, rights
    acl = build_acl([], profile_access=[" u: JDoe@Firm.Example | n *", "**"])
    assert acl.deny == {JDOE} and acl.resolvable
    acl = build_acl([{"principal": "U:jdoe@firm.example", "view": True, "noAccess": True}])
    assert acl.deny == {JDOE}
    assert not build_acl([{"principal": "", "id": "U:jdoe@firm.example", "rights": "N"}]).resolvable
    assert not build_acl([{"principal": "JS1", "rights": "N"}]).resolvable
    table = LookupTable(2, True, [("10025", "0008", "x|N")])
    assert table.access_for("0008", "20001") == []


def test_lookup_key_case_and_spaces_match(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    fake = netdocuments_fake
    fake.add_document("1000-0000-0001", client="ab  1", matter=" falcon ")
    fake.lookup[2] = [{"key": "FALCON", "parent": " AB 1", "access": "U:jdoe@firm.example|N"}]
    acl = by_id(list(netdocuments().crawl_full(None)))["1000-0000-0001"].acl
    assert acl is not None and JDOE in acl.deny


def test_e2e_typed_user_deny_and_string_noaccess(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    falcon = netdocuments_fake.docs[FALCON]
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}
    falcon.acl = [{"principal": "UG-LIT", "type": "group", "rights": "VES"},
                  {"principal": "U:amir@firm.com", "type": "user", "rights": "N"},
                  {"principal": "U:john.smith@firm.com", "noAccess": "true"}]  # fmt: skip
    sync()
    assert who_finds(firm, FALCON, "dagvaarding") == set()
