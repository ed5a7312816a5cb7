"""A NetDocuments tenant for the security-pass tests: Acme Holdings' matters, the Litigation
group, four documents and profile-based security, synced through run_sync into the real
ingest pipeline (the `tenant` fixture in conftest.py builds it and runs the full crawl)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.connectors.conftest import DbFixture, NetDocumentsFactory
from tests.fakes.netdocuments import CABINET, FakeNetDocuments
from tests.helpers import Firm

PEOPLE = {
    "john@firm.nl": "john.smith@firm.com",
    "amir@firm.nl": "amir@firm.com",
    "carol@firm.nl": "carol@firm.com",
}
FALCON = "4824-5093-9170"  # client 10025, matter 0008, granted to Litigation
LEVERING = "4824-5093-9171"  # matter 0008, Litigation and carol
TAX = "4824-5093-9172"  # matter 0007 (a |N row for john), carol; amir denied on its own list
NOTES = "4824-5093-9173"  # matter 0007, granted to the group by its name
MATTER_0008 = {"key": "0008", "parent": "10025", "access": "Litigation|VES"}
DOWNLOADS = r"^/v1/Document/[^/]+$"


def build_tenant(firm: Firm, fake: FakeNetDocuments) -> None:
    """Acme Holdings (10025) with matters 0007, 0008 and 0009 (behind amir's wall), the
    Litigation group (john, amir) and four documents, set up as the ND tests do: client and
    matter in custom attributes 1001/1002 (the cabinet's wsOrgAttrNum/wsAttrNum), group
    grants by id and by name, user grants and denies, and profile-based security on the
    matter lookup table, including a row of another client's matter 0008."""
    for person, email in PEOPLE.items():
        firm.person(person, aliases=[f"netdocuments:user:{email}"])
    firm.client_("10025", "Acme Holdings")
    for matter in ("0007", "0008", "0009"):
        firm.matter(matter, "10025")
    firm.wall(kind="exclusionary", protects={"matters": ["0009"]}, screened=["amir@firm.nl"])
    fake.add_group("UG-LIT", "Litigation", [{"id": "JS1", "email": "john.smith@firm.com"},
                                            {"id": "AK2", "email": "amir@firm.com"}])  # fmt: skip
    lit = {"principal": "UG-LIT", "rights": "VES"}
    fake.add_document(FALCON, client="10025", matter="0008", extension="txt", acl=[lit],
                      content=b"Processtuk over de dagvaarding in de zaak Falcon.")  # fmt: skip
    fake.add_document(LEVERING, client="10025", matter="0008", extension="txt",
                      acl=[lit, {"principal": "U:carol@firm.com", "rights": "V"}],
                      content=b"Afspraken over de levering van de machines.")  # fmt: skip
    fake.add_document(TAX, client="10025", matter="0007", extension="txt",
                      acl=[lit, {"principal": "U:carol@firm.com", "rights": "VES"},
                           {"principal": "U:amir@firm.com", "rights": "N"}],
                      content=b"Advies over de belastingaanslag van Acme.")  # fmt: skip
    fake.add_document(NOTES, client="10025", matter="0007", extension="txt",
                      acl=[{"principal": "Litigation", "rights": "V"}],
                      content=b"Aantekeningen bij de zitting.")  # fmt: skip
    fake.add_document("4824-5093-9999", extension="ndfld", name="Pleadings")  # a folder
    fake.lookup[2] = [
        dict(MATTER_0008),
        {"key": "0007", "parent": "10025", "access": "Litigation|VES*U:john.smith@firm.com|N"},
        {"key": "0008", "parent": "20001", "access": "U:amir@firm.com|N"},  # another client's
    ]


def who_finds(firm: Firm, doc_id: str, query: str) -> set[str]:
    found = set()
    for person in PEOPLE:
        if doc_id in firm.documents_found(person, query, k=10, mode="sparse"):
            found.add(person)
    return found


class Syncs:
    def __init__(self, client: TestClient, db: DbFixture, fake: FakeNetDocuments,
                 netdocuments: NetDocumentsFactory) -> None:  # fmt: skip
        self.pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
        self.store = SyncStateStore(db.database)
        self.fake = fake
        self.netdocuments = netdocuments
        self.modified = {d.id: d.modified for d in fake.docs.values()}

    def __call__(self, mode: str = "delta", *, ok: bool = True, full_reads: str = "all",
                 **settings: Any) -> dict[str, Any]:  # fmt: skip
        connector = self.netdocuments({"netdocuments_cabinets": CABINET, **settings})
        report = run_sync("netdocuments", connector, self.pipeline, self.store, mode=mode,
                          started_by="svc", full_reads=full_reads)  # fmt: skip
        if ok:
            assert report["sync"]["failed"] is None, report["sync"]
        # nothing at the source moved a modified date
        assert {d.id: d.modified for d in self.fake.docs.values()} == self.modified
        return dict(report["sync"])
