"""A NetDocuments delta sees rules, re-profiles, deletions and moves that keep the modified date.

Invariant 9 wants them on the next sync; NetDocuments need not move ``Modified`` when a
``U:user|N`` row is added to a matter's lookup row (the documented ethical-wall recipe,
docs/dms-apis.md §2.3), when a document's access list changes, or when it is re-profiled. After
its change listing a delta lists every cabinet without content, reads the access list of each
document the index holds, and reads in full only those the index holds under other rules or
another matter (connectors.security_pass). These run the fake NetDocuments through run_sync into
the REAL ingest pipeline and ask the search API who finds a document; nothing at the source
moves a modified date.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from connectors.base import Placed, SourceDocument
from tests.connectors.conftest import NetDocumentsFactory
from tests.connectors.nd_tenant import (
    DOWNLOADS,
    FALCON,
    LEVERING,
    MATTER_0008,
    NOTES,
    TAX,
    Syncs,
    who_finds,
)
from tests.fakes.netdocuments import FakeNetDocuments
from tests.helpers import Firm, retag


@pytest.mark.parametrize("shape", ["A", "B"])
def test_the_pass_places_each_document_as_the_full_crawl_reads_it(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory, shape: str
) -> None:
    """Without the pipeline, under a qualified matter format, profile security on client and
    matter, both search shapes and an access list that cannot be read: the pass's place and
    rules of every document equal the full crawl's, so it reads none of them again."""
    fake = netdocuments_fake
    fake.shape = shape
    fake.add_group("UG-LIT", "Litigation", [{"id": "JS1", "email": "john.smith@firm.com"}])
    fake.add_document("1000-0000-0001", client="10025", matter="0008")
    fake.add_document("1000-0000-0002", client="20001", matter="0008",
                      acl=[{"principal": "Litigation", "rights": "V"},
                           {"principal": "U:amir@firm.com", "rights": "N"}])  # fmt: skip
    fake.add_document("1000-0000-0003", client=" 10025 ", matter="0007 ")  # raw values kept
    fake.add_document("1000-0000-0004", client="10025")  # no matter
    fake.add_document("1000-0000-0005", client="10025", matter="0007")
    fake.acl_missing.add("1000-0000-0005")  # visible to nobody, in both
    fake.lookup[1] = [{"key": "20001", "access": "U:carol@firm.com|N"}]
    fake.lookup[2] = [{"key": "0008", "parent": "10025", "access": "U:john.smith@firm.com|N"},
                      {"key": "0008", "parent": "20001", "access": "U:tax@firm.com|N*Litigation|VES"},
                      {"key": "0007", "parent": "10025", "access": "Litigation|VES"}]  # fmt: skip
    settings = {"netdocuments_matter_id_format": "{client}-{matter}",
                "netdocuments_profile_security": "client,matter"}  # fmt: skip
    docs = [d for d in netdocuments(settings).crawl_full(None) if isinstance(d, SourceDocument)]
    assert len(docs) == 5
    connector = netdocuments(settings)
    connector.version_hints = {d.external_id: d.version for d in docs}
    seen: list[Placed] = []

    def stale(placed: list[Placed]) -> set[str]:
        seen.extend(placed)
        return set()

    assert list(connector.security_pass(stale) or ["no pass"]) == []
    assert {p.external_id: p for p in seen} == {
        d.external_id: Placed(d.external_id, d.version, d.client_id, d.matter_id, d.acl,
                              d.client_raw, d.matter_raw, d.modified_at)
        for d in docs
    }
    assert len(fake.calls(DOWNLOADS)) == 5  # the crawl's, none in the pass


def test_each_pass_reads_the_lookup_tables_again(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory
) -> None:
    """A connector kept between runs (the service builds one per run) still sees a wall
    added to a matter's row since its last pass, and unheld documents are not asked about."""
    fake = netdocuments_fake
    fake.add_document("1000-0000-0001", client="10025", matter="0008")
    fake.add_document("1000-0000-0002", client="10025", matter="0008")
    fake.lookup[2] = [{"key": "0008", "parent": "10025", "access": "Litigation|VES"}]
    connector = netdocuments()
    connector.version_hints = {"1000-0000-0001": "1"}
    denies: list[frozenset[str]] = []

    def stale(placed: list[Placed]) -> set[str]:
        denies.extend(p.acl.deny for p in placed if p.acl is not None)
        assert [p.external_id for p in placed] == ["1000-0000-0001"]
        return set()

    assert list(connector.security_pass(stale) or ["no pass"]) == []
    fake.lookup[2][0]["access"] += "*U:john.smith@firm.com|N"
    assert list(connector.security_pass(stale) or ["no pass"]) == []
    assert denies == [frozenset(), frozenset({"netdocuments:user:john.smith@firm.com"})]
    assert [r.path for r in fake.calls(r"/acl$")] == ["/v1/Document/1000-0000-0001/acl"] * 2


def test_a_quiet_delta_reads_every_held_access_list_and_downloads_nothing(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """What the pass compares is what the full crawl stored: group grants by id and by name,
    user grants and denies, ``|N`` rows (of this client's matter only), three pages. The
    folder is not asked about; nothing is downloaded or read through /info."""
    firm, sync = tenant
    fake = netdocuments_fake
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}
    assert who_finds(firm, TAX, "belastingaanslag") == {"carol@firm.nl"}
    before = len(fake.requests)
    quiet = sync()
    assert quiet["security_pass"] == {"ran": True, "listed": 4, "stale": 0, "narrowed": 0,
                                      "read_again": 0, "complete": True, "hidden": 0}
    asked = fake.requests[before:]
    paths = [r.path for r in asked]
    assert sorted(p for p in paths if p.startswith("/v1/Document/")) == [
        f"/v1/Document/{d}/acl" for d in (FALCON, LEVERING, TAX, NOTES)
    ]
    assert not [r for r in asked if r.path != "/v1/OAuth" and r.method != "GET"]
    again = sync()  # and the next quiet delta alike: nothing looks stale forever
    assert again["security_pass"]["stale"] == 0
    assert not [r for r in fake.requests[before:] if r.path.endswith("/info")
                and r.path.startswith("/v1/Document/")]  # fmt: skip
    assert len(fake.calls(DOWNLOADS)) == 4  # the full crawl's, none since


def test_rows_without_custom_attributes_are_placed_through_info_not_downloaded(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """A tenant whose search rows carry no custom attributes: the pass places each held
    document through /info (as the full read does) instead of judging it moved and
    downloading it on every delta; a re-profile still reaches the index."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.search_custom = False
    downloads = len(fake.calls(DOWNLOADS))
    quiet = sync()
    assert quiet["security_pass"]["stale"] == 0, quiet["security_pass"]
    assert len(fake.calls(DOWNLOADS)) == downloads
    fake.docs[FALCON].custom[1002] = "0009"  # behind amir's wall, modified date unchanged
    assert sync()["security_pass"]["read_again"] == 1
    retag(firm.client)
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl"}


def test_a_matter_no_access_row_added_or_lifted_reaches_the_next_delta(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """The documented wall recipe: ``U:user|N`` on the matter's lookup row. The delta
    narrows the rules of the two documents of matter 0008, and only those, without reading
    their content; lifting the wall widens them, which waits for a read in full."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[2][0]["access"] = "Litigation|VES*U:john.smith@firm.com|N"
    downloads = len(fake.calls(DOWNLOADS))
    walled = sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}
    assert (walled["security_pass"]["stale"], walled["security_pass"]["narrowed"],
            walled["security_pass"]["read_again"]) == (2, 2, 0)  # fmt: skip
    assert len(fake.calls(DOWNLOADS)) == downloads
    assert who_finds(firm, LEVERING, "levering") == {"amir@firm.nl", "carol@firm.nl"}
    assert who_finds(firm, NOTES, "zitting") == {"amir@firm.nl"}  # 0007's row, untouched

    fake.lookup[2][0] = dict(MATTER_0008)  # the wall lifted
    lifted = sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}
    assert lifted["security_pass"]["read_again"] == 2
    assert fake.writes() == []


def test_a_changed_access_list_and_a_reprofile_reach_the_next_delta(
    client: TestClient, tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    falcon = fake.docs[FALCON]
    falcon.acl = [{"principal": "UG-LIT", "rights": "VES"},
                  {"principal": "U:amir@firm.com", "rights": "N"},
                  {"principal": "U:carol@firm.com", "rights": "V"}]  # fmt: skip
    changed = sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "carol@firm.nl"}
    assert changed["security_pass"]["read_again"] == 1

    falcon.acl = [{"principal": "UG-LIT", "rights": "VES"}]
    falcon.custom[1002] = "0009"  # re-profiled behind amir's wall
    moved = sync()
    retag(client)  # a document filed under a walled matter waits for its re-tag (narrower)
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl"}
    assert firm.matters_seen("john@firm.nl", "dagvaarding", mode="sparse") == {"0009"}
    assert moved["security_pass"]["read_again"] == 1
    assert sync()["security_pass"]["stale"] == 0  # settled


def test_a_deleted_or_moved_document_leaves_on_the_next_delta(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """Deleted Items leave search, and so does a document moved to a cabinet outside the
    scope: the pass's whole listing misses them, and they are hidden at once (a full
    crawl's sweep deletes them, under its hold on large removals)."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.gone[FALCON] = 404
    report = sync()
    assert report["security_pass"]["hidden"] == 1 and report["deleted"] == []
    assert who_finds(firm, FALCON, "dagvaarding") == set()
    assert who_finds(firm, LEVERING, "levering") == {"john@firm.nl", "amir@firm.nl",
                                                      "carol@firm.nl"}  # fmt: skip

    fake.move(TAX, "NG-ARCHIVE1")
    report = sync()
    assert report["security_pass"]["hidden"] == 1
    assert who_finds(firm, TAX, "belastingaanslag") == set()
    assert who_finds(firm, NOTES, "zitting") == {"amir@firm.nl"}


@pytest.mark.parametrize("fault", ["stall", "total"])
def test_a_pass_listing_that_cannot_be_completed_fails_the_delta_and_deletes_nothing(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments, fault: str
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.gone[FALCON] = 404
    if fault == "stall":
        fake.repeat_pages = True  # the second page repeats the first: the listing stalls
    else:
        fake.total_mode = "high"  # TotalFound says three more than the listing gives
    report = sync(ok=False)
    assert report["failed"] is not None, report
    assert report["security_pass"]["complete"] is False
    assert report["point_checks"]["deleted"] == 0
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}
