"""A full crawl downloads only what the index does not hold as listed (connectors/full_read.py).

Until 2026-12-06 every full crawl downloaded every document again (2,000 iManage documents:
2,009 requests for a quiet crawl), which a tenant held to a request or two a second cannot
afford daily at a million documents. These tests run the fakes through run_sync into the REAL
ingest pipeline and count the fake's downloads: a quiet crawl downloads nothing; a new
version, new content at the same version (iManage "replace original"), a profile edit,
wider rules, a move, a new document are read; rules that only narrow are applied without the
download; deletions are still swept, an incomplete listing still fails the crawl, and
``--reread`` reads everything.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.ingest.router import pipeline_for
from connectors.state import SyncStateStore
from connectors.sync import run_sync
from tests.conftest import DbHandle, Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.connectors.nd_tenant import DOWNLOADS, FALCON, LEVERING, NOTES, TAX, Syncs, who_finds
from tests.connectors.recording import ConsumerCrashError, RecordingPipeline
from tests.fakes.imanage import FakeIManage, now_iso
from tests.fakes.netdocuments import FakeNetDocuments
from tests.helpers import Firm, superuser_rows

PEOPLE = ("alice@firm.nl", "bob@firm.nl", "carol@firm.nl")
LIT = {"id": "LIT", "type": "group", "access_level": "read"}
IM_DOWNLOADS = r"/download$"
Sync = Callable[..., dict[str, Any]]


def _tenant(firm: Firm, fake: FakeIManage, count: int) -> None:
    """Client C-1 with matters M-1 and M-2; the Litigation group (alice, bob); ``count``
    private documents of M-1 granted to the group, each with a word of its own."""
    for person in PEOPLE:
        firm.person(person, aliases=[f"imanage:user:{person.split('@')[0]}"])
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    firm.matter("M-2", "C-1")
    fake.add_group("LIT", ["ALICE", "BOB"])
    for n in range(1, count + 1):
        fake.add_document("ACTIVE", n, custom1="C-1", custom2="M-1", default_security="private",
                          security={"default_security": "private", "acl": [dict(LIT)]},
                          content=f"Memo {n} over de octrooiaanvraag, kenmerk woord{n}.".encode())


@pytest.fixture
def imanage_sync(client: TestClient, db: DbFixture, imanage: ImanageFactory) -> Sync:
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    store = SyncStateStore(db.database)

    def sync(*, ok: bool = True, sync_api: bool = False, **kw: Any) -> dict[str, Any]:
        kw.setdefault("sweep_max_fraction", 1.0)
        kw.setdefault("full_reads", "changed")  # EWALL_FULL_CRAWL_READS=changed
        kw.setdefault("mode", "full")
        connector = imanage(use_sync_api=sync_api)
        report = run_sync("imanage", connector, pipeline, store, started_by="svc", **kw)
        if ok:
            assert report["sync"]["failed"] is None, report["sync"]
        return dict(report)

    return sync


def _downloads(fake: FakeIManage, since: int) -> set[int]:
    """The document numbers downloaded since request ``since``."""
    return {int(r.path.split("!")[1].split(".")[0]) for r in fake.requests[since:]
            if r.path.endswith("/download")}


def _stored(db: DbHandle, external_id: str) -> tuple[Any, ...]:
    rows = superuser_rows(db, "SELECT version, matter_id, title, status FROM documents "
                              "WHERE source = 'imanage' AND external_id = %s", external_id)
    return rows[0] if rows else ()


@pytest.mark.parametrize("sync_api", [True, False], ids=["sync_api", "search"])
def test_a_quiet_full_crawl_downloads_nothing(
    client: TestClient, auth: Tokens, imanage_fake: FakeIManage, imanage_sync: Sync,
    sync_api: bool,
) -> None:
    """With the Sync API the rules come from its trustee lists; without it from one
    security read per held document, which is still no download."""
    _tenant(Firm(client, auth), imanage_fake, 6)
    first = imanage_sync(sync_api=sync_api)["sync"]
    assert first["containers"]["ACTIVE"]["ingested"] == 6
    assert first["full_read"]["asked"] == 0  # the index held nothing yet
    before = len(imanage_fake.requests)
    quiet = imanage_sync(sync_api=sync_api)["sync"]
    assert _downloads(imanage_fake, before) == set()
    assert quiet["full_read"] == {"read_all": False, "asked": 6, "unread": 6, "unchanged": 6,
                                  "narrowed": 0, "textless": 0}
    active = quiet["containers"]["ACTIVE"]
    assert (active["seen"], active["unread"], active["unchanged"], active["ingested"]) == (
        6, 6, 6, 0)
    assert quiet["sweep"] == {"ran": True, "seen": 6, "candidates": 0, "deleted": 0,
                              "textless_forgotten": 0}
    security = [r for r in imanage_fake.requests[before:] if r.path.endswith("/security")]
    assert len(security) == (0 if sync_api else 6)


def test_documents_made_by_another_chunker_or_encoder_are_read_once_again(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    """Each document keeps what it was prepared with (chunker version, encoder, chunk
    limits: `preparation.prepared_with`); one made otherwise, or stored before the stamp was
    kept, is read in full by the next full crawl, which stores today's stamp, and the crawl
    after that is quiet again. So a new chunker or encoder reaches every DMS document
    without anyone asking for ``--reread``."""
    _tenant(Firm(client, auth), imanage_fake, 5)
    imanage_sync(sync_api=True)
    stamps = superuser_rows(db, "SELECT DISTINCT metadata->>'prepared_with' FROM documents "
                                "WHERE source = 'imanage'")
    pipeline = pipeline_for(client.app.state.resources)  # type: ignore[attr-defined]
    assert stamps == [(pipeline.prepared_with,)]
    superuser_rows(db, "UPDATE documents SET metadata = metadata - 'prepared_with' "
                       "WHERE source = 'imanage' AND external_id IN ('ACTIVE!1', 'ACTIVE!2') "
                       "RETURNING external_id")
    superuser_rows(db, "UPDATE documents SET metadata = jsonb_set(metadata, '{prepared_with}', "
                       "'\"another chunker\"') WHERE external_id = 'ACTIVE!3' "
                       "RETURNING external_id")
    before = len(imanage_fake.requests)
    again = imanage_sync(sync_api=True)["sync"]
    assert _downloads(imanage_fake, before) == {1, 2, 3}
    assert again["full_read"]["unchanged"] == 2
    before = len(imanage_fake.requests)
    quiet = imanage_sync(sync_api=True)["sync"]
    assert _downloads(imanage_fake, before) == set()
    assert quiet["full_read"]["unchanged"] == 5


def test_what_changed_is_read_and_rules_that_only_narrow_are_applied_without_it(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    fake = imanage_fake
    firm = Firm(client, auth)
    _tenant(firm, fake, 10)
    imanage_sync(sync_api=True)
    assert "ACTIVE!5" in firm.documents_found("bob@firm.nl", "woord5", mode="sparse")
    fake.add_document("ACTIVE", 1, version=2, custom1="C-1", custom2="M-1",  # a new version
                      default_security="private",
                      security={"default_security": "private", "acl": [dict(LIT)]},
                      content=b"Tweede versie van memo 1 over de octrooiaanvraag, nieuwwoord.")
    replaced = fake.docs["ACTIVE!2.1"]  # "replace original": new content, same version
    replaced.profile["edit_date"] = now_iso()
    replaced.content = b"Vervangen memo 2 over de octrooiaanvraag, vervangwoord."
    renamed = fake.docs["ACTIVE!3.1"]  # a profile edit: edit_profile_date, not edit_date
    renamed.profile.update(name="Pleitnota Acme", edit_profile_date=now_iso())
    fake.docs["ACTIVE!4.1"].security["acl"].append(  # wider: carol may read it too
        {"id": "CAROL", "type": "user", "access_level": "read"})
    fake.docs["ACTIVE!5.1"].security["acl"].append(  # narrower: a deny for bob
        {"id": "BOB", "type": "user", "access_level": "no_access"})
    fake.docs["ACTIVE!6.1"].profile["custom2"] = "M-2"  # moved to another matter
    fake.add_document("ACTIVE", 11, custom1="C-1", custom2="M-1", default_security="public",
                      content=b"Nieuw memo 11 over de octrooiaanvraag.")
    fake.trash("ACTIVE!8.1")
    before = len(fake.requests)
    report = imanage_sync(sync_api=True)["sync"]
    assert _downloads(fake, before) == {1, 2, 3, 4, 6, 11}
    assert report["full_read"] == {"read_all": False, "asked": 9, "unread": 4, "unchanged": 3,
                                   "narrowed": 1, "textless": 0}  # 5 narrowed; 7, 9, 10 kept
    assert report["containers"]["ACTIVE"]["narrowed"] == 1
    assert report["sweep"]["deleted"] == 1 and _stored(db, "ACTIVE!8") == ()
    assert _stored(db, "ACTIVE!1")[0] == "2"
    assert _stored(db, "ACTIVE!3")[2] == "Pleitnota Acme"
    assert _stored(db, "ACTIVE!6")[1] == "M-2"
    assert firm.documents_found("alice@firm.nl", "vervangwoord", mode="sparse") == ["ACTIVE!2"]
    assert "ACTIVE!4" in firm.documents_found("carol@firm.nl", "woord4", mode="sparse")
    assert "ACTIVE!5" not in firm.documents_found("bob@firm.nl", "woord5", mode="sparse")
    assert "ACTIVE!5" in firm.documents_found("alice@firm.nl", "woord5", mode="sparse")
    before = len(fake.requests)
    assert imanage_sync(sync_api=True)["sync"]["full_read"]["unread"] == 10  # quiet again
    assert _downloads(fake, before) == set()


def test_a_quarantined_document_is_read_again_once_its_matter_is_known(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    """Quarantined (matter unknown to the matrix): left unread while its raw client and
    matter stay as they were and the matrix still cannot place them; read, and released,
    once the matter exists."""
    firm = Firm(client, auth)
    _tenant(firm, imanage_fake, 1)
    imanage_fake.add_document("ACTIVE", 2, custom1="C-1", custom2="M-9",
                              content=b"Memo over een zaak die nog geen dossier heeft.")
    imanage_sync()
    assert _stored(db, "ACTIVE!2")[3] == "quarantined"
    before = len(imanage_fake.requests)
    assert imanage_sync()["sync"]["full_read"]["unread"] == 2
    assert _downloads(imanage_fake, before) == set()
    firm.matter("M-9", "C-1")
    before = len(imanage_fake.requests)
    imanage_sync()
    assert _downloads(imanage_fake, before) == {2}
    assert _stored(db, "ACTIVE!2")[1:] == ("M-9", "Document 2", "active")


def test_an_incomplete_listing_still_fails_the_crawl_and_deletions_wait(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    _tenant(Firm(client, auth), imanage_fake, 5)
    imanage_sync()
    imanage_fake.trash("ACTIVE!2.1")
    imanage_fake.total_mode = "high"  # the listing does not reconcile with its total
    before = len(imanage_fake.requests)
    report = imanage_sync(ok=False)
    assert report["status"] == "failed" and "could not be completed" in report["error"]
    assert report["sync"]["sweep"]["ran"] is False
    assert report["sync"]["full_read"]["unread"] == 4
    assert _downloads(imanage_fake, before) == set()
    assert _stored(db, "ACTIVE!2") != ()  # kept until a complete listing proves it gone
    imanage_fake.total_mode = "exact"
    report = imanage_sync()
    assert report["sync"]["sweep"]["deleted"] == 1 and _stored(db, "ACTIVE!2") == ()


def test_rules_that_cannot_be_read_send_the_document_to_the_full_read(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    """Our account lost access to a listed document (403 on its security, profile and
    content): its listed rules admit nobody, which is no narrowing to apply unread. The full
    read finds the refusal, and the sweep's point check deletes it, as before."""
    _tenant(Firm(client, auth), imanage_fake, 3)
    imanage_sync()
    imanage_fake.inject(r"ACTIVE!2\.\d+(/download|/security)?$", 403, times=10)
    before = len(imanage_fake.requests)
    report = imanage_sync()["sync"]
    assert report["full_read"]["unread"] == 2  # 1 and 3; 2 read: refused before its content
    assert _downloads(imanage_fake, before) == set()
    assert report["deleted"] == [{"external_id": "ACTIVE!2",
                                  "reason": "sweep: access revoked at source (fail closed)"}]
    assert _stored(db, "ACTIVE!2") == ()


def test_reread_downloads_every_document(
    client: TestClient, auth: Tokens, imanage_fake: FakeIManage, imanage_sync: Sync
) -> None:
    _tenant(Firm(client, auth), imanage_fake, 4)
    imanage_sync()
    before = len(imanage_fake.requests)
    assert imanage_sync(reread=False)["sync"]["full_read"]["unread"] == 4
    assert _downloads(imanage_fake, before) == set()
    before = len(imanage_fake.requests)
    report = imanage_sync(reread=True)["sync"]
    assert _downloads(imanage_fake, before) == {1, 2, 3, 4}
    assert report["full_read"]["read_all"] is True and report["full_read"]["unread"] == 0


def _recording_full(imanage: ImanageFactory, db: DbFixture) -> tuple[RecordingPipeline, Sync]:
    """A RecordingPipeline, and full crawls into it (changed mode unless told otherwise)
    with the state kept in the database between them."""
    pipeline, store = RecordingPipeline(), SyncStateStore(db.database)

    def full(**kw: Any) -> dict[str, Any]:
        connector = imanage({"connector_concurrency": 1}, use_sync_api=False)
        return run_sync("imanage", connector, pipeline, store, mode="full", started_by="t",
                        sweep_max_fraction=1.0, **{"full_reads": "changed", **kw})

    return pipeline, full


def test_a_crash_after_unread_pages_resumes_and_sweeps_only_what_is_gone(
    imanage_fake: FakeIManage, imanage: ImanageFactory, db: DbFixture
) -> None:
    """Unread documents are marked seen as their page is answered, so a crawl that crashes
    after them and resumes from its checkpoint still sweeps only what is gone."""
    for n in range(1, 8):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline, full = _recording_full(imanage, db)
    full()
    imanage_fake.trash("ACTIVE!2.1")
    imanage_fake.docs["ACTIVE!5.1"].profile["edit_date"] = now_iso()  # on the third page
    pipeline.ingested.clear()
    pipeline.crash_after = 0
    with pytest.raises(ConsumerCrashError):
        full()
    pipeline.crash_after = None
    report = full()
    assert report["sync"]["resumed"] is True
    assert pipeline.ingested == ["ACTIVE!5"]  # read once, after the crash
    assert pipeline.deleted == [("ACTIVE!2", "sweep: deleted at source")]
    assert report["sync"]["sweep"]["seen"] == 6


def test_netdocuments_reads_what_changed_and_narrows_a_wall_without_downloads(
    tenant: tuple[Firm, Syncs],
) -> None:
    """The ND tenant of nd_tenant.py: a quiet full crawl reads each held access list and
    downloads nothing; a new modified date is read in full (through /info first, where the
    full read takes it), a |N row on matter 0008 narrows two documents without download."""
    _firm, sync = tenant
    fake = sync.fake

    def since(before: int, pattern: str) -> list[str]:
        return [r.path for r in fake.requests[before:] if re.search(pattern, r.path)]

    before = len(fake.requests)
    quiet = sync("full", full_reads="changed")
    assert quiet["full_read"]["unread"] == 4
    assert since(before, DOWNLOADS) == []
    # each held document placed from /info, which a lagging search row cannot stand for
    assert sorted(since(before, r"/info$")) == sorted(
        f"/v1/Document/{d}/info" for d in (FALCON, LEVERING, TAX, NOTES))
    assert sorted(since(before, r"/acl$")) == sorted(
        f"/v1/Document/{d}/acl" for d in (FALCON, LEVERING, TAX, NOTES))
    fake.docs[TAX].modified = sync.modified[TAX] = "2025-03-01T09:00:00Z"
    fake.docs[TAX].content = b"Nieuw advies over de belastingaanslag."
    fake.lookup[2][0]["access"] += "*U:carol@firm.com|N"  # a wall on matter 0008
    before = len(fake.requests)
    changed = sync("full", full_reads="changed")
    assert since(before, DOWNLOADS) == [f"/v1/Document/{TAX}"]
    assert changed["full_read"] | {"asked": 0} == {"read_all": False, "asked": 0, "unread": 3,
                                                   "unchanged": 1, "narrowed": 2,
                                                   "textless": 0}


def test_by_default_every_full_crawl_reads_every_document(
    imanage_cli_env: DbHandle, imanage_fake: FakeIManage
) -> None:
    """EWALL_FULL_CRAWL_READS=all (the default): a download the source now refuses, with
    rules, place and dates as before, is caught by the next full crawl (connectors.md: 403
    -> remove from the index). Reading only what changed would keep the old copy (a check
    of 2026-12-06): that is the operator's choice for a tenant too large to read daily."""
    for n in (1, 2, 3):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    assert main(["ingest", "imanage", "--mode", "full"]) == 0
    imanage_fake.inject(r"ACTIVE!2\.\d+/download$", 403, times=1000)  # the content alone
    before = len(imanage_fake.requests)
    assert main(["ingest", "imanage", "--mode", "full"]) == 0
    assert _downloads(imanage_fake, before) == {1, 2, 3}
    stored = superuser_rows(imanage_cli_env, "SELECT external_id, source_acl_id FROM documents "
                                             "WHERE external_id = 'ACTIVE!2'")
    assert stored == [("ACTIVE!2", "nobody")], stored


def test_ewall_ingest_reread_reads_every_document_again(
    imanage_cli_env: DbHandle, imanage_fake: FakeIManage, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EWALL_FULL_CRAWL_READS", "changed")
    for n in (1, 2, 3):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    assert main(["ingest", "imanage", "--mode", "full"]) == 0
    before = len(imanage_fake.requests)
    assert main(["ingest", "imanage", "--mode", "full"]) == 0
    assert _downloads(imanage_fake, before) == set()
    assert "unread" in capsys.readouterr().out  # the per-library table's column
    before = len(imanage_fake.requests)
    assert main(["ingest", "imanage", "--reread"]) == 0  # a full crawl, every document read
    assert _downloads(imanage_fake, before) == {1, 2, 3}


@pytest.mark.parametrize("change", ["moved_behind_a_wall", "deleted_items"])
def test_netdocuments_places_held_documents_from_info_not_from_a_lagging_search_row(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments, change: str
) -> None:
    """The search index may lag /info (connectors.md); a full crawl that trusted the row
    left a document moved behind a wall, or put in Deleted Items, unread and counted seen:
    the walled-off person kept finding it, and the sweep never saw it go (a review)."""
    firm, sync = tenant
    fake = netdocuments_fake
    assert "amir@firm.nl" in who_finds(firm, FALCON, "dagvaarding")
    fake.search_lag[FALCON] = copy.deepcopy(fake.docs[FALCON])  # the index has not caught up
    if change == "moved_behind_a_wall":
        fake.docs[FALCON].custom[1002] = "0009"  # the matter amir is walled off
    else:
        fake.deleted_items.add(FALCON)
    sync("full", full_reads="changed")
    finders = who_finds(firm, FALCON, "dagvaarding")
    assert "amir@firm.nl" not in finders
    if change == "deleted_items":
        assert finders == set()


@pytest.mark.parametrize("after", [{"reread": True}, {"full_reads": "all"}],
                         ids=["reread", "default"])
def test_a_crawl_that_reads_all_after_an_interrupted_one_reads_every_document(
    imanage_fake: FakeIManage, imanage: ImanageFactory, db: DbFixture, after: dict[str, Any]
) -> None:
    """--reread, or the default (EWALL_FULL_CRAWL_READS=all) after a crawl begun with
    =changed, resumed the unfinished crawl: documents left unread before its checkpoint were
    never downloaded, while the report said read_all (two reviews). Such a crawl starts
    afresh."""
    for n in range(1, 8):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline, full = _recording_full(imanage, db)
    full()
    imanage_fake.docs["ACTIVE!5.1"].profile["edit_date"] = now_iso()  # on the third page
    pipeline.ingested.clear()
    pipeline.crash_after = 0
    with pytest.raises(ConsumerCrashError):
        full()  # a scheduled full crawl, interrupted
    pipeline.crash_after = None
    pipeline.ingested.clear()
    report = full(**after)
    assert sorted(pipeline.ingested) == [f"ACTIVE!{n}" for n in range(1, 8)]
    assert report["sync"]["resumed"] is False
    assert pipeline.runs[-1].params["resume"] is False  # the run says what it did
    assert report["sync"]["full_read"]["read_all"] is True
    # and the crawl begun afresh, interrupted in turn, resumes as one that reads all
    pipeline.ingested.clear()
    pipeline.crash_after = 0
    with pytest.raises(ConsumerCrashError):
        full(full_reads="all")
    pipeline.crash_after = None
    assert full(full_reads="all")["sync"]["resumed"] is True
    assert pipeline.runs[-1].params["resume"] is True


def test_an_unknown_full_reads_value_is_refused(
    imanage_fake: FakeIManage, imanage: ImanageFactory, db: DbFixture
) -> None:
    """Anything but "changed" read as "all"'s opposite would turn the safe default off by
    a typo ("ALL", ""); run_source refuses it before it starts a run."""
    imanage_fake.add_document("ACTIVE", 1, custom1="10025", custom2="0007")
    pipeline, store = RecordingPipeline(), SyncStateStore(db.database)
    connector = imanage({"connector_concurrency": 1}, use_sync_api=False)
    for value in ("ALL", "", "chnaged"):
        with pytest.raises(ValueError, match="full_reads"):
            run_sync("imanage", connector, pipeline, store, mode="full", started_by="t",
                     full_reads=value)
    assert pipeline.ingested == [] and pipeline.runs == []


def test_ewall_ingest_refuses_a_reread_as_a_delta(
    imanage_cli_env: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", "imanage", "--reread", "--mode", "delta"]) == 2
    assert "--reread is a full crawl" in capsys.readouterr().err


# --- documents without text ---------------------------------------------------------------


def _textless(db: DbHandle, source: str) -> list[tuple[Any, ...]]:
    return superuser_rows(db, "SELECT external_id, version FROM textless_documents "
                              "WHERE source = %s ORDER BY external_id", source)


@pytest.mark.parametrize("sync_api", [True, False], ids=["sync_api", "search"])
def test_a_document_without_text_is_not_downloaded_again_until_it_changes(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync, sync_api: bool,
) -> None:
    """A scan without OCR is not stored (nothing of it is searchable), so the index did not
    hold it, and every full crawl that reads only what changed downloaded it again. Now its
    version and stamps are remembered: it is left unread ("textless") while the listing
    names them, and read in full after a new version, a new modification date, or a change
    of chunker or encoder; with EWALL_FULL_CRAWL_READS=all it is read every time."""
    fake = imanage_fake
    _tenant(Firm(client, auth), fake, 2)
    fake.add_document("ACTIVE", 3, custom1="C-1", custom2="M-1", content=b"  \n\t \n")
    first = imanage_sync(sync_api=sync_api)
    assert [e["external_id"] for e in first["errors"]] == ["ACTIVE!3"]
    assert _textless(db, "imanage") == [("ACTIVE!3", "1")]
    before = len(fake.requests)
    quiet = imanage_sync(sync_api=sync_api)["sync"]
    assert _downloads(fake, before) == set()
    assert quiet["full_read"] | {"asked": 0} == {"read_all": False, "asked": 0, "unread": 3,
                                                 "unchanged": 2, "narrowed": 0, "textless": 1}
    assert quiet["containers"]["ACTIVE"]["textless"] == 1
    assert quiet["sweep"]["candidates"] == 0
    # a new modification date at the same version ("replace original"): read again
    fake.docs["ACTIVE!3.1"].profile["edit_date"] = now_iso()
    before = len(fake.requests)
    imanage_sync(sync_api=sync_api)
    assert _downloads(fake, before) == {3}
    # another chunker or encoder: read again
    superuser_rows(db, "UPDATE textless_documents SET prepared_with = 'another chunker' "
                       "RETURNING external_id")
    before = len(fake.requests)
    imanage_sync(sync_api=sync_api)
    assert _downloads(fake, before) == {3}
    # every document read when asked to
    before = len(fake.requests)
    imanage_sync(sync_api=sync_api, full_reads="all")
    assert _downloads(fake, before) == {1, 2, 3}
    # a new version with text: read, stored and found
    fake.add_document("ACTIVE", 3, version=2, custom1="C-1", custom2="M-1",
                      content=b"Gescande brief, nu met tekst: ontvangstbevestiging.")
    before = len(fake.requests)
    imanage_sync(sync_api=sync_api)
    assert _downloads(fake, before) == {3}
    assert _stored(db, "ACTIVE!3")[0] == "2"
    before = len(fake.requests)
    assert imanage_sync(sync_api=sync_api)["sync"]["full_read"]["unchanged"] == 3
    assert _downloads(fake, before) == set()


def test_a_document_without_text_is_forgotten_once_the_source_deletes_it(
    client: TestClient, auth: Tokens, db: DbHandle, imanage_fake: FakeIManage,
    imanage_sync: Sync,
) -> None:
    """The record of a document without text goes with the document: when a complete
    listing no longer names it, and once a new version with text is stored (until
    2026-12-06 the record stayed for good)."""
    fake = imanage_fake
    _tenant(Firm(client, auth), fake, 1)
    for n in (2, 3):
        fake.add_document("ACTIVE", n, custom1="C-1", custom2="M-1", content=b" \n ")
    imanage_sync(ok=False)
    assert _textless(db, "imanage") == [("ACTIVE!2", "1"), ("ACTIVE!3", "1")]
    fake.trash("ACTIVE!2.1")
    report = imanage_sync()["sync"]
    assert report["sweep"]["textless_forgotten"] == 1
    assert _textless(db, "imanage") == [("ACTIVE!3", "1")]
    fake.add_document("ACTIVE", 3, version=2, custom1="C-1", custom2="M-1",
                      content=b"Gescande brief, nu met tekst.")
    imanage_sync()
    assert _stored(db, "ACTIVE!3")[0] == "2" and _textless(db, "imanage") == []
    fake.trash("ACTIVE!3.2")
    report = imanage_sync()["sync"]
    assert (report["sweep"]["deleted"], report["sweep"]["textless_forgotten"]) == (1, 0)
    assert _stored(db, "ACTIVE!3") == () and _textless(db, "imanage") == []


def test_netdocuments_leaves_a_document_without_text_unread_until_it_changes(
    tenant: tuple[Firm, Syncs], db: DbHandle,
) -> None:
    """NetDocuments places a document from /info before the full read: one request where
    a download costs three."""
    _firm, sync = tenant
    fake = sync.fake
    scan = "4824-5093-9180"
    fake.add_document(scan, client="10025", matter="0008", extension="txt",
                      acl=[{"principal": "UG-LIT", "rights": "VES"}], content=b" \n ")
    sync.modified[scan] = fake.docs[scan].modified
    first = sync("full", full_reads="changed")
    assert first["full_read"]["textless"] == 0
    assert [row[0] for row in _textless(db, "netdocuments")] == [scan]
    before = len(fake.requests)
    quiet = sync("full", full_reads="changed")
    assert [r.path for r in fake.requests[before:] if re.search(DOWNLOADS, r.path)] == []
    assert quiet["full_read"]["textless"] == 1 and quiet["full_read"]["unread"] == 5
    fake.docs[scan].modified = sync.modified[scan] = "2025-04-01T09:00:00Z"
    before = len(fake.requests)
    sync("full", full_reads="changed")
    assert [r.path for r in fake.requests[before:] if re.search(DOWNLOADS, r.path)] == [
        f"/v1/Document/{scan}"]
