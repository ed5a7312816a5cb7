-- Ranking statistics per access key (wall_group_id, source_acl_id), kept in the writing
-- transaction by statement-level triggers on chunks (migration 20261203_0042), so that a
-- search weighs only what its person may see (architecture invariant 12):
--
--   search_key_stats           chunks, documents and document word pieces per key
--   search_key_lexeme_stats    per lexeme and key, the chunks holding the lexeme
--   search_key_document_stats  per document and key, its chunks and word pieces there
--
-- Only chunks that are not suppressed count (a suppressed chunk is visible to nobody). Each
-- trigger works out the rows its statement adds (sg = 1) or takes away (sg = -1): an update
-- whose counted columns (key, suppressed, document, token count, body) are all unchanged
-- counts nothing (a re-embed updates every chunk and must not recount its lexemes). Rows go
-- in key order, as in the other statistics triggers, so concurrent writers cannot deadlock;
-- rows a statement emptied leave the tables (a re-tag empties the old group's). A key's
-- document count is the number of its rows in search_key_document_stats, kept by the two
-- triggers on that table.

CREATE OR REPLACE FUNCTION ewall_key_stats_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN

    WITH d AS MATERIALIZED (SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows WHERE NOT suppressed
    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_key_stats_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN

    WITH d AS MATERIALIZED (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed
    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    DELETE FROM search_key_document_stats AS s
    USING (SELECT DISTINCT document_id, wall_group_id, source_acl_id
           FROM (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed) AS d WHERE sg < 0) AS e
    WHERE s.document_id = e.document_id AND s.wall_group_id = e.wall_group_id
      AND s.source_acl_id = e.source_acl_id AND s.n_chunks <= 0;
    DELETE FROM search_key_lexeme_stats AS l
    USING (SELECT DISTINCT lex, wall_group_id, source_acl_id
           FROM (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed) AS d, unnest(tsvector_to_array(body_tsv)) AS lex
           WHERE sg < 0) AS e
    WHERE l.lexeme = e.lex AND l.wall_group_id = e.wall_group_id
      AND l.source_acl_id = e.source_acl_id AND l.n_chunks <= 0;

    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_key_stats_after_update() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN

    WITH d AS MATERIALIZED (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))

    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    DELETE FROM search_key_document_stats AS s
    USING (SELECT DISTINCT document_id, wall_group_id, source_acl_id
           FROM (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
) AS d WHERE sg < 0) AS e
    WHERE s.document_id = e.document_id AND s.wall_group_id = e.wall_group_id
      AND s.source_acl_id = e.source_acl_id AND s.n_chunks <= 0;
    DELETE FROM search_key_lexeme_stats AS l
    USING (SELECT DISTINCT lex, wall_group_id, source_acl_id
           FROM (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
) AS d, unnest(tsvector_to_array(body_tsv)) AS lex
           WHERE sg < 0) AS e
    WHERE l.lexeme = e.lex AND l.wall_group_id = e.wall_group_id
      AND l.source_acl_id = e.source_acl_id AND l.n_chunks <= 0;

    RETURN NULL;
END
$fn$;

-- a key's document count: the document rows it holds
CREATE OR REPLACE FUNCTION ewall_key_documents_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO search_key_stats AS s (wall_group_id, source_acl_id, n_documents)
    SELECT wall_group_id, source_acl_id, count(*) FROM new_rows
    GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id
    ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
        SET n_documents = s.n_documents + excluded.n_documents;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_key_documents_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE search_key_stats AS s SET n_documents = s.n_documents - d.n
    FROM (SELECT wall_group_id, source_acl_id, count(*) AS n FROM old_rows
          GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id) AS d
    WHERE s.wall_group_id = d.wall_group_id AND s.source_acl_id = d.source_acl_id;
    RETURN NULL;
END
$fn$;
