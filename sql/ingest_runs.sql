-- Ingest runs and the admin's view of one document. Run by app/ingest/runs_repository.py
-- (the pipeline's own statements are in ingest.sql).

-- name: connector_of_run
SELECT connector FROM ingest_runs WHERE run_id = :run_id

-- name: document_summary
SELECT d.document_id, d.source, d.external_id, d.version, d.status, d.quarantine_reason,
       d.client_id, d.matter_id, d.client_raw, d.matter_raw, d.doc_type, d.title, d.author,
       d.modified_at, d.source_acl_id, d.search_state, d.ingested_at, d.updated_at,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id) AS chunks
FROM documents d
WHERE d.source = :source AND d.external_id = :external_id
