"""Index lexeme_stats by prefix and by suffix, so compound parts are looked up, not scanned.

Revision ID: 20261201_0035
Revises: 20261201_0034
Create Date: 2026-12-01

``analyze_query`` finds compound parts (``EWALL_SPARSE_COMPOUND_WEIGHT``): corpus lexemes
that begin or end with a query lexeme, and the heads and tails of a query compound. It
compared every row of ``lexeme_stats`` with string functions: 33 ms per question (p50, quiet
machine; 90 ms on a busy one) on the evaluation corpus's 18,109 lexemes, growing with the
vocabulary (docs/quality.md).
Under the "C" collation the lexemes that begin with a word are one range of a btree, and so
are those that end with it in an index on the reversed lexeme; heads and tails of a query
word are equality lookups on the primary key. ``ewall_compound_parts`` does the three
lookups; it is plpgsql so that a search with compound parts off (the default) neither plans
nor opens the three indexes: ``analyze_query`` calls it behind a constant false.
"""

from collections.abc import Sequence

from alembic import op

from app.db.function_sources import apply_function_source

revision: str = "20261201_0035"
down_revision: str | None = "20261201_0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute('CREATE INDEX ix_lexeme_stats_prefix ON lexeme_stats (lexeme COLLATE "C")')
    op.execute(
        'CREATE INDEX ix_lexeme_stats_suffix ON lexeme_stats ((reverse(lexeme)) COLLATE "C")'
    )
    apply_function_source(
        "compound_parts.v1.sql", "3816ecc0dc52e5f9c86fe47c0b5705e7681cacd613ae65a926747ff1051654fe"
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION ewall_compound_parts(text[])")
    op.execute("DROP INDEX ix_lexeme_stats_suffix")
    op.execute("DROP INDEX ix_lexeme_stats_prefix")
