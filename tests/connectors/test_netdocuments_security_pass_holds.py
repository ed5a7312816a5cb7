"""The NetDocuments security pass under faults and quirks an independent check tried
(2026-12-06): walls on the client attribute, unreadable tables, access lists and group
names, re-profiles, deletions and moves, several cabinets, paging shapes, the interval.

Fake knobs used (tests/fakes/netdocuments.py): ``lookup_fault``,
``acl_fault``, ``download_fault``, ``search_fault``, ``deleted_items``, ``groups_status``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.sync import run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, NetDocumentsFactory
from tests.connectors.nd_tenant import (
    DOWNLOADS,
    FALCON,
    LEVERING,
    NOTES,
    PEOPLE,
    TAX,
    Syncs,
    who_finds,
)
from tests.fakes.netdocuments import CABINET, FakeNetDocuments
from tests.helpers import Firm, retag

EVERYONE = set(PEOPLE)
CLIENT_SECURITY: dict[str, Any] = {"netdocuments_profile_security": "client,matter"}


def test_client_profile_security_wall_added_lifted_and_unreadable(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[1] = [{"key": "10025", "access": "Litigation|VES"},
                      {"key": "20001", "access": "U:carol@firm.com|N"}]  # fmt: skip
    quiet = sync(**CLIENT_SECURITY)
    assert quiet["security_pass"]["stale"] == 0
    fake.lookup[1][0]["access"] += "*U:carol@firm.com|N"  # a wall on the whole client
    walled = sync(**CLIENT_SECURITY)
    # a deny added narrows: applied without the content
    assert (walled["security_pass"]["narrowed"], walled["security_pass"]["read_again"]) == (4, 0)
    assert who_finds(firm, LEVERING, "levering") == {"john@firm.nl", "amir@firm.nl"}
    assert who_finds(firm, TAX, "belastingaanslag") == set()
    fake.lookup[1][0]["access"] = "Litigation|VES"
    sync(**CLIENT_SECURITY)
    assert who_finds(firm, LEVERING, "levering") == EVERYONE
    # the client table cannot be read (500, or a page that stalls): nobody, not the old rules
    for fault in (500, {"rows": [{"key": "10025", "access": "Litigation|VES"}]}):
        fake.lookup_top_cap = 1
        fake.lookup_fault = {(1, 1): fault}
        report = sync(**CLIENT_SECURITY)
        assert report["security_pass"]["complete"] is True
        assert who_finds(firm, LEVERING, "levering") == set(), fault
        fake.lookup_fault = {}
        sync(**CLIENT_SECURITY)
        assert who_finds(firm, LEVERING, "levering") == EVERYONE


def test_matter_table_unreadable_during_the_pass_hides_its_documents(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup_fault[(2, 0)] = 503
    report = sync()
    assert report["security_pass"]["narrowed"] == 4  # nobody narrows: no download
    for doc, word in ((FALCON, "dagvaarding"), (LEVERING, "levering"), (NOTES, "zitting")):
        assert who_finds(firm, doc, word) == set()
    fake.lookup_fault.clear()
    sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}


@pytest.mark.parametrize("status", [404, 500])
def test_an_access_list_unreadable_for_one_document_hides_that_one(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments, status: int
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.acl_fault[FALCON] = status
    report = sync()
    assert report["security_pass"]["narrowed"] == 1
    assert who_finds(firm, FALCON, "dagvaarding") == set()
    assert who_finds(firm, LEVERING, "levering") == EVERYONE
    del fake.acl_fault[FALCON]
    sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}


@pytest.mark.parametrize(
    ("client_value", "matter_value", "add_client"),
    [("10025", "0099", False), ("10025", "", False), ("10025", None, False),
     ("20001", "0008", False), ("20001", "0008", True)],
)  # fmt: skip
@pytest.mark.parametrize("download_fails", [False, True])
def test_a_reprofile_to_a_matter_the_matrix_cannot_place_leaves_the_old_matter(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments,
    client_value: str, matter_value: str | None, add_client: bool, download_fails: bool,
) -> None:  # fmt: skip
    """Unknown matter, empty matter, no matter, another client's matter with the same number
    (default "{matter}" format; that client unknown, or known). With the download failing
    during the re-read too."""
    firm, sync = tenant
    fake = netdocuments_fake
    if add_client:
        firm.client_("20001", "Other client")
    doc = fake.docs[FALCON]
    doc.custom[1001] = client_value
    if matter_value is None:
        del doc.custom[1002]
    else:
        doc.custom[1002] = matter_value
    if download_fails:
        fake.download_fault[FALCON] = 500
    sync(ok=True)
    assert who_finds(firm, FALCON, "dagvaarding") == set()


def test_qualified_matter_ids_follow_a_reprofile_to_another_client(
    client: TestClient, auth: Tokens, db: DbFixture, netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
) -> None:  # fmt: skip
    """EWALL_NETDOCUMENTS_MATTER_ID_FORMAT="{client}-{matter}": re-profiled from 10025/0008
    to 20001/0008 (same number, behind john's wall) reaches the index on the next delta."""
    fake = netdocuments_fake
    firm = Firm(client, auth)
    for person, email in PEOPLE.items():
        firm.person(person, aliases=[f"netdocuments:user:{email}"])
    firm.client_("10025", "Acme")
    firm.client_("20001", "Other")
    firm.matter("10025-0008", "10025")
    firm.matter("20001-0008", "20001")
    firm.wall(kind="exclusionary", protects={"matters": ["20001-0008"]}, screened=["john@firm.nl"])
    fake.add_document(FALCON, client="10025", matter="0008", extension="txt",
                      acl=[{"principal": "U:john.smith@firm.com", "rights": "V"},
                           {"principal": "U:amir@firm.com", "rights": "V"}],
                      content=b"Processtuk over de dagvaarding.")  # fmt: skip
    fake.lookup[2] = [{"key": "0008", "parent": "10025", "access": "Litigation|VES"},
                      {"key": "0008", "parent": "20001", "access": "U:amir@firm.com|N"}]  # fmt: skip
    fmt: dict[str, Any] = {"netdocuments_matter_id_format": "{client}-{matter}"}
    sync = Syncs(client, db, fake, netdocuments)
    sync("full", **fmt)
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}
    fake.docs[FALCON].custom[1001] = "20001"
    report = sync(**fmt)
    retag(client)
    assert report["security_pass"]["read_again"] == 1
    assert who_finds(firm, FALCON, "dagvaarding") == set()  # john walled, amir |N


def test_deleted_items_are_hidden_by_the_pass_and_deleted_by_the_sweep(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.deleted_items.add(FALCON)
    assert sync()["security_pass"]["hidden"] == 1
    assert who_finds(firm, FALCON, "dagvaarding") == set()
    full = sync("full")  # 1 of 4: over EWALL_SWEEP_MAX_FRACTION, so held (point-checked)
    assert full["sweep"]["held"]["ids"] == [FALCON], full["sweep"]


def test_moves_between_cabinets_in_and_out_of_scope(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    both: dict[str, Any] = {"netdocuments_cabinets": f"{CABINET},NG-SECOND"}
    fake.move(NOTES, "NG-SECOND")
    sync("full", **both)  # a new scope: its own state
    fake.move(LEVERING, "NG-SECOND")
    downloads = len(fake.calls(DOWNLOADS))
    report = sync(**both)
    assert report["security_pass"]["hidden"] == 0
    assert len(fake.calls(DOWNLOADS)) == downloads  # same place, same rules: not read again
    assert who_finds(firm, LEVERING, "levering") == EVERYONE
    fake.move(LEVERING, "NG-ELSEWHERE")
    assert sync(**both)["security_pass"]["hidden"] == 1
    assert who_finds(firm, LEVERING, "levering") == set()


@pytest.mark.parametrize("failing", [CABINET, "NG-SECOND"])
@pytest.mark.parametrize("fault", ["repeat", 500])
def test_one_cabinet_failing_its_pass_listing_hides_nothing(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments, failing: str,
    fault: Any,
) -> None:  # fmt: skip
    firm, sync = tenant
    fake = netdocuments_fake
    both: dict[str, Any] = {"netdocuments_cabinets": f"{CABINET},NG-SECOND"}
    fake.move(LEVERING, "NG-SECOND")
    fake.move(NOTES, "NG-SECOND")
    sync("full", **both)
    fake.top_cap = 1
    fake.gone[FALCON] = 404
    fake.lookup[2][0]["access"] = "Litigation|VES*U:amir@firm.com|N"  # LEVERING's matter 0008
    fake.search_fault[failing] = fault
    report = sync(ok=False, **both)
    assert report["failed"] is not None
    assert report.get("security_pass", {}).get("hidden", 0) == 0
    assert report["deleted"] == []
    # documents of the cabinet that was listed whole got their new rules (when it ran first)
    if failing == "NG-SECOND" and fault == "repeat":
        assert who_finds(firm, TAX, "belastingaanslag") == {"carol@firm.nl"}


@pytest.mark.parametrize(
    ("shape", "paging", "token_key", "top_cap", "total_mode"),
    [("A", "skiptoken", "skiptoken", None, "exact"), ("A", "skiptoken", "SkipToken", 1, "exact"),
     ("A", "link", "skiptoken", 2, "exact"), ("A", "skip", "skiptoken", 1, "absent"),
     ("B", "skip", "skiptoken", 1, "absent"), ("B", "skiptoken", "next", 2, "absent")],
)  # fmt: skip
def test_paging_quirks_quiet_wall_and_deletion(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments,
    shape: str, paging: str, token_key: str, top_cap: int | None, total_mode: str,
) -> None:  # fmt: skip
    firm, sync = tenant
    fake = netdocuments_fake
    fake.shape, fake.paging, fake.token_key = shape, paging, token_key
    fake.top_cap, fake.total_mode = top_cap, total_mode
    downloads = len(fake.calls(DOWNLOADS))
    quiet = sync()
    assert quiet["security_pass"] == {"ran": True, "listed": 4, "stale": 0, "narrowed": 0,
                                      "read_again": 0, "complete": True, "hidden": 0}
    assert len(fake.calls(DOWNLOADS)) == downloads
    fake.lookup[2][0]["access"] = "Litigation|VES*U:john.smith@firm.com|N"
    fake.gone[NOTES] = 404
    report = sync()
    assert report["security_pass"]["narrowed"] == 2 and report["security_pass"]["hidden"] == 1
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}
    assert who_finds(firm, NOTES, "zitting") == set()


def test_a_failed_pass_does_not_start_the_interval(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake

    def delta() -> dict[str, Any]:
        connector = sync.netdocuments({"netdocuments_cabinets": CABINET})
        report = run_sync("netdocuments", connector, sync.pipeline, sync.store, mode="delta",
                          started_by="svc", security_pass_every_s=3600)  # fmt: skip
        return dict(report["sync"])

    fake.repeat_pages = True
    assert delta()["failed"] is not None
    assert sync.store.load("netdocuments", f"cabinets={CABINET}").last_security_pass_at is None
    fake.repeat_pages = False
    fake.lookup[2][0]["access"] = "Litigation|VES*U:john.smith@firm.com|N"
    assert delta()["security_pass"]["ran"] is True
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}


@pytest.mark.parametrize("status", [403, 404, 500])
def test_group_names_refused_during_the_pass_narrow(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments, status: int
) -> None:
    """N21 refused: a grant by name is skipped (NOTES: nobody), a ``Name|N`` row makes its
    documents unresolvable; grants by id stand."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[2][0]["access"] = "Litigation|VES*Litigation|N"  # 0008: the group by name
    fake.groups_status = status
    sync()
    assert who_finds(firm, NOTES, "zitting") == set()
    assert who_finds(firm, FALCON, "dagvaarding") == set()
    assert who_finds(firm, TAX, "belastingaanslag") == {"carol@firm.nl"}


def test_a_renamed_group_narrows(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[2][1]["access"] = "Litigation|VES*Litigation|N"  # 0007 walls the group by name
    sync()
    assert who_finds(firm, TAX, "belastingaanslag") == {"carol@firm.nl"}
    fake.groups[CABINET][0]["Name"] = "Procespraktijk"  # renamed; the row still says Litigation
    sync()
    assert who_finds(firm, TAX, "belastingaanslag") == set()  # deny unresolvable: nobody
    assert who_finds(firm, NOTES, "zitting") == set()


def test_an_access_list_that_changes_between_the_pass_and_the_re_read(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """The pass reads a deny of amir (stale, and only narrowing: applied at once); the list
    then changes again (a deny of john instead): the next pass reads that in full."""
    firm, sync = tenant
    fake = netdocuments_fake
    lit = {"principal": "UG-LIT", "rights": "VES"}
    fake.docs[FALCON].acl = [lit, {"principal": "U:amir@firm.com", "rights": "N"}]
    served = {"n": 0}

    def change(fake: Any, doc_id: str) -> None:
        if doc_id == FALCON:
            served["n"] += 1
            if served["n"] == 1:
                fake.docs[FALCON].acl = [lit, {"principal": "U:john.smith@firm.com", "rights": "N"}]

    fake.on_acl = change
    assert sync()["security_pass"]["narrowed"] == 1
    assert served["n"] == 1
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl"}
    assert sync()["security_pass"]["read_again"] == 1  # amir admitted again: a widening
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}
    assert sync()["security_pass"]["stale"] == 0
