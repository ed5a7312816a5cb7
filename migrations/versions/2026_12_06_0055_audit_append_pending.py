"""Whether an append to an audit chain has still to commit, asked without privileges.

Revision ID: 20261206_0055
Revises: 20261206_0054
Create Date: 2026-12-06

An audit export says from when a time window is final: no search resolved in it can still be
recorded. A search's row may commit long after its append (a commit waiting on a synchronous
standby), so the export asks whether an append is pending: every append holds the chain
head's row until it commits, and a share lock asked without waiting is refused exactly
then. The service role may not lock that row, so the question is a function that runs with
the rights of the audit's owner role (0036), as the chain step itself does. Reading the
row's xmax instead needed no function, but a key-share lock taken beside an append turns it
into a multixact id that names no appender.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source, migration_app_role, run_statement

revision: str = "20261206_0055"
down_revision: str | None = "20261206_0054"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SIGNATURE = "public.ewall_audit_append_pending(text)"

# As 0036 does for ewall_audit_advance: a superuser may give a function to any role; any
# other owner must be able to become the new owner, which must be allowed to create in the
# schema for that moment.
OWNER_UP = rf"""
DO $owner$
DECLARE
    su boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
    IF NOT su THEN
        GRANT ewall_audit_owner TO CURRENT_USER WITH INHERIT FALSE, SET TRUE;
        GRANT CREATE ON SCHEMA public TO ewall_audit_owner;
    END IF;
    ALTER FUNCTION {SIGNATURE} SECURITY DEFINER;
    ALTER FUNCTION {SIGNATURE} OWNER TO ewall_audit_owner;
    IF NOT su THEN
        REVOKE CREATE ON SCHEMA public FROM ewall_audit_owner;
    END IF;
END
$owner$;
"""


def upgrade() -> None:
    apply_function_source(
        "audit_append_pending.v1.sql",
        "a0ee1ffbe1496b4729dadefbdbb8f35bc26b880551d63be21bc296ecca88a448",
    )
    run_statement(f"REVOKE ALL ON FUNCTION {SIGNATURE} FROM PUBLIC")
    run_statement(f"GRANT EXECUTE ON FUNCTION {SIGNATURE} TO {migration_app_role()}")
    # the writer holds every privilege of the service role (0036)
    run_statement(f"GRANT EXECUTE ON FUNCTION {SIGNATURE} TO ewall_writer")
    run_statement(OWNER_UP)


def downgrade() -> None:
    op.execute(f"DROP FUNCTION {SIGNATURE}")
