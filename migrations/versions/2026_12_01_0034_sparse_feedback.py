"""Pseudo-relevance feedback for the sparse leg, as an option (off by default).

Revision ID: 20261201_0034
Revises: 20261201_0033
Create Date: 2026-12-01

``ewall_sparse_feedback_rank`` ranks the sparse leg's walled candidate pool twice: first
with ``ewall_sparse_document_rank`` on the question's lexemes, then again on those lexemes
plus the best lexemes of the first pass's top documents (issue 19: "expand with the best
terms of the first pass's top chunks, as an option, measured"). An expansion lexeme must
occur in the candidate chunks of at least two of those documents (of the one, when only one
is asked for) and is chosen by its term frequency there times its idf over the corpus
(``lexeme_stats``, the same figures the query analysis weighs with); each weighs
``feedback_weight`` in the second ranking, where a typed word weighs 1.

The expansion comes only from the pool, which holds the chunks the person may see (the
search statement's wall, source-ACL and re-tag predicates choose it), and it only re-ranks
that pool: feedback never adds a chunk the first pass did not match. The search statement
calls this function only when ``EWALL_SPARSE_FEEDBACK_DOCUMENTS`` is above 0 (docs/quality.md
has the measurements: it is off because it lowered paraphrase questions).
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261201_0034"
down_revision: str | None = "20261201_0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DOWNGRADE = """
DROP FUNCTION ewall_sparse_feedback_rank(
    text[], bigint[], tsvector[], text[], float8[], float8, float8, integer,
    integer, integer, float8);
"""


def upgrade() -> None:
    apply_function_source(
        "sparse_feedback_rank.v1.sql",
        "108edfdc0a0d51578761dcbe592ff600c56e8c84949618a82edb3d4a4445f596",
    )


def downgrade() -> None:
    op.execute(DOWNGRADE)
