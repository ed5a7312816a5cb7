-- The document a chunk id names (migration 20261205_0053).
--
-- A chunk id is content-addressed: "<source>:<external_id>:<16 hex of the content hash>". A
-- source name holds no colon and an external id may, so the document is the id less its
-- last 17 characters, taken only when a colon stands where the hash begins; an id of
-- another form is its own document. The audit keeps chunk ids, not documents: the session
-- gate and a wall's exposure read the results of a document through this function, and the
-- index ix_audit_retrieval_results_document is built on it (IMMUTABLE for that reason; it
-- reads nothing but its argument). Not STRICT: PostgreSQL inlines a SQL function's CASE only
-- into a non-strict one, and an inlined call costs half as much (NULL gives NULL anyway).
CREATE OR REPLACE FUNCTION ewall_chunk_document(chunk_id text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT CASE WHEN substr(chunk_id, length(chunk_id) - 16, 1) = ':'
                THEN left(chunk_id, -17) ELSE chunk_id END
$fn$;
