-- The emit-time gates' reads of the retrieval audit and of the case-law index
-- (app/gates/repository.py).

-- name: known_dead_cases
-- What the case-law index knows against the live source's word: the ECLIs among :eclis that
-- ingestion last saw withdrawn, voided, set aside, or held for a person to confirm.
-- Compared upper-cased: the grammar lets an ordinal be written in either case, and the source
-- answers for it in its own.
SELECT upper(ecli) AS ecli, state, coalesce(replaced_by, set_aside_by) AS by
FROM case_law
WHERE upper(ecli) = ANY(CAST(:eclis AS text[])) AND state <> 'active'

-- name: retrieval_owner
SELECT person_id FROM audit_retrievals WHERE retrieval_id = :retrieval_id

-- name: retrieval_session
SELECT session_id FROM audit_retrievals WHERE retrieval_id = :retrieval_id

-- name: retrieval_results
-- The chunks a retrieval returned, with their content hashes as audited, by rank: the hits
-- only (sub_rank 0). The other sections a collapsed search listed under a hit were named
-- (id, heading, pages) but their text was never sent, so an answer cannot have drawn on it;
-- counting them as support would pass sentences on text the caller never had.
SELECT chunk_id, content_sha256 FROM audit_retrieval_results
WHERE retrieval_id = :retrieval_id AND sub_rank = 0
ORDER BY rank
