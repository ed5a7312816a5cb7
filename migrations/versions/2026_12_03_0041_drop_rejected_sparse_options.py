"""Drop the database side of sparse-leg options that measurement rejected.

Revision ID: 20261203_0041
Revises: 20261202_0040
Create Date: 2026-12-03

``ewall_sparse_feedback_rank`` (migration 20261201_0034) ranked the sparse pool a second
time with pseudo-relevance feedback, an option that was off by default. ``ewall eval``
measured it at 1, 3 and 5 documents and weights 0.03 to 0.3: every setting lowered the
paraphrase questions of the development set (docs/quality.md, fourth round). The option has
left the code and the settings, so no statement calls the function any more.

The downgrade puts the function back as migration 20261201_0034 created it.
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


def upgrade() -> None:
    op.execute(f"DROP FUNCTION {FEEDBACK_SIGNATURE}")


def downgrade() -> None:
    op.execute(FEEDBACK_FUNCTION)
