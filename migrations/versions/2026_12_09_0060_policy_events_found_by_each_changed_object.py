"""A policy event is found by every object it changed, not only by its single subject.

Revision ID: 20261209_0060
Revises: 20261208_0059
Create Date: 2026-12-09

A matrix import or a multi-object change is filed under one subject ("matrix.import"),
with the objects it changed listed in details.changes. GET /v1/audit/policy-events with
object_id=<a person> missed a deactivation made by an import (a check of 2026-12-06). The
filter now also matches an event whose changes name the object; this index serves that
containment test.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261209_0060"
down_revision: str | None = "20261208_0059"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_policy_events_changes ON policy_events "
        "USING gin ((details -> 'changes') jsonb_path_ops)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_policy_events_changes")
