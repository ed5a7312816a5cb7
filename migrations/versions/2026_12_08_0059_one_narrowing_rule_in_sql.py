"""The caller's narrowing filters on a chunk are one SQL function, as the visibility rule is.

Revision ID: 20261208_0059
Revises: 20261208_0058
Create Date: 2026-12-08

The hybrid statement wrote its filters (doc_types, sources, matter_ids, the modified range,
a bound session's matter) out in each leg, four times since the named leg came. They are
now ewall_chunk_narrowed (sql/functions/chunk_narrowed.v1.sql), an inlinable SQL function:
the plans are those of the clauses written in place.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261208_0059"
down_revision: str | None = "20261208_0058"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source("chunk_narrowed.v1.sql", "e7d6c7212d06855f4ee31d8f49eddcd7eeb717cd5ec0445fce92f9d3a45f656f")


def downgrade() -> None:
    op.execute(
        "DROP FUNCTION ewall_chunk_narrowed(text, text, text, timestamptz, text[], text[], "
        "text[], text, timestamptz, timestamptz)"
    )
