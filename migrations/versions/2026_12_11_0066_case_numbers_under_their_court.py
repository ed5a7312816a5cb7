"""A case number read after a court names only that court's decisions.

Revision ID: 20261211_0066
Revises: 20261211_0065
Create Date: 2026-12-11

Migration 0064 read "HR nr. 30460" and "CRvB 21-05-2013, 12/2272" as the case numbers
alone; a review found another court's decision with the same number named first. sql/
functions/document_names.v4.sql files each document's case numbers under its court too
("ZC:HR:30460"), and the question's case number after a court under that court. The GIN
index on ewall_document_names is built again, since what the function returns changed.

REINDEX holds a lock that blocks writes to documents (ingestion waits; searches do
not) while it runs: one entry set per document, under a second for the shared corpus.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source, run_statement

revision: str = "20261211_0066"
down_revision: str | None = "20261211_0065"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source(
        "document_names.v4.sql", "24537541ebae4cded0d40dcaf6237530e3fc3a30202607017e13fd594353058b"
    )
    _reindex()


def downgrade() -> None:
    apply_function_source(
        "document_names.v3.sql", "408446dedef7d6af2f3b33522e73a2bddea12a0ea077f81ce0603c0a0e9c0722"
    )
    _reindex()
    run_statement("DROP FUNCTION ewall_court_family(text)")


def _reindex() -> None:
    with op.get_context().autocommit_block():
        op.execute("REINDEX INDEX CONCURRENTLY ix_documents_names")
