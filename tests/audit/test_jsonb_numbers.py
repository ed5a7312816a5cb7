"""Numbers that jsonb gives back otherwise than Python wrote them: an event holding one must
verify, not read as a row edited.

Found probing the audit chains (2026-12-07): PostgreSQL's numeric has no negative zero
("-0.0" reads back as 0.0) and reads a float of 1e16 or more ("1e+16" as Python writes it)
back as an integer, while the append hashed Python's text. A gate event with such a number
(a grounding similarity rounded from a small negative score, under a calibration that weighs
the cosine) put the gates chain at "hash mismatch (row edited)" for good: every later
verification failed there, and a real edit could no longer be told from it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.audit import chain
from app.audit.chain import append_gate_event, append_policy_event, append_retrieval
from tests.conftest import DbHandle
from tests.helpers import audit_entry, policy_event

AWKWARD: list[Any] = [
    -0.0,
    1e16,
    -1.5e16,
    1.7976931348623157e308,
    5e-324,
    1e-7,
    0.1 + 0.2,
    1e15,
    {"nested": [-0.0, 2e20]},
]


@pytest.mark.parametrize("value", AWKWARD, ids=repr)
def test_gate_and_policy_events_with_awkward_numbers_verify(db: DbHandle, value: Any) -> None:
    with db.database.transaction() as conn:
        append_gate_event(
            conn,
            person_id="l@firm.nl",
            gate="grounding",
            ok=False,
            request={"retrieval_id": str(uuid.uuid4())},
            outcome={"sentences": [{"similarity": value}]},
        )
        append_policy_event(conn, policy_event(details={"figure": value}))
        append_retrieval(conn, audit_entry(filters={"figure": value}), [])
    with db.database.connect() as conn:
        for name in chain.CHAINS:
            report = chain.verify_chain(conn, name)
            assert report.ok, (name, value, report)


def test_as_stored_reads_numbers_as_jsonb_does() -> None:
    assert chain.canonical_json(chain.as_stored({"a": -0.0})) == '{"a":0.0}'
    assert chain.as_stored(1e16) == 10**16
    assert chain.as_stored(1.7976931348623157e308) == 17976931348623157 * 10**292
    assert chain.as_stored([1e-7, 12.0, 3]) == [1e-7, 12.0, 3]
