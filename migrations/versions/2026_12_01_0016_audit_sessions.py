"""Sessions in the retrieval audit; indexes for wall exposure and session reads.

Revision ID: 20261201_0016
Revises: 20261201_0010
Create Date: 2026-12-01

A retrieval may belong to a caller-chosen session (a chat thread, an agent run) and may be
bound to one matter. The columns are nullable: older rows keep verifying because the
retrieval hash covers the session fields only when they are set.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_0016"
down_revision: str | None = "20261201_0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE audit_retrievals "
        "ADD COLUMN session_id text, "
        "ADD COLUMN session_matter_id text, "
        "ADD COLUMN session_scope text, "
        "ADD CONSTRAINT ck_audit_retrievals_session_scope "
        "CHECK (session_scope IN ('bound', 'widened'))"
    )
    # a session's retrievals, in order (session gate, ?session_id= listing)
    op.execute(
        "CREATE INDEX ix_audit_retrievals_session_id_seq ON audit_retrievals (session_id, seq)"
    )
    # exposure: the retrievals of the people a wall denies within the lookback (their
    # results then come by primary key); also serves ?person_id=&since= listings
    op.execute("CREATE INDEX ix_audit_retrievals_person_id_at ON audit_retrievals (person_id, at)")


def downgrade() -> None:
    op.execute("DROP INDEX ix_audit_retrievals_person_id_at")
    op.execute("DROP INDEX ix_audit_retrievals_session_id_seq")
    op.execute(
        "ALTER TABLE audit_retrievals DROP CONSTRAINT ck_audit_retrievals_session_scope, "
        "DROP COLUMN session_scope, DROP COLUMN session_matter_id, DROP COLUMN session_id"
    )
