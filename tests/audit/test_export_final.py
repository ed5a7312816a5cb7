"""An export of a time window says whether the window is final: whether a search resolved
in it could still be recorded. A fuzz exported windows just after they ended and missed rows
of searches still running, which committed later with an earlier ``at``. A search is now
recorded within APPEND_LAG_MAX_S of its ``at`` or not at all, so a window that ended
FINAL_AFTER_S ago is final, and the export says from when."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from app.audit import chain
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, one_matter_firm

LAWYER = "alice@firm.nl"
TEXT = "octrooi inbreuk retard-tablet"


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    return one_matter_firm(client, auth, LAWYER, {"d1": TEXT})


def test_a_search_recorded_too_late_returns_nothing_and_leaves_no_row(
    firm: Firm, client: TestClient, auth: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    compliance = auth("co@firm.nl", "compliance")
    before = client.get("/v1/audit/export", headers=compliance).text.splitlines()
    monkeypatch.setattr(chain, "APPEND_LAG_MAX_S", -1.0)  # every search is "too late"
    late = client.post("/v1/search", json={"query": TEXT}, headers=auth(LAWYER, "lawyer"))
    assert late.status_code == 503, late.text
    assert late.json()["error"]["code"] == "audit_unavailable"
    assert client.get("/v1/audit/export", headers=compliance).text.splitlines() == before


def test_an_export_says_whether_its_window_is_final(
    firm: Firm, client: TestClient, auth: Tokens
) -> None:
    found = firm.search(LAWYER, TEXT)
    compliance = auth("co@firm.nl", "compliance")
    now = datetime.now(UTC)
    old = {
        "since": (now - timedelta(days=2)).isoformat(),
        "until": (now - timedelta(days=1)).isoformat(),
    }
    recent = {"since": (now - timedelta(hours=1)).isoformat(), "until": now.isoformat()}
    for params, final in ((old, "true"), (recent, "false"), ({}, "false")):
        r = client.get("/v1/audit/export", params=params, headers=compliance)
        assert r.status_code == 200, r.text
        assert r.headers["X-Audit-Window-Final"] == final, params
        before = datetime.fromisoformat(r.headers["X-Audit-Final-Before"])
        assert before <= datetime.now(UTC) - timedelta(seconds=chain.FINAL_AFTER_S)
    rows = ok(client.get("/v1/audit/retrievals", headers=compliance))["items"]
    exported = client.get("/v1/audit/export", params=recent, headers=compliance).text
    assert (
        [json.loads(x)["retrieval_id"] for x in exported.splitlines()]
        == [found["retrieval_id"]]
        == [rows[0]["retrieval_id"]]
    )


def test_an_append_still_to_commit_holds_the_final_instant_back(
    firm: Firm, client: TestClient, auth: Tokens, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's row may commit long after its append (a commit waiting on a synchronous
    standby): the clock alone called its window final. While an append holds the chain head
    (here a transaction of the owner's, as a stalled commit would), the instant stops at the
    last committed row's time less the margin; after it, the clock rules again. Read through
    the head row itself, it needs no privilege over other sessions (a login that is not the
    app role sees no other session's transaction)."""
    monkeypatch.setattr(chain, "FINAL_AFTER_S", 1.0)
    firm.search(LAWYER, TEXT)
    compliance = auth("co@firm.nl", "compliance")
    last = datetime.fromisoformat(
        ok(client.get("/v1/audit/retrievals", headers=compliance))["items"][0]["at"]
    )
    owner = create_engine(db.superuser_url)
    ahead = "SELECT clock_timestamp() > CAST(:at AS timestamptz) + interval '2 seconds'"

    def final() -> datetime:
        r = client.get("/v1/audit/export", headers=compliance)
        assert r.status_code == 200, r.text
        return datetime.fromisoformat(r.headers["X-Audit-Final-Before"])

    try:
        with owner.connect() as probe:  # wait until the clock is past the row (a condition)
            while not probe.execute(text(ahead), {"at": last}).scalar_one():
                probe.rollback()
        head = "SELECT 1 FROM audit_heads WHERE chain = 'retrievals'"
        with owner.connect() as holder:
            holder.execute(text("UPDATE audit_heads SET seq = seq WHERE chain = 'retrievals'"))
            assert final() <= last - timedelta(seconds=1)
            holder.rollback()
        assert final() > last
        # a reader's share lock on the head is no append (review: it held the instant back)
        with owner.connect() as reader:
            reader.execute(text(head + " FOR SHARE"))
            assert final() > last
            reader.rollback()
        # a key-share lock beside an append (its xmax then names no appender: review)
        with owner.connect() as reader, owner.connect() as holder:
            reader.execute(text(head + " FOR KEY SHARE"))
            holder.execute(text("UPDATE audit_heads SET seq = seq WHERE chain = 'retrievals'"))
            assert final() <= last - timedelta(seconds=1)
            holder.rollback()
            reader.rollback()
    finally:
        owner.dispose()
