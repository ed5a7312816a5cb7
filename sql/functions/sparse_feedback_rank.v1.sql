-- Pseudo-relevance feedback for the sparse leg (an option, off by default; dropped by migration
-- 0041 after measurement lowered paraphrase questions at every setting: docs/quality.md).
-- Ranks the sparse leg's walled candidate pool twice: first with ewall_sparse_document_rank on
-- the question's lexemes, then again on those lexemes plus the best lexemes of the first
-- pass's top documents. An expansion lexeme must occur in the candidate chunks of at least
-- two of those documents (of the one, when only one is asked for) and is chosen by its term
-- frequency there times its idf over the corpus (lexeme_stats); each weighs feedback_weight
-- in the second ranking, where a typed word weighs 1. The expansion comes only from the
-- pool, which holds the chunks the person may see, and it only re-ranks that pool.

CREATE OR REPLACE FUNCTION ewall_sparse_feedback_rank(
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
