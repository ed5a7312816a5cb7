"""The statistics a search weighs leave out the chunks of a matter pending re-tag.

Revision ID: 20261205_0052
Revises: 20261205_0051
Create Date: 2026-12-05

While the re-tag worker has not yet moved a matter's chunks to the wall group a new wall gave
it, the matter is hidden from everyone, but its chunks were still counted under the old key
in the statistics of those who hold it (a known limit of invariant 12 until now). The search
subtracts them with ``ewall_pending_key_counts`` (sql/functions/pending_counts.v1.sql):
SECURITY DEFINER, EXECUTE for the service role (and its writer role) only. Only the function is created here.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, migration_app_role, run_statement

revision: str = "20261205_0052"
down_revision: str | None = "20261205_0051"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SIGNATURE = "ewall_pending_key_counts(text[], text[], text[])"


def upgrade() -> None:
    apply_function_source(
        "pending_counts.v1.sql", "df245731a895ef2d8c01f8804245da9a4dc06ca499176ba5795ca0209179eaee"
    )
    run_statement(f"REVOKE ALL ON FUNCTION {SIGNATURE} FROM PUBLIC")
    # the writer holds every privilege of the service role (migration 20261202_0036)
    run_statement(f"GRANT EXECUTE ON FUNCTION {SIGNATURE} TO {migration_app_role()}, ewall_writer")


def downgrade() -> None:
    run_statement(f"DROP FUNCTION {SIGNATURE}")
