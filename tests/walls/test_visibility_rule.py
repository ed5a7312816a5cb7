"""The one visibility rule (sql/functions/chunk_visible.v1.sql) says what docs/architecture.md
says a wall means: a chunk is visible only when its wall group AND its source ACL are
allowed, its matter is not pending re-tag and it is not suppressed; anything unknown
admits nobody. The statements that use it are tested through the search, the gate and the
fence; this is the rule alone, on the migrated database."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.conftest import DbHandle

RULE = text(
    "SELECT ewall_chunk_visible(CAST(:group AS text), CAST(:acl AS text), CAST(:matter AS text),"
    " CAST(:suppressed AS boolean), CAST(:groups AS text[]), CAST(:acls AS text[]),"
    " CAST(:pending AS text[]), CAST(:group_index AS boolean))"
)
BASE = {
    "group": "wg_a",
    "acl": "public",
    "matter": "m1",
    "suppressed": False,
    "groups": ["wg_a", "wg_b"],
    "acls": ["public"],
    "pending": ["m9"],
}
CASES = [
    ({}, True),
    ({"matter": None}, True),  # a public source (no matter) is never pending
    ({"group": "wg_c"}, False),  # the walls deny
    ({"acl": "private_x"}, False),  # the source system denies
    ({"pending": ["m9", "m1"]}, False),  # re-tag pending: fail closed
    ({"suppressed": True}, False),  # withdrawn: visible to no one
    ({"groups": []}, False),
    ({"acls": []}, False),
    ({"groups": None}, False),  # unknown sets admit nobody (NULL, never true)
    ({"acls": None}, False),
    ({"pending": None}, False),
    ({"group": None}, False),
]


@pytest.mark.parametrize(("change", "visible"), CASES)
def test_the_rule_is_the_meaning_of_a_wall(
    module_db: DbHandle, change: dict[str, object], visible: bool
) -> None:
    with module_db.database.transaction() as conn:
        for group_index in (True, False):  # the index choice never changes the answer
            got = conn.execute(RULE, {**BASE, **change, "group_index": group_index}).scalar()
            assert (got is True) == visible, (change, group_index, got)


def test_the_pending_matters_are_the_retag_queue(module_db: DbHandle) -> None:
    with module_db.database.transaction() as conn:
        assert conn.execute(text("SELECT ewall_retag_pending()")).scalar() == []
        conn.execute(
            text(
                "INSERT INTO retag_pending (matter_id, target_wall_group_id, policy_version)"
                " VALUES ('m2', 'wg_x', 1), ('m1', 'wg_y', 1)"
            )
        )
        assert conn.execute(text("SELECT ewall_retag_pending()")).scalar() == ["m1", "m2"]
        conn.rollback()
