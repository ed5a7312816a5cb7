"""One visibility rule: ewall_chunk_visible, the whole "who may see this chunk" predicate.

Revision ID: 20261203_0043
Revises: 20261203_0042
Create Date: 2026-12-03

The predicate (allowed wall group, allowed source ACL, matter not pending re-tag, not
suppressed) was written out in every statement that reads chunks for a person, in two
spellings, and one of them (the model's training text) had lost the pending re-tag test.
It is now one inlinable SQL function, sql/functions/chunk_visible.v1.sql, with
ewall_retag_pending() for the pending matters; tests/foundation/test_layers.py fails on a
statement in sql/ that reads chunks without it. The functions are plain (no grant needed:
EXECUTE is PUBLIC's, as for every function of this schema but the audit step and the
relayout); the row-level security policies on chunks are unchanged.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261203_0043"
down_revision: str | None = "20261203_0042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DOWNGRADE = r"""
DROP FUNCTION ewall_chunk_visible(text, text, text, boolean, text[], text[], text[], boolean);
DROP FUNCTION ewall_retag_pending();
"""



def upgrade() -> None:
    apply_function_source(
        "chunk_visible.v1.sql", "db92a0e3ef24c9296ad211fbf39cca9ccd79f0cde31dca93a0be352b66e38ea0"
    )


def downgrade() -> None:
    run_statement(DOWNGRADE)
