"""NetDocuments connector against the local fake (real HTTP)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from connectors.base import (
    DocumentFailure,
    FullLoad,
    ListIds,
    PermissionSync,
    PointCheck,
    PollSince,
    ResumableCrawl,
)
from connectors.http.errors import (
    ConnectorError,
    CredentialsError,
    RequestNotAllowedError,
    SourceHTTPError,
)
from connectors.netdocuments.acl import GroupsByName, build_acl, profile_parts
from connectors.netdocuments.client import parse_search
from connectors.netdocuments.connector import NetDocumentsConnector
from tests.connectors.conftest import NetDocumentsFactory, Sleeps, netdocuments_settings
from tests.connectors.recording import by_id, cursor_text, documents
from tests.fakes.dms import FakeClock
from tests.fakes.netdocuments import CABINET, FakeNetDocuments


def _seed(fake: FakeNetDocuments, count: int = 5) -> list[str]:
    ids = []
    for n in range(count):
        doc_id = f"4824-5093-{9170 + n}"
        fake.add_document(
            doc_id, client="10025", matter="0007", modified=f"2025-01-{n + 1:02d}T10:00:00Z"
        )
        ids.append(doc_id)
    return ids


@contextmanager
def _connector(
    fake: FakeNetDocuments, sleeps: Sleeps, settings: dict[str, Any] | None = None, **kw: Any
) -> Iterator[NetDocumentsConnector]:
    kw.setdefault("page_size", 2)
    connector = NetDocumentsConnector(
        netdocuments_settings(fake, **(settings or {})), sleep=sleeps, clock=fake.clock, **kw
    )
    try:
        yield connector
    finally:
        connector.close()


def test_implements_every_capability(netdocuments: NetDocumentsFactory) -> None:
    connector = netdocuments()
    for protocol in (FullLoad, PollSince, ListIds, PermissionSync, ResumableCrawl, PointCheck):
        assert isinstance(connector, protocol), protocol.__name__


# --- auth --------------------------------------------------------------------------------------


def test_client_credentials_with_the_documented_basic_header(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    netdocuments().cabinets()
    grant = netdocuments_fake.calls(r"^/v1/OAuth$")[0]
    assert grant.method == "POST"
    assert grant.body == {"grant_type": "client_credentials", "scope": "read"}
    expected = base64.b64encode(b"ewall-nd|CA-XY98ZW76:nd-Secr3t-value").decode()
    assert netdocuments_fake.basic() == expected
    assert netdocuments_fake.calls(r"^/v1/User/cabinets$")[0].token == "nd-tok-1-value"


def test_wrong_secret(sleeps: Sleeps) -> None:
    fake = FakeNetDocuments()
    with (
        fake.running(),
        _connector(fake, sleeps, {"netdocuments_client_secret": "bad-Secret-9"}) as nd,
        pytest.raises(CredentialsError) as info,
    ):
        nd.cabinets()
    assert "invalid_grant" in str(info.value)
    assert "bad-Secret-9" not in str(info.value)
    assert fake.client_secret not in str(info.value)
    assert [r.path for r in fake.requests] == ["/v1/OAuth"]


@pytest.mark.parametrize("as_string", [True, False])
def test_token_renewed_before_expiry_with_expires_in_as_string_or_number(
    sleeps: Sleeps, as_string: bool
) -> None:
    clock = FakeClock()
    fake = FakeNetDocuments(
        clock=clock, token_ttl=1800, expires_as_string=as_string, advance_per_request=120
    )
    _seed(fake, 8)
    with fake.running(), _connector(fake, sleeps, {"connector_concurrency": 1}) as nd:
        docs = documents(list(nd.crawl_full(None)))
    assert len(docs) == 8
    api = [r for r in fake.requests if r.path != "/v1/OAuth"]
    assert all(r.status != 401 for r in api)
    assert all(r.token_age is not None and r.token_age < 1800 for r in api)
    assert fake.grants >= 3


# --- search shapes and paging -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "paging", "token_key"),
    [
        ("A", "skiptoken", "skiptoken"),
        ("A", "skiptoken", "SkipToken"),
        ("B", "skiptoken", "next"),
        ("A", "link", "skiptoken"),
        ("B", "link", "skiptoken"),
        ("A", "skip", "-"),
        ("B", "skip", "-"),
    ],
)
def test_both_search_shapes_and_every_paging_style(
    sleeps: Sleeps, shape: str, paging: str, token_key: str
) -> None:
    fake = FakeNetDocuments(shape=shape, paging=paging, token_key=token_key)
    ids = _seed(fake, 5)
    fake.add_document("4811-2200-0042", extension="ndfld")  # a folder
    fake.add_document("4811-2200-0043", extension="ndsq")  # a saved search
    fake.add_document("4811-2200-0044", extension="NDFLT")  # a filter
    with fake.running(), _connector(fake, sleeps) as nd:
        docs = by_id(list(nd.crawl_full(None)))
    assert sorted(docs) == ids
    doc = docs[ids[0]]
    assert (doc.client_id, doc.matter_id) == ("10025", "0007")
    assert (doc.mime_type or "").endswith("wordprocessingml.document")
    assert doc.version == "1"
    assert doc.checksum
    assert doc.checksum.startswith("sha256:")
    searches = fake.calls(r"^/v2/Search$")
    if paging == "skip":  # 8 rows, 2 per page; without a token a full page asks once more
        assert [s.query.get("skip") for s in searches] == [None, "2", "4", "6", "8"]
    else:
        assert [s.query.get("skiptoken") for s in searches] == [None, "t0-2", "t0-4", "t0-6"]
    assert not fake.calls(r"^/v1/Document/4811-2200-004")  # non-documents never fetched


def test_parse_search_accepts_aliases() -> None:
    page = parse_search(
        {
            "standardList": [{"standardAttributes": {"docId": "1-2-3", "NAME": "x"}}],
            "@odata.nextLink": "/v2/Search?cabinets=NG-1&skiptoken=abc",
        }
    )
    assert [h.id for h in page.hits] == ["1-2-3"]
    assert page.hits[0].name == "x"
    assert page.next_token == "abc"
    assert page.next_link is None
    page = parse_search({"results": [{"DocId": "9"}], "nextLink": "https://h/v2/Search?x=1"})
    assert page.next_token is None
    assert page.next_link == "https://h/v2/Search?x=1"
    assert parse_search([{"id": "7"}]).hits[0].id == "7"


@pytest.mark.parametrize(("shape", "stalled"), [("A", True), ("B", True)])
def test_a_server_that_repeats_pages_cannot_loop_us(
    sleeps: Sleeps, shape: str, stalled: bool
) -> None:
    fake = FakeNetDocuments(shape=shape, paging="skip")
    _seed(fake, 6)
    fake.repeat_pages = True
    with fake.running(), _connector(fake, sleeps) as nd:
        items = list(nd.crawl_full(None))
    assert len(fake.calls(r"^/v2/Search$")) == 2  # the second page added nothing new
    assert len(documents(items)) == 2
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    # A listing that cannot be completed is a failure (no sweep), with or without TotalFound.
    assert bool(failures) is stalled


def test_top_never_exceeds_500(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    _seed(netdocuments_fake, 3)
    connector = netdocuments(page_size=5000)
    assert len(documents(list(connector.crawl_full(None)))) == 3
    assert {r.query["top"] for r in netdocuments_fake.calls(r"^/v2/Search$")} == {"500"}
    # The fake enforces the limit like the service does.

    with pytest.raises(SourceHTTPError) as info:
        connector.client.http.get_json(
            "/v2/Search",
            params={"cabinets": CABINET, "q": "*", "top": 501},
            auth=connector.client.auth,
        )
    assert info.value.status == 400


def test_expired_skiptoken_on_resume_restarts_the_cabinet(sleeps: Sleeps) -> None:
    fake = FakeNetDocuments()
    ids = _seed(fake, 5)
    with fake.running():
        with _connector(fake, sleeps) as first:
            checkpoint = next(i for i in first.crawl_full(None) if isinstance(i, str))
        assert json.loads(checkpoint)["full"]["token"] == "t0-2"
        fake.expire_skiptokens()
        with _connector(fake, sleeps) as second:
            docs = by_id(list(second.crawl_full(checkpoint)))
    assert sorted(docs) == ids  # restarted from the top: nothing lost
    # first run: page 1; resume: the stored token is refused, then the cabinet from the top
    assert [r.status for r in fake.calls(r"^/v2/Search$")][:3] == [200, 400, 200]


# --- delta ----------------------------------------------------------------------------------------


def test_delta_walks_lastmod_descending_down_to_the_watermark(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    ids = _seed(netdocuments_fake, 6)  # modified 2025-01-01 .. 2025-01-06, 10:00
    netdocuments_fake.docs[ids[2]].modified = "2025-01-04T09:57:00Z"  # inside the overlap
    cursor = json.dumps({"v": 1, "since": {CABINET: "2025-01-04T10:00:00Z"}, "full": None})
    items = list(netdocuments().crawl_delta(cursor))
    assert sorted(by_id(items)) == sorted([ids[2], ids[3], ids[4], ids[5]])
    searches = netdocuments_fake.calls(r"^/v2/Search$")
    assert {s.query["orderby"] for s in searches} == {"7|desc"}
    assert len(searches) == 3  # stopped on the page that reached older rows
    assert not netdocuments_fake.calls(rf"^/v1/Document/{ids[0]}")  # never fetched
    assert json.loads(cursor_text(items[-1]))["since"] == {CABINET: "2025-01-06T10:00:00Z"}


def test_a_document_dated_in_the_future_does_not_freeze_the_delta(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    ids = _seed(netdocuments_fake, 3)
    netdocuments_fake.docs[ids[0]].modified = "2099-01-01T00:00:00Z"
    cursor = json.dumps({"v": 1, "since": {CABINET: "2025-01-02T10:00:00Z"}, "full": None})
    connector = netdocuments()
    items = list(connector.crawl_delta(cursor))
    since = json.loads(cursor_text(items[-1]))["since"][CABINET]
    assert "2025" <= since[:4] < "2099", since
    assert any("2099-01-01" in w for w in connector.warnings), connector.warnings
    netdocuments_fake.docs[ids[1]].modified = since  # changed now: found by the next delta
    assert ids[1] in by_id(list(netdocuments().crawl_delta(cursor_text(items[-1]))))


def test_delta_without_server_ordering_filters_every_row(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    ids = _seed(netdocuments_fake, 6)
    netdocuments_fake.honour_orderby = False  # rows come by id, oldest first
    cursor = json.dumps({"v": 1, "since": {CABINET: "2025-01-05T10:00:00Z"}, "full": None})
    docs = by_id(list(netdocuments().crawl_delta(cursor)))
    assert sorted(docs) == [ids[4], ids[5]]
    assert len(netdocuments_fake.calls(r"^/v2/Search$")) == 3  # read to the end


# --- permissions ----------------------------------------------------------------------------------


def test_access_list_rights() -> None:
    acl = build_acl(
        [
            {"principal": "UG-LIT", "name": "Litigation", "rights": "VES"},
            {"principal": "U:jdoe@firm.example", "rights": "N"},
            {"principal": "U:amir@firm.example", "rights": "V"},
            {"principal": "UG-ADM", "rights": "A"},
            {"principal": "U:both@firm.example", "rights": "VN"},  # N beats everything
            {"principal": "UG-NONE", "rights": ""},  # no rights: no grant
            {"principal": "NG-AB12CD34", "view": True, "edit": True},  # membership shape
        ]
    )
    assert acl.default == "private"
    assert acl.resolvable
    assert acl.allow == {
        "netdocuments:group:ug-lit",
        "netdocuments:user:amir@firm.example",
        "netdocuments:group:ug-adm",
        "netdocuments:group:ng-ab12cd34",
    }
    assert acl.deny == {
        "netdocuments:user:jdoe@firm.example",
        "netdocuments:user:both@firm.example",
    }


def test_access_list_fails_closed_on_what_it_cannot_place() -> None:
    assert build_acl([{"principal": "Mystery Group", "rights": "N"}]).resolvable is False
    assert build_acl([{"principal": "UG-1", "rights": "VX"}]).resolvable is False
    skipped = build_acl([{"principal": "Mystery Group", "rights": "V"}])
    assert skipped.resolvable
    assert skipped.allow == frozenset()
    named = build_acl(
        [{"principal": "Mystery Group", "rights": "N"}], groups_by_name={"mystery group": "UG-M"}
    )
    assert named.deny == {"netdocuments:group:ug-m"}


def test_profile_access_string() -> None:
    assert profile_parts("Litigation|VES*Estate|V*U:john.smith@firm.com|N") == ([
        ("Litigation", "VES"),
        ("Estate", "V"),
        ("U:john.smith@firm.com", "N"),
    ], [])
    acl = build_acl(
        [{"principal": "UG-LIT", "rights": "VES"}],
        profile_access=["Litigation|VES*U:john.smith@firm.com|N*Estate|N"],
        groups_by_name={"litigation": "UG-LIT", "estate": "UG-EST"},
    )
    # Only the N rows are taken from profile-based security; its grants are not ours to add.
    assert acl.allow == {"netdocuments:group:ug-lit"}
    assert acl.deny == {"netdocuments:user:john.smith@firm.com", "netdocuments:group:ug-est"}


def test_a_group_name_several_groups_share_denies_them_all_and_grants_none() -> None:
    """Names are not unique in a cabinet: a `Name|N` row denied only the group listed last
    (the others' members kept the document) until 2026-12-06. A deny by such a name denies
    every group of that name; a grant by it admits none of them (which one is unknown)."""
    names: GroupsByName = {"litigation": ("UG-LIT1", "UG-LIT2"), "estate": "UG-EST"}
    acl = build_acl(
        [{"principal": "Litigation", "rights": "VES"}, {"principal": "Estate", "rights": "V"}],
        profile_access=["Litigation|N"],
        groups_by_name=names,
    )
    assert acl.resolvable
    assert acl.deny == {"netdocuments:group:ug-lit1", "netdocuments:group:ug-lit2"}
    assert acl.allow == {"netdocuments:group:ug-est"}
    assert build_acl([{"principal": "Litigation", "rights": "V"}], groups_by_name=names).allow == (
        frozenset()
    )


@pytest.mark.parametrize(
    ("name", "group_id", "other"),
    [
        ("lit@firm.com", "UG-LIT", "netdocuments:user:lit@firm.com"),  # an AD-style name
        ("UG-Partners", "UG-7", "netdocuments:group:ug-partners"),  # named like an id
    ],
)
def test_a_group_named_like_an_address_or_an_id_is_denied_by_its_name(
    name: str, group_id: str, other: str
) -> None:
    """Such a name was read as the user or id it looks like only: the group it names kept
    the matter's documents (a review). It stands for both readings: a deny denies both, a
    grant by it admits neither."""
    names: GroupsByName = {name.lower(): group_id}
    acl = build_acl([{"principal": group_id, "type": "group", "rights": "V"}],
                    profile_access=[f"{name}|N"], groups_by_name=names)  # fmt: skip
    assert acl.deny == {f"netdocuments:group:{group_id.lower()}", other}
    granted = build_acl([{"principal": name, "rights": "V"}], groups_by_name=names)
    assert granted.allow == frozenset()


def test_a_shared_group_name_in_a_matter_table_denies_every_group_of_that_name(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    fake = netdocuments_fake
    fake.add_group("UG-LIT1", "Litigation", [{"id": "JS1", "email": "john.smith@firm.com"}])
    fake.add_group("UG-LIT2", "Litigation", [{"id": "AM1", "email": "amir@firm.com"}])
    fake.add_document("1000-0000-0001", client="10025", matter="0008")
    fake.lookup[2] = [
        {"key": "0008", "parent": "10025", "description": "Falcon", "access": "Litigation|N"},
    ]
    acl = by_id(list(netdocuments().crawl_full(None)))["1000-0000-0001"].acl
    assert acl is not None and acl.resolvable
    assert acl.deny == {"netdocuments:group:ug-lit1", "netdocuments:group:ug-lit2"}


def test_profile_based_denies_over_http(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    fake = netdocuments_fake
    fake.add_group("UG-LIT", "Litigation", [{"id": "JS1", "email": "john.smith@firm.com"}])
    fake.add_group("UG-TAX", "Tax", [])
    fake.add_document("1000-0000-0001", client="10025", matter="0008")
    fake.add_document("1000-0000-0002", client="20001", matter="0008")  # same number, other client
    fake.add_document("1000-0000-0003", client="10025", matter="0007")
    fake.lookup[2] = [
        {
            "key": "0008",
            "parent": "10025",
            "description": "Falcon",
            "access": "Litigation|VES*U:john.smith@firm.com|N*Tax|N",
        },
        {"key": "0007", "parent": "10025", "description": "Open", "access": ""},
    ]
    docs = by_id(list(netdocuments().crawl_full(None)))
    walled = docs["1000-0000-0001"].acl
    assert walled is not None
    assert walled.resolvable
    assert walled.deny == {"netdocuments:user:john.smith@firm.com", "netdocuments:group:ug-tax"}
    other = docs["1000-0000-0002"].acl
    assert other is not None
    assert other.deny == frozenset()
    assert docs["1000-0000-0003"].acl is not None
    assert not docs["1000-0000-0003"].acl.deny
    lookup = fake.calls(r"^/v1/attributes/")
    assert len(lookup) == 4  # read once per crawl (twice over: the rows, then the empty page)
    assert {c.path for c in lookup} == {"/v1/attributes/CA-XY98ZW76/2"}


def test_unreadable_matter_table_fails_closed(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    netdocuments_fake.add_document("1000-0000-0001", client="10025", matter="0008")
    netdocuments_fake.add_document("1000-0000-0002", client="10025")  # no matter
    # fake.lookup has no table: 404
    docs = by_id(list(netdocuments().crawl_full(None)))
    assert docs["1000-0000-0001"].acl is not None
    assert docs["1000-0000-0001"].acl.resolvable is False
    assert docs["1000-0000-0002"].acl is not None
    assert docs["1000-0000-0002"].acl.resolvable


def test_unreadable_access_list_fails_closed(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    netdocuments_fake.add_document("1000-0000-0001", client="10025", matter="0007")
    netdocuments_fake.acl_missing.add("1000-0000-0001")
    doc = documents(list(netdocuments().crawl_full(None)))[0]
    assert doc.acl is not None
    assert doc.acl.resolvable is False


def test_a_profile_that_cannot_be_read_carries_rules_that_admit_nobody(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """Its /info answers 500: the listing names the document, its rules may have changed,
    so the index holds it visible to nobody until a sync reads it."""
    netdocuments_fake.add_document("1000-0000-0001", client="10025", matter="0007")
    netdocuments_fake.inject(r"/info$", 500, times=50)
    items = list(netdocuments().crawl_full(None))
    failed = [i for i in items if isinstance(i, DocumentFailure)]
    assert [f.external_id for f in failed] == ["1000-0000-0001"]
    assert failed[0].acl is not None and failed[0].acl.resolvable is False


def test_an_access_list_failing_with_5xx_fails_closed_not_as_last_read(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """A fuzz of the connectors: /acl answering 500 failed the document and the sync kept
    the copy indexed with the ACL read before (a deny added since ignored)."""
    netdocuments_fake.add_document("1000-0000-0001", client="10025", matter="0007")
    netdocuments_fake.inject(r"/acl$", 500, times=50)
    doc = documents(list(netdocuments().crawl_full(None)))[0]
    assert doc.acl is not None and doc.acl.resolvable is False
    assert "HTTP 500" in (doc.acl.note or "")


# --- client / matter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "matter", "expected"),
    [
        ("10025", "0007", ("10025", "0007")),
        (" 10025 ", "  00  07", ("10025", "00 07")),
        ("", "", ("", "")),
        ("   ", "\t", ("", "")),
        ("A/B?", "0007", ("A/B?", "0007")),
        (None, None, (None, None)),
    ],
)
def test_client_matter_from_workspace_attributes(
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    client: str | None,
    matter: str | None,
    expected: tuple[str | None, str | None],
) -> None:
    netdocuments_fake.add_document(
        "1000-0000-0001", client=client, matter=matter, custom={1003: "court"}
    )
    doc = documents(list(netdocuments().crawl_full(None)))[0]
    assert (doc.client_id, doc.matter_id) == expected
    assert (doc.client_raw, doc.matter_raw) == (client, matter)


def test_workspace_attribute_numbers_come_from_the_cabinet(sleeps: Sleeps) -> None:
    fake = FakeNetDocuments()
    fake.cabinets[0]["wsOrgAttrNum"] = 3
    fake.cabinets[0]["wsAttrNum"] = 4
    fake.add_document("1000-0000-0001", custom={1001: "x", 1002: "y", 1003: "10025", 1004: "0007"})
    with fake.running(), _connector(fake, sleeps) as nd:
        doc = documents(list(nd.crawl_full(None)))[0]
    assert (doc.client_id, doc.matter_id) == ("10025", "0007")


def test_unknown_cabinet_is_a_configuration_error(netdocuments: NetDocumentsFactory) -> None:
    with pytest.raises(ConnectorError, match="NG-NOPE"):
        netdocuments({"netdocuments_cabinets": "NG-NOPE"}).cabinets()


# --- deletions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "expected"),
    [("404", "deleted"), ("410", "deleted"), ("403", "forbidden"), ("-", "unplaced"),
     ("filed", "present"), ("moved", "out_of_scope")],
)
def test_point_check(
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
    action: str,
    expected: str,
) -> None:
    netdocuments_fake.add_document("1000-0000-0001")
    if action in ("404", "410"):
        netdocuments_fake.gone["1000-0000-0001"] = int(action)
    elif action == "403":
        netdocuments_fake.revoked.add("1000-0000-0001")
    elif action in ("filed", "moved"):
        netdocuments_fake.info_locations = True  # /info says where the document is filed
        if action == "moved":
            netdocuments_fake.move("1000-0000-0001", "NG-ARCHIVE1")
    scoped = netdocuments({"netdocuments_cabinets": "NG-AB12CD34"})
    assert scoped.check("1000-0000-0001") == expected


def test_document_deleted_between_search_and_fetch(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    ids = _seed(netdocuments_fake, 3)
    netdocuments_fake.inject(rf"^/v1/Document/{ids[1]}/info$", 410)
    netdocuments_fake.inject(rf"^/v1/Document/{ids[2]}/info$", 403)
    items = list(netdocuments().crawl_full(None))
    failures = {f.external_id: f for f in items if isinstance(f, DocumentFailure)}
    assert failures[ids[1]].gone
    assert failures[ids[2]].revoked
    assert sorted(by_id(items)) == [ids[0]]


def test_download_is_the_official_version(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    netdocuments_fake.add_document(
        "1000-0000-0001",
        extension="pdf",
        content=b"%PDF-official",
        filename="Motion to dismiss.pdf",
        official_version=3,
    )
    doc = documents(list(netdocuments().crawl_full(None)))[0]
    assert doc.content == b"%PDF-official"
    assert doc.mime_type == "application/pdf"
    assert doc.version == "3"
    assert doc.metadata["filename"] == "Motion to dismiss.pdf"
    download = netdocuments_fake.calls(r"^/v1/Document/1000-0000-0001$")[0]
    assert download.method == "GET"


def test_groups(netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory) -> None:
    netdocuments_fake.add_group(
        "UG-LIT", "Litigation", [{"id": "JS1", "email": "John.Smith@firm.com"}, {"id": "AK2"}]
    )
    groups: dict[str, object] = {g.group_id: g.members for g in netdocuments().groups()}
    assert groups == {
        "ug-lit": {
            "netdocuments:user:john.smith@firm.com",
            "netdocuments:user:js1",
            "netdocuments:user:ak2",
        }
    }


def test_429_with_retry_after_during_search(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory, sleeps: Sleeps
) -> None:
    _seed(netdocuments_fake, 3)
    netdocuments_fake.inject(r"^/v2/Search$", 429, headers={"Retry-After": "4"})
    netdocuments_fake.inject(r"/info$", 503)
    assert len(documents(list(netdocuments().crawl_full(None)))) == 3
    assert 4.0 in sleeps


def test_never_writes_nor_gets_or_creates(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    _seed(netdocuments_fake, 3)
    netdocuments_fake.add_group("UG-LIT", "Litigation", [{"id": "A"}])
    connector = netdocuments()
    items = list(connector.crawl_full(None))
    list(connector.crawl_delta(cursor_text(items[-1])))
    list(connector.groups())
    list(connector.list_ids())
    connector.check("4824-5093-9170")
    with pytest.raises(RequestNotAllowedError):
        connector.client.http.get_json(
            f"/v1/Workspace/{CABINET}/10025/0007/info", auth=connector.client.auth
        )
    assert netdocuments_fake.writes() == []
    assert not netdocuments_fake.calls(r"^/v1/Workspace/")
    assert {r.path for r in netdocuments_fake.requests if r.method != "GET"} == {"/v1/OAuth"}


# --- issue 12: paging caps, profile-based security, per-client matter numbers -------------------


@pytest.mark.parametrize(("shape", "paging"), [("A", "skip"), ("B", "skip"), ("A", "skiptoken")])
def test_search_capped_below_top_reads_every_page(
    sleeps: Sleeps, shape: str, paging: str
) -> None:
    """A page shorter than ``top`` without a skiptoken does not end the search."""
    fake = FakeNetDocuments(shape=shape, paging=paging)
    ids = _seed(fake, 9)
    fake.top_cap = 4
    with fake.running(), _connector(fake, sleeps, page_size=500) as nd:
        items = list(nd.crawl_full(None))
        listed = set(nd.list_ids())
    assert sorted(by_id(items)) == sorted(ids)
    assert listed == set(ids)
    assert not [i for i in items if isinstance(i, DocumentFailure)]
    assert nd.listings["NG-AB12CD34"]["complete"] is True


@pytest.mark.parametrize("mode", ["low", "high"])
def test_search_total_that_does_not_reconcile_makes_the_crawl_incomplete(
    sleeps: Sleeps, mode: str
) -> None:
    fake = FakeNetDocuments(shape="A", paging="skip")
    ids = _seed(fake, 5)
    fake.total_mode = mode
    with fake.running(), _connector(fake, sleeps) as nd:
        items = list(nd.crawl_full(None))
    assert sorted(by_id(items)) == sorted(ids)  # a low total hides nothing
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    assert failures and "not complete" in failures[0].reason
    assert nd.listings["NG-AB12CD34"]["complete"] is False


def test_lookup_table_capped_below_500_keeps_every_deny(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """The matter table is read past a page shorter than 500: the ``|N`` rows on later pages
    still deny, so a screened person does not see the matter (no fail open)."""
    fake = netdocuments_fake
    fake.lookup_top_cap = 3
    fake.lookup[2] = [{"key": f"{n:04d}", "parent": "10025", "access": ""} for n in range(1, 8)]
    fake.lookup[2].append(
        {"key": "0099", "parent": "10025", "access": "U:screened@firm.example|N"})
    fake.add_document("1000-0000-0001", client="10025", matter="0099")
    doc = documents(list(netdocuments().crawl_full(None)))[0]
    assert doc.acl is not None
    assert doc.acl.resolvable
    assert "netdocuments:user:screened@firm.example" in doc.acl.deny


def test_lookup_table_that_cannot_be_read_completely_fails_closed(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    fake = netdocuments_fake
    fake.lookup[2] = [{"key": "0001", "parent": "10025", "access": ""},
                      {"key": "0099", "parent": "10025", "access": "U:x@firm.example|N"}]
    fake.inject(r"^/v1/attributes/", 500, times=1000)  # the table never comes
    fake.add_document("1000-0000-0001", client="10025", matter="0099")
    fake.add_document("1000-0000-0002", client="10025")  # no matter: no profile security
    connector = netdocuments({"connector_max_attempts": 1})
    docs = by_id(list(connector.crawl_full(None)))
    assert docs["1000-0000-0001"].acl is not None
    assert docs["1000-0000-0001"].acl.resolvable is False
    assert docs["1000-0000-0002"].acl is not None
    assert docs["1000-0000-0002"].acl.resolvable


def test_profile_security_on_the_client_attribute(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """Profile security can be based on the client attribute too: the ``|N`` rows of every
    configured attribute deny, and their grants are never taken as grants."""
    fake = netdocuments_fake
    fake.lookup[1] = [{"key": "10025", "access": "Litigation|VES*U:jan@firm.example|N"}]
    fake.lookup[2] = [{"key": "0007", "parent": "10025", "access": "U:piet@firm.example|N"}]
    fake.add_document("1000-0000-0001", client="10025", matter="0007")
    only_matter = documents(list(netdocuments().crawl_full(None)))[0].acl
    assert only_matter is not None
    assert only_matter.deny == {"netdocuments:user:piet@firm.example"}
    both = netdocuments({"netdocuments_profile_security": "client,matter"})
    acl = documents(list(both.crawl_full(None)))[0].acl
    assert acl is not None
    # deny beats allow: the client row's grant to Litigation is never taken as a grant
    assert acl.deny == {"netdocuments:user:jan@firm.example",
                        "netdocuments:user:piet@firm.example"}
    assert "netdocuments:group:litigation" not in acl.allow
    client_only = netdocuments({"netdocuments_profile_security": "1001"})
    acl = documents(list(client_only.crawl_full(None)))[0].acl
    assert acl is not None
    assert acl.deny == {"netdocuments:user:jan@firm.example"}
    with pytest.raises(ConnectorError, match="PROFILE_SECURITY"):
        netdocuments({"netdocuments_profile_security": "court"})


def test_matter_numbers_qualified_by_client(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """Matter numbers repeat across clients: with ``{client}-{matter}`` each client's
    documents get their own matter id, and a matter without a client stays "" (never a bare
    number that could name another client's matter)."""
    fake = netdocuments_fake
    fake.add_document("1000-0000-0001", client="10025", matter="0007")
    fake.add_document("1000-0000-0002", client="20001", matter="0007")
    fake.add_document("1000-0000-0003", matter="0007")  # no client: not resolvable
    plain = by_id(list(netdocuments().crawl_full(None)))
    assert plain["1000-0000-0001"].matter_id == plain["1000-0000-0002"].matter_id == "0007"
    qualified = by_id(list(netdocuments(
        {"netdocuments_matter_id_format": "{client}-{matter}"}).crawl_full(None)))
    assert qualified["1000-0000-0001"].matter_id == "10025-0007"
    assert qualified["1000-0000-0002"].matter_id == "20001-0007"
    assert qualified["1000-0000-0003"].matter_id == ""
    assert qualified["1000-0000-0002"].matter_raw == "0007"
    with pytest.raises(ConnectorError, match="MATTER_ID_FORMAT"):
        netdocuments({"netdocuments_matter_id_format": "{client}"})
