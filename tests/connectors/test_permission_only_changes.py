"""Permission changes that leave a document's edit date alone still reach the index.

Security changes do not reliably bump `edit_date` (docs/dms-apis.md §1.4), so the periodic
re-crawl must carry them. This runs the fake iManage through run_sync into the REAL ingest pipeline
and asks the search API who finds the document (no recording double re-implementing the
ACL rules): after each change at the source, with the same edit date, version and content,
the next sync narrows or widens access exactly as the source now says.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.fakes.imanage import FakeIManage
from tests.helpers import Firm, retag

PEOPLE = ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl")


def _who_finds(firm: Firm) -> set[str]:
    found = set()
    for person in PEOPLE:
        results = firm.search(person, "octrooiaanvraag", k=10, mode="sparse")["results"]
        if any(r["document"]["external_id"] == "ACTIVE!1" for r in results):
            found.add(person)
    return found


def test_permission_only_changes_reach_the_index_on_the_next_sync(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    firm = Firm(client, auth)
    for person in PEOPLE:
        firm.person(person, aliases=[f"imanage:user:{person.split('@')[0]}"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    imanage_fake.add_group("LITIGATION", ["ALICE", "BOB"])
    doc_id = imanage_fake.add_document(
        "ACTIVE",
        1,
        custom1="C-1",
        custom2="M-1",
        default_security="private",
        security={
            "default_security": "private",
            "acl": [{"id": "LITIGATION", "type": "group", "access_level": "read"}],
        },
        filename="memo.txt",
        content=b"Vertrouwelijk memo over de octrooiaanvraag van Acme.",
    )
    doc = imanage_fake.docs[doc_id]
    edit_date = doc.profile["edit_date"]
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)

    def sync() -> None:
        report = run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
        assert report["sync"]["complete"] is True, report
        assert doc.profile["edit_date"] == edit_date  # nothing at the source bumped it

    sync()
    assert _who_finds(firm) == {"alice@firm.nl", "bob@firm.nl"}

    # a deny for bob, edit date untouched: narrower on the next sync
    doc.security["acl"].append({"id": "BOB", "type": "user", "access_level": "no_access"})
    sync()
    assert _who_finds(firm) == {"alice@firm.nl"}

    # the document made public (the deny stays): wider, but deny still beats it
    doc.security["default_security"] = "public"
    doc.profile["default_security"] = "public"
    sync()
    assert _who_finds(firm) == {"alice@firm.nl", "carol@firm.nl"}

    # back to private, bob's deny lifted, alice leaves the group: only bob
    doc.security["default_security"] = "private"
    doc.profile["default_security"] = "private"
    doc.security["acl"] = [{"id": "LITIGATION", "type": "group", "access_level": "read"}]
    imanage_fake.groups["LITIGATION"]["members"] = ["BOB"]
    sync()
    assert _who_finds(firm) == {"bob@firm.nl"}
    assert imanage_fake.writes() == []


def test_a_delta_sees_rules_moves_and_deletions_that_keep_the_edit_date(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Invariant 9, "on the next sync": with the Sync API a delta lists every profile and
    trustee without content (connectors.security_pass) and reads again only what the index
    holds under other rules or another matter; a document gone from that whole listing is
    hidden. Nothing at the source moves the edit date."""
    imanage_fake.sync_api = True
    firm = Firm(client, auth)
    for person in PEOPLE:
        firm.person(person, aliases=[f"imanage:user:{person.split('@')[0]}"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    firm.matter("M-2", "C-1")
    firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=["carol@firm.nl"])
    imanage_fake.add_group("LITIGATION", ["ALICE", "BOB"])
    doc_id = imanage_fake.add_document(
        "ACTIVE", 1, custom1="C-1", custom2="M-1", default_security="private",
        security={"default_security": "private",
                  "acl": [{"id": "LITIGATION", "type": "group", "access_level": "read"}]},
        filename="memo.txt", content=b"Vertrouwelijk memo over de octrooiaanvraag van Acme.",
    )  # fmt: skip
    imanage_fake.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1",
                              content=b"Een ander stuk over de levering.")  # fmt: skip
    doc = imanage_fake.docs[doc_id]
    edit_date = doc.profile["edit_date"]
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)

    def sync(mode: str = "delta") -> dict[str, Any]:
        report = run_sync("imanage", imanage(), pipeline, store, mode=mode, started_by="svc")
        assert report["sync"]["failed"] is None, report
        assert doc.profile["edit_date"] == edit_date  # nothing at the source bumped it
        return dict(report["sync"])

    sync("full")
    assert _who_finds(firm) == {"alice@firm.nl", "bob@firm.nl"}

    downloads = len(imanage_fake.calls(r"/download$"))
    quiet = sync()  # nothing changed: nothing is downloaded again
    assert quiet["security_pass"] == {"ran": True, "listed": 2, "stale": 0, "narrowed": 0,
                                      "read_again": 0, "complete": True, "hidden": 0}
    assert len(imanage_fake.calls(r"/download$")) == downloads

    doc.security["acl"].append({"id": "BOB", "type": "user", "access_level": "no_access"})
    denied = sync()["security_pass"]  # a deny narrows: applied without a download
    assert (denied["narrowed"], denied["read_again"]) == (1, 0)
    assert len(imanage_fake.calls(r"/download$")) == downloads
    assert _who_finds(firm) == {"alice@firm.nl"}

    doc.security["default_security"] = doc.profile["default_security"] = "public"
    sync()
    assert _who_finds(firm) == {"alice@firm.nl", "carol@firm.nl"}

    doc.profile["custom2"] = "M-2"  # filed behind carol's wall by a profile edit
    sync()
    retag(client)  # a document filed under a walled matter waits for its re-tag (narrower)
    assert _who_finds(firm) == {"alice@firm.nl"}
    assert firm.matters_seen("alice@firm.nl", "octrooiaanvraag", mode="sparse") == {"M-2"}

    imanage_fake.trash(doc_id)
    assert sync()["security_pass"]["hidden"] == 1  # gone: hidden now, deleted by a sweep
    assert _who_finds(firm) == set()
    assert firm.documents_found("alice@firm.nl", "levering", mode="sparse") == ["ACTIVE!2"]  # still there


def test_without_the_sync_api_a_delta_says_what_waits_for_the_full_crawl(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    imanage_fake.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1")
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    report = run_sync("imanage", imanage(), pipeline, store, mode="delta", started_by="svc")
    assert report["sync"]["security_pass"]["ran"] is False
    assert any("no Sync API" in w for w in report["sync"]["warnings"]), report["sync"]
