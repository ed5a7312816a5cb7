"""One index on an audit row's person, not two.

Revision ID: 20261212_0068
Revises: 20261212_0067
Create Date: 2026-12-12

``ix_audit_retrievals_person_id`` (person_id) is the leading column of
``ix_audit_retrievals_person_id_at`` (person_id, at), which serves every read the first
served: a person's rows, and the skip scan of everyone who ever retrieved (sql/sessions.sql
readers). Every search's audit append maintained both; now one.

Measured on a table of this shape with 1,000,000 rows of 2,000 people (PostgreSQL 18.6):
the readers' skip scan keeps its plan (2,000 index-only probes, now of the composite index);
the dropped index held 9.4 MB (person ids deduplicated; the composite 79 MB); one-row
inserts, each committed, 20,000 per variant in three alternating rounds: 0.32 / 0.27 / 0.27
ms with it, 0.28 / 0.29 / 0.28 ms without, no difference beyond noise. So the append does
not get measurably faster (docs/latency-sql.md: its p95 stays above 2 ms); the change removes
an index that served nothing the other does not.
"""

from collections.abc import Sequence

from app.db.function_sources import run_statement

revision: str = "20261212_0068"
down_revision: str | None = "20261212_0067"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    run_statement("DROP INDEX ix_audit_retrievals_person_id")


def downgrade() -> None:
    run_statement("CREATE INDEX ix_audit_retrievals_person_id ON audit_retrievals (person_id)")
