-- search_document_stats holds each document's chunk and word-piece count, kept current by
-- statement-level triggers on chunks (any writer: ingestion, deletion, re-chunking), so the
-- sparse ranking reads a document's length without reading its chunks. Rows are touched in
-- document order so concurrent writers cannot deadlock.

CREATE OR REPLACE FUNCTION ewall_document_stats_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO search_document_stats AS s (document_id, n_chunks, n_tokens)
    SELECT document_id, count(*), sum(token_count) FROM new_rows
    GROUP BY document_id ORDER BY document_id
    ON CONFLICT (document_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks,
            n_tokens = s.n_tokens + excluded.n_tokens;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_document_stats_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE search_document_stats AS s
    SET n_chunks = s.n_chunks - d.n, n_tokens = s.n_tokens - d.t
    FROM (SELECT document_id, count(*) AS n, sum(token_count) AS t FROM old_rows
          GROUP BY document_id ORDER BY document_id) AS d
    WHERE s.document_id = d.document_id;
    DELETE FROM search_document_stats AS s
    WHERE s.n_chunks <= 0 AND s.document_id IN (SELECT document_id FROM old_rows);
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_document_stats_after_update() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO search_document_stats AS s (document_id, n_chunks, n_tokens)
    SELECT document_id, sum(n), sum(t) FROM (
        SELECT document_id, count(*) AS n, sum(token_count) AS t FROM new_rows
        GROUP BY document_id
        UNION ALL
        SELECT document_id, -count(*), -sum(token_count) FROM old_rows GROUP BY document_id
    ) AS d
    GROUP BY document_id
    -- metadata updates (re-tagging, suppression) leave every delta at zero: nothing written
    HAVING sum(n) <> 0 OR sum(t) <> 0
    ORDER BY document_id
    ON CONFLICT (document_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks,
            n_tokens = s.n_tokens + excluded.n_tokens;
    DELETE FROM search_document_stats AS s
    WHERE s.n_chunks <= 0 AND s.document_id IN (SELECT document_id FROM old_rows);
    RETURN NULL;
END
$fn$;
