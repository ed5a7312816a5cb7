"""An audit chain's head and its rows agree at every commit.

Revision ID: 20261207_0056
Revises: 20261206_0055
Create Date: 2026-12-07

The service role may call the chain step (ewall_audit_advance) and insert into the chain
tables, because the appends of sql/audit.sql do both in one statement. Leaked service
credentials could do one without the other: move a head with no row behind it (verification
then fails for good) or insert a row at the next sequence number (every later append takes
that number again and fails, so every search answers 503). Both were detected, neither was
prevented. Deferred constraint triggers now check at commit that each move of a head names
a row of its chain and that no inserted row lies beyond its head
(sql/functions/audit_head_agrees.v1.sql), and a check constraint refuses rows at sequence
number 0 or below, which the unique index let in below the first row. The check costs two
trigger calls and three index probes per append (p50 0.76 -> 0.80 ms per append and commit,
measured on a busy machine).
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
        "bb53e3e59f1aea0c5740c8ec6722198b05e5656163edf66d3fb9cfa42ce703dc",
    )
    op.execute(
        "CREATE CONSTRAINT TRIGGER audit_heads_name_their_rows AFTER UPDATE ON audit_heads "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ewall_audit_head_agrees()"
    )
    # it runs as its owner: nobody calls it but the triggers
    op.execute("REVOKE ALL ON FUNCTION ewall_audit_head_agrees() FROM PUBLIC")
    for table, chain in CHAINS:
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT ck_{table}_seq_positive CHECK (seq >= 1)")
        op.execute(
            f"CREATE CONSTRAINT TRIGGER {table}_within_head AFTER INSERT ON {table} "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
            f"EXECUTE FUNCTION ewall_audit_head_agrees('{chain}')"
        )


def downgrade() -> None:
    for table, _chain in CHAINS:
        op.execute(f"DROP TRIGGER {table}_within_head ON {table}")
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT ck_{table}_seq_positive")
    op.execute("DROP TRIGGER audit_heads_name_their_rows ON audit_heads")
    op.execute("DROP FUNCTION ewall_audit_head_agrees()")
