"""Denies set on iManage workspaces and folders reach the documents in them.

Security Policy Manager restricts users and groups on a container "regardless of any explicit
Work permission", and those exclusions are not in the document ACL (connectors.md §3.1); the
Sync API lists them per container (§1.4). Before connectors/imanage/containers.py a user denied
on a workspace still found its public documents. Pattern of test_security_pass_edges.py: the
fake iManage (Sync API on), run_sync into the real ingest pipeline over the embedded
PostgreSQL, and the search API asked who finds a document; the edge cases of the tree are
checked on the connector's own output.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.base import SourceAcl, SourceDocument
from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.connectors.imanage_world import ALL, World
from tests.connectors.recording import by_id
from tests.fakes.imanage import FakeIManage, now_iso

WS = "ACTIVE!311"
CONTAINER_KINDS = {"container_denied", "parents", "folders", "workspaces"}


def _world(client: TestClient, auth: Tokens, db: DbFixture, fake: FakeIManage,
           imanage: ImanageFactory, **kw: Any) -> World:
    w = World(client, auth, db, fake, imanage, **kw)
    fake.add_workspace("ACTIVE", WS, custom1="C-1", custom2="M-1", name="Acme - M-1")
    return w


def _public(fake: FakeIManage, number: int, text: bytes, **profile: Any) -> str:
    """A public document of C-1/M-1 with no explicit ACL: everyone may read it."""
    return fake.add_document("ACTIVE", number, custom1="C-1", custom2="M-1",
                             default_security="public", content=text, **profile)


def _warnings(report: dict[str, Any]) -> str:
    return " ".join(str(x) for x in report.get("warnings", []))


# --- the three walks: full crawl, delta, security pass ---------------------------------------


def test_workspace_deny_applies_after_a_full_crawl(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    _public(f, 2, b"Memo over de levering.")  # in no container: untouched
    f.deny_container("ACTIVE", WS, "CAROL")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}
    assert w.who("levering", "ACTIVE!2") == ALL


def test_workspace_deny_applies_to_a_document_a_delta_reads(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """The delta's change listing alone (the pass waits): the document changed since the
    lists were read takes its rules from I7, which carries no container denies; the
    workspace's deny must still apply."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    d1 = _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    w.sync("full")
    w.sync()  # a whole pass ran: the next one waits for security_pass_every_s
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL
    f.deny_container("ACTIVE", WS, "CAROL")
    f.docs[d1].profile["edit_date"] = now_iso()
    f.docs[d1].content = b"Nieuw memo over de octrooiaanvraag."
    report = w.sync(security_pass_every_s=3600)
    assert report["security_pass"]["ran"] is False, report["security_pass"]
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}


def test_workspace_deny_added_later_applies_after_a_security_pass(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Nothing on the document moves; only its workspace gains a deny."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL
    downloads = w.downloads()
    f.deny_container("ACTIVE", WS, "CAROL")
    report = w.sync()
    assert report["security_pass"]["ran"] is True
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}
    assert w.downloads() == downloads  # a narrowing: applied without the content
    f.container_denied.clear()  # the deny lifted: the pass gives access back
    w.sync()
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL


# --- where the deny sits ----------------------------------------------------------------------


@pytest.mark.parametrize("key", ["container_id", "folder_id"])
def test_deny_on_a_folder_two_levels_up_applies(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory, key: str,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage, sync_page_size=2)  # every list paged
    f = imanage_fake
    f.container_key = key
    f.add_folder("ACTIVE", "ACTIVE!400", parent_id=WS, workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!401", parent_id="ACTIVE!400", workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!402", parent_id="ACTIVE!401", workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!500", parent_id=WS, workspace_id=WS)  # a sibling branch
    d1 = _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    d2 = _public(f, 2, b"Memo over de levering.", workspace_id=WS)
    f.file(d1, "ACTIVE!402")
    f.file(d2, "ACTIVE!500")
    f.deny_container("ACTIVE", "ACTIVE!400", "BOB")
    f.deny_container("ACTIVE", "ACTIVE!500", "ALICE")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "carol@firm.nl"}
    assert w.who("levering", "ACTIVE!2") == {"bob@firm.nl", "carol@firm.nl"}
    assert [c.body.get("cursor") for c in f.calls(r"/sync/folders/crawl$")] == [None, "c0-2"]


def test_group_deny_on_a_workspace_applies_to_its_members(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_group("LIT", ["ALICE", "BOB"])
    _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    f.deny_container("ACTIVE", WS, "LIT", "group")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"carol@firm.nl"}


def test_a_document_filed_in_two_folders_takes_both_folders_denies(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_workspace("ACTIVE", "ACTIVE!312", custom1="C-1", custom2="M-1")
    f.add_folder("ACTIVE", "ACTIVE!401", parent_id=WS, workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!402", parent_id="ACTIVE!312", workspace_id="ACTIVE!312")
    d1 = _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    f.file(d1, "ACTIVE!401", "ACTIVE!402")  # filed in a folder of another workspace too
    f.deny_container("ACTIVE", "ACTIVE!401", "ALICE")
    f.deny_container("ACTIVE", "ACTIVE!402", "BOB")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"carol@firm.nl"}


# --- lists that cannot be read ----------------------------------------------------------------


@pytest.mark.parametrize("fault", ["500", "404 after the first page"])
def test_an_unreadable_container_list_hides_rather_than_widens(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory, fault: str,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage, sync_page_size=1)
    f = imanage_fake
    _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    f.deny_container("ACTIVE", WS, "CAROL")
    f.deny_container("ACTIVE", "ACTIVE!999", "BOB")  # a second row: a second page
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}

    _public(f, 2, b"Memo over de levering.", workspace_id=WS, edit_date=now_iso())
    if fault == "500":
        f.inject(r"/sync/containers/security/denied-trustees/search$", 500, times=1000)
    else:
        def missing_after_first(fake: FakeIManage, kind: str, offset: int) -> None:
            if kind == "container_denied" and offset == 0:
                fake.inject(r"/sync/containers/security/denied-trustees/search$", 404)
        f.on_sync_page = missing_after_first
    report = w.sync(ok=False)
    assert report["failed"], report
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}
    assert w.who("levering", "ACTIVE!2") == set()  # not stored with the deny left out

    f.faults.clear()
    f.on_sync_page = None
    w.sync()
    assert w.who("levering", "ACTIVE!2") == {"alice@firm.nl", "bob@firm.nl"}


def test_a_tenant_without_the_container_endpoints_keeps_the_documents_rules(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.absent_sync = set(CONTAINER_KINDS)
    _public(f, 1, b"Memo over de octrooiaanvraag.", workspace_id=WS)
    f.docs["ACTIVE!1.1"].denied.append({"trustee_id": "BOB", "trustee_type": "user"})
    f.deny_container("ACTIVE", WS, "CAROL")  # not listed: the tenant has no such endpoint
    report = w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "carol@firm.nl"}
    assert "container denies not available" in _warnings(report), report.get("warnings")
    report = w.sync()
    assert report["security_pass"]["ran"] is True
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "carol@firm.nl"}


@pytest.mark.parametrize("absent", ["parents", "folders", "workspaces"])
def test_container_denies_without_the_map_or_the_tree_hide_the_library(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory, absent: str,
) -> None:
    """Denies exist, but where documents sit cannot be read: any document may be under one."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.absent_sync = {absent}
    _public(f, 1, b"Memo over de octrooiaanvraag.")
    f.deny_container("ACTIVE", WS, "CAROL")
    report = w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == set()
    assert "visible to nobody" in _warnings(report)


# --- the tree's edges, on the connector's own output ------------------------------------------


def _crawl(fake: FakeIManage, imanage: ImanageFactory) -> dict[str, SourceDocument]:
    fake.sync_api = True
    connector = imanage(sync_page_size=50)
    try:
        return by_id(list(connector.crawl_full(None)))
    finally:
        connector.close()


def _acl(docs: dict[str, SourceDocument], external_id: str) -> SourceAcl:
    acl = docs[external_id].acl
    assert acl is not None
    return acl


def test_a_cycle_or_an_unknown_parent_fails_closed_for_the_documents_under_it(
    imanage_fake: FakeIManage, imanage: ImanageFactory,
) -> None:
    f = imanage_fake
    f.add_workspace("ACTIVE", WS)
    f.add_folder("ACTIVE", "ACTIVE!401", parent_id="ACTIVE!402", workspace_id=WS)  # a cycle
    f.add_folder("ACTIVE", "ACTIVE!402", parent_id="ACTIVE!401", workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!403", parent_id="ACTIVE!998")  # a parent no list holds
    f.add_folder("ACTIVE", "ACTIVE!404", parent_id=WS, workspace_id=WS)
    f.add_folder("ACTIVE", "ACTIVE!405", parent_id="ACTIVE!405")  # its own parent
    for n, folder in ((1, "ACTIVE!401"), (2, "ACTIVE!403"), (3, "ACTIVE!404"),
                      (4, "ACTIVE!405"), (5, "ACTIVE!777")):  # 777: in no list at all
        f.file(f.add_document("ACTIVE", n, default_security="public"), folder)
    f.add_document("ACTIVE", 6, default_security="public", workspace_id="ACTIVE!888")
    f.add_document("ACTIVE", 7, default_security="public")  # filed nowhere
    f.deny_container("ACTIVE", WS, "CAROL")
    docs = _crawl(f, imanage)
    for n in (1, 2, 4, 5, 6):
        assert not _acl(docs, f"ACTIVE!{n}").resolvable, n
    assert _acl(docs, "ACTIVE!3").deny == {"imanage:user:carol"}
    assert _acl(docs, "ACTIVE!7").resolvable and not _acl(docs, "ACTIVE!7").deny


def test_container_deny_rows_that_cannot_be_placed_fail_closed(
    imanage_fake: FakeIManage, imanage: ImanageFactory,
) -> None:
    """A deny row whose trustee cannot be named closes the documents under its container (the
    document rule of build_acl); one that names no container closes the library."""
    f = imanage_fake
    f.add_workspace("ACTIVE", WS)
    f.add_workspace("ACTIVE", "ACTIVE!312")
    f.add_document("ACTIVE", 1, default_security="public", workspace_id=WS)
    f.add_document("ACTIVE", 2, default_security="public", workspace_id="ACTIVE!312")
    f.container_denied[("ACTIVE", WS)] = [{"trustee_type": "user", "trustee_id": ""}]
    docs = _crawl(f, imanage)
    assert not _acl(docs, "ACTIVE!1").resolvable
    assert _acl(docs, "ACTIVE!2").resolvable
    f.container_key = "something_else"  # rows keyed by a name we do not know
    docs = _crawl(f, imanage)
    assert not _acl(docs, "ACTIVE!1").resolvable and not _acl(docs, "ACTIVE!2").resolvable


def test_container_rows_only_deny_and_bare_numbers_are_the_librarys(
    imanage_fake: FakeIManage, imanage: ImanageFactory,
) -> None:
    """Only denies propagate (the containers' allowed list is not read: a document's own
    security governs grants); a denied row denies whatever level it names; ids written as
    bare numbers name the library's containers."""
    f = imanage_fake
    f.add_workspace("ACTIVE", WS)
    f.add_folder("ACTIVE", "401", parent_id="311", workspace_id=None)
    f.folders[("ACTIVE", "402")] = {"folder_id": 402, "workspace_id": None,  # no "id" key
                                    "parent_id": "ACTIVE!401"}
    secret = {"default_security": "private", "acl": []}
    d1 = f.add_document("ACTIVE", 1, default_security="private", security=secret)
    f.file(d1, "402")
    f.container_denied[("ACTIVE", "311")] = [
        {"trustee_id": "BOB", "trustee_type": "user"},
        {"trustee_id": "ALICE", "trustee_type": "user", "access_level": "read"},  # no grant
    ]
    acl = _acl(_crawl(f, imanage), "ACTIVE!1")
    assert acl.resolvable and acl.default == "private"
    assert "imanage:user:alice" not in acl.allow
    assert {"imanage:user:bob", "imanage:user:alice"} <= acl.deny
    assert not f.calls(r"/sync/containers/security/allowed-trustees")


def test_requests_a_library_without_container_denies_costs(
    imanage_fake: FakeIManage, imanage: ImanageFactory,
) -> None:
    """A quiet library: the denied list, one request per walk; the map and tree are not read."""
    f = imanage_fake
    f.add_workspace("ACTIVE", WS)
    for n in range(1, 4):
        f.add_document("ACTIVE", n, default_security="public", workspace_id=WS)
    _crawl(f, imanage)
    assert len(f.calls(r"/sync/containers/security/denied-trustees/search$")) == 1
    assert not f.calls(r"/sync/(documents/parents/search|folders/crawl|workspaces/crawl)$")
    f.deny_container("ACTIVE", WS, "CAROL")
    _crawl(f, imanage)
    container_calls = f.calls(r"/sync/(containers/.*|documents/parents/search|folders/crawl|"
                              r"workspaces/crawl)$")
    assert len(container_calls) == 1 + 4  # the first crawl's one, then one page of each of four


def test_a_document_deny_row_that_names_no_document_closes_the_library(
    imanage_fake: FakeIManage, imanage: ImanageFactory,
) -> None:
    """A row of the documents' denied list without a document id or number was passed over:
    the deny it carried, which could be any document's, was lost (a fail-open found in a
    review). Now no document of the library can be placed until a read names every deny."""
    f = imanage_fake
    f.add_document("ACTIVE", 1, default_security="public",
                   denied=[{"document_id": None, "trustee_id": "CAROL", "trustee_type": "user"}])
    f.add_document("ACTIVE", 2, default_security="public")
    docs = _crawl(f, imanage)
    assert not _acl(docs, "ACTIVE!1").resolvable and not _acl(docs, "ACTIVE!2").resolvable
    f.docs["ACTIVE!1.1"].denied = [{"trustee_id": "CAROL", "trustee_type": "user"}]
    docs = _crawl(f, imanage)
    assert _acl(docs, "ACTIVE!1").deny == {"imanage:user:carol"}
    assert _acl(docs, "ACTIVE!2").resolvable
