-- The sparse leg's document ranking: BM25 over documents, not over the dense leg's chunks.
-- Input: the leg's candidate chunks (already filtered by the access predicate: this function
-- reads no chunks), the query's ranking lexemes with their weights (1, or the compound-part
-- weight), BM25's k1 and b, and how many chunks to return. Term frequency is summed over a
-- document's candidate chunks; document frequency is counted over the candidate documents
-- (exact for every lexeme the match query holds: each chunk holding one is a candidate)
-- against the corpus's document count; a document's length is its word pieces
-- (search_document_stats) against the corpus mean. Inside a document the chunks are ordered by
-- their own saturated idf-weighted term frequency, and chunk n of a document gets the
-- document's score / n, so the best passage stands for the document and further passages of a
-- strong document can still outrank a weak document's best.
--
-- Version 2 (migration 0033): the corpus figures (document count, mean length) come from the
-- single row of corpus_stats (n_documents, n_document_tokens, kept by the triggers of
-- document_totals.v1.sql) instead of a scan of search_document_stats on every call; the
-- numbers are the same, so rankings do not change.

CREATE OR REPLACE FUNCTION ewall_sparse_document_rank(
    chunk_ids text[], document_ids bigint[], tsvs tsvector[],
    lexemes text[], weights float8[], k1 float8, b float8, n integer
) RETURNS TABLE (chunk_id text, relevance float8)
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    WITH corpus AS (
        SELECT greatest(n_documents, 1) AS n_docs,
               greatest(n_document_tokens / nullif(n_documents, 0), 1) AS avgdl
        FROM corpus_stats WHERE id = 1
    ), q AS (
        SELECT DISTINCT ON (w.lexeme) w.lexeme, w.weight
        FROM unnest(lexemes, weights) AS w(lexeme, weight)
        ORDER BY w.lexeme, w.weight DESC
    ), ctf AS (
        SELECT p.chunk_id, p.document_id, u.lexeme,
               coalesce(array_length(u.positions, 1), 1) AS tf
        FROM unnest(chunk_ids, document_ids, tsvs) AS p(chunk_id, document_id, tsv),
             -- only the query's lexemes, before the unnest (a chunk has ~100 others)
             unnest(ts_filter(setweight(setweight(p.tsv, 'D'), 'A', lexemes), '{a}')) AS u
    ), dtf AS (
        SELECT document_id, lexeme, sum(tf) AS tf FROM ctf GROUP BY document_id, lexeme
    ), ddf AS (
        SELECT lexeme, count(*) AS df FROM dtf GROUP BY lexeme
    ), docs AS (
        SELECT d.document_id,
               sum(q.weight * ln(1 + (corpus.n_docs - f.df + 0.5) / (f.df + 0.5))
                   * d.tf * (k1 + 1)
                   / (d.tf + k1 * (1 - b + b * coalesce(s.n_tokens, corpus.avgdl)
                                                / corpus.avgdl))) AS score
        FROM dtf AS d
        JOIN q ON q.lexeme = d.lexeme
        JOIN ddf AS f ON f.lexeme = d.lexeme
        LEFT JOIN search_document_stats AS s ON s.document_id = d.document_id
        CROSS JOIN corpus
        GROUP BY d.document_id
    ), chunk_scores AS (
        SELECT c.chunk_id, c.document_id, sum(q.weight * c.tf / (c.tf + 1.2)) AS own
        FROM ctf AS c JOIN q ON q.lexeme = c.lexeme
        GROUP BY c.chunk_id, c.document_id
    )
    SELECT cs.chunk_id,
           docs.score / row_number() OVER (PARTITION BY cs.document_id
                                           ORDER BY cs.own DESC, cs.chunk_id) AS relevance
    FROM chunk_scores AS cs JOIN docs ON docs.document_id = cs.document_id
    ORDER BY relevance DESC, cs.chunk_id
    LIMIT n
$fn$;
