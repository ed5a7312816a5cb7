"""A sync whose lock went with its connection (connectors/fence.py), on a real PostgreSQL: the
backend that holds the lock is terminated in the middle of a crawl. A sync that another one
took over from writes no more state; one that nobody took over from takes its lock again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError

from connectors.base import SourceDocument
from connectors.fence import SyncFenceLostError
from connectors.state import SyncBusyError, SyncState, SyncStateStore
from connectors.sync import run_sync
from tests.conftest import DbHandle
from tests.connectors.conftest import ImanageFactory
from tests.connectors.recording import Outcome, RecordingPipeline, Run
from tests.fakes.imanage import FakeIManage
from tests.helpers import superuser_rows
from tests.replication import wait_for

SCOPE = "libraries=*"
_ADVISORY = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


class _Interrupted(RecordingPipeline):
    """Runs ``at[n]`` before it ingests its n-th document (counted from 1)."""

    def __init__(self, at: dict[int, Callable[[], None]]) -> None:
        super().__init__()
        self.at = at
        self.count = 0

    def ingest(self, run: Run, doc: SourceDocument) -> Outcome:
        self.count += 1
        action = self.at.pop(self.count, None)
        if action is not None:
            action()
        return super().ingest(run, doc)


def _lock_backends(db: DbHandle) -> list[int]:
    return [int(row[0]) for row in superuser_rows(db, _ADVISORY)]


def _drop_lock_connection(db: DbHandle) -> int:
    """Terminate the backend that holds the sync's lock, and wait until it is gone (with it,
    the lock); returns its pid."""
    [pid] = _lock_backends(db)
    assert superuser_rows(db, "SELECT pg_terminate_backend(%s, 120000)", pid) == [(True,)]
    assert _lock_backends(db) == []
    return pid


def _full(connector: Any, pipeline: RecordingPipeline, store: SyncStateStore,
          **kw: Any) -> dict[str, Any]:
    return run_sync("imanage", connector, pipeline, store, mode="full", started_by="svc-test",
                    sweep_max_fraction=1.0, **kw)


def _seed(fake: FakeIManage, count: int) -> None:
    for n in range(1, count + 1):
        fake.add_document("ACTIVE", n, custom1="10025", custom2="0007")


def test_a_sync_another_took_over_from_writes_no_more_state(
    db: DbHandle, imanage_fake: FakeIManage, imanage: ImanageFactory
) -> None:
    _seed(imanage_fake, 9)
    store = SyncStateStore(db.database)
    second: dict[str, Any] = {}

    def take_over() -> None:
        # The first sync's lock connection drops after its checkpoint at 2 documents; a
        # second sync of the same scope starts (a full crawl afresh) and finishes.
        _drop_lock_connection(db)
        second["report"] = _full(imanage(), RecordingPipeline(), store, reread=True)
        second["state"] = store.load("imanage", SCOPE)

    first = _Interrupted({3: take_over})
    report = _full(imanage({"connector_concurrency": 1}), first, store)  # pages of 2

    assert second["report"]["sync"]["complete"] is True
    assert second["report"]["status"] != "failed"
    # The first sync stopped at its first state write after the takeover (the checkpoint
    # after 4 documents), as a failed run with a report; it swept nothing.
    assert report["status"] == "failed"
    assert report["sync"]["failed"].startswith("SyncFenceLostError: ")
    assert "lost its lock to another sync" in report["sync"]["failed"]
    assert report["sync"]["sweep"]["ran"] is False
    assert first.ingested == [f"ACTIVE!{n}" for n in (1, 2, 3, 4)]
    assert first.deleted == []
    # The state is the second sync's, as it left it: no cursor, crawl or seen id of the first.
    after = store.load("imanage", SCOPE)
    assert after == second["state"]
    assert after.crawl_id is None
    assert after.last_complete_crawl_id == second["report"]["sync"]["crawl_id"]
    assert after.last_complete_crawl_id != report["sync"]["crawl_id"]
    assert superuser_rows(db, "SELECT count(*) FROM sync_seen") == [(0,)]
    assert _lock_backends(db) == []  # both let their lock go
    # The next sync runs as usual.
    assert _full(imanage(), RecordingPipeline(), store)["sync"]["complete"] is True


def test_a_sync_nobody_took_over_from_takes_its_lock_again(
    db: DbHandle, imanage_fake: FakeIManage, imanage: ImanageFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _seed(imanage_fake, 9)
    store = SyncStateStore(db.database)
    dropped: list[int] = []
    refused = RecordingPipeline()

    def another_sync() -> None:
        # after the checkpoint at 4 documents: the first sync holds its lock again
        [pid] = _lock_backends(db)
        assert pid not in dropped
        with pytest.raises(SyncBusyError):
            _full(imanage(), refused, store)

    first = _Interrupted({3: lambda: dropped.append(_drop_lock_connection(db)),
                          5: another_sync})
    with caplog.at_level(logging.WARNING, logger="ewall.connectors.fence"):
        report = _full(imanage({"connector_concurrency": 1}), first, store)

    assert first.at == {}  # both ran
    assert [r.getMessage() for r in caplog.records if r.name == "ewall.connectors.fence"] == [
        "the lock of a sync was lost (its connection dropped); taking it again"
    ]
    assert refused.runs == []
    assert report["status"] != "failed"
    assert report["sync"]["complete"] is True
    assert report["sync"]["sweep"]["ran"] is True
    assert sorted(first.index) == [f"ACTIVE!{n}" for n in range(1, 10)]
    state = store.load("imanage", SCOPE)
    assert state.crawl_id is None
    assert state.last_complete_crawl_id == report["sync"]["crawl_id"]
    assert _lock_backends(db) == []


def test_a_store_whose_lock_was_taken_over_refuses_every_call(db: DbHandle) -> None:
    store = SyncStateStore(db.database)
    with store.lock("nd", "s") as first:
        first.checkpoint("nd", "s", SyncState(crawl_id="c1", crawl_cursor="p1"), ["a"])
        _drop_lock_connection(db)
        with store.lock("nd", "s") as second:
            second.checkpoint("nd", "s", SyncState(crawl_id="c2", crawl_cursor="q1"), ["b"])
            with pytest.raises(SyncFenceLostError, match="another sync holds it now"):
                first.save("nd", "s", SyncState(crawl_id="c1", crawl_cursor="p2"))
        # the second let go; the first may take the lock again, but its token is stale
        for call in (
            lambda: first.checkpoint("nd", "s", SyncState(crawl_id="c1"), ["c"]),
            lambda: first.mark_seen("nd", "s", "c1", ["d"]),
            lambda: first.forget_crawls("nd", "s"),
            lambda: first.seen_ids("nd", "s", "c2"),
        ):
            with pytest.raises(SyncFenceLostError, match="lost its lock to another sync"):
                call()
        with pytest.raises(ValueError, match="writes no state of"):
            first.save("nd", "other scope", SyncState())
    assert store.load("nd", "s") == SyncState(crawl_id="c2", crawl_cursor="q1")
    assert store.seen_ids("nd", "s", "c1") == {"a"}
    assert store.seen_ids("nd", "s", "c2") == {"b"}
    assert _lock_backends(db) == []


def test_a_lock_that_stays_is_not_taken_again(
    db: DbHandle, caplog: pytest.LogCaptureFixture
) -> None:
    store = SyncStateStore(db.database)
    with caplog.at_level(logging.DEBUG, logger="ewall.connectors.fence"), \
            store.lock("nd", "s") as held:
        [pid] = _lock_backends(db)
        for n in range(3):
            held.save("nd", "s", SyncState(cursor=str(n)))
        assert _lock_backends(db) == [pid]
    assert [r for r in caplog.records if r.name == "ewall.connectors.fence"] == []
    assert store.load("nd", "s").cursor == "2"


def test_a_lock_lost_after_the_last_write_ends_the_sync_quietly(db: DbHandle) -> None:
    store = SyncStateStore(db.database)
    with store.lock("nd", "s") as held:
        held.save("nd", "s", SyncState(cursor="last"))
        _drop_lock_connection(db)  # the release finds its connection gone: nothing to undo
    with store.lock("nd", "s") as after:
        assert after.load("nd", "s").cursor == "last"
    assert _lock_backends(db) == []


def test_a_lock_whose_question_fails_on_a_live_session_stays_out_of_the_pool(
    db: DbHandle,
) -> None:
    # A statement that failed on the lock's connection (its session alive, the lock held)
    # makes the next "do I still hold it?" fail. That is no lost lock: asked again after a
    # rollback, the sync keeps it. Before, the connection went back to the pool holding the
    # lock: taken "again" (on that same pooled session, counted twice) and released once, it
    # outlived the sync in the pool, and a sync of the scope from another session was refused
    # as busy for as long as the pooled session lived.
    store = SyncStateStore(db.database)
    with store.lock("nd", "s") as held:
        [pid] = _lock_backends(db)
        lock = held.held
        assert lock is not None and lock._conn is not None
        with pytest.raises(DBAPIError):
            lock._conn.exec_driver_sql("SELECT 1 / 0")  # left failed, not rolled back
        held.save("nd", "s", SyncState(cursor="after"))
        assert _lock_backends(db) == [pid]
    assert _lock_backends(db) == []
    with store.lock("nd", "s") as again:
        assert again.load("nd", "s").cursor == "after"
    assert _lock_backends(db) == []


def test_a_take_that_fails_after_the_lock_was_granted_leaves_no_lock_in_the_pool(
    db: DbHandle,
) -> None:
    # The commit after pg_try_advisory_lock fails (here: interrupted as it begins); the
    # lock was granted on the session. Before, the connection went back to the pool with
    # it, and every later sync of the scope from another session was refused as busy.
    store = SyncStateStore(db.database)
    engine = db.database.engine
    interrupted: list[bool] = []

    def interrupt(_conn: Any) -> None:
        if not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt

    event.listen(engine, "commit", interrupt)
    try:
        with pytest.raises(KeyboardInterrupt), store.lock("nd", "s"):
            pass
    finally:
        event.remove(engine, "commit", interrupt)
    assert interrupted
    wait_for(lambda: _lock_backends(db) == [], "the lock's session to end")
    with store.lock("nd", "s") as held:
        held.save("nd", "s", SyncState(cursor="1"))
    assert _lock_backends(db) == []
