"""A decision is named by its case number, and a question's ECLI however it is separated.

Revision ID: 20261210_0062
Revises: 20261210_0061
Create Date: 2026-12-10

A check of 2026-12-06 asked for decisions by case number ("zaaknummer 200.058.091/01",
"HR ... nr. 30460", "12/2272 WWB-G") and by ECLIs typed with spaces or dots ("ecli nl crvb
2013 1886"): the case numbers live in the metadata, which neither leg read for them, and the
named leg read an ECLI only with its colons. sql/functions/document_names.v2.sql adds the
"ZN:" names of a document's case numbers and reads both forms in a question; the GIN index
on ewall_document_names is built again, since what the function returns changed.

REINDEX holds a lock that blocks writes to documents (ingestion waits; searches do
not) while it runs: one entry set per document, under a second for the shared corpus.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261210_0062"
down_revision: str | None = "20261210_0061"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "document_names.v2.sql", "a1d21a3beeea89aa59fab90cf8a7fde03e21b28c31453ae90050844eaee1c28c"
    )
    _reindex()


def downgrade() -> None:
    apply_function_source(
        "document_names.v1.sql", "a59e45e70b1567e073090599ef2428df61903aa77fd08174bee192f808b6ec4c"
    )
    _reindex()
    run_statement("DROP FUNCTION ewall_case_number(text)")


def _reindex() -> None:
    with op.get_context().autocommit_block():
        op.execute("REINDEX INDEX CONCURRENTLY ix_documents_names")
