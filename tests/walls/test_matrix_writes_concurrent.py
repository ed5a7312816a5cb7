"""Two matrix writes at once: the second decides from what the first committed.

A matrix write reads the matrix (reference checks, the diff, the wall review) and then
writes. Two that decided from the same state would insert the same group's members twice (a
unique violation on PUT /v1/groups and POST /v1/matrix/import, both idempotent by contract),
let one alias pass the check for two people, and each be reviewed for widening a wall
without the other's change. Each write takes the policy row's lock first.

Deterministic: the first write stays open until the second is seen waiting for a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from sqlalchemy import Connection

from app.errors import AppError
from app.matrix.schemas import GroupImport, PersonImport
from app.matrix.service import apply_matrix
from tests.conftest import DbHandle
from tests.helpers import lock_waiters, superuser_rows
from tests.replication import wait_for

Write = Callable[[Connection], object]


def _group(members: list[str]) -> Write:
    group = GroupImport(source="imanage", group_id="rg1", members=members)
    return lambda conn: apply_matrix(
        conn, actor="t", source_groups=[group], action="groups.sync", may_widen_walls=True
    )


def _claim(person_id: str, alias: str) -> Write:
    person = PersonImport(person_id=person_id, name=person_id, aliases=[alias])
    return lambda conn: apply_matrix(conn, actor="t", people=[person], may_widen_walls=True)


def _second_while_first_is_open(db: DbHandle, first: Write, second: Write) -> list[BaseException]:
    """Run ``first`` in an open transaction, start ``second`` beside it, commit ``first``
    once ``second`` waits for a lock, and return what ``second`` raised."""
    raised: list[BaseException] = []

    def run_second() -> None:
        try:
            with db.database.transaction() as conn:
                second(conn)
        except BaseException as exc:
            raised.append(exc)

    with db.database.transaction() as conn:
        first(conn)
        thread = threading.Thread(target=run_second)
        thread.start()
        wait_for(lambda: bool(lock_waiters(db)), "the second write to wait for the first")
    thread.join()
    return raised


def _existing_group(db: DbHandle) -> None:
    # the race needs a group with members: both writes delete them, then insert
    with db.database.transaction() as conn:
        _group(["imanage:user:z"])(conn)


def test_the_same_group_written_twice_at_once(db: DbHandle) -> None:
    _existing_group(db)
    write = _group(["imanage:user:a", "imanage:user:b"])
    assert _second_while_first_is_open(db, write, write) == []
    rows = superuser_rows(
        db, "SELECT member FROM source_group_members WHERE group_id = 'rg1' ORDER BY member"
    )
    assert [r[0] for r in rows] == ["imanage:user:a", "imanage:user:b"]


def test_an_alias_claimed_for_two_people_at_once(db: DbHandle) -> None:
    raised = _second_while_first_is_open(
        db, _claim("p1@firm.nl", "imanage:user:x"), _claim("p2@firm.nl", "imanage:user:x")
    )
    assert len(raised) == 1 and isinstance(raised[0], AppError), raised
    assert raised[0].code == "alias_taken" and raised[0].status == 409
    rows = superuser_rows(
        db, "SELECT person_id FROM person_aliases WHERE alias = %s", "imanage:user:x"
    )
    assert rows == [("p1@firm.nl",)]


@pytest.mark.parametrize("members", [["imanage:user:a"], []])
def test_a_group_rewritten_by_a_second_write_keeps_the_second(
    db: DbHandle, members: list[str]
) -> None:
    """Serialised, the later write wins whole: its members, not a mix of both."""
    _existing_group(db)
    first = _group(["imanage:user:a", "imanage:user:b"])
    assert _second_while_first_is_open(db, first, _group(members)) == []
    rows = superuser_rows(db, "SELECT member FROM source_group_members WHERE group_id = 'rg1'")
    assert sorted(r[0] for r in rows) == members
