"""Which chunk is a decision's summary, written once in SQL.

Revision ID: 20261205_0051
Revises: 20261205_0050
Create Date: 2026-12-05

Ingestion's reuse of stored vectors (sql/ingest.sql, embeddings_by_content) and the re-embed
worker (sql/reembed.sql, missing_batch) each spelled the summary test as
``lower(section_path) LIKE 'inhoudsindicatie%'``, and Python's is_summary_section also
strips white space. The function of sql/functions/summary_section.v1.sql is the one SQL
spelling, with Python's rule (ASCII letters and white space only, which both languages
treat alike); both statements call it. Only the function is created here.
"""

from collections.abc import Sequence

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261205_0051"
down_revision: str | None = "20261205_0050"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "summary_section.v1.sql", "a91506aee9e0422c42f3ed3d8993f0de96ccc1a49cc55f82ca4a2a3d00743a98"
    )


def downgrade() -> None:
    run_statement("DROP FUNCTION ewall_is_summary_section(text)")
