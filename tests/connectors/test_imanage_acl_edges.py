"""iManage rules that lost their denies (a review of 2026-12-06 wrote these from
connectors.md): a user's row with an empty group_id read as a group's, has_restricted_member
in another spelling or value, another version's no_access in the Sync allowed list, lists
named for denies in the /security answer, denied trustees keyed by document number. Each
must deny, or make the document visible to nobody."""

from __future__ import annotations

import pytest

from connectors.base import SourceAcl, SourceDocument
from connectors.imanage.acl import GRANTS, acl_entries, build_acl
from connectors.imanage.connector import IManageConnector
from connectors.imanage.profile import of_version
from tests.connectors.conftest import Sleeps, imanage_settings
from tests.connectors.recording import by_id
from tests.fakes.imanage import FakeIManage


def _acl(**kw: object) -> SourceAcl:
    kw.setdefault("library", "ACTIVE")
    kw.setdefault("document_id", "ACTIVE!1.1")
    kw.setdefault("default_security", "public")
    return build_acl(**kw)  # type: ignore[arg-type]  # the keywords of build_acl, by test


def _bob_denied_or_closed(acl: SourceAcl) -> bool:
    return (not acl.resolvable) or "imanage:user:bob" in acl.deny


# kind inferred from a null group_id key ------------------------------------------------
@pytest.mark.parametrize("where", ["entries", "denied"])
@pytest.mark.parametrize("null", [None, ""])
def test_user_row_with_empty_group_id_key_stays_a_user_deny(where: str, null: object) -> None:
    """A DTO that serialises both user_id and group_id (one null) and no type."""
    row = {"user_id": "BOB", "group_id": null, "access_level": "no_access"}
    acl = _acl(**{where: [row]})
    assert _bob_denied_or_closed(acl), (acl.deny, acl.resolvable)


# has_restricted_member spelled or typed otherwise --------------------------------------
@pytest.mark.parametrize(
    "flag",
    [{"hasRestrictedMember": True}, {"HasRestrictedMember": True},
     {"has_restricted_member": 1}, {"has_restricted_member": "1"},
     {"has_restricted_member": "yes"}, {"has_restricted_member": "Y"}],
)
def test_restricted_member_flag_variants_fail_closed(flag: dict[str, object]) -> None:
    entry = {"id": "LIT", "type": "group", "access_level": "read", **flag}
    acl = _acl(default_security="private", entries=[entry])
    assert not acl.resolvable, (flag, acl)


# another version's no_access row in the allowed list -----------------------------------
def test_other_versions_no_access_row_in_allowed_list_still_denies() -> None:
    """Another version's grants must not widen this one; its denies stand."""
    rows = [
        {"document_id": "ACTIVE!1.3", "trustee_id": "LIT", "trustee_type": "group",
         "access_level": "read"},
        {"document_id": "ACTIVE!1.2", "trustee_id": "BOB", "trustee_type": "user",
         "access_level": "no_access"},
    ]
    acl = _acl(default_security="public", entries=of_version(rows, 3, GRANTS))
    assert _bob_denied_or_closed(acl), acl


# deny-named keys in the /security answer -----------------------------------------------
@pytest.mark.parametrize(
    "extra",
    [{"exclusions": ["BOB"]}, {"excluded": ["BOB"]}, {"blocked": ["BOB"]},
     {"restricted": ["BOB"]}, {"denials": [{"id": "BOB", "type": "user"}]},
     {"no_access": [{"id": "BOB", "type": "user"}]}],
)
def test_deny_named_lists_are_not_skipped(extra: dict[str, object]) -> None:
    security = {"default_security": "public", "acl": [], **extra}
    entries = acl_entries(security)
    if entries is None:
        return  # fails closed: fine
    acl = _acl(default_security="public", entries=entries)
    assert _bob_denied_or_closed(acl), (extra, acl)


# over HTTP with the Sync API -------------------------------------------------------------
def _crawl(fake: FakeIManage, sleeps: Sleeps) -> dict[str, SourceDocument]:
    with fake.running():
        connector = IManageConnector(imanage_settings(fake), sleep=sleeps, sync_page_size=50)
        try:
            return by_id(list(connector.crawl_full(None)))
        finally:
            connector.close()


def test_denied_trustee_row_keyed_by_document_number_is_not_dropped(sleeps: Sleeps) -> None:
    """A denied-trustees row keyed by document_number (document_id null), as S4's rows are,
    was dropped silently."""
    fake = FakeIManage(sync_api=True)
    fake.add_document(
        "ACTIVE", 1, custom1="10025", custom2="0007", default_security="public",
        denied=[{"document_id": None, "document_number": 1,
                 "trustee_id": "BOB", "trustee_type": "user"}],
    )
    doc = _crawl(fake, sleeps)["ACTIVE!1"]
    acl = doc.acl
    assert acl is not None and _bob_denied_or_closed(acl), acl
