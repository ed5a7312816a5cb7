-- The emit-time gates' reads of the retrieval audit (app/gates/repository.py).

-- name: retrieval_owner
SELECT person_id FROM audit_retrievals WHERE retrieval_id = :retrieval_id

-- name: retrieval_results
-- The chunks a retrieval returned, with their content hashes as audited, by rank.
SELECT chunk_id, content_sha256 FROM audit_retrieval_results
WHERE retrieval_id = :retrieval_id
ORDER BY rank
