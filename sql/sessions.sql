-- Sessions and wall exposure, read from the retrieval audit.
--
-- A session is a caller-chosen id (a chat thread, an agent run) that searches carry; it
-- is scoped by person: two people who pick the same id have two sessions. A session bound
-- to a matter keeps the binding of its latest bound search.

-- name: session_binding
-- The matter the person's session is bound to, if any (ix_audit_retrievals_session_id_seq).
SELECT session_matter_id
FROM audit_retrievals
WHERE session_id = :session_id AND person_id = :person_id AND session_matter_id IS NOT NULL
ORDER BY seq DESC
LIMIT 1

-- name: session_matters
-- Every matter a session's retrievals returned chunks of, per person (NULL matter: public
-- sources); :person_id NULL reads every person's part of the session (compliance).
SELECT r.person_id, x.matter_id, count(x.chunk_id) AS chunks
FROM audit_retrievals r
LEFT JOIN audit_retrieval_results x ON x.retrieval_id = r.retrieval_id
WHERE r.session_id = :session_id
  AND (CAST(:person_id AS text) IS NULL OR r.person_id = CAST(:person_id AS text))
GROUP BY r.person_id, x.matter_id
ORDER BY r.person_id, x.matter_id

-- name: exposure
-- Who retrieved chunks of :matter_ids since :since, per person, session and matter, with the
-- documents (chunk id without its content hash: "<source>:<external_id>"). The results are
-- found through ix_audit_retrieval_results_matter_id_retrieval_id_chunk_id, the retrievals
-- by their primary key.
SELECT r.person_id, r.session_id, x.matter_id,
       min(r.at) AS first_at, max(r.at) AS last_at,
       count(DISTINCT x.chunk_id) AS chunks,
       array_agg(DISTINCT regexp_replace(x.chunk_id, ':[0-9a-f]{16}$', '')) AS documents
FROM audit_retrieval_results x
JOIN audit_retrievals r ON r.retrieval_id = x.retrieval_id
WHERE x.matter_id = ANY(CAST(:matter_ids AS text[]))
  AND r.at >= CAST(:since AS timestamptz)
GROUP BY r.person_id, r.session_id, x.matter_id

-- name: chunks_in_matters
-- Chunks a wall over :matter_ids would re-tag (run as a writer: a count, never rows).
SELECT count(*) FROM chunks WHERE matter_id = ANY(CAST(:matter_ids AS text[]))
