"""Fake DMS -> run_sync -> the real ingest pipeline -> search through the API.

A private document is found by a person its ACL admits (through a synced group) and not by
one it does not admit; after it goes to Trash at the source, the next sync removes it and
nobody finds it any more. A NetDocuments matter "no access" row hides a document from a
person its access list would otherwise admit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import SweepNotHeldError, confirm_sweep, run_sync
from tests.conftest import Tokens
from tests.connectors.conftest import (
    DbFixture,
    ImanageFactory,
    NetDocumentsFactory,
    imanage_settings,
)
from tests.fakes.imanage import FakeIManage
from tests.fakes.netdocuments import FakeNetDocuments
from tests.helpers import Firm

PRIVATE = {
    "default_security": "private",
    "acl": [{"id": "LITIGATION", "type": "group", "access_level": "read"}],
}


def _found(firm: Firm, person: str, query: str) -> set[str]:
    results = firm.search(person, query, k=10, mode="sparse")["results"]
    return {r["document"]["external_id"] for r in results}


def test_crawl_search_delete_at_source_sync_again(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl", aliases=["imanage:user:alice"])
    firm.person("bob@firm.nl", aliases=["imanage:user:bob"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    imanage_fake.add_group("LITIGATION", ["ALICE"])
    imanage_fake.add_document(
        "ACTIVE",
        1,
        custom1="c-1",
        custom2=" m-1 ",
        default_security="private",
        author="JSMITH",
        security=PRIVATE,
        filename="memo.txt",
        content=b"Vertrouwelijk memo over de octrooiaanvraag van Acme.",
    )
    imanage_fake.add_document(
        "ACTIVE",
        2,
        custom1="C-1",
        custom2="M-1",
        filename="notitie.txt",
        content=b"Openbare notitie over de octrooiaanvraag.",
    )

    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)
    report = run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    assert report["sync"]["complete"] is True, report
    assert report["sync"]["groups"] == 1

    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1", "ACTIVE!2"}
    assert _found(firm, "bob@firm.nl", "octrooiaanvraag") == {"ACTIVE!2"}

    imanage_fake.trash("ACTIVE!1.1")
    report = run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    # Half the library at once is more than EWALL_SWEEP_MAX_FRACTION: held, not applied.
    held = report["sync"]["sweep"]["held"]
    assert held["ids"] == ["ACTIVE!1"]
    assert held["containers"] == {"ACTIVE": {"would_remove": 1, "of": 2, "share": 0.5}}
    assert report["sync"]["deleted"] == []
    assert [e["external_id"] for e in report["held"]] == ["ACTIVE!1"]
    assert report["counts"]["held"] == 1
    assert report["sync"]["containers"]["ACTIVE"]["held"] == 1
    assert report["sync"]["containers"]["ACTIVE"]["server_total"] == 1
    assert any("confirm-sweep" in w["reason"] for w in report["warnings"])
    stored = client.get(f"/v1/ingest/runs/{report['run_id']}", headers=firm.h).json()
    assert stored["progress"]["sync"]["containers"] == report["sync"]["containers"]
    assert stored["held"][0]["external_id"] == "ACTIVE!1"
    # the point check confirmed it gone: hidden while its deletion waits (it was searchable)
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!2"}
    assert report["sync"]["containers"]["ACTIVE"]["hidden"] == 1

    # An admin confirms through the API (the service's settings point at this tenant).
    resources = client.app.state.resources  # type: ignore[attr-defined]
    service_settings = resources.settings
    resources.settings = imanage_settings(imanage_fake)
    try:
        response = client.post(f"/v1/ingest/runs/{report['run_id']}/confirm-sweep",
                               headers=firm.h)
        assert response.status_code == 200, response.text
        confirmed = response.json()
        assert confirmed["sync"]["deleted"] == [
            {"external_id": "ACTIVE!1", "reason": "confirmed sweep: deleted at source"}
        ]
        assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!2"}
        again = client.post(f"/v1/ingest/runs/{report['run_id']}/confirm-sweep",
                            headers=firm.h)
        assert again.status_code == 409  # applied once; nothing is held any more
        assert again.json()["error"]["code"] == "sweep_not_held"
    finally:
        resources.settings = service_settings
    with pytest.raises(SweepNotHeldError):
        confirm_sweep("imanage", imanage(), pipeline, store, held_run_id=report["run_id"],
                      started_by="partner")
    missing = client.post("/v1/ingest/runs/00000000-0000-0000-0000-000000000000/confirm-sweep",
                          headers=firm.h)
    assert missing.status_code == 404
    lawyer = client.post(f"/v1/ingest/runs/{report['run_id']}/confirm-sweep",
                         headers=auth("alice@firm.nl", "lawyer"))
    assert lawyer.status_code == 403
    assert imanage_fake.writes() == []


def test_netdocuments_matter_no_access_row_hides_the_document(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
) -> None:
    firm = Firm(client, auth)
    firm.person("john@firm.nl", aliases=["netdocuments:user:john.smith@firm.com"])
    firm.person("amir@firm.nl", aliases=["netdocuments:user:amir@firm.com"])
    firm.client_("10025", "Acme Holdings")
    firm.matter("0008", "10025")
    netdocuments_fake.add_group(
        "UG-LIT",
        "Litigation",
        [{"id": "JS1", "email": "john.smith@firm.com"}, {"id": "AK2", "email": "amir@firm.com"}],
    )
    netdocuments_fake.add_document(
        "4824-5093-9170",
        client="10025",
        matter="0008",
        extension="txt",
        content=b"Processtuk over de dagvaarding in de zaak Falcon.",
        acl=[{"principal": "UG-LIT", "rights": "VES"}],
    )
    # Profile-based security on the matter: John is walled off (S9 recipe).
    netdocuments_fake.lookup[2] = [
        {"key": "0008", "parent": "10025", "access": "Litigation|VES*U:john.smith@firm.com|N"}
    ]
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    report = run_sync(
        "netdocuments",
        netdocuments(),
        pipeline,
        SyncStateStore(db.database),
        mode="full",
        started_by="svc",
    )
    assert report["sync"]["complete"] is True, report
    assert _found(firm, "amir@firm.nl", "dagvaarding") == {"4824-5093-9170"}
    assert _found(firm, "john@firm.nl", "dagvaarding") == set()
    assert netdocuments_fake.writes() == []


def test_a_move_whose_permissions_cannot_be_read_takes_the_document_out(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """The profile says the document moved to another matter (perhaps behind a wall), but
    its content cannot be read (HTTP 500): before, the update was dropped and the document stayed
    searchable under its old matter for as long as that failed. It is now hidden (fail
    closed; kept, since the listing itself may be wrong) and comes back under its new matter
    when a sync can read it. A failure on a document that did not move changes nothing."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl", aliases=["imanage:user:alice"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.matter("M-2", "C-1")
    for number in (1, 2):
        imanage_fake.add_document(
            "ACTIVE", number, custom1="C-1", custom2="M-1",
            content=f"Memo {number} over de octrooiaanvraag van Acme.".encode(),
        )
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=["alice@firm.nl"])
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1", "ACTIVE!2"}

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # after the full crawl's start
    imanage_fake.docs["ACTIVE!1.1"].profile.update(custom2="M-2", edit_date=now)
    imanage_fake.docs["ACTIVE!2.1"].profile["edit_date"] = now
    imanage_fake.inject(r"/download$", 500, times=40)
    report = run_sync("imanage", imanage(), pipeline, store, mode="delta", started_by="svc")
    assert report["sync"]["deleted"] == [], report["sync"]
    assert report["sync"]["containers"]["ACTIVE"]["hidden"] == 1
    assert {e["external_id"] for e in report["errors"]} == {"ACTIVE!1", "ACTIVE!2"}
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!2"}

    imanage_fake.faults.clear()  # the source answers again
    run_sync("imanage", imanage(), pipeline, store, mode="full", started_by="svc")
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!2"}
    back = client.get("/v1/documents/imanage/ACTIVE!1", headers=firm.h).json()
    assert back["matter_id"] == "M-2", back


def _acme(client: TestClient, auth: Tokens, *people: str, team: bool = False) -> Firm:
    """Acme B.V. with matter M-1 and ``people`` (aliases imanage:user:<name>), on its team
    when ``team``."""
    firm = Firm(client, auth)
    for person in people:
        firm.person(f"{person}@firm.nl", aliases=[f"imanage:user:{person}"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1", team=[f"{p}@firm.nl" for p in people] if team else [])
    return firm


def _memo_denying(fake: FakeIManage, group: str) -> None:
    """ACTIVE!1 in M-1, public but for the members of ``group`` (no_access)."""
    security = {
        "default_security": "public",
        "acl": [{"id": group, "type": "group", "access_level": "no_access"}],
    }
    fake.add_document(
        "ACTIVE", 1, custom1="C-1", custom2="M-1", default_security="public",
        security=security, filename="memo.txt",
        content=b"Vertrouwelijk memo over de octrooiaanvraag van Acme.",
    )


def _syncer(client: TestClient, db: DbFixture, imanage: ImanageFactory) -> Any:
    """A full iManage sync into the real pipeline, one state store across calls."""
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)

    def sync(**kw: Any) -> dict[str, Any]:
        return run_sync(
            "imanage", imanage(), pipeline, store, mode="full", started_by="svc", **kw
        )

    return sync


def test_a_deny_of_a_group_whose_members_cannot_be_read_admits_nobody(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A fuzz of the connectors: the members list of a denied group answered 500 and the
    membership stayed as last synced, so a person added to the group at the DMS still saw
    the document. The group is forgotten until its members can be read: its deny admits
    nobody meanwhile."""
    firm = _acme(client, auth, "alice", "bob", "dave")
    imanage_fake.add_group("SCREEN", ["BOB"])
    _memo_denying(imanage_fake, "SCREEN")
    sync = _syncer(client, db, imanage)
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    assert _found(firm, "dave@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    assert _found(firm, "bob@firm.nl", "octrooiaanvraag") == set()

    imanage_fake.groups["SCREEN"]["members"].append("DAVE")  # dave is screened at the DMS
    imanage_fake.inject(r"/groups/SCREEN/members$", 500, times=50)
    report = sync()
    assert any("SCREEN" in w["reason"] for w in report["warnings"]), report["warnings"]
    for person in ("alice", "bob", "dave"):
        assert _found(firm, f"{person}@firm.nl", "octrooiaanvraag") == set(), person

    imanage_fake.faults.clear()
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    assert _found(firm, "dave@firm.nl", "octrooiaanvraag") == set()

    # the groups listing goes away (404: the feature off) or fails as a whole: every group
    # of the source is forgotten, not kept as last read (a review found dave, added since,
    # still seeing the document)
    imanage_fake.groups["SCREEN"]["members"].append("ALICE")
    for broken in ("404", "500"):
        if broken == "404":
            imanage_fake.groups_endpoint = False
        else:
            imanage_fake.groups_endpoint = True
            imanage_fake.inject(r"/groups$", 500, times=50)
        report = sync()
        for person in ("alice", "bob", "dave"):
            assert _found(firm, f"{person}@firm.nl", "octrooiaanvraag") == set(), (broken, person)
        # and the run says what it hides
        assert any(
            "visible to nobody: imanage:group:screen" in w["reason"] for w in report["warnings"]
        ), report["warnings"]
        imanage_fake.faults.clear()


def test_a_nul_in_a_profile_field_is_stored_not_an_internal_error(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A fuzz of the connectors: a NUL in a profile's name, author or matter field failed
    the document with "internal error while storing: DataError" (PostgreSQL stores no NUL).
    It is U+FFFD now; in a matter id that names no matter, so the document is quarantined."""
    firm = _acme(client, auth, "alice", team=True)
    imanage_fake.add_document(
        "ACTIVE", 1, custom1="C-1", custom2="M-1", name="Memo\x00 octrooi", author="JS\x00",
        filename="memo.txt", content=b"Memo over de octrooiaanvraag van Acme.",
    )
    imanage_fake.add_document(
        "ACTIVE", 2, custom1="C-1", custom2="M-1\x00", filename="notitie.txt",
        content=b"Notitie over de octrooiaanvraag.",
    )
    report = _syncer(client, db, imanage)()
    assert not [e for e in report["errors"] if "internal" in e["reason"]], report["errors"]
    assert report["counts"]["quarantined"] == 1, report["counts"]
    results = firm.search("alice@firm.nl", "octrooiaanvraag", k=10, mode="sparse")["results"]
    assert [r["document"]["title"] for r in results] == ["Memo\ufffd octrooi"]


def test_access_revoked_in_a_sweep_hides_at_once_and_comes_back_with_access(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Two of ten documents turn 403 for the service account: over the sweep's fraction
    their deletion is held, but nobody finds them meanwhile (the real pipeline's source
    ACL "nobody"); once readable again, a sync gives them their rules back."""
    firm = _acme(client, auth, "alice")
    for n in range(1, 11):
        imanage_fake.add_document(
            "ACTIVE", n, custom1="C-1", custom2="M-1", filename=f"n{n}.txt",
            content=f"Notitie {n} over de octrooiaanvraag van Acme.".encode(),
        )
    full = _syncer(client, db, imanage)

    def sync() -> dict[str, Any]:
        return dict(full(sweep_max_fraction=0.05))

    sync()
    everything = {f"ACTIVE!{n}" for n in range(1, 11)}
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == everything
    imanage_fake.revoke("ACTIVE!1.1")
    imanage_fake.revoke("ACTIVE!2.1")
    report = sync()
    assert report["sync"]["sweep"]["held"]["ids"] == ["ACTIVE!1", "ACTIVE!2"]
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == everything - {"ACTIVE!1", "ACTIVE!2"}
    imanage_fake.revoked.clear()
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == everything


def test_a_document_whose_workspace_cannot_be_read_leaves_the_index_until_it_can(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A document filed only through its workspace: when the workspace answers 500, where it
    is filed now is unknown (it may have moved behind a wall), so it is out of the index
    until a sync reads it (a review: a delta passed it by under its old matter)."""
    firm = _acme(client, auth, "alice")
    imanage_fake.add_workspace("ACTIVE", "ACTIVE!311", custom1="C-1", custom2="M-1")
    imanage_fake.add_document(
        "ACTIVE", 1, custom1="", custom2="", workspace_id="ACTIVE!311", filename="m.txt",
        content=b"Memo over de octrooiaanvraag van Acme.",
    )
    sync = _syncer(client, db, imanage)
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    imanage_fake.inject(r"/workspaces/ACTIVE!311$", 500, times=50)
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == set()
    imanage_fake.faults.clear()
    sync()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}


def test_a_group_the_matrix_cannot_hold_is_unknown_and_the_others_sync(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A re-run of the connector fuzz: one group id the matrix refuses ("FIRM\\LIT") failed
    the whole run, so no group was synced and a person added to a denied group kept seeing
    the document."""
    firm = _acme(client, auth, "carol")
    imanage_fake.add_group("FLAKY", ["BOB"])
    imanage_fake.add_group("FIRM\\LIT", ["CAROL"])
    _memo_denying(imanage_fake, "FLAKY")
    sync = _syncer(client, db, imanage)
    sync()
    assert _found(firm, "carol@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    imanage_fake.groups["FLAKY"]["members"].append("CAROL")
    report = sync()
    assert report["status"] != "failed", report
    assert _found(firm, "carol@firm.nl", "octrooiaanvraag") == set()
    assert any(
        "cannot hold" in w["reason"] and "firm" in w["reason"] for w in report["warnings"]
    ), report["warnings"]


def test_a_deny_read_stands_though_the_content_cannot_be_downloaded(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A re-run of the connector fuzz: the new deny of bob was read, the download answered
    500, and the stored copy kept its old rules, so bob still found it. The rules read now
    stand at once; the content waits for a sync that can read it."""
    firm = _acme(client, auth, "alice", "bob")
    imanage_fake.add_document(
        "ACTIVE", 1, custom1="C-1", custom2="M-1", default_security="public",
        filename="memo.txt", content=b"Memo over de octrooiaanvraag van Acme.",
    )
    sync = _syncer(client, db, imanage)
    sync()
    assert _found(firm, "bob@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
    imanage_fake.docs["ACTIVE!1.1"].security = {
        "default_security": "public",
        "acl": [{"id": "BOB", "type": "user", "access_level": "no_access"}],
    }
    imanage_fake.inject(r"/download$", 500, times=50)
    sync()
    assert _found(firm, "bob@firm.nl", "octrooiaanvraag") == set()
    assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}


def test_a_group_set_through_the_api_is_kept_by_a_sync(
    client: TestClient,
    auth: Tokens,
    db: DbFixture,
    imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A tenant without a groups endpoint: the firm sets the group's members through the
    API. A sync forgets only the groups a sync wrote (a review: it forgot this one every
    run, and the document denying it became visible to nobody)."""
    firm = _acme(client, auth, "alice", "bob")
    imanage_fake.groups_endpoint = False
    _memo_denying(imanage_fake, "MANUAL")
    members = {"members": ["imanage:user:bob"]}
    assert client.put("/v1/groups/imanage/manual", json=members, headers=firm.h).status_code == 200
    sync = _syncer(client, db, imanage)
    for _ in range(2):
        sync()
        assert _found(firm, "alice@firm.nl", "octrooiaanvraag") == {"ACTIVE!1"}
        assert _found(firm, "bob@firm.nl", "octrooiaanvraag") == set()
