"""iManage Work connector against the local fake (real HTTP): the Sync API (documents and
trustees changed since a cursor), in place of the search listing."""

from __future__ import annotations

import json

import pytest

from connectors.base import DocumentFailure, SourceDocument
from connectors.imanage.connector import IManageConnector
from tests.connectors.conftest import Sleeps, imanage_settings
from tests.connectors.recording import by_id, documents
from tests.connectors.test_imanage import PRIVATE_SECURITY
from tests.fakes.imanage import FakeIManage


def _sync_fake() -> FakeIManage:
    fake = FakeIManage(sync_api=True)
    for n in range(1, 6):
        fake.add_document(
            "ACTIVE",
            n,
            custom1="10025",
            custom2="0007",
            default_security="private",
            security=PRIVATE_SECURITY,
            denied=[{"trustee_id": "SPM_BLOCKED", "trustee_type": "user"}] if n == 2 else None,
        )
    return fake


def _connector(fake: FakeIManage, sleeps: Sleeps) -> IManageConnector:
    return IManageConnector(imanage_settings(fake), sleep=sleeps, sync_page_size=2)


def _full_crawl(fake: FakeIManage, sleeps: Sleeps) -> tuple[list[object], IManageConnector]:
    """Every item of one full crawl against the running fake, and the (closed) connector."""
    with fake.running():
        connector = _connector(fake, sleeps)
        try:
            return list(connector.crawl_full(None)), connector
        finally:
            connector.close()


def test_sync_api_crawl_with_cursors_and_trustees(sleeps: Sleeps) -> None:
    fake = _sync_fake()
    items, _ = _full_crawl(fake, sleeps)
    docs = by_id(items)
    assert sorted(docs) == [f"ACTIVE!{n}" for n in range(1, 6)]
    crawl_calls = fake.calls(r"/sync/documents/crawl$")
    assert [c.body.get("cursor") for c in crawl_calls] == [None, "c0-2", "c0-4"]
    assert not fake.calls(r"/documents$")  # no search when the Sync API is there
    assert not fake.calls(r"/security$")  # trustees come in bulk
    acl = docs["ACTIVE!1"].acl
    assert acl is not None
    assert acl.allow == {"imanage:user:jsmith", "imanage:group:litigation"}
    assert acl.deny == {"imanage:user:bkowal"}
    two = docs["ACTIVE!2"].acl
    assert two is not None
    assert two.deny == {"imanage:user:bkowal", "imanage:user:spm_blocked"}
    assert docs["ACTIVE!1"].author == "JSMITH"  # author arrived as {"id": "JSMITH"}
    assert fake.writes() == []


@pytest.mark.parametrize(("empties", "complete"), [(3, True), (4, False)])
def test_empty_pages_that_carry_a_cursor(sleeps: Sleeps, empties: int, complete: bool) -> None:
    """Up to three empty pages with a cursor are followed; a fourth in a row means the
    listing cannot be completed: a failed crawl, never an empty (deleting) one."""
    fake = _sync_fake()
    fake.empty_cursor_pages = empties
    items, connector = _full_crawl(fake, sleeps)
    failures = [i for i in items if isinstance(i, DocumentFailure)]
    if complete:
        assert sorted(by_id(items)) == [f"ACTIVE!{n}" for n in range(1, 6)]
        assert not failures
    else:
        assert not documents(items)
        assert failures and "empty pages" in failures[0].reason
    assert connector.listings["ACTIVE"]["complete"] is complete


@pytest.mark.parametrize("expiry_status", [410, 400])
def test_expired_sync_cursor_restarts_the_endpoint(sleeps: Sleeps, expiry_status: int) -> None:
    fake = _sync_fake()
    fake.cursor_expiry_status = expiry_status
    with fake.running():
        connector = _connector(fake, sleeps)
        try:
            delivered: list[str] = []
            for item in connector.crawl_full(None):
                if isinstance(item, SourceDocument):
                    delivered.append(item.external_id)
                    if len(delivered) == 2:
                        fake.expire_cursors()  # the next page's cursor is now stale
        finally:
            connector.close()
    assert set(delivered) == {f"ACTIVE!{n}" for n in range(1, 6)}
    assert connector.sync_restarts == ["documents/crawl"]
    statuses = [c.status for c in fake.calls(r"/sync/documents/crawl$")]
    assert expiry_status in statuses


def test_resume_from_a_stored_sync_cursor_that_expired(sleeps: Sleeps) -> None:
    fake = _sync_fake()
    with fake.running():
        first = _connector(fake, sleeps)
        checkpoint = None
        for item in first.crawl_full(None):
            if isinstance(item, str):
                checkpoint = item
                break
        first.close()
        assert checkpoint
        assert json.loads(checkpoint)["full"]["sync"] == "c0-2"
        fake.expire_cursors()
        second = _connector(fake, sleeps)
        try:
            docs = by_id(list(second.crawl_full(checkpoint)))
        finally:
            second.close()
    assert sorted(docs) == [f"ACTIVE!{n}" for n in range(1, 6)]
