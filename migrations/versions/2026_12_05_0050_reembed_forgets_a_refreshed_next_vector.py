"""A chunk encoded again during a re-embed run loses the run's vector made before it.

Revision ID: 20261205_0050
Revises: 20261204_0049
Create Date: 2026-12-05

Ingestion encodes a kept chunk again when its document's title or summary changes. During a
re-embed run the chunk's next-model vector, if already written, was made from the old
context, and the switch made it the live vector. The trigger function of
sql/functions/reembed_forget_next.v1.sql clears that vector; a run attaches it to chunks
while its columns exist (sql/reembed.sql, add_next_columns), so the run's catch-up encodes
the chunk again. Only the function is created here: no table, no data, no lock on chunks.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261205_0050"
down_revision: str | None = "20261204_0049"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "reembed_forget_next.v1.sql", "fe1bfbd879f7cf0a38225ccac57878a7be809dcfa06b17e6e6fb2a3bed3ad407"
    )


def downgrade() -> None:
    # a run in progress holds a trigger on it: the run's own cancel drops that first
    run_statement("DROP FUNCTION ewall_reembed_forget_next()")
