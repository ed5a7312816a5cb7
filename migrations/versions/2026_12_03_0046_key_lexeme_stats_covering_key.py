"""The per-key lexeme counts carry their count in the primary key, so the query analysis
reads them from the index alone.

Revision ID: 20261203_0046
Revises: 20261203_0045
Create Date: 2026-12-03

``analyze_query`` sums, per question lexeme, ``search_key_lexeme_stats.n_chunks`` over every
access key the person may see (invariant 12). The rows of one lexeme lie on as many heap
pages as there are keys (each key's rows were written by its own ingestion), so a person who
sees 1,000 wall groups read about a thousand heap pages per lexeme: at 1,000,000 chunks the
analysis took 55-87 ms (median) of a search at 100% allowed (docs/scale-out.md). With
``n_chunks`` in the primary key's leaf (``INCLUDE``) one lexeme's counts are a few adjacent
index pages, read by an index-only scan. The key columns, and so the uniqueness the
statistics triggers' ``ON CONFLICT`` names, are unchanged. The price is on ingestion: an
update of a count now always writes a new key entry, where before it could stay a heap-only
update when its page had room (the table is filled to 100%, so that was the exception).

Rebuilding the key holds an exclusive lock on the table (not on ``chunks``) while it runs:
ingestion and searches wait for it (about 40 s for 15 million rows at 1,000,000 chunks).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261203_0046"
down_revision: str | None = "20261203_0045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE search_key_lexeme_stats DROP CONSTRAINT pk_search_key_lexeme_stats")
    op.execute(
        "ALTER TABLE search_key_lexeme_stats ADD CONSTRAINT pk_search_key_lexeme_stats"
        " PRIMARY KEY (lexeme, wall_group_id, source_acl_id) INCLUDE (n_chunks)"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE search_key_lexeme_stats DROP CONSTRAINT pk_search_key_lexeme_stats")
    op.execute(
        "ALTER TABLE search_key_lexeme_stats ADD CONSTRAINT pk_search_key_lexeme_stats"
        " PRIMARY KEY (lexeme, wall_group_id, source_acl_id)"
    )
