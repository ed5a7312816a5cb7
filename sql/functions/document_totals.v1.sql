-- The corpus's document count and total length for BM25 (n_documents, n_document_tokens in
-- the single row of corpus_stats), kept by statement-level triggers on search_document_stats:
-- every change to a document's figures, whoever makes it, moves the totals in the same
-- transaction, so the ranking reads one row instead of counting every document per search.

CREATE OR REPLACE FUNCTION ewall_document_totals_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents + d.n, n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM new_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_document_totals_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents - d.n, n_document_tokens = c.n_document_tokens - d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM old_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_document_totals_after_update() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE corpus_stats AS c
    SET n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT (SELECT coalesce(sum(n_tokens), 0) FROM new_rows)
               - (SELECT coalesce(sum(n_tokens), 0) FROM old_rows) AS t) AS d
    WHERE c.id = 1 AND d.t <> 0;
    RETURN NULL;
END
$fn$;
