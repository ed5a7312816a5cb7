"""iManage Work connector against the local fake (real HTTP)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from connectors.base import (
    DocumentFailure,
    FullLoad,
    ListIds,
    OwnsIds,
    PermissionSync,
    PointCheck,
    PollSince,
    ResumableCrawl,
)
from connectors.http.errors import ConnectorError, CredentialsError
from connectors.imanage.acl import build_acl
from connectors.imanage.connector import IManageConnector
from connectors.imanage.profile import parse_field_map
from tests.connectors.conftest import ImanageFactory, Sleeps, imanage_settings
from tests.connectors.recording import by_id, cursor_text, documents
from tests.fakes.dms import FakeClock
from tests.fakes.imanage import FakeIManage

PRIVATE_SECURITY = {
    "default_security": "private",
    "acl": [
        {"id": "JSMITH", "type": "user", "access_level": "full_access", "access": 3},
        {"id": "LITIGATION", "type": "group", "access_level": "read"},
        {"id": "BKOWAL", "type": "user", "access_level": "no_access", "access": 0},
    ],
}


def test_implements_every_capability(imanage: ImanageFactory) -> None:
    connector = imanage()
    for protocol in (
        FullLoad,
        PollSince,
        ListIds,
        PermissionSync,
        ResumableCrawl,
        PointCheck,
        OwnsIds,
    ):
        assert isinstance(connector, protocol), protocol.__name__


def test_full_crawl_pages_by_offset_and_yields_documents(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    for n in range(1, 6):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    connector = imanage()
    items = list(connector.crawl_full(None))
    docs = by_id(items)
    assert sorted(docs) == [f"ACTIVE!{n}" for n in range(1, 6)]
    offsets = [r.query["offset"] for r in imanage_fake.calls(r"/documents$")]
    # one more page after the last row: only an empty page ends an offset listing
    assert offsets == ["0", "2", "4", "5"]
    assert all(
        r.query["limit"] == "2" and r.query["total"] == "true"
        for r in imanage_fake.calls(r"/documents$")
    )
    assert connector.total_hint == 5
    final = json.loads(cursor_text(items[-1]))
    assert final["full"] is None
    assert "ACTIVE" in final["since"]
    doc = docs["ACTIVE!1"]
    assert doc.content == b"Inhoud van document 1"
    assert doc.mime_type == "text/plain"
    assert doc.version == "1"
    assert doc.metadata["imanage_id"] == "ACTIVE!1.1"
    assert doc.source_url
    assert doc.source_url.startswith("iwl:")
    # The hidden library is not part of "all libraries".
    assert not imanage_fake.calls(r"/libraries/HIDDEN/")


def test_download_filename_gives_the_mime_type(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document(
        "ACTIVE",
        1,
        filename="Share Purchase Agreement.docx",
        extension="DOCX",
        content=b"PK\x03\x04docx",
    )
    imanage_fake.add_document("ACTIVE", 2, filename="", extension="PDF", content=b"%PDF-1.7")
    imanage_fake.add_document("ACTIVE", 3, filename="mail.msg")
    docs = by_id(list(imanage().crawl_full(None)))
    assert (docs["ACTIVE!1"].mime_type or "").endswith("wordprocessingml.document")
    assert docs["ACTIVE!1"].content == b"PK\x03\x04docx"
    assert docs["ACTIVE!1"].metadata["filename"] == "Share Purchase Agreement.docx"
    assert docs["ACTIVE!2"].mime_type == "application/pdf"  # no filename: the extension
    assert docs["ACTIVE!3"].mime_type == "application/vnd.ms-outlook"


def test_only_the_latest_version_per_document_number(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.versions_in_search = True  # the search returns every version
    for version in (1, 2, 3):
        imanage_fake.add_document("ACTIVE", 7, version=version, content=f"v{version}".encode())
    imanage_fake.add_document("ACTIVE", 8)
    docs = documents(list(imanage().crawl_full(None)))  # page size 2: versions span pages
    assert [(d.external_id, d.version, d.content) for d in docs] == [
        ("ACTIVE!7", "2", b"v2"),
        ("ACTIVE!7", "3", b"v3"),
        ("ACTIVE!8", "1", b"Inhoud van document 8"),
    ]
    # v1 never came out; v2 was superseded by v3 in the same crawl (same identity, so the
    # index ends with v3). Rows flagged as not latest are skipped outright:
    imanage_fake.docs["ACTIVE!7.3"].profile["is_latest"] = False
    imanage_fake.docs["ACTIVE!7.2"].profile["is_latest"] = True
    docs = documents(list(imanage().crawl_full(None)))
    assert [(d.external_id, d.version) for d in docs if d.external_id == "ACTIVE!7"] == [
        ("ACTIVE!7", "2")
    ]


def test_author_as_string_and_as_object(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    imanage_fake.add_document("ACTIVE", 1, author="JSMITH", default_security="private")
    imanage_fake.add_document(
        "ACTIVE", 2, author={"id": "AKHAN", "full_name": "Amir Khan"}, default_security="private"
    )
    imanage_fake.add_document("ACTIVE", 3, author={"id": "PVDB"}, author_description="P. v.d. B")
    docs = by_id(list(imanage().crawl_full(None)))
    assert docs["ACTIVE!1"].author == "JSMITH"
    assert docs["ACTIVE!2"].author == "Amir Khan"
    assert docs["ACTIVE!2"].metadata["author_id"] == "AKHAN"
    assert docs["ACTIVE!3"].author == "P. v.d. B"
    # The author of a private document may always read it.
    assert "imanage:user:akhan" in (docs["ACTIVE!2"].acl.allow if docs["ACTIVE!2"].acl else ())


@pytest.mark.parametrize(
    ("custom1", "custom2", "client", "matter"),
    [
        ("10025", "0007", "10025", "0007"),
        ("  ab   12 ", "m-7 ", "AB 12", "M-7"),
        ("", "", "", ""),
        ("   ", "\t", "", ""),
        ("??/x", "0007", "??/X", "0007"),  # invalid is kept, never corrected or guessed
        (None, None, None, None),  # JSON null: treated as absent
    ],
)
def test_client_and_matter_normalization(
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
    *,
    custom1: str | None,
    custom2: str | None,
    client: str | None,
    matter: str | None,
) -> None:
    imanage_fake.add_document("ACTIVE", 1, custom1=custom1, custom2=custom2)
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert (doc.client_id, doc.matter_id) == (client, matter)
    assert (doc.client_raw, doc.matter_raw) == (custom1, custom2)


def test_absent_fields_are_none(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    imanage_fake.add_document("ACTIVE", 1)  # no custom1/custom2 keys at all
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert (doc.client_id, doc.matter_id, doc.client_raw, doc.matter_raw) == (None,) * 4


def test_workspace_fills_empty_client_and_matter(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_workspace("ACTIVE", "ACTIVE!311", custom1=" 10025", custom2="0007")
    imanage_fake.add_document("ACTIVE", 1, custom1="", custom2=" ", workspace_id="ACTIVE!311")
    imanage_fake.add_document("ACTIVE", 2, custom1="10025", custom2="", workspace_id="ACTIVE!311")
    # The workspace belongs to another client: its matter must not be borrowed.
    imanage_fake.add_document("ACTIVE", 3, custom1="20001", custom2="", workspace_id="ACTIVE!311")
    imanage_fake.add_document("ACTIVE", 4, custom1="", custom2="", workspace_id="ACTIVE!999")
    docs = by_id(list(imanage().crawl_full(None)))
    one = docs["ACTIVE!1"]
    assert (one.client_id, one.matter_id, one.client_raw, one.matter_raw) == (
        "10025",
        "0007",
        " 10025",
        "0007",
    )
    assert one.metadata["client_from"] == "workspace"
    assert (docs["ACTIVE!2"].client_id, docs["ACTIVE!2"].matter_id) == ("10025", "0007")
    assert docs["ACTIVE!2"].metadata["client_from"] == "document"
    assert (docs["ACTIVE!3"].client_id, docs["ACTIVE!3"].matter_id) == ("20001", "")
    assert (docs["ACTIVE!4"].client_id, docs["ACTIVE!4"].matter_id) == ("", "")  # 404: as is
    assert len(imanage_fake.calls(r"/workspaces/ACTIVE!311$")) == 1  # cached


def test_a_workspace_that_fails_fails_its_documents_not_the_crawl(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """A fuzz of the connectors: a workspace answering 500 (after retries) failed the whole
    crawl, every run, and the documents after it were never ingested."""
    imanage_fake.add_workspace("ACTIVE", "ACTIVE!999", custom1="10025", custom2="0007")
    imanage_fake.add_document("ACTIVE", 1, custom1="", custom2="", workspace_id="ACTIVE!999")
    for n in range(2, 5):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    imanage_fake.inject(r"/workspaces/ACTIVE!999$", 500, times=50)
    items = list(imanage().crawl_full(None))
    assert sorted(by_id(items)) == ["ACTIVE!2", "ACTIVE!3", "ACTIVE!4"]
    failed = [i for i in items if isinstance(i, DocumentFailure)]
    assert [f.external_id for f in failed] == ["ACTIVE!1"]
    assert "workspace" in failed[0].reason


def test_field_map_per_library(sleeps: Sleeps) -> None:
    fake = FakeIManage(libraries=("ACTIVE", "ARCH"))
    fake.add_document("ACTIVE", 1, custom1="10025", custom2="0007", custom29="X", custom30="Y")
    fake.add_document(
        "ARCH", 1, custom1="wrong", custom2="wrong", custom29="30001", custom30="0001"
    )
    with fake.running():
        connector = IManageConnector(
            imanage_settings(fake, imanage_field_map="ARCH=custom29:custom30"), sleep=sleeps
        )
        try:
            docs = by_id(list(connector.crawl_full(None)))
        finally:
            connector.close()
    assert (docs["ACTIVE!1"].client_id, docs["ACTIVE!1"].matter_id) == ("10025", "0007")
    assert (docs["ARCH!1"].client_id, docs["ARCH!1"].matter_id) == ("30001", "0001")


def test_matter_numbers_qualified_by_client(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1, custom1="10025", custom2="0007")
    imanage_fake.add_document("ACTIVE", 2, custom1="20001", custom2="0007")
    docs = by_id(list(imanage({"imanage_matter_id_format": "{client}/{matter}"})
                       .crawl_full(None)))
    assert docs["ACTIVE!1"].matter_id == "10025/0007"
    assert docs["ACTIVE!2"].matter_id == "20001/0007"
    assert docs["ACTIVE!2"].matter_raw == "0007"
    with pytest.raises(ConnectorError, match="MATTER_ID_FORMAT"):
        imanage({"imanage_matter_id_format": "{matter}{nope}"})


def test_field_map_must_be_well_formed() -> None:
    assert parse_field_map(" ACTIVE=custom1:custom2 ; arch=Custom29:custom30;") == {
        "ACTIVE": ("custom1", "custom2"),
        "ARCH": ("custom29", "custom30"),
    }
    for bad in ("ACTIVE", "ACTIVE=custom1", "=custom1:custom2", "A=custom 1:x"):
        with pytest.raises(ConnectorError):
            parse_field_map(bad)


# --- security ---------------------------------------------------------------------------------


def test_security_over_http(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    imanage_fake.add_document(
        "ACTIVE",
        1,
        default_security="private",
        author="JSMITH",
        operator="OPS1",
        security=PRIVATE_SECURITY,
    )
    imanage_fake.add_document(
        "ACTIVE", 2, default_security="view", security={"default_security": "view", "acl": []}
    )
    imanage_fake.add_document(
        "ACTIVE",
        3,
        security={"default_security": "inherit", "inherited_default_security": "public", "acl": []},
    )
    imanage_fake.add_document(
        "ACTIVE",
        4,
        security={
            "default_security": "private",
            "acl": [
                {
                    "id": "FALCON_TEAM",
                    "type": "group",
                    "access_level": "read_write",
                    "has_restricted_member": True,
                }
            ],
        },
    )
    docs = by_id(list(imanage().crawl_full(None)))
    acl = docs["ACTIVE!1"].acl
    assert acl is not None
    assert acl.default == "private"
    assert acl.resolvable
    assert acl.allow == {"imanage:user:jsmith", "imanage:group:litigation", "imanage:user:ops1"}
    assert acl.deny == {"imanage:user:bkowal"}
    assert docs["ACTIVE!2"].acl is not None
    assert docs["ACTIVE!2"].acl.default == "view"
    assert docs["ACTIVE!3"].acl is not None
    assert docs["ACTIVE!3"].acl.default == "public"
    restricted = docs["ACTIVE!4"].acl
    assert restricted is not None
    assert restricted.resolvable is False
    assert restricted.note
    assert "falcon_team" in restricted.note


def test_unreadable_security_fails_closed(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1)
    imanage_fake.security_missing.add(("ACTIVE", 1))
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert doc.acl is not None
    assert doc.acl.resolvable is False
    assert doc.metadata["acl_note"].startswith("security could not be read")


def test_security_failing_with_5xx_fails_closed_not_as_last_read(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """A fuzz of the connectors: /security answering 500 failed the document, and the sync
    kept the copy indexed with the ACL read before, a deny added since ignored."""
    imanage_fake.add_document("ACTIVE", 1)
    imanage_fake.inject(r"/security$", 500, times=50)
    doc = documents(list(imanage().crawl_full(None)))[0]
    assert doc.acl is not None and doc.acl.resolvable is False
    assert "HTTP 500" in doc.metadata["acl_note"]


@pytest.mark.parametrize(
    ("default", "inherited", "expected"),
    [
        ("public", None, "public"),
        ("view", None, "view"),
        ("private", None, "private"),
        ("inherit", "view", "view"),
        ("inherit", None, "private"),
        ("weird", None, "private"),
        (None, None, "private"),
    ],
)
def test_default_security(default: str | None, inherited: str | None, expected: str) -> None:
    acl = build_acl(
        library="A", document_id="A!1.1", default_security=default, inherited_default=inherited
    )
    assert acl.default == expected
    assert acl.resolvable


def test_acl_rules() -> None:
    entries: list[dict[str, Any]] = [
        {"id": "JSMITH", "type": "user", "access_level": "read"},
        {"id": "G1", "type": "group", "access": 2},  # numeric level
        {"user_id": "U2", "access_level": "full_access"},  # kind from the key
        {"id": "NOPE", "type": "user", "access_level": "no_access"},
        {"id": "G2", "type": "group", "access_level": "change_security"},
    ]
    acl = build_acl(
        library="A",
        document_id="A!1.1",
        default_security="private",
        entries=entries,
        denied=[{"trustee_id": "X9", "trustee_type": "user"}],
    )
    assert acl.allow == {
        "imanage:user:jsmith",
        "imanage:group:g1",
        "imanage:user:u2",
        "imanage:group:g2",
    }
    assert acl.deny == {"imanage:user:nope", "imanage:user:x9"}
    assert acl.resolvable

    unknown = build_acl(
        library="A",
        document_id="A!1.1",
        default_security="public",
        entries=[{"id": "X", "type": "user", "access_level": "owner-ish"}],
    )
    assert unknown.resolvable is False  # an unknown level could be a deny

    orphan_deny = build_acl(
        library="A",
        document_id="A!1.1",
        default_security="public",
        entries=[{"access_level": "no_access"}],
    )
    assert orphan_deny.resolvable is False


def test_restricted_group_members_resolved_by_the_resolver() -> None:
    seen: list[tuple[str, str, str]] = []

    def resolver(library: str, document_id: str, group: str) -> frozenset[str] | None:
        seen.append((library, document_id, group))
        return frozenset({"imanage:user:conflicted"})

    entry = {
        "id": "FALCON_TEAM",
        "type": "group",
        "access_level": "read",
        "has_restricted_member": True,
    }
    acl = build_acl(
        library="ACTIVE",
        document_id="ACTIVE!1.2",
        default_security="view",
        entries=[entry],
        resolver=resolver,
    )
    assert acl.resolvable
    assert acl.allow == {"imanage:group:falcon_team"}
    assert acl.deny == {"imanage:user:conflicted"}
    assert seen == [("ACTIVE", "ACTIVE!1.2", "FALCON_TEAM")]


# --- delta -----------------------------------------------------------------------------------


def test_delta_asks_from_the_watermark_minus_the_overlap(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1, edit_date="2025-01-01T00:00:00Z")
    imanage_fake.add_document("ACTIVE", 2, edit_date="2025-01-08T11:57:00Z")  # in the overlap
    imanage_fake.add_document("ACTIVE", 3, edit_date="2025-01-09T10:02:00Z")
    cursor = json.dumps({"v": 1, "since": {"ACTIVE": "2025-01-08T12:00:00Z"}, "full": None})
    items = list(imanage().crawl_delta(cursor))
    assert sorted(by_id(items)) == ["ACTIVE!2", "ACTIVE!3"]
    assert {r.query.get("edit_date_from") for r in imanage_fake.calls(r"/documents$")} == {
        "2025-01-08T11:55:00Z"
    }
    assert json.loads(cursor_text(items[-1]))["since"] == {"ACTIVE": "2025-01-09T10:02:00Z"}


def test_delta_keeps_the_watermark_when_a_document_failed(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1, edit_date="2025-01-09T10:02:00Z")
    imanage_fake.inject(r"/download$", 500, times=10)
    cursor = json.dumps({"v": 1, "since": {"ACTIVE": "2025-01-08T12:00:00Z"}, "full": None})
    items = list(imanage().crawl_delta(cursor))
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    assert len(failures) == 1
    assert failures[0].status == 500
    assert json.loads(cursor_text(items[-1]))["since"] == {"ACTIVE": "2025-01-08T12:00:00Z"}


def test_a_document_dated_in_the_future_does_not_freeze_the_delta(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """One document stamped 2099 set the watermark to 2099: every later delta asked for
    changes after 2099, and an access removal waited for the next full crawl. The watermark
    now stays at the run's clock, the report says why, and a stored future watermark (from
    before this check) is dropped so the container is listed from its start once more."""
    imanage_fake.add_document("ACTIVE", 1, edit_date="2099-01-01T00:00:00Z")
    imanage_fake.add_document("ACTIVE", 2, edit_date="2025-01-09T10:02:00Z")
    cursor = json.dumps({"v": 1, "since": {"ACTIVE": "2025-01-08T12:00:00Z"}, "full": None})
    connector = imanage()
    items = list(connector.crawl_delta(cursor))
    since = json.loads(cursor_text(items[-1]))["since"]["ACTIVE"]
    assert "2025" <= since[:4] < "2099", since
    # never past the run's own clock: a smaller overlap must not skip what changes next
    assert since <= datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), since
    assert any("2099-01-01" in w and "ACTIVE" in w for w in connector.warnings), connector.warnings
    # a change made now is found by the next delta
    imanage_fake.add_document("ACTIVE", 3, edit_date=since)
    assert "ACTIVE!3" in by_id(list(imanage().crawl_delta(cursor_text(items[-1]))))
    # a watermark stored in the future by an older version lists the container again
    poisoned = json.dumps({"v": 1, "since": {"ACTIVE": "2099-01-01T00:00:00Z"}, "full": None})
    again = imanage()
    assert sorted(by_id(list(again.crawl_delta(poisoned)))) == ["ACTIVE!1", "ACTIVE!2", "ACTIVE!3"]
    assert any("stored watermark in the future" in w for w in again.warnings), again.warnings


def test_paging_that_ignores_offset_ends_with_a_failure(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.ignore_offset = True
    for n in range(1, 6):
        imanage_fake.add_document("ACTIVE", n)
    items = list(imanage().crawl_full(None))
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    assert len(failures) == 1
    assert "stalled" in failures[0].reason
    assert len(imanage_fake.calls(r"/documents$")) == 2
    assert len(documents(items)) == 2


@pytest.mark.parametrize("sync_api", [False, True])
def test_a_capped_page_size_does_not_end_the_crawl(sleeps: Sleeps, sync_api: bool) -> None:
    """A server that caps ``limit`` at 25 below the 100 asked: a short page must not end the
    crawl, so all 39 documents are ingested and completeness is judged honestly."""
    fake = FakeIManage(sync_api=sync_api)
    fake.page_cap = 25
    for n in range(1, 40):
        fake.add_document("ACTIVE", n)
    with fake.running():
        connector = IManageConnector(imanage_settings(fake), sleep=sleeps, page_size=100,
                                     sync_page_size=100)
        try:
            items = list(connector.crawl_full(None))
            listed = set(connector.list_ids()) if not sync_api else set()
        finally:
            connector.close()
    assert sorted(by_id(items)) == sorted(f"ACTIVE!{n}" for n in range(1, 40))
    assert not [i for i in items if isinstance(i, DocumentFailure)]
    assert connector.listings["ACTIVE"]["complete"] is True
    if not sync_api:
        assert connector.listings["ACTIVE"]["server_total"] == 39
        assert len(listed) == 39  # list_ids (used by deletion scans) shares the helper


@pytest.mark.parametrize(("mode", "complete"), [("absent", True), ("low", False),
                                                ("high", False)])
def test_a_wrong_or_absent_total_never_shortens_the_listing(
    imanage_fake: FakeIManage, imanage: ImanageFactory, mode: str, complete: bool
) -> None:
    imanage_fake.total_mode = mode
    for n in range(1, 8):
        imanage_fake.add_document("ACTIVE", n)
    connector = imanage()
    items = list(connector.crawl_full(None))
    assert len(documents(items)) == 7  # every document, whatever the total said
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    assert connector.listings["ACTIVE"]["complete"] is complete
    assert bool(failures) is (not complete)  # a mismatch makes the crawl incomplete


# --- auth ---------------------------------------------------------------------------------------


def test_tokens_are_renewed_before_they_expire(sleeps: Sleeps) -> None:
    clock = FakeClock()
    # Every request moves the shared clock 100 s: a 1800 s token lasts ~17 requests.
    fake = FakeIManage(clock=clock, token_ttl=1800, advance_per_request=100)
    for n in range(1, 16):
        fake.add_document("ACTIVE", n)
    with fake.running():
        connector = IManageConnector(
            imanage_settings(fake, connector_concurrency=1), sleep=sleeps, clock=clock, page_size=5
        )
        try:
            docs = documents(list(connector.crawl_full(None)))
        finally:
            connector.close()
    assert len(docs) == 15
    api = [r for r in fake.requests if r.path != "/auth/oauth2/token"]
    assert all(r.status != 401 for r in api)
    assert all(r.token_age is not None and r.token_age < 1800 for r in api)
    assert fake.grants[0] == "password"
    assert fake.grants.count("refresh_token") >= 2


def test_wrong_credentials_stop_the_crawl(sleeps: Sleeps) -> None:
    fake = FakeIManage()
    fake.add_document("ACTIVE", 1)
    with fake.running():
        connector = IManageConnector(
            imanage_settings(fake, imanage_client_secret="nope-nope"), sleep=sleeps
        )
        try:
            with pytest.raises(CredentialsError, match="invalid_grant"):
                list(connector.crawl_full(None))
        finally:
            connector.close()
    assert [r.path for r in fake.requests] == ["/auth/oauth2/token"]


def test_missing_settings_are_named() -> None:
    from tests.conftest import make_settings

    with pytest.raises(ConnectorError, match="EWALL_IMANAGE_URL"):
        IManageConnector(make_settings())


# --- deletions and point checks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("trash404", "deleted"),
        ("trash410", "deleted"),
        ("revoke", "forbidden"),
        ("none", "present"),
    ],
)
def test_point_check(
    imanage_fake: FakeIManage, imanage: ImanageFactory, action: str, expected: str
) -> None:
    doc_id = imanage_fake.add_document("ACTIVE", 1, version=2)
    if action.startswith("trash"):
        imanage_fake.trash(doc_id, status=int(action[-3:]))
    elif action == "revoke":
        imanage_fake.revoke(doc_id)
    connector = imanage()
    connector.version_hints = {"ACTIVE!1": "2"}  # what the index holds
    assert connector.check("ACTIVE!1") == expected
    assert imanage_fake.calls(r"/documents/ACTIVE!1\.2$")  # the documented id form


def test_point_check_addresses_documents_as_lib_number_version(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """A point check must fetch ``LIB!number.version``: ``LIB!number`` is a container id, a
    server answers 404 to it, and an existing document would be reported deleted."""
    imanage_fake.add_document("ACTIVE", 1, version=3)
    imanage_fake.add_document("ACTIVE", 2, version=1)
    # No version known: found with a document_number search, then fetched as ACTIVE!1.3.
    assert imanage().check("ACTIVE!1") == "present"
    assert imanage_fake.calls(r"/documents/ACTIVE!1\.3$")
    assert not imanage_fake.calls(r"/documents/ACTIVE!1$")
    # Gone and no version known anywhere: no verdict at all (kept and reported), never a guess.
    imanage_fake.trash("ACTIVE!2.1")
    with pytest.raises(ConnectorError, match="no version known"):
        imanage().check("ACTIVE!2")


def test_document_trashed_between_listing_and_fetch(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1)
    imanage_fake.add_document("ACTIVE", 2)
    imanage_fake.add_document("ACTIVE", 3)
    # 2 goes to Trash after the listing: its security and its profile now answer 404.
    imanage_fake.inject(r"ACTIVE!2\.1/security$", 404)
    imanage_fake.inject(r"/documents/ACTIVE!2\.1$", 410)
    # 3 is still there, but its download answers 404: that proves nothing, it is an error.
    imanage_fake.inject(r"ACTIVE!3\.1/download$", 404)
    items = list(imanage().crawl_full(None))
    failures = {f.external_id: f for f in items if isinstance(f, DocumentFailure)}
    assert failures["ACTIVE!2"].status == 404
    assert failures["ACTIVE!2"].gone
    assert failures["ACTIVE!3"].status is None
    assert not (failures["ACTIVE!3"].gone)
    assert not (failures["ACTIVE!3"].revoked)
    assert sorted(by_id(items)) == ["ACTIVE!1"]


def test_download_refused_for_a_readable_profile_removes_it(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    imanage_fake.add_document("ACTIVE", 1, is_hipaa=True)
    imanage_fake.inject(r"/download$", 403)
    failures = [i for i in imanage().crawl_full(None) if isinstance(i, DocumentFailure)]
    assert [(f.external_id, f.status, f.revoked) for f in failures] == [("ACTIVE!1", 403, True)]


def test_list_ids_and_owns(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    for n in range(1, 4):
        imanage_fake.add_document("ACTIVE", n)
    imanage_fake.add_document("ACTIVE", 9, wstype="folder")
    connector = imanage()
    assert sorted(connector.list_ids()) == ["ACTIVE!1", "ACTIVE!2", "ACTIVE!3"]
    scoped = imanage({"imanage_libraries": "ACTIVE"})
    assert scoped.owns("ACTIVE!5")
    assert scoped.owns("active!5")
    assert not scoped.owns("ARCH!5")
    assert not scoped.owns("garbage")
    assert scoped.scope == "libraries=ACTIVE"


# --- groups -------------------------------------------------------------------------------------


def test_groups_for_permission_sync(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    imanage_fake.add_group("LITIGATION", ["JSMITH", "AKHAN"])
    imanage_fake.add_group("OLD_TEAM", ["BKOWAL"], enabled=False)
    groups = {g.group_id: g.members for g in imanage().groups()}
    assert groups == {
        "litigation": {"imanage:user:jsmith", "imanage:user:akhan"},
        "old_team": frozenset(),
    }


def test_an_undocumented_groups_endpoint_that_404s_degrades(
    imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    """The groups listing is in no published endpoint list: its 404 turns group sync off
    with a warning and must not fail the run."""
    imanage_fake.groups_endpoint = False
    imanage_fake.add_group("LITIGATION", ["JSMITH"])
    connector = imanage()
    assert list(connector.groups()) == []
    assert connector.warnings
    assert "group membership not available" in connector.warnings[0]


def test_groups_from_the_sync_api(sleeps: Sleeps) -> None:
    fake = FakeIManage(sync_api=True)
    fake.add_group("LITIGATION", ["JSMITH", "AKHAN", "PVDB"])
    with fake.running():
        connector = IManageConnector(imanage_settings(fake), sleep=sleeps, sync_page_size=2)
        try:
            groups: dict[str, object] = {g.group_id: g.members for g in connector.groups()}
        finally:
            connector.close()
    assert groups == {
        "litigation": {"imanage:user:jsmith", "imanage:user:akhan", "imanage:user:pvdb"}
    }
    assert len(fake.calls(r"/sync/groups/members/search$")) == 2


def test_a_500_on_a_download_is_retried(
    imanage_fake: FakeIManage, imanage: ImanageFactory, sleeps: Sleeps
) -> None:
    """A fuzz of the connectors: one transient 500 failed the document for the run (and, with
    it, the sweep); docs/dms-apis.md §2.8 treats 5xx on a download as retryable."""
    imanage_fake.add_document("ACTIVE", 1)
    imanage_fake.inject(r"/download$", 500)
    docs = documents(list(imanage().crawl_full(None)))
    assert [d.external_id for d in docs] == ["ACTIVE!1"]
    assert len(imanage_fake.calls(r"/download$")) == 2


def test_429_and_503_during_a_crawl(
    imanage_fake: FakeIManage, imanage: ImanageFactory, sleeps: Sleeps
) -> None:
    for n in range(1, 4):
        imanage_fake.add_document("ACTIVE", n)
    imanage_fake.inject(r"/documents$", 429, headers={"x-ratelimit-retryafter": "2"})
    imanage_fake.inject(r"/download$", 503, headers={"Retry-After": "1"})
    imanage_fake.inject(r"/security$", 429)
    docs = documents(list(imanage().crawl_full(None)))
    assert len(docs) == 3
    assert 2.0 in sleeps
    assert 1.0 in sleeps


def test_never_writes(imanage_fake: FakeIManage, imanage: ImanageFactory) -> None:
    for n in range(1, 4):
        imanage_fake.add_document("ACTIVE", n, workspace_id="ACTIVE!1", custom1="")
    imanage_fake.add_group("G", ["U"])
    connector = imanage()
    items = list(connector.crawl_full(None))
    list(connector.crawl_delta(cursor_text(items[-1])))
    list(connector.groups())
    list(connector.list_ids())
    connector.check("ACTIVE!1")
    assert imanage_fake.requests
    assert imanage_fake.writes() == []
    assert {r.method for r in imanage_fake.requests} == {"GET", "POST"}
    assert {r.path for r in imanage_fake.requests if r.method == "POST"} == {"/auth/oauth2/token"}
