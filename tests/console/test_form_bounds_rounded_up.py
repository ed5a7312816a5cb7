"""The console's forms read a bound finer than a microsecond as the API reads it: rounded up,
not cut (app/types.py ``rounded_up_to_microseconds``). A wall's end given as
"…00.999999001Z" on the wall form ended the wall 1 µs early (the API rounds it up), and the
audit page's until=…00.123456001Z left out a retrieval made at …00.123456, which the API's
audit lists."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from app.audit.chain import append_retrieval
from tests.conftest import DbHandle
from tests.console.conftest import COMPLIANCE, LAWYER, PARTNER, csrf_of
from tests.console.test_console_http import signed_in, wall_form
from tests.helpers import Firm, audit_entry, ok

AT = datetime(2026, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)
JUST_AFTER = "2026-03-01T09:00:00.123456001Z"  # 1 ns after AT
JUST_BEFORE = "2026-03-01T10:00:00.123455999+01:00"  # 1 ns before AT
LATER = "2026-03-01T09:00:01Z"


def test_the_wall_form_rounds_the_end_up_as_the_api_does(firm: Firm) -> None:
    client = signed_in(firm, PARTNER, "conflicts")
    token = csrf_of(client.get("/console/walls/new").text)
    form = wall_form(
        effective_from="2030-01-01T00:00:00.123456789Z",
        effective_until="2030-01-02T00:00:00.999999001Z",
    )
    issued = client.post("/console/walls", data={**form, "csrf": token}, follow_redirects=False)
    assert issued.status_code == 303, issued.text
    (wall,) = ok(firm.client.get("/v1/walls", headers=firm.h))["items"]
    assert wall["effective_from"].startswith("2030-01-01T00:00:00.123456"), wall
    assert wall["effective_until"].startswith("2030-01-02T00:00:01"), wall  # not …00.999999
    late = wall_form(effective_until="9999-12-31T23:59:59.9999999-01:00")  # past 9999 in UTC
    refused = client.post("/console/walls", data={**late, "csrf": token})
    assert refused.status_code == 422 and "out of range once rounded up" in refused.text


def test_the_audit_pages_round_since_and_until_up_as_the_api_does(
    firm: Firm, db: DbHandle
) -> None:
    with db.database.transaction() as conn:
        append_retrieval(conn, audit_entry(at=AT, person_id=LAWYER), [])
    client = signed_in(firm, COMPLIANCE, "compliance")

    def found(**bounds: str) -> int:
        exported = client.get("/console/audit/export.jsonl", params=bounds)
        assert exported.status_code == 200, exported.text
        return len([json.loads(line) for line in exported.text.splitlines()])

    assert found(until=JUST_AFTER) == 1  # made before that instant
    assert found(since=JUST_AFTER, until=LATER) == 0  # made before it
    assert found(since=JUST_BEFORE, until=LATER) == 1
    assert found(until=JUST_BEFORE) == 0
    api = firm.auth(COMPLIANCE, "compliance")
    answer = ok(firm.client.get("/v1/audit/retrievals", params={"until": JUST_AFTER}, headers=api))
    assert len(answer["items"]) == 1  # the page and the API agree
