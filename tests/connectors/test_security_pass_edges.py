"""The delta's security pass (connectors/security_pass.py) at its edges: an independent
check's probes, kept as regression tests for what it found (2026-12-06).

Pattern of test_permission_only_changes.py::test_a_delta_sees_rules_moves_and_deletions_that_
keep_the_edit_date: the fake iManage (Sync API on), run_sync into the REAL ingest pipeline over
the embedded PostgreSQL, and the search API asked who finds a document. Nothing at the source
moves a document's edit_date unless the test says so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.connectors.imanage_world import ALL, World
from tests.fakes.imanage import FakeIManage, now_iso

PRIVATE_ALICE_BOB = {
    "default_security": "private",
    "acl": [
        {"id": "ALICE", "type": "user", "access_level": "read"},
        {"id": "BOB", "type": "user", "access_level": "read"},
    ],
}


def _world(client: TestClient, auth: Tokens, db: DbFixture, fake: FakeIManage,
           imanage: ImanageFactory, **kw: Any) -> World:
    return World(client, auth, db, fake, imanage, **kw)


# --- checks that hold ---------------------------------------------------------------------------


def test_quiet_delta_reads_nothing_for_workspace_matter_private_and_quarantined(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_workspace("ACTIVE", "ACTIVE!311", custom1="C-1", custom2="M-1")
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="", workspace_id="ACTIVE!311",
                   content=b"Werkruimte memo over de octrooiaanvraag.")
    f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1", author="ALICE", operator="BOB",
                   default_security="private",
                   security={"default_security": "private", "acl": []},
                   content=b"Prive notitie over de levering.")
    f.add_document("ACTIVE", 3, custom1="C-1", custom2="M-9",  # unknown matter: quarantined
                   content=b"Stuk over de huurovereenkomst.")
    f.add_document("ACTIVE", 4, custom1="C-1", custom2="  ",  # empty matter: quarantined
                   content=b"Stuk over het fusieprotocol.")
    f.add_document("ACTIVE", 5, custom1="ZZ", custom2="M-1",  # wrong client: quarantined
                   content=b"Stuk over het arbeidscontract.")
    w.sync("full")
    assert w.stored("ACTIVE!1")[2] == "M-1"
    assert w.who("levering", "ACTIVE!2") == {"alice@firm.nl", "bob@firm.nl"}
    assert [w.stored(f"ACTIVE!{n}")[0] for n in (3, 4, 5)] == ["quarantined"] * 3
    before = w.downloads()
    for _ in range(2):
        report = w.sync()
        assert report["security_pass"]["stale"] == 0, report["security_pass"]
    assert w.downloads() == before


def test_spm_group_denied_list_version_bump_and_restore_reach_the_index(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_group("LIT", ["ALICE", "BOB"])
    d1 = f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1",
                        content=b"Memo over de octrooiaanvraag.")
    d2 = f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1",
                        content=b"Memo over de levering.")
    f.add_document("ACTIVE", 3, custom1="C-1", custom2="M-1",
                   content=b"Oude tekst over de huurovereenkomst.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL

    # a group whose members SPM restricts, added to the trustees only: fail closed
    f.docs[d1].security["acl"].append(
        {"id": "LIT", "type": "group", "access_level": "read", "has_restricted_member": True})
    w.sync()
    assert w.who("octrooiaanvraag", "ACTIVE!1") == set()

    # a deny only on the Sync API's denied-trustees list
    f.docs[d2].denied.append({"trustee_id": "CAROL", "trustee_type": "user"})
    w.sync()
    assert w.who("levering", "ACTIVE!2") == {"alice@firm.nl", "bob@firm.nl"}

    # a new version with the old edit date
    f.add_document("ACTIVE", 3, version=2, custom1="C-1", custom2="M-1",
                   content=b"Nieuwe tekst over de pachtovereenkomst.")
    w.sync()
    assert w.who("pachtovereenkomst", "ACTIVE!3") == ALL
    assert w.who("huurovereenkomst", "ACTIVE!3") == set()
    assert w.stored("ACTIVE!3")[4] == "2"

    # revoked (hidden by the point check), then restored: rules come back on the next delta
    f.revoke(d2)
    w.sync()
    assert w.who("levering", "ACTIVE!2") == set()
    f.revoked.clear()
    w.sync()
    assert w.who("levering", "ACTIVE!2") == {"alice@firm.nl", "bob@firm.nl"}


def test_download_failures_during_the_pass_narrow_and_move_out(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    w.firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=["carol@firm.nl"])
    d1 = f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", default_security="private",
                        security={"default_security": "private",
                                  "acl": [{"id": "ALICE", "type": "user",
                                           "access_level": "read"}]},
                        content=b"Memo over de octrooiaanvraag.")
    d2 = f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1",
                        content=b"Memo over de levering.")
    d3 = f.add_document("ACTIVE", 3, custom1="C-1", custom2="M-1",
                        content=b"Memo over de huurovereenkomst.")
    w.sync("full")
    # widened (bob added), download 500: never wider
    f.docs[d1].security["acl"].append({"id": "BOB", "type": "user", "access_level": "read"})
    f.inject(r"ACTIVE!1\.1/download$", 500, times=50)
    # moved behind carol's wall, download 500: out of M-1
    f.docs[d2].profile["custom2"] = "M-2"
    f.inject(r"ACTIVE!2\.1/download$", 500, times=50)
    # narrowed (carol denied), download 403 with a readable profile: hidden
    f.docs[d3].security["acl"].append({"id": "CAROL", "type": "user",
                                       "access_level": "no_access"})
    f.inject(r"ACTIVE!3\.1/download$", 403, times=50)
    w.sync(ok=False)
    assert "bob@firm.nl" not in w.who("octrooiaanvraag", "ACTIVE!1")
    assert w.stored("ACTIVE!2") is None or w.who("levering", "ACTIVE!2") == set()
    assert w.who("huurovereenkomst", "ACTIVE!3") <= {"alice@firm.nl", "bob@firm.nl"}


def test_failures_in_the_pass_fail_the_run_and_delete_nothing(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage, sync_page_size=2)
    f = imanage_fake
    for n in range(1, 7):
        f.add_document("ACTIVE", n, custom1="C-1", custom2="M-1",
                       content=f"Stuk {n} over de levering.".encode())
    w.sync("full")
    f.trash("ACTIVE!6.1")

    # a trustees listing that fails (retries exhausted)
    f.inject(r"/sync/documents/security/denied-trustees/search$", 503, times=100)
    report = w.sync(ok=False)
    assert report["failed"], report
    assert w.stored("ACTIVE!6") is not None and w.who("levering", "ACTIVE!6") == ALL
    f.faults.clear()

    # the documents listing fails midway (after its first page)
    def fail_midway(fake: FakeIManage, kind: str, offset: int) -> None:
        if kind == "documents" and offset == 0:
            fake.inject(r"/sync/documents/crawl$", 500, times=100)
    f.on_sync_page = fail_midway
    report = w.sync(ok=False)
    assert report["failed"], report
    assert w.stored("ACTIVE!6") is not None and w.who("levering", "ACTIVE!6") == ALL
    f.faults.clear()

    # cursors that keep expiring (beyond the restarts allowed)
    f.on_sync_page = lambda fake, kind, offset: fake.expire_cursors()
    report = w.sync(ok=False)
    assert report["failed"], report
    assert w.stored("ACTIVE!6") is not None and w.who("levering", "ACTIVE!6") == ALL

    # one expiry mid-listing (400 and 410): restarts, then the deletion is point-checked
    for status in (400, 410):
        f.cursor_expiry_status = status
        fired: list[int] = []

        def once(fake: FakeIManage, kind: str, offset: int, fired: list[int] = fired) -> None:
            if kind == "documents" and offset == 2 and not fired:
                fired.append(1)
                fake.expire_cursors()
        f.on_sync_page = once
        report = w.sync()
        assert report["security_pass"]["complete"] is True
    # gone from the whole listing: hidden at once; deleted only by a full crawl's sweep
    assert w.stored("ACTIVE!6")[3] == "nobody"
    assert all(w.stored(f"ACTIVE!{n}")[3] != "nobody" for n in range(1, 6))
    assert w.sync("full")["sweep"]["held"]["ids"] == ["ACTIVE!6"]  # 1 of 6: over 5%, held


def test_a_document_moved_to_another_library(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    imanage_fake.libraries = ["ACTIVE", "ARCHIVE"]
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1",
                   content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    f.trash("ACTIVE!1.1")  # moved: gone here, a new number there, old edit date
    f.add_document("ARCHIVE", 7, custom1="C-1", custom2="M-2",
                   content=b"Memo over de octrooiaanvraag.")
    w.sync()
    assert w.stored("ACTIVE!1")[3] == "nobody"  # hidden; the full crawl's sweep deletes it
    # documented: a document the index does not hold waits for the full crawl
    assert w.stored("ARCHIVE!7") is None


# --- what the check found, mended -----------------------------------------------------------


def test_a_library_gone_from_the_listing_is_hidden_by_a_delta_never_emptied(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Libraries not configured (scope "*"). The service account can no longer list ARCHIVE
    and every request under it answers 404. A full crawl's sweep in the same situation holds
    the removals (EWALL_SWEEP_MAX_FRACTION); the delta's pass first point-checked every
    ARCHIVE document (404) and deleted them all, unheld. It hides them only."""
    imanage_fake.libraries = ["ACTIVE", "ARCHIVE"]
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", content=b"Stuk over de levering.")
    for n in range(1, 11):
        f.add_document("ARCHIVE", n, custom1="C-1", custom2="M-1",
                       content=f"Archiefstuk {n} over de octrooiaanvraag.".encode())
    w.sync("full")
    f.unlisted_libraries.add("ARCHIVE")
    f.closed_libraries["ARCHIVE"] = 404

    report = w.sync()
    assert report["deleted"] == [] and report["security_pass"]["hidden"] == 10, report
    assert any("hid 10 of 11" in warning for warning in report["warnings"])
    assert w.who("octrooiaanvraag", "ARCHIVE!1") == set()
    assert w.who("levering", "ACTIVE!1") == ALL
    report = w.sync("full")  # the sweep decides, under its hold
    assert report["deleted"] == [] and report["sweep"]["held"]["count"] == 10


def test_a_library_gone_from_the_listing_keeps_no_rules_it_no_longer_reads(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """ARCHIVE leaves GET /libraries (hidden by an admin) but its documents still answer.
    The pass lists ACTIVE only; it point-checked ARCHIVE's documents ("present") and kept
    them with the rules read before, so a deny added since was never read. A full crawl's
    sweep hides such documents, and now so does the pass."""
    imanage_fake.libraries = ["ACTIVE", "ARCHIVE"]
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", content=b"Stuk over de levering.")
    d = f.add_document("ARCHIVE", 1, custom1="C-1", custom2="M-1",
                       content=b"Archiefstuk over de octrooiaanvraag.")
    w.sync("full")
    f.unlisted_libraries.add("ARCHIVE")
    f.docs[d].security["acl"].append({"id": "BOB", "type": "user", "access_level": "no_access"})
    report = w.sync()
    assert report["security_pass"]["complete"] is True
    assert "bob@firm.nl" not in w.who("octrooiaanvraag", "ARCHIVE!1"), report["kept_present"]


@pytest.mark.parametrize(("field", "value"), [("custom2", ""), ("custom1", "C-2")])
def test_a_document_moved_out_of_its_place_leaves_it_when_its_download_fails(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory, field: str, value: str,
) -> None:
    """Profile-only edit: the matter field emptied (no workspace to fall back on), or the
    client changed (matter number kept, default format "{matter}": the pair no longer
    resolves). The pass reads it again; its download fails (500). remove_if_moved ignored an
    empty listed matter and compared the matter only, so the document stayed searchable in
    M-1, where the source no longer files it (invariants 6 and 9). It is hidden now."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    w.firm.client_("C-2", "Other B.V.")
    d = f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1",
                       content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL
    f.docs[d].profile[field] = value
    f.inject(r"ACTIVE!1\.1/download$", 500, times=50)
    report = w.sync(ok=False)
    assert report["security_pass"]["stale"] == 1
    assert w.who("octrooiaanvraag", "ACTIVE!1") == set(), w.stored("ACTIVE!1")
    assert w.stored("ACTIVE!1")[3] == "nobody"  # hidden, not deleted

def test_trustee_rows_of_older_versions_do_not_widen_the_latest(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Where the Sync API lists every version (fake.versions_in_search: its rows and trustee
    rows carry document_id LIB!number.version), `_trustees` keyed rows by (LIB, number) and
    dropped the version, so the grants of version 1 were added to version 2's rules: Bob,
    who may read only version 1, found version 2 (full crawl and pass alike)."""
    imanage_fake.versions_in_search = True
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, version=1, custom1="C-1", custom2="M-1",
                   default_security="private",
                   security={"default_security": "private",
                             "acl": [{"id": "BOB", "type": "user", "access_level": "read"}]},
                   content=b"Eerste versie over de levering.")
    f.add_document("ACTIVE", 1, version=2, custom1="C-1", custom2="M-1",
                   default_security="private",
                   security={"default_security": "private",
                             "acl": [{"id": "ALICE", "type": "user", "access_level": "read"}]},
                   content=b"Tweede versie over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl"}


def test_versions_across_a_sync_page_boundary_neither_regress_nor_download(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Where the Sync API lists every version and versions 1 and 2 of a document fall on two
    pages, the pass compared version 1 (page 1) with the held version 2 and read version 1
    again, then version 2: each quiet delta downloaded twice and briefly served the
    superseded version. A version older than the one held is now passed over."""
    imanage_fake.versions_in_search = True
    w = _world(client, auth, db, imanage_fake, imanage, sync_page_size=1)
    f = imanage_fake
    f.add_document("ACTIVE", 1, version=1, custom1="C-1", custom2="M-1",
                   content=b"Eerste versie over de levering.")
    f.add_document("ACTIVE", 1, version=2, custom1="C-1", custom2="M-1",
                   content=b"Tweede versie over de octrooiaanvraag.")
    w.sync("full")
    assert w.stored("ACTIVE!1")[4] == "2"
    held: list[Any] = []

    def look(fake: FakeIManage, kind: str, offset: int) -> None:
        if kind == "documents" and offset == 1:  # page 1 has been handled
            held.append(w.stored("ACTIVE!1")[4])
    f.on_sync_page = look
    before = w.downloads()
    report = w.sync()
    assert (w.downloads() - before, held) == (0, ["2"]), report["security_pass"]


def test_a_failed_trustee_listing_leaves_no_wider_rules(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """The delta's change listing read rules from I7 (/security), which carries no Sync
    denied trustees (SPM denies a user there; I7 only flags groups): an edited document was
    re-ingested with wider rules, and when the pass then failed the run ended with Carol
    admitted. With the Sync API the change listing now reads the trustee lists too."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    d = f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1",
                       denied=[{"trustee_id": "CAROL", "trustee_type": "user"}],
                       content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}
    doc = f.docs[d]
    doc.profile["edit_date"] = now_iso()  # edited now: in the change listing
    doc.content = b"Bijgewerkt memo over de octrooiaanvraag."
    f.inject(r"/sync/documents/security/denied-trustees/search$", 503, times=100)
    report = w.sync(ok=False)
    assert report["failed"]
    assert "carol@firm.nl" not in w.who("octrooiaanvraag", "ACTIVE!1")


def test_the_change_listing_never_admits_a_sync_denied_user(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """As above with a pass that succeeds: asked while the trustees are listed, the search
    admitted Carol (the change listing's write was committed), and the document was
    downloaded twice in the one delta."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    d = f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1",
                       denied=[{"trustee_id": "CAROL", "trustee_type": "user"}],
                       content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    doc = f.docs[d]
    doc.profile["edit_date"] = now_iso()
    doc.content = b"Bijgewerkt memo over de octrooiaanvraag."
    during: list[set[str]] = []

    def look(fake: FakeIManage, kind: str, offset: int) -> None:
        if kind == "allowed" and not during:
            during.append(w.who("octrooiaanvraag", "ACTIVE!1"))
    f.on_sync_page = look
    before = w.downloads()
    w.sync()
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}  # after
    assert w.downloads() - before == 1 and during == [{"alice@firm.nl", "bob@firm.nl"}], (
        w.downloads() - before, during)


def test_a_workspace_moved_to_another_matter_reaches_documents_that_take_its_matter(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    w.firm.wall(kind="exclusionary", protects={"matters": ["M-2"]}, screened=["carol@firm.nl"])
    f.add_workspace("ACTIVE", "ACTIVE!311", custom1="C-1", custom2="M-1")
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="", workspace_id="ACTIVE!311",
                   content=b"Werkruimte memo over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL
    f.workspaces[("ACTIVE", "ACTIVE!311")]["custom2"] = "M-2"
    w.sync()
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}


def test_configured_libraries_one_refused_fails_the_run_and_deletes_nothing(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    imanage_fake.libraries = ["ACTIVE", "ARCHIVE"]
    w = _world(client, auth, db, imanage_fake, imanage)
    w.imanage = lambda **kw: imanage({"imanage_libraries": "ACTIVE,ARCHIVE"}, **kw)
    f = imanage_fake
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", content=b"Stuk over de levering.")
    f.add_document("ARCHIVE", 1, custom1="C-1", custom2="M-1",
                   content=b"Archiefstuk over de octrooiaanvraag.")
    w.sync("full")
    f.trash("ACTIVE!1.1")
    for status in (403, 404):
        f.closed_libraries["ARCHIVE"] = status
        report = w.sync(ok=False)
        assert report["failed"], report
        assert w.stored("ARCHIVE!1") is not None and w.stored("ACTIVE!1") is not None
        # a listing that failed hides nothing it did not give
        assert w.who("octrooiaanvraag", "ARCHIVE!1") == w.who("levering", "ACTIVE!1") == ALL


def test_a_quarantined_document_mended_by_a_profile_edit_is_read_again(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A document quarantined for an empty matter whose matter is filled in at the source
    (a profile edit, edit_date unchanged) is read again by the next pass; quarantined ones
    whose values did not change are not (the quiet test above)."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    d = f.add_document("ACTIVE", 1, custom1="C-1", custom2="",
                       content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    assert w.stored("ACTIVE!1")[0] == "quarantined"
    f.docs[d].profile["custom2"] = "M-1"
    assert w.sync()["security_pass"]["read_again"] == 1
    assert w.stored("ACTIVE!1")[0] == "active"
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL


def test_a_security_pass_waits_for_its_interval_when_one_is_set(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """EWALL_SECURITY_PASS_EVERY: a tenant whose rules cost a request per document may run
    the pass less often than its deltas; what it would catch then waits, and is said."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    for n in (1, 2, 3):
        f.add_document("ACTIVE", n, custom1="C-1", custom2="M-1",
                       content=f"Stuk {n} over de levering.".encode())
    w.sync("full")
    f.trash("ACTIVE!3.1")
    hourly: dict[str, Any] = {"security_pass_every_s": 3600}
    assert w.sync(**hourly)["security_pass"]["hidden"] == 1  # none ran yet: this one does
    f.trash("ACTIVE!2.1")
    waited = w.sync(**hourly)["security_pass"]
    assert waited["ran"] is False and "EWALL_SECURITY_PASS_EVERY" in waited["reason"]
    assert w.stored("ACTIVE!2")[3] != "nobody"  # it waits
    state = w.store.load("imanage", "libraries=*")
    state.last_security_pass_at = "2020-01-01T00:00:00Z"
    w.store.save("imanage", "libraries=*", state)
    assert w.sync(**hourly)["security_pass"]["hidden"] == 1
    assert w.stored("ACTIVE!2")[3] == "nobody"


def test_a_deny_that_names_another_version_still_denies(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """Trustee rows that name another version are left out of the latest version's grants;
    its denies are not (a review found the first form dropping them: a widening)."""
    imanage_fake.versions_in_search = True
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, version=1, custom1="C-1", custom2="M-1",
                   denied=[{"trustee_id": "CAROL", "trustee_type": "user"}],
                   content=b"Eerste versie over de levering.")
    f.add_document("ACTIVE", 1, version=2, custom1="C-1", custom2="M-1",
                   content=b"Tweede versie over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!1") == {"alice@firm.nl", "bob@firm.nl"}
    assert w.sync()["security_pass"]["stale"] == 0


def test_a_profile_changed_after_the_trustees_were_read_takes_its_own_security(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """private {alice} -> public minus carol while the pass runs, after it read the trustee
    lists: the old grants with the new profile would admit carol, which neither state of the
    source did (a review). A row whose profile changed since the trustees were read (less
    the overlap) takes its rules from its own security, plus the Sync denies."""
    w = _world(client, auth, db, imanage_fake, imanage, sync_page_size=1)
    f = imanage_fake
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", content=b"Stuk over de levering.")
    d = f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1", default_security="private",
                       security={"default_security": "private",
                                 "acl": [{"id": "ALICE", "type": "user",
                                          "access_level": "read"}]},
                       content=b"Memo over de octrooiaanvraag.")
    w.sync("full")
    assert w.who("octrooiaanvraag", "ACTIVE!2") == {"alice@firm.nl"}
    fired: list[int] = []

    def change(fake: FakeIManage, kind: str, offset: int) -> None:
        if kind == "documents" and offset == 0 and not fired:
            fired.append(1)
            doc = fake.docs[d]
            doc.profile.update(default_security="public", edit_profile_date=now_iso())
            doc.security = {"default_security": "public",
                            "acl": [{"id": "CAROL", "type": "user",
                                     "access_level": "no_access"}]}
    f.on_sync_page = change
    w.sync()
    assert fired and w.who("octrooiaanvraag", "ACTIVE!2") == {"alice@firm.nl", "bob@firm.nl"}


def test_a_document_created_after_the_denies_were_read_keeps_its_own_deny(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A delta's change listing reads the library's trustee lists before its documents: a
    document created after they were read takes its own security (I7) plus the Sync denies,
    and keeps the deny its security names."""
    w = _world(client, auth, db, imanage_fake, imanage, page_size=1)
    f = imanage_fake
    for n in (1, 2):
        f.add_document("ACTIVE", n, custom1="C-1", custom2="M-1",
                       content=f"Stuk {n} over de levering.".encode())
    w.sync("full")
    for d in list(f.docs.values()):
        d.profile["edit_date"] = now_iso()
    fired: list[int] = []

    def create(fake: FakeIManage, kind: str, offset: int) -> None:
        if kind == "denied" and not fired:
            fired.append(1)
            fake.add_document("ACTIVE", 3, custom1="C-1", custom2="M-1", edit_date=now_iso(),
                              security={"default_security": "public",
                                        "acl": [{"id": "CAROL", "type": "user",
                                                 "access_level": "no_access"}]},
                              content=b"Nieuw memo over de octrooiaanvraag.")
    f.on_sync_page = create
    w.sync()
    assert fired and w.who("octrooiaanvraag", "ACTIVE!3") == {"alice@firm.nl", "bob@firm.nl"}


def test_a_latest_version_removed_at_the_source_brings_the_older_one_back(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """v2 removed (v2 -> v1), in a listing that marks no version latest: the pass passed over
    v1 as older than the held v2, hid the document and never listed it again (a review).
    The newest version listed is now the document when the held one never comes."""
    imanage_fake.versions_in_search = True
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_document("ACTIVE", 1, version=1, custom1="C-1", custom2="M-1",
                   content=b"Eerste versie over de levering.")
    v2 = f.add_document("ACTIVE", 1, version=2, custom1="C-1", custom2="M-1",
                        content=b"Tweede versie over de octrooiaanvraag.")
    w.sync("full")
    del f.docs[v2]
    assert w.sync()["security_pass"]["read_again"] == 1
    assert w.who("levering", "ACTIVE!1") == ALL and w.stored("ACTIVE!1")[4] == "1"
    assert w.sync()["security_pass"]["stale"] == 0


def _ago(minutes: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_delta_and_its_pass_store_a_document_one_way(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """A group grant whose member only the Sync denied list names: the document's own
    security (I7) reads differently from the Sync lists. The newest edited document stays
    in every delta's change listing (watermark - overlap); when the change listing read I7
    and the pass the lists, each quiet delta stored it two ways and downloaded it twice (a
    review). Both now pick the rules by the same test."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.add_group("LIT", ["ALICE", "BOB", "CAROL"])
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", edit_date=_ago(60),
                   default_security="private",
                   security={"default_security": "private",
                             "acl": [{"id": "LIT", "type": "group", "access_level": "read"}]},
                   denied=[{"trustee_id": "CAROL", "trustee_type": "user"}],
                   content=b"Memo over de octrooiaanvraag.")
    past = datetime.now(UTC) - timedelta(minutes=58)
    w.connector_kw = {"now": lambda: past}  # the full crawl began an hour ago: watermark
    w.sync("full")
    w.connector_kw = {}
    w.sync()
    stored = w.stored("ACTIVE!1")
    before = w.downloads()
    for _ in range(3):
        assert w.sync()["security_pass"]["stale"] == 0
        assert w.stored("ACTIVE!1") == stored
    # each delta's change listing reads it again (it lies within the watermark's overlap);
    # the pass no longer does as well
    assert w.downloads() - before == 3


def test_a_sync_tenant_without_its_own_security_endpoint_keeps_the_lists_rules(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    """I7's path is [U]: where it answers 404 while the profile reads, a document that
    changed since the lists were read takes the lists' rules (it was stored visible to
    nobody by each delta and given back by its pass, two downloads each time)."""
    w = _world(client, auth, db, imanage_fake, imanage)
    f = imanage_fake
    f.security_endpoint = False
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", edit_date=_ago(60),
                   content=b"Memo over de octrooiaanvraag.")
    past = datetime.now(UTC) - timedelta(minutes=58)
    w.connector_kw = {"now": lambda: past}
    w.sync("full")
    w.connector_kw = {}
    assert w.who("octrooiaanvraag", "ACTIVE!1") == ALL
    f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1", edit_date=_ago(0),
                   content=b"Nieuw memo over de levering.")
    assert w.sync()["security_pass"]["stale"] == 0
    assert w.who("levering", "ACTIVE!2") == ALL  # new, its own security unreadable
    for _ in range(2):
        assert w.sync()["security_pass"]["stale"] == 0
        assert w.who("levering", "ACTIVE!2") == ALL
