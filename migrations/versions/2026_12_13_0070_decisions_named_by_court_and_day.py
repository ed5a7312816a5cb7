"""A court and a date in a question name that court's decisions of that day.

Revision ID: 20261213_0070
Revises: 20261213_0069
Create Date: 2026-12-13

Lawyers cite a decision by its court and day ("HR 27 september 1995"); such a question
ranked its decision 17th (docs/quality.md, sixteenth round). sql/functions/
document_names.v5.sql names each decision also by its court and decision date
("CD:HR:1995-09-27") and reads a court followed by a date in the question. The GIN index on
ewall_document_names is built again, since what the function returns changed.

REINDEX CONCURRENTLY lets searches and ingestion go on while it runs: one entry set per
document, under a second for the shared corpus.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261213_0070"
down_revision: str | None = "20261213_0069"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    apply_function_source("document_names.v5.sql", "b9da199dff6c02450641f82207a4dabd7984810ee0357a7f5af49f1bcf7aa7d8")
    _reindex()


def downgrade() -> None:
    apply_function_source(
        "document_names.v4.sql", "24537541ebae4cded0d40dcaf6237530e3fc3a30202607017e13fd594353058b"
    )
    _reindex()


def _reindex() -> None:
    with op.get_context().autocommit_block():
        op.execute("REINDEX INDEX CONCURRENTLY ix_documents_names")
