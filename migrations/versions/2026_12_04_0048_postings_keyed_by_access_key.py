"""The postings get a second index, keyed by lexeme and access key, so that summing the
visible postings of a lexeme reads only the person's part of its list.

Revision ID: 20261204_0048
Revises: 20261203_0047
Create Date: 2026-12-04

Where few of a question's postings are visible, the sparse leg sums every visible posting
of each ranking lexeme (sql/search.sql, ``:sparse_sum``). Through the impact index
(``lexeme, impact DESC``) that sum read the lexeme's whole list and tested the access key
on each entry: at 1,000,000 chunks, 1% allowed, about 21,000 entries and 300 index pages
per common lexeme to keep 200, most of the leg's time when those pages were not cached
(docs/scale-out.md). Keyed by ``(lexeme, wall_group_id, source_acl_id)`` the scan descends
once per allowed key and reads only its entries; the rest of what the sum needs is in the
leaf (``INCLUDE``), so it stays an index-only scan.

The threshold algorithm still reads the impact index (it needs impact order); the primary
key still serves the scoring of named documents. The price is a third index on the
postings: about as large as the impact index, and one more entry written per posting at
ingestion. ``CREATE INDEX`` holds a lock that blocks writes to the postings (so ingestion
and re-tagging wait, searches do not) while it runs: 99 s for 78 million postings
at 1,000,000 chunks, where it takes 7 GB.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261204_0048"
down_revision: str | None = "20261203_0047"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_search_postings_key ON search_postings"
        " (lexeme, wall_group_id, source_acl_id) INCLUDE (matter_id, document_id, impact)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX ix_search_postings_key")
