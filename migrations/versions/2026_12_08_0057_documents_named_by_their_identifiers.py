"""A document is found by its own identifiers: one function names them, one index.

Revision ID: 20261208_0057
Revises: 20261207_0056
Create Date: 2026-12-08

Searched by its own ECLI, a decision came first in 8 of 60 tries (and was missing from the
top 10 in 12): the identifier lives in the title and the metadata, which the full-text leg
does not index, and its lexemes match every decision of the court and year. The hybrid
statement's named leg (sql/search.sql) looks up the documents that a question's ECLIs,
LJNs and journal citations ("NJ 1996/123") name, through ``ewall_document_names`` (sql/functions/document_names.v1.sql) and a GIN
index on it.

Built with CREATE INDEX CONCURRENTLY, outside a transaction: ingestion goes on while it
builds. An interrupted build leaves an invalid index of the new name; drop it and run the
migration again.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261208_0057"
down_revision: str | None = "20261207_0056"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "document_names.v1.sql", "a59e45e70b1567e073090599ef2428df61903aa77fd08174bee192f808b6ec4c"
    )
    with op.get_context().autocommit_block():
        op.execute(
            "CREATE INDEX CONCURRENTLY ix_documents_names ON documents"
            " USING gin (ewall_document_names(title, external_id, metadata))"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute("DROP INDEX CONCURRENTLY ix_documents_names")
    op.execute("DROP FUNCTION ewall_document_names(text, text, jsonb)")
