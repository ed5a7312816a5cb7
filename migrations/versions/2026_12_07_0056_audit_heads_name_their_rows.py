"""An audit chain's head and its rows agree at every commit.

Revision ID: 20261207_0056
Revises: 20261206_0055
Create Date: 2026-12-07

The service role may call the chain step (ewall_audit_advance) and insert into the chain
tables, because the appends of sql/audit.sql do both in one statement. Leaked service
credentials could do one without the other: move a head with no row behind it (verification
then fails for good) or insert a row at the next sequence number (every later append takes
that number again and fails, so every search answers 503). Both were detected, neither was
prevented. Deferred constraint triggers now check at commit that each moved head names its
chain's last row and that no inserted row lies beyond its head
(sql/functions/audit_head_agrees.v1.sql). The check costs one index probe per append.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261207_0056"
down_revision: str | None = "20261206_0055"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (table, chain) for the rows; the heads' trigger reads the chain from the row it checks
CHAINS = (("audit_retrievals", "retrievals"), ("policy_events", "policy"), ("gate_events", "gates"))


def upgrade() -> None:
    apply_function_source(
        "audit_head_agrees.v1.sql",
        "6c58781c1c6cbf3526dddc9122f555e7e6256d1ae58bdf6889160d6a6ae15ae3",
    )
    op.execute(
        "CREATE CONSTRAINT TRIGGER audit_heads_name_their_rows AFTER UPDATE ON audit_heads "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ewall_audit_head_agrees()"
    )
    for table, chain in CHAINS:
        op.execute(
            f"CREATE CONSTRAINT TRIGGER {table}_within_head AFTER INSERT ON {table} "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
            f"EXECUTE FUNCTION ewall_audit_head_agrees('{chain}')"
        )


def downgrade() -> None:
    for table, _chain in CHAINS:
        op.execute(f"DROP TRIGGER {table}_within_head ON {table}")
    op.execute("DROP TRIGGER audit_heads_name_their_rows ON audit_heads")
    op.execute("DROP FUNCTION ewall_audit_head_agrees()")
