"""The console's chain banner while another process appends to the audit chains.

A chain verifies when its rows and its head describe one state. The banner read a chain's
head and then its rows in separate statements of a READ COMMITTED transaction: an append
committed in between (any search, wall change or gate of any API process) left a row past
the head it had read, and compliance was shown "AUDIT CHAIN BROKEN ... rows removed from
the end, or the head was altered" about an intact log. The API's verify and the CLI read in
one snapshot; the banner must too.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection, create_engine, text

from app.audit import chain
from app.console import chain_watch
from app.db.engine import sqlalchemy_url
from tests.conftest import DbHandle
from tests.console.conftest import COMPLIANCE, console_client, sign_in
from tests.helpers import Firm, lock_waiters, policy_event


def _wait_for_a_lock_waiter(db: DbHandle) -> None:
    deadline = time.monotonic() + 60  # a bound on a condition, not a pause
    while not lock_waiters(db):
        assert time.monotonic() < deadline, "the banner never reached the policy rows"
        time.sleep(0.02)


# the table a page load is made to wait on (a table name cannot be a bind value: whole
# statements, written out)
LOCKS = {
    "policy_events": "LOCK TABLE policy_events IN ACCESS EXCLUSIVE MODE",
    "audit_retrieval_results": "LOCK TABLE audit_retrieval_results IN ACCESS EXCLUSIVE MODE",
}


def _banner_beside(
    db: DbHandle, client: TestClient, table: str, append: Callable[[Connection], None]
) -> str:
    """The console banner's words, from a page load that waits on a lock of ``table`` (one
    of LOCKS) while ``append`` commits another process's row (as superuser, the app's own
    append)."""
    pages: list[Any] = []
    su_engine = create_engine(sqlalchemy_url(db.superuser_url))
    try:
        with su_engine.connect() as su:
            su.execute(text(LOCKS[table]))
            reader = threading.Thread(target=lambda: pages.append(client.get("/console/audit")))
            reader.start()
            _wait_for_a_lock_waiter(db)
            append(su)
            su.commit()
            reader.join(60)
            assert not reader.is_alive()
    finally:
        su_engine.dispose()
    page = pages[0]
    assert page.status_code == 200, page.text
    banner = page.text[page.text.index('id="chain-banner"') : page.text.index("</section>")]
    return " ".join(re.sub("<[^>]+>", "", banner).split())


def test_banner_is_not_broken_by_an_append_that_commits_while_it_reads(
    firm: Firm, db: DbHandle
) -> None:
    firm.search(COMPLIANCE, "lekkage")
    client = console_client(firm)
    assert sign_in(client, firm.auth, COMPLIANCE, "compliance").status_code == 303

    def another_policy_change(su: Connection) -> None:  # the app's own append, another host
        chain.append_policy_event(
            su,
            policy_event(object_id="W-elsewhere", reason="another host", policy_version=99),
        )

    # the banner reads the policy chain's head, then waits here for its rows
    words = _banner_beside(db, client, "policy_events", another_policy_change)
    assert "AUDIT CHAIN BROKEN" not in words, words
    assert "Audit chains verified" in words, words
    # and the log is intact: a verification now, in one snapshot, agrees
    with db.database.engine.connect() as conn:
        from app.db.engine import begin_snapshot

        begin_snapshot(conn)
        assert chain.verify_all(conn)["ok"]


def test_banner_from_a_full_checks_position_is_not_broken_by_an_append_meanwhile(
    firm: Firm, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race on a load that verifies from the position of a full verification: it
    checks the row there and reads the retrievals head, then waits for their results."""
    firm.search(COMPLIANCE, "lekkage")
    client = console_client(firm)
    assert sign_in(client, firm.auth, COMPLIANCE, "compliance").status_code == 303
    assert "Audit chains verified" in client.get("/console/audit").text  # the full check
    # later loads verify from its position (a log this small is otherwise read in full)
    monkeypatch.setattr(chain_watch, "INLINE_FULL_ROWS", 0)
    firm.search(COMPLIANCE, "huur")
    entry = chain.Retrieval(
        retrieval_id=uuid.uuid4(),
        at=chain.now_utc(),
        person_id=COMPLIANCE,
        roles=["compliance"],
        purpose="search",
        query="another host",
        mode="hybrid",
        k=10,
        filters={},
        allowed_wall_groups=[],
        source_principals=[COMPLIANCE],
        policy_version=1,
        model=None,
        prompt_version=None,
        strategy="exact",
        took_ms=1.0,
        result_count=0,
    )

    def another_search(su: Connection) -> None:  # another process's search, committed now
        chain.forget_stored_sets()  # the sets travel with the row: su commits them
        chain.append_retrieval(su, entry, [])

    words = _banner_beside(db, client, "audit_retrieval_results", another_search)
    assert "AUDIT CHAIN BROKEN" not in words, words
    assert "retrievals: verified up to sequence 2 (in full through 1, 1 row after it now)" in (
        words
    ), words
