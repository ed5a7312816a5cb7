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

revision: str = "20261201_0035"
down_revision: str | None = "20261201_0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


FUNCTION = r"""
CREATE FUNCTION ewall_compound_parts(query_lexemes text[])
RETURNS TABLE(lexeme text, ndoc bigint)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    -- a lexeme that begins with q lies in the "C" range [q, q || U+10FFFF) of
    -- ix_lexeme_stats_prefix; one that ends with q in that range of the reversed lexemes
    RETURN QUERY
    SELECT DISTINCT s.lexeme, s.ndoc
    FROM unnest(query_lexemes) AS q(lexeme)
    CROSS JOIN LATERAL (
        SELECT p.lexeme, p.ndoc FROM lexeme_stats AS p
        WHERE length(q.lexeme) >= 5
          AND p.lexeme COLLATE "C" >= q.lexeme COLLATE "C"
          AND p.lexeme COLLATE "C" < (q.lexeme || chr(1114111)) COLLATE "C"
          AND length(p.lexeme) >= length(q.lexeme) + 3
        UNION ALL
        SELECT t.lexeme, t.ndoc FROM lexeme_stats AS t
        WHERE length(q.lexeme) >= 5
          AND reverse(t.lexeme) COLLATE "C" >= reverse(q.lexeme) COLLATE "C"
          AND reverse(t.lexeme) COLLATE "C" < (reverse(q.lexeme) || chr(1114111)) COLLATE "C"
          AND length(t.lexeme) >= length(q.lexeme) + 3
        UNION ALL
        -- the heads and tails of q itself (at least five letters, three fewer than q)
        SELECT h.lexeme, h.ndoc
        FROM generate_series(5, length(q.lexeme) - 3) AS n(len),
             LATERAL (VALUES (left(q.lexeme, n.len)), (right(q.lexeme, n.len)))
                 AS part(lexeme)
        JOIN lexeme_stats AS h ON h.lexeme = part.lexeme
    ) AS s;
END
$fn$;
"""


def upgrade() -> None:
    op.execute('CREATE INDEX ix_lexeme_stats_prefix ON lexeme_stats (lexeme COLLATE "C")')
    op.execute(
        'CREATE INDEX ix_lexeme_stats_suffix ON lexeme_stats ((reverse(lexeme)) COLLATE "C")'
    )
    op.execute(FUNCTION)


def downgrade() -> None:
    op.execute("DROP FUNCTION ewall_compound_parts(text[])")
    op.execute("DROP INDEX ix_lexeme_stats_suffix")
    op.execute("DROP INDEX ix_lexeme_stats_prefix")
