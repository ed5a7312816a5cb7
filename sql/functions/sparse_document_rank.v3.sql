-- The sparse leg's document ranking, version 3 (migration 20261203_0042): version 2's BM25
-- over documents with its corpus figures (document count, mean length) and each document's
-- length summed over the person's allowed keys only (search_key_stats,
-- search_key_document_stats; key_stats.v1.sql keeps them), so rows behind a wall never move
-- a ranking (invariant 12). It takes the person's allowed wall groups and source ACLs; the
-- document frequency is counted in the pool, which holds only chunks the person may see.
-- Inside a document the chunks are ordered by their own saturated idf-weighted term
-- frequency, and chunk n of a document gets the document's score / n.
CREATE OR REPLACE FUNCTION ewall_sparse_document_rank(
    chunk_ids text[], document_ids bigint[], tsvs tsvector[],
    lexemes text[], weights float8[], k1 float8, b float8, n integer,
    wall_groups text[], source_acl_ids text[]
) RETURNS TABLE (chunk_id text, relevance float8)
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    WITH visible AS (
        SELECT coalesce(sum(k.n_documents), 0) AS n_docs,
               coalesce(sum(k.n_document_tokens), 0) AS n_tokens
        FROM search_key_stats AS k
        WHERE k.wall_group_id = ANY(wall_groups) AND k.source_acl_id = ANY(source_acl_ids)
    ), corpus AS (
        SELECT greatest(n_docs, 1) AS n_docs,
               greatest(n_tokens / nullif(n_docs, 0), 1) AS avgdl
        FROM visible
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
    ), lengths AS (
        -- a document's length as the person sees it (its chunks under allowed keys)
        SELECT s.document_id, sum(s.n_tokens) AS n_tokens
        FROM search_key_document_stats AS s
        WHERE s.document_id IN (SELECT document_id FROM dtf)
          AND s.wall_group_id = ANY(wall_groups) AND s.source_acl_id = ANY(source_acl_ids)
        GROUP BY s.document_id
    ), docs AS (
        SELECT d.document_id,
               sum(q.weight * ln(1 + (corpus.n_docs - f.df + 0.5) / (f.df + 0.5))
                   * d.tf * (k1 + 1)
                   / (d.tf + k1 * (1 - b + b * coalesce(s.n_tokens, corpus.avgdl)
                                                / corpus.avgdl))) AS score
        FROM dtf AS d
        JOIN q ON q.lexeme = d.lexeme
        JOIN ddf AS f ON f.lexeme = d.lexeme
        LEFT JOIN lengths AS s ON s.document_id = d.document_id
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
