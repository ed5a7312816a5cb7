-- Sync state per (source, scope) and the ids each full crawl has seen (mark-and-sweep).
-- Run by connectors/repository.py; the order of writes is explained in connectors/state.py.

-- name: sync_state
SELECT state FROM sync_state WHERE source = :source AND scope = :scope

-- name: save_sync_state
INSERT INTO sync_state (source, scope, state)
VALUES (:source, :scope, CAST(:state AS jsonb))
ON CONFLICT (source, scope) DO UPDATE SET state = EXCLUDED.state, updated_at = now()

-- name: mark_seen
INSERT INTO sync_seen (source, scope, crawl_id, external_id)
SELECT :source, :scope, :crawl_id, external_id
FROM unnest(CAST(:external_ids AS text[])) AS ids (external_id)
ON CONFLICT DO NOTHING

-- name: seen_ids
SELECT external_id FROM sync_seen
WHERE source = :source AND scope = :scope AND crawl_id = :crawl_id

-- name: seen_count
SELECT count(*) FROM sync_seen
WHERE source = :source AND scope = :scope AND crawl_id = :crawl_id

-- name: forget_all_crawls
DELETE FROM sync_seen WHERE source = :source AND scope = :scope

-- name: forget_crawls_except
DELETE FROM sync_seen WHERE source = :source AND scope = :scope AND crawl_id <> :keep

-- name: try_advisory_lock
SELECT pg_try_advisory_lock(:namespace, :key)

-- name: advisory_unlock
SELECT pg_advisory_unlock(:namespace, :key)
