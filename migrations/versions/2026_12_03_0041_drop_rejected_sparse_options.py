"""Drop the database side of two sparse-leg options that measurement rejected.

Revision ID: 20261203_0041
Revises: 20261202_0040
Create Date: 2026-12-03

``ewall_sparse_feedback_rank`` (migration 20261201_0034) ranked the sparse pool a second
time with pseudo-relevance feedback, an option that was off by default. ``ewall eval``
measured it at 1, 3 and 5 documents and weights 0.03 to 0.3: every setting lowered the
paraphrase questions of the development set (docs/quality.md, fourth round).

``ewall_compound_parts`` and the two indexes it reads, ``ix_lexeme_stats_prefix`` and
``ix_lexeme_stats_suffix`` (migration 20261201_0035), found Dutch compound parts for the
query analysis, an option that was off by default: first for its latency, then, on the
document ranking, because it lowered the development set where choices are made (second
round at weight 0.5: dev 0.745 -> 0.733; fourth round, with the indexed lookup, at weights
0.15 to 0.5: dev 0.745 -> 0.731..0.739; docs/quality.md).
Nothing else reads the indexes; without them, the triggers that keep ``lexeme_stats``
current on every ingestion write two fewer index entries per lexeme.

Both options have left the code and the settings, so no statement calls the functions any
more. The downgrade puts them back as migrations 20261201_0034 and 20261201_0035 created
them: it applies the same source files (sql/functions/sparse_feedback_rank.v1.sql,
compound_parts.v1.sql).
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261203_0041"
down_revision: str | None = "20261202_0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FEEDBACK_SIGNATURE = (
    "ewall_sparse_feedback_rank(text[], bigint[], tsvector[], text[], float8[], float8, "
    "float8, integer, integer, integer, float8)"
)


def upgrade() -> None:
    op.execute(f"DROP FUNCTION {FEEDBACK_SIGNATURE}")
    op.execute("DROP FUNCTION ewall_compound_parts(text[])")
    op.execute("DROP INDEX ix_lexeme_stats_suffix")
    op.execute("DROP INDEX ix_lexeme_stats_prefix")


def downgrade() -> None:
    op.execute('CREATE INDEX ix_lexeme_stats_prefix ON lexeme_stats (lexeme COLLATE "C")')
    op.execute(
        'CREATE INDEX ix_lexeme_stats_suffix ON lexeme_stats ((reverse(lexeme)) COLLATE "C")'
    )
    apply_function_source(
        "compound_parts.v1.sql", "3816ecc0dc52e5f9c86fe47c0b5705e7681cacd613ae65a926747ff1051654fe"
    )
    apply_function_source(
        "sparse_feedback_rank.v1.sql",
        "108edfdc0a0d51578761dcbe592ff600c56e8c84949618a82edb3d4a4445f596",
    )
