"""Persisted sync state on a real PostgreSQL (sync_state, sync_seen)."""

from __future__ import annotations

import pytest

from connectors.state import SyncBusyError, SyncState, SyncStateStore
from tests.connectors.conftest import DbFixture


def test_state_round_trip(db: DbFixture) -> None:
    store = SyncStateStore(db.database)
    assert store.load("imanage", "libraries=*") == SyncState()
    state = SyncState(
        cursor='{"v": 1}',
        crawl_id="c1",
        crawl_errors=2,
        crawl_error_reasons=["x"],
        watermark="2025-01-08T12:00:00Z",
    )
    store.save("imanage", "libraries=*", state)
    assert store.load("imanage", "libraries=*") == state
    state.crawl_id = None
    store.save("imanage", "libraries=*", state)  # upsert
    assert store.load("imanage", "libraries=*").crawl_id is None
    assert store.load("imanage", "other") == SyncState()  # scopes are separate


def test_unknown_keys_are_ignored() -> None:
    assert SyncState.from_json({"cursor": "c", "later_field": 1}) == SyncState(cursor="c")
    assert SyncState.from_json(None) == SyncState()


def test_checkpoint_writes_seen_ids_and_state_together(db: DbFixture) -> None:
    store = SyncStateStore(db.database)
    state = SyncState(crawl_id="c1", crawl_cursor="p1")
    store.checkpoint("nd", "s", state, ["a", "b"])
    state.crawl_cursor = "p2"
    store.checkpoint("nd", "s", state, ["b", "c"])  # "b" again: no duplicate, no error
    store.mark_seen("nd", "s", "c2", ["z"])
    assert store.seen_ids("nd", "s", "c1") == {"a", "b", "c"}
    assert store.seen_count("nd", "s", "c1") == 3
    assert store.load("nd", "s").crawl_cursor == "p2"
    store.forget_crawls("nd", "s", keep="c2")
    assert store.seen_ids("nd", "s", "c1") == set()
    assert store.seen_ids("nd", "s", "c2") == {"z"}
    store.forget_crawls("nd", "s")
    assert store.seen_ids("nd", "s", "c2") == set()


def test_one_sync_per_source_and_scope(db: DbFixture) -> None:
    store = SyncStateStore(db.database)
    with store.lock("imanage", "a"):
        with pytest.raises(SyncBusyError), store.lock("imanage", "a"):
            pass
        with store.lock("imanage", "b"):  # another scope is independent
            pass
    with store.lock("imanage", "a"):  # released
        pass
