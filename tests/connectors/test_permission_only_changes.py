"""Permission changes that leave a document's edit date alone still reach the index.

Security changes do not reliably bump `edit_date` (docs/dms-apis.md §1.4), so the periodic
re-crawl must carry them. This runs the fake iManage through run_sync into the REAL ingest pipeline
and asks the search API who finds the document (no recording double re-implementing the
ACL rules): after each change at the source, with the same edit date, version and content,
the next sync narrows or widens access exactly as the source now says.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.fakes.imanage import FakeIManage
from tests.helpers import Firm

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
