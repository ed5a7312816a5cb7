"""A committed audit entry is sealed: no result row added to it, no access set planted.

Revision ID: 20261211_0063
Revises: 20261210_0062
Create Date: 2026-12-11

The service role inserts a retrieval's results and its access sets when it appends (the
chain tables refuse UPDATE and DELETE). A check of 2026-12-06 found that leaked service
credentials could still change what a committed entry records: add a result row to an old
retrieval ("who saw matter M" names someone who did not; verification fails for good), or
insert an access set whose members its id is not the hash of, ahead of the search that
names it (the append keeps the planted members), or with a NULL member (verification
stopped with an error). sql/functions/audit_sealed.v1.sql has the two checks:

- a statement trigger on audit_retrieval_results refuses a result row whose retrieval this
  transaction did not insert itself (the append inserts both in one statement);
- a check constraint on audit_access_sets holds every new set to its content address and
  refuses NULL members. It is NOT VALID: rows already stored are verification's to judge
  (`ewall audit verify` names an altered set), not a reason for the upgrade to stop.

Cost per append: one trigger call with an index probe per result row (measured through the
search on a test database, trigger on and off alternated, 6 x 35 searches of k 10 each: the
append 1.036 -> 1.077 ms p50, 1.24 -> 1.50 ms p95, on a machine shared with other work); a
set is checked only when its members are sent (its first append, or after a process forgot
which sets are stored: about 0.5 ms for 2,000 members).
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261211_0063"
down_revision: str | None = "20261210_0062"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "audit_sealed.v1.sql", "5fa5e1ac3191af514c788e5343b63de95cbacb736ad0eb056b7b92981e01a4ea"
    )
    op.execute(
        "CREATE TRIGGER audit_retrieval_results_sealed AFTER INSERT ON audit_retrieval_results "
        "REFERENCING NEW TABLE AS new_results FOR EACH STATEMENT "
        "EXECUTE FUNCTION ewall_audit_results_sealed()"
    )
    # it fires under session_replication_role = replica too, as the append-only triggers do
    op.execute(
        "ALTER TABLE audit_retrieval_results ENABLE ALWAYS TRIGGER audit_retrieval_results_sealed"
    )
    op.execute("REVOKE ALL ON FUNCTION ewall_audit_results_sealed() FROM PUBLIC")
    op.execute(
        "ALTER TABLE audit_access_sets ADD CONSTRAINT ck_audit_access_sets_content_addressed "
        "CHECK (array_position(members, NULL) IS NULL "
        "AND set_id = ewall_access_set_id(members)) NOT VALID"
    )


def downgrade() -> None:
    op.execute(
        "ALTER TABLE audit_access_sets DROP CONSTRAINT ck_audit_access_sets_content_addressed"
    )
    op.execute("DROP TRIGGER audit_retrieval_results_sealed ON audit_retrieval_results")
    op.execute("DROP FUNCTION ewall_audit_results_sealed()")
    op.execute("DROP FUNCTION ewall_access_set_id(text[])")
    op.execute("DROP FUNCTION ewall_xid8_near(xid, bigint)")
