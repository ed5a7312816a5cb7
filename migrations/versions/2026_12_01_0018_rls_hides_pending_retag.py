"""The chunks RLS backstop also hides matters pending re-tag.

Revision ID: 20261201_0018
Revises: 20261201_0016
Create Date: 2026-12-01

A matter whose wall group changed keeps its chunks in the old group until the re-tag worker
has moved them; until then the search statement hides the matter from everyone (the
`pending` predicate in sql/search.sql). The row-level security policy on chunks checked only
the allowed groups and source ACLs, so during a re-tag window a query that forgot the
predicate would have shown a newly walled matter's chunks (still in their old, allowed
group) to a screened person. The policy now carries the same predicate, so the backstop is
narrower, never wider, while the worker lags. The pending matter ids are read once per
statement (an InitPlan), not per row.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_0018"
down_revision: str | None = "20261201_0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ALLOWED = """
        wall_group_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_wall_groups', true)), '')::text[]))
        AND source_acl_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_source_acls', true)), '')::text[]))"""

PENDING = """
        AND coalesce(matter_id, '') <> ALL (CAST(
            (SELECT coalesce(array_agg(p.matter_id), '{}') FROM retag_pending AS p) AS text[]))"""


def _policy(pending: bool) -> str:
    return (
        "DROP POLICY chunks_read ON chunks;\n"
        "CREATE POLICY chunks_read ON chunks FOR SELECT USING (\n"
        "    (SELECT current_setting('ewall.writer', true)) = 'on'\n"
        f"    OR ({ALLOWED}{PENDING if pending else ''}\n    )\n);"
    )


def _run(statement: str) -> None:
    # Straight to psycopg, as in the initial revision (the DDL holds ":" and "%").
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(_policy(pending=True))


def downgrade() -> None:
    _run(_policy(pending=False))
