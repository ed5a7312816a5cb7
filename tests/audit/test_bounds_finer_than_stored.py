"""The audit's ``since`` (at >= since) and ``until`` (at < until) select exactly the rows the
instant asked does, also when it is given finer than the microseconds ``at`` is stored in:
such a bound is rounded up (app/audit/router.py ``Bound``). Cut, ``until=…00.123456789Z``
left out a retrieval made at …00.123456, before that instant, and ``since`` took it."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from app.audit.chain import append_retrieval
from tests.conftest import DbHandle, Tokens
from tests.helpers import audit_entry, ok

AT = datetime(2026, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)
JUST_AFTER = "2026-03-01T09:00:00.123456001Z"  # 1 ns after AT
JUST_BEFORE = "2026-03-01T10:00:00.123455999+01:00"  # 1 ns before AT


def test_a_bound_finer_than_a_microsecond_selects_what_the_instant_does(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    with db.database.transaction() as conn:
        append_retrieval(conn, audit_entry(at=AT), [])
    compliance = auth("c@firm.nl", "compliance")

    def found(**bounds: str) -> int:
        answer = ok(client.get("/v1/audit/retrievals", params=bounds, headers=compliance))
        return len(answer["items"])

    assert found(until=JUST_AFTER) == 1  # made before that instant
    assert found(since=JUST_AFTER) == 0  # made before it
    assert found(since=JUST_BEFORE) == 1
    assert found(until=JUST_BEFORE) == 0
    assert found(since=JUST_BEFORE, until=JUST_AFTER) == 1
    exported = client.get("/v1/audit/export", params={"until": JUST_AFTER}, headers=compliance)
    assert exported.status_code == 200 and len(exported.text.splitlines()) == 1, exported.text
