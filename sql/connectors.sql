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

-- The fencing token of a sync (connectors/fence.py): raised by each sync that takes the lock,
-- read FOR SHARE by each of its state writes, so a taker's raise waits for a write in flight
-- and a write after the raise sees it.

-- name: take_fence
INSERT INTO sync_fences (source, scope, token, holder, backend_pid)
VALUES (:source, :scope, 1, :holder, pg_backend_pid())
ON CONFLICT (source, scope) DO UPDATE
SET token = sync_fences.token + 1, holder = EXCLUDED.holder,
    backend_pid = EXCLUDED.backend_pid, taken_at = now()
RETURNING token

-- name: fence
SELECT token, holder, backend_pid, taken_at FROM sync_fences
WHERE source = :source AND scope = :scope
FOR SHARE

-- name: holds_advisory_lock
SELECT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
      AND classid = CAST(:namespace AS oid) AND objid = CAST(:key AS oid) AND objsubid = 2
)
