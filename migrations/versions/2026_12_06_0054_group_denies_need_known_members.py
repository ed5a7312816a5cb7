"""A deny that names a group admits a document only while the group's members are known.

Revision ID: 20261206_0054
Revises: 20261205_0053
Create Date: 2026-12-06

A source ACL's deny of a group is enforced through the group's synced members: a person is
denied when one of their principals is the group. When ewall held no membership for the
group (a tenant without a groups endpoint, a members list that failed to read), nobody was
the group, the deny lapsed, and the people it screens saw the document. The deny's groups
are now a generated column (``deny_groups``, from ``ewall_group_principals``,
sql/functions/group_principals.v1.sql), and the rule that lists the ACLs a person may read
(walls.allowed_source_acls) admits an ACL only when each of them is in source_groups: an
unknown membership makes the document visible to nobody until it is synced.

Adding a stored generated column rewrites source_acls (one row per distinct access rule,
not per chunk) under its own lock, briefly.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261206_0054"
down_revision: str | None = "20261205_0053"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "group_principals.v1.sql",
        "265c2a2a19a2fa253c1933f625b15268f8e2db869af6f157102b8305c97c9d5c",
    )
    op.execute(
        "ALTER TABLE source_acls ADD COLUMN deny_groups text[] NOT NULL"
        " GENERATED ALWAYS AS (ewall_group_principals(deny)) STORED"
    )
    # whether a connector's group sync wrote the group: a sync forgets only the groups it
    # synced, never one set through the API or an import (a tenant without a groups endpoint)
    op.execute("ALTER TABLE source_groups ADD COLUMN synced boolean NOT NULL DEFAULT false")


def downgrade() -> None:
    op.execute("ALTER TABLE source_groups DROP COLUMN synced")
    op.execute("ALTER TABLE source_acls DROP COLUMN deny_groups")
    op.execute("DROP FUNCTION ewall_group_principals(text[])")
