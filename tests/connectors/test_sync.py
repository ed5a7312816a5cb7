"""run_sync against the fakes (real HTTP), a real PostgreSQL for the state, and an in-memory
recording pipeline (tests/connectors/recording.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connectors.base import SourceDocument
from connectors.imanage.connector import IManageConnector
from connectors.state import SyncBusyError, SyncStateStore
from connectors.sync import run_sync
from tests.connectors.conftest import (
    DbFixture,
    ImanageFactory,
    NetDocumentsFactory,
    Sleeps,
    imanage_settings,
)
from tests.connectors.recording import ConsumerCrashError, RecordingPipeline
from tests.fakes.imanage import FakeIManage, now_iso
from tests.fakes.netdocuments import FakeNetDocuments

SCOPE = "libraries=*"


@pytest.fixture
def store(db: DbFixture) -> SyncStateStore:
    return SyncStateStore(db.database)


def _seed(fake: FakeIManage, count: int) -> None:
    for n in range(1, count + 1):
        fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")


def _full(
    connector: Any, pipeline: RecordingPipeline, store: SyncStateStore, **kw: Any
) -> dict[str, Any]:
    # These small tenants lose a large share at once; the hold is tested on its own.
    kw.setdefault("sweep_max_fraction", 1.0)
    return run_sync(
        connector.source, connector, pipeline, store, mode="full", started_by="svc-test", **kw
    )


def _delta(
    connector: Any, pipeline: RecordingPipeline, store: SyncStateStore, **kw: Any
) -> dict[str, Any]:
    return run_sync(
        connector.source, connector, pipeline, store, mode="delta", started_by="svc-test", **kw
    )


def test_full_crawl_then_sweep_after_deletions_at_source(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 5)
    pipeline = RecordingPipeline()
    report = _full(imanage(), pipeline, store)
    assert report["status"] == "succeeded"
    assert report["sync"]["complete"] is True
    assert report["sync"]["sweep"] == {"ran": True, "seen": 5, "candidates": 0, "deleted": 0,
                                       "textless_forgotten": 0}
    assert sorted(pipeline.index) == [f"ACTIVE!{n}" for n in range(1, 6)]
    state = store.load("imanage", SCOPE)
    assert state.crawl_id is None
    assert state.last_complete_crawl_id
    assert state.cursor
    assert "ACTIVE" in json.loads(state.cursor)["since"]
    assert store.seen_ids("imanage", SCOPE, state.last_complete_crawl_id) == set()

    imanage_fake.trash("ACTIVE!2.1")  # Trash: 404
    imanage_fake.trash("ACTIVE!3.1", status=410)
    imanage_fake.revoke("ACTIVE!4.1")  # our account lost access: 403
    report = _full(imanage(), pipeline, store)
    assert sorted(pipeline.index) == ["ACTIVE!1", "ACTIVE!5"]
    reasons = dict(pipeline.deleted)
    assert reasons["ACTIVE!2"] == "sweep: deleted at source"
    assert reasons["ACTIVE!3"] == "sweep: deleted at source"
    assert reasons["ACTIVE!4"] == "sweep: access revoked at source (fail closed)"
    assert report["sync"]["sweep"]["candidates"] == 3
    assert report["sync"]["deleted_count"] == 3
    assert imanage_fake.writes() == []


def test_a_document_that_fails_holds_back_no_deletion_and_is_kept(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    """A fuzz of the connectors: any document error skipped the sweep, so one document that
    never downloads (empty, over the size limit, a 500 each time) kept every deletion at the
    source out of the index for good. The listing was whole: the failed document was listed
    (seen, kept) and the others are swept."""
    _seed(imanage_fake, 4)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.trash("ACTIVE!2.1")
    imanage_fake.inject(r"ACTIVE!3\.1/download$", 500, times=50)
    report = _full(imanage(), pipeline, store)
    assert report["status"] == "partial"
    assert report["sync"]["document_failures"] == 1
    assert report["sync"]["sweep"]["ran"] is True
    assert "ACTIVE!2" not in pipeline.index
    assert "ACTIVE!3" in pipeline.index  # listed: kept as last read, and reported
    assert pipeline.errors
    assert pipeline.errors[0][0] == "ACTIVE!3"


def test_no_sweep_after_a_listing_that_failed(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 4)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.trash("ACTIVE!2.1")
    imanage_fake.total_mode = "high"  # the listing does not reconcile with its total
    report = _full(imanage(), pipeline, store)
    sweep = report["sync"]["sweep"]
    assert sweep["ran"] is False
    assert "error(s) during the crawl" in sweep["skipped_reason"]
    assert "ACTIVE!2" in pipeline.index  # kept until a whole listing proves it gone
    # invariant 9: a failed crawl, which a scheduler sees (it read "partial" and exit 0)
    assert report["status"] == "failed", report
    assert "could not be completed" in report["error"] and "not complete" in report["error"]

    imanage_fake.total_mode = "exact"
    report = _full(imanage(), pipeline, store)
    assert report["sync"]["sweep"]["ran"] is True
    assert "ACTIVE!2" not in pipeline.index


def test_a_crash_mid_crawl_resumes_without_loss_or_duplicates(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 9)
    pipeline = RecordingPipeline()
    _full(imanage({"connector_concurrency": 1}), pipeline, store)
    assert len(pipeline.index) == 9
    imanage_fake.trash("ACTIVE!8.1")
    pipeline.ingested.clear()
    pipeline.crash_after = 5  # pages of 2: checkpoints after 2 and 4 documents

    with pytest.raises(ConsumerCrashError):
        _full(imanage(), pipeline, store)
    assert pipeline.runs[-1].status == "failed"
    state = store.load("imanage", SCOPE)
    assert state.crawl_id is not None
    assert state.crawl_cursor is not None
    assert json.loads(state.crawl_cursor)["full"]["offset"] == 4
    assert store.seen_ids("imanage", SCOPE, state.crawl_id) == {
        "ACTIVE!1",
        "ACTIVE!2",
        "ACTIVE!3",
        "ACTIVE!4",
    }

    pipeline.crash_after = None
    report = _full(imanage(), pipeline, store)  # the same crawl, from its checkpoint
    assert report["sync"]["resumed"] is True
    assert report["sync"]["crawl_id"] == state.crawl_id
    # Nothing lost: every live document is in the index; the trashed one was swept.
    assert sorted(pipeline.index) == [f"ACTIVE!{n}" for n in (1, 2, 3, 4, 5, 6, 7, 9)]
    assert dict(pipeline.deleted)["ACTIVE!8"] == "sweep: deleted at source"
    # Nothing twice before the checkpoint: only the document ingested after the last
    # checkpoint (5) came again, and ingestion is idempotent for it.
    counts = {i: pipeline.ingested.count(i) for i in set(pipeline.ingested)}
    assert counts == {
        "ACTIVE!1": 1,
        "ACTIVE!2": 1,
        "ACTIVE!3": 1,
        "ACTIVE!4": 1,
        "ACTIVE!5": 2,
        "ACTIVE!6": 1,
        "ACTIVE!7": 1,
        "ACTIVE!9": 1,
    }
    # The seen marks of the crashed part survived: only the trashed one was a candidate.
    assert report["sync"]["sweep"]["candidates"] == 1
    assert store.load("imanage", SCOPE).crawl_id is None


def test_delta_persists_its_cursor_and_picks_up_changes(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 3)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    start = json.loads(store.load("imanage", SCOPE).cursor or "{}")["since"]["ACTIVE"]

    changed = imanage_fake.docs["ACTIVE!2.1"]
    changed.content = b"nieuwe inhoud"
    changed.profile.update(edit_date=now_iso(), checksum="SHA256:NEW")
    imanage_fake.add_document("ACTIVE", 4, custom1="10025", custom2="0007", edit_date=now_iso())
    report = _delta(imanage(), pipeline, store)
    assert report["sync"]["outcomes"] == {"updated": 1, "added": 1}
    searches = imanage_fake.calls(r"/documents$")
    assert searches[-1].query["edit_date_from"] < start  # the overlap reaches back
    cursor = store.load("imanage", SCOPE).cursor
    assert cursor
    assert json.loads(cursor)["since"]["ACTIVE"] >= start

    report = _delta(imanage(), pipeline, store)
    assert report["sync"]["outcomes"] == {"unchanged": 2}  # the overlap window only
    assert store.load("imanage", SCOPE).last_delta_at


def test_delta_point_checks(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 4)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.trash("ACTIVE!3.1")
    report = _delta(imanage(), pipeline, store, suspects=["ACTIVE!3", "ACTIVE!1"])
    assert dict(pipeline.deleted) == {"ACTIVE!3": "point check: deleted at source"}
    assert report["sync"]["kept_present"] == ["ACTIVE!1"]
    assert report["sync"]["point_checks"] == {"suspects": 2, "listed": None, "deleted": 1}

    imanage_fake.revoke("ACTIVE!4.1")
    report = _delta(imanage(), pipeline, store, deletion_scan=True)
    # hidden at once; only a full crawl's sweep deletes, under its hold
    assert "ACTIVE!4" not in dict(pipeline.deleted)
    assert dict(pipeline.hidden)["ACTIVE!4"] == (
        "point check: access revoked at source (fail closed)"
    )
    assert report["sync"]["point_checks"]["listed"] == 2


def test_a_deletion_scan_whose_listing_fails_fails_the_run(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 3)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.trash("ACTIVE!2.1")
    imanage_fake.total_mode = "high"  # the whole listing does not reconcile with its total
    report = _delta(imanage(), pipeline, store, deletion_scan=True)
    assert "ACTIVE!2" in pipeline.index  # nothing deleted on a partial list
    # invariant 9: a listing that cannot be completed is a failed crawl, not a shorter list
    assert report["status"] == "failed", report
    assert "deletion suspects" in report["error"]


def test_a_document_gone_before_its_first_read_is_reported(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 2)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.add_document("ACTIVE", 3, custom1="10025", custom2="0007", edit_date=now_iso())
    imanage_fake.inject(r"/documents/ACTIVE!3\.1(/download)?$", 404, times=10, method="GET")
    report = _delta(imanage(), pipeline, store)
    assert "ACTIVE!3" not in pipeline.index
    # listed, then gone before it was read: nothing to delete, and said so
    gone = report["sync"]["gone_unstored"]
    assert [g["external_id"] for g in gone] == ["ACTIVE!3"]
    assert report["sync"]["containers"]["ACTIVE"]["gone"] == 1
    assert report["sync"]["deleted_count"] == 0


def test_source_permissions_reach_the_index(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    imanage_fake.add_document(
        "ACTIVE",
        1,
        custom1="10025",
        custom2="0007",
        default_security="private",
        author="JSMITH",
        security={
            "default_security": "private",
            "acl": [
                {"id": "LITIGATION", "type": "group", "access_level": "read"},
                {"id": "BKOWAL", "type": "user", "access_level": "no_access"},
            ],
        },
    )
    imanage_fake.add_document(
        "ACTIVE",
        2,
        custom1="10025",
        custom2="0007",
        security={
            "default_security": "public",
            "acl": [
                {
                    "id": "FALCON",
                    "type": "group",
                    "access_level": "read",
                    "has_restricted_member": True,
                }
            ],
        },
    )
    imanage_fake.add_document("ACTIVE", 3, custom1="10025", custom2="0007")
    imanage_fake.add_group("LITIGATION", ["AKHAN", "BKOWAL"])
    pipeline = RecordingPipeline()
    report = _full(imanage(), pipeline, store)
    assert report["sync"]["groups"] == 1
    assert pipeline.groups == {
        "imanage:group:litigation": {"imanage:user:akhan", "imanage:user:bkowal"}
    }
    assert pipeline.visible("ACTIVE!1", "imanage:user:akhan")  # through the group
    assert pipeline.visible("ACTIVE!1", "imanage:user:jsmith")  # the author
    assert not pipeline.visible("ACTIVE!1", "imanage:user:bkowal")  # deny beats the group
    assert not pipeline.visible("ACTIVE!1", "imanage:user:someone")  # private
    assert not pipeline.visible("ACTIVE!2", "imanage:user:someone")  # unresolvable: nobody
    assert pipeline.visible("ACTIVE!3", "imanage:user:someone")  # public


def test_profile_based_no_access_beats_the_group_grant(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory, store: SyncStateStore
) -> None:
    fake = netdocuments_fake
    fake.add_group(
        "UG-LIT",
        "Litigation",
        [{"id": "JS1", "email": "john.smith@firm.com"}, {"id": "AK2", "email": "amir@firm.com"}],
    )
    fake.add_document("1000-0000-0001", client="10025", matter="0008")
    fake.lookup[2] = [{"key": "0008", "parent": "10025", "access": "U:john.smith@firm.com|N"}]
    pipeline = RecordingPipeline()
    _full(netdocuments(), pipeline, store)
    assert pipeline.visible("1000-0000-0001", "netdocuments:user:amir@firm.com")
    assert not pipeline.visible("1000-0000-0001", "netdocuments:user:john.smith@firm.com")

    fake.gone["1000-0000-0001"] = 410
    report = _full(netdocuments(), pipeline, store)
    assert pipeline.index == {}
    assert report["sync"]["deleted"] == [
        {"external_id": "1000-0000-0001", "reason": "sweep: deleted at source"}
    ]
    assert fake.writes() == []


def test_progress_is_reported(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 5)
    bar: list[tuple[int, int | None]] = []
    pipeline = RecordingPipeline()
    run_sync(
        "imanage",
        imanage(),
        pipeline,
        store,
        mode="full",
        started_by="svc",
        on_progress=lambda done, total: bar.append((done, total)),
        progress_every=2,
    )
    # the bar moves with every item; the run's row only every second item (and at the end)
    assert [done for done, _ in bar if done][:5] == [1, 2, 3, 4, 5]
    assert bar[-1] == (5, 5)
    assert [p["seen"] for p in pipeline.progress_calls if p["phase"] == "crawl"] == [2, 4]
    assert [p["phase"] for p in pipeline.progress_calls][-1] == "done"
    assert pipeline.progress_calls[-1]["seen"] == 5
    assert pipeline.progress_calls[-1]["total"] == 5
    assert "sweep" in [p["phase"] for p in pipeline.progress_calls]


def test_a_run_started_by_the_caller_is_used(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 1)
    pipeline = RecordingPipeline()
    run = pipeline.start_run("imanage", {"mode": "delta"}, "api")
    report = run_sync(
        "imanage", imanage(), pipeline, store, mode="delta", started_by="api", run=run
    )
    assert report["run_id"] == run.run_id
    assert len(pipeline.runs) == 1


def test_a_source_failure_ends_the_run_with_a_report(sleeps: Sleeps, store: SyncStateStore) -> None:
    fake = FakeIManage()
    _seed(fake, 2)
    with fake.running():
        connector = IManageConnector(
            imanage_settings(fake, imanage_password="wrong-pw-123"), sleep=sleeps
        )
        pipeline = RecordingPipeline()
        try:
            report = _full(connector, pipeline, store)
        finally:
            connector.close()
    assert report["status"] == "failed"
    assert report["sync"]["failed"].startswith("CredentialsError")
    assert "wrong-pw-123" not in json.dumps(report)
    assert report["sync"]["sweep"]["ran"] is False
    assert pipeline.deleted == []


def test_one_sync_per_scope_at_a_time(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    connector = imanage()
    pipeline = RecordingPipeline()
    with store.lock("imanage", connector.scope):
        with pytest.raises(SyncBusyError):
            _delta(connector, pipeline, store)
        assert pipeline.runs == []  # nothing started
        run = pipeline.start_run("imanage", {}, "api")
        with pytest.raises(SyncBusyError):
            _delta(connector, pipeline, store, run=run)
        assert run.status == "failed"  # a run started by the caller is closed, not left open


class _ListConnector:
    """A connector with only FullLoad and an item that is neither document nor failure (the
    export folder yields such entry errors)."""

    source = "folder"
    scope = "test"

    def __init__(self, items: list[object]) -> None:
        self.items = items

    def load_all(self) -> Iterator[object]:
        yield from self.items


class _EntryError:
    external_id = None
    reason = "line 3: not JSON"


def test_plain_full_load_connectors_and_foreign_items(store: SyncStateStore) -> None:
    pipeline = RecordingPipeline()
    doc = SourceDocument(source="folder", external_id="a", client_id="C", matter_id="M", text="x")
    gone = SourceDocument(source="folder", external_id="b", client_id="C", matter_id="M", text="y")
    _full(_ListConnector([doc, gone]), pipeline, store)
    report = _full(_ListConnector([doc, _EntryError()]), pipeline, store)
    assert report["sync"]["sweep"]["ran"] is False  # an entry error: no sweep
    assert "b" in pipeline.index
    report = _full(_ListConnector([doc]), pipeline, store)
    assert report["sync"]["sweep"]["deleted"] == 1  # no point check: the sweep decides
    assert dict(pipeline.deleted) == {"b": "sweep: not seen in a complete crawl"}


# --- issue 12: held sweeps, scope, groups that 404, scheduled full crawls -----------------------


def _full_runs(
    fake: FakeIManage, pipeline: RecordingPipeline, store: SyncStateStore, sleeps: Sleeps,
    **connector: Any,
) -> Callable[[], dict[str, Any]]:
    """Full syncs of ``fake`` into ``pipeline``, sweeping at most 5 % of a library."""
    def full() -> dict[str, Any]:
        source = IManageConnector(imanage_settings(fake), sleep=sleeps, **connector)
        try:
            return run_sync("imanage", source, pipeline, store, mode="full", started_by="t",
                            sweep_max_fraction=0.05)
        finally:
            source.close()

    return full


def test_a_sweep_over_the_fraction_is_held_per_library(
    sleeps: Sleeps, store: SyncStateStore
) -> None:
    fake = FakeIManage(libraries=("ACTIVE", "ARCH"))
    for n in range(1, 41):
        fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    for n in range(1, 11):
        fake.add_document("ARCH", n, custom1="10025", custom2="0007")
    pipeline = RecordingPipeline()
    with fake.running():
        full = _full_runs(fake, pipeline, store, sleeps, page_size=7)
        full()
        fake.trash("ACTIVE!1.1")  # 1 of 40 = 2.5 %: applied
        for n in (1, 2):
            fake.trash(f"ARCH!{n}.1")  # 2 of 10 = 20 %: held
        report = full()
        sweep = report["sync"]["sweep"]
        assert set(dict(pipeline.deleted)) == {"ACTIVE!1"}
        assert sweep["held"]["ids"] == ["ARCH!1", "ARCH!2"]
        assert sweep["held"]["containers"] == {
            "ARCH": {"would_remove": 2, "of": 10, "share": 0.2}}
        assert {x[0] for x in pipeline.held} == {"ARCH!1", "ARCH!2"}
        containers = report["sync"]["containers"]
        assert containers["ACTIVE"] | {"reason": None} == {
            "server_total": 39, "listed": 39, "complete": True, "seen": 39, "ingested": 0,
            "unchanged": 39, "quarantined": 0, "failed": 0, "deleted": 1, "gone": 0,
            "held": 0, "hidden": 0, "unread": 0, "narrowed": 0, "textless": 0,
            "reason": None}
        assert containers["ARCH"]["held"] == 2
        assert containers["ARCH"]["deleted"] == 0
        state = store.load("imanage", SCOPE)
        assert state.held_sweep is not None
        assert state.held_sweep["run_id"] == str(report["run_id"])

        # ARCH!2 comes back before anyone confirms: the confirmation checks again.
        fake.gone.pop(("ARCH", 2))
        from connectors.sync import SweepNotHeldError, confirm_sweep

        connector = IManageConnector(imanage_settings(fake), sleep=sleeps)
        try:
            with pytest.raises(SweepNotHeldError):
                confirm_sweep("imanage", connector, pipeline, store, held_run_id="nope",
                              started_by="p")
            done = confirm_sweep("imanage", connector, pipeline, store,
                                 held_run_id=str(report["run_id"]), started_by="p")
        finally:
            connector.close()
        assert done["sync"]["deleted_count"] == 1
        assert "ARCH!1" not in pipeline.index
        assert "ARCH!2" in pipeline.index
        assert store.load("imanage", SCOPE).held_sweep is None


def test_access_revoked_found_by_a_sweep_is_hidden_at_once_and_its_deletion_held(
    sleeps: Sleeps, store: SyncStateStore
) -> None:
    """A fuzz of the connectors: 3 of 43 documents turned 403 for the service account were
    held with the deletions (over EWALL_SWEEP_MAX_FRACTION) and stayed searchable until
    someone confirmed. A 403 is a verdict on access: the document is hidden at once; its
    deletion waits for the hold like any other (a review: a service account demoted across a
    library would otherwise delete the library in one run). So is a deletion a point check
    confirms (a check of 2026-12-06: a trashed document, invisible in iManage itself, stayed
    searchable by everyone while its deletion was held); a sync that reads it again gives it
    its rules back."""
    fake = FakeIManage()
    for n in range(1, 11):
        fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline = RecordingPipeline()
    with fake.running():
        full = _full_runs(fake, pipeline, store, sleeps)
        full()
        fake.revoke("ACTIVE!1.1")
        fake.revoke("ACTIVE!2.1")
        fake.trash("ACTIVE!3.1")  # a deletion: 1 of 10 is over 5 %, held
        report = full()
    assert dict(pipeline.hidden) == {
        "ACTIVE!1": "sweep: access revoked at source (fail closed)",
        "ACTIVE!2": "sweep: access revoked at source (fail closed)",
        "ACTIVE!3": "sweep: deleted at source",
    }
    assert pipeline.deleted == []
    assert report["sync"]["sweep"]["held"]["ids"] == ["ACTIVE!1", "ACTIVE!2", "ACTIVE!3"]
    for external_id in ("ACTIVE!1", "ACTIVE!2", "ACTIVE!3"):
        assert not pipeline.visible(external_id, "imanage:user:jsmith"), external_id
    with fake.running():
        again = full()  # still refused: hidden already, not counted again
        assert again["sync"]["containers"]["ACTIVE"]["hidden"] == 0
        assert len(pipeline.hidden) == 3
        fake.gone.pop(("ACTIVE", 3))  # restored from the trash: read again, its rules back
        full()
    assert pipeline.visible("ACTIVE!3", "imanage:user:jsmith")


def test_content_refused_while_listed_is_hidden_and_deleted_only_under_the_hold(
    sleeps: Sleeps, store: SyncStateStore
) -> None:
    """Documents listed but whose content answers 403 were deleted at once, outside the
    sweep's hold: a service account that lost access to a library emptied its index in one
    run (and re-embedding it all when access came back). They are hidden at once; the sweep
    deletes them when a point check agrees (a refusal may pass), under its hold; readable
    again, they come back."""
    fake = FakeIManage()
    for n in range(1, 41):
        fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline = RecordingPipeline()
    with fake.running():
        full = _full_runs(fake, pipeline, store, sleeps)
        full()
        # every document refused, and the point checks agree: hidden, their deletion held
        fake.inject(r"ACTIVE!\d+\.\d+(/download|/security)?$", 403, times=400)
        report = full()
        fake.faults.clear()
        assert pipeline.deleted == []
        assert len(pipeline.hidden) == 40
        assert not any(pipeline.visible(f"ACTIVE!{n}", "imanage:user:jsmith")
                       for n in range(1, 41))
        assert report["sync"]["sweep"]["held"]["count"] == 40
        assert report["sync"]["containers"]["ACTIVE"]["hidden"] == 40
        assert report["sync"]["containers"]["ACTIVE"]["held"] == 40

        full()  # readable again: every document back, nothing was deleted
        assert pipeline.deleted == []
        assert all(pipeline.visible(f"ACTIVE!{n}", "imanage:user:jsmith")
                   for n in range(1, 41))

        # a refusal the point check does not confirm (the profile is readable): hidden, kept
        fake.inject(r"ACTIVE!7\.\d+/download$", 403, times=1)
        for n in (41, 42):  # new, never readable: nothing to delete, no share of the hold
            fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
            fake.inject(rf"ACTIVE!{n}\.\d+/download$", 403, times=1)
        report = full()
        assert pipeline.deleted == [] and "held" not in report["sync"]["sweep"]
        assert not pipeline.visible("ACTIVE!7", "imanage:user:jsmith")
        full()
        assert pipeline.visible("ACTIVE!7", "imanage:user:jsmith")  # read again: back

        # a refusal the point check confirms, 1 of 42: deleted under the hold
        fake.inject(r"ACTIVE!8\.\d+(/download|/security)?$", 403, times=10)
        report = full()
    assert dict(pipeline.deleted) == {"ACTIVE!8": "sweep: access revoked at source (fail closed)"}
    assert "held" not in report["sync"]["sweep"]


def test_an_offset_shift_mid_crawl_makes_the_crawl_incomplete_not_shorter(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    for n in range(10, 20):
        imanage_fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    added: list[int] = []

    def add_one(fake: FakeIManage) -> None:
        if not added:  # a document filed mid-crawl ahead of every other: offsets shift
            added.append(1)
            fake.add_document("ACTIVE", 1, custom1="10025", custom2="0007")

    imanage_fake.on_search_page = add_one
    imanage_fake.trash("ACTIVE!19.1")
    report = _full(imanage(), pipeline, store)
    assert report["sync"]["complete"] is False
    assert report["sync"]["sweep"]["ran"] is False
    assert "ACTIVE!19" in pipeline.index  # not deleted on an incomplete crawl
    assert {f"ACTIVE!{n}" for n in range(10, 19)} <= set(pipeline.index)
    imanage_fake.on_search_page = None
    report = _full(imanage(), pipeline, store)  # the next complete crawl settles it
    assert report["sync"]["complete"] is True
    assert "ACTIVE!1" in pipeline.index
    assert "ACTIVE!19" not in pipeline.index


def test_a_document_moved_out_of_the_configured_cabinet_is_removed(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory,
    store: SyncStateStore
) -> None:
    """A document moved to a cabinet outside the scope leaves the index: the point check
    must say "out of scope", not "present", or the sweep would keep it forever."""
    fake = netdocuments_fake
    for n in range(1, 5):
        fake.add_document(f"1000-0000-000{n}", client="10025", matter="0007")
    pipeline = RecordingPipeline()

    def full() -> dict[str, Any]:
        return _full(netdocuments({"netdocuments_cabinets": "NG-AB12CD34"}), pipeline, store)

    full()
    fake.move("1000-0000-0001", "NG-ARCHIVE1")  # /info does not say where it is filed
    full()
    assert "1000-0000-0001" not in pipeline.index
    assert "moved out of" in dict(pipeline.deleted)["1000-0000-0001"]
    assert "twice" in dict(pipeline.deleted)["1000-0000-0001"]
    fake.info_locations = True  # a tenant whose /info names the cabinet
    fake.move("1000-0000-0002", "NG-ARCHIVE1")
    full()
    assert dict(pipeline.deleted)["1000-0000-0002"] == (
        "sweep: moved out of the configured scope")
    assert sorted(pipeline.index) == ["1000-0000-0003", "1000-0000-0004"]
    # A point-check suspect whose place is unknown is kept: only a complete listing decides
    # (here the delta's security pass cannot complete its listing: the total never adds up).
    fake.info_locations = False
    fake.move("1000-0000-0003", "NG-ARCHIVE1")
    fake.total_mode = "high"
    report = _delta(netdocuments({"netdocuments_cabinets": "NG-AB12CD34"}), pipeline, store,
                    suspects=["1000-0000-0003"])
    assert report["sync"]["security_pass"]["complete"] is False
    assert "1000-0000-0003" in pipeline.index
    # The next delta's pass lists the scope completely: what it misses is hidden at once
    # (a full crawl's sweep deletes it).
    fake.total_mode = "exact"
    report = _delta(netdocuments({"netdocuments_cabinets": "NG-AB12CD34"}), pipeline, store)
    assert report["sync"]["security_pass"]["hidden"] == 1
    assert "security pass" in dict(pipeline.hidden)["1000-0000-0003"]
    assert not pipeline.visible("1000-0000-0003", "netdocuments:user:anyone")


def test_groups_endpoint_404_is_a_warning_not_a_failed_run(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 2)
    imanage_fake.groups_endpoint = False
    pipeline = RecordingPipeline()
    report = _full(imanage(), pipeline, store)
    assert report["status"] == "succeeded"
    assert report["sync"]["failed"] is None
    assert report["sync"]["groups"] is None
    assert any("group membership not available" in w for w in report["sync"]["warnings"])
    assert pipeline.warnings
    assert sorted(pipeline.index) == ["ACTIVE!1", "ACTIVE!2"]


def test_a_delta_becomes_a_full_crawl_when_one_is_due(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    _seed(imanage_fake, 3)
    pipeline = RecordingPipeline()
    report = _delta(imanage(), pipeline, store, full_crawl_every_s=3600)
    assert report["sync"]["mode"] == "full"
    assert report["sync"]["promoted_to_full"] == "no complete full crawl yet"
    imanage_fake.trash("ACTIVE!3.1")
    report = _delta(imanage(), pipeline, store, full_crawl_every_s=3600)
    assert report["sync"]["mode"] == "delta"  # the full crawl is recent
    assert "ACTIVE!3" in pipeline.index  # a delta does not see deletions
    state = store.load("imanage", SCOPE)
    state.last_complete_crawl_at = "2020-01-01T00:00:00Z"
    store.save("imanage", SCOPE, state)
    report = _delta(imanage(), pipeline, store, full_crawl_every_s=3600,
                    sweep_max_fraction=1.0)
    assert report["sync"]["mode"] == "full"
    assert "EWALL_FULL_CRAWL_EVERY" in report["sync"]["promoted_to_full"]
    assert "ACTIVE!3" not in pipeline.index


def test_netdocuments_sweeps_are_weighed_per_cabinet(
    netdocuments_fake: FakeNetDocuments, netdocuments: NetDocumentsFactory,
    store: SyncStateStore
) -> None:
    """2 of 64 documents is under 5 % of the scope, but half of the small cabinet: held."""
    fake = netdocuments_fake
    fake.cabinets.append({**fake.cabinets[0], "id": "NG-SMALL001", "name": "Small"})
    for n in range(60):
        fake.add_document(f"1000-0000-{n:04d}", client="10025", matter="0007")
    for n in range(4):
        fake.add_document(f"2000-0000-{n:04d}", cabinet="NG-SMALL001", client="10025",
                          matter="0007")
    pipeline = RecordingPipeline()
    _full(netdocuments(page_size=50), pipeline, store, sweep_max_fraction=0.05)
    fake.gone["2000-0000-0000"] = 404
    fake.gone["2000-0000-0001"] = 404
    fake.gone["1000-0000-0000"] = 404  # 1 of 60 in the big cabinet: applied
    report = _full(netdocuments(page_size=50), pipeline, store, sweep_max_fraction=0.05)
    held = report["sync"]["sweep"]["held"]
    assert held["containers"] == {"NG-SMALL001": {"would_remove": 2, "of": 4, "share": 0.5}}
    assert dict(pipeline.deleted) == {"1000-0000-0000": "sweep: deleted at source"}
    assert report["sync"]["containers"]["NG-SMALL001"]["held"] == 2
    assert report["sync"]["containers"]["NG-AB12CD34"]["deleted"] == 1


def test_documents_ingested_visible_to_nobody_are_reported(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    """Permissions that cannot be read hide a document from everyone (fail closed). Before,
    the run said 'succeeded' with no warning: a tenant without the permissions endpoint
    would lose its whole corpus from search unnoticed."""
    _seed(imanage_fake, 3)
    imanage_fake.security_missing.update({("ACTIVE", 1), ("ACTIVE", 2)})
    report = _full(imanage(), RecordingPipeline(), store)
    [warning] = [w for w in report["sync"]["warnings"] if "visible to nobody" in w]
    assert warning.startswith("2 document(s) ingested visible to nobody"), warning
    assert "ACTIVE!1" in warning and "ACTIVE!2" in warning and "ACTIVE!3" not in warning


def test_a_document_a_complete_listing_skipped_is_hidden_not_kept_as_it_was(
    imanage_fake: FakeIManage, imanage: ImanageFactory, store: SyncStateStore
) -> None:
    """A deletion between two pages shifts the offsets: the listing skips one document, its
    counts still add up to the total and the crawl is complete. The sweep's point check found
    it present and kept it with the access it was indexed with, though its security was
    never read (a fuzz narrowed it to one lawyer first: the others kept seeing it). It is
    hidden until a listing reads it again; nothing is deleted."""
    _seed(imanage_fake, 15)
    pipeline = RecordingPipeline()
    _full(imanage(), pipeline, store)
    imanage_fake.page_cap = 5
    served: list[int] = []

    def delete_after_the_first_page(fake: FakeIManage) -> None:
        served.append(1)
        if len(served) == 1:
            fake.trash("ACTIVE!1.1")

    imanage_fake.on_search_page = delete_after_the_first_page
    report = _full(imanage(), pipeline, store)
    assert report["sync"]["complete"] is True
    (skipped,) = report["sync"]["kept_present"]  # the row the shift moved onto page 1
    assert dict(pipeline.hidden)[skipped].startswith("sweep: present at source but missed")
    assert skipped not in dict(pipeline.deleted)
    assert set(dict(pipeline.deleted)) == {"ACTIVE!1"}
