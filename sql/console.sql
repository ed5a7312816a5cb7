-- Reads of the console that no API route makes (app/console/repository.py).

-- name: chunks_per_matter
-- How many chunks a wall over these matters would move to a new group. Counts only: the
-- caller marks its transaction as a writer (as the re-tag worker does) because the chunks
-- RLS policy hides every row from a reader without allowed groups; no row leaves.
SELECT matter_id, count(*) AS n_chunks
FROM chunks
WHERE matter_id = ANY(CAST(:matter_ids AS text[]))
GROUP BY matter_id
ORDER BY matter_id

-- name: retag_progress
-- The re-tag queue entries of these matters (a matter leaves the queue when it is done).
SELECT matter_id, target_wall_group_id, policy_version, queued_at, retagged_chunks
FROM retag_pending
WHERE matter_id = ANY(CAST(:matter_ids AS text[]))
ORDER BY matter_id

-- name: gate_events_for_retrieval
-- Gate calls (grounding checks) that named this retrieval.
SELECT seq, at, person_id, gate, ok, outcome
FROM gate_events
WHERE request ->> 'retrieval_id' = :retrieval_id
ORDER BY seq
