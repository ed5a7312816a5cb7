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
them.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261203_0041"
down_revision: str | None = "20261202_0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FEEDBACK_SIGNATURE = (
    "ewall_sparse_feedback_rank(text[], bigint[], tsvector[], text[], float8[], float8, "
    "float8, integer, integer, integer, float8)"
)

FEEDBACK_FUNCTION = r"""
CREATE FUNCTION ewall_sparse_feedback_rank(
    chunk_ids text[], document_ids bigint[], tsvs tsvector[], lexemes text[],
    weights float8[], k1 float8, b float8, n integer,
    feedback_documents integer, feedback_terms integer, feedback_weight float8)
RETURNS TABLE(chunk_id text, relevance float8)
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    WITH pool AS (
        SELECT p.chunk_id, p.document_id, p.tsv
        FROM unnest(chunk_ids, document_ids, tsvs) AS p(chunk_id, document_id, tsv)
    ), first_pass AS (
        SELECT r.chunk_id, r.relevance
        FROM ewall_sparse_document_rank(chunk_ids, document_ids, tsvs, lexemes, weights,
                                        k1, b, cardinality(chunk_ids)) AS r
    ), top_documents AS (
        SELECT pool.document_id
        FROM first_pass JOIN pool ON pool.chunk_id = first_pass.chunk_id
        GROUP BY pool.document_id
        ORDER BY max(first_pass.relevance) DESC, pool.document_id
        LIMIT greatest(feedback_documents, 0)
    ), terms AS (
        SELECT u.lexeme,
               count(DISTINCT pool.document_id) AS documents,
               sum(coalesce(array_length(u.positions, 1), 1)) AS tf
        FROM pool
        JOIN top_documents ON top_documents.document_id = pool.document_id,
             unnest(pool.tsv) AS u
        WHERE u.lexeme <> ALL (lexemes)
        GROUP BY u.lexeme
        HAVING count(DISTINCT pool.document_id) >= least(2, greatest(feedback_documents, 1))
    ), expansion AS (
        SELECT terms.lexeme
        FROM terms
        JOIN lexeme_stats AS s ON s.lexeme = terms.lexeme
        CROSS JOIN (SELECT greatest(n_chunks, 1) AS n FROM corpus_stats WHERE id = 1) AS c
        ORDER BY terms.tf * ln(1 + c.n / greatest(s.ndoc, 1)) DESC, terms.lexeme
        LIMIT greatest(feedback_terms, 0)
    )
    SELECT r.chunk_id, r.relevance
    FROM ewall_sparse_document_rank(
             chunk_ids, document_ids, tsvs,
             lexemes || ARRAY(SELECT lexeme FROM expansion ORDER BY lexeme),
             weights || ARRAY(SELECT feedback_weight FROM expansion ORDER BY lexeme),
             k1, b, n) AS r
$fn$;
"""


COMPOUND_FUNCTION = r"""
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
    op.execute(f"DROP FUNCTION {FEEDBACK_SIGNATURE}")
    op.execute("DROP FUNCTION ewall_compound_parts(text[])")
    op.execute("DROP INDEX ix_lexeme_stats_suffix")
    op.execute("DROP INDEX ix_lexeme_stats_prefix")


def downgrade() -> None:
    op.execute('CREATE INDEX ix_lexeme_stats_prefix ON lexeme_stats (lexeme COLLATE "C")')
    op.execute(
        'CREATE INDEX ix_lexeme_stats_suffix ON lexeme_stats ((reverse(lexeme)) COLLATE "C")'
    )
    op.execute(COMPOUND_FUNCTION)
    op.execute(FEEDBACK_FUNCTION)
